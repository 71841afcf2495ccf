package es

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/search"
)

// The lookup indices of ES|QL LOOKUP JOIN.
//
// Every data owner has one, analytics-production-<slug>-lookup-clients
// (search.LookupIndices), holding one document per client it owns, _id the
// client's UUID, with the fields of search.LookupClientFields. The indexer
// keeps it equal to the clients table:
//
//   - A data owner without an es_lookup_indices row (new, or from before
//     this code) gets its index created (index mode "lookup", explicit
//     mappings), then the row. Not while a tombstone of a deleted data owner
//     of the same slug waits: dropping that one's indices would drop the new
//     one's too; the index is created once the tombstone has been handled.
//   - Each pass computes, in SQL, every client's lookup document and its
//     md5, and compares it with es_lookup_documents, the digest of what
//     Elasticsearch last took for that client. What differs (a new client,
//     a changed one, one no longer there) goes in a bulk request, at most
//     BatchSize actions, and the digests of what was sent are stored once
//     Elasticsearch has taken them. The document and its digest come from
//     the same statement, so a client changed while the request runs
//     differs from the stored digest at the next pass and is sent again:
//     nothing is lost, across restarts too, and nothing is sent when
//     nothing changed.
//   - Every action carries a new external version (sequence
//     es_lookup_versions): a copy Elasticsearch applies late (a request
//     given up on by its timeout) never overwrites a newer one.
//   - A deleted data owner's rows go with it (ON DELETE CASCADE); its
//     tombstone drops its indices, the lookup index included (dropOwner).

// lookupMappings are the types of the fields of a lookup-clients document
// (search.LookupClientsToken).
var lookupMappings = map[string]string{
	"client_uuid": "keyword", "client_label": "keyword", "client_extra_label": "keyword",
	"client_type": "keyword", "client_tags": "keyword", "client_created_at": "date",
}

// lookupIndexBody is the body of the request creating a lookup index.
func lookupIndexBody() []byte {
	props := map[string]any{}
	for _, f := range search.LookupClientFields {
		props[f] = map[string]string{"type": lookupMappings[f]}
	}
	b, _ := json.Marshal(map[string]any{
		"settings": map[string]any{"index": map[string]any{"mode": "lookup"}},
		"mappings": map[string]any{"properties": props},
	})
	return b
}

// lookupMissing lists data owners whose lookup index is to be created: no
// es_lookup_indices row, or one of another slug, and no tombstone of a
// deleted data owner of the same slug waiting.
const lookupMissing = `
	SELECT o.id, o.slug FROM data_owners o
	LEFT JOIN es_lookup_indices l ON l.data_owner_id = o.id
	WHERE (l.data_owner_id IS NULL OR l.slug <> o.slug)
	  AND NOT EXISTS (SELECT 1 FROM document_tombstones t WHERE t.kind IS NULL AND t.slug = o.slug)
	ORDER BY o.id LIMIT $1`

// lookupCreated records a created lookup index; the documents recorded for
// another slug's index are not in this one.
const lookupCreated = `
	WITH gone AS (DELETE FROM es_lookup_documents WHERE data_owner_id = $1)
	INSERT INTO es_lookup_indices (data_owner_id, slug)
	SELECT id, slug FROM data_owners WHERE id = $1 AND slug = $2
	ON CONFLICT (data_owner_id) DO UPDATE SET slug = EXCLUDED.slug, created_at = now()`

// lookupChanges reads up to $1 lookup documents that differ from what
// Elasticsearch last took, with their digests (NULL: the client is gone,
// delete its document) and new external versions. The documents are built
// here, with the fields of search.LookupClientFields in order (json keeps
// the order; jsonb would not): tags NULL when there are none, created_at
// in UTC with milliseconds.
const lookupChanges = `
	WITH cur AS (
		SELECT c.data_owner_id, c.uuid, json_build_object(
			'client_uuid', c.uuid::text,
			'client_label', c.label,
			'client_extra_label', c.extra_label,
			'client_type', c.type,
			'client_tags', CASE WHEN cardinality(c.tags) > 0 THEN to_json(c.tags) END,
			'client_created_at', to_char(c.created_at AT TIME ZONE 'UTC', ` + isotime.MillisSQL + `)
		)::text AS doc
		FROM clients c JOIN es_lookup_indices l ON l.data_owner_id = c.data_owner_id
	)
	SELECT l.data_owner_id, l.slug, coalesce(cur.uuid, s.client_uuid)::text, cur.doc, md5(cur.doc),
	       nextval('es_lookup_versions')
	FROM cur FULL JOIN es_lookup_documents s ON s.data_owner_id = cur.data_owner_id AND s.client_uuid = cur.uuid
	JOIN es_lookup_indices l ON l.data_owner_id = coalesce(cur.data_owner_id, s.data_owner_id)
	WHERE md5(cur.doc) IS DISTINCT FROM s.digest
	ORDER BY l.data_owner_id, 3 LIMIT $1`

// lookupTaken records what Elasticsearch took: digests of indexed
// documents ($1-$3), deleted documents ($4, $5). A data owner deleted
// meanwhile has no row left to record against.
const lookupTaken = `
	WITH gone AS (
		DELETE FROM es_lookup_documents s USING unnest($4::bigint[], $5::uuid[]) AS x(o, u)
		WHERE s.data_owner_id = x.o AND s.client_uuid = x.u
	)
	INSERT INTO es_lookup_documents (data_owner_id, client_uuid, digest)
	SELECT x.o, x.u, x.d FROM unnest($1::bigint[], $2::uuid[], $3::text[]) AS x(o, u, d)
	WHERE EXISTS (SELECT 1 FROM es_lookup_indices l WHERE l.data_owner_id = x.o)
	ON CONFLICT (data_owner_id, client_uuid) DO UPDATE SET digest = EXCLUDED.digest`

// lookupDue tells whether RunOnce should run a lookup pass now.
func (ix *Indexer) lookupDue() bool {
	switch {
	case ix.LookupInterval < 0:
		return false
	case ix.lookupAt.IsZero():
		return true
	case ix.lookupRetry > 0:
		return time.Since(ix.lookupAt) >= max(ix.LookupInterval, ix.lookupRetry)
	}
	return ix.lookupMore || time.Since(ix.lookupAt) >= ix.LookupInterval
}

// syncLookup runs one lookup pass: creates missing lookup indices, then
// sends one batch of changed lookup documents. It returns how many indices
// and documents it sent.
func (ix *Indexer) syncLookup(ctx context.Context, conn *pgx.Conn) (int, error) {
	ix.lookupAt = time.Now()
	limit := ix.BatchSize
	if limit <= 0 {
		limit = 500
	}
	created, more, err := ix.createLookupIndices(ctx, conn, limit)
	sent := 0
	if err == nil {
		sent, err = ix.sendLookupChanges(ctx, conn, limit)
	}
	if err != nil {
		ix.lookupMore = true
		ix.lookupRetry = min(max(2*ix.lookupRetry, ix.MinBackoff), ix.MaxBackoff)
		return created, err
	}
	ix.lookupMore, ix.lookupRetry = more || sent == limit, 0
	return created + sent, nil
}

// createLookupIndices creates up to limit missing lookup indices; more
// tells whether others may be missing.
func (ix *Indexer) createLookupIndices(ctx context.Context, conn *pgx.Conn, limit int) (int, bool, error) {
	type owner struct {
		id   int64
		slug string
	}
	rows, err := conn.Query(ctx, lookupMissing, limit)
	if err != nil {
		return 0, false, fmt.Errorf("elasticsearch indexer: read lookup indices: %w", err)
	}
	owners, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (owner, error) {
		var o owner
		err := r.Scan(&o.id, &o.slug)
		return o, err
	})
	if err != nil {
		return 0, false, fmt.Errorf("elasticsearch indexer: read lookup indices: %w", err)
	}
	for i, o := range owners {
		if err := ix.createLookupIndex(ctx, o.slug); err != nil {
			return i, false, err
		}
		if _, err := conn.Exec(ctx, lookupCreated, o.id, o.slug); err != nil {
			return i, false, fmt.Errorf("elasticsearch indexer: record lookup index of %s: %w", o.slug, err)
		}
	}
	return len(owners), len(owners) == limit, nil
}

// createLookupIndex creates the lookup index of a data owner; an index
// already there (created by an earlier attempt whose answer or record was
// lost) counts as created.
func (ix *Indexer) createLookupIndex(ctx context.Context, slug string) error {
	name := search.LookupIndices(slug)[0]
	ctx, cancel := ix.withTimeout(ctx)
	defer cancel()
	res, err := esapi.IndicesCreateRequest{Index: name, Body: bytes.NewReader(lookupIndexBody())}.Do(ctx, ix.client)
	if err != nil {
		return fmt.Errorf("elasticsearch indexer: create lookup index %s: %w", name, err)
	}
	defer drain(res)
	if res.StatusCode == http.StatusBadRequest {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		var e struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error.Type == "resource_already_exists_exception" {
			return nil
		}
		return esErrorBody(res.StatusCode, raw, "creation of lookup index "+name)
	}
	if res.IsError() {
		return esError(res, "creation of lookup index "+name)
	}
	ix.logger.Info("elasticsearch indexer: lookup index created", "index", name)
	return nil
}

// sendLookupChanges sends up to limit changed lookup documents and records
// them once Elasticsearch has taken them.
func (ix *Indexer) sendLookupChanges(ctx context.Context, conn *pgx.Conn, limit int) (int, error) {
	type change struct {
		owner   int64
		slug    string
		uuid    string
		doc     *string
		digest  *string
		version int64
	}
	rows, err := conn.Query(ctx, lookupChanges, limit)
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read lookup documents: %w", err)
	}
	changes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (change, error) {
		var c change
		err := r.Scan(&c.owner, &c.slug, &c.uuid, &c.doc, &c.digest, &c.version)
		return c, err
	})
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read lookup documents: %w", err)
	}
	if len(changes) == 0 {
		return 0, nil
	}
	actions := make([]bulkAction, len(changes))
	var (
		owners, goneOwners        []int64
		uuids, digests, goneUUIDs []string
	)
	for i, c := range changes {
		actions[i] = bulkAction{op: "delete", index: search.LookupIndices(c.slug)[0], id: c.uuid, version: c.version}
		if c.doc == nil {
			goneOwners, goneUUIDs = append(goneOwners, c.owner), append(goneUUIDs, c.uuid)
			continue
		}
		actions[i].op, actions[i].source = "index", []byte(*c.doc)
		owners, uuids, digests = append(owners, c.owner), append(uuids, c.uuid), append(digests, *c.digest)
	}
	if err := ix.bulk(ctx, actions); err != nil {
		return 0, err
	}
	if _, err := conn.Exec(ctx, lookupTaken, owners, uuids, digests, goneOwners, goneUUIDs); err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: record lookup documents: %w", err)
	}
	return len(changes), nil
}
