package store

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
)

// IDPage asks for a keyset page by id of one of a data owner's lists
// (client groups, users, capabilities, ISPs, API keys of a kind, configs of
// a kind, webhooks, a webhook's deliveries): Limit rows after AfterID and
// before BeforeID (either may be nil), the last ones when FromEnd. The
// rows of a page come first to last in the list's order (by id; by id
// descending, newest first, for deliveries).
type IDPage struct {
	AfterID, BeforeID *int64
	Limit             int
	FromEnd           bool
}

// idList is one of the lists an IDPage reads: what it holds (for errors),
// its table (or a subquery
// named like one) and columns; the table has a data_owner_id and an id.
// within, when set, is a second column the list is scoped by ($2: the
// kind of API keys and configs, the webhook of deliveries); desc lists
// newest first.
type idList struct {
	noun, table, cols, within string
	desc                      bool
}

var (
	groupList      = idList{noun: "client groups", table: "client_groups", cols: groupCols}
	userList       = idList{noun: "users", table: "users", cols: userCols}
	capabilityList = idList{noun: "capabilities", table: "capabilities", cols: capabilityCols}
	ispList        = idList{noun: "isps", table: "isps", cols: ispCols}
	apiKeyList     = idList{noun: "api keys", table: "api_keys", cols: apiKeyCols, within: "kind"}
	configList     = idList{noun: "configs", table: configTable, cols: configCols, within: "kind"}
	webhookList    = idList{noun: "webhooks", table: "webhook_endpoints", cols: webhookCols}
	deliveryList   = idList{noun: "webhook deliveries", table: "webhook_deliveries", cols: deliveryCols,
		within: "webhook_endpoint_id", desc: true}
)

// where is the list's scope: the data owner ($1) and, for a list within
// something, $2.
func (l idList) where() string {
	if l.within == "" {
		return ` WHERE data_owner_id = $1 AND $2::text IS NULL`
	}
	return ` WHERE data_owner_id = $1 AND ` + l.within + ` = $2`
}

// read is the page's statement, put together from constant fragments: ids
// above after ($3) and below before ($4) in id order, the order chosen so
// that an index on the id (per webhook for deliveries) serves it. A
// descending list pages forward where an ascending one pages backward.
func (l idList) read(ownerID int64, within any, p IDPage) (string, []any) {
	lo, hi, fromEnd := p.AfterID, p.BeforeID, p.FromEnd
	if l.desc {
		lo, hi, fromEnd = hi, lo, !fromEnd
	}
	order := ` ORDER BY id`
	if fromEnd {
		order = ` ORDER BY id DESC`
	}
	return `SELECT ` + l.cols + ` FROM ` + l.table + l.where() + `
		AND ($3::bigint IS NULL OR id > $3) AND ($4::bigint IS NULL OR id < $4)` + order + ` LIMIT $5`,
		[]any{ownerID, within, lo, hi, p.Limit}
}

// count is the statement counting the data owner's rows of the list.
func (l idList) count(ownerID int64, within any) Read[int64] {
	return Read[int64]{step: "count " + l.noun, sql: `SELECT count(*) FROM ` + l.table + l.where(),
		args: []any{ownerID, within}, scan: pgx.RowTo[int64]}
}

// pageOf makes a Read of the page, in the list's order whichever end it
// came from.
func pageOf[R any](l idList, ownerID int64, within any, p IDPage) Read[R] {
	sql, args := l.read(ownerID, within, p)
	return Read[R]{step: "page " + l.noun, sql: sql, args: args, scan: pgx.RowToStructByName[R]}
}

// PagedList is a page of a short list and, when asked for, the list's length.
type PagedList[R any] struct {
	Rows  []R
	Total int64
}

// pageList reads a page and, when count, the total, in one round trip
// (with b's reads queued before); within scopes a list within something
// (nil for the others).
func pageList[R any](ctx context.Context, s *Store, b *Batch, l idList, ownerID int64, within any, p IDPage, count bool) (PagedList[R], error) {
	var out PagedList[R]
	var pageErr, countErr error
	Queue(b, pageOf[R](l, ownerID, within, p), func(rs []R, err error) {
		if out.Rows, pageErr = rs, err; p.FromEnd { // read from the far end of the list's order
			slices.Reverse(out.Rows)
		}
	})
	if count {
		Queue(b, l.count(ownerID, within), func(ns []int64, err error) {
			if countErr = err; len(ns) == 1 {
				out.Total = ns[0]
			}
		})
	}
	if err := s.Send(ctx, b); err != nil {
		return out, err
	}
	return out, errors.Join(pageErr, countErr)
}

// ClientGroupPage reads a page of the data owner's client groups.
func (s *Store) ClientGroupPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[ClientGroup], error) {
	return pageList[ClientGroup](ctx, s, &Batch{}, groupList, ownerID, nil, p, count)
}

// UserPage reads a page of the data owner's users.
func (s *Store) UserPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[User], error) {
	return pageList[User](ctx, s, &Batch{}, userList, ownerID, nil, p, count)
}

// CapabilityPage reads a page of the data owner's capabilities.
func (s *Store) CapabilityPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[Capability], error) {
	return pageList[Capability](ctx, s, &Batch{}, capabilityList, ownerID, nil, p, count)
}

// IspPage reads a page of the data owner's ISPs.
func (s *Store) IspPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[Isp], error) {
	return pageList[Isp](ctx, s, &Batch{}, ispList, ownerID, nil, p, count)
}

// APIKeyPage reads a page of the data owner's API keys of kind.
func (s *Store) APIKeyPage(ctx context.Context, ownerID int64, kind string, p IDPage, count bool) (PagedList[APIKey], error) {
	return pageList[APIKey](ctx, s, &Batch{}, apiKeyList, ownerID, kind, p, count)
}

// ConfigPage reads a page of the data owner's configs of kind.
func (s *Store) ConfigPage(ctx context.Context, ownerID int64, kind string, p IDPage, count bool) (PagedList[Config], error) {
	return pageList[Config](ctx, s, &Batch{}, configList, ownerID, kind, p, count)
}

// WebhookPage reads a page of the data owner's webhooks.
func (s *Store) WebhookPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[WebhookEndpoint], error) {
	return pageList[WebhookEndpoint](ctx, s, &Batch{}, webhookList, ownerID, nil, p, count)
}

// WebhookDeliveryPage reads a page of the deliveries of one of the data
// owner's webhooks, newest first; ErrNotFound when the data owner has no
// such webhook. The webhook is read in the page's round trip.
func (s *Store) WebhookDeliveryPage(ctx context.Context, ownerID, webhookID int64, p IDPage, count bool) (PagedList[WebhookDelivery], error) {
	b := &Batch{}
	var found bool
	var webhookErr error
	Queue(b, Read[int64]{step: "find webhook", sql: `SELECT id FROM webhook_endpoints WHERE data_owner_id = $1 AND id = $2`,
		args: []any{ownerID, webhookID}, scan: pgx.RowTo[int64]}, func(ids []int64, err error) { found, webhookErr = len(ids) == 1, err })
	l, err := pageList[WebhookDelivery](ctx, s, b, deliveryList, ownerID, webhookID, p, count)
	switch {
	case webhookErr != nil:
		return l, webhookErr
	case err != nil:
		return l, err
	case !found:
		return l, ErrNotFound
	}
	return l, nil
}
