package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The clients connection: keyset pages of the clients a data owner sees
// (its own and those shared with it), filtered and in one of a few orders.
//
// The statement is put together from the constant fragments below, with a
// placeholder for every value, like the search translator does: each
// combination of filters is then its own prepared statement with its own
// plan, where one statement of "$n IS NULL OR ..." conditions would get a
// generic plan that uses none of the filters' indexes (migration 00020).

// ClientOrder is an order of the clients connection; every order ends with
// the id, so it is total and a page boundary is a key.
type ClientOrder string

const (
	ClientOrderID        ClientOrder = "id"
	ClientOrderCreatedAt ClientOrder = "created_at"
	// ClientOrderLabel orders by the label, trimmed and lower-cased;
	// clients without a label come first.
	ClientOrderLabel ClientOrder = "label"
)

// clientOrderKeys is each order's key: its columns over the page's rows
// (v), the last always the id; clients_owner and the indexes of migration
// 00020 serve them.
var clientOrderKeys = map[ClientOrder][]string{
	ClientOrderID:        {`v.id`},
	ClientOrderCreatedAt: {`v.created_at`, `v.id`},
	ClientOrderLabel:     {`coalesce(lower(btrim(v.label)), '')`, `v.id`},
}

// keyRow is the key as a row (or the id alone) for comparisons.
func keyRow(cols []string) string {
	if len(cols) == 1 {
		return cols[0]
	}
	return `(` + strings.Join(cols, `, `) + `)`
}

// orderBy orders by the key's columns in dir, read from alias (v or p).
func orderBy(cols []string, dir, alias string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = strings.ReplaceAll(c, `v.`, alias+`.`) + dir
	}
	return strings.Join(out, `, `)
}

// ClientFilter selects clients; nil and empty fields do not filter. Group,
// RegistrationKeyID and HealthStates concern the data owner's own clients:
// a shared client matches none of them.
type ClientFilter struct {
	// Search: a substring of the label or of the UUID, case-insensitive.
	Search *string
	// Tags: the client carries every one.
	Tags              []string
	GroupID           *int64
	Type              *string
	Offline           *bool
	Disabled          *bool
	HealthStates      []string
	RegistrationKeyID *int64
}

// ClientKey is where a page starts or ends: the order key of a client.
type ClientKey struct {
	ID        int64
	CreatedAt time.Time
	Label     string // the trimmed, lower-cased label; "" when none
}

// ClientPageQuery asks for one page: Limit clients after After and before
// Before (either may be nil) in Order (descending when Desc), the first
// ones, or the last ones when FromEnd.
type ClientPageQuery struct {
	Filter        ClientFilter
	Order         ClientOrder
	Desc          bool
	After, Before *ClientKey
	Limit         int
	FromEnd       bool
}

// PagedClient is a client of a page with its order key.
type PagedClient struct {
	Client
	Key ClientKey
}

// clientSearchExpr is what a search looks in; clients_search indexes it.
const clientSearchExpr = `lower(coalesce(v.label, '') || E'\n' || v.uuid::text)`

// clientBranches are where the clients data owner $1 sees come from: its
// own and those shared with it. A page reads each in order, so that each
// walks its index (a UNION ALL below one ORDER BY is read whole and sorted).
var clientBranches = []struct {
	shared bool
	from   string
}{
	{false, ` FROM clients v WHERE v.data_owner_id = $1`},
	{true, ` FROM client_shares s JOIN clients v ON v.id = s.client_id WHERE s.data_owner_id = $1 AND v.data_owner_id <> $1`},
}

// clientOffline is the offline judgement of clientSelect over v.
var clientOffline = fmt.Sprintf(`CASE WHEN (SELECT client_offline_detection_enabled FROM data_owners WHERE id = $1)
	THEN v.last_seen_at < now() - make_interval(mins => coalesce(
		(SELECT offline_threshold_minutes FROM data_owners WHERE id = $1), %d)) END`, DefaultOfflineThresholdMinutes)

// clientHealth is the state fleet health gives a client (store.evaluateHealth):
// its stored evaluation while the record evaluated is within the offline
// threshold and degraded detection is on, else unknown. A new record is
// evaluated in the transaction that stores it, so the stored evaluation is
// of the newest record.
var clientHealth = fmt.Sprintf(`coalesce((SELECT e.state FROM client_health_evaluations e
	JOIN documents d ON d.id = e.source_document_id AND d.data_owner_id = $1
	WHERE e.client_id = v.id AND e.data_owner_id = $1
	AND (SELECT client_degraded_detection_enabled FROM data_owners WHERE id = $1)
	AND d.created_at >= now() - make_interval(mins => coalesce(
		(SELECT offline_threshold_minutes FROM data_owners WHERE id = $1), %d))), 'unknown')`, DefaultOfflineThresholdMinutes)

// pageArgs numbers a statement's placeholders.
type pageArgs []any

func (a *pageArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// clientWhere is the condition of the filter over v, with its arguments
// after the data owner, and whether shared clients can match it.
func clientWhere(ownerID int64, f ClientFilter) (cond string, args pageArgs, sharedToo bool) {
	args = pageArgs{ownerID}
	var w strings.Builder
	if f.Search != nil {
		w.WriteString(` AND ` + clientSearchExpr + ` LIKE ` + args.add("%"+escapeLike(strings.ToLower(*f.Search))+"%"))
	}
	if len(f.Tags) > 0 {
		w.WriteString(` AND v.tags @> ` + args.add(f.Tags) + `::text[]`)
	}
	if f.GroupID != nil {
		w.WriteString(` AND EXISTS (SELECT 1 FROM client_group_members m JOIN client_groups g ON g.id = m.client_group_id
			WHERE g.data_owner_id = $1 AND m.client_group_id = ` + args.add(*f.GroupID) + ` AND m.client_id = v.id)`)
	}
	if f.Type != nil {
		w.WriteString(` AND v.type = ` + args.add(*f.Type))
	}
	if f.Offline != nil {
		w.WriteString(` AND (` + clientOffline + `) = ` + args.add(*f.Offline))
	}
	if f.Disabled != nil {
		if *f.Disabled {
			w.WriteString(` AND v.disabled_at IS NOT NULL`)
		} else {
			w.WriteString(` AND v.disabled_at IS NULL`)
		}
	}
	if len(f.HealthStates) > 0 {
		w.WriteString(` AND ` + clientHealth + ` = ANY(` + args.add(f.HealthStates) + `::text[])`)
	}
	if f.RegistrationKeyID != nil {
		w.WriteString(` AND v.registration_key_id = ` + args.add(*f.RegistrationKeyID))
	}
	sharedToo = f.GroupID == nil && f.RegistrationKeyID == nil && len(f.HealthStates) == 0
	return w.String(), args, sharedToo
}

// escapeLike makes s match itself in a LIKE pattern.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// keyArg is a page boundary as the order's key row.
func keyArg(args *pageArgs, o ClientOrder, k ClientKey) string {
	switch o {
	case ClientOrderCreatedAt:
		return `(` + args.add(k.CreatedAt) + `::timestamptz, ` + args.add(k.ID) + `::bigint)`
	case ClientOrderLabel:
		return `(` + args.add(k.Label) + `::text, ` + args.add(k.ID) + `::bigint)`
	}
	return args.add(k.ID) + `::bigint`
}

// clientPageCols are clientSelect's columns over v (shared comes from
// the branch) and the label's order key.
var clientPageCols = `v.id, v.uuid::text AS uuid, v.type, %t AS shared, v.label, v.extra_label, v.tags, v.created_at,
	v.updated_at, v.disabled_at, v.disabled_reason, v.last_measurement_at, v.last_seen_at, v.last_client_type,
	v.last_client_version, v.config_managed, v.public_config_id, v.automator_config_id, v.anomalies_muted,
	v.offline_notifications_muted, v.system_health_notifications_muted, v.registration_key_id,
	` + clientOffline + ` AS offline, coalesce(lower(btrim(v.label)), '') AS label_key`

// ClientPage reads one page of the clients data owner ownerID sees, in the
// page's order (the last ones too are answered first to last), and, when
// count, how many the filter selects over all pages.
//
// Both statements are planned for their values at every run (pgx's
// QueryExecModeExec: an unnamed prepared statement), not with a cached
// generic plan: how many clients a search or a tag selects decides whether
// walking the order's index or reading the matches through the filter's
// index is right, and a generic plan, blind to the values, walked all
// 100,000 clients of a search matching 11 (200 ms instead of 1).
func (s *Store) ClientPage(ctx context.Context, ownerID int64, q ClientPageQuery, count bool) ([]PagedClient, int64, error) {
	page := clientPage(ownerID, q)
	rows, _ := s.ReadPool(ctx).Query(ctx, page.sql, append([]any{pgx.QueryExecModeExec}, page.args...)...)
	cs, err := pgx.CollectRows(rows, page.scan)
	if err != nil || !count {
		return cs, 0, mapErr(page.step, err)
	}
	c := countClients(ownerID, q.Filter)
	var n int64
	err = s.ReadPool(ctx).QueryRow(ctx, c.sql, append([]any{pgx.QueryExecModeExec}, c.args...)...).Scan(&n)
	return cs, n, mapErr(c.step, err)
}

// clientPage is ClientPage's page statement.
func clientPage(ownerID int64, q ClientPageQuery) Read[PagedClient] {
	cols, ok := clientOrderKeys[q.Order]
	if !ok {
		cols, q.Order = clientOrderKeys[ClientOrderID], ClientOrderID
	}
	key := keyRow(cols)
	cond, args, sharedToo := clientWhere(ownerID, q.Filter)
	asc := !q.Desc
	if q.After != nil {
		cond += ` AND ` + key + map[bool]string{true: ` > `, false: ` < `}[asc] + keyArg(&args, q.Order, *q.After)
	}
	if q.Before != nil {
		cond += ` AND ` + key + map[bool]string{true: ` < `, false: ` > `}[asc] + keyArg(&args, q.Order, *q.Before)
	}
	// Read from the end: the order turned round, turned back at the end.
	dirs := map[bool]string{true: ` ASC`, false: ` DESC`}
	dir := dirs[asc != q.FromEnd]
	limit := args.add(q.Limit)
	var branches []string
	for _, b := range clientBranches {
		if b.shared && !sharedToo {
			continue
		}
		branches = append(branches, `(SELECT `+fmt.Sprintf(clientPageCols, b.shared)+b.from+cond+
			` ORDER BY `+orderBy(cols, dir, "v")+` LIMIT `+limit+`)`)
	}
	// p's columns are named as v's, but the label key: it is the label's.
	pcols := slices.Clone(cols)
	if q.Order == ClientOrderLabel {
		pcols[0] = `v.label_key`
	}
	sql := `SELECT * FROM (` + strings.Join(branches, ` UNION ALL `) + `) p ORDER BY ` + orderBy(pcols, dir, "p") + ` LIMIT ` + limit
	if q.FromEnd {
		sql = `SELECT * FROM (` + sql + `) r ORDER BY ` + orderBy(pcols, dirs[asc], "r")
	}
	return Read[PagedClient]{step: "page clients", sql: sql, args: args, scan: scanPagedClient}
}

func scanPagedClient(row pgx.CollectableRow) (PagedClient, error) {
	var c PagedClient
	var err error
	c.Client, err = scanClientRow(row, nil, &c.Key.Label)
	c.Key.ID, c.Key.CreatedAt = c.ID, c.CreatedAt
	return c, err
}

// countClients is ClientPage's count statement.
func countClients(ownerID int64, f ClientFilter) Read[int64] {
	cond, args, sharedToo := clientWhere(ownerID, f)
	sql := `SELECT (SELECT count(*)` + clientBranches[0].from + cond + `)`
	if sharedToo {
		sql += ` + (SELECT count(*)` + clientBranches[1].from + cond + `)`
	}
	return Read[int64]{step: "count clients", sql: sql, args: args, scan: pgx.RowTo[int64]}
}
