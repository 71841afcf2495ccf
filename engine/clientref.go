package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/store"
)

// A client is named by its integer id or its UUID (store.ClientRef):
// ParseClientRef is the one reading of such a reference. A root lookup by
// id reads it once: the read ahead of the lookup (readahead.go) reads an
// integer id as it reads every lookup's, and hands it to the resolver
// through the context (ClientByRef).

// ParseClientRef reads a client's integer id or UUID; false when id is
// neither (it names no client).
func ParseClientRef(id string) (store.ClientRef, bool) {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil {
		return store.ClientRef{ID: &n}, true
	}
	if u, err := uuid.Parse(id); err == nil {
		return store.ClientRef{UUID: new(u.String())}, true
	}
	return store.ClientRef{}, false
}

// ClientRefOf parses a client id or UUID (spaces around it ignored);
// anything else names no client.
func ClientRefOf(id string) (store.ClientRef, error) {
	id = strings.TrimSpace(id)
	if ref, ok := ParseClientRef(id); ok {
		return ref, nil
	}
	return store.ClientRef{}, apierr.NotFoundf("client %q not found", id)
}

// ClientByRef loads a client visible to the data owner by its integer id
// or its UUID, as the read ahead read it when it did (readahead.go);
// anything else names no client.
func ClientByRef(ctx context.Context, st *store.Store, ownerID int64, id string) (store.Client, error) {
	if ahead, ok := ctx.Value(lookupIDKey{}).(lookupID); ok && ahead.raw == id {
		return st.Client(ctx, ownerID, ahead.id)
	}
	ref, ok := ParseClientRef(id)
	switch {
	case !ok:
		return store.Client{}, store.ErrNotFound
	case ref.ID != nil:
		return st.Client(ctx, ownerID, *ref.ID)
	}
	return st.ClientByUUID(ctx, ownerID, *ref.UUID)
}

// clientUUIDs answers the UUIDs of the clients visible to the data owner
// that refs (argument field) name by integer id or UUID (an empty list,
// not nil, when none does); a ref that is neither is a field error.
func clientUUIDs(ctx context.Context, st *store.Store, ownerID int64, field string, refs []string) ([]string, error) {
	var ids []int64
	var uuids []string
	for _, raw := range refs {
		ref, ok := ParseClientRef(raw)
		switch {
		case !ok:
			return nil, apierr.Invalid(field, fmt.Sprintf("%q is neither a client id nor a UUID", raw))
		case ref.ID != nil:
			ids = append(ids, *ref.ID)
		default:
			uuids = append(uuids, *ref.UUID)
		}
	}
	cs, err := store.All(ctx, st, store.ClientsByKeys(ownerID, ids, uuids))
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.UUID
	}
	return out, err
}
