package resolvers

import (
	"context"
	"fmt"
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

// clientUUIDs answers the UUIDs of the clients visible to the data owner
// that refs (argument field) name by integer id or UUID (an empty list,
// not nil, when none does); a ref that is neither is a field error.
func (r *Resolver) clientUUIDs(ctx context.Context, ownerID int64, field string, refs []string) ([]string, error) {
	var ids []int64
	var uuids []string
	for _, ref := range refs {
		if n, err := strconv.ParseInt(ref, 10, 64); err == nil {
			ids = append(ids, n)
		} else if u, err := uuid.Parse(ref); err == nil {
			uuids = append(uuids, u.String())
		} else {
			return nil, invalid(field, fmt.Sprintf("%q is neither a client id nor a UUID", ref))
		}
	}
	cs, err := store.All(ctx, r.Store, store.ClientsByKeys(ownerID, ids, uuids))
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.UUID
	}
	return out, err
}
