package store

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
)

// IDPage asks for a keyset page by id of one of a data owner's short lists
// (client groups, users, capabilities, ISPs): Limit rows after AfterID and
// before BeforeID (either may be nil), the last ones when FromEnd. The
// rows of a page come first to last by id.
type IDPage struct {
	AfterID, BeforeID *int64
	Limit             int
	FromEnd           bool
}

// idList is one of the lists an IDPage reads: its table and columns (the
// table has a data_owner_id and an id).
type idList struct{ step, table, cols string }

var (
	groupList      = idList{"page client groups", "client_groups", groupCols}
	userList       = idList{"page users", "users", userCols}
	capabilityList = idList{"page capabilities", "capabilities", capabilityCols}
	ispList        = idList{"page isps", "isps", ispCols}
)

// read is the page's statement. These lists are a data owner's own and
// short (hundreds of rows), so one statement serves both directions and
// sorts them, where the clients connection walks an index each way.
func (l idList) read(ownerID int64, p IDPage) (string, []any) {
	return `SELECT ` + l.cols + ` FROM ` + l.table + ` WHERE data_owner_id = $1
		AND ($2::bigint IS NULL OR id > $2) AND ($3::bigint IS NULL OR id < $3)
		ORDER BY CASE WHEN $4 THEN -id END, id LIMIT $5`, []any{ownerID, p.AfterID, p.BeforeID, p.FromEnd, p.Limit}
}

// count is the statement counting the data owner's rows of the list.
func (l idList) count(ownerID int64) Read[int64] {
	return Read[int64]{step: "count " + l.table, sql: `SELECT count(*) FROM ` + l.table + ` WHERE data_owner_id = $1`,
		args: []any{ownerID}, scan: pgx.RowTo[int64]}
}

// pageOf makes a Read of the page, in id order whichever end it came from.
func pageOf[R any](l idList, ownerID int64, p IDPage) Read[R] {
	sql, args := l.read(ownerID, p)
	return Read[R]{step: l.step, sql: sql, args: args, scan: pgx.RowToStructByName[R]}
}

// PagedList is a page of a short list and, when asked for, the list's length.
type PagedList[R any] struct {
	Rows  []R
	Total int64
}

// pageList reads a page and, when count, the total, in one round trip.
func pageList[R any](ctx context.Context, s *Store, l idList, ownerID int64, p IDPage, count bool) (PagedList[R], error) {
	var out PagedList[R]
	var pageErr, countErr error
	b := &Batch{}
	Queue(b, pageOf[R](l, ownerID, p), func(rs []R, err error) { out.Rows, pageErr = reverseIfFromEnd(rs, p), err })
	if count {
		Queue(b, l.count(ownerID), func(ns []int64, err error) {
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
	return pageList[ClientGroup](ctx, s, groupList, ownerID, p, count)
}

// UserPage reads a page of the data owner's users.
func (s *Store) UserPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[User], error) {
	return pageList[User](ctx, s, userList, ownerID, p, count)
}

// CapabilityPage reads a page of the data owner's capabilities.
func (s *Store) CapabilityPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[Capability], error) {
	return pageList[Capability](ctx, s, capabilityList, ownerID, p, count)
}

// IspPage reads a page of the data owner's ISPs.
func (s *Store) IspPage(ctx context.Context, ownerID int64, p IDPage, count bool) (PagedList[Isp], error) {
	return pageList[Isp](ctx, s, ispList, ownerID, p, count)
}

// reverseIfFromEnd puts rows read from the end back in id order.
func reverseIfFromEnd[R any](rows []R, p IDPage) []R {
	if p.FromEnd {
		slices.Reverse(rows)
	}
	return rows
}
