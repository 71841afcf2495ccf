package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/rawjson"
	"github.com/fleetgraph/fleetgraph/respond"
)

// Flat bodies and NDJSON scroll streams (Route.BodyVars, Route.ScrollNext).
//
// Search requests are flat JSON objects whose top-level keys are the
// arguments of the search field (body, size, from, ...), so their stored
// operations take one variable per key instead of one $input. A search with
// `scroll` answers NDJSON: every hit's _source on its own line, over all
// pages, each page flushed as it arrives. The first page comes from the
// route's operation and the following ones from its ScrollNext operation,
// both executed like any other stored operation, so the stream goes through
// the same resolvers, authorization and errors as the JSON answer.

// NDJSONContentType is the content type of scroll streams.
const NDJSONContentType = "application/x-ndjson"

// bodyVars maps the body's top-level keys onto the operation's variables
// of the same snake_case name. A key naming no variable (or a path
// parameter), a value of the wrong type and a missing required variable
// are refused with the route's RejectStatus.
func (a *Adapter) bodyVars(r *http.Request, rt Route, op *operation, b binding, vars map[string]any) error {
	doc, err := readObject(r)
	if err != nil {
		return err
	}
	// An operation with $otherParams takes the body's other keys there (as
	// GET's other query parameters, Route.Derive), for its resolver to
	// accept or refuse by name.
	acceptsOther := hasVariable(op, otherParamsVar)
	other, _ := vars[otherParamsVar].(map[string]any)
	byKey := make(map[string]*ast.VariableDefinition, len(op.Variables))
	for _, def := range op.Variables {
		if _, derived := vars[def.Variable]; !derived && !slices.Contains(b.pathParams, def.Variable) &&
			!(acceptsOther && def.Variable == otherParamsVar) {
			byKey[snake(def.Variable)] = def
		}
	}
	m := &inputMapper{schema: a.schema}
	query := r.URL.Query()
	for key, val := range doc {
		def, ok := byKey[key]
		switch {
		case ok && (query.Has(key) || query.Has(key+"[]")):
			// Else the query parameter would be dropped for the body's value.
			m.fail(key, "is given both in the body and as a query parameter")
		case ok:
			vars[def.Variable] = m.value(def.Type, lenientScalar(def.Type, val), key)
		case !acceptsOther:
			m.fail(key, "is not a known field")
		default:
			if other == nil {
				other = map[string]any{}
			}
			if _, dup := other[key]; dup {
				m.fail(key, "is given both in the body and as a query parameter")
				continue
			}
			other[key] = val
		}
	}
	if len(other) > 0 {
		vars[otherParamsVar] = other
	}
	for key, def := range byKey {
		if _, given := doc[key]; !given && def.Type.NonNull && def.DefaultValue == nil {
			m.fail(key, "is required")
		}
	}
	if m.errs == nil {
		return nil
	}
	invalid := &apierr.ValidationError{Fields: m.errs}
	if rt.RejectStatus == 0 || rt.RejectStatus == http.StatusUnprocessableEntity {
		return invalid
	}
	return &apierr.BadRequest{Msg: "Invalid request: " + strings.TrimPrefix(invalid.Error(), "Validation failed: ")}
}

// lenientScalar reads a top-level integer or boolean given as a string
// ("size": "10", "source_only": "true") as its value, as Elasticsearch
// does for the same keys in a search body; anything else is left to the
// mapper's checks.
func lenientScalar(t *ast.Type, v any) any {
	s, ok := v.(string)
	if !ok || t.Elem != nil {
		return v
	}
	s = strings.TrimSpace(s)
	switch t.NamedType {
	case "Int":
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return json.Number(s)
		}
	case "Boolean":
		switch strings.ToLower(s) {
		case "true":
			return true
		case "false":
			return false
		}
	}
	return v
}

// otherParamsVar is the variable of a BodyVars operation that takes the
// body's other keys.
const otherParamsVar = "otherParams"

// scrollPage is what a stream reads of a search envelope.
type scrollPage struct {
	ScrollID string `json:"_scroll_id"`
	Hits     struct {
		Hits []struct {
			Source json.RawMessage `json:"_source"`
		} `json:"hits"`
	} `json:"hits"`
}

// stream answers a scroll as NDJSON. Failures before the first line are
// ordinary error answers; a failure after it aborts the response, so the
// client sees a broken stream rather than a short one that looks complete.
func (a *Adapter) stream(w http.ResponseWriter, r *http.Request, rt Route, op *operation, vars map[string]any) {
	next, ok := a.ops[rt.ScrollNext]
	if !ok {
		respond.Error(w, http.StatusInternalServerError, "")
		return
	}
	if hasVariable(op, "sourceOnly") {
		vars["sourceOnly"] = false // the envelope carries the scroll id
	}
	page, errStatus, errBody := a.page(r, op, vars)
	if errBody != nil {
		respond.JSON(w, errStatus, errBody)
		return
	}
	w.Header().Set("Content-Type", NDJSONContentType)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for len(page.Hits.Hits) > 0 {
		for _, h := range page.Hits.Hits {
			line := h.Source
			if len(line) == 0 {
				line = json.RawMessage("null")
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return // the client went away
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		if page.ScrollID == "" {
			return
		}
		pr, done := pageRequest(r)
		page, _, errBody = a.page(pr, next, map[string]any{"scrollId": page.ScrollID, "scroll": vars["scroll"]})
		done()
		if errBody != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

// page executes one search operation and reads its envelope (the value of
// the data's only field).
func (a *Adapter) page(r *http.Request, op *operation, vars map[string]any) (scrollPage, int, *respond.ErrorBody) {
	var page scrollPage
	resp, _ := a.execute(r, op, vars, false)
	if len(resp.Errors) > 0 {
		status, body := errorResponse(resp.Errors)
		return page, status, &body
	}
	if err := json.Unmarshal(rawjson.OnlyValue(resp.Data), &page); err != nil {
		return page, http.StatusInternalServerError, &respond.ErrorBody{Message: "Internal server error"}
	}
	return page, 0, nil
}

func hasVariable(op *operation, name string) bool {
	for _, def := range op.Variables {
		if def.Variable == name {
			return true
		}
	}
	return false
}

// StreamDeadline is how a stream renews the request's deadline for each
// page after the first, so that the deadline bounds a wait for the
// database, not the length of an export: Client is the request's context
// before the deadline (it ends when the client goes away) and Each the
// deadline's length. The server's deadline middleware sets it
// (WithStreamDeadline).
type StreamDeadline struct {
	Client context.Context
	Each   time.Duration
}

type streamDeadlineKey struct{}

// WithStreamDeadline records sd in ctx for the streams.
func WithStreamDeadline(ctx context.Context, sd StreamDeadline) context.Context {
	return context.WithValue(ctx, streamDeadlineKey{}, sd)
}

// pageRequest is r with a deadline of its own for one more page of a
// stream (r itself when no StreamDeadline was set): r's values, not its
// deadline; cancelled when the client goes away. done releases it.
func pageRequest(r *http.Request) (*http.Request, func()) {
	sd, ok := r.Context().Value(streamDeadlineKey{}).(StreamDeadline)
	if !ok {
		return r, func() {}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), sd.Each)
	stop := context.AfterFunc(sd.Client, cancel)
	return r.WithContext(ctx), func() { stop(); cancel() }
}
