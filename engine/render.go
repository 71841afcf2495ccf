package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/obs"
)

// Lists of plain objects, and plain objects, are written straight to JSON.
//
// Once Attach has run, every field of a root list or object is a plain
// read: a struct field, an attached edge or a method without arguments.
// gqlgen would still build a field context, a middleware call and a
// marshaler per field and a goroutine per list item, which for 2,000
// clients with their groups, key and contract is most of the request's
// time and memory, and for one client (a lookup by id) about a fifth of
// the server's CPU of the request. The renderer
// writes the same bytes from a plan compiled from the selection (aliases,
// fragments, @skip/@include through CollectFields) once for every request
// of a selection without directives (collect.go), else once per request,
// through gqlgen's own scalar marshalers. Whatever it cannot write exactly
// as gqlgen would (a resolver field such as Client.measurements, an
// interface, a null in a non-null position, a non-finite float) makes it
// give up before anything is written, and gqlgen marshals the result as
// usual; TestRenderMatchesGqlgen compares the two on every REST operation's
// shape.

// Rendered counts the root lists and objects written by the renderer (for
// tests and metrics).
var Rendered atomic.Int64

// errNotPlain makes the renderer give the result back to gqlgen.
var errNotPlain = errors.New("render: not a plain selection")

// errBadSplice: a Splice's places are not in the data it is asked to
// write (a bug).
var errBadSplice = errors.New("render: the spliced fields' places are not in this data")

// renderSlot carries a rendered root field from the field interceptor to
// the root field interceptor.
type renderSlot struct{ json *bytes.Buffer }

type renderSlotKey struct{}

// InterceptRootField answers a root field with its rendered JSON when the
// field interceptor could render it.
func (a Attacher) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	slot := &renderSlot{}
	m := next(context.WithValue(ctx, renderSlotKey{}, slot))
	if slot.json == nil {
		return m
	}
	return graphql.WriterFunc(func(w io.Writer) {
		if sp, _ := ctx.Value(spliceKey{}).(*Splice); sp.take(ctx, w, slot.json) {
			return // the transport writes it (Splice)
		}
		_, _ = w.Write(slot.json.Bytes())
		buffers.Put(slot.json)
	})
}

// buffers keeps render buffers between requests: a 2,000-client list is a
// few MB, which a fresh buffer would reach by doubling, allocating and
// clearing twice that.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// itemSizes is, per root field, the size of an item of the last list it
// Rendered, so that the next buffer is made the right size at once.
var itemSizes sync.Map // field name -> int

// bufferFor is an empty buffer with room for about n items of field.
func bufferFor(field string, n int) *bytes.Buffer {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	per := 1024
	if v, ok := itemSizes.Load(field); ok {
		per = v.(int)
	}
	buf.Grow(n*per + n*per/8 + 64)
	return buf
}

// noteItemSize remembers the item size of a rendered list of n items of field.
func noteItemSize(field string, buf *bytes.Buffer, n int) {
	if n > 0 {
		itemSizes.Store(field, buf.Len()/n)
	}
}

// render writes a root list or object result into the slot, if it is
// plain; it answers the value gqlgen should marshal instead (an empty list
// of the same type, or renderedObject) and whether it rendered.
func render(ctx context.Context, fc *graphql.FieldContext, res any) (any, bool) {
	slot, _ := ctx.Value(renderSlotKey{}).(*renderSlot)
	v := reflect.ValueOf(res)
	n := 1
	switch {
	case slot == nil:
		return res, false
	case v.Kind() == reflect.Slice:
		n = v.Len()
	case v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct,
		strings.HasPrefix(fc.Field.Name, "__"): // introspection stays gqlgen's
		return res, false
	}
	r := &renderer{oc: graphql.GetOperationContext(ctx), plans: map[planKey]*objectPlan{}}
	buf := bufferFor(fc.Field.Name, n)
	root := &valueInfo{kind: schemaKind(fc.Field.Definition.Type.Name())}
	if err := r.value(buf, fc.Field.Definition.Type, root, v, fc.Field.Selections); err != nil {
		buffers.Put(buf)
		return res, false
	}
	noteItemSize(fc.Field.Name, buf, n)
	slot.json = buf
	if v.Kind() == reflect.Pointer {
		return renderedObject, true
	}
	return reflect.MakeSlice(v.Type(), 0, 0).Interface(), true
}

// renderedObject stands for a rendered root object until InterceptRootField
// puts its JSON in its place: gqlgen takes a marshaler answered for a field
// as the field's value, without marshalling. It is not graphql.Null, which
// in a non-null root field would null the whole data.
var renderedObject = graphql.WriterFunc(func(io.Writer) {})

type renderer struct {
	oc    *graphql.OperationContext
	plans map[planKey]*objectPlan
}

type planKey struct {
	typeName string
	sel      *ast.Selection // the selection set's first entry: its place in the document
	n        int
}

// objectPlan is the selected fields of one object type at one place;
// kept: the plan of a kept selection set, which every request shares.
type objectPlan struct {
	fields []fieldPlan
	kept   bool
}

type fieldPlan struct {
	alias    string // alias or name: a GraphQL name, which JSON writes unescaped
	typeName bool   // __typename
	name     string // the object's type name, for __typename
	typ      *ast.Type
	info     valueInfo
	get      func(obj reflect.Value) reflect.Value
	sel      ast.SelectionSet
}

// valueInfo is what writing a field's values needs beyond its type, looked
// up once per field of a plan rather than once per value: the kind of its
// named type, and, once a value was written, the Go type of the values
// with the plan of their objects or the writer of their scalars. Plans of
// kept selection sets (collect.go) serve every request at once, so that
// is set once, atomically; a value of another Go type (a field of an
// interface type) looks its own up each time. The info of a kept plan
// (shared) keeps only kept plans: a selection set below it with a
// directive is planned for each request, from its variables.
type valueInfo struct {
	kind     ast.DefinitionKind
	shared   bool
	resolved atomic.Pointer[resolvedValue]
}

type resolvedValue struct {
	goType reflect.Type
	plan   *objectPlan
	writer scalarWriter
}

// resolve answers info's resolved values for Go type vt, made by build
// and kept when info has none yet (and, shared, when they hold no plan of
// one request).
func (info *valueInfo) resolve(vt reflect.Type, build func() (*resolvedValue, error)) (*resolvedValue, error) {
	if rv := info.resolved.Load(); rv != nil && rv.goType == vt {
		return rv, nil
	}
	rv, err := build()
	if err != nil {
		return nil, err
	}
	if !info.shared || rv.plan == nil || rv.plan.kept {
		info.resolved.CompareAndSwap(nil, rv)
	}
	return rv, nil
}

// plan is the plan of the fields sel selects on typeName for objects of Go
// type goType: for a kept selection set the one plan of every request,
// else this render's.
func (r *renderer) plan(typeName string, goType reflect.Type, sel ast.SelectionSet) (*objectPlan, error) {
	if len(sel) == 0 {
		return nil, errNotPlain
	}
	k := planKey{typeName, &sel[0], len(sel)}
	if p, ok := r.plans[k]; ok {
		return p, nil
	}
	fields, kept := collectFieldSet(r.oc, sel, typeName)
	if kept != nil {
		if p, ok := kept.plans.Load(goType); ok {
			return p.(*objectPlan), nil
		}
	}
	p, err := newPlan(typeName, goType, fields, kept != nil)
	if err != nil {
		return nil, err
	}
	if kept != nil {
		kept.plans.Store(goType, p)
	} else {
		r.plans[k] = p
	}
	return p, nil
}

// newPlan plans fields of typeName for objects of Go type goType, to be
// kept for every request or not.
func newPlan(typeName string, goType reflect.Type, fields []graphql.CollectedField, kept bool) (*objectPlan, error) {
	p := &objectPlan{fields: make([]fieldPlan, len(fields)), kept: kept}
	for i, f := range fields {
		fp := &p.fields[i]
		fp.alias, fp.sel, fp.typ, fp.name = f.Alias, f.Selections, f.Definition.Type, typeName
		fp.info.kind, fp.info.shared = schemaKind(f.Definition.Type.Name()), kept
		if !obs.GraphQLName(f.Alias) {
			return nil, errNotPlain
		}
		if f.Name == "__typename" {
			fp.typeName = true
		} else if f.IsDeferred() || resolverFields[fieldRef{typeName, f.Name}] {
			return nil, errNotPlain
		} else if fp.get = binding(goType, f.Name); fp.get == nil {
			return nil, errNotPlain
		}
	}
	return p, nil
}

// fieldRef is a field of a type, by their GraphQL names.
type fieldRef struct{ typeName, field string }

// resolverFields are the fields gqlgen resolves through ResolverRoot (e.g.
// Client.measurements): never plain.
var resolverFields = func() map[fieldRef]bool {
	out := map[fieldRef]bool{}
	root := reflect.TypeFor[graph.ResolverRoot]()
	for i := range root.NumMethod() {
		m := root.Method(i)
		iface := m.Type.Out(0)
		for j := range iface.NumMethod() {
			f := iface.Method(j).Name
			out[fieldRef{m.Name, strings.ToLower(f[:1]) + f[1:]}] = true
		}
	}
	return out
}()

// bindings caches how a GraphQL field is read from a Go type, as gqlgen
// binds it: a method without arguments of that name, else the field,
// matched case-insensitively.
var bindings sync.Map // bindingKey -> func(reflect.Value) reflect.Value (nil: none)

type bindingKey struct {
	t     reflect.Type
	field string
}

func binding(t reflect.Type, field string) func(reflect.Value) reflect.Value {
	k := bindingKey{t, field}
	if b, ok := bindings.Load(k); ok {
		return b.(func(reflect.Value) reflect.Value)
	}
	b := bind(t, field)
	bindings.Store(k, b)
	return b
}

func bind(t reflect.Type, field string) func(reflect.Value) reflect.Value {
	pt := reflect.PointerTo(t)
	for i := range pt.NumMethod() {
		m := pt.Method(i)
		if strings.EqualFold(m.Name, field) {
			if m.Type.NumIn() != 1 || m.Type.NumOut() != 1 {
				return nil // takes a context or arguments, or can fail
			}
			idx := m.Index
			return func(obj reflect.Value) reflect.Value { return obj.Addr().Method(idx).Call(nil)[0] }
		}
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		if sf := t.Field(i); sf.IsExported() && !sf.Anonymous && strings.EqualFold(sf.Name, field) {
			return func(obj reflect.Value) reflect.Value { return obj.Field(i) }
		}
	}
	return nil
}

// value writes v, of GraphQL type t (info), selecting sel on objects.
func (r *renderer) value(buf *bytes.Buffer, t *ast.Type, info *valueInfo, v reflect.Value, sel ast.SelectionSet) error {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return r.null(buf, t)
		}
		if t.Elem == nil || v.Kind() == reflect.Interface {
			v = v.Elem()
		}
	}
	if t.Elem != nil {
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if v.Kind() != reflect.Slice {
			return errNotPlain
		}
		if v.IsNil() && !t.NonNull {
			buf.WriteString("null")
			return nil
		}
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := r.value(buf, t.Elem, info, v.Index(i), sel); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	switch info.kind {
	case ast.Object:
		return r.object(buf, t.NamedType, info, v, sel)
	case ast.Scalar, ast.Enum:
		return r.scalar(buf, t, info, v)
	default:
		return errNotPlain
	}
}

func (r *renderer) null(buf *bytes.Buffer, t *ast.Type) error {
	if t.NonNull {
		return errNotPlain // gqlgen reports it and nulls the parent
	}
	buf.WriteString("null")
	return nil
}

func (r *renderer) object(buf *bytes.Buffer, typeName string, info *valueInfo, v reflect.Value, sel ast.SelectionSet) error {
	if v.Kind() != reflect.Struct || !v.CanAddr() {
		return errNotPlain
	}
	vt := v.Type()
	rv, err := info.resolve(vt, func() (*resolvedValue, error) {
		p, err := r.plan(typeName, vt, sel)
		return &resolvedValue{goType: vt, plan: p}, err
	})
	if err != nil {
		return err
	}
	buf.WriteByte('{')
	for i := range rv.plan.fields {
		f := &rv.plan.fields[i]
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('"')
		buf.WriteString(f.alias)
		buf.WriteString(`":`)
		if f.typeName {
			graphql.MarshalString(f.name).MarshalGQL(buf)
			continue
		}
		if err := r.value(buf, f.typ, &f.info, f.get(v), f.sel); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// scalar writes a scalar or enum value with the marshaler gqlgen uses for it.
func (r *renderer) scalar(buf *bytes.Buffer, t *ast.Type, info *valueInfo, v reflect.Value) error {
	vt := v.Type()
	rv, _ := info.resolve(vt, func() (*resolvedValue, error) {
		return &resolvedValue{goType: vt, writer: scalarWriterOf(vt, t.NamedType)}, nil
	})
	w := rv.writer
	if w == nil {
		return errNotPlain
	}
	null, err := w(buf, v)
	if null {
		return r.null(buf, t)
	}
	return err
}

// scalarWriter writes one value; null says it is null to GraphQL (a zero
// time) and nothing was written.
type scalarWriter func(buf *bytes.Buffer, v reflect.Value) (null bool, err error)

type scalarKey struct {
	t    reflect.Type
	name string
}

var scalarWriters sync.Map // scalarKey -> scalarWriter (nil: not plain)

func scalarWriterOf(t reflect.Type, name string) scalarWriter {
	k := scalarKey{t, name}
	if w, ok := scalarWriters.Load(k); ok {
		return w.(scalarWriter)
	}
	w := newScalarWriter(t, name)
	scalarWriters.Store(k, w)
	return w
}

var (
	marshalerType = reflect.TypeFor[graphql.Marshaler]()
	timeType      = reflect.TypeFor[time.Time]()
)

// newScalarWriter picks, once per Go type and GraphQL scalar, what gqlgen's
// generated marshaler for that pair does.
func newScalarWriter(t reflect.Type, name string) scalarWriter {
	switch {
	case t.Implements(marshalerType):
		return func(buf *bytes.Buffer, v reflect.Value) (bool, error) {
			if v.CanAddr() { // *T has T's methods: no copy of the value into an interface
				v = v.Addr()
			}
			v.Interface().(graphql.Marshaler).MarshalGQL(buf)
			return false, nil
		}
	case t == timeType && name == "Time":
		return func(buf *bytes.Buffer, v reflect.Value) (bool, error) {
			tm, _ := reflect.TypeAssert[time.Time](v) // without Interface's copy
			if tm.IsZero() {
				return true, nil
			}
			buf.WriteByte('"')
			buf.Write(tm.AppendFormat(buf.AvailableBuffer(), time.RFC3339Nano))
			buf.WriteByte('"')
			return false, nil
		}
	case t.Kind() == reflect.String && (name == "String" || name == "ID"):
		return func(buf *bytes.Buffer, v reflect.Value) (bool, error) {
			writeString(buf, v.String())
			return false, nil
		}
	case t.Kind() == reflect.Int64 && name == "Int", t.Kind() == reflect.Int && name == "Int":
		return func(buf *bytes.Buffer, v reflect.Value) (bool, error) {
			buf.Write(strconv.AppendInt(buf.AvailableBuffer(), v.Int(), 10))
			return false, nil
		}
	case t.Kind() == reflect.Bool && name == "Boolean":
		return func(buf *bytes.Buffer, v reflect.Value) (bool, error) {
			buf.WriteString(strconv.FormatBool(v.Bool()))
			return false, nil
		}
	case t.Kind() == reflect.Float64 && name == "Float":
		return writeFloat
	}
	return nil
}

// writeFloat writes a Float as gqlgen's marshaler does (fmt's %g, which is
// strconv's shortest 'g'), without the marshaler's closure; a non-finite
// one, which gqlgen refuses, is not plain.
func writeFloat(buf *bytes.Buffer, v reflect.Value) (bool, error) {
	f := v.Float()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return false, errNotPlain
	}
	buf.Write(strconv.AppendFloat(buf.AvailableBuffer(), f, 'g', -1, 64))
	return false, nil
}

// writeString writes s as gqlgen's String marshaler does: quoted, with
// only the characters JSON requires escaped; a string that needs escaping
// goes through that marshaler itself.
func writeString(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '\\' || c == '"' {
			graphql.MarshalString(s).MarshalGQL(buf)
			return
		}
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}

// schemaKind is the kind of a named type of the executable schema.
func schemaKind(name string) ast.DefinitionKind {
	if d := schemaTypes()[name]; d != nil {
		return d.Kind
	}
	return ""
}

var schemaTypes = sync.OnceValue(func() map[string]*ast.Definition {
	return graph.NewExecutableSchema(graph.Config{}).Schema().Types
})
