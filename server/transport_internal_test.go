package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/resolvers"
)

// TestGraphQLResponseBytesAsJSONMarshal: the response writer's bytes are
// json.Marshal's for responses with and without data, errors, paths,
// extensions and characters that json.Marshal escapes.
func TestGraphQLResponseBytesAsJSONMarshal(t *testing.T) {
	yes := true
	cases := []*graphql.Response{
		{Data: json.RawMessage(`{"a":1}`)},
		{},
		{Data: json.RawMessage(`{"s":"<b>Tom & Jerry</b> \u2028 \u2029"}`)},
		{Data: json.RawMessage("{\"s\":\"raw \u2028 and \u2029 and <\"}")},
		{Errors: gqlerror.List{{Message: "not found", Path: ast.Path{ast.PathName("client")},
			Extensions: map[string]any{"code": "NOT_FOUND", "data": nil}}}, Data: json.RawMessage(`{"client":null}`)},
		{Errors: gqlerror.List{{Message: "<bad> & worse"}}},
		{Data: json.RawMessage(`{}`), Label: "l", Path: ast.Path{ast.PathName("a"), ast.PathIndex(2)}, HasNext: &yes,
			Extensions: map[string]any{"cost": 3}},
		{Data: json.RawMessage(`[]`), Extensions: map[string]any{"x": "<>"}},
		{Data: json.RawMessage("{\"s\":\"only \u2029\"}")},
		{Data: json.RawMessage("{\"s\":\"\u2027 \u202f \u20ac, no rune it escapes\"}")},
		{Data: json.RawMessage("{\"s\":\"\u20ac \u2028\"}")},
		{Data: json.RawMessage(`{"s":"only >"}`)},
		{Data: json.RawMessage(`{"s":"only &"}`)},
	}
	for i, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		writeGraphQLResponse(rec, c)
		if got := rec.Body.String(); got != string(want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestNeedsHTMLEscape: true exactly when json.HTMLEscape would change the
// bytes, also for the other runes of U+2028's and U+2029's first two bytes
// and for those two bytes at the very end.
func TestNeedsHTMLEscape(t *testing.T) {
	for _, s := range []string{"", "plain", "<", "a>", "&b", "x\u2028", "\u2029y", "\u2027\u202f\u20ac", "end \xe2\x80",
		"\xe2\x80\u2028", strings.Repeat("long ", 1000) + "\u2029"} {
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, []byte(s))
		if got, want := needsHTMLEscape([]byte(s)), escaped.String() != s; got != want {
			t.Errorf("needsHTMLEscape(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestGraphQLPostAsGqlgens: for requests refused before any resolver runs
// (bad JSON, parse and validation errors, each Accept variant) and for one
// that needs no resolver, graphQLPost answers the status, headers and
// bytes of gqlgen's own transport.POST over the same executor.
func TestGraphQLPostAsGqlgens(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{}})
	exec := executor.New(es)
	bodies := []string{
		`{"query":"{ __typename }"}`,
		`{"query":"{ __typename <"}`,
		`{"query":"{ noSuchField }"}`,
		`{"query":"query($a: Int!) { __typename }","variables":{"a":"x"}}`,
		`{"query": 12}`,
		`not json`,
		``,
		`{"query":"{ __typename }", "operationName": "Missing"}`,
	}
	accepts := []string{"", "application/json", "application/graphql-response+json", "*/*",
		"text/html, application/graphql-response+json;q=0.9", "text/html", "bad;;type"}
	for _, body := range bodies {
		for _, accept := range accepts {
			do := func(tr graphql.Transport) *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
				r = r.WithContext(graphql.StartOperationTrace(r.Context())) // as handler.Server does
				r.Header.Set("Content-Type", "application/json")
				if accept != "" {
					r.Header.Set("Accept", accept)
				}
				if !tr.Supports(r) {
					t.Fatalf("transport does not support the request")
				}
				rec := httptest.NewRecorder()
				tr.Do(rec, r, exec)
				return rec
			}
			got, want := do(graphQLPost{}), do(transport.POST{})
			if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") ||
				!bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Errorf("body %q accept %q:\n got %d %s %s\nwant %d %s %s", body, accept,
					got.Code, got.Header().Get("Content-Type"), got.Body, want.Code, want.Header().Get("Content-Type"), want.Body)
			}
		}
	}
}
