package loaders

import (
	"context"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fleetgraph/fleetgraph/store"
)

// byID builds a batch function that loads one value per key and answers
// store.ErrNotFound for keys the store did not return.
func byID[K comparable, V any](fetch func(context.Context, []K) ([]V, error), id func(V) K) dataloader.BatchFunc[K, V] {
	return func(ctx context.Context, ids []K) []*dataloader.Result[V] {
		vs, err := fetch(ctx, ids)
		by := make(map[K]V, len(vs))
		for _, v := range vs {
			by[id(v)] = v
		}
		out := make([]*dataloader.Result[V], len(ids))
		for i, k := range ids {
			v, ok := by[k]
			switch {
			case err != nil:
				out[i] = &dataloader.Result[V]{Error: err}
			case !ok:
				out[i] = &dataloader.Result[V]{Error: store.ErrNotFound}
			default:
				out[i] = &dataloader.Result[V]{Data: v}
			}
		}
		return out
	}
}

// groupBy builds a batch function that loads the children of each key.
func groupBy[V any](fetch func(context.Context, []int64) ([]V, error), parent func(V) int64) dataloader.BatchFunc[int64, []V] {
	return func(ctx context.Context, ids []int64) []*dataloader.Result[[]V] {
		vs, err := fetch(ctx, ids)
		by := make(map[int64][]V, len(ids))
		for _, v := range vs {
			by[parent(v)] = append(by[parent(v)], v)
		}
		return fill(ids, by, err)
	}
}

// counts builds a batch function over a per-key count query (absent keys count 0).
func counts(fetch func(context.Context, []int64) (map[int64]int64, error)) dataloader.BatchFunc[int64, int64] {
	return func(ctx context.Context, ids []int64) []*dataloader.Result[int64] {
		m, err := fetch(ctx, ids)
		return fill(ids, m, err)
	}
}

// fill answers each key from m (zero value when absent), or err for all.
func fill[K comparable, V any](keys []K, m map[K]V, err error) []*dataloader.Result[V] {
	out := make([]*dataloader.Result[V], len(keys))
	for i, k := range keys {
		out[i] = &dataloader.Result[V]{Data: m[k], Error: err}
	}
	return out
}
