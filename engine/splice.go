package engine

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
)

// Spliced counts the root fields written through a Splice (for tests).
var Spliced atomic.Int64

// A Splice lets a transport write a rendered root field's JSON from the
// render buffer itself rather than from gqlgen's copy of it: gqlgen's
// executor marshals the answer's data into a buffer of its own, which for
// a 2,000-client list is a second copy of a few MB for every request in
// flight (issue 28: the REST list's peak RSS). Under a context with a
// Splice, a rendered root field writes nothing into that data and the
// Splice remembers the byte offset of its place and its JSON; the
// transport then writes the data with each field's JSON put back at its
// place (WriteTo), byte for byte what gqlgen's data would have been.
//
// Only a transport that writes the data as it is, unchanged, may ask for
// a Splice: anything that reads or reshapes the data would find the
// rendered fields missing.
type Splice struct {
	op    *graphql.OperationContext
	parts []splicePart
}

type splicePart struct {
	data *bytes.Buffer // the data the field's place is in
	at   int           // its offset there
	json *bytes.Buffer
}

type spliceKey struct{}

// WithSplice makes the root fields of op rendered under ctx leave their
// JSON in the returned Splice. Operations that op's resolvers run
// themselves (the assistant's tools) write their fields as usual.
func WithSplice(ctx context.Context, op *graphql.OperationContext) (context.Context, *Splice) {
	s := &Splice{op: op}
	return context.WithValue(ctx, spliceKey{}, s), s
}

// take records json at the end of w when w is the data of s's operation
// (whose root field ctx is).
func (s *Splice) take(ctx context.Context, w io.Writer, json *bytes.Buffer) bool {
	b, ok := w.(*bytes.Buffer)
	if s == nil || !ok || !graphql.HasOperationContext(ctx) || graphql.GetOperationContext(ctx) != s.op {
		return false
	}
	s.parts = append(s.parts, splicePart{data: b, at: b.Len(), json: json})
	Spliced.Add(1)
	return true
}

// Fits reports whether data is the data s's places are in (gqlgen's
// answer to s's operation): if not, writing it would lose the fields.
func (s *Splice) Fits(data []byte) bool {
	for _, p := range s.parts {
		d := p.data.Bytes()
		if len(d) != len(data) || len(d) == 0 || &d[0] != &data[0] || p.at > len(data) {
			return false
		}
	}
	return true
}

// Len is the length of data with the spliced JSON.
func (s *Splice) Len(data []byte) int {
	n := len(data)
	for _, p := range s.parts {
		n += p.json.Len()
	}
	return n
}

// WriteTo writes data with the spliced JSON at its places.
func (s *Splice) WriteTo(w io.Writer, data []byte) error {
	if !s.Fits(data) {
		return errBadSplice
	}
	at := 0
	for _, p := range s.parts {
		if _, err := w.Write(data[at:p.at]); err != nil {
			return err
		}
		if _, err := w.Write(p.json.Bytes()); err != nil {
			return err
		}
		at = p.at
	}
	_, err := w.Write(data[at:])
	return err
}

// Release gives the render buffers back; s is empty afterwards. A nil
// Splice releases nothing.
func (s *Splice) Release() {
	if s == nil {
		return
	}
	for _, p := range s.parts {
		buffers.Put(p.json)
	}
	s.parts = nil
}
