package resolvers

import (
	"context"

	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// deliveredConfigs is, per client, the config of kind it gets: the assigned
// one, else the data owner's default; none for shared clients.
func deliveredConfigs(ctx context.Context, objs []*model.Client, kind string, assigned func(*model.Client) *int64) ([]*model.ConfigRef, error) {
	l := loaders.For(ctx)
	owned := func(c *model.Client) *int64 {
		if c.AccessLevel == model.AccessShared {
			return nil
		}
		return assigned(c)
	}
	out, err := orNil(loadAll(ctx, objs, l.Config, optionalID(owned), func(c store.ConfigRef) *model.ConfigRef { return configRefOf(c) }))
	if err != nil {
		return nil, err
	}
	var def *store.ConfigRef
	loaded := false
	for i, c := range objs {
		if out[i] != nil || c.AccessLevel == model.AccessShared {
			continue
		}
		if !loaded {
			if def, err = l.DefaultConfig.Load(ctx, kind)(); err != nil {
				return nil, err
			}
			loaded = true
		}
		if def != nil {
			out[i] = configRefOf(*def)
		}
	}
	return out, nil
}
