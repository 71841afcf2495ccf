package engine

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
)

// TestClientReference: a client is named by its integer id or its UUID
// (spaces around it ignored); anything else names no client, with a 404
// that quotes it.
func TestClientReference(t *testing.T) {
	ref, err := ClientRefOf(" 42 ")
	if err != nil || ref.ID == nil || *ref.ID != 42 || ref.UUID != nil {
		t.Fatalf("ClientRefOf(42) = %+v, %v", ref, err)
	}
	ref, err = ClientRefOf("0A1B2C3D-0000-4000-8000-000000000001")
	if err != nil || ref.UUID == nil || *ref.UUID != "0a1b2c3d-0000-4000-8000-000000000001" || ref.ID != nil {
		t.Fatalf("ClientRefOf(uuid) = %+v, %v: want the UUID in its lower-case form", ref, err)
	}
	_, err = ClientRefOf("probe-7")
	if !errors.Is(err, apierr.ErrNotFound) || !strings.Contains(err.Error(), `"probe-7"`) {
		t.Fatalf("ClientRefOf(probe-7) = %v, want a 404 naming it", err)
	}
}

// TestCursors: a cursor reads back as it was made, and one made for
// another order is refused by name.
func TestCursors(t *testing.T) {
	c := encodeCursor(cursor{Order: "ISP_NAME", ID: 7})
	got, err := DecodeCursor("after", c, "ISP_NAME")
	if err != nil || got.ID != 7 {
		t.Fatalf("DecodeCursor = %+v, %v", got, err)
	}
	_, err = DecodeCursor("after", c, "CREATED_AT")
	var ve *apierr.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(strings.Join(ve.Fields["after"], ""), `"ISP_NAME"`) {
		t.Fatalf("a cursor of another order: %v, want the after field naming its order", err)
	}
	if _, err := DecodeCursor("before", "not a cursor", "ISP_NAME"); !errors.As(err, &ve) || ve.Fields["before"] == nil {
		t.Fatalf("garbage: %v, want a field error on before", err)
	}
}

// TestPageWindow: first or last, not both, 1 to 100; 20 when neither.
func TestPageWindow(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	if w, err := PageWindowOf(nil, nil, nil, nil); err != nil || w.Size != 20 || w.FromEnd {
		t.Fatalf("no arguments: %+v, %v", w, err)
	}
	if w, err := PageWindowOf(nil, nil, n(5), nil); err != nil || w.Size != 5 || !w.FromEnd {
		t.Fatalf("last 5: %+v, %v", w, err)
	}
	for _, tc := range []struct {
		first, last *int64
		field       string
	}{{n(0), nil, "first"}, {n(101), nil, "first"}, {nil, n(101), "last"}, {n(1), n(1), "last"}} {
		_, err := PageWindowOf(tc.first, nil, tc.last, nil)
		var ve *apierr.ValidationError
		if !errors.As(err, &ve) || ve.Fields[tc.field] == nil {
			t.Errorf("first %v last %v: %v, want a field error on %s", tc.first, tc.last, err, tc.field)
		}
	}
}

// TestLevelHelpers: the keys of a level's parents are read once each, and
// a child shared by several parents is attached below them once.
func TestLevelHelpers(t *testing.T) {
	a, b, c := &model.Client{ID: 1}, &model.Client{ID: 2}, &model.Client{ID: 1}
	if got := keysOf([]any{a, b, c}, always(clientID)); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("keysOf = %v, want [1 2]", got)
	}
	isp := &model.Isp{ID: 9}
	e := edge{children: func(dst []any, p any, _ map[string]any) []any { return append(dst, isp) }}
	if got := childrenOf([]any{a, b}, e, nil); len(got) != 1 || got[0] != isp {
		t.Fatalf("childrenOf = %v, want the shared ISP once", got)
	}
	if got := objectsOf([]model.Client{{ID: 1}, {ID: 2}}); len(got) != 2 || got[1].(*model.Client).ID != 2 {
		t.Fatalf("objectsOf(slice) = %v, want pointers to its elements", got)
	}
}

// TestFloatsWrittenAsGqlgen: the renderer writes a Float as gqlgen's
// marshaler does, and gives a non-finite one back to it.
func TestFloatsWrittenAsGqlgen(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 12.5, 1.5e-7, 1e-4, 1e-5, 123456, 1234567, 1e20, 1e21, 1e100,
		12345678901234, 0.000123456789, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3, -2.5e-300} {
		var want, got bytes.Buffer
		if err := graphql.MarshalFloatContext(f).MarshalGQLContext(context.Background(), &want); err != nil {
			t.Fatal(err)
		}
		if _, err := writeFloat(&got, reflect.ValueOf(f)); err != nil || got.String() != want.String() {
			t.Errorf("%v written as %q (%v), gqlgen writes %q", f, got.String(), err, want.String())
		}
	}
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		if _, err := writeFloat(&bytes.Buffer{}, reflect.ValueOf(f)); err != errNotPlain {
			t.Errorf("%v: %v, want errNotPlain", f, err)
		}
	}
}
