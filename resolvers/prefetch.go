package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Lookahead makes the statement count of a query independent of its size
// and of goroutine scheduling.
//
// gqlgen resolves list items concurrently and batches a field's siblings,
// but not its cousins (the group lists of 500 clients are 500 lists), so
// timer-based batching alone splits large levels into several batches. A
// root resolver therefore walks the query's selection below the objects it
// returns, level by level: for each selected field it fetches the data of
// all parents of that level with one call of the field's dataloader batch
// function (loaders.Loader.Fetch) and moves on to the children. The field
// resolvers still read everything through the same dataloaders, and find it
// in their caches.

// fieldPlan says how one field of a type is fetched ahead.
type fieldPlan struct {
	// fetch reads what the field needs for all parents, in one statement;
	// args are the field's arguments (defaults applied, variables
	// substituted).
	fetch func(ctx context.Context, l *loaders.Loaders, parents []any, args map[string]any)
	// children returns the objects the field yields for one parent (from the
	// filled cache), for the next level; nil for scalar fields.
	children  func(ctx context.Context, l *loaders.Loaders, parent any, args map[string]any) []any
	childType string
}

var plans map[string]map[string]fieldPlan

func init() {
	plans = buildPlans()
	for typeName, fields := range measurementPlans() {
		if plans[typeName] == nil {
			plans[typeName] = map[string]fieldPlan{}
		}
		for name, plan := range fields {
			plans[typeName][name] = plan
		}
	}
}

// lookahead fetches, level by level, what the current field's selection
// will read below objs, which are of GraphQL type typeName.
func lookahead[T any](ctx context.Context, typeName string, objs []*T) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) || len(objs) == 0 {
		return
	}
	parents := make([]any, len(objs))
	for i, o := range objs {
		parents[i] = o
	}
	fetchLevel(ctx, loaders.For(ctx), typeName, parents, fc.Field.Selections)
}

func fetchLevel(ctx context.Context, l *loaders.Loaders, typeName string, parents []any, sel ast.SelectionSet) {
	if len(parents) == 0 {
		return
	}
	oc := graphql.GetOperationContext(ctx)
	fields := graphql.CollectFields(oc, sel, []string{typeName})
	args := make([]map[string]any, len(fields))
	for i, f := range fields {
		if plan, ok := plans[typeName][f.Name]; ok {
			args[i] = f.ArgumentMap(oc.Variables)
			if plan.fetch != nil {
				plan.fetch(ctx, l, parents, args[i])
			}
		}
	}
	for i, f := range fields {
		plan, ok := plans[typeName][f.Name]
		if !ok || plan.children == nil {
			continue
		}
		var kids []any
		for _, p := range parents {
			kids = append(kids, plan.children(ctx, l, p, args[i])...)
		}
		fetchLevel(ctx, l, plan.childType, kids, f.Selections)
	}
}

// keysOf collects one key per parent (skipping parents without one).
func keysOf[T any](parents []any, key func(*T) (int64, bool)) []int64 {
	out := make([]int64, 0, len(parents))
	for _, p := range parents {
		if k, ok := key(p.(*T)); ok {
			out = append(out, k)
		}
	}
	return out
}

// cached reads a filled value; a failed or missing one yields nothing.
func cached[K comparable, V any](ctx context.Context, l *loaders.Loader[K, V], key K) (V, bool) {
	v, err := l.Load(ctx, key)()
	return v, err == nil
}

func one[T any](v *T) []any {
	if v == nil {
		return nil
	}
	return []any{v}
}

func all[T any](vs []T) []any {
	out := make([]any, len(vs))
	for i := range vs {
		out[i] = &vs[i]
	}
	return out
}

func fetchBy[T, V any](loader func(*loaders.Loaders) *loaders.Loader[int64, V], key func(*T) (int64, bool)) func(context.Context, *loaders.Loaders, []any, map[string]any) {
	return func(ctx context.Context, l *loaders.Loaders, parents []any, _ map[string]any) {
		loader(l).Fetch(ctx, keysOf(parents, key))
	}
}

func buildPlans() map[string]map[string]fieldPlan {
	clientContracts := fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, []store.IspContract] { return l.ContractsByClient }, byID(clientID))
	contractIsp := fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, store.Isp] { return l.Isp }, byID(contractIspID))
	contractClient := fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, store.Client] { return l.Client }, byID(contractClientID))
	ispCounts := func(ctx context.Context, l *loaders.Loaders, parents []any, _ map[string]any) {
		l.IspCounts.Fetch(ctx, keysOf(parents, byID(ispID)))
	}
	return map[string]map[string]fieldPlan{
		"Client": {
			"clientGroups": {
				fetch: fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, []store.ClientGroup] { return l.GroupsByClient }, byID(clientID)),
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					gs, _ := cached(ctx, l.GroupsByClient, p.(*model.Client).ID)
					return all(convertAll(gs, groupOf))
				},
				childType: "ClientGroup",
			},
			"currentIspContract": {fetch: clientContracts, childType: "IspContract",
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					cs, _ := cached(ctx, l.ContractsByClient, p.(*model.Client).ID)
					return one(currentContract(cs))
				}},
			"ispContracts": {fetch: clientContracts, childType: "IspContract",
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					cs, _ := cached(ctx, l.ContractsByClient, p.(*model.Client).ID)
					return all(contractsOf(cs))
				}},
			"registrationKey": {
				fetch: fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, store.RegistrationKey] { return l.RegistrationKey },
					optionalID(func(c *model.Client) *int64 {
						if c.AccessLevel == model.AccessShared {
							return nil
						}
						return c.RegistrationKeyID
					})),
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					c := p.(*model.Client)
					if c.RegistrationKeyID == nil {
						return nil
					}
					k, ok := cached(ctx, l.RegistrationKey, *c.RegistrationKeyID)
					if !ok {
						return nil
					}
					return one(ptr(registrationKeyOf(k)))
				},
				childType: "RegistrationKey",
			},
			"deliveredPublicConfig":    {fetch: fetchConfigs("public", func(c *model.Client) *int64 { return c.Configuration.PublicConfigID })},
			"deliveredAutomatorConfig": {fetch: fetchConfigs("automator", func(c *model.Client) *int64 { return c.Configuration.AutomatorConfigID })},
			"offline": {fetch: func(ctx context.Context, l *loaders.Loaders, _ []any, _ map[string]any) {
				if p := auth.From(ctx); p != nil {
					l.DataOwner.Fetch(ctx, []int64{p.DataOwnerID})
				}
			}},
		},
		"ClientGroup": {
			"clients": {
				fetch: fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, []store.GroupClient] { return l.ClientsByGroup },
					byID(func(g *model.ClientGroup) int64 { return g.ID })),
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					cs, _ := cached(ctx, l.ClientsByGroup, p.(*model.ClientGroup).ID)
					return all(convertAll(cs, func(c store.GroupClient) model.Client { return clientOf(c.Client) }))
				},
				childType: "Client",
			},
		},
		"IspContract": {
			"isp": {fetch: contractIsp, childType: "Isp",
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					i, ok := cached(ctx, l.Isp, p.(*model.IspContract).IspID)
					if !ok {
						return nil
					}
					return one(ptr(ispOf(i)))
				}},
			"ispName":     {fetch: contractIsp},
			"clientUuid":  {fetch: contractClient},
			"clientLabel": {fetch: contractClient},
			"client": {fetch: contractClient, childType: "Client",
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					c, ok := cached(ctx, l.Client, p.(*model.IspContract).ClientID)
					if !ok {
						return nil
					}
					return one(ptr(clientOf(c)))
				}},
		},
		"Isp": {
			"ispContractsCount": {fetch: ispCounts},
			"ispDetailsCount":   {fetch: ispCounts},
			"ispContracts": {
				fetch: fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, []store.IspContract] { return l.ContractsByIsp }, byID(ispID)),
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					cs, _ := cached(ctx, l.ContractsByIsp, p.(*model.Isp).ID)
					return all(contractsOf(cs))
				},
				childType: "IspContract",
			},
		},
		"Capability": {
			"registrationKeysCount": {fetch: func(ctx context.Context, l *loaders.Loaders, parents []any, _ map[string]any) {
				l.KeyCountByCapability.Fetch(ctx, keysOf(parents, byID(capabilityID)))
			}},
			"registrationKeys": {
				fetch: fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, []store.RegistrationKey] { return l.KeysByCapability }, byID(capabilityID)),
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					ks, _ := cached(ctx, l.KeysByCapability, p.(*model.Capability).ID)
					return all(convertAll(ks, registrationKeyOf))
				},
				childType: "RegistrationKey",
			},
		},
		"RegistrationKey": {
			"clientsCount": {fetch: func(ctx context.Context, l *loaders.Loaders, parents []any, _ map[string]any) {
				l.ClientCountByKey.Fetch(ctx, keysOf(parents, byID(registrationKeyID)))
			}},
			"capability": {
				fetch: fetchBy(func(l *loaders.Loaders) *loaders.Loader[int64, store.Capability] { return l.Capability }, byID(keyCapabilityID)),
				children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
					c, ok := cached(ctx, l.Capability, p.(*model.RegistrationKey).CapabilityID)
					if !ok {
						return nil
					}
					return one(ptr(capabilityOf(c)))
				},
				childType: "Capability",
			},
		},
	}
}

// fetchConfigs reads the assigned configs of kind, and the default when
// some owned client has none assigned.
func fetchConfigs(kind string, assigned func(*model.Client) *int64) func(context.Context, *loaders.Loaders, []any, map[string]any) {
	return func(ctx context.Context, l *loaders.Loaders, parents []any, _ map[string]any) {
		var ids []int64
		needDefault := false
		for _, p := range parents {
			c := p.(*model.Client)
			if c.AccessLevel == model.AccessShared {
				continue
			}
			if id := assigned(c); id != nil {
				ids = append(ids, *id)
			} else {
				needDefault = true
			}
		}
		l.Config.Fetch(ctx, ids)
		if needDefault {
			l.DefaultConfig.Fetch(ctx, []string{kind})
		}
	}
}
