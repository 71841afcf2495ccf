package server

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/budget"
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
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			if contentType == mediaGraphQLResponse {
				w.WriteHeader(http.StatusBadRequest)
			} else {
				w.WriteHeader(http.StatusUnprocessableEntity)
			}
		}
		writeGraphQLResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	resp := budget.Within(ctx, rest.Answered(ctx, responses(ctx)))
	if status := unavailableStatus(w, resp.Errors); status != 0 {
		w.WriteHeader(status)
	}
	writeGraphQLResponse(w, resp)
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

var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeGraphQLResponse writes resp as json.Marshal would, with its data
// copied instead of re-validated (only escaped as json.Marshal escapes:
// <, >, &, U+2028 and U+2029).
func writeGraphQLResponse(w http.ResponseWriter, resp *graphql.Response) {
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
	buf.Grow(len(head) + len(resp.Data) + len(tail) + 10)
	buf.Write(head[:len(head)-1]) // without its closing brace
	if len(head) > 2 {
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	switch data := resp.Data; {
	case len(data) == 0:
		buf.WriteString("null")
	case bytes.ContainsAny(data, "<>&\u2028\u2029"):
		json.HTMLEscape(buf, data)
	default:
		buf.Write(data)
	}
	if len(tail) > 2 {
		buf.WriteByte(',')
		buf.Write(tail[1:])
	} else {
		buf.WriteByte('}')
	}
	_, _ = w.Write(buf.Bytes())
}
