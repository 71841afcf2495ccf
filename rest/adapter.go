// Package rest is the REST v1 adapter: one route table per API maps each
// documented method and path onto a stored GraphQL operation (ops/), which
// runs in-process on the same executor configuration /graphql uses. Path
// parameters, query parameters and the JSON body become the operation's
// variables; the operation's data, shaped by aliases and fragments, is the
// response body.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/engine"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/rawjson"
	"github.com/fleetgraph/fleetgraph/respond"
	"github.com/fleetgraph/fleetgraph/search"
)

// Adapter executes stored operations for REST routes.
type Adapter struct {
	exec   *executor.Executor
	schema *ast.Schema
	ops    map[string]*operation
	// answerBytes is the budget of each executed operation (each page of
	// a stream has its own).
	answerBytes int64
}

// NewAdapter loads and validates the stored operations against the schema
// the executor serves; every operation it executes may answer at most
// answerBytes (package budget).
func NewAdapter(exec *executor.Executor, schema *ast.Schema, answerBytes int64) (*Adapter, error) {
	ops, err := loadOperations(schema)
	if err != nil {
		return nil, err
	}
	return &Adapter{exec: exec, schema: schema, ops: ops, answerBytes: answerBytes}, nil
}

// PersistedQueries answers every stored operation's document by its
// Hash, for /graphql to know them as persisted queries from the start: a
// dashboard may run a REST route's operation on /graphql by its hash alone
// (the OpenAPI description names it under x-graphql-operation).
func (a *Adapter) PersistedQueries() map[string]string {
	out := make(map[string]string, len(a.ops))
	for _, op := range a.ops {
		out[op.Hash] = op.Document
	}
	return out
}

// Mount registers every route of the table on r, and JSON answers for
// unknown paths (404) and wrong methods (405).
func (a *Adapter) Mount(r chi.Router, routes []Route) error {
	for _, rt := range routes {
		op, ok := a.ops[rt.Operation]
		if !ok {
			return fmt.Errorf("route %s %s: no stored operation %q", rt.Method, rt.Path, rt.Operation)
		}
		h := a.handler(rt, op, bind(rt, op))
		r.Method(rt.Method, rt.Path, h)
		if rt.Method == http.MethodGet {
			r.Method(http.MethodHead, rt.Path, h) // net/http drops the body
		}
	}
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) { respond.Error(w, http.StatusNotFound, "Not found") })
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		allow := allowed(r, chi.RouteContext(req.Context()).RoutePath)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		if req.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		respond.Error(w, http.StatusMethodNotAllowed, fmt.Sprintf("Method %s not allowed (allowed: %s)",
			req.Method, strings.Join(allow, ", ")))
	})
	return nil
}

// allowed lists the methods r routes for path, OPTIONS included (it
// answers 204 with the same Allow header; no CORS headers).
func allowed(r chi.Router, path string) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if r.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return append(out, http.MethodOptions)
}

// binding is what every request of a route has in common, decided once at
// Mount: where the operation's variables come from and which way the
// route answers.
type binding struct {
	pathParams []string // the operation's variables named in the route's path
	readsBody  bool     // the body is read (BodyVars, an input variable); else refused (noBody)
	scrolls    bool     // a scrolling route whose operation takes a scroll
	// splices: the answer is the operation's data as it is, so it is
	// written with its rendered root fields spliced in (engine.Splice)
	// rather than copied into it.
	splices bool
}

func bind(rt Route, op *operation) binding {
	var b binding
	for _, name := range pathParams(rt.Path) {
		if hasVariable(op, name) {
			b.pathParams = append(b.pathParams, name)
		}
	}
	b.readsBody = rt.BodyVars || hasVariable(op, "input")
	b.scrolls = rt.ScrollNext != "" && hasVariable(op, "scroll")
	b.splices = rt.CSV == nil && !rt.Empty && !rt.Paged && rt.PagedKey == "" && !rt.Unwrap && op.omit == nil
	return b
}

func (a *Adapter) handler(rt Route, op *operation, b binding) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vars, err := a.variables(r, rt, op, b)
		if err != nil {
			class, msg, fields := apierr.Describe(err)
			respond.JSON(w, class.Status, respond.ErrorBody{Message: msg, Errors: fields})
			return
		}
		if rt.SSE != "" && acceptsEventStream(r) {
			a.sse(w, r, rt, vars)
			return
		}
		if scroll, _ := vars["scroll"].(string); b.scrolls && scroll != "" {
			a.stream(w, r, rt, op, vars)
			return
		}
		ctx, warns := search.WithWarnings(r.Context())
		resp, splice := a.execute(r.WithContext(ctx), op, vars, b.splices)
		defer splice.Release()
		if len(resp.Errors) > 0 {
			writeErrors(w, resp.Errors)
			return
		}
		// Elasticsearch's Warning headers (an ES|QL single-value function
		// of a multi-value).
		for _, m := range warns.Messages() {
			w.Header().Add("Warning", search.WarningHeader(m))
		}
		if splice != nil {
			if !splice.Fits(resp.Data) {
				respond.Error(w, http.StatusInternalServerError, "")
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("Content-Length", strconv.Itoa(splice.Len(resp.Data)))
			w.WriteHeader(rt.Status)
			_ = splice.WriteTo(w, resp.Data)
			return
		}
		if rt.CSV != nil {
			records, err := rt.CSV(resp.Data)
			if err != nil {
				respond.Error(w, http.StatusInternalServerError, "Internal server error")
				return
			}
			writeCSV(w, rt.Status, rt.CSVFile, records)
			return
		}
		data, err := op.omit.apply(resp.Data)
		if err != nil {
			respond.Error(w, http.StatusInternalServerError, "")
			return
		}
		body := data
		switch {
		case rt.Empty:
			body = []byte("{}")
		case rt.Paged:
			body = pagedBody(w, r, data)
		case rt.PagedKey != "":
			body, _ = json.Marshal(map[string]json.RawMessage{rt.PagedKey: pagedBody(w, r, data)})
		case rt.Unwrap:
			body = rawjson.OnlyValue(data)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rt.Status)
		_, _ = w.Write(body)
	}
}

// execute runs op; with splices, its rendered root fields are left out
// of the data and answered in the Splice (nil otherwise), for the caller
// to write the data with them.
func (a *Adapter) execute(r *http.Request, op *operation, vars map[string]any, splices bool) (*graphql.Response, *engine.Splice) {
	ctx := budget.With(graphql.StartOperationTrace(r.Context()), a.answerBytes)
	params := &graphql.RawParams{Query: op.Document, OperationName: op.Name, Variables: vars, Headers: r.Header}
	rc, errs := a.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return a.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs), nil
	}
	var splice *engine.Splice
	if splices {
		ctx, splice = engine.WithSplice(ctx, rc)
	}
	handle, ctx := a.exec.DispatchOperation(ctx, rc)
	resp := Answered(ctx, handle(ctx))
	size := len(resp.Data)
	if splice != nil {
		size = splice.Len(resp.Data)
	}
	return budget.WithinSize(ctx, resp, size), splice
}

// Answered is resp, or, when gqlgen answered nothing, the error of the
// operation's end: gqlgen's executor answers nil for an operation whose
// context ended before its response was made (the request's deadline
// passed: a 503 SERVICE_UNAVAILABLE with Retry-After; or its client went
// away: nobody reads the answer). Reading that nil was a panic, a 500.
func Answered(ctx context.Context, resp *graphql.Response) *graphql.Response {
	if resp != nil {
		return resp
	}
	err := context.Cause(ctx)
	if err == nil {
		err = errors.New("the executor answered nothing")
	}
	class, msg, _ := apierr.Describe(err)
	return &graphql.Response{Errors: gqlerror.List{{Message: msg, Extensions: map[string]any{"code": class.Code}}}}
}

// writeErrors answers errs: the first error's status and body, with the
// Retry-After it names (extensions.retryAfter).
func writeErrors(w http.ResponseWriter, errs gqlerror.List) {
	status, body := errorResponse(errs)
	switch secs := errs[0].Extensions["retryAfter"].(type) {
	case int64:
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	case int:
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	respond.JSON(w, status, body)
}

// errorResponse turns the first GraphQL error into the REST status (its
// extensions.code's class) and body.
func errorResponse(errs gqlerror.List) (int, respond.ErrorBody) {
	e := errs[0]
	code, _ := e.Extensions["code"].(string)
	class := apierr.ByCode(code)
	body := respond.ErrorBody{Message: e.Message}
	if fields, ok := e.Extensions["errors"].(map[string][]string); ok {
		body.Errors = make(map[string][]string, len(fields))
		for f, msgs := range fields {
			body.Errors[snakePath(f)] = msgs
		}
	}
	if class == apierr.ErrInternal { // a code of no class of ours: gqlgen's words, not the presenter's
		body = respond.ErrorBody{Message: "Internal server error"}
	}
	return class.Status, body
}

// variables maps path parameters, query parameters, derived values and the
// body onto the operation's variables.
func (a *Adapter) variables(r *http.Request, rt Route, op *operation, b binding) (map[string]any, error) {
	vars := map[string]any{}
	if !b.readsBody {
		if err := noBody(r); err != nil {
			return nil, err
		}
	}
	q := r.URL.Query()
	if rt.StrictQuery {
		var err error
		if q, err = strictQuery(q, op, b.pathParams); err != nil {
			return nil, err
		}
	}
	if rt.Derive != nil {
		if err := rt.Derive(q, vars); err != nil {
			return nil, err
		}
	}
	if rt.BodyVars {
		if err := a.bodyVars(r, rt, op, b, vars); err != nil {
			return nil, err
		}
	}
	for _, def := range op.Variables {
		name := def.Variable
		if _, derived := vars[name]; derived {
			continue
		}
		if name == "input" {
			in, err := a.body(r, def.Type)
			if err != nil {
				return nil, err
			}
			vars[name] = in
			continue
		}
		if slices.Contains(b.pathParams, name) {
			v, err := pathValue(urlParam(r, name), def.Type)
			if err != nil {
				return nil, err
			}
			vars[name] = v
			continue
		}
		v, err := queryValue(q, snake(name), def.Type)
		if err != nil {
			return nil, err
		}
		if v != nil {
			vars[name] = v
		}
	}
	return vars, nil
}

// urlParam is a path parameter, decoded: chi matches on the escaped path
// when the request's escaping differs from the default one (an anomaly id
// sent with its "::" as %3A%3A, a "/" as %2F), and then hands the
// parameter over still escaped.
func urlParam(r *http.Request, name string) string {
	raw := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return raw
	}
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

// pathValue parses an id from the path; one that cannot be an id names
// nothing, so it is a 404.
func pathValue(raw string, t *ast.Type) (any, error) {
	if t.NamedType == "Int" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 {
			return nil, apierr.ErrNotFound
		}
		return n, nil
	}
	return raw, nil
}

// queryValue reads one query parameter typed by its variable definition.
func queryValue(q map[string][]string, key string, t *ast.Type) (any, error) {
	vals, ok := q[key]
	for _, v := range append(append([]string{}, vals...), q[key+"[]"]...) {
		if strings.ContainsRune(v, 0) {
			return nil, &apierr.BadRequest{Msg: "query parameter " + key + " must not contain NUL characters"}
		}
	}
	if t.Elem != nil {
		list := append([]string{}, q[key+"[]"]...)
		for _, v := range vals {
			list = append(list, strings.Split(v, ",")...)
		}
		if len(list) == 0 {
			return nil, nil
		}
		out := make([]any, len(list))
		for i, v := range list {
			out[i] = v
		}
		return out, nil
	}
	if !ok || len(vals) == 0 {
		if t.NonNull {
			return nil, &apierr.BadRequest{Msg: "missing query parameter " + key}
		}
		return nil, nil
	}
	if len(vals) > 1 {
		return nil, &apierr.BadRequest{Msg: "query parameter " + key + " is given more than once"}
	}
	raw := vals[0]
	switch t.NamedType {
	case "Int":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, &apierr.BadRequest{Msg: "query parameter " + key + " must be an integer"}
		}
		return n, nil
	case "Boolean":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, &apierr.BadRequest{Msg: "query parameter " + key + " must be true or false"}
		}
		return b, nil
	default:
		return raw, nil
	}
}

// body reads the JSON body (an absent body is an empty object) and maps it
// onto the input type t.
func (a *Adapter) body(r *http.Request, t *ast.Type) (any, error) {
	doc, err := readObject(r)
	if err != nil {
		return nil, err
	}
	m := &inputMapper{schema: a.schema}
	v := m.value(t, doc, "")
	if m.errs != nil {
		return nil, &apierr.ValidationError{Fields: m.errs}
	}
	return v, nil
}

// readObject reads the JSON object of the body (an absent body is empty).
func readObject(r *http.Request) (map[string]any, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limits.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, apierr.Errorf(apierr.ErrTooLarge, "request body is larger than %d bytes", limits.MaxBodyBytes)
		}
		return nil, &apierr.BadRequest{Msg: "could not read request body"}
	}
	raw = bytes.TrimPrefix(raw, utf8BOM)
	var doc any = map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, &apierr.BadRequest{Msg: "malformed JSON: " + err.Error() + notJSONHint(r)}
		}
		if len(bytes.Trim(raw[dec.InputOffset():], " \t\r\n")) > 0 {
			return nil, &apierr.BadRequest{Msg: "malformed JSON: unexpected data after the JSON value"}
		}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, &apierr.BadRequest{Msg: "request body must be a JSON object"}
	}
	return obj, nil
}

// utf8BOM may lead a body saved by Windows tools; it is not part of the JSON.
var utf8BOM = []byte("\xef\xbb\xbf")

// notJSONHint explains a malformed body sent with another declared type.
// Bodies are read as JSON whatever their Content-Type says (curl -d
// declares application/x-www-form-urlencoded), so a type only matters when
// the body is not JSON.
func notJSONHint(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	if mt = strings.ToLower(strings.TrimSpace(mt)); mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return ""
	}
	return fmt.Sprintf(" (the body must be a JSON object; it was sent as %s)", mt)
}

// noBody refuses a request body on a route that takes none (GET, DELETE):
// its parameters go in the query string, and a body would be ignored. A
// body that asks for nothing (blank, {} or null, as HTTP libraries send
// when given no data) is let through.
func noBody(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, limits.MaxBodyBytes))
	if err != nil || emptyBody(raw) {
		return nil
	}
	return &apierr.BadRequest{Msg: r.Method + " " + r.URL.Path + " takes no request body: send its parameters in the query string"}
}

// emptyBody: raw is blank, or the JSON value {} or null.
func emptyBody(raw []byte) bool {
	raw = bytes.TrimSpace(bytes.TrimPrefix(raw, utf8BOM))
	if len(raw) == 0 {
		return true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	m, isObject := v.(map[string]any)
	return v == nil || isObject && len(m) == 0
}
