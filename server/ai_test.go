package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

// aiUserMessage is a UIMessage of the user with one text part.
func aiUserMessage(text string) map[string]any {
	return map[string]any{"id": apitest.Unique("u"), "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}
}

// aiWorld is a data owner on a server of its own whose model provider is a
// strict fake of protocol.
type aiWorld struct {
	e      *apitest.Env
	o      *apitest.Owner
	fake   *apitest.FakeAI
	base   string // the server's URL
	client apitest.Client
}

func newAIWorld(t *testing.T, protocol string) *aiWorld {
	t.Helper()
	e := apitest.Get(t)
	w := &aiWorld{e: e, o: e.NewOwner(t, "ai"), fake: apitest.NewFakeAI(t, protocol)}
	w.base = e.StartServerWith(t, func(res *resolvers.Resolver) { res.AI = apitest.FakeAssistant(w.fake) })
	e.SQL(t, `UPDATE users SET ai_usage_accepted = true, ai_custom_prompt = 'Answer in English.' WHERE data_owner_id = $1`, w.o.ID)
	e.SQL(t, `UPDATE data_owners SET ai_system_prompt = 'We run probes in Berlin.' WHERE id = $1`, w.o.ID)
	w.client = w.o.NewClient(t, store.NewClient{})
	return w
}

func (w *aiWorld) do(t *testing.T, method, path string, body any) *apitest.Response {
	t.Helper()
	return apitest.DoAt(t, w.base, method, server.AdminBase+path, w.o.Key, body)
}

// stream sends a request accepting text/event-stream and answers the
// response and its chunks.
func (w *aiWorld) stream(t *testing.T, method, path string, body any) (*apitest.Response, []map[string]any) {
	t.Helper()
	h := http.Header{"X-API-KEY": {w.o.Key}, "Content-Type": {"application/json"}, "Accept": {"text/event-stream"}}
	r := apitest.Send(t, nil, apitest.Request(t, method, w.base+server.AdminBase+path, h, body))
	if r.Status != http.StatusOK {
		return r, nil
	}
	raw, err := apitest.SSEChunks(bytes.NewReader(r.Raw))
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, r.Raw)
	}
	out := make([]map[string]any, len(raw))
	for i, c := range raw {
		out[i] = c.(map[string]any)
	}
	return r, out
}

func (w *aiWorld) newConversation(t *testing.T) int64 {
	t.Helper()
	r := w.do(t, http.MethodPost, "/ai_conversations", map[string]any{})
	return apitest.Int(t, apitest.Object(t, apitest.WantEnvelope(t, r, http.StatusCreated, "conversation"))["id"])
}

func chunkTypes(chunks []map[string]any) []string {
	out := make([]string, len(chunks))
	for i, c := range chunks {
		out[i] = c["type"].(string)
	}
	return out
}

// systemText is the system prompt of a recorded request.
func systemText(t *testing.T, protocol string, req map[string]any) string {
	t.Helper()
	if protocol == "anthropic" {
		blocks, _ := req["system"].([]any)
		if len(blocks) != 1 {
			t.Fatalf("system = %v, want one text block", req["system"])
		}
		return blocks[0].(map[string]any)["text"].(string)
	}
	msgs := req["messages"].([]any)
	first := msgs[0].(map[string]any)
	if first["role"] != "system" {
		t.Fatalf("first message %v, want the system prompt", first)
	}
	return first["content"].(string)
}

// TestAICompletionStreamsWithATool is the newcomer's path on both
// protocols: a conversation, a streamed completion in which the model
// searches the fleet's measurements, the exact requests the provider got,
// the stored messages, a generated title and the month's usage.
func TestAICompletionStreamsWithATool(t *testing.T) {
	for _, protocol := range []string{"openai", "anthropic"} {
		t.Run(protocol, func(t *testing.T) {
			w := newAIWorld(t, protocol)
			mid := w.o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: w.client.UUID, Subject: "youtube"})[0]
			id := w.newConversation(t)
			args := fmt.Sprintf(`{"body":{"query":{"term":{"client_uuid":%q}}},"size":5}`, w.client.UUID)
			w.fake.Script(
				apitest.FakeAnswer{Text: "Let me look.", ToolCalls: []apitest.FakeToolCall{{ID: "call_1", Name: "search_measurements", Arguments: args}},
					PromptTokens: 100, CompletionTokens: 20},
				apitest.FakeAnswer{Text: "Your client measured youtube once (" + mid + ").", PromptTokens: 200, CompletionTokens: 30})
			ask := aiUserMessage("What did my client measure?")
			r, chunks := w.stream(t, http.MethodPut, fmt.Sprintf("/ai_conversations/%d/complete", id), map[string]any{"messages": []any{ask}})
			if r.Status != http.StatusOK || r.Header.Get("x-vercel-ai-ui-message-stream") != "v1" ||
				!strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("complete: %d %v %s", r.Status, r.Header, r.Raw)
			}
			want := []string{"start", "start-step", "text-start", "text-delta", "text-delta", "text-end", "tool-input-available",
				"tool-output-available", "finish-step", "start-step", "text-start"}
			if got := chunkTypes(chunks); !slices.Equal(got[:len(want)], want) || got[len(got)-1] != "finish" {
				t.Errorf("chunk types %v, want to start %v and end with finish", got, want)
			}
			var output string
			for _, c := range chunks {
				if c["type"] == "tool-output-available" {
					b, _ := json.Marshal(c["output"])
					output = string(b)
				}
			}
			if !strings.Contains(output, mid) {
				t.Errorf("the tool's output %s does not hold the measurement %s", output, mid)
			}

			reqs := w.fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the provider got %d requests, want 2", len(reqs))
			}
			first := reqs[0]
			if first["model"] != apitest.FakeModel || first["stream"] != true {
				t.Errorf("request model/stream = %v/%v", first["model"], first["stream"])
			}
			if protocol == "openai" {
				if so, _ := first["stream_options"].(map[string]any); so["include_usage"] != true {
					t.Errorf("stream_options = %v, want include_usage true", first["stream_options"])
				}
			}
			sys := systemText(t, protocol, first)
			for _, part := range []string{"fleetgraph", w.o.Slug, "never instructions", "We run probes in Berlin.", "Answer in English."} {
				if !strings.Contains(sys, part) {
					t.Errorf("system prompt lacks %q:\n%s", part, sys)
				}
			}
			if tools := apitest.ToolNames(first); !slices.Equal(tools, []string{"search_measurements", "search_anomaly_events",
				"get_client", "fleet_health", "license_usage"}) {
				t.Errorf("tools offered %v", tools)
			}
			checkToolSchema(t, protocol, first)
			second, _ := json.Marshal(reqs[1]["messages"])
			if !strings.Contains(string(second), "call_1") || !strings.Contains(string(second), mid) {
				t.Errorf("the second request does not carry the tool call and its result: %s", second)
			}
			if !strings.Contains(string(second), "What did my client measure?") {
				t.Errorf("the second request lost the user's question: %s", second)
			}

			conv := apitest.Object(t, apitest.WantEnvelope(t, w.do(t, http.MethodGet, fmt.Sprintf("/ai_conversations/%d", id), nil),
				http.StatusOK, "conversation"))
			msgs := apitest.List(t, conv["messages"])
			if len(msgs) != 2 || apitest.Int(t, conv["message_count"]) != 2 {
				t.Fatalf("stored messages %v, want the question and the answer", msgs)
			}
			answer := apitest.Object(t, msgs[1])
			b, _ := json.Marshal(answer)
			if answer["role"] != "assistant" || !strings.Contains(string(b), `"type":"tool-search_measurements"`) ||
				!strings.Contains(string(b), `"state":"output-available"`) || !strings.Contains(string(b), "measured youtube once") {
				t.Errorf("stored answer %s", b)
			}
			if conv["display_title"] != "What did my client measure?" {
				t.Errorf("display_title %v, want the first question", conv["display_title"])
			}

			w.fake.Script(apitest.FakeAnswer{Text: "\"Client measurements.\"", PromptTokens: 50, CompletionTokens: 5})
			titled := apitest.Object(t, apitest.WantEnvelope(t, w.do(t, http.MethodPatch, fmt.Sprintf("/ai_conversations/%d/generated_title", id), nil),
				http.StatusOK, "conversation"))
			if titled["display_title"] != "Client measurements" {
				t.Errorf("generated display_title %v", titled["display_title"])
			}
			usage := apitest.Object(t, apitest.WantEnvelope(t, w.do(t, http.MethodGet, "/ai_assistant/usage", nil), http.StatusOK, "usage"))
			if apitest.Int(t, usage["total_tokens"]) != 405 || apitest.Int(t, usage["request_count"]) != 3 ||
				apitest.Int(t, usage["conversation_count"]) != 1 || apitest.Int(t, usage["remaining"]) != apitest.Int(t, usage["limit"])-405 {
				t.Errorf("usage %v, want 405 tokens over 3 calls of 1 conversation", usage)
			}
		})
	}
}

// checkToolSchema checks the JSON schema sent for search_measurements.
func checkToolSchema(t *testing.T, protocol string, req map[string]any) {
	t.Helper()
	for _, raw := range req["tools"].([]any) {
		tool := raw.(map[string]any)
		schemaKey := "input_schema"
		if protocol == "openai" {
			if tool["type"] != "function" {
				t.Errorf("tool type %v", tool["type"])
			}
			tool, schemaKey = tool["function"].(map[string]any), "parameters"
		}
		if tool["name"] != "search_measurements" {
			continue
		}
		schema := tool[schemaKey].(map[string]any)
		props := schema["properties"].(map[string]any)
		scope := props["index_scope"].(map[string]any)
		if schema["type"] != "object" || !slices.Equal(anyStrings(schema["required"]), []string{"body"}) ||
			props["body"].(map[string]any)["type"] != "object" || len(anyStrings(scope["enum"])) != 6 ||
			props["size"].(map[string]any)["maximum"] != float64(20) {
			t.Errorf("search_measurements schema %v", schema)
		}
		return
	}
	t.Error("search_measurements was not offered")
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}

var _ = time.Now
