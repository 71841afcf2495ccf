package engine

import (
	"context"
	"fmt"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Global object identification: node(id:) and nodes(ids:) read the objects
// of global ids (model.GlobalID) with the same scoped reads the edges use,
// the ids of one type in one statement, all types in one round trip. An id
// of another data owner reads no row: null, like an unknown one.

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
}](parse func(string) (K, bool), read readFunc[K, R], conv func(R) (*C, error), keyOf func(R) K) nodeType {
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
				if err != nil {
					return nil, err
				}
				out := make(map[string]model.Node, len(rows))
				for _, r := range rows {
					c, err := conv(r)
					if err != nil {
						return nil, err
					}
					out[fmt.Sprint(keyOf(r))] = PC(c) // a key as parse read it: GlobalID writes ids so
				}
				return out, nil
			}
		},
	}
}

// nodeByID is the nodeType of a type with an integer id.
func nodeByID[R any, C any, PC interface {
	*C
	model.Node
}](read readFunc[int64, R], conv func(R) C, idOf func(R) int64) nodeType {
	return nodeByKey[int64, R, C, PC](model.IntKey, read, Infallible(conv), idOf)
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
		Infallible(conv), func(d store.Document) string { return d.DocID })
}

// nodeTypes are the types with global ids (schema: implements Node). It
// is made per call, not a table of the package, because a webhook is
// converted with r's Sealer (its headers are sealed); the readers are a
// few closures, nothing is read until a batch runs.
func nodeTypes(webhookOf func(store.WebhookEndpoint) (*model.Webhook, error)) map[string]nodeType {
	return map[string]nodeType{
		"Client":          nodeByID(store.ClientsByIDs, ClientOf, func(c store.Client) int64 { return c.ID }),
		"ClientGroup":     nodeByID(store.GroupsByIDs, GroupOf, func(g store.ClientGroup) int64 { return g.ID }),
		"Isp":             nodeByID(store.IspsByIDs, IspOf, func(i store.Isp) int64 { return i.ID }),
		"Capability":      nodeByID(store.CapabilitiesByIDs, CapabilityOf, func(c store.Capability) int64 { return c.ID }),
		"RegistrationKey": nodeByID(store.RegistrationKeysByIDs, RegistrationKeyOf, func(k store.RegistrationKey) int64 { return k.ID }),
		"User":            nodeByID(store.UsersByIDs, UserOf, func(u store.User) int64 { return u.ID }),
		"Webhook":         nodeByKey(model.IntKey, store.WebhooksByIDs, webhookOf, func(w store.WebhookEndpoint) int64 { return w.ID }),
		"Measurement":     nodeByDocument(vocab.KindMeasurement, MeasurementOf),
		"AnomalyEvent":    nodeByDocument(vocab.KindAnomalyEvent, AnomalyEventOf),
	}
}

// globalRef is a parsed global id.
type globalRef struct {
	typeName string
	key      string
}

// globalRefsOf parses global ids of the node types given; field names the
// argument in errors.
func globalRefsOf(types map[string]nodeType, field string, ids []string) ([]globalRef, error) {
	if len(ids) > limits.MaxNodes {
		return nil, apierr.Invalid(field, fmt.Sprintf("must have at most %d entries", limits.MaxNodes))
	}
	refs := make([]globalRef, len(ids))
	for i, id := range ids {
		t, key, ok := model.ParseGlobalID(id)
		if nt, known := types[t]; !ok || !known || !nt.parse(key) {
			at := field
			if len(ids) > 1 || field == "ids" {
				at = fmt.Sprintf("%s[%d]", field, i)
			}
			return nil, apierr.Invalid(at, "is not a global id (Node.nodeId)")
		}
		refs[i] = globalRef{t, key}
	}
	return refs, nil
}

// Nodes reads the objects of the global ids in their order, nil where
// none; field names the argument in errors.
func Nodes(ctx context.Context, st *store.Store, webhookOf func(store.WebhookEndpoint) (*model.Webhook, error), ownerID int64, field string, ids []string) ([]model.Node, error) {
	types := nodeTypes(webhookOf)
	refs, err := globalRefsOf(types, field, ids)
	if err != nil {
		return nil, err
	}
	byType := map[string][]string{}
	for _, ref := range refs {
		byType[ref.typeName] = append(byType[ref.typeName], ref.key)
	}
	batch := &store.Batch{}
	results := map[string]func() (map[string]model.Node, error){}
	for t, keys := range byType {
		results[t] = types[t].read(batch, ownerID, keys)
	}
	if err := st.Send(ctx, batch); err != nil {
		return nil, err
	}
	found := map[string]map[string]model.Node{}
	for t, result := range results {
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
