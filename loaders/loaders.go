// Package loaders holds the per-request dataloaders (graph-gophers/dataloader/v7)
// behind every nested object and list of the graph, so that a query runs a
// fixed number of SQL statements however many items it returns. Loaders are
// created per request for the caller's data owner and reached through For.
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

// Wait is how long a loader collects keys before it runs its batch.
//
// It is a fallback, not what keeps the statement count flat: root resolvers
// fetch every level of the query's selection ahead with one batch-function
// call per loader (resolvers/prefetch.go, Loader.Fetch), and field resolvers
// are gqlgen batch resolvers that enqueue all sibling keys in one pass. The
// timer only batches what lookahead does not cover (the objects returned by
// mutations, say), where keys arrive from one goroutine within microseconds.
// dataloader's 16 ms default would add 16 ms per nesting level to those
// queries; 2 ms is enough for that single pass and keeps the delay small.
const Wait = 2 * time.Millisecond

// Loaders are the dataloaders of one request.
type Loaders struct {
	Isp                  *Loader[int64, store.Isp]
	ContractsByIsp       *Loader[int64, []store.IspContract]
	ContractsByClient    *Loader[int64, []store.IspContract]
	IspCounts            *Loader[int64, IspCounts]
	Client               *Loader[int64, store.Client]
	GroupsByClient       *Loader[int64, []store.ClientGroup]
	ClientsByGroup       *Loader[int64, []store.GroupClient]
	Capability           *Loader[int64, store.Capability]
	RegistrationKey      *Loader[int64, store.RegistrationKey]
	KeysByCapability     *Loader[int64, []store.RegistrationKey]
	KeyCountByCapability *Loader[int64, int64]
	ClientCountByKey     *Loader[int64, int64]
	Config               *Loader[int64, store.ConfigRef]
	DefaultConfig        *Loader[string, *store.ConfigRef]
	ReportsByMeasurement *Loader[string, []store.Document]
	MeasurementPages     *Loader[MeasurementPageKey, []store.MeasurementPage]
	ClientByUUID         *Loader[string, store.Client]
	DataOwner            *Loader[int64, store.DataOwner]
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

// IspCounts are the child counts of one ISP.
type IspCounts struct{ Contracts, Details int64 }

// New builds the loaders of one request of data owner ownerID.
func New(s *store.Store, ownerID int64) *Loaders {
	var measurementRows atomic.Int64 // rows the operation's measurement pages may still read
	measurementRows.Store(MaxMeasurementsPerOperation)
	scoped := func(f func(context.Context, int64, []int64) ([]store.Isp, error)) func(context.Context, []int64) ([]store.Isp, error) {
		return func(ctx context.Context, ids []int64) ([]store.Isp, error) { return f(ctx, ownerID, ids) }
	}
	return &Loaders{
		Isp: newLoader(byID(scoped(s.IspsByIDs), func(i store.Isp) int64 { return i.ID })),
		ContractsByIsp: newLoader(groupBy(func(ctx context.Context, ids []int64) ([]store.IspContract, error) {
			return s.ContractsByIsp(ctx, ownerID, ids)
		}, func(c store.IspContract) int64 { return c.IspID })),
		ContractsByClient: newLoader(groupBy(func(ctx context.Context, ids []int64) ([]store.IspContract, error) {
			return s.ContractsByClient(ctx, ownerID, ids)
		}, func(c store.IspContract) int64 { return c.ClientID })),
		IspCounts: newLoader(func(ctx context.Context, ids []int64) []*dataloader.Result[IspCounts] {
			contracts, details, err := s.IspChildCounts(ctx, ownerID, ids)
			out := make([]*dataloader.Result[IspCounts], len(ids))
			for i, id := range ids {
				out[i] = &dataloader.Result[IspCounts]{Data: IspCounts{contracts[id], details[id]}, Error: err}
			}
			return out
		}),
		Client: newLoader(byID(func(ctx context.Context, ids []int64) ([]store.Client, error) {
			return s.ClientsByIDs(ctx, ownerID, ids)
		}, func(c store.Client) int64 { return c.ID })),
		GroupsByClient: newLoader(groupBy(func(ctx context.Context, ids []int64) ([]store.ClientGroup, error) {
			return s.GroupsByClient(ctx, ownerID, ids)
		}, func(g store.ClientGroup) int64 { return g.ClientID })),
		ClientsByGroup: newLoader(groupBy(func(ctx context.Context, ids []int64) ([]store.GroupClient, error) {
			return s.ClientsByGroup(ctx, ownerID, ids)
		}, func(c store.GroupClient) int64 { return c.GroupID })),
		Capability: newLoader(byID(func(ctx context.Context, ids []int64) ([]store.Capability, error) {
			return s.CapabilitiesByIDs(ctx, ownerID, ids)
		}, func(c store.Capability) int64 { return c.ID })),
		RegistrationKey: newLoader(byID(func(ctx context.Context, ids []int64) ([]store.RegistrationKey, error) {
			return s.RegistrationKeysByIDs(ctx, ownerID, ids)
		}, func(k store.RegistrationKey) int64 { return k.ID })),
		KeysByCapability: newLoader(groupBy(func(ctx context.Context, ids []int64) ([]store.RegistrationKey, error) {
			return s.RegistrationKeysByCapability(ctx, ownerID, ids)
		}, func(k store.RegistrationKey) int64 { return k.CapabilityID })),
		KeyCountByCapability: newLoader(counts(func(ctx context.Context, ids []int64) (map[int64]int64, error) {
			return s.CountRegistrationKeys(ctx, ownerID, ids)
		})),
		ClientCountByKey: newLoader(counts(func(ctx context.Context, ids []int64) (map[int64]int64, error) {
			return s.CountClientsByRegistrationKey(ctx, ownerID, ids)
		})),
		Config: newLoader(byID(func(ctx context.Context, ids []int64) ([]store.ConfigRef, error) {
			return s.ConfigsByIDs(ctx, ownerID, ids)
		}, func(c store.ConfigRef) int64 { return c.ID })),
		DefaultConfig: newLoader(func(ctx context.Context, kinds []string) []*dataloader.Result[*store.ConfigRef] {
			cs, err := s.DefaultConfigs(ctx, ownerID)
			by := map[string]*store.ConfigRef{}
			for i := range cs {
				by[cs[i].Kind] = &cs[i]
			}
			return fill(kinds, by, err)
		}),
		ReportsByMeasurement: newLoader(func(ctx context.Context, ids []string) []*dataloader.Result[[]store.Document] {
			ds, err := s.DocumentsByMeasurements(ctx, ownerID, store.KindClientReport, ids)
			by := map[string][]store.Document{}
			for _, d := range ds {
				if d.MeasurementID != nil {
					by[*d.MeasurementID] = append(by[*d.MeasurementID], d)
				}
			}
			return fill(ids, by, err)
		}),
		MeasurementPages: newLoader(func(ctx context.Context, keys []MeasurementPageKey) []*dataloader.Result[[]store.MeasurementPage] {
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
		}),
		ClientByUUID: newLoader(byID(func(ctx context.Context, uuids []string) ([]store.Client, error) {
			return s.ClientsByUUIDs(ctx, ownerID, uuids)
		}, func(c store.Client) string { return c.UUID })),
		DataOwner: newLoader(func(ctx context.Context, ids []int64) []*dataloader.Result[store.DataOwner] {
			d, err := s.DataOwner(ctx, ownerID)
			return fill(ids, map[int64]store.DataOwner{ownerID: d}, err)
		}),
	}
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
	return context.WithValue(ctx, ctxKey{}, New(s, p.DataOwnerID))
}

// Middleware gives every authenticated request its own loaders.
func Middleware(s *store.Store) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(With(r.Context(), s)))
		})
	}
}
