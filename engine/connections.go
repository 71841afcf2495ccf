package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Relay connections: page arguments, opaque keyset cursors and page info.

// PageWindow is a connection's first/after/last/before, checked: Size rows
// after After and before Before, the last ones when FromEnd.
type PageWindow struct {
	Size          int
	FromEnd       bool
	After, Before *string
}

// PageWindowOf checks the Relay arguments: first or last (not both), 1 to
// limits.MaxPageSize, first limits.PageSize when neither is given.
func PageWindowOf(first *int64, after *string, last *int64, before *string) (PageWindow, error) {
	w := PageWindow{Size: limits.PageSize, After: after, Before: before}
	switch {
	case first != nil && last != nil:
		return w, apierr.Invalid("last", "cannot be given with first: page forward with first and after, backward with last and before")
	case last != nil:
		w.Size, w.FromEnd = int(*last), true
		if *last < 1 || *last > limits.MaxPageSize {
			return w, apierr.Invalid("last", fmt.Sprintf("must be between 1 and %d", limits.MaxPageSize))
		}
	case first != nil:
		w.Size = int(*first)
		if *first < 1 || *first > limits.MaxPageSize {
			return w, apierr.Invalid("first", fmt.Sprintf("must be between 1 and %d", limits.MaxPageSize))
		}
	}
	return w, nil
}

// cursor is what an opaque cursor holds: the order it was made in and the
// key of its row in that order.
type cursor struct {
	Order string    `json:"o"`
	ID    int64     `json:"i"`
	Time  time.Time `json:"t,omitzero"`
	Text  *string   `json:"s,omitempty"`
}

// encodeCursor makes a cursor opaque: unpadded base64url of its JSON.
func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // a struct of plain fields always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads the cursor argument field of a connection in order;
// a cursor of another connection or order is refused by name.
func DecodeCursor(field, s, order string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !utf8.Valid(b) || json.Unmarshal(b, &c) != nil || c.ID < 1 || c.Order == "" {
		return c, apierr.Invalid(field, "is not a cursor of this connection")
	}
	if c.Order != order {
		return c, apierr.Invalid(field, fmt.Sprintf("was made for the order %q, not %q: ask again from the first page", c.Order, order))
	}
	return c, nil
}

// clientConnection makes the page of rows read for w (one more than its
// size when there are more).
func clientConnection(rows []store.PagedClient, w PageWindow, q store.ClientPageQuery, total int64) *model.ClientConnection {
	conn := &model.ClientConnection{Edges: []model.ClientEdge{}, TotalCount: total}
	rows, conn.PageInfo = cut(rows, w)
	order := string(q.Order)
	if q.Desc {
		order += " desc"
	}
	for _, r := range rows {
		c := cursor{Order: order, ID: r.ID}
		switch q.Order {
		case store.ClientOrderCreatedAt:
			c.Time = r.Key.CreatedAt
		case store.ClientOrderLabel:
			c.Text = &r.Key.Label
		}
		conn.Edges = append(conn.Edges, model.ClientEdge{Cursor: encodeCursor(c), Node: new(ClientOf(r.Client))})
	}
	conn.PageInfo.StartCursor, conn.PageInfo.EndCursor = ends(conn.Edges, func(e model.ClientEdge) string { return e.Cursor })
	return conn
}

// cut drops the row read beyond the page (rows hold one more than the
// page when there are more) and says so in the page info.
func cut[R any](rows []R, w PageWindow) ([]R, *model.PageInfo) {
	info := &model.PageInfo{}
	if len(rows) > w.Size {
		if w.FromEnd {
			rows, info.HasPreviousPage = rows[len(rows)-w.Size:], true
		} else {
			rows, info.HasNextPage = rows[:w.Size], true
		}
	}
	return rows, info
}

// ends answers the cursors of a page's first and last edges (nil when empty).
func ends[E any](edges []E, cursorOf func(E) string) (start, end *string) {
	if n := len(edges); n > 0 {
		return new(cursorOf(edges[0])), new(cursorOf(edges[n-1]))
	}
	return nil, nil
}

// idPageOf parses the Relay arguments of a list paged by id; its cursors
// carry list (the connection's type) as their order, so that a cursor of
// another connection is refused.
func idPageOf(list string, first *int64, after *string, last *int64, before *string) (PageWindow, store.IDPage, error) {
	w, err := PageWindowOf(first, after, last, before)
	if err != nil {
		return w, store.IDPage{}, err
	}
	p := store.IDPage{Limit: w.Size + 1, FromEnd: w.FromEnd}
	for _, b := range []struct {
		field string
		arg   *string
		dst   **int64
	}{{"after", after, &p.AfterID}, {"before", before, &p.BeforeID}} {
		if b.arg != nil {
			c, err := DecodeCursor(b.field, *b.arg, list)
			if err != nil {
				return w, p, err
			}
			*b.dst = &c.ID
		}
	}
	return w, p, nil
}

// IDConnection answers a page of a list paged by id (read) to a caller of
// at least role: its edges, page info and, when typeName's totalCount is
// selected, total.
func IDConnection[R, C, E any](ctx context.Context, role model.Role, first *int64, after *string, last *int64, before *string, typeName string,
	read func(context.Context, int64, store.IDPage, bool) (store.PagedList[R], error),
	id func(R) int64, conv func(R) (*C, error), edge func(cursor string, node *C) E) ([]E, *model.PageInfo, int64, error) {
	p, err := auth.Require(ctx, role)
	if err != nil {
		return nil, nil, 0, err
	}
	w, q, err := idPageOf(typeName, first, after, last, before)
	if err != nil {
		return nil, nil, 0, err
	}
	l, err := read(ctx, p.DataOwnerID, q, selects(ctx, typeName, "totalCount"))
	if err != nil {
		return nil, nil, 0, err
	}
	edges, info, err := idEdges(typeName, l.Rows, w, id, conv, edge)
	return edges, info, l.Total, err
}

// idEdges makes the edges and page info of a page read by idPageOf.
func idEdges[R, C, E any](list string, rows []R, w PageWindow, id func(R) int64, conv func(R) (*C, error),
	edge func(cursor string, node *C) E) ([]E, *model.PageInfo, error) {
	rows, info := cut(rows, w)
	edges := make([]E, len(rows))
	cursors := make([]string, len(rows))
	for i, r := range rows {
		n, err := conv(r)
		if err != nil {
			return nil, nil, err
		}
		cursors[i] = encodeCursor(cursor{Order: list, ID: id(r)})
		edges[i] = edge(cursors[i], n)
	}
	info.StartCursor, info.EndCursor = ends(cursors, func(c string) string { return c })
	return edges, info, nil
}

// Infallible makes a converter that cannot fail one idConnection takes.
func Infallible[R, C any](conv func(R) C) func(R) (*C, error) {
	return func(r R) (*C, error) { return new(conv(r)), nil }
}

// selects tells whether the current field's selection asks for a field of
// the object type typeName.
func selects(ctx context.Context, typeName, field string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{typeName}) {
		if f.Name == field {
			return true
		}
	}
	return false
}

// ClientsConnection reads the page and, when asked for, the total.
func ClientsConnection(ctx context.Context, st *store.Store, ownerID int64, w PageWindow, q store.ClientPageQuery) (*model.ClientConnection, error) {
	rows, total, err := st.ClientPage(ctx, ownerID, q, selects(ctx, "ClientConnection", "totalCount"))
	if err != nil {
		return nil, err
	}
	return clientConnection(rows, w, q, total), nil
}

// anomalyFilterOf parses an anomaly event connection's filter: each list
// of at most maxFilterValues, as a webhook's filters; an empty list
// filters nothing, as gqlgen hands it over as none.
func anomalyFilterOf(in *gqlmodel.AnomalyEventFilter) (store.AnomalyFilter, error) {
	var f store.AnomalyFilter
	if in == nil {
		return f, nil
	}
	fe := apierr.FieldErrors{}
	for _, l := range []struct {
		field string
		in    []string
		dst   *[]string
	}{{"filter.statuses", in.Statuses, &f.Statuses}, {"filter.severities", in.Severities, &f.Severities},
		{"filter.measurementTypes", in.MeasurementTypes, &f.MeasurementTypes}, {"filter.metrics", in.Metrics, &f.Metrics},
		{"filter.detectionPasses", in.DetectionPasses, &f.DetectionPasses}} {
		if len(l.in) > limits.MaxFilterValues {
			fe.Add(l.field, fmt.Sprintf("must have at most %d values", limits.MaxFilterValues))
		}
		if len(l.in) > 0 {
			*l.dst = l.in
		}
	}
	f.Since, f.Until = in.Since, in.Until
	if err := timeRange(f.Since, f.Until); err != nil {
		return f, err
	}
	return f, fe.Err()
}

// timeRange checks a filter's since and until: since before until.
func timeRange(since, until *time.Time) error {
	if since != nil && until != nil && !since.Before(*until) {
		return apierr.Invalid("filter.until", "must be after filter.since")
	}
	return nil
}

// anomalyConnection makes the page of anomaly events read for w (one
// more than its size when there are more).
func anomalyConnection(rows []store.Document, w PageWindow, total int64) *model.AnomalyEventConnection {
	edges, info := pageEdges(anomalyList, rows, w, func(d store.Document) store.PageKey { return store.PageKey{Time: d.CreatedAt, ID: d.ID} },
		func(cur string, d store.Document) model.AnomalyEventEdge {
			return model.AnomalyEventEdge{Cursor: cur, Node: new(AnomalyEventOf(d))}
		})
	return &model.AnomalyEventConnection{Edges: edges, PageInfo: info, TotalCount: total}
}

// AnomalyEventsConnection reads a page of the data owner's anomaly events
// of a, of the clients clientIDs name when given.
func AnomalyEventsConnection(ctx context.Context, st *store.Store, a AnomalyArgs, clientIDs []string) (*model.AnomalyEventConnection, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return nil, err
	}
	w, page, f, err := a.page()
	if err != nil {
		return nil, err
	}
	var uuids []string
	if clientIDs != nil {
		if len(clientIDs) < 1 || len(clientIDs) > limits.MaxConnectionClients {
			return nil, apierr.Invalid("clientIds", fmt.Sprintf("must have 1 to %d entries (leave it out for every client)", limits.MaxConnectionClients))
		}
		if uuids, err = clientUUIDs(ctx, st, p.DataOwnerID, "clientIds", clientIDs); err != nil {
			return nil, err
		}
	}
	l, err := st.AnomalyEventPage(ctx, p.DataOwnerID, uuids, f, page, selects(ctx, anomalyList, "totalCount"))
	if err != nil {
		return nil, err
	}
	return anomalyConnection(l.Rows, w, l.Total), nil
}
