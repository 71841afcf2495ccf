package engine

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// The fields of a selection set, collected once for every request.
//
// graphql.CollectFields flattens a selection set's fragments into its
// fields for a type, and keeps the result for the rest of the request.
// The read ahead, each level's loads and the renderer collect every
// selection of a request again in each new request: for a lookup by id,
// 7.7 % of the server's CPU (docs/benchmarks.md, "A heap floor"). What
// they collect depends on the request only through its variables, which
// @skip, @include and @defer read: a selection set with no directive at
// any depth of its fragments collects the same fields in every request.
// gqlgen keeps the parsed documents of the queries it has seen (its query
// cache), and the REST operations are parsed once, so the fields and
// fragments of a selection set are the same objects request after
// request, though the set itself is a slice gqlgen builds anew for each
// (the selections of a field it collected). collectFields keeps the
// fields collected for a selection set by its entries: a hash of them
// finds the entry, which holds the entries themselves (and with them
// their document) and must equal the set entry for entry. While an entry
// is kept its fields cannot be freed, so no other field can take one's
// place in memory. Documents gqlgen's cache has let go stay held until
// the entries are cleared, at maxFieldSets of them.

// maxFieldSets bounds the kept selection sets (gqlgen's query cache holds
// 1,000 documents).
const maxFieldSets = 4096

type fieldSetKey struct {
	hash     uint64 // of the entries (selectionHash)
	typeName string
}

// A fieldSet is a kept selection set's fields for a type, and the
// renderer's plans of them (render.go), per Go type of the objects.
type fieldSet struct {
	sel    ast.SelectionSet
	fields []graphql.CollectedField
	plans  sync.Map // reflect.Type -> *objectPlan
}

var (
	fieldSets     sync.Map // fieldSetKey -> *fieldSet
	fieldSetCount atomic.Int64
)

// collectFields is graphql.CollectFields(oc, sel, []string{typeName}),
// collected once per selection set without directives. Callers do not
// change what it answers.
func collectFields(oc *graphql.OperationContext, sel ast.SelectionSet, typeName string) []graphql.CollectedField {
	f, _ := collectFieldSet(oc, sel, typeName)
	return f
}

// collectFieldSet is collectFields, with the set it keeps (nil: a set
// with directives, collected for this request only).
func collectFieldSet(oc *graphql.OperationContext, sel ast.SelectionSet, typeName string) ([]graphql.CollectedField, *fieldSet) {
	k := fieldSetKey{selectionHash(sel), typeName}
	if v, ok := fieldSets.Load(k); ok {
		if kept := v.(*fieldSet); slices.Equal(kept.sel, sel) {
			return kept.fields, kept
		}
	}
	f := graphql.CollectFields(oc, sel, []string{typeName})
	if len(sel) == 0 || oc.Doc == nil || !withoutDirectives(oc.Doc, sel, 0) {
		return f, nil
	}
	if fieldSetCount.Add(1) > maxFieldSets {
		fieldSets.Clear()
		fieldSetCount.Store(1)
	}
	kept := &fieldSet{sel: slices.Clone(sel), fields: f}
	fieldSets.Store(k, kept)
	return f, kept
}

// selectionHash hashes the identities of sel's entries (FNV-1a over their
// addresses); entries equal to them are the same objects.
func selectionHash(sel ast.SelectionSet) uint64 {
	h := uint64(14695981039346656037)
	for _, s := range sel {
		var p uintptr
		switch s := s.(type) {
		case *ast.Field:
			p = uintptr(unsafe.Pointer(s))
		case *ast.InlineFragment:
			p = uintptr(unsafe.Pointer(s))
		case *ast.FragmentSpread:
			p = uintptr(unsafe.Pointer(s))
		}
		h = (h ^ uint64(p)) * 1099511628211
	}
	return h ^ uint64(len(sel))
}

// withoutDirectives tells whether no field, inline fragment or fragment
// spread of sel, and of the fragments it includes, has a directive: then
// what it collects does not depend on the variables. depth stops a
// fragment cycle (the validator refuses them; this does not rely on it).
func withoutDirectives(doc *ast.QueryDocument, sel ast.SelectionSet, depth int) bool {
	if depth > 32 {
		return false
	}
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if len(s.Directives) > 0 {
				return false
			}
		case *ast.InlineFragment:
			if len(s.Directives) > 0 || !withoutDirectives(doc, s.SelectionSet, depth+1) {
				return false
			}
		case *ast.FragmentSpread:
			frag := doc.Fragments.ForName(s.Name)
			if len(s.Directives) > 0 || frag == nil || !withoutDirectives(doc, frag.SelectionSet, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
