package main

import (
	"bytes"
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

// api answers the two client routes for the data owner of the X-API-KEY.
type api struct{ db *pgxpool.Pool }

// owner is what a request needs to know about the key's data owner.
type owner struct {
	id               int64
	offlineMinutes   int64
	offlineDetection bool
}

// defaultOfflineMinutes is fleetgraph's offline threshold when the data
// owner has none.
const defaultOfflineMinutes = 60

func (a *api) listClients(w http.ResponseWriter, r *http.Request) {
	o, ok := a.authenticate(w, r)
	if !ok {
		return
	}
	cs, err := a.clients(r.Context(), o, clientsSQL(`true`)+` ORDER BY c.id`, o.id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	writeJSON(w, struct {
		Clients []client `json:"clients"`
	}{cs})
}

func (a *api) getClient(w http.ResponseWriter, r *http.Request) {
	o, ok := a.authenticate(w, r)
	if !ok {
		return
	}
	q, arg := clientsSQL(`c.id = $2`), any(nil)
	if n, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64); err == nil {
		arg = n
	} else if u, err := uuid.Parse(chi.URLParam(r, "id")); err == nil {
		q, arg = clientsSQL(`c.uuid = $2::uuid`), u.String()
	} else {
		writeError(w, http.StatusNotFound, "Not found")
		return
	}
	cs, err := a.clients(r.Context(), o, q, o.id, arg)
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return
	case len(cs) == 0:
		writeError(w, http.StatusNotFound, "Not found")
		return
	}
	c := cs[0]
	c.Configuration = &configuration{Managed: c.row.configManaged}
	if !c.row.shared {
		c.Configuration.PublicConfigID, c.Configuration.AutomatorConfigID = c.row.publicConfigID, c.row.automatorConfigID
	}
	writeJSON(w, struct {
		Client client `json:"client"`
	}{c})
}

// authenticate finds the data owner of a valid client_admin key with a user,
// or answers 401.
func (a *api) authenticate(w http.ResponseWriter, r *http.Request) (owner, bool) {
	const q = `SELECT k.data_owner_id, coalesce(d.offline_threshold_minutes, $2), d.client_offline_detection_enabled FROM api_keys k
		JOIN data_owners d ON d.id = k.data_owner_id
		JOIN users u ON u.id = k.user_id AND u.data_owner_id = k.data_owner_id
		WHERE k.digest = $1 AND k.kind = 'client_admin' AND k.valid_from <= now() AND k.valid_until > now()`
	digest := sha256.Sum256([]byte(r.Header.Get("X-API-KEY")))
	var o owner
	err := a.db.QueryRow(r.Context(), q, digest[:], defaultOfflineMinutes).Scan(&o.id, &o.offlineMinutes, &o.offlineDetection)
	if errors.Is(err, pgx.ErrNoRows) {
		writeError(w, http.StatusUnauthorized, "invalid API key")
		return o, false
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return o, false
	}
	return o, true
}

// clients runs one of the clients statements and shapes its rows.
func (a *api) clients(ctx context.Context, o owner, q string, args ...any) ([]client, error) {
	rows, err := a.db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []client{}
	now := time.Now()
	for rows.Next() {
		var row clientRow
		if err := rows.Scan(row.dest()...); err != nil {
			return nil, err
		}
		out = append(out, row.client(now, o))
	}
	return out, rows.Err()
}

func writeJSON(w http.ResponseWriter, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // gqlgen escapes only what JSON requires
	if err := enc.Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
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
