package resolvers

import (
	"context"
	"strconv"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/store"
)

// clientByRef loads a client visible to the data owner by its integer id
// or its UUID; anything else names no client.
func (r *Resolver) clientByRef(ctx context.Context, ownerID int64, id string) (store.Client, error) {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil {
		return r.Store.Client(ctx, ownerID, n)
	}
	if u, err := uuid.Parse(id); err == nil {
		return r.Store.ClientByUUID(ctx, ownerID, u.String())
	}
	return store.Client{}, store.ErrNotFound
}
