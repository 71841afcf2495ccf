// Package loaders holds the per-request dataloaders (graph-gophers/dataloader/v7)
// behind every nested object and list of the graph, so that a query runs a
// fixed number of SQL statements however many items it returns. Loaders are
// created per request for the caller's data owner and reached through For.
package loaders

import (
	"context"
	"net/http"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// Wait is how long a loader collects keys before it runs its batch.
//
// gqlgen resolves the items of a list concurrently, so the loads of one
// nesting level arrive within microseconds of each other; dataloader's
// default of 16 ms would add 16 ms per nesting level to every query. 2 ms
// keeps a three-level query under 10 ms of batching delay while leaving room
// for a few hundred goroutines to register their keys on a busy 2-core
// machine; large lists additionally prefetch their children in one call (see
// Prefetch), so correctness of the batch count does not hang on the timer.
const Wait = 2 * time.Millisecond

// Loaders are the dataloaders of one request.
type Loaders struct {
	Isp                  *dataloader.Loader[int64, store.Isp]
	ContractsByIsp       *dataloader.Loader[int64, []store.IspContract]
	ContractsByClient    *dataloader.Loader[int64, []store.IspContract]
	IspCounts            *dataloader.Loader[int64, IspCounts]
	Client               *dataloader.Loader[int64, store.Client]
	GroupsByClient       *dataloader.Loader[int64, []store.ClientGroup]
	MembersByGroup       *dataloader.Loader[int64, []int64]
	Capability           *dataloader.Loader[int64, store.Capability]
	RegistrationKey      *dataloader.Loader[int64, store.RegistrationKey]
	KeysByCapability     *dataloader.Loader[int64, []store.RegistrationKey]
	KeyCountByCapability *dataloader.Loader[int64, int64]
	ClientCountByKey     *dataloader.Loader[int64, int64]
	Config               *dataloader.Loader[int64, store.ConfigRef]
	DefaultConfig        *dataloader.Loader[string, *store.ConfigRef]
	DataOwner            *dataloader.Loader[int64, store.DataOwner]
}

// IspCounts are the child counts of one ISP.
type IspCounts struct{ Contracts, Details int64 }

// New builds the loaders of one request of data owner ownerID.
func New(s *store.Store, ownerID int64) *Loaders {
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
		MembersByGroup: newLoader(func(ctx context.Context, ids []int64) []*dataloader.Result[[]int64] {
			ms, err := s.MembersByGroup(ctx, ownerID, ids)
			by := map[int64][]int64{}
			for _, m := range ms {
				by[m.GroupID] = append(by[m.GroupID], m.ClientID)
			}
			return fill(ids, by, err)
		}),
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
		DataOwner: newLoader(func(ctx context.Context, ids []int64) []*dataloader.Result[store.DataOwner] {
			d, err := s.DataOwner(ctx, ownerID)
			return fill(ids, map[int64]store.DataOwner{ownerID: d}, err)
		}),
	}
}

func newLoader[K comparable, V any](fn dataloader.BatchFunc[K, V]) *dataloader.Loader[K, V] {
	return dataloader.NewBatchedLoader(fn, dataloader.WithWait[K, V](Wait))
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
