package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/respond"
)

// saturated is where the counts of a shape stop growing: fragments that
// spread others twice per level double at each one.
const saturated = 1 << 40

// inputLimits is the gqlgen extension that refuses documents over the
// limits of a GraphQL document (limits.GraphQL) before they are parsed for
// execution and validated: validation is not cancelled when the client
// leaves, and some of its rules cost the square of what they compare (the
// field-merge check emits one error per conflicting pair of fields). Accepted documents
// are remembered, as gqlgen's query cache remembers them parsed.
type inputLimits struct {
	limits   limits.GraphQL
	accepted *lru.LRU[struct{}]
}

var (
	_ graphql.HandlerExtension          = inputLimits{}
	_ graphql.OperationParameterMutator = inputLimits{}
)

func newInputLimits(l limits.GraphQL) inputLimits {
	return inputLimits{limits: l, accepted: lru.New[struct{}](limits.DocumentsKept)}
}

func (inputLimits) ExtensionName() string { return "InputLimits" }

func (inputLimits) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters refuses params' document when it is over a
// limit. A document that does not lex or parse is left to gqlgen, which
// reports the syntax error as it always has.
func (x inputLimits) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if _, ok := x.accepted.Get(ctx, params.Query); ok {
		return nil
	}
	src := &ast.Source{Input: params.Query}
	if n, ok := countTokens(src, x.limits.Tokens); !ok {
		return limitError("tokens", x.limits.Tokens, "the document has more than %d tokens; the limit is %d", n-1, x.limits.Tokens)
	}
	doc, err := parser.ParseQuery(src)
	if err != nil {
		return nil
	}
	if err := x.check(doc); err != nil {
		return err
	}
	x.accepted.Add(ctx, params.Query, struct{}{})
	return nil
}

// countTokens counts src's tokens up to max+1; ok is false past max. A
// lexical error ends the count (the parser reports it).
func countTokens(src *ast.Source, max int) (n int, ok bool) {
	lx := lexer.New(src)
	for n <= max {
		tok, err := lx.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return n, true
		}
		n++
	}
	return n, false
}

// limitError is a validation error naming the limit it is over
// (extensions.limit, extensions.max).
func limitError(limit string, max int, format string, args ...any) *gqlerror.Error {
	err := validationError(format, args...)
	err.Extensions["limit"] = limit
	err.Extensions["max"] = max
	return err
}

// validationError is an error of the document, as gqlgen's validator
// reports them (a 422).
func validationError(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	errcode.Set(err, errcode.ValidationFailed)
	return err
}

// check measures every operation of doc (gqlgen validates them all, not
// only the one to run) and refuses fragments no operation uses, as the
// validator would, so that every fragment is measured within one.
func (x inputLimits) check(doc *ast.QueryDocument) *gqlerror.Error {
	w := &shapeWalker{doc: doc, limits: x.limits, memo: map[string]*shape{}}
	for _, op := range doc.Operations {
		s := w.operation(op)
		if w.err != nil {
			return w.err
		}
		if err := x.checkShape(s, op); err != nil {
			return err
		}
		if err := w.checkResponseKeys(op.SelectionSet); err != nil {
			return err
		}
	}
	for _, f := range doc.Fragments {
		if _, used := w.memo[f.Name]; !used {
			return validationError("Fragment %q is never used.", f.Name)
		}
	}
	return nil
}

// checkShape compares one operation's measures with the limits.
func (x inputLimits) checkShape(s shape, op *ast.OperationDefinition) *gqlerror.Error {
	l := x.limits
	switch {
	case s.depth > l.Depth:
		return limitError("depth", l.Depth, "the operation nests fields %d levels deep; the limit is %d", s.depth, l.Depth)
	case s.spreads > l.FragmentSpreads:
		return limitError("fragmentSpreads", l.FragmentSpreads,
			"the operation spreads fragments %s times once they are expanded; the limit is %d", count(s.spreads), l.FragmentSpreads)
	case s.fields > l.Fields:
		return limitError("fields", l.Fields,
			"the operation selects %s fields once its fragments are expanded; the limit is %d", count(s.fields), l.Fields)
	case s.aliases > l.Aliases:
		return limitError("aliases", l.Aliases, "the operation has %s aliased fields; the limit is %d", count(s.aliases), l.Aliases)
	case op.Operation == ast.Mutation && s.top > l.Mutations:
		return limitError("mutations", l.Mutations, "the operation has %s mutation fields; the limit is %d per operation", count(s.top), l.Mutations)
	}
	return nil
}

// count prints a measure, saturated ones as "more than …".
func count(n int) string {
	if n >= saturated {
		return fmt.Sprintf("more than %d", saturated)
	}
	return fmt.Sprint(n)
}

// shape is what a selection set asks for, its fragments expanded.
type shape struct {
	fields, aliases, spreads int
	top                      int // fields at the set's own level (through inline fragments and spreads)
	depth                    int
}

func (s *shape) add(o shape) {
	s.fields = min(s.fields+o.fields, saturated)
	s.aliases = min(s.aliases+o.aliases, saturated)
	s.spreads = min(s.spreads+o.spreads, saturated)
	s.top = min(s.top+o.top, saturated)
	s.depth = max(s.depth, o.depth)
}

// shapeWalker measures selection sets, each fragment once (memo), so a
// document's cost is linear in its size however its fragments multiply.
type shapeWalker struct {
	doc    *ast.QueryDocument
	limits limits.GraphQL
	memo   map[string]*shape // nil while the fragment is being measured
	err    *gqlerror.Error
}

func (w *shapeWalker) operation(op *ast.OperationDefinition) shape {
	for _, v := range op.VariableDefinitions {
		w.value(v.DefaultValue)
	}
	w.directives(op.Directives)
	return w.selectionSet(op.SelectionSet)
}

func (w *shapeWalker) selectionSet(set ast.SelectionSet) shape {
	var s shape
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			for _, a := range sel.Arguments {
				w.value(a.Value)
			}
			w.directives(sel.Directives)
			child := w.selectionSet(sel.SelectionSet)
			child.depth++
			child.top = 1
			child.fields = min(child.fields+1, saturated)
			if sel.Alias != "" && sel.Alias != sel.Name {
				child.aliases = min(child.aliases+1, saturated)
			}
			s.add(child)
		case *ast.InlineFragment:
			w.directives(sel.Directives)
			s.add(w.selectionSet(sel.SelectionSet))
		case *ast.FragmentSpread:
			w.directives(sel.Directives)
			f := w.fragment(sel.Name)
			f.spreads = min(f.spreads+1, saturated)
			s.add(f)
		}
	}
	return s
}

// fragment measures a named fragment once. A fragment spread within
// itself is refused here (the validator refuses it too).
func (w *shapeWalker) fragment(name string) shape {
	if s, seen := w.memo[name]; seen {
		if s == nil {
			if w.err == nil {
				w.err = validationError("Cannot spread fragment %q within itself.", name)
			}
			return shape{}
		}
		return *s
	}
	def := w.doc.Fragments.ForName(name)
	if def == nil {
		return shape{} // the validator reports the unknown fragment
	}
	w.memo[name] = nil
	w.directives(def.Directives)
	s := w.selectionSet(def.SelectionSet)
	w.memo[name] = &s
	return s
}

func (w *shapeWalker) directives(ds ast.DirectiveList) {
	for _, d := range ds {
		for _, a := range d.Arguments {
			w.value(a.Value)
		}
	}
}

// value records an error when v nests list and object literals deeper
// than the limit.
func (w *shapeWalker) value(v *ast.Value) {
	if d := valueDepth(v); d > w.limits.ValueDepth && w.err == nil {
		w.err = limitError("valueDepth", w.limits.ValueDepth,
			"a literal nests lists and objects %d levels deep; the limit is %d", d, w.limits.ValueDepth)
	}
}

func valueDepth(v *ast.Value) int {
	if v == nil || (v.Kind != ast.ListValue && v.Kind != ast.ObjectValue) {
		return 0
	}
	d := 0
	for _, c := range v.Children {
		d = max(d, valueDepth(c.Value))
	}
	return d + 1
}

// checkResponseKeys refuses an operation that merges more selections into
// one response key (a.b.c) than the limit: the validator compares every
// pair of them. Called once the operation's expanded size is within the
// field limit, so the walk is bounded.
func (w *shapeWalker) checkResponseKeys(set ast.SelectionSet) *gqlerror.Error {
	counts := map[string]int{}
	w.countKeys(set, "", counts)
	for key, n := range counts {
		if n > w.limits.SameResponseKey {
			return limitError("sameResponseKey", w.limits.SameResponseKey,
				"the operation selects %d fields into the response key %q; the limit is %d", n, key, w.limits.SameResponseKey)
		}
	}
	return nil
}

func (w *shapeWalker) countKeys(set ast.SelectionSet, prefix string, counts map[string]int) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			key := sel.Alias
			if key == "" {
				key = sel.Name
			}
			key = strings.TrimPrefix(prefix+"."+key, ".")
			counts[key]++
			w.countKeys(sel.SelectionSet, key, counts)
		case *ast.InlineFragment:
			w.countKeys(sel.SelectionSet, prefix, counts)
		case *ast.FragmentSpread:
			if def := w.doc.Fragments.ForName(sel.Name); def != nil {
				w.countKeys(def.SelectionSet, prefix, counts)
			}
		}
	}
}

// cappedRules returns gqlgen's default validation rules reporting at most
// max errors in all, then one saying the rest were dropped. gqlgen calls
// it once per validation, so the count is per document.
func cappedRules(max int) func() *rules.Rules {
	return func() *rules.Rules {
		reported := 0
		out := rules.NewRules()
		for name, rule := range rules.NewDefaultRules().GetInner() {
			out.AddRule(name, func(observers *core.Events, addError core.AddErrFunc) {
				rule(observers, func(options ...core.ErrorOption) {
					reported++
					switch {
					case reported <= max:
						addError(options...)
					case reported == max+1:
						addError(core.Message("more than %d validation errors; the rest are not reported", max))
					}
				})
			})
		}
		return out
	}
}

// bufferGraphQLBody reads /graphql's body before gqlgen does, so that a
// body over the limit is a 413 however it came (gzip, chunked) and not a
// GraphQL error with status 200. limitBody has capped the body.
func bufferGraphQLBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := readBody(r)
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			bodyTooLarge(w, limits.MaxBodyBytes)
			return
		case err != nil:
			respond.Error(w, http.StatusBadRequest, "request body could not be read")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		next.ServeHTTP(w, r)
	})
}

// readBody reads r's body whole, in one allocation when its length is
// known (io.ReadAll would grow and clear its buffer about 20 times on the
// way to a megabyte).
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength < 0 {
		return io.ReadAll(r.Body)
	}
	raw := make([]byte, r.ContentLength) // at most the limit: limitBody refused longer ones
	if _, err := io.ReadFull(r.Body, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// bodyTooLarge is the answer to a body over max bytes.
func bodyTooLarge(w http.ResponseWriter, max int64) {
	respond.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is too large (at most %d bytes)", max))
}
