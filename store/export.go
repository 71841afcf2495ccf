package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
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

// ExportDocument is one document of a listing.
type ExportDocument struct {
	Doc        []byte  `db:"doc"`
	ClientUUID *string `db:"client_uuid"`
}

// documentFilter is the WHERE clause of the document listings: $1 data
// owner, $2 kind, then the filters; a NULL or empty filter matches all.
const documentFilter = ` FROM documents d
	WHERE d.data_owner_id = $1 AND d.kind = $2
	AND ($3::timestamptz IS NULL OR d.created_at >= $3)
	AND ($4::timestamptz IS NULL OR d.created_at <= $4)
	AND ($5::text IS NULL OR d.doc_id = $5)
	AND ($6::text IS NULL OR d.measurement_id = $6)
	AND ($7::uuid IS NULL OR d.client_uuid = $7)
	AND ($8::text IS NULL OR d.type = $8)
	AND (coalesce(cardinality($9::text[]), 0) = 0 OR d.subject = ANY($9))
	AND (coalesce(cardinality($10::text[]), 0) = 0 OR d.doc #>> '{study,study_id}' = ANY($10))
	AND ((coalesce(cardinality($11::text[]), 0) = 0 AND $12::text IS NULL) OR EXISTS (
		SELECT 1 FROM clients c WHERE c.data_owner_id = $1 AND c.uuid = d.client_uuid
		AND (coalesce(cardinality($11::text[]), 0) = 0 OR c.tags @> $11)
		AND ($12::text IS NULL OR c.label = $12)))`

func (f ExportFilter) documentArgs(ownerID int64, kind string) []any {
	return []any{ownerID, kind, f.Start, f.End, f.DocID, f.MeasurementID, f.ClientUUID, f.Type,
		f.Subjects, f.StudyIDs, f.Tags, f.Label}
}

// ExportDocuments lists one page of the data owner's documents of kind,
// newest first, and how many match over all pages.
func (s *Store) ExportDocuments(ctx context.Context, ownerID int64, kind string, f ExportFilter) ([]ExportDocument, int64, error) {
	args := f.documentArgs(ownerID, kind)
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*)`+documentFilter, args...).Scan(&total); err != nil {
		return nil, 0, mapErr("count export documents", err)
	}
	rows, _ := s.pool.Query(ctx, `SELECT d.doc, d.client_uuid::text AS client_uuid`+documentFilter+`
		ORDER BY d.created_at DESC, d.id DESC LIMIT $13 OFFSET $14`, append(args, f.Limit, f.Offset)...)
	docs, err := pgx.CollectRows(rows, pgx.RowToStructByName[ExportDocument])
	return docs, total, mapErr("list export documents", err)
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
	if err := s.pool.QueryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, mapErr("count export clients", err)
	}
	rows, _ := s.pool.Query(ctx, clientSelect+clientFilter+` ORDER BY c.created_at DESC, c.id DESC LIMIT $7 OFFSET $8`,
		append(args, f.Limit, f.Offset)...)
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Client])
	return cs, total, mapErr("list export clients", err)
}
