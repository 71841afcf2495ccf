package engine

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// A root field that looks one object up by its id knows the key of the
// first level's edges before it runs: the edges marked byID read by that
// id. Their statements go along with the root's own read (store.Rider), so
// that the lookup and its first level are one round trip instead of two.
// They are attached once the root answers the object of that id; when it
// answers nothing (unknown id, another data owner's: the reads ahead are
// scoped by the caller's data owner like every read, and their rows are
// dropped) or the root did not read (refused before), the level is read as
// usual.

// lookup is a root field answering one object by its numeric "id".
type lookup struct {
	placeholder func(id int64) any // an object of the type with only its id, to key the reads ahead
	id          func(obj any) int64
}

// lookups are the root lookups by id whose first level is read ahead.
var lookups = map[string]lookup{
	"client": {placeholder: func(id int64) any { return &model.Client{ID: id} },
		id: func(obj any) int64 { return obj.(*model.Client).ID }},
}

// readAhead is the first level of a root lookup, queued to go with it.
type readAhead struct {
	lookup    lookup
	id        int64
	rider     store.Rider
	parents   []any           // the placeholder until the root answers; then its object
	read      map[string]bool // the edges read ahead
	attachers []func() error
	// parsed is the id as the lookup's resolver reads it (clientref.go).
	parsed parsedRef
}

// readAhead queues the byID edges of fc's selection when fc is a root
// lookup by a numeric id (nil otherwise, or when nothing is to be read).
func (a Attacher) readAhead(ctx context.Context, fc *graphql.FieldContext) *readAhead {
	l, ok := lookups[fc.Field.Name]
	p := auth.From(ctx)
	if !ok || fc.Object != "Query" || p == nil {
		return nil
	}
	arg, _ := fc.Args["id"].(string)
	ref, ok := ParseClientRef(arg)
	if !ok || ref.ID == nil {
		return nil // a uuid, or nothing to find
	}
	id := *ref.ID
	typeName := fc.Field.Definition.Type.Name()
	ra := &readAhead{lookup: l, id: id, parsed: parsedRef{raw: arg, ref: ref, ok: true}, parents: []any{l.placeholder(id)}, read: map[string]bool{}}
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, []string{typeName}) {
		name := f.Name
		e, ok := edges[typeName][name]
		if ok && e.shares != "" {
			name, e = e.shares, edges[typeName][e.shares]
		}
		if !ok || !e.byID || e.load == nil || ra.read[name] || len(f.Arguments) > 0 {
			continue
		}
		attach, err := e.load(ctx, EdgeQuery{Store: a.Store, Owner: p.DataOwnerID, batch: ra.rider.Batch()}, ra.parents)
		if err != nil {
			return nil // read as usual
		}
		ra.read[name] = true
		if attach != nil {
			ra.attachers = append(ra.attachers, attach)
		}
	}
	if len(ra.attachers) == 0 {
		return nil
	}
	return ra
}

// Attach attaches what was read ahead to the root's object and answers
// the edges it attached; none when the reads did not go or the root
// answered another object than the one they were keyed by.
func (ra *readAhead) attach(parents []any) (map[string]bool, error) {
	if ra == nil || !ra.rider.Sent() || len(parents) != 1 || ra.lookup.id(parents[0]) != ra.id {
		return nil, nil
	}
	ra.parents[0] = parents[0] // the loads' attach functions read this slice (queued)
	for _, attach := range ra.attachers {
		if err := attach(); err != nil {
			return nil, err
		}
	}
	return ra.read, nil
}
