// Package loaders holds the per-request dataloaders (graph-gophers/dataloader/v7)
// of the fields that take arguments, which engine/edges.go cannot attach
// once per parent: Client.measurements, whose pages differ per alias. They
// also carry the operation's measurement budget. Loaders are created per
// request for the caller's data owner and reached through For.
package loaders

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// Wait is how long a loader collects keys before it runs its batch. It is
// a fallback: the edges below a root field fill the page loader for all
// clients of a level with one Fetch (engine/edgetable.go), and the
// measurements resolver is a gqlgen batch resolver that enqueues all sibling
// keys in one pass, so the timer only ends batches whose keys arrive at once.
// dataloader's 16 ms default would add 16 ms to those; 2 ms keeps it small.
const Wait = 2 * time.Millisecond

// Loaders are the dataloaders of one request, each made when the request
// first asks for it (most requests read no measurements).
type Loaders struct {
	store   *store.Store
	ownerID int64
	once    sync.Once
	pages   *Loader[MeasurementPageKey, []store.MeasurementPage]
}

// MeasurementPages loads clients' pages of measurements.
func (l *Loaders) MeasurementPages() *Loader[MeasurementPageKey, []store.MeasurementPage] {
	l.once.Do(func() { l.pages = measurementPages(l.store, l.ownerID) })
	return l.pages
}

// MeasurementPageKey names one client's page of measurements: the client's
// UUID and the page's arguments as PageArgs.Key encodes them, so that the
// keys of equal arguments are equal.
type MeasurementPageKey struct {
	ClientUUID string
	Page       string
}

// MaxMeasurementsPerOperation caps the measurements one GraphQL operation
// may ask for over all its Client.measurements pages (clients × first), as
// Elasticsearch caps a search's window: past it, the pages are refused
// before anything is read.
const MaxMeasurementsPerOperation = 10000

// TooManyMeasurementsError is a page refused by MaxMeasurementsPerOperation.
type TooManyMeasurementsError struct{ Clients, First int }

func (e *TooManyMeasurementsError) Error() string {
	return fmt.Sprintf("the operation asks for more than %d measurements (here %d clients × first %d); "+
		"ask for fewer clients or a smaller first, and page with after", MaxMeasurementsPerOperation, e.Clients, e.First)
}

// PageArgs are the arguments of a page of measurements: the filter and the
// most rows per client (the store's limit).
type PageArgs struct {
	Filter store.MeasurementFilter
	Limit  int
}

// Key encodes a as canonical JSON, its times in UTC.
func (a PageArgs) Key() string {
	for _, t := range []**time.Time{&a.Filter.Since, &a.Filter.Until, &a.Filter.AfterTime} {
		if *t != nil {
			*t = ptr((*t).UTC())
		}
	}
	b, _ := json.Marshal(a) // strings, times and numbers only: cannot fail
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// measurementPages is the page loader of one request of data owner
// ownerID, with the operation's budget of measurement rows.
func measurementPages(s *store.Store, ownerID int64) *Loader[MeasurementPageKey, []store.MeasurementPage] {
	var measurementRows atomic.Int64 // rows the operation's measurement pages may still read
	measurementRows.Store(MaxMeasurementsPerOperation)
	return newLoader(func(ctx context.Context, keys []MeasurementPageKey) []*dataloader.Result[[]store.MeasurementPage] {
		// One statement per distinct page arguments: one, unless a query
		// asks for the measurements of clients with different arguments.
		uuids := map[string][]string{}
		var pages []string
		for _, k := range keys {
			if _, seen := uuids[k.Page]; !seen {
				pages = append(pages, k.Page)
			}
			uuids[k.Page] = append(uuids[k.Page], k.ClientUUID)
		}
		by := map[MeasurementPageKey][]store.MeasurementPage{}
		errs := map[string]error{}
		for _, page := range pages {
			var a PageArgs
			if err := json.Unmarshal([]byte(page), &a); err != nil {
				errs[page] = fmt.Errorf("measurement page arguments %q: %w", page, err)
				continue
			}
			if n := int64(len(uuids[page])) * int64(a.Limit-1); measurementRows.Add(-n) < 0 {
				errs[page] = &TooManyMeasurementsError{Clients: len(uuids[page]), First: a.Limit - 1}
				continue
			}
			rows, err := s.ClientMeasurements(ctx, ownerID, uuids[page], a.Filter, a.Limit)
			if err != nil {
				errs[page] = err
				continue
			}
			for _, m := range rows {
				k := MeasurementPageKey{ClientUUID: m.ClientUUID, Page: page}
				by[k] = append(by[k], m)
			}
		}
		out := make([]*dataloader.Result[[]store.MeasurementPage], len(keys))
		for i, k := range keys {
			out[i] = &dataloader.Result[[]store.MeasurementPage]{Data: by[k], Error: errs[k.Page]}
		}
		return out
	})
}

// Loader is a dataloader that can also be filled ahead of time: Fetch runs
// the batch function once for every key not yet cached and stores the
// results (errors included) in the loader's cache, so later Loads of those
// keys return at once without a batch of their own.
type Loader[K comparable, V any] struct {
	*dataloader.Loader[K, V]
	batch dataloader.BatchFunc[K, V]
	cache *dataloader.InMemoryCache[K, V]
	// fetching serialises Fetch, so that two root fields fetching ahead
	// the same keys at once read them once, not once each.
	fetching sync.Mutex
}

func newLoader[K comparable, V any](fn dataloader.BatchFunc[K, V]) *Loader[K, V] {
	cache := dataloader.NewCache[K, V]()
	return &Loader[K, V]{
		Loader: dataloader.NewBatchedLoader(fn, dataloader.WithWait[K, V](Wait), dataloader.WithCache[K, V](cache)),
		batch:  fn,
		cache:  cache,
	}
}

// Fetch loads every key not yet cached in one call of the batch function.
func (l *Loader[K, V]) Fetch(ctx context.Context, keys []K) {
	l.fetching.Lock()
	defer l.fetching.Unlock()
	var missing []K
	seen := make(map[K]bool, len(keys))
	for _, k := range keys {
		if _, cached := l.cache.Get(ctx, k); !cached && !seen[k] {
			seen[k] = true
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return
	}
	for i, r := range l.batch(ctx, missing) {
		data, err := r.Data, r.Error
		l.cache.Set(ctx, missing[i], func() (V, error) { return data, err })
	}
}

type ctxKey struct{}

// For returns the loaders of the request in ctx.
func For(ctx context.Context) *Loaders {
	l, _ := ctx.Value(ctxKey{}).(*Loaders)
	if l == nil {
		panic("loaders: request context has no loaders; is loaders.Middleware installed?")
	}
	return l
}

// With returns ctx carrying fresh loaders for the authenticated caller.
func With(ctx context.Context, s *store.Store) context.Context {
	p := auth.From(ctx)
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, &Loaders{store: s, ownerID: p.DataOwnerID})
}

// Middleware gives every authenticated request its own loaders.
func Middleware(s *store.Store) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(With(r.Context(), s)))
		})
	}
}
