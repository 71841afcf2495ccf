package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits/budget"
)

// ExportFilter selects documents or clients for the export listings. Nil
// and empty fields do not filter. Every query is scoped by the data owner
// given beside the filter.
type ExportFilter struct {
	Start, End *time.Time
	// DocID selects one document by its own id (a measurement by its id).
	DocID *string
	// MeasurementID selects the documents that belong to one measurement.
	MeasurementID *string
	ClientUUID    *string // well-formed UUID
	// Tags: the document's client (one of the data owner's own) carries all.
	Tags []string
	// Label: the client's label, exact.
	Label    *string
	Type     *string
	Subjects []string // study.subject, any of
	StudyIDs []string // study.study_id, any of
	Limit    int64
	Offset   int64
}

// ExportDocument is one document of a listing, with its indexed columns.
type ExportDocument struct {
	Doc           []byte    `db:"doc"`
	DocID         string    `db:"doc_id"`
	ClientUUID    *string   `db:"client_uuid"`
	MeasurementID *string   `db:"measurement_id"`
	CreatedAt     time.Time `db:"created_at"`
}

// documentFilter is the WHERE clause of the document listings: $1 data
// owner, $2 kind, then the filters; a NULL or empty filter matches all.
// Tags and label are resolved to the clients carrying them beforehand
// ($7), so that the page walks only those clients' documents.
const documentFilter = ` FROM documents d
	WHERE d.data_owner_id = $1 AND d.kind = $2
	AND ($3::timestamptz IS NULL OR d.created_at >= $3)
	AND ($4::timestamptz IS NULL OR d.created_at <= $4)
	AND ($5::text IS NULL OR d.doc_id = $5)
	AND ($6::text IS NULL OR d.measurement_id = $6)
	AND ($7::uuid[] IS NULL OR d.client_uuid = ANY($7))
	AND ($8::text IS NULL OR d.type = $8)
	AND (coalesce(cardinality($9::text[]), 0) = 0 OR d.subject = ANY($9))
	AND (coalesce(cardinality($10::text[]), 0) = 0 OR d.doc #>> '{study,study_id}' = ANY($10))`

// ExportDocuments lists one page of the data owner's documents of kind,
// newest first, and how many match over all pages. The page's rows are
// found first by their ids alone (an index-only walk past the offset, not
// a read of every skipped document), then read by (id, created_at), the
// partitioned key: by id alone each row was looked up in every month's
// partition.
func (s *Store) ExportDocuments(ctx context.Context, ownerID int64, kind string, f ExportFilter) ([]ExportDocument, int64, error) {
	clients, err := s.exportClientUUIDs(ctx, ownerID, f)
	if err != nil {
		return nil, 0, err
	}
	if clients != nil && len(clients) == 0 {
		return []ExportDocument{}, 0, nil // no client carries the tags or label
	}
	args := []any{ownerID, kind, f.Start, f.End, f.DocID, f.MeasurementID, clients, f.Type, f.Subjects, f.StudyIDs}
	var total int64
	if err := s.ReadPool(ctx).QueryRow(ctx, `SELECT count(*)`+documentFilter, args...).Scan(&total); err != nil {
		return nil, 0, mapErr("count export documents", err)
	}
	rows, _ := s.ReadPool(ctx).Query(ctx, `WITH page AS (SELECT d.id, d.created_at`+documentFilter+`
		ORDER BY d.created_at DESC, d.id DESC LIMIT $11 OFFSET $12)
		SELECT d.doc, d.doc_id, d.client_uuid::text AS client_uuid, d.measurement_id, d.created_at
		FROM page JOIN documents d ON d.data_owner_id = $1 AND d.id = page.id AND d.created_at = page.created_at
		ORDER BY page.created_at DESC, page.id DESC`, append(args, f.Limit, f.Offset)...)
	docs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ExportDocument, error) {
		d, err := pgx.RowToStructByName[ExportDocument](row)
		if err == nil {
			err = budget.Spend(ctx, len(d.Doc))
		}
		return d, err
	})
	if errors.Is(err, apierr.ErrBadRequest) { // over the answer's budget
		return nil, 0, err
	}
	return docs, total, mapErr("list export documents", err)
}

// exportClientUUIDs is the client filter of a document listing: nil for
// none; the one client_uuid asked for (it overrides tags, not the label);
// else the data owner's own clients carrying every tag and the label
// (maybe none).
func (s *Store) exportClientUUIDs(ctx context.Context, ownerID int64, f ExportFilter) ([]string, error) {
	tags := f.Tags
	switch {
	case f.ClientUUID != nil && f.Label == nil:
		return []string{*f.ClientUUID}, nil
	case f.ClientUUID != nil:
		tags = nil
	case len(tags) == 0 && f.Label == nil:
		return nil, nil
	}
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT c.uuid::text FROM clients c WHERE c.data_owner_id = $1
		AND ($2::uuid IS NULL OR c.uuid = $2)
		AND (coalesce(cardinality($3::text[]), 0) = 0 OR c.tags @> $3)
		AND ($4::text IS NULL OR c.label = $4)`, ownerID, f.ClientUUID, tags, f.Label)
	uuids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, mapErr("export clients by tags", err)
	}
	return append([]string{}, uuids...), nil
}

// clientFilter restricts clientSelect ($1 data owner) to the data owner's
// own clients matching the filters.
const clientFilter = ` AND c.data_owner_id = $1
	AND ($2::timestamptz IS NULL OR c.created_at >= $2)
	AND ($3::timestamptz IS NULL OR c.created_at <= $3)
	AND ($4::uuid IS NULL OR c.uuid = $4)
	AND (coalesce(cardinality($5::text[]), 0) = 0 OR c.tags @> $5)
	AND ($6::text IS NULL OR c.label = $6)`

// ExportClients lists one page of the data owner's own clients (not those
// shared with it), newest first, and how many match over all pages.
func (s *Store) ExportClients(ctx context.Context, ownerID int64, f ExportFilter) ([]Client, int64, error) {
	args := []any{ownerID, f.Start, f.End, f.ClientUUID, f.Tags, f.Label}
	var total int64
	const count = `SELECT count(*) FROM clients c WHERE true` + clientFilter
	if err := s.ReadPool(ctx).QueryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, mapErr("count export clients", err)
	}
	rows, _ := s.ReadPool(ctx).Query(ctx, clientSelect+clientFilter+` ORDER BY c.created_at DESC, c.id DESC LIMIT $7 OFFSET $8`,
		append(args, f.Limit, f.Offset)...)
	cs, err := pgx.CollectRows(rows, scanClient)
	return cs, total, mapErr("list export clients", err)
}
