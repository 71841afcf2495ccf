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

// nodeType reads the objects of one type with global ids: parse checks a
// key of its global ids; read queues the read of the objects of keys and
// answers them by key once the batch has run.
type nodeType struct {
	parse func(key string) bool
	read  func(b *store.Batch, ownerID int64, keys []string) func() (map[string]model.Node, error)
}

// nodeByKey makes the nodeType of a type read by read, keyed by K (an
// integer id or a document's id), parse reading a global id's key.
func nodeByKey[K comparable, R any, C any, PC interface {
	*C
	model.Node
}](parse func(string) (K, bool), read readFunc[K, R], conv func(R) C, keyOf func(R) K) nodeType {
	return nodeType{
		parse: func(key string) bool { _, ok := parse(key); return ok },
		read: func(b *store.Batch, ownerID int64, keys []string) func() (map[string]model.Node, error) {
			ks := make([]K, len(keys))
			for i, k := range keys {
				ks[i], _ = parse(k) // checked by globalRefsOf
			}
			var rows []R
			var err error
			store.Queue(b, read(ownerID, ks), func(rs []R, e error) { rows, err = rs, e })
			return func() (map[string]model.Node, error) {
				out := make(map[string]model.Node, len(rows))
				for _, r := range rows {
					c := conv(r)
					out[fmt.Sprint(keyOf(r))] = PC(&c) // a key as parse read it: GlobalID writes ids so
				}
				return out, err
			}
		},
	}
}

// nodeByID is the nodeType of a type with an integer id.
func nodeByID[R any, C any, PC interface {
	*C
	model.Node
}](read readFunc[int64, R], conv func(R) C, idOf func(R) int64) nodeType {
	return nodeByKey[int64, R, C, PC](model.IntKey, read, conv, idOf)
}

// nodeByDocument is the nodeType of a document kind (keyed by its id).
func nodeByDocument[C any, PC interface {
	*C
	model.Node
}](kind string, conv func(store.Document) C) nodeType {
	return nodeByKey[string, store.Document, C, PC](func(key string) (string, bool) { return key, len(key) <= store.MaxIDLen },
		func(owner int64, ids []string) store.Read[store.Document] {
			return store.DocumentsByIDs(owner, kind, ids)
		},
		conv, func(d store.Document) string { return d.DocID })
}

// nodeTypes are the types with global ids (schema: implements Node).
var nodeTypes = map[string]nodeType{
	"Client":          nodeByID(store.ClientsByIDs, clientOf, func(c store.Client) int64 { return c.ID }),
	"ClientGroup":     nodeByID(store.GroupsByIDs, groupOf, func(g store.ClientGroup) int64 { return g.ID }),
	"Isp":             nodeByID(store.IspsByIDs, ispOf, func(i store.Isp) int64 { return i.ID }),
	"Capability":      nodeByID(store.CapabilitiesByIDs, capabilityOf, func(c store.Capability) int64 { return c.ID }),
	"RegistrationKey": nodeByID(store.RegistrationKeysByIDs, registrationKeyOf, func(k store.RegistrationKey) int64 { return k.ID }),
	"User":            nodeByID(store.UsersByIDs, userOf, func(u store.User) int64 { return u.ID }),
	"Measurement":     nodeByDocument(store.KindMeasurement, measurementOf),
	"AnomalyEvent":    nodeByDocument(store.KindAnomalyEvent, anomalyEventOf),
}

// globalRef is a parsed global id.
type globalRef struct {
	typeName string
	key      string
}

// globalRefsOf parses global ids; field names the argument in errors.
func globalRefsOf(field string, ids []string) ([]globalRef, error) {
	if len(ids) > maxNodes {
		return nil, invalid(field, fmt.Sprintf("must have at most %d entries", maxNodes))
	}
	refs := make([]globalRef, len(ids))
	for i, id := range ids {
		t, key, ok := model.ParseGlobalID(id)
		if nt, known := nodeTypes[t]; !ok || !known || !nt.parse(key) {
			at := field
			if len(ids) > 1 || field == "ids" {
				at = fmt.Sprintf("%s[%d]", field, i)
			}
			return nil, invalid(at, "is not a global id (Node.nodeId)")
		}
		refs[i] = globalRef{t, key}
	}
	return refs, nil
}

// nodes reads the objects of refs in their order; nil where none.
func (r *Resolver) nodes(ctx context.Context, ownerID int64, refs []globalRef) ([]model.Node, error) {
	byType := map[string][]string{}
	for _, ref := range refs {
		byType[ref.typeName] = append(byType[ref.typeName], ref.key)
	}
	batch := &store.Batch{}
	results := map[string]func() (map[string]model.Node, error){}
	for t, ids := range byType {
		results[t] = nodeTypes[t].read(batch, ownerID, ids)
	}
	if err := r.Store.Send(ctx, batch); err != nil {
		return nil, err
	}
	found := map[string]map[string]model.Node{}
	for t, result := range results {
		var err error
		if found[t], err = result(); err != nil {
			return nil, err
		}
	}
	out := make([]model.Node, len(refs))
	for i, ref := range refs {
		out[i] = found[ref.typeName][ref.key] // nil: unknown or another data owner's
	}
	return out, nil
}
