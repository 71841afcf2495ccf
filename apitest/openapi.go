package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/server"
)

// Every REST answer a test reads through Send is checked against the
// OpenAPI document the answering server serves at <base>/openapi.json
// (kin-openapi's response validation: status, headers, body types,
// required and unknown keys, nullability, formats); a mismatch fails the
// test. Answers that no operation of the document describes (an unknown
// path, a method the route does not take, HEAD, OPTIONS) and compressed
// bodies are not checked.

func init() {
	// Scroll streams: one JSON document a line, checked as an array.
	openapi3filter.RegisterBodyDecoder(rest.NDJSONContentType,
		func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			var lines []any
			sc := bufio.NewScanner(body)
			sc.Buffer(make([]byte, 1<<20), 64<<20)
			for sc.Scan() {
				var v any
				if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
					return nil, fmt.Errorf("NDJSON line %d: %w", len(lines)+1, err)
				}
				lines = append(lines, v)
			}
			return lines, sc.Err()
		})
	// AI completions: SSE events, their data checked as an array of chunks.
	openapi3filter.RegisterBodyDecoder(rest.EventStreamContentType,
		func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			return SSEChunks(body)
		})
}

// SSEChunks reads Server-Sent Events whose data are JSON chunks, ended by
// data: [DONE] (which must come last).
func SSEChunks(body io.Reader) ([]any, error) {
	var chunks []any
	done := false
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		switch {
		case !ok:
			return nil, fmt.Errorf("SSE line %q is not a data line", line)
		case done:
			return nil, fmt.Errorf("SSE event after [DONE]: %s", data)
		case data == "[DONE]":
			done = true
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			return nil, fmt.Errorf("SSE event %d: %w", len(chunks)+1, err)
		}
		chunks = append(chunks, v)
	}
	if !done && sc.Err() == nil {
		return chunks, fmt.Errorf("SSE stream ended without data: [DONE]")
	}
	return chunks, sc.Err()
}

// contract is one served OpenAPI document, loaded once per server and API.
type contract struct {
	once sync.Once
	doc  *openapi3.T
	err  error
}

var contracts sync.Map // "<scheme://host><base>" -> *contract

// restBases are the base paths of the APIs with an OpenAPI document: the
// REST APIs and the client API.
var restBases = []string{server.AdminBase, server.ExportBase, clientapi.Base}

// checkContract validates a REST answer against the served document.
func checkContract(t testing.TB, req *http.Request, resp *Response) {
	t.Helper()
	if err := ContractError(req, resp); err != nil {
		t.Errorf("%s %s: %v\nbody: %.1500s", req.Method, req.URL.RequestURI(), err, resp.Raw)
	}
}

// ContractError checks an answer to req against the OpenAPI document of
// the server and API req went to: nil when it matches, or when no
// operation of the document describes it.
func ContractError(req *http.Request, resp *Response) error {
	if req.Method == http.MethodHead || req.Method == http.MethodOptions || resp.Header.Get("Content-Encoding") != "" {
		return nil
	}
	base := ""
	for _, b := range restBases {
		if strings.HasPrefix(req.URL.Path, b+"/") {
			base = b
		}
	}
	if base == "" || req.URL.Path == base+server.OpenAPIPath {
		return nil
	}
	doc, err := served(req.URL, base)
	if err != nil {
		return fmt.Errorf("the server's OpenAPI document: %w", err)
	}
	if doc == nil {
		return nil // the server is gone; the test sees that itself
	}
	route, params := findRoute(doc, req.Method, strings.TrimPrefix(req.URL.EscapedPath(), base))
	if route == nil {
		return nil
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.Status,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(resp.Raw)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("the answer (status %d) does not match the served OpenAPI document (%s %s): %w",
			resp.Status, route.Method, route.Path, err)
	}
	return nil
}

// served loads (once) the document of the API at base of the server u
// names; nil, nil when the server does not answer.
func served(u *url.URL, base string) (*openapi3.T, error) {
	key := u.Scheme + "://" + u.Host + base
	c, _ := contracts.LoadOrStore(key, &contract{})
	ct := c.(*contract)
	ct.once.Do(func() {
		resp, err := http.Get(key + server.OpenAPIPath)
		if err != nil {
			contracts.Delete(key) // try again next time
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			ct.err = fmt.Errorf("GET %s: status %d, %v", key+server.OpenAPIPath, resp.StatusCode, err)
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(raw)
		if err == nil {
			err = doc.Validate(loader.Context)
		}
		ct.doc, ct.err = doc, err
	})
	return ct.doc, ct.err
}

// findRoute finds the operation of method on path (relative to the base),
// preferring the template with the most literal segments, as chi does.
func findRoute(doc *openapi3.T, method, path string) (*routers.Route, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *routers.Route
	var bestParams map[string]string
	bestLiteral := -1
	for tmpl, item := range doc.Paths.Map() {
		op := item.GetOperation(method)
		if op == nil {
			continue
		}
		tsegs := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(tsegs) != len(segs) {
			continue
		}
		params, literal := map[string]string{}, 0
		for i, ts := range tsegs {
			switch {
			case strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}") && segs[i] != "":
				v, err := url.PathUnescape(segs[i])
				if err != nil {
					v = segs[i]
				}
				params[ts[1:len(ts)-1]] = v
			case ts == segs[i]:
				literal++
			default:
				params = nil
			}
			if params == nil {
				break
			}
		}
		if params != nil && literal > bestLiteral {
			best = &routers.Route{Spec: doc, Path: tmpl, PathItem: item, Method: method, Operation: op}
			bestParams, bestLiteral = params, literal
		}
	}
	return best, bestParams
}
