package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/server"
)

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   any // the body when it is JSON and not content-encoded, numbers as json.Number
}

// Obj returns the body as a JSON object (failing the test otherwise).
func (r *Response) Obj(t testing.TB) map[string]any {
	t.Helper()
	m, ok := r.JSON.(map[string]any)
	if !ok {
		t.Fatalf("body is not a JSON object: %s", r.Raw)
	}
	return m
}

// RawClient neither asks for nor undoes a compression by itself, so that
// tests see the Content-Encoding they asked for.
var RawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// Send sends req with client (http.DefaultClient when nil) and reads the
// answer, decoding a JSON body that is not content-encoded. A REST answer
// is checked against the server's OpenAPI document (openapi.go).
func Send(t testing.TB, client *http.Client, req *http.Request) *Response {
	t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL.Path, err)
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 && resp.Header.Get("Content-Encoding") == "" &&
		strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := decodeNumbers(raw, &out.JSON); err != nil {
			t.Fatalf("%s %s: invalid JSON body: %v: %s", req.Method, req.URL.Path, err, raw)
		}
	}
	failOnPanic(t, req, resp.Header)
	checkContract(t, req, out)
	return out
}

// DecodeJSON decodes raw, numbers kept as written (json.Number).
func DecodeJSON(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	if err := decodeNumbers(raw, &v); err != nil {
		t.Fatalf("answer is not JSON: %v: %.300s", err, raw)
	}
	return v
}

func decodeNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// Body turns a request body into a reader: nil, a string or []byte (sent
// raw) or any other value (sent as JSON).
func Body(t testing.TB, body any) io.Reader {
	t.Helper()
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return strings.NewReader(b)
	case []byte:
		return bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("marshal body: %v", err)
		}
		return bytes.NewReader(raw)
	}
}

// Request builds a request to url with header (sent as spelled, names not
// canonicalized) and a body as Body takes it.
func Request(t testing.TB, method, url string, header http.Header, body any) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, Body(t, body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return req
}

// Do sends a request to path (absolute from the server root) with key in
// X-API-KEY (when not empty). body is taken as Body takes it.
func (e *Env) Do(t testing.TB, method, path, key string, body any) *Response {
	t.Helper()
	return DoAt(t, e.URL, method, path, key, body)
}

// DoAt is Env.Do against the server at base (another server over the same
// database, say).
func DoAt(t testing.TB, base, method, path, key string, body any) *Response {
	t.Helper()
	header := http.Header{}
	if key != "" {
		header.Set("X-API-KEY", key)
	}
	if body != nil {
		header.Set("Content-Type", "application/json")
	}
	return Send(t, nil, Request(t, method, base+path, header, body))
}

// Admin sends a request to the Administration API (path relative to its base).
func (e *Env) Admin(t testing.TB, method, path, key string, body any) *Response {
	t.Helper()
	return e.Do(t, method, server.AdminBase+path, key, body)
}

// Probe sends a request to the client API (path relative to its base)
// with key (a probe secret or a client analytics key) in X-API-KEY.
func (e *Env) Probe(t testing.TB, method, path, key string, body any) *Response {
	t.Helper()
	return e.Do(t, method, clientapi.Base+path, key, body)
}

// GraphQLResponse is a decoded GraphQL answer.
type GraphQLResponse struct {
	Status int
	Header http.Header
	Data   map[string]any
	Errors []GraphQLError
	Raw    []byte
}

// GraphQLError is one entry of "errors".
type GraphQLError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code returns extensions.code of the first error, or "".
func (g *GraphQLResponse) Code() string {
	if len(g.Errors) == 0 {
		return ""
	}
	c, _ := g.Errors[0].Extensions["code"].(string)
	return c
}

// GraphQL posts a query to /graphql with key as a bearer token.
func (e *Env) GraphQL(t testing.TB, key, query string, vars map[string]any) *GraphQLResponse {
	t.Helper()
	return GraphQLAt(t, e.URL, key, query, vars)
}

// GraphQLAt is Env.GraphQL against the server at base (another server over
// the same database, StartServerWith).
func GraphQLAt(t testing.TB, base, key, query string, vars map[string]any) *GraphQLResponse {
	t.Helper()
	header := http.Header{"Content-Type": {"application/json"}}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
	}
	req := Request(t, http.MethodPost, base+"/graphql", header, map[string]any{"query": query, "variables": vars})
	r := Send(t, nil, req)
	out := &GraphQLResponse{Status: r.Status, Header: r.Header, Raw: r.Raw}
	var env struct {
		Data   map[string]any `json:"data"`
		Errors []GraphQLError `json:"errors"`
	}
	if err := decodeNumbers(r.Raw, &env); err != nil {
		t.Fatalf("graphql: invalid JSON: %v: %s", err, r.Raw)
	}
	out.Data, out.Errors = env.Data, env.Errors
	return out
}

// GraphQLData posts a query that must succeed and returns its data.
func (e *Env) GraphQLData(t testing.TB, key, query string, vars map[string]any) map[string]any {
	t.Helper()
	g := e.GraphQL(t, key, query, vars)
	if g.Status != http.StatusOK || len(g.Errors) > 0 || g.Data == nil {
		t.Fatalf("graphql: status %d: %s", g.Status, g.Raw)
	}
	return g.Data
}

// GraphQLFail posts a query that must fail and returns the answer and its
// first error.
func (e *Env) GraphQLFail(t testing.TB, key, query string, vars map[string]any) (*GraphQLResponse, GraphQLError) {
	t.Helper()
	g := e.GraphQL(t, key, query, vars)
	if len(g.Errors) == 0 {
		t.Fatalf("want an error, got %s", g.Raw)
	}
	return g, g.Errors[0]
}
