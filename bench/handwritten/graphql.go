package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetgraph/fleetgraph/bench/apidata"
)

// gqlClientsSQL reads, for the data owner of the client_admin key with
// digest $1, the clients it sees that filter picks (a condition on c,
// constant text), in id order, with the fragment's fields. The key check is
// the first join: no row when the key is not valid; one row with a null
// client when it is but no client matches.
func gqlClientsSQL(filter string) string {
	return `WITH o AS (SELECT k.data_owner_id AS id FROM api_keys k
		JOIN users u ON u.id = k.user_id AND u.data_owner_id = k.data_owner_id
		WHERE k.digest = $1 AND k.kind = 'client_admin' AND k.valid_from <= now() AND k.valid_until > now())
	SELECT c.id, c.uuid::text, c.type, c.label, c.extra_label, c.tags, c.created_at, c.last_seen_at,
		k.id, k.registration_key, k.num_registrations_left, k.valid_from,
		g.ids, g.names,
		ct.id, ct.name, ct.upload_speed, ct.download_speed, ct.monthly_price::float8, ct.valid_from, i.name
	FROM o
	LEFT JOIN clients c ON (c.data_owner_id = o.id
		OR EXISTS (SELECT 1 FROM client_shares s WHERE s.client_id = c.id AND s.data_owner_id = o.id)) AND ` + filter + `
	LEFT JOIN registration_keys k ON k.id = c.registration_key_id AND k.data_owner_id = o.id AND c.data_owner_id = o.id
	LEFT JOIN LATERAL (SELECT array_agg(g.id ORDER BY g.name, g.id) AS ids, array_agg(g.name ORDER BY g.name, g.id) AS names
		FROM client_group_members m JOIN client_groups g ON g.id = m.client_group_id
		WHERE m.client_id = c.id AND g.data_owner_id = o.id) g ON true
	LEFT JOIN LATERAL (SELECT k.id, k.isp_id, k.name, k.upload_speed, k.download_speed, k.monthly_price, k.valid_from
		FROM isp_contracts k
		WHERE k.data_owner_id = o.id AND k.client_id = c.id
		AND (k.valid_from IS NULL OR k.valid_from <= now()) AND (k.valid_until IS NULL OR k.valid_until > now())
		ORDER BY k.valid_from DESC NULLS LAST, k.id DESC LIMIT 1) ct ON true
	LEFT JOIN isps i ON i.id = ct.isp_id
	ORDER BY c.id`
}

var (
	gqlOneSQL  = gqlClientsSQL(`c.id = $2`)
	gqlListSQL = gqlClientsSQL(`true`)
)

// gqlRow is one row of gqlClientsSQL.
type gqlRow struct {
	id                           pgtype.Int8
	uuid, typ, label, extraLabel pgtype.Text
	tags                         []string
	createdAt, lastSeenAt        pgtype.Timestamptz
	keyID, keyLeft               pgtype.Int8
	keyName                      pgtype.Text
	keyValidFrom                 pgtype.Timestamptz
	groupIDs                     []int64
	groupNames                   []string
	ctID, ctUp, ctDown           pgtype.Int8
	ctName, ispName              pgtype.Text
	ctPrice                      pgtype.Float8
	ctValidFrom                  pgtype.Timestamptz
}

func (r *gqlRow) dest() []any {
	return []any{&r.id, &r.uuid, &r.typ, &r.label, &r.extraLabel, &r.tags, &r.createdAt, &r.lastSeenAt,
		&r.keyID, &r.keyName, &r.keyLeft, &r.keyValidFrom, &r.groupIDs, &r.groupNames,
		&r.ctID, &r.ctName, &r.ctUp, &r.ctDown, &r.ctPrice, &r.ctValidFrom, &r.ispName}
}

// appendJSON writes the row's client as fleetgraph answers fragment C.
func (r *gqlRow) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.id.Int64, 10)
	b = append(b, `,"uuid":`...)
	b = appendText(b, r.uuid)
	b = append(b, `,"type":`...)
	b = appendText(b, r.typ)
	b = append(b, `,"label":`...)
	b = appendText(b, r.label)
	b = append(b, `,"extraLabel":`...)
	b = appendText(b, r.extraLabel)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, r.tags)
	b = append(b, `,"createdAt":`...)
	b = appendTimestamptz(b, r.createdAt)
	b = append(b, `,"lastSeenAt":`...)
	b = appendTimestamptz(b, r.lastSeenAt)
	b = append(b, `,"registrationKey":`...)
	if r.keyID.Valid {
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, r.keyID.Int64, 10)
		b = append(b, `,"registrationKey":`...)
		b = appendText(b, r.keyName)
		b = append(b, `,"numRegistrationsLeft":`...)
		b = appendInt8(b, r.keyLeft)
		b = append(b, `,"validFrom":`...)
		b = appendTimestamptz(b, r.keyValidFrom)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"clientGroups":`...)
	b = appendGroups(b, r.groupIDs, r.groupNames)
	b = append(b, `,"currentIspContract":`...)
	if r.ctID.Valid {
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, r.ctID.Int64, 10)
		b = append(b, `,"name":`...)
		b = appendText(b, r.ctName)
		b = append(b, `,"uploadSpeed":`...)
		b = appendInt8(b, r.ctUp)
		b = append(b, `,"downloadSpeed":`...)
		b = appendInt8(b, r.ctDown)
		b = append(b, `,"monthlyPrice":`...)
		b = appendFloat8(b, r.ctPrice)
		b = append(b, `,"validFrom":`...)
		b = appendTimestamptz(b, r.ctValidFrom)
		b = append(b, `,"ispName":`...)
		b = appendText(b, r.ispName)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// gqlRequest is the body of a GraphQL POST.
type gqlRequest struct {
	Query     string `json:"query"`
	Variables struct {
		ID string `json:"id"`
	} `json:"variables"`
}

// bufs keeps answer buffers between requests.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// graphql answers the bench's GraphQL documents (apidata), known by their
// text as a persisted query is: each is one statement that checks the key
// and reads the clients, and Go writes the answer with fleetgraph's bytes.
func (a *api) graphql(w http.ResponseWriter, r *http.Request) {
	var req gqlRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not a GraphQL request")
		return
	}
	digest := keyDigest(r)
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	var ok bool
	var err error
	switch req.Query {
	case apidata.OneClient:
		id, perr := strconv.ParseInt(req.Variables.ID, 10, 64)
		if perr != nil {
			writeError(w, http.StatusBadRequest, "variable id is not a client id")
			return
		}
		*bp, ok, err = a.gqlClients(r.Context(), append((*bp)[:0], `{"data":{"client":`...), false, gqlOneSQL, digest, id)
	case apidata.AllClients:
		*bp, ok, err = a.gqlClients(r.Context(), append((*bp)[:0], `{"data":{"clients":`...), true, gqlListSQL, digest)
	default:
		writeError(w, http.StatusBadRequest, "not one of the bench's documents")
		return
	}
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "Internal server error")
	case !ok:
		writeError(w, http.StatusUnauthorized, "invalid API key")
	default:
		writeBody(w, append(*bp, "}}"...))
	}
}

// gqlClients runs q and appends its clients to b: a list, or the first
// client (null if none). ok is false when the key is not valid.
func (a *api) gqlClients(ctx context.Context, b []byte, list bool, q string, args ...any) ([]byte, bool, error) {
	rows, err := a.db.Query(ctx, q, args...)
	if err != nil {
		return b, false, err
	}
	defer rows.Close()
	var row gqlRow
	dest := row.dest()
	n, keyOK := 0, false
	if list {
		b = append(b, '[')
	}
	for rows.Next() {
		keyOK = true
		if err := rows.Scan(dest...); err != nil {
			return b, false, err
		}
		if !row.id.Valid || (!list && n > 0) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = row.appendJSON(b)
		n++
	}
	if err := rows.Err(); err != nil {
		return b, false, err
	}
	switch {
	case list:
		b = append(b, ']')
	case n == 0:
		b = append(b, "null"...)
	}
	return b, keyOK, nil
}
