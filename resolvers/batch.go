package resolvers

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"

	"github.com/fleetgraph/fleetgraph/loaders"

	"github.com/fleetgraph/fleetgraph/store"
)

// Field resolvers are gqlgen batch resolvers: each receives all sibling
// parents at once and hands their keys to a dataloader in one synchronous
// pass, so one level of a query costs one batch per loader however many
// items it has, independently of goroutine scheduling.

// loadAll loads key(parent) for every parent through l and converts each
// value. Parents without a key get the zero R. Per-parent failures come back
// as a graphql.BatchErrorList.
func loadAll[P any, K comparable, V, R any](ctx context.Context, objs []*P, l *loaders.Loader[K, V],
	key func(*P) (K, bool), conv func(V) R) ([]R, error) {
	thunks := make(map[K]dataloader.Thunk[V], len(objs))
	for _, o := range objs {
		if k, ok := key(o); ok {
			if _, seen := thunks[k]; !seen {
				thunks[k] = l.Load(ctx, k) // enqueues without waiting
			}
		}
	}
	out := make([]R, len(objs))
	var errs graphql.BatchErrorList
	for i, o := range objs {
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

// byID is the key function of parents that always have one.
func byID[P any](id func(*P) int64) func(*P) (int64, bool) {
	return func(p *P) (int64, bool) { return id(p), true }
}

// optionalID is the key function of parents with an optional reference.
func optionalID[P any](id func(*P) *int64) func(*P) (int64, bool) {
	return func(p *P) (int64, bool) {
		if v := id(p); v != nil {
			return *v, true
		}
		return 0, false
	}
}

// orNil turns per-parent "not found" failures into nil results: a reference
// to a record deleted since is no reference.
func orNil[R any](out []R, err error) ([]R, error) {
	var list graphql.BatchErrorList
	if !errors.As(err, &list) {
		return out, err
	}
	for i, e := range list {
		if errors.Is(e, store.ErrNotFound) {
			list[i] = nil
		}
	}
	if list.Unwrap() == nil {
		return out, nil
	}
	return out, list
}

func identity[V any](v V) V { return v }

// prime seeds a per-id loader with rows a list query already read, so
// nested fields that reach the same rows cost no further statements.
func prime[K comparable, V any](ctx context.Context, l *loaders.Loader[K, V], rows []V, key func(V) K) {
	for _, v := range rows {
		l.Prime(ctx, key(v), v)
	}
}

func pointers[T any](vs []T) []*T {
	out := make([]*T, len(vs))
	for i := range vs {
		out[i] = &vs[i]
	}
	return out
}
