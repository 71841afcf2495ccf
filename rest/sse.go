package rest

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/rawjson"
	"github.com/fleetgraph/fleetgraph/respond"
)

// Server-Sent Events in the AI SDK's UI message stream protocol
// (Route.SSE). A route with SSE answers a request that accepts
// text/event-stream from its SSE operation, a GraphQL subscription whose
// events are the protocol's chunks: each becomes one `data: <chunk>` event,
// and `data: [DONE]` ends the stream. The subscription's resolver answers
// only once the work has begun well (the first model call answered), so a
// refusal before that (403, 404, 422, 429, 502, 503) is an ordinary JSON
// error answer with its status; a failure later is an error chunk the
// resolver sends.

// EventStreamContentType is the content type of SSE answers.
const EventStreamContentType = "text/event-stream"

// UIMessageStreamHeader marks a stream as the AI SDK's UI message stream.
const UIMessageStreamHeader = "x-vercel-ai-ui-message-stream"

// acceptsEventStream: the request's Accept names text/event-stream.
func acceptsEventStream(r *http.Request) bool {
	for _, h := range r.Header.Values("Accept") {
		for _, part := range strings.Split(h, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == EventStreamContentType {
				return true
			}
		}
	}
	return false
}

func (a *Adapter) sse(w http.ResponseWriter, r *http.Request, rt Route, vars map[string]any) {
	op, ok := a.ops[rt.SSE]
	if !ok {
		respond.Error(w, http.StatusInternalServerError, "")
		return
	}
	ctx := budget.With(graphql.StartOperationTrace(r.Context()), a.answerBytes)
	params := &graphql.RawParams{Query: op.Document, OperationName: op.Name, Variables: vars, Headers: r.Header}
	rc, errs := a.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		status, body := errorResponse(errs)
		respond.JSON(w, status, body)
		return
	}
	handle, ctx := a.exec.DispatchOperation(ctx, rc)
	resp := handle(ctx)
	if resp == nil {
		respond.Error(w, http.StatusInternalServerError, "")
		return
	}
	if len(resp.Errors) > 0 {
		writeErrors(w, resp.Errors)
		return
	}
	h := w.Header()
	h.Set("Content-Type", EventStreamContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set(UIMessageStreamHeader, "v1")
	w.WriteHeader(rt.Status)
	flusher, _ := w.(http.Flusher)
	for ; resp != nil; resp = handle(ctx) {
		if len(resp.Errors) > 0 {
			_, body := errorResponse(resp.Errors)
			chunk, _ := json.Marshal(map[string]string{"type": "error", "errorText": body.Message})
			writeEvent(w, chunk)
			break
		}
		if !writeEvent(w, rawjson.OnlyValue(resp.Data)) {
			return // the client went away
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	writeEvent(w, []byte("[DONE]"))
	if flusher != nil {
		flusher.Flush()
	}
}

func writeEvent(w http.ResponseWriter, data []byte) bool {
	_, err := w.Write(append(append([]byte("data: "), data...), '\n', '\n'))
	return err == nil
}

// RunOperation executes the stored operation name with ctx's caller and
// answers the value of its data's only field; a GraphQL error becomes the
// error of its class (chat.OperationRunner, for the assistant's tools).
func (a *Adapter) RunOperation(ctx context.Context, name string, vars map[string]any) (json.RawMessage, error) {
	op, ok := a.ops[name]
	if !ok {
		return nil, apierr.Errorf(apierr.ErrBadRequest, "no operation %s", name)
	}
	ctx = budget.With(graphql.StartOperationTrace(ctx), a.answerBytes)
	params := &graphql.RawParams{Query: op.Document, OperationName: op.Name, Variables: vars}
	rc, errs := a.exec.CreateOperationContext(ctx, params)
	var resp *graphql.Response
	if errs != nil {
		resp = a.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
	} else {
		handle, hctx := a.exec.DispatchOperation(ctx, rc)
		resp = budget.Within(hctx, handle(hctx))
	}
	if len(resp.Errors) > 0 {
		return nil, operationError(resp.Errors)
	}
	return rawjson.OnlyValue(resp.Data), nil
}

func operationError(errs gqlerror.List) error {
	code, _ := errs[0].Extensions["code"].(string)
	class := apierr.ByCode(code)
	if class == apierr.ErrInternal {
		return apierr.ErrInternal
	}
	return apierr.Errorf(class, "%s", errs[0].Message)
}
