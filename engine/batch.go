package engine

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"

	"github.com/fleetgraph/fleetgraph/loaders"
)

// Field resolvers that take arguments (Client.measurements) are gqlgen
// batch resolvers: each receives all sibling parents at once and hands
// their keys to a dataloader in one synchronous pass. A parent may be nil:
// gqlgen hands a batch resolver every sibling, and below _entities a
// representation that found nothing is a nil *model.Client among them
// (the field is never marshalled for it, so its result is not read).

// loadAll loads key(parent) for every parent through l and converts each
// value. Parents that are nil or have no key get the zero R. Per-parent failures come back
// as a graphql.BatchErrorList.
func loadAll[P any, K comparable, V, R any](ctx context.Context, objs []*P, l *loaders.Loader[K, V],
	key func(*P) (K, bool), conv func(V) R) ([]R, error) {
	thunks := make(map[K]dataloader.Thunk[V], len(objs))
	for _, o := range objs {
		if o == nil {
			continue
		}
		if k, ok := key(o); ok {
			if _, seen := thunks[k]; !seen {
				thunks[k] = l.Load(ctx, k) // enqueues without waiting
			}
		}
	}
	out := make([]R, len(objs))
	var errs graphql.BatchErrorList
	for i, o := range objs {
		if o == nil {
			continue
		}
		k, ok := key(o)
		if !ok {
			continue
		}
		v, err := thunks[k]()
		if err != nil {
			if errs == nil {
				errs = make(graphql.BatchErrorList, len(objs))
			}
			errs[i] = err
			continue
		}
		out[i] = conv(v)
	}
	if errs != nil {
		return out, errs
	}
	return out, nil
}
