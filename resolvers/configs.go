package resolvers

import (
	"context"

	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
)

// deliveredConfig is the config of kind the client gets: the assigned one,
// else the data owner's default; none for shared or unmanaged clients.
func deliveredConfig(ctx context.Context, c *model.Client, kind string, assigned *int64) (*model.ConfigRef, error) {
	if c.AccessLevel == model.AccessShared {
		return nil, nil
	}
	l := loaders.For(ctx)
	if assigned != nil {
		cfg, err := l.Config.Load(ctx, *assigned)()
		if err == nil {
			return configRefOf(cfg), nil
		}
	}
	def, err := l.DefaultConfig.Load(ctx, kind)()
	if err != nil || def == nil {
		return nil, err
	}
	return configRefOf(*def), nil
}
