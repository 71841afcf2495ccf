package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/rest"
)

// graphQLPost is gqlgen's POST transport (transport.POST, whose Supports it
// keeps) with one change: the response's data, which the executor has
// already written as JSON, goes out as it is. transport.POST passes it
// through json.Marshal, which scans and re-validates every byte of it (a
// tenth of the CPU of a 50-client query). Headers, statuses, error
// messages and bytes are those of transport.POST (server/transport_test.go
// compares both).
type graphQLPost struct {
	transport.POST
	// answerBytes is the budget of one operation's answer (package budget).
	answerBytes int64
}

const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

func (h graphQLPost) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := budget.With(r.Context(), h.answerBytes)
	contentType := responseMediaType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	var body bytes.Buffer
	if _, err := body.ReadFrom(r.Body); err != nil {
		writeGraphQLResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("could not read request body: %+v", err)}))
		return
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(body.Bytes()))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		writeGraphQLResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf(
			"json request body could not be decoded: %+v body:%s", err, body.String())}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	status, resp := execute(ctx, w, exec, params, contentType, false)
	if status != 0 {
		w.WriteHeader(status)
	}
	writeGraphQLResponse(w, resp)
}

// execute runs params as transport.POST does and answers the response and
// its status (0: 200); with queriesOnly (GET) an operation other than a
// query is refused with a 405 before it runs.
func execute(ctx context.Context, w http.ResponseWriter, exec graphql.GraphExecutor, params *graphql.RawParams,
	contentType string, queriesOnly bool) (int, *graphql.Response) {
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		status := 0
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
			if contentType == mediaGraphQLResponse {
				status = http.StatusBadRequest
			}
		}
		return status, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr)
	}
	if op := rc.Doc.Operations.ForName(rc.OperationName); queriesOnly && (op == nil || op.Operation != ast.Query) {
		w.Header().Set("Allow", http.MethodPost)
		return http.StatusMethodNotAllowed, &graphql.Response{Errors: gqlerror.List{gqlerror.Errorf(
			"GET requests only allow query operations: send mutations with POST")}}
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	resp := budget.Within(ctx, rest.Answered(ctx, responses(ctx)))
	return unavailableStatus(w, resp.Errors), resp
}

// graphQLGet answers queries sent as GET /graphql?query=&operationName=
// &variables=&extensions= (GraphQL over HTTP), typically an automatic
// persisted query's hash without the query (persisted.go), so that a
// dashboard's repeated queries are short URLs. Queries only: a mutation is
// a 405. A successful answer is cacheable by the caller alone
// (Cache-Control: private, no-cache; Vary on the key headers) with an
// ETag, so that the browser revalidates it and an unchanged answer is a
// 304 without a body; an answer with errors is not stored (no-store).
type graphQLGet struct {
	answerBytes int64
}

func (graphQLGet) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") == ""
}

func (h graphQLGet) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := budget.With(r.Context(), h.answerBytes)
	contentType := responseMediaType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Vary", "Authorization, X-API-KEY")
	start := graphql.Now()
	params := &graphql.RawParams{Headers: r.Header}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err == nil {
		params.Query, params.OperationName = q.Get("query"), q.Get("operationName")
		err = decodeParam(q, "variables", &params.Variables)
	}
	if err == nil {
		err = decodeParam(q, "extensions", &params.Extensions)
	}
	if err != nil {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusBadRequest)
		writeGraphQLResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("query string could not be decoded: %v", err)}))
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	status, resp := execute(ctx, w, exec, params, contentType, true)
	if status != 0 || len(resp.Errors) > 0 {
		w.Header().Set("Cache-Control", "no-store")
		if status != 0 {
			w.WriteHeader(status)
		}
		writeGraphQLResponse(w, resp)
		return
	}
	var body bytes.Buffer
	writeGraphQLResponse(&body, resp)
	sum := sha256.Sum256(body.Bytes())
	etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("Cache-Control", "private, no-cache")
	w.Header().Set("ETag", etag)
	if ifNoneMatch(r.Header.Get("If-None-Match"), etag) {
		w.Header().Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(body.Bytes())
}

// decodeParam decodes the JSON object of query parameter name, if any.
func decodeParam(q url.Values, name string, v *map[string]any) error {
	raw := q.Get(name)
	if raw == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ifNoneMatch reports whether an If-None-Match header names etag (weak
// comparison, RFC 9110 13.1.2) or is *.
func ifNoneMatch(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

// responseMediaType is transport.POST's choice of the response's media
// type from the Accept header.
func responseMediaType(accept string) string {
	if accept == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// needsHTMLEscape tells whether data holds a byte json.Marshal escapes in a
// raw message: <, >, & or U+2028, U+2029 (E2 80 A8, E2 80 A9 in UTF-8).
// bytes.ContainsAny with the two runes in its set decodes data rune by
// rune (8 % of the CPU of a 2,000-client answer, issue 28); IndexByte and
// Index run over it in vector instructions.
func needsHTMLEscape(data []byte) bool {
	if bytes.IndexByte(data, '<') >= 0 || bytes.IndexByte(data, '>') >= 0 || bytes.IndexByte(data, '&') >= 0 {
		return true
	}
	for rest := data; ; {
		i := bytes.Index(rest, []byte("\xe2\x80"))
		if i < 0 || i+2 >= len(rest) {
			return false
		}
		if rest[i+2] == 0xa8 || rest[i+2] == 0xa9 {
			return true
		}
		rest = rest[i+2:]
	}
}

var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeGraphQLResponse writes resp as json.Marshal would, with its data
// copied instead of re-validated (only escaped as json.Marshal escapes:
// <, >, &, U+2028 and U+2029). Data that needs no escaping is written to w
// as it is, between the bytes before and after it, not copied into the
// buffer first: a list's answer is megabytes.
func writeGraphQLResponse(w io.Writer, resp *graphql.Response) {
	head, err := json.Marshal(struct {
		Errors gqlerror.List `json:"errors,omitempty"`
	}{resp.Errors})
	if err != nil {
		panic(err)
	}
	tail, err := json.Marshal(struct {
		Label      string         `json:"label,omitempty"`
		Path       ast.Path       `json:"path,omitempty"`
		HasNext    *bool          `json:"hasNext,omitempty"`
		Extensions map[string]any `json:"extensions,omitempty"`
	}{resp.Label, resp.Path, resp.HasNext, resp.Extensions})
	if err != nil {
		panic(err)
	}
	buf := responseBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			responseBuffers.Put(buf)
		}
	}()
	buf.Write(head[:len(head)-1]) // without its closing brace
	if len(head) > 2 {
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	switch data := resp.Data; {
	case len(data) == 0:
		buf.WriteString("null")
	case needsHTMLEscape(data):
		buf.Grow(len(data) + len(tail) + 10)
		json.HTMLEscape(buf, data)
	default:
		_, _ = w.Write(buf.Bytes())
		_, _ = w.Write(data)
		buf.Reset()
	}
	if len(tail) > 2 {
		buf.WriteByte(',')
		buf.Write(tail[1:])
	} else {
		buf.WriteByte('}')
	}
	_, _ = w.Write(buf.Bytes())
}
