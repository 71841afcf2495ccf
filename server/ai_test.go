package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/detector"
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
			hdr := w.fake.Headers()[0]
			if key := hdr.Get("Authorization") + hdr.Get("X-Api-Key"); key != "Bearer test-key" && key != "test-key" {
				t.Errorf("the provider got key %q, want the configured test-key", key)
			}
			first := reqs[0]
			if protocol == "anthropic" && (first["max_tokens"] != float64(2048) || hdr.Get("Anthropic-Version") == "") {
				t.Errorf("anthropic request max_tokens %v, anthropic-version %q", first["max_tokens"], hdr.Get("Anthropic-Version"))
			}
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

// TestAIRefusals: what is refused before the provider is contacted, and
// how the provider's failures read (never a 500).
func TestAIRefusals(t *testing.T) {
	w := newAIWorld(t, "openai")
	id := w.newConversation(t)
	path := fmt.Sprintf("/ai_conversations/%d/complete", id)
	ask := func() map[string]any { return map[string]any{"message": aiUserMessage("Anything new?")} }

	t.Run("a user who has not accepted AI usage is refused", func(t *testing.T) {
		w.e.SQL(t, `UPDATE users SET ai_usage_accepted = NULL WHERE data_owner_id = $1`, w.o.ID)
		defer w.e.SQL(t, `UPDATE users SET ai_usage_accepted = true WHERE data_owner_id = $1`, w.o.ID)
		apitest.WantMessage(t, w.do(t, http.MethodPut, path, ask()), http.StatusForbidden, "ai_usage_accepted")
		if n := len(w.fake.Requests()); n != 0 {
			t.Errorf("the provider got %d requests", n)
		}
	})
	t.Run("a completion needs a new user message", func(t *testing.T) {
		r := w.do(t, http.MethodPut, path, map[string]any{"messages": []any{map[string]any{"id": "a1", "role": "assistant", "parts": []any{}}}})
		apitest.WantMessage(t, r, http.StatusUnprocessableEntity, "user message")
		r = w.do(t, http.MethodPut, path, map[string]any{"message": map[string]any{"role": "robot", "parts": "no"}})
		apitest.WantMessage(t, r, http.StatusUnprocessableEntity, "role")
	})
	for _, c := range []struct {
		name   string
		answer apitest.FakeAnswer
		status int
		says   string
	}{
		{"the provider rate limiting is a 429", apitest.FakeAnswer{Status: 429}, http.StatusTooManyRequests, "rate limiting"},
		{"the provider failing is a 502", apitest.FakeAnswer{Status: 500}, http.StatusBadGateway, "HTTP 500"},
		{"the provider refusing the key is a 502 naming the setting", apitest.FakeAnswer{Status: 401}, http.StatusBadGateway, "FLEETGRAPH_AI_API_KEY"},
		{"the provider unavailable is a 503", apitest.FakeAnswer{Status: 503}, http.StatusServiceUnavailable, "unavailable"},
		{"a stream that breaks off before the answer is a 502", apitest.FakeAnswer{BreakOff: true}, http.StatusBadGateway, "broke off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.fake.Script(c.answer)
			apitest.WantMessage(t, w.do(t, http.MethodPut, path, ask()), c.status, c.says)
			w.fake.Script(c.answer)
			r, _ := w.stream(t, http.MethodPut, path, ask())
			apitest.WantMessage(t, r, c.status, c.says)
		})
	}
	t.Run("a stream that breaks off after text ends with an error chunk", func(t *testing.T) {
		w.fake.Script(apitest.FakeAnswer{Text: "Half an answ", BreakOff: true})
		_, chunks := w.stream(t, http.MethodPut, path, ask())
		types := chunkTypes(chunks)
		if len(types) < 2 || types[len(types)-1] != "error" || slices.Contains(types, "finish") {
			t.Fatalf("chunks %v, want text then an error chunk and no finish", types)
		}
		if !strings.Contains(chunks[len(chunks)-1]["errorText"].(string), "broke off") {
			t.Errorf("error chunk %v", chunks[len(chunks)-1])
		}
	})
	t.Run("no answer was stored by the failed calls", func(t *testing.T) {
		c := apitest.Object(t, apitest.WantEnvelope(t, w.do(t, http.MethodGet, fmt.Sprintf("/ai_conversations/%d", id), nil), 200, "conversation"))
		if n := apitest.Int(t, c["message_count"]); n != 0 {
			t.Errorf("message_count %d, want 0", n)
		}
	})
	t.Run("with the month's budget used up the call is refused before the provider", func(t *testing.T) {
		w.fake.Script(apitest.FakeAnswer{Text: "A long answer.", PromptTokens: 900, CompletionTokens: 200})
		r := w.do(t, http.MethodPut, "/ai_assistant/token_limit", map[string]any{"limit": 1000})
		apitest.WantEnvelope(t, r, http.StatusOK, "usage")
		w.e.SQL(t, `DELETE FROM ai_usage WHERE data_owner_id = $1`, w.o.ID)
		apitest.WantEnvelope(t, w.do(t, http.MethodPut, path, ask()), http.StatusOK, "conversation") // crosses the limit: finishes
		u := apitest.Object(t, apitest.WantEnvelope(t, w.do(t, http.MethodGet, "/ai_assistant/usage", nil), http.StatusOK, "usage"))
		if apitest.Int(t, u["total_tokens"]) != 1100 || apitest.Int(t, u["remaining"]) != 0 {
			t.Errorf("usage %v, want the overrun counted (1100 of 1000)", u)
		}
		before := len(w.fake.Requests())
		_, next := time.Now().UTC(), time.Date(time.Now().UTC().Year(), time.Now().UTC().Month()+1, 1, 0, 0, 0, 0, time.UTC)
		refused := w.do(t, http.MethodPut, path, ask())
		apitest.WantMessage(t, refused, http.StatusTooManyRequests, next.Format(time.RFC3339))
		if secs, err := strconv.ParseInt(refused.Header.Get("Retry-After"), 10, 64); err != nil ||
			secs < int64(time.Until(next).Seconds())-60 || secs > int64(time.Until(next).Seconds())+60 {
			t.Errorf("Retry-After %q, want the seconds until %s", refused.Header.Get("Retry-After"), next)
		}
		r, _ = w.stream(t, http.MethodPut, path, ask())
		apitest.WantMessage(t, r, http.StatusTooManyRequests, "used up")
		apitest.WantMessage(t, w.do(t, http.MethodPatch, fmt.Sprintf("/ai_conversations/%d/generated_title", id), nil),
			http.StatusTooManyRequests, "used up")
		if after := len(w.fake.Requests()); after != before {
			t.Errorf("the provider got %d more requests after the budget was used up", after-before)
		}
	})
}

// TestAINotConfigured: without a provider the status says so and every
// other AI operation answers a 503 naming the setting.
func TestAINotConfigured(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "noai")
	base := e.StartServerWith(t, func(res *resolvers.Resolver) { res.AI = nil })
	st := apitest.DoAt(t, base, http.MethodGet, server.AdminBase+"/ai_assistant/status", o.Key, nil)
	if st.Status != http.StatusOK || st.Obj(t)["enabled"] != false {
		t.Errorf("status %d %s, want enabled false", st.Status, st.Raw)
	}
	for _, c := range []struct{ method, path string }{{http.MethodGet, "/ai_conversations"}, {http.MethodPost, "/ai_conversations"},
		{http.MethodGet, "/ai_assistant/usage"}, {http.MethodPut, "/ai_conversations/1/complete"},
		{http.MethodPost, "/ai_assistant/explain_anomaly"}} {
		var body any
		if c.method != http.MethodGet {
			body = map[string]any{}
		}
		r := apitest.DoAt(t, base, c.method, server.AdminBase+c.path, o.Key, body)
		if c.path == "/ai_assistant/explain_anomaly" && r.Status == http.StatusUnprocessableEntity {
			continue // anomaly_id is required: the input is refused first
		}
		apitest.WantMessage(t, r, http.StatusServiceUnavailable, "FLEETGRAPH_AI_PROVIDER")
	}
}

// TestAIConversationsAreTheUsers: another user of the same data owner, or
// another data owner, sees none of a user's conversations (404), and an
// anomaly of another data owner cannot be explained.
func TestAIConversationsAreTheUsers(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "aimine")
	other := e.NewOwner(t, "aitheirs")
	colleague, _ := o.NewKey(t, apitest.KeyOpts{UserRole: "admin"})
	e.SQL(t, `UPDATE users SET ai_usage_accepted = true WHERE data_owner_id = ANY($1)`, []int64{o.ID, other.ID})
	c := e.AdminCreate(t, o.Key, "/ai_conversations", map[string]any{"message": aiUserMessage("Mine")})
	path := fmt.Sprintf("/ai_conversations/%d", apitest.Int(t, c["id"]))
	for name, key := range map[string]string{"a colleague": colleague, "another data owner": other.Key} {
		t.Run(name+" gets 404 on every route of the conversation", func(t *testing.T) {
			apitest.WantNotFound(t, e.Admin(t, http.MethodGet, path, key, nil), "conversation")
			apitest.WantNotFound(t, e.Admin(t, http.MethodPatch, path, key, map[string]any{"title": "x"}), "conversation")
			apitest.WantNotFound(t, e.Admin(t, http.MethodPut, path+"/complete", key, map[string]any{"message": aiUserMessage("x")}), "conversation")
			apitest.WantNotFound(t, e.Admin(t, http.MethodPatch, path+"/generated_title", key, nil), "conversation")
			apitest.WantNotFound(t, e.Admin(t, http.MethodDelete, path, key, nil), "conversation")
			list := apitest.List(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/ai_conversations", key, nil), 200, "conversations"))
			for _, item := range list {
				if apitest.Object(t, item)["id"] == c["id"] {
					t.Errorf("%s lists the conversation", name)
				}
			}
			r := e.Admin(t, http.MethodPost, "/ai_assistant/explain_anomaly", key,
				map[string]any{"anomaly_id": "rule-x::spike::1740787200", "conversation_id": c["id"]})
			apitest.WantNotFound(t, r, "conversation")
		})
	}
	t.Run("another data owner's anomaly is 404", func(t *testing.T) {
		id := apitest.Unique("rule-theirs") + "::spike::1740787200"
		other.InsertDocuments(t, "anomaly_event", anomEvent(id, "c0ffee00-0000-4000-8000-000000000000", "new"))
		apitest.WantNotFound(t, e.Admin(t, http.MethodPost, "/ai_assistant/explain_anomaly", o.Key, map[string]any{"anomaly_id": id}), "anomaly")
	})
	t.Run("another data owner's token limit is its own", func(t *testing.T) {
		apitest.WantEnvelope(t, e.Admin(t, http.MethodPut, "/ai_assistant/token_limit", other.Key, map[string]any{"limit": 5}), 200, "usage")
		u := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/ai_assistant/usage", o.Key, nil), 200, "usage"))
		if apitest.Int(t, u["limit"]) == 5 {
			t.Errorf("another data owner's limit applies here: %v", u)
		}
	})
	t.Run("usage is the data owner's own", func(t *testing.T) {
		u := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/ai_assistant/usage", other.Key, nil), 200, "usage"))
		if apitest.Int(t, u["total_tokens"]) != 0 {
			t.Errorf("another data owner's usage %v", u)
		}
	})
}

// TestAIStreamReadByTheAISDK reads a completion's stream, with a tool
// call, through the AI SDK's own reader (readUIMessageStream over its SSE
// parser and chunk schema) and validates the message with its validator
// (tools/ai-stream, the npm package ai at a pinned version).
func TestAIStreamReadByTheAISDK(t *testing.T) {
	w := newAIWorld(t, "openai")
	w.o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: w.client.UUID, Subject: "netflix"})
	id := w.newConversation(t)
	w.fake.Script(
		apitest.FakeAnswer{ToolCalls: []apitest.FakeToolCall{{ID: "call_9", Name: "fleet_health", Arguments: `{}`},
			{ID: "call_10", Name: "search_measurements", Arguments: `{"body":{"query":{"match_all":{}}},"size":3}`}},
			PromptTokens: 10, CompletionTokens: 5},
		apitest.FakeAnswer{Text: "All clients are healthy.", PromptTokens: 20, CompletionTokens: 6})
	ask := aiUserMessage("Is the fleet healthy?")
	body, _ := json.Marshal(map[string]any{"messages": []any{ask}})
	askJSON, _ := json.Marshal(ask)
	out := apitest.RunNode(t, "ai-stream", 2*time.Minute, []string{
		"FG_URL=" + fmt.Sprintf("%s%s/ai_conversations/%d/complete", w.base, server.AdminBase, id),
		"FG_KEY=" + w.o.Key, "FG_METHOD=PUT", "FG_BODY=" + string(body), "FG_USER_MESSAGE=" + string(askJSON)}, "check.mjs")
	var got struct {
		Message struct {
			ID    string           `json:"id"`
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"message"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	var types []string
	for _, p := range got.Message.Parts {
		types = append(types, p["type"].(string))
		if strings.HasPrefix(p["type"].(string), "tool-") && p["state"] != "output-available" {
			t.Errorf("tool part %v, want output-available", p)
		}
	}
	want := []string{"step-start", "tool-fleet_health", "tool-search_measurements", "step-start", "text"}
	if got.Message.Role != "assistant" || !slices.Equal(types, want) {
		t.Errorf("the AI SDK read %s, want an assistant message with parts %v", out, want)
	}
	if text := got.Message.Parts[len(got.Message.Parts)-1]["text"]; text != "All clients are healthy." {
		t.Errorf("text %v", text)
	}
	conv := apitest.Object(t, apitest.WantEnvelope(t, w.do(t, http.MethodGet, fmt.Sprintf("/ai_conversations/%d", id), nil), 200, "conversation"))
	msgs := apitest.List(t, conv["messages"])
	if stored := apitest.Object(t, msgs[len(msgs)-1]); stored["id"] != got.Message.ID {
		t.Errorf("stored answer id %v, the stream's %s", stored["id"], got.Message.ID)
	}
}

// explain streams explain_anomaly of id and answers its data-sources chunk
// and, as JSON, the messages of the one request the provider got.
func (w *aiWorld) explain(t *testing.T, id string) (map[string]any, string) {
	t.Helper()
	r, chunks := w.stream(t, http.MethodPost, "/ai_assistant/explain_anomaly", map[string]any{"anomaly_id": id})
	if r.Status != http.StatusOK {
		t.Fatalf("explain: %d %s", r.Status, r.Raw)
	}
	var sources map[string]any
	for _, c := range chunks {
		if c["type"] == "data-sources" {
			sources = c["data"].(map[string]any)
		}
	}
	reqs := w.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the provider got %d requests", len(reqs))
	}
	sent, _ := json.Marshal(reqs[0]["messages"])
	return sources, string(sent)
}

// TestAIExplainAnomaly: the explanation is built from the anomaly, its
// client, the metric's values before, during and after it and similar
// anomalies; the model gets them as data and the answer cites them.
func TestAIExplainAnomaly(t *testing.T) {
	w := newAIWorld(t, "anthropic")
	anomaly := apitest.Unique("rule-explain") + "::spike::1740787200"
	similar := apitest.Unique("rule-explain-old") + "::spike::1740700000"
	w.o.InsertDocuments(t, "anomaly_event", anomEvent(anomaly, w.client.UUID, "new"), anomEvent(similar, w.client.UUID, "resolved"))
	var docs []map[string]any
	for i, at := range []time.Time{srchBase.Add(-2 * time.Hour), srchBase.Add(30 * time.Minute), srchBase.Add(3 * time.Hour), srchBase.Add(48 * time.Hour)} {
		docs = append(docs, map[string]any{"id": fmt.Sprintf("m-explain-%d-%s", i, w.o.Slug), "client_uuid": w.client.UUID,
			"type": "VideoMeasurement", "created_at": at.Format(time.RFC3339), "study": map[string]any{"subject": "youtube"},
			"statistic_values": map[string]any{"bitrate": 1000 * (i + 1)}})
	}
	w.o.InsertDocuments(t, "measurement", docs...)
	w.fake.Script(apitest.FakeAnswer{Text: "The bitrate jumped to 2000 (m-explain-1).", PromptTokens: 300, CompletionTokens: 40})
	sources, sent := w.explain(t, anomaly)
	if sources["anomaly_id"] != anomaly || sources["client_uuid"] != w.client.UUID ||
		len(anyStrings(sources["measurement_ids"])) != 3 || !slices.Equal(anyStrings(sources["similar_anomaly_ids"]), []string{similar}) {
		t.Errorf("data-sources %v: want the anomaly, its client, the 3 measurements within 6 h and the similar anomaly", sources)
	}
	for _, want := range []string{"Explain the anomaly " + anomaly, `\"phase\":\"before\"`, `\"phase\":\"during\"`, `\"phase\":\"after\"`,
		`\"value\":2000`, similar, "data-anomaly-context (data)"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the model was not given %s: %s", want, sent)
		}
	}
	if strings.Contains(sent, "m-explain-3") {
		t.Errorf("a measurement two days after the anomaly was sent: %s", sent)
	}
	list := apitest.List(t, apitest.WantEnvelope(t, w.do(t, http.MethodGet, "/ai_conversations", nil), 200, "conversations"))
	c := apitest.Object(t, list[0])
	if c["title"] != "Anomaly "+anomaly || apitest.Int(t, c["message_count"]) != 2 || !strings.Contains(c["preview"].(string), "m-explain-1") {
		t.Errorf("the explanation's conversation %v", c)
	}
}

// TestAIExplainsADetectedAnomaly: explain_anomaly works on an episode the
// analyzer detected as on an imported one. A month of a probe's speed
// tests with a 40 % download drop is stored and analysed; the model's
// request carries the episode with its baseline, band and value, and the
// download values before, during and after it.
func TestAIExplainsADetectedAnomaly(t *testing.T) {
	w := newAIWorld(t, "openai")
	var speedtests []map[string]any
	for _, d := range apitest.ProbeMonth(w.client.UUID, "youtube", 1, true) {
		if d["type"] == "SpeedtestMeasurement" {
			speedtests = append(speedtests, d)
		}
	}
	w.o.InsertDocuments(t, "measurement", speedtests...)
	if _, err := detector.Analyze(context.Background(), w.e.Store, w.o.ID, detector.AnalyzeOptions{}); err != nil {
		t.Fatal(err)
	}
	found := apitest.List(t, apitest.WantStatus(t, w.do(t, http.MethodPost, "/anomaly_events/search", map[string]any{"body": map[string]any{
		"query": map[string]any{"term": map[string]any{"client_uuid": w.client.UUID}}}, "size": 10, "source_only": true}), http.StatusOK))
	if len(found) != 1 {
		t.Fatalf("detected %v, want the download shift", found)
	}
	ep := apitest.Object(t, found[0])
	if ep["detected_by"] != "analyzer" || ep["detection_pass"] != "shift" || ep["baseline"] == nil || ep["band_low"] == nil {
		t.Fatalf("detected %v, want the analyzer's download shift with its baseline and band", ep)
	}
	id := ep["id"].(string)

	w.fake.Script(apitest.FakeAnswer{Text: "Download fell by 40 % for a day.", PromptTokens: 300, CompletionTokens: 20})
	sources, sent := w.explain(t, id)
	if sources["anomaly_id"] != id || sources["client_uuid"] != w.client.UUID || len(anyStrings(sources["measurement_ids"])) < 24 {
		t.Errorf("data-sources %v: want the episode, its client and the day of measurements around it", sources)
	}
	want := []string{"Explain the anomaly " + id, `\"detected_by\":\"analyzer\"`, `\"phase\":\"before\"`, `\"phase\":\"during\"`,
		`\"phase\":\"after\"`, anyStrings(ep["measurement_ids"])[0]}
	for _, field := range []string{"baseline", "band_low", "band_high", "value", "first_seen_at", "severity"} {
		v, _ := json.Marshal(ep[field])
		want = append(want, strings.ReplaceAll(fmt.Sprintf(`"%s":%s`, field, v), `"`, `\"`))
	}
	for _, part := range want {
		if !strings.Contains(sent, part) {
			t.Errorf("the model was not given %s: %s", part, sent)
		}
	}
}

// TestAIStreamOverGraphQL: the completion stream is a subscription that
// /graphql serves as Server-Sent Events too.
func TestAIStreamOverGraphQL(t *testing.T) {
	w := newAIWorld(t, "openai")
	id := w.newConversation(t)
	w.fake.Script(apitest.FakeAnswer{Text: "Hello from GraphQL.", PromptTokens: 5, CompletionTokens: 4})
	h := http.Header{"X-API-KEY": {w.o.Key}, "Content-Type": {"application/json"}, "Accept": {"text/event-stream"}}
	body := map[string]any{"query": `subscription($id: Int!, $input: AiCompleteInput!) { aiConversationCompleteStream(id: $id, input: $input) }`,
		"variables": map[string]any{"id": id, "input": map[string]any{"message": aiUserMessage("Hi")}}}
	r := apitest.Send(t, nil, apitest.Request(t, http.MethodPost, w.base+"/graphql", h, body))
	if r.Status != http.StatusOK || !strings.Contains(string(r.Raw), `"type":"text-delta"`) ||
		!strings.Contains(string(r.Raw), `"type":"finish"`) || !strings.Contains(string(r.Raw), "event: complete") {
		t.Errorf("GraphQL stream %d:\n%s", r.Status, r.Raw)
	}
}

// TestAIAnthropicFailures: the Anthropic provider's failures read as the
// OpenAI-compatible one's.
func TestAIAnthropicFailures(t *testing.T) {
	w := newAIWorld(t, "anthropic")
	path := fmt.Sprintf("/ai_conversations/%d/complete", w.newConversation(t))
	for _, c := range []struct {
		answer apitest.FakeAnswer
		status int
		says   string
	}{
		{apitest.FakeAnswer{Status: 429}, http.StatusTooManyRequests, "rate limiting"},
		{apitest.FakeAnswer{Status: 529}, http.StatusServiceUnavailable, "unavailable"},
		{apitest.FakeAnswer{Status: 400}, http.StatusBadGateway, "HTTP 400"},
		{apitest.FakeAnswer{Text: "Cut sh", BreakOff: true}, http.StatusBadGateway, "broke off"},
	} {
		w.fake.Script(c.answer)
		r := w.do(t, http.MethodPut, path, map[string]any{"message": aiUserMessage("Hi")})
		apitest.WantMessage(t, r, c.status, c.says)
		if strings.Contains(string(r.Raw), "scripted") {
			t.Errorf("the provider's own words reached the caller: %s", r.Raw)
		}
	}
}

// TestAITokenLimitParallel: with a limit of 60 tokens and answers costing
// 50, eight parallel completions (the probe's attack: five model calls,
// 300 tokens of 60) make one model call, or two when one arrives after the
// first was counted: each call reserves its tokens before the provider is
// called, so at most one call crosses the limit; the others are refused
// at once with 429, without waiting for the call in flight.
func TestAITokenLimitParallel(t *testing.T) {
	const limit, cost, parallel = 60, 50, 8
	const delay = 3 * time.Second // the model's answer time
	w := newAIWorld(t, "openai")
	for range parallel {
		w.fake.Script(apitest.FakeAnswer{Text: "ok", PromptTokens: 40, CompletionTokens: cost - 40, Delay: delay})
	}
	apitest.WantEnvelope(t, w.do(t, http.MethodPut, "/ai_assistant/token_limit", map[string]any{"limit": limit}), http.StatusOK, "usage")
	ids := make([]int64, parallel)
	for i := range ids {
		ids[i] = w.newConversation(t)
	}
	type answer struct {
		r    *apitest.Response
		took time.Duration
	}
	answers := make(chan answer, parallel)
	for _, id := range ids {
		go func() {
			start := time.Now()
			r := w.do(t, http.MethodPut, fmt.Sprintf("/ai_conversations/%d/complete", id), map[string]any{"message": aiUserMessage("Anything new?")})
			answers <- answer{r, time.Since(start)}
		}()
	}
	var ok, refused int
	for range parallel {
		a := <-answers
		switch a.r.Status {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			refused++
			if !strings.Contains(string(a.r.Raw), "used up") {
				t.Errorf("429 %s, want the budget named", a.r.Raw)
			}
			if a.took >= delay {
				t.Errorf("a refusal took %s: it waited for the call in flight (%s)", a.took, delay)
			}
		default:
			t.Errorf("status %d %s", a.r.Status, a.r.Raw)
		}
	}
	calls := len(w.fake.Requests())
	u := apitest.Object(t, apitest.WantEnvelope(t, w.do(t, http.MethodGet, "/ai_assistant/usage", nil), http.StatusOK, "usage"))
	used := apitest.Int(t, u["total_tokens"])
	t.Logf("%d answered, %d refused, %d model calls, %d tokens of %d", ok, refused, calls, used, limit)
	if ok < 1 || calls != ok || calls > 2 || ok+refused != parallel {
		t.Errorf("%d answered, %d refused, %d model calls; want 1 (or 2) answered and calling the model, the rest refused", ok, refused, calls)
	}
	if used != int64(calls*cost) || used > limit+cost-1 {
		t.Errorf("%d tokens used of %d, want at most one call (%d) past the limit", used, limit, cost)
	}
	var left int
	if err := w.e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM ai_token_reservations WHERE data_owner_id = $1`,
		w.o.ID).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d reservations left after the calls (%v)", left, err)
	}
}
