package engine

import (
	"context"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// A root field that looks one object up by its id knows the key of the
// first level's edges before it runs: the edges marked byID read by that
// id. Their statements are queued like any level's (queueLevel), on a
// batch that goes along with the root's own read (store.Rider), so that
// the lookup and its first level are one round trip instead of two. They
// are attached once the root answers the object of that id, with the rest
// of the first level, read as usual; when it answers nothing (unknown
// id, another data owner's: the reads ahead are scoped by the caller's
// data owner like every read, and their rows are dropped) or the root did
// not read (refused before), the whole level is read as usual.

// lookup is how the objects of a type that root fields look up by id are
// keyed: an object with only its id (to key the reads ahead), and the id
// of an object.
type lookup struct {
	placeholder func(id int64) any
	id          func(obj any) int64
}

// lookups are the GraphQL types with edges keyed by the parent's id alone
// (byID): any root query field answering one of them for an "id" argument
// reads their first level ahead (Validate checks that each such type is
// here).
var lookups = map[string]lookup{
	"Client": {placeholder: func(id int64) any { return &model.Client{ID: id} },
		id: func(obj any) int64 { return obj.(*model.Client).ID }},
	"Isp": {placeholder: func(id int64) any { return &model.Isp{ID: id} },
		id: func(obj any) int64 { return obj.(*model.Isp).ID }},
}

// readAhead is the first level of a root lookup, queued to go with it.
type readAhead struct {
	lookup lookup
	id     int64
	rider  store.Rider
	level  *queuedLevel // one part, keyed by the placeholder until the root answers
}

// lookupID is an "id" argument read as a number by the read ahead, carried
// to the lookup's resolver (ClientByRef) so that it reads it once.
type lookupID struct {
	raw string
	id  int64
}

type lookupIDKey struct{}

// readAhead queues the byID edges of fc's selection when fc is a root
// query field answering one object of a type of lookups by a numeric "id"
// (an Int, or an ID that is an integer), and answers ctx carrying them
// (store.WithRider) and the id; nil and ctx otherwise, or when nothing is
// to be read.
func (a Attacher) readAhead(ctx context.Context, fc *graphql.FieldContext) (*readAhead, context.Context) {
	t := fc.Field.Definition.Type
	l, ok := lookups[t.NamedType] // NamedType is empty for a list
	p := auth.From(ctx)
	if !ok || fc.Object != "Query" || p == nil {
		return nil, ctx
	}
	var id int64
	switch arg := fc.Args["id"].(type) {
	case int64:
		id = arg
	case string:
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return nil, ctx // a client's UUID, or nothing to find
		}
		id, ctx = n, context.WithValue(ctx, lookupIDKey{}, lookupID{raw: arg, id: n})
	default:
		return nil, ctx
	}
	ra := &readAhead{lookup: l, id: id}
	part := selected{typeName: t.NamedType, parents: []any{l.placeholder(id)}, sel: fc.Field.Selections, attached: map[string]bool{}}
	level, err := a.queueLevel(ctx, p.DataOwnerID, []selected{part}, ra.rider.Batch(), true)
	if err != nil || len(level.attachers) == 0 {
		return nil, ctx // read as usual
	}
	ra.level = level
	return ra, store.WithRider(ctx, &ra.rider)
}

// attached hands the root's object to what was read ahead, and answers
// the edges read and what attaches them; none when the reads did not go
// or the root answered another object than the one they were keyed by.
func (ra *readAhead) attached(parents []any) (map[string]bool, []func() error) {
	if ra == nil || !ra.rider.Sent() || len(parents) != 1 || ra.lookup.id(parents[0]) != ra.id {
		return nil, nil
	}
	part := ra.level.parts[0]
	part.parents[0] = parents[0] // the loads' attach functions read this slice (queued)
	return part.attached, ra.level.attachers
}
