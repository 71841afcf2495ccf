package engine

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/plugin/federation/fedruntime"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Apollo Federation entities (schema/federation.graphqls, docs/federation.md).
// A gateway hands fleetgraph representations of its entities by key; each
// entity type's batch resolver reads all of them in one statement scoped by
// the caller's data owner, exactly like the type's root field, and answers
// one object per representation, null where the key is unknown or belongs
// to another data owner (the two are indistinguishable). The edges below
// the entities are attached as below any root field (attachEntities).

// EntitiesByKey reads the objects of keys (in the order of keys, nil where
// none) with read, one statement for all of them.
func EntitiesByKey[K comparable, R, M any](ctx context.Context, st *store.Store, keys []K,
	read func(owner int64, keys []K) store.Read[R], keyOf func(R) K, conv func(R) M) ([]*M, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return nil, err
	}
	distinct := make([]K, 0, len(keys))
	seen := make(map[K]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			distinct = append(distinct, k)
		}
	}
	rows, err := store.All(ctx, st, read(p.DataOwnerID, distinct))
	if err != nil {
		return nil, err
	}
	by := make(map[K]*M, len(rows))
	for _, row := range rows {
		by[keyOf(row)] = new(conv(row))
	}
	out := make([]*M, len(keys))
	for i, k := range keys {
		out[i] = by[k]
	}
	return out, nil
}

// KeysOfReps lists the key of every representation.
func KeysOfReps[T any, K any](reps []*T, key func(*T) K) []K {
	out := make([]K, len(reps))
	for i, rep := range reps {
		out[i] = key(rep)
	}
	return out
}

// DocumentsByID reads documents of kind as entities of type M.
func DocumentsByID[M any](ctx context.Context, st *store.Store, kind string, ids []string, conv func(store.Document) M) ([]*M, error) {
	return EntitiesByKey(ctx, st, ids, func(owner int64, ids []string) store.Read[store.Document] {
		return store.DocumentsByIDs(owner, kind, ids)
	}, func(d store.Document) string { return d.DocID }, conv)
}

// ClientKey is one Client representation's key: its id, or else its UUID.
type ClientKey struct {
	ID   int64
	UUID string // lower case; "" when the representation has an id
}

func clientKeyOf(rep map[string]any) (ClientKey, bool) {
	if v, ok := rep["id"]; ok && v != nil {
		id, err := graphql.UnmarshalInt64(v)
		return ClientKey{ID: id}, err == nil
	}
	if s, ok := rep["uuid"].(string); ok {
		return ClientKey{UUID: ClientUUIDKey(s)}, true
	}
	return ClientKey{}, false
}

// clientsAhead are the clients of one _entities call's Client
// representations, read in one statement before gqlgen resolves the
// representations one by one (FindClientByID, FindClientByUUID): the
// Client entity has a resolver per key, since gqlgen's batch resolver
// would read a batch mixing the keys by the first one's key only.
type clientsAhead struct {
	byID   map[int64]*model.Client
	byUUID map[string]*model.Client
	err    error
}

type clientsAheadKey struct{}

// readClientsAhead reads the clients of reps' Client representations, by
// id or by UUID, in one statement scoped by the caller's data owner, and
// answers ctx carrying them.
func readClientsAhead(ctx context.Context, s *store.Store, reps []map[string]any) context.Context {
	ids, uuids := []int64{}, []string{}
	for _, rep := range reps {
		if rep["__typename"] != "Client" {
			continue
		}
		k, ok := clientKeyOf(rep)
		switch {
		case !ok: // gqlgen reports it
		case k.UUID != "":
			uuids = append(uuids, k.UUID)
		default:
			ids = append(ids, k.ID)
		}
	}
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil || len(ids)+len(uuids) == 0 {
		return ctx // the resolvers report the refusal
	}
	rows, err := store.All(ctx, s, store.ClientsByKeys(p.DataOwnerID, ids, uuids))
	ahead := &clientsAhead{byID: make(map[int64]*model.Client, len(rows)), byUUID: make(map[string]*model.Client, len(rows)), err: err}
	for _, row := range rows {
		c := new(ClientOf(row))
		ahead.byID[row.ID], ahead.byUUID[ClientUUIDKey(row.UUID)] = c, c
	}
	return context.WithValue(ctx, clientsAheadKey{}, ahead)
}

// ClientEntity is the client of k read ahead, or else read alone; nil
// when none is visible to the caller.
func ClientEntity(ctx context.Context, st *store.Store, k ClientKey) (*model.Client, error) {
	ahead, ok := ctx.Value(clientsAheadKey{}).(*clientsAhead)
	if !ok {
		ahead, ok = readClientsAhead(ctx, st, []map[string]any{k.representation()}).Value(clientsAheadKey{}).(*clientsAhead)
	}
	if !ok {
		_, err := auth.Require(ctx, model.RoleViewer)
		return nil, err
	}
	if ahead.err != nil {
		return nil, ahead.err
	}
	if k.UUID != "" {
		return ahead.byUUID[k.UUID], nil
	}
	return ahead.byID[k.ID], nil
}

func (k ClientKey) representation() map[string]any {
	if k.UUID != "" {
		return map[string]any{"__typename": "Client", "uuid": k.UUID}
	}
	return map[string]any{"__typename": "Client", "id": k.ID}
}

// ClientUUIDKey is a client UUID as the store writes it (lower case), so
// that a representation in upper case finds its client.
func ClientUUIDKey(uuid string) string { return strings.ToLower(uuid) }

// attachEntities attaches the edges selected below _entities: its objects
// grouped by type, each group attached as a root list of that type.
func (a Attacher) attachEntities(ctx context.Context, res any, sel ast.SelectionSet) error {
	entities, _ := res.([]fedruntime.Entity)
	byType := map[string][]any{}
	var types []string
	for _, e := range entities {
		v := reflect.ValueOf(e)
		if e == nil || v.Kind() != reflect.Pointer || v.IsNil() {
			continue
		}
		name := v.Elem().Type().Name() // the Go model types carry the GraphQL type names
		if _, ok := byType[name]; !ok {
			types = append(types, name)
		}
		byType[name] = append(byType[name], e)
	}
	var parts []selected
	for _, name := range types {
		if _, ok := edges[name]; ok {
			parts = append(parts, selected{typeName: name, parents: byType[name], sel: sel})
		}
	}
	return a.attachParts(ctx, parts, nil) // one round trip per level for every type
}

// entitySchema is the schema the representations are checked against
// (fixed at compile time: graph's parsed schema).
var entitySchema = graph.NewExecutableSchema(graph.Config{}).Schema()

// checkRepresentations refuses, before anything is read, representations
// that gqlgen's federation code would fail on as internal errors: a
// __typename that is missing or names no entity type (the _Entity union's
// members), or a representation without a key of its type (@key) whose
// values have the key fields' types. The error names each bad
// representation and what is wrong with it.
func checkRepresentations(reps []map[string]any) error {
	fe := apierr.FieldErrors{}
	union := entitySchema.Types["_Entity"]
	for i, rep := range reps {
		field := fmt.Sprintf("representations[%d]", i)
		name, ok := rep["__typename"].(string)
		if !ok {
			fe.Add(field+".__typename", "must be the name of an entity type: one of "+strings.Join(union.Types, ", "))
			continue
		}
		if !slices.Contains(union.Types, name) {
			fe.Add(field+".__typename", fmt.Sprintf("%q is not an entity type: one of %s", name, strings.Join(union.Types, ", ")))
			continue
		}
		if msg := checkKey(entitySchema.Types[name], rep); msg != "" {
			fe.Add(field, msg)
		}
	}
	return fe.Err()
}

// checkKey answers "" when rep holds one of t's keys with values of the key
// fields' types, else what is wrong.
func checkKey(t *ast.Definition, rep map[string]any) string {
	var keys []string
	for _, d := range t.Directives.ForNames("key") {
		fields := d.Arguments.ForName("fields").Value.Raw
		keys = append(keys, fields)
		if keyValid(t, strings.Fields(fields), rep) {
			return ""
		}
	}
	return fmt.Sprintf("holds no key of %s: one of %s, with a non-null value of the field's type", t.Name, strings.Join(keys, ", "))
}

// keyValid tells whether rep has every one of fields, non-null and of its
// type in t (keys of scalar fields: Int, String and ID).
func keyValid(t *ast.Definition, fields []string, rep map[string]any) bool {
	for _, f := range fields {
		v, def := rep[f], t.Fields.ForName(f)
		if v == nil || def == nil {
			return false
		}
		var err error
		switch def.Type.Name() {
		case "Int":
			_, err = graphql.UnmarshalInt64(v)
		case "ID":
			_, err = graphql.UnmarshalID(v)
		default:
			_, err = graphql.UnmarshalString(v)
		}
		if err != nil {
			return false
		}
	}
	return true
}
