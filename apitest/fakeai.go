package apitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/assistant"
)

// FakeAI is a model provider on 127.0.0.1 speaking the OpenAI-compatible
// chat completions protocol or Anthropic's Messages API, always streaming.
// It records every request body (for tests to check exactly what fleetgraph
// sent) and answers the scripted answers in turn, then Default.
type FakeAI struct {
	URL      string // the base URL to configure (…/v1 for OpenAI)
	Protocol string // "openai" or "anthropic"
	srv      *httptest.Server

	mu       sync.Mutex
	requests []map[string]any
	headers  []http.Header
	script   []FakeAnswer
	Default  FakeAnswer
}

// FakeAnswer is one scripted answer: text and/or tool calls with usage, or
// an error status, or a stream that breaks off after its text.
type FakeAnswer struct {
	Text             string
	ToolCalls        []FakeToolCall
	PromptTokens     int64
	CompletionTokens int64
	Status           int           // not 0 or 200: an error answer with this status
	BreakOff         bool          // the stream ends after the text, without finishing
	Delay            time.Duration // waited before answering (a slow model)
}

// FakeToolCall is a tool call the fake model makes.
type FakeToolCall struct {
	ID, Name, Arguments string
}

// NewFakeAI starts a fake provider of protocol ("openai" or "anthropic");
// it stops when t ends.
func NewFakeAI(t testing.TB, protocol string) *FakeAI {
	t.Helper()
	f := startFakeAI(protocol)
	t.Cleanup(f.srv.Close)
	return f
}

func startFakeAI(protocol string) *FakeAI {
	f := &FakeAI{Protocol: protocol, Default: FakeAnswer{Text: "ok", PromptTokens: 10, CompletionTokens: 2}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL
	if protocol == "openai" {
		f.URL += "/v1"
	}
	return f
}

// Script queues answers for the next calls.
func (f *FakeAI) Script(answers ...FakeAnswer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, answers...)
}

// Requests are the request bodies received so far.
func (f *FakeAI) Requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.requests...)
}

// Headers are the request headers received so far.
func (f *FakeAI) Headers() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]http.Header(nil), f.headers...)
}

func (f *FakeAI) next(r *http.Request) (FakeAnswer, error) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return FakeAnswer{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, body)
	f.headers = append(f.headers, r.Header.Clone())
	if len(f.script) == 0 {
		return f.Default, nil
	}
	a := f.script[0]
	f.script = f.script[1:]
	return a, nil
}

func (f *FakeAI) serve(w http.ResponseWriter, r *http.Request) {
	wantPath := "/v1/chat/completions"
	if f.Protocol == "anthropic" {
		wantPath = "/v1/messages"
	}
	if r.Method != http.MethodPost || r.URL.Path != wantPath {
		http.Error(w, "fake AI: unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	a, err := f.next(r)
	if err != nil {
		http.Error(w, "fake AI: body is not JSON", http.StatusBadRequest)
		return
	}
	time.Sleep(a.Delay)
	if a.Status != 0 && a.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.Status)
		if f.Protocol == "anthropic" {
			fmt.Fprintf(w, `{"type":"error","error":{"type":"api_error","message":"scripted %d"}}`, a.Status)
		} else {
			fmt.Fprintf(w, `{"error":{"message":"scripted %d","type":"server_error","code":null}}`, a.Status)
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if f.Protocol == "anthropic" {
		writeAnthropic(w, a)
	} else {
		writeOpenAI(w, a)
	}
}

func sseData(w io.Writer, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// textPieces splits text into a few deltas.
func textPieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(len(s), 8)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func writeOpenAI(w io.Writer, a FakeAnswer) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sseData(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range textPieces(a.Text) {
		sseData(w, "", chunk(map[string]any{"content": p}, nil))
	}
	if a.BreakOff {
		return
	}
	for i, c := range a.ToolCalls {
		sseData(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		sseData(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": c.Arguments}}}}, nil))
	}
	finish := "stop"
	if len(a.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	sseData(w, "", chunk(map[string]any{}, finish))
	sseData(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": a.PromptTokens, "completion_tokens": a.CompletionTokens,
			"total_tokens": a.PromptTokens + a.CompletionTokens}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func writeAnthropic(w io.Writer, a FakeAnswer) {
	sseData(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message",
		"role": "assistant", "model": "fake", "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": a.PromptTokens, "output_tokens": 1}}})
	idx := 0
	if a.Text != "" {
		sseData(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range textPieces(a.Text) {
			sseData(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		}
		if a.BreakOff {
			return
		}
		sseData(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, c := range a.ToolCalls {
		sseData(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		sseData(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": c.Arguments}})
		sseData(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := "end_turn"
	if len(a.ToolCalls) > 0 {
		stop = "tool_use"
	}
	sseData(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": a.CompletionTokens}})
	sseData(w, "message_stop", map[string]any{"type": "message_stop"})
}

// ToolNames are the names of the tools a recorded request offered.
func ToolNames(req map[string]any) []string {
	tools, _ := req["tools"].([]any)
	var out []string
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if fn, ok := m["function"].(map[string]any); ok {
			m = fn
		}
		if n, ok := m["name"].(string); ok {
			out = append(out, n)
		}
	}
	return out
}

// FakeModel is the model name the fakes are configured with.
const FakeModel = "fake-model-1"

// FakeAssistant is the assistant configured for fake f (model FakeModel,
// API key "test-key", the default monthly limit).
func FakeAssistant(f *FakeAI) *assistant.Assistant {
	a, err := assistant.New(assistant.Config{Provider: f.Protocol, BaseURL: f.URL, APIKey: "test-key", Model: FakeModel})
	if err != nil {
		panic(err)
	}
	return a
}
