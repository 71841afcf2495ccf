package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// api answers the two client routes and the GraphQL documents for the
// data owner of the X-API-KEY.
type api struct{ db *pgxpool.Pool }

// defaultOfflineMinutes is fleetgraph's offline threshold when the data
// owner has none.
const defaultOfflineMinutes = 60

// The statements of the two routes.
var (
	listSQL   = clientsSQL(`true`) + ` ORDER BY c.id`
	byIDSQL   = clientsSQL(`c.id = $2`)
	byUUIDSQL = clientsSQL(`c.uuid = $2::uuid`)
)

func (a *api) listClients(w http.ResponseWriter, r *http.Request) {
	digest := keyDigest(r)
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b, n, err := a.clients(r.Context(), append((*bp)[:0], `{"clients":[`...), false, listSQL, digest)
	*bp = b
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "Internal server error")
	case n > 0 || a.authenticate(w, r, digest):
		writeBody(w, append(b, "]}"...))
	}
}

func (a *api) getClient(w http.ResponseWriter, r *http.Request) {
	digest := keyDigest(r)
	q, arg := byIDSQL, any(nil)
	if n, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64); err == nil {
		arg = n
	} else if u, err := uuid.Parse(chi.URLParam(r, "id")); err == nil {
		q, arg = byUUIDSQL, u.String()
	} else {
		if a.authenticate(w, r, digest) {
			writeError(w, http.StatusNotFound, "Not found")
		}
		return
	}
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b, n, err := a.clients(r.Context(), append((*bp)[:0], `{"client":`...), true, q, digest, arg)
	*bp = b
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "Internal server error")
	case n > 0:
		writeBody(w, append(b, '}'))
	case a.authenticate(w, r, digest):
		writeError(w, http.StatusNotFound, "Not found")
	}
}

func keyDigest(r *http.Request) []byte {
	d := sha256.Sum256([]byte(r.Header.Get("X-API-KEY")))
	return d[:]
}

// authenticate tells whether the key with digest is a valid client_admin
// key with a user, or answers 401 (or 500) and returns false. The client
// statements check the key themselves; this runs only when they found
// nothing, to tell a bad key from no client.
func (a *api) authenticate(w http.ResponseWriter, r *http.Request, digest []byte) bool {
	const q = `SELECT true FROM api_keys k
		JOIN users u ON u.id = k.user_id AND u.data_owner_id = k.data_owner_id
		WHERE k.digest = $1 AND k.kind = 'client_admin' AND k.valid_from <= now() AND k.valid_until > now()`
	var ok bool
	err := a.db.QueryRow(r.Context(), q, digest).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		writeError(w, http.StatusUnauthorized, "invalid API key")
		return false
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return false
	}
	return true
}

// clients runs one of the clients statements and appends its clients to
// b, comma-separated, the configuration with them when withConfiguration.
func (a *api) clients(ctx context.Context, b []byte, withConfiguration bool, q string, args ...any) ([]byte, int, error) {
	rows, err := a.db.Query(ctx, q, args...)
	if err != nil {
		return b, 0, err
	}
	defer rows.Close()
	var row clientRow
	dest := row.dest()
	now := time.Now()
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return b, 0, err
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = row.appendJSON(b, now, withConfiguration)
		n++
	}
	return b, n, rows.Err()
}

// writeBody answers 200 with the JSON body.
func writeBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}
