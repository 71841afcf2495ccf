package resolvers

import (
	"context"
	"fmt"

	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Global object identification: node(id:) and nodes(ids:) read the objects
// of global ids (model.GlobalID) with the same scoped reads the edges use,
// the ids of one type in one statement, all types in one round trip. An id
// of another data owner reads no row: null, like an unknown one.

// maxNodes bounds nodes(ids:).
const maxNodes = 100

// nodeRead queues the read of one type's objects by id and answers them
// by id once the batch has run.
type nodeRead func(b *store.Batch, ownerID int64, ids []int64) func() (map[int64]model.Node, error)

// nodeByID queues read and converts its rows.
func nodeByID[R any, C any, PC interface {
	*C
	model.Node
}](read readFunc[int64, R], conv func(R) C, idOf func(R) int64) nodeRead {
	return func(b *store.Batch, ownerID int64, ids []int64) func() (map[int64]model.Node, error) {
		var rows []R
		var err error
		store.Queue(b, read(ownerID, ids), func(rs []R, e error) { rows, err = rs, e })
		return func() (map[int64]model.Node, error) {
			out := make(map[int64]model.Node, len(rows))
			for _, r := range rows {
				c := conv(r)
				out[idOf(r)] = PC(&c)
			}
			return out, err
		}
	}
}

// nodeTypes are the types with global ids (schema: implements Node).
var nodeTypes = map[string]nodeRead{
	"Client":          nodeByID(store.ClientsByIDs, clientOf, func(c store.Client) int64 { return c.ID }),
	"ClientGroup":     nodeByID(store.GroupsByIDs, groupOf, func(g store.ClientGroup) int64 { return g.ID }),
	"Isp":             nodeByID(store.IspsByIDs, ispOf, func(i store.Isp) int64 { return i.ID }),
	"Capability":      nodeByID(store.CapabilitiesByIDs, capabilityOf, func(c store.Capability) int64 { return c.ID }),
	"RegistrationKey": nodeByID(store.RegistrationKeysByIDs, registrationKeyOf, func(k store.RegistrationKey) int64 { return k.ID }),
	"User":            nodeByID(store.UsersByIDs, userOf, func(u store.User) int64 { return u.ID }),
}

// globalRef is a parsed global id.
type globalRef struct {
	typeName string
	id       int64
}

// globalRefsOf parses global ids; field names the argument in errors.
func globalRefsOf(field string, ids []string) ([]globalRef, error) {
	if len(ids) > maxNodes {
		return nil, invalid(field, fmt.Sprintf("must have at most %d entries", maxNodes))
	}
	refs := make([]globalRef, len(ids))
	for i, id := range ids {
		t, n, ok := model.ParseGlobalID(id)
		if _, known := nodeTypes[t]; !ok || !known {
			at := field
			if len(ids) > 1 || field == "ids" {
				at = fmt.Sprintf("%s[%d]", field, i)
			}
			return nil, invalid(at, "is not a global id (Node.nodeId)")
		}
		refs[i] = globalRef{t, n}
	}
	return refs, nil
}

// nodes reads the objects of refs in their order; nil where none.
func (r *Resolver) nodes(ctx context.Context, ownerID int64, refs []globalRef) ([]model.Node, error) {
	byType := map[string][]int64{}
	for _, ref := range refs {
		byType[ref.typeName] = append(byType[ref.typeName], ref.id)
	}
	batch := &store.Batch{}
	results := map[string]func() (map[int64]model.Node, error){}
	for t, ids := range byType {
		results[t] = nodeTypes[t](batch, ownerID, ids)
	}
	if err := r.Store.Send(ctx, batch); err != nil {
		return nil, err
	}
	found := map[string]map[int64]model.Node{}
	for t, result := range results {
		var err error
		if found[t], err = result(); err != nil {
			return nil, err
		}
	}
	out := make([]model.Node, len(refs))
	for i, ref := range refs {
		out[i] = found[ref.typeName][ref.id] // nil: unknown or another data owner's
	}
	return out, nil
}
