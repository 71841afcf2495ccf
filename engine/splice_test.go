package engine

import (
	"bytes"
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// A spliced answer is the data with each rendered field's JSON at its
// place, and its length says so.
func TestSpliceWritesTheFieldsAtTheirPlaces(t *testing.T) {
	op := &graphql.OperationContext{}
	ctx, s := WithSplice(graphql.WithOperationContext(context.Background(), op), op)
	var data bytes.Buffer
	data.WriteString(`{"clients":`)
	if !s.take(ctx, &data, bytes.NewBufferString(`[{"id":1}]`)) {
		t.Fatal("the data's buffer was not taken")
	}
	data.WriteString(`,"isps":`)
	s.take(ctx, &data, bytes.NewBufferString(`[]`))
	inner := graphql.WithOperationContext(ctx, &graphql.OperationContext{}) // an operation a resolver runs
	if s.take(inner, &bytes.Buffer{}, bytes.NewBufferString(`{}`)) {
		t.Error("a field of another operation was taken")
	}
	data.WriteString(`}`)
	var out bytes.Buffer
	if err := s.WriteTo(&out, data.Bytes()); err != nil {
		t.Fatal(err)
	}
	if want := `{"clients":[{"id":1}],"isps":[]}`; out.String() != want || s.Len(data.Bytes()) != len(want) {
		t.Errorf("spliced %q (length %d), want %q", out.String(), s.Len(data.Bytes()), want)
	}
	if s.Fits([]byte(`{"clients":,"isps":}`)) {
		t.Error("a copy of the data fits")
	}
	s.Release()
	if len(s.parts) != 0 {
		t.Errorf("Release kept %d parts", len(s.parts))
	}
	var none *Splice
	if none.take(ctx, &data, bytes.NewBufferString(`1`)) {
		t.Error("a nil Splice took a field")
	}
	none.Release()
	other := bytes.NewBufferString(`{}`)
	bad := &Splice{parts: []splicePart{{data: other, at: 1, json: bytes.NewBufferString(`1`)}}}
	if err := bad.WriteTo(&out, []byte(`{}`)); err == nil {
		t.Error("fields were spliced into data they were not taken from")
	}
}
