package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The reads below serve the graph's connections below a parent (a
// client's anomaly events and system status records, a webhook's
// deliveries, the clients of a registration key, capability, ISP or
// group): each reads the page of every parent of a query level in one
// statement, a keyset page per parent (a LATERAL subquery with its own
// LIMIT), and counts per parent in another when asked.

// ParentPage is the page each parent's list is read in: Limit rows after
// the keyset position After (none: from the start).
type ParentPage struct {
	After *PageKey
	Limit int
}

// PageKey is a row's position in a list ordered newest first: its time
// and its id (Time is zero in lists ordered by id alone).
type PageKey struct {
	Time time.Time
	ID   int64
}

// afterTime and afterID are the page's keyset arguments (nil from the start).
func (p ParentPage) afterTime() *time.Time {
	if p.After == nil {
		return nil
	}
	return &p.After.Time
}

func (p ParentPage) afterID() *int64 {
	if p.After == nil {
		return nil
	}
	return &p.After.ID
}

// CountByUUID is a count per client UUID.
type CountByUUID struct {
	ClientUUID string `db:"client_uuid"`
	N          int64  `db:"n"`
}

// AnomalyFilter narrows anomaly events; a nil list matches every value,
// an empty one none.
type AnomalyFilter struct {
	Statuses, Severities, MeasurementTypes, Metrics, DetectionPasses []string
	// Since: still seen at or after (last_seen_at, else first_seen_at,
	// else created_at); Until: first seen before (first_seen_at, else
	// created_at).
	Since, Until *time.Time
}

// anomalyWhere is the condition of an AnomalyFilter over documents ($3 to
// $9); $1 is the data owner.
const anomalyWhere = ` AND kind = 'anomaly_event'
	AND ($3::text[] IS NULL OR doc->>'status' = ANY($3))
	AND ($4::text[] IS NULL OR doc->>'severity' = ANY($4))
	AND ($5::text[] IS NULL OR doc->>'measurement_type' = ANY($5))
	AND ($6::text[] IS NULL OR doc->>'metric' = ANY($6))
	AND ($7::text[] IS NULL OR doc->>'detection_pass' = ANY($7))
	AND ($8::timestamptz IS NULL OR coalesce(fg_time(doc->'last_seen_at'), fg_time(doc->'first_seen_at'), created_at) >= $8)
	AND ($9::timestamptz IS NULL OR coalesce(fg_time(doc->'first_seen_at'), created_at) < $9)`

// newestAfter continues a newest-first page after ($10 time, $11 id).
const newestAfter = ` AND ($10::timestamptz IS NULL OR (created_at, id) < ($10, $11::bigint))
	ORDER BY created_at DESC, id DESC LIMIT $12`

func (f AnomalyFilter) args(ownerID int64, clientUUIDs []string) []any {
	return []any{ownerID, clientUUIDs, f.Statuses, f.Severities, f.MeasurementTypes, f.Metrics, f.DetectionPasses, f.Since, f.Until}
}

// AnomalyEventsByClients reads the page of each client's anomaly events
// of the filter, newest first.
func AnomalyEventsByClients(ownerID int64, clientUUIDs []string, f AnomalyFilter, p ParentPage) Read[Document] {
	const q = `SELECT d.* FROM unnest($2::uuid[]) AS c(uuid) CROSS JOIN LATERAL (
		SELECT ` + documentCols + ` FROM documents WHERE data_owner_id = $1 AND client_uuid = c.uuid` + anomalyWhere + newestAfter + `) d`
	return Read[Document]{step: "page client anomaly events", sql: q,
		args: append(f.args(ownerID, clientUUIDs), p.afterTime(), p.afterID(), p.Limit), scan: pgx.RowToStructByName[Document]}
}

// CountAnomalyEventsByClients counts each client's anomaly events of the
// filter (clients without any are left out).
func CountAnomalyEventsByClients(ownerID int64, clientUUIDs []string, f AnomalyFilter) Read[CountByUUID] {
	const q = `SELECT client_uuid::text AS client_uuid, count(*) AS n FROM documents
		WHERE data_owner_id = $1 AND client_uuid = ANY($2::uuid[])` + anomalyWhere + ` GROUP BY client_uuid`
	return Read[CountByUUID]{step: "count client anomaly events", sql: q, args: f.args(ownerID, clientUUIDs),
		scan: pgx.RowToStructByName[CountByUUID]}
}

// OpenAnomalyCounts counts each client's open anomaly events (status
// new, the ones ResolveAnomalyEvents resolves).
func OpenAnomalyCounts(ownerID int64, clientUUIDs []string) Read[CountByUUID] {
	return CountAnomalyEventsByClients(ownerID, clientUUIDs, AnomalyFilter{Statuses: []string{"new"}})
}

// AnomalyEventPage reads a page of the data owner's anomaly events of the
// filter, newest first, of the given clients only when clientUUIDs is not
// nil, and counts them all when count. It runs alone, on a plan made for
// its arguments: which index serves it depends on them.
func (s *Store) AnomalyEventPage(ctx context.Context, ownerID int64, clientUUIDs []string, f AnomalyFilter, p ParentPage, count bool) (PagedList[Document], error) {
	const where = ` FROM documents WHERE data_owner_id = $1 AND ($2::uuid[] IS NULL OR client_uuid = ANY($2::uuid[]))` + anomalyWhere
	var out PagedList[Document]
	b := &pgx.Batch{}
	b.Queue(`SELECT `+documentCols+where+newestAfter, append(f.args(ownerID, clientUUIDs), p.afterTime(), p.afterID(), p.Limit)...).
		Query(func(rows pgx.Rows) error {
			var err error
			out.Rows, err = pgx.CollectRows(rows, pgx.RowToStructByName[Document])
			return err
		})
	if count {
		b.Queue(`SELECT count(*)`+where, f.args(ownerID, clientUUIDs)...).QueryRow(func(row pgx.Row) error {
			return row.Scan(&out.Total)
		})
	}
	return out, mapErr("page anomaly events", s.ReadPool(ctx).SendBatch(ctx, b).Close())
}

// StatusFilter narrows system status records by when they were stored.
type StatusFilter struct{ Since, Until *time.Time }

// statusWhere is the condition of a StatusFilter ($3, $4) over a
// client's ($2) system status records.
const statusWhere = ` AND kind = 'system_status' AND ($3::timestamptz IS NULL OR created_at >= $3)
	AND ($4::timestamptz IS NULL OR created_at < $4)`

// SystemStatusByClients reads the page of each client's system status
// records of the filter, newest first.
func SystemStatusByClients(ownerID int64, clientUUIDs []string, f StatusFilter, p ParentPage) Read[SystemStatus] {
	const q = `SELECT d.id, d.created_at, d.client_uuid, d.doc FROM unnest($2::uuid[]) AS c(uuid) CROSS JOIN LATERAL (
		SELECT id, created_at, client_uuid::text AS client_uuid, doc FROM documents
		WHERE data_owner_id = $1 AND client_uuid = c.uuid` + statusWhere + `
		AND ($5::timestamptz IS NULL OR (created_at, id) < ($5, $6::bigint))
		ORDER BY created_at DESC, id DESC LIMIT $7) d`
	return Read[SystemStatus]{step: "page client system status records", sql: q,
		args: []any{ownerID, clientUUIDs, f.Since, f.Until, p.afterTime(), p.afterID(), p.Limit},
		scan: func(row pgx.CollectableRow) (SystemStatus, error) {
			var id int64
			var at time.Time
			var cu *string
			var doc []byte
			if err := row.Scan(&id, &at, &cu, &doc); err != nil {
				return SystemStatus{}, err
			}
			return ParseSystemStatus(id, at, cu, doc)
		}}
}

// CountSystemStatusByClients counts each client's system status records
// of the filter (clients without any are left out).
func CountSystemStatusByClients(ownerID int64, clientUUIDs []string, f StatusFilter) Read[CountByUUID] {
	const q = `SELECT client_uuid::text AS client_uuid, count(*) AS n FROM documents
		WHERE data_owner_id = $1 AND client_uuid = ANY($2::uuid[])` + statusWhere + ` GROUP BY client_uuid`
	return Read[CountByUUID]{step: "count client system status records", sql: q, args: []any{ownerID, clientUUIDs, f.Since, f.Until},
		scan: pgx.RowToStructByName[CountByUUID]}
}

// DeliveriesByWebhooks reads the page of each webhook's deliveries,
// newest first (by id, as WebhookDeliveryPage).
func DeliveriesByWebhooks(ownerID int64, webhookIDs []int64, p ParentPage) Read[WebhookDelivery] {
	const q = `SELECT d.* FROM unnest($2::bigint[]) AS w(id) CROSS JOIN LATERAL (
		SELECT ` + deliveryCols + ` FROM webhook_deliveries WHERE data_owner_id = $1 AND webhook_endpoint_id = w.id
		AND ($3::bigint IS NULL OR id < $3) ORDER BY id DESC LIMIT $4) d`
	return Read[WebhookDelivery]{step: "page webhook deliveries", sql: q, args: []any{ownerID, webhookIDs, p.afterID(), p.Limit},
		scan: pgx.RowToStructByName[WebhookDelivery]}
}

// CountDeliveriesByWebhooks counts each webhook's deliveries.
func CountDeliveriesByWebhooks(ownerID int64, webhookIDs []int64) Read[CountByParent] {
	return Read[CountByParent]{step: "count webhook deliveries", sql: `SELECT webhook_endpoint_id AS parent_id, count(*) AS n
		FROM webhook_deliveries WHERE data_owner_id = $1 AND webhook_endpoint_id = ANY($2) GROUP BY webhook_endpoint_id`,
		args: []any{ownerID, webhookIDs}, scan: pgx.RowToStructByName[CountByParent]}
}

// ParentClient is a client of a parent's page of clients.
type ParentClient struct {
	ParentID int64
	Client
}

// ClientMembership is which of the data owner's ($1) clients are whose:
// a statement of (parent_id, client_id) pairs, each once, that a page
// walks from the parent's side (an index on the parent serves it).
type ClientMembership struct {
	noun, pairs string
}

// The parents whose clients are paged.
var (
	KeyClients = ClientMembership{"registration key clients",
		`SELECT registration_key_id AS parent_id, id AS client_id FROM clients WHERE data_owner_id = $1`}
	CapabilityClients = ClientMembership{"capability clients", `SELECT k.capability_id AS parent_id, c.id AS client_id
		FROM clients c JOIN registration_keys k ON k.id = c.registration_key_id AND k.data_owner_id = $1 WHERE c.data_owner_id = $1`}
	IspClients = ClientMembership{"isp clients",
		`SELECT DISTINCT isp_id AS parent_id, client_id FROM isp_contracts WHERE data_owner_id = $1`}
	GroupClients = ClientMembership{"group clients", `SELECT m.client_group_id AS parent_id, m.client_id
		FROM client_group_members m JOIN client_groups g ON g.id = m.client_group_id AND g.data_owner_id = $1`}
)

// ClientsByParents reads the page of each parent's clients (the data
// owner's own), by id: the pairs first, then each page's clients by id
// (the LIMIT 1 keeps the planner from turning that around into a scan of
// every client of the data owner per parent).
func ClientsByParents(m ClientMembership, ownerID int64, parentIDs []int64, p ParentPage) Read[ParentClient] {
	q := `SELECT r.parent_id, v.* FROM unnest($2::bigint[]) AS p(id) CROSS JOIN LATERAL (
			SELECT r.parent_id, r.client_id FROM (` + m.pairs + `) r
			WHERE r.parent_id = p.id AND ($3::bigint IS NULL OR r.client_id > $3) ORDER BY r.client_id LIMIT $4) r
		CROSS JOIN LATERAL (` + clientSelect + ` AND c.data_owner_id = $1 AND c.id = r.client_id LIMIT 1) v
		ORDER BY r.parent_id, r.client_id`
	return Read[ParentClient]{step: "page " + m.noun, sql: q, args: []any{ownerID, parentIDs, p.afterID(), p.Limit},
		scan: func(row pgx.CollectableRow) (ParentClient, error) {
			var c ParentClient
			var err error
			c.Client, err = scanClientRow(row, []any{&c.ParentID})
			return c, err
		}}
}

// CountClientsByParents counts each parent's clients (parents without
// any are left out). The pairs are the data owner's own clients already
// (contracts and group members are of its own clients only).
func CountClientsByParents(m ClientMembership, ownerID int64, parentIDs []int64) Read[CountByParent] {
	q := `SELECT r.parent_id, count(*) AS n FROM (` + m.pairs + `) r WHERE r.parent_id = ANY($2) GROUP BY r.parent_id`
	return Read[CountByParent]{step: "count " + m.noun, sql: q, args: []any{ownerID, parentIDs}, scan: pgx.RowToStructByName[CountByParent]}
}

// AdminKeysByUsers loads the client admin API keys of several of the data
// owner's users, by id.
func AdminKeysByUsers(ownerID int64, userIDs []int64) Read[APIKey] {
	return Read[APIKey]{step: "load users' api keys", sql: `SELECT ` + apiKeyCols + ` FROM api_keys
		WHERE data_owner_id = $1 AND kind = 'client_admin' AND user_id = ANY($2) ORDER BY id`,
		args: []any{ownerID, userIDs}, scan: pgx.RowToStructByName[APIKey]}
}
