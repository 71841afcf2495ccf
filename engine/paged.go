package engine

import (
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// A connection below a parent that takes arguments (a page size, a
// cursor, a filter: Client.anomalyEvents, Webhook.deliveries, ...) is a
// pagedEdge. Its entry in the edge table reads the page its arguments ask
// for of every parent of a level in one statement (and counts them in
// another when totalCount is asked for), and keeps each parent's page in
// the parent's Connections under the field and the arguments, since each
// alias may ask for another page. The field's batch resolver answers the
// kept page; only where the walk did not attach it (bad arguments, which
// it reports, or a parent no root field's walk reached) does it read the
// pages of its sibling parents itself, in one statement too.

// pagedEdge is one connection field of parent type P with arguments A,
// answering C.
type pagedEdge[P, A, C any] struct {
	field string // the GraphQL field, which keys its pages
	child string // the connection's GraphQL type
	conns func(*P) *model.Connections
	// queue checks the arguments and queues the reads of the parents'
	// pages on q.batch; the function it answers answers each parent's page
	// once the batch has run.
	queue func(ctx context.Context, q EdgeQuery, parents []*P, a A) (func() (func(*P) *C, error), error)
}

// key is the Connections key of a's page.
func (pe pagedEdge[P, A, C]) key(a A) string {
	b, _ := json.Marshal(a) // argument structs: cannot fail
	return pe.field + string(b)
}

// kept answers the page p keeps for key (nil when none).
func (pe pagedEdge[P, A, C]) kept(p *P, key string) *C {
	c, _ := (*pe.conns(p))[key].(*C)
	return c
}

// edge is the edge table's entry of the field.
func (pe pagedEdge[P, A, C]) edge() edge {
	return edge{child: pe.child,
		load: func(ctx context.Context, q EdgeQuery, parents []any) (func() error, error) {
			a, err := argsOf[A](q.args)
			if err != nil {
				return nil, nil // the resolver reports it
			}
			ps := make([]*P, len(parents))
			for i, p := range parents {
				ps[i] = p.(*P)
			}
			done, err := pe.queue(ctx, q, ps, a)
			if err != nil {
				return nil, nil // the resolver reports it
			}
			key := pe.key(a)
			return func() error {
				page, err := done()
				if err != nil {
					return err
				}
				for _, p := range ps {
					cs := pe.conns(p)
					if *cs == nil {
						*cs = model.Connections{}
					}
					(*cs)[key] = page(p)
				}
				return nil
			}, nil
		},
		children: func(dst []any, p any, args map[string]any) []any {
			a, err := argsOf[A](args)
			if err != nil {
				return dst
			}
			if c := pe.kept(p.(*P), pe.key(a)); c != nil {
				return append(dst, c)
			}
			return dst
		}}
}

// Resolve is the field's batch resolver: the pages kept on objs, else
// those of all objs read now.
func (pe pagedEdge[P, A, C]) Resolve(ctx context.Context, s *store.Store, objs []*P, a A) ([]*C, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return nil, err
	}
	key := pe.key(a)
	out := make([]*C, len(objs))
	found := make([]*P, 0, len(objs)) // below _entities, a representation that found nothing is a nil parent
	missing := false
	for i, o := range objs {
		if o == nil {
			continue
		}
		found = append(found, o)
		out[i] = pe.kept(o, key)
		missing = missing || out[i] == nil
	}
	if !missing {
		return out, nil
	}
	b := &store.Batch{}
	done, err := pe.queue(ctx, EdgeQuery{Store: s, Owner: p.DataOwnerID, batch: b, sel: graphql.GetFieldContext(ctx).Field.Selections}, found, a)
	if err != nil {
		return nil, err
	}
	if err := s.Send(ctx, b); err != nil {
		return nil, err
	}
	page, err := done()
	if err != nil {
		return nil, err
	}
	for i, o := range objs {
		if o != nil {
			out[i] = page(o)
		}
	}
	return out, nil
}

// argsOf reads a field's argument map (as the walk has it: literals and
// variables' JSON values) into the arguments struct A, whose fields carry
// the arguments' names as JSON tags.
func argsOf[A any](m map[string]any) (A, error) {
	var a A
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, &a)
	}
	return a, err
}

// PageArgs are a connection's forward paging arguments.
type PageArgs struct {
	First *int64  `json:"first,omitempty"`
	After *string `json:"after,omitempty"`
}

// parentPage checks forward paging arguments of list (the connection's
// type, which its cursors carry): the window and the store's page (one
// row more than the window, to tell whether there are more).
func parentPage(list string, a PageArgs) (PageWindow, store.ParentPage, error) {
	w, err := PageWindowOf(a.First, a.After, nil, nil)
	if err != nil {
		return w, store.ParentPage{}, err
	}
	p := store.ParentPage{Limit: w.Size + 1}
	if a.After != nil {
		c, err := DecodeCursor("after", *a.After, list)
		if err != nil {
			return w, p, err
		}
		p.After = &store.PageKey{Time: c.Time, ID: c.ID}
	}
	return w, p, nil
}

// pageEdges cuts one parent's rows to the window and makes their edges.
func pageEdges[R, E any](list string, rows []R, w PageWindow, key func(R) store.PageKey,
	edge func(cursor string, r R) E) ([]E, *model.PageInfo) {
	rows, info := cut(rows, w)
	edges := make([]E, len(rows))
	cursors := make([]string, len(rows))
	for i, r := range rows {
		k := key(r)
		cursors[i] = encodeCursor(cursor{Order: list, ID: k.ID, Time: k.Time})
		edges[i] = edge(cursors[i], r)
	}
	info.StartCursor, info.EndCursor = ends(cursors, func(c string) string { return c })
	return edges, info
}

// queueRows queues read and answers its rows grouped by parent once the
// batch has run.
func queueRows[K comparable, R any](b *store.Batch, read store.Read[R], parentOf func(R) K) func() (map[K][]R, error) {
	var rows []R
	var err error
	store.Queue(b, read, func(rs []R, e error) { rows, err = rs, e })
	return func() (map[K][]R, error) {
		by := map[K][]R{}
		for _, r := range rows {
			by[parentOf(r)] = append(by[parentOf(r)], r)
		}
		return by, err
	}
}

// queueCounts queues read when want and answers its counts by parent once
// the batch has run (none when not wanted).
func queueCounts[K comparable, R any](b *store.Batch, want bool, read func() store.Read[R], of func(R) (K, int64)) func() (map[K]int64, error) {
	if !want {
		return func() (map[K]int64, error) { return nil, nil }
	}
	var rows []R
	var err error
	store.Queue(b, read(), func(rs []R, e error) { rows, err = rs, e })
	return func() (map[K]int64, error) {
		n := make(map[K]int64, len(rows))
		for _, r := range rows {
			k, c := of(r)
			n[k] = c
		}
		return n, err
	}
}
