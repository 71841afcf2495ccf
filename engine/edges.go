package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// Every nested field of the graph that needs rows of its own is declared
// once, in the table below: how its rows are read for many parents in one
// statement, and how they attach to each parent. After a root field (a
// query or a mutation) resolves, Attach walks the operation's selection
// below its result level by level: for each selected edge it runs the
// edge's load once for all parents of the level, however many lists
// (cousins) they come from, and goes on with the children. gqlgen then
// marshals the attached fields as plain struct reads: no resolver, no
// goroutine, no loader per item.
//
// A selection reaches every depth and every fragment (CollectFields), so a
// field below a root field is always attached. Fields with arguments that
// can be asked for twice with different arguments (Client.measurements)
// stay resolvers; their load fills the per-request loader they read.

// edge is one nested field's declaration.
type edge struct {
	// load reads the field for all parents, queuing its statement on the
	// level's batch (or running it at once), and answers what attaches the
	// rows once the batch has run; nil when the field is already in the
	// parent (a pass-through to the next level).
	load loadFunc
	// shares names the edge whose load this field's data comes from (e.g.
	// clientUuid from client), so that selecting both loads once.
	shares string
	// child is the GraphQL type of the objects the field yields, and
	// children appends them for one parent to dst after load; both empty
	// for leaves.
	child    string
	children func(dst []any, parent any, args map[string]any) []any
	// byID marks a load keyed by the parent's own id alone (and built on
	// queued), which below a root lookup by id is read ahead, in the round
	// trip of the root's own read (readahead.go).
	byID bool
}

type loadFunc func(ctx context.Context, q EdgeQuery, parents []any) (attach func() error, err error)

// EdgeQuery is what a load reads with: the caller's data owner (every
// statement is scoped by it), the field's arguments and the level's batch.
type EdgeQuery struct {
	Store *store.Store
	Owner int64
	args  map[string]any
	batch *store.Batch
	sel   ast.SelectionSet // the field's selection
}

// selects tells whether the field's selection asks for field of its
// object type typeName.
func (q EdgeQuery) selects(ctx context.Context, typeName, field string) bool {
	for _, f := range collectFields(graphql.GetOperationContext(ctx), q.sel, typeName) {
		if f.Name == field {
			return true
		}
	}
	return false
}

// Attacher is the executor extension that attaches the edges below every
// root field's result before it is marshalled, and writes root lists of
// plain objects straight to JSON (render.go).
type Attacher struct {
	Store *store.Store
	// GqlgenMarshalOnly leaves all marshalling to gqlgen (see render.go).
	GqlgenMarshalOnly bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
	graphql.RootFieldInterceptor
} = Attacher{}

// ExtensionName names the extension.
func (Attacher) ExtensionName() string { return "FleetgraphEdges" }

// Validate checks that the table covers the schema: every field that leads
// to objects with edges below them is itself declared (a pass-through at
// least), so that no attached field can be left empty unnoticed; and that
// the objects of every edge read by id can be looked up ahead (lookups).
func (Attacher) Validate(es graphql.ExecutableSchema) error {
	s := es.Schema()
	// In the order of their names, so that the check does the same work
	// and reports the same errors in the same order at every start.
	names := slices.Sorted(maps.Keys(s.Types))
	needs := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, name := range names {
			t := s.Types[name]
			if needs[name] || t.Kind != ast.Object {
				continue
			}
			for _, f := range t.Fields {
				if e, ok := edges[name][f.Name]; (ok && e.load != nil) || needs[f.Type.Name()] {
					needs[name], changed = true, true
					break
				}
			}
		}
	}
	var missing []error
	for _, name := range names {
		t := s.Types[name]
		if t.Kind != ast.Object || name == s.Query.Name || (s.Mutation != nil && name == s.Mutation.Name) || name == federationResolverType {
			continue
		}
		for _, f := range t.Fields {
			if e := edges[name][f.Name]; needs[f.Type.Name()] && e.children == nil {
				missing = append(missing, fmt.Errorf("edges: %s.%s leads to %s, which has edges, but is not declared in engine/edgetable.go",
					name, f.Name, f.Type.Name()))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(edges)) {
		for _, field := range slices.Sorted(maps.Keys(edges[name])) {
			if _, ok := lookups[name]; edges[name][field].byID && !ok {
				missing = append(missing, fmt.Errorf("edges: %s.%s is read by id (byID), but %s has no entry in lookups (engine/readahead.go)", name, field, name))
			}
		}
	}
	return errors.Join(missing...)
}

// federationResolverType is the object type gqlgen's federation plugin
// declares only to generate the entity resolvers' interface: no field
// leads to it, so nothing is ever attached below it (_entities is attached
// by attachEntities).
const federationResolverType = "Entity"

// InterceptField attaches below the results of root fields and passes
// every other field through.
func (a Attacher) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || (fc.Object != "Query" && fc.Object != "Mutation") {
		return next(ctx)
	}
	if fc.Object == "Query" && fc.Field.Name == "_entities" {
		reps, _ := fc.Args["representations"].([]map[string]any)
		if err := checkRepresentations(reps); err != nil {
			return nil, err
		}
		ctx = readClientsAhead(ctx, a.Store, reps)
	}
	ahead, ctx := a.readAhead(ctx, fc)
	res, err := next(ctx)
	if err != nil || res == nil {
		return res, err
	}
	if fc.Object == "Query" && fc.Field.Name == "_entities" { // federation: a list of several types
		return res, a.attachEntities(ctx, res, fc.Field.Selections)
	}
	typeName := fc.Field.Definition.Type.Name()
	if typeName == "Node" {
		if err := a.attachNodes(ctx, objectsOf(res), fc.Field.Selections); err != nil {
			return nil, err
		}
		return res, nil // an interface: never rendered (render.go)
	}
	if _, ok := edges[typeName]; ok {
		parents := objectsOf(res)
		read, attachers := ahead.attached(parents)
		if err := a.attachParts(ctx, []selected{{typeName: typeName, parents: parents, sel: fc.Field.Selections, attached: read}}, attachers); err != nil {
			return nil, err
		}
	}
	if a.GqlgenMarshalOnly {
		return res, nil
	}
	if out, ok := render(ctx, fc, res); ok {
		Rendered.Add(1)
		return out, nil
	}
	return res, nil
}

// attachNodes attaches below the objects of node and nodes (model.Node
// pointers, nil where none) type by type: the GraphQL type of each is the
// name of its Go type (model.GlobalID's types are named alike).
func (a Attacher) attachNodes(ctx context.Context, objs []any, sel ast.SelectionSet) error {
	byType := map[string][]any{}
	var order []string
	for _, o := range objs {
		v := reflect.ValueOf(o)
		if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
			continue
		}
		t := v.Elem().Type().Name()
		if byType[t] == nil {
			order = append(order, t)
		}
		byType[t] = append(byType[t], o)
	}
	for _, t := range order {
		if err := a.Attach(ctx, t, byType[t], sel); err != nil {
			return err
		}
	}
	return nil
}

// objectsOf lists a root result's objects as pointers: the result itself,
// the addresses of a slice's elements, or the pointers a slice of
// interfaces holds.
func objectsOf(res any) []any {
	v := reflect.ValueOf(res)
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return []any{res}
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			if e := v.Index(i); e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
				out[i] = e.Interface()
			} else {
				out[i] = e.Addr().Interface()
			}
		}
		return out
	}
	return nil
}

// Attach loads and attaches, level by level, what sel reads below parents
// (pointers to objects of GraphQL type typeName). The statements of one
// level, whichever fields and types they come from, go to PostgreSQL in one
// round trip.
func (a Attacher) Attach(ctx context.Context, typeName string, parents []any, sel ast.SelectionSet) error {
	return a.attachParts(ctx, []selected{{typeName: typeName, parents: parents, sel: sel}}, nil)
}

// selected is one field's selection below a set of parents of one type: a
// part of a level.
type selected struct {
	typeName string
	parents  []any
	sel      ast.SelectionSet
	attached map[string]bool // edges attached already (read ahead)
}

// attachParts attaches below the parts of a first level (several types:
// federation's _entities), level by level: the edges of every part of a
// level are loaded in one batch and attached, and their children are the
// parts of the next level. ahead attaches the first level's edges read
// ahead (readahead.go) with the others.
func (a Attacher) attachParts(ctx context.Context, level []selected, ahead []func() error) error {
	p := auth.From(ctx)
	if p == nil {
		return nil // the root field refused the caller already
	}
	for len(level) > 0 {
		batch := &store.Batch{}
		l, err := a.queueLevel(ctx, p.DataOwnerID, level, batch, false)
		if err != nil {
			return err
		}
		if err := a.Store.Send(ctx, batch); err != nil {
			return err
		}
		for _, attach := range append(ahead, l.attachers...) {
			if err := attach(); err != nil {
				return err
			}
		}
		ahead, level = nil, nil
		for k, part := range l.parts {
			for i, f := range l.fields[k] {
				if e, ok := edges[part.typeName][f.Name]; ok && e.child != "" {
					if children := childrenOf(part.parents, e, l.args[k][i]); len(children) > 0 && len(f.Selections) > 0 {
						level = append(level, selected{typeName: e.child, parents: children, sel: f.Selections})
					}
				}
			}
		}
	}
	return nil
}

// queuedLevel is a level whose loads are queued: its parts, each part's
// fields and their arguments, and what attaches the rows once the batch
// has run.
type queuedLevel struct {
	parts     []selected
	fields    [][]graphql.CollectedField
	args      [][]map[string]any
	attachers []func() error
	one       struct { // fields and args of a level of one part (most levels): no slices of their own
		fields [1][]graphql.CollectedField
		args   [1][]map[string]any
	}
}

// queueLevel queues the loads of every part of a level on batch, each
// edge once per part (the edges a part has attached already are left
// out). ahead queues only the edges keyed by the parent's id alone that
// take no arguments, and marks them attached in their part: the first
// level of a root lookup, read before the root answers (readahead.go).
func (a Attacher) queueLevel(ctx context.Context, owner int64, level []selected, batch *store.Batch, ahead bool) (*queuedLevel, error) {
	oc := graphql.GetOperationContext(ctx)
	l := &queuedLevel{parts: level}
	if len(level) == 1 {
		l.fields, l.args = l.one.fields[:], l.one.args[:]
	} else {
		l.fields, l.args = make([][]graphql.CollectedField, len(level)), make([][]map[string]any, len(level))
	}
	for k, part := range level {
		if len(part.parents) == 0 || len(part.sel) == 0 {
			continue
		}
		l.fields[k] = collectFields(oc, part.sel, part.typeName)
		l.args[k] = make([]map[string]any, len(l.fields[k]))
		var held [8]string // the edges loaded for this part: a few names, searched in place
		loaded := held[:0]
		for name := range part.attached {
			loaded = append(loaded, name)
		}
		for i, f := range l.fields[k] {
			e, ok := edges[part.typeName][f.Name]
			if !ok {
				continue
			}
			if len(f.Arguments) > 0 || len(f.Definition.Arguments) > 0 { // else no map: no arguments, no defaults
				l.args[k][i] = f.ArgumentMap(oc.Variables)
			}
			name := f.Name
			if e.shares != "" {
				name, e = e.shares, edges[part.typeName][e.shares]
			}
			if e.load == nil || (len(l.args[k][i]) == 0 && slices.Contains(loaded, name)) || (ahead && (!e.byID || len(l.args[k][i]) > 0)) {
				continue
			}
			loaded = append(loaded, name)
			attach, err := e.load(ctx, EdgeQuery{Store: a.Store, Owner: owner, args: l.args[k][i], batch: batch, sel: f.Selections}, part.parents)
			if err != nil {
				return nil, err
			}
			if attach != nil {
				l.attachers = append(l.attachers, attach)
			}
			if ahead {
				part.attached[name] = true
			}
		}
	}
	return l, nil
}

// childrenOf collects the children of all parents, each object once.
func childrenOf(parents []any, e edge, args map[string]any) []any {
	out := make([]any, 0, len(parents))
	seen := make(map[any]bool, len(parents))
	for _, p := range parents {
		n := len(out)
		out = e.children(out, p, args)
		kept := out[:n]
		for _, c := range out[n:] {
			if !seen[c] {
				seen[c] = true
				kept = append(kept, c)
			}
		}
		out = kept
	}
	return out
}

// Declaration helpers. P is the parent's Go type, R a store row, C the
// attached API type.

// keysOf collects the parents' keys, each once.
func keysOf[P any, K comparable](parents []any, key func(*P) (K, bool)) []K {
	out := make([]K, 0, len(parents))
	seen := make(map[K]bool, len(parents))
	for _, p := range parents {
		if k, ok := key(p.(*P)); ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// readFunc is a store read of data owner owner's rows for many keys.
type readFunc[K comparable, R any] func(owner int64, keys []K) store.Read[R]

// queued queues read for the parents' keys on the level's batch; attach
// gets the rows once it has run.
func queued[P any, K comparable, R any](key func(*P) (K, bool), read readFunc[K, R],
	attach func(parents []any, rows []R)) loadFunc {
	return func(_ context.Context, q EdgeQuery, parents []any) (func() error, error) {
		keys := keysOf(parents, key)
		if len(keys) == 0 {
			return nil, nil
		}
		var rows []R
		var err error
		store.Queue(q.batch, read(q.Owner, keys), func(rs []R, e error) { rows, err = rs, e })
		return func() error {
			if err == nil {
				attach(parents, rows)
			}
			return err
		}, nil
	}
}

// hasMany loads, for every parent, the rows whose parentOf is the parent's
// key, converted, and hands them to set (in the rows' order). The children
// of all parents share one array, each parent's a part of it of its own
// capacity (a list per parent grown row by row was most of a list's
// allocations).
func hasMany[P any, K comparable, R, C any](key func(*P) (K, bool), read readFunc[K, R], parentOf func(R) K,
	conv func(R) C, set func(*P, []C)) loadFunc {
	return queued(key, read, func(parents []any, rows []R) {
		n := make(map[K]int, len(parents))
		for _, r := range rows {
			n[parentOf(r)]++
		}
		all := make([]C, len(rows))
		by := make(map[K][]C, len(n))
		at := 0
		for k, m := range n {
			by[k] = all[at : at : at+m]
			at += m
		}
		for _, r := range rows {
			k := parentOf(r)
			by[k] = append(by[k], conv(r))
		}
		for _, p := range parents {
			pp := p.(*P)
			cs := []C{}
			if k, ok := key(pp); ok && by[k] != nil {
				cs = by[k]
			}
			set(pp, cs)
		}
	})
}

// hasOne loads, for every parent with a key, the row of that id (one
// object per row, shared by the parents that reference it) and hands it to
// set; nil when the row is gone.
func hasOne[P any, K comparable, R, C any](key func(*P) (K, bool), read readFunc[K, R], idOf func(R) K,
	conv func(R) C, set func(*P, *C)) loadFunc {
	return queued(key, read, func(parents []any, rows []R) {
		by := make(map[K]*C, len(rows))
		for _, r := range rows {
			c := conv(r)
			by[idOf(r)] = &c
		}
		for _, p := range parents {
			if k, ok := key(p.(*P)); ok {
				set(p.(*P), by[k])
			}
		}
	})
}

// always is the key function of parents that always have a key.
func always[P any, K comparable](id func(*P) K) func(*P) (K, bool) {
	return func(p *P) (K, bool) { return id(p), true }
}

// list yields the elements of an attached list as pointers.
func list[P, C any](get func(*P) []C) func([]any, any, map[string]any) []any {
	return func(dst []any, p any, _ map[string]any) []any {
		cs := get(p.(*P))
		for i := range cs {
			dst = append(dst, &cs[i])
		}
		return dst
	}
}

// single yields an attached object, if any.
func single[P, C any](get func(*P) *C) func([]any, any, map[string]any) []any {
	return func(dst []any, p any, _ map[string]any) []any {
		if c := get(p.(*P)); c != nil {
			return append(dst, c)
		}
		return dst
	}
}
