package assistant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
)

// Tool is a tool the model may call. Run reads on the caller's behalf and
// answers data; its error is shown to the model and the caller as the
// tool's failure.
type Tool struct {
	ToolSpec
	Run func(ctx context.Context, input json.RawMessage) (any, error)
}

// Turn is one answer of the assistant: the context sent to the model, the
// tools it may call, and Record, which stores each call's usage.
type Turn struct {
	System   string
	Messages []Message
	Tools    []Tool
	// Data are data-* chunks sent at the start of the answer (what the
	// answer is based on), kept as parts of the answer's message.
	Data   []Chunk
	Record func(Usage) error
	// Reserve, when set, is asked before each model call for maxTokens
	// (the call's output limit) of the budget: its error refuses the call
	// (and ends the turn); release runs once the call's usage is recorded.
	Reserve func(ctx context.Context, maxTokens int64) (release func(), err error)
}

// Chunk is one chunk of the AI SDK's UI message stream protocol.
type Chunk struct {
	Type         string          `json:"type"`
	MessageID    string          `json:"messageId,omitempty"`
	ID           string          `json:"id,omitempty"`
	Delta        string          `json:"delta,omitempty"`
	ToolCallID   string          `json:"toolCallId,omitempty"`
	ToolName     string          `json:"toolName,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Output       json.RawMessage `json:"output,omitempty"`
	ErrorText    string          `json:"errorText,omitempty"`
	FinishReason string          `json:"finishReason,omitempty"`
	Data         any             `json:"data,omitempty"`
}

// Run answers the turn. Chunks go to emit as they come, except that the
// first ones are held until the provider has answered the first call, so
// that a refused first call is an error of Run with nothing emitted. It
// answers the assistant's message (a UIMessage) built from the chunks.
func (a *Assistant) Run(ctx context.Context, t Turn, emit func(Chunk)) (map[string]any, error) {
	r := &run{a: a, t: t, emit: emit, msg: newMessage()}
	r.send(Chunk{Type: "start", MessageID: r.msg.id})
	for _, d := range t.Data {
		r.send(d)
	}
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	return r.msg.uiMessage(), nil
}

type run struct {
	a       *Assistant
	t       Turn
	emit    func(Chunk)
	msg     *message
	held    []Chunk
	started bool // the held chunks went out
	calls   int  // tool calls of the turn
}

// send emits c (or holds it until the first call answered).
func (r *run) send(c Chunk) {
	r.msg.apply(c)
	if !r.started {
		r.held = append(r.held, c)
		return
	}
	r.emit(c)
}

func (r *run) release() {
	if r.started {
		return
	}
	r.started = true
	for _, c := range r.held {
		r.emit(c)
	}
	r.held = nil
}

func (r *run) loop(ctx context.Context) error {
	msgs := append([]Message(nil), r.t.Messages...)
	finish := "stop"
	for step := 0; step < limits.MaxAISteps; step++ {
		var specs []ToolSpec
		if step < limits.MaxAISteps-1 && r.calls < limits.MaxAIToolCalls {
			for _, tool := range r.t.Tools {
				specs = append(specs, tool.ToolSpec)
			}
		}
		r.send(Chunk{Type: "start-step"})
		reply, err := r.call(ctx, Request{Model: r.a.Model, System: r.t.System, Messages: msgs, Tools: specs,
			MaxTokens: limits.AIOutputTokens}, step)
		if err != nil {
			return err
		}
		finish = reply.Stop
		if len(reply.ToolCalls) == 0 {
			r.send(Chunk{Type: "finish-step"})
			break
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Text: reply.Text, ToolCalls: reply.ToolCalls})
		for _, call := range reply.ToolCalls {
			msgs = append(msgs, r.runTool(ctx, call))
		}
		r.send(Chunk{Type: "finish-step"})
	}
	r.send(Chunk{Type: "finish", FinishReason: finish})
	r.release()
	return nil
}

// call makes one model call within its time limit, streaming its text as
// one text part, and records its usage whatever the outcome.
func (r *run) call(ctx context.Context, req Request, step int) (Reply, error) {
	if r.t.Reserve != nil {
		release, err := r.t.Reserve(ctx, req.MaxTokens)
		if err != nil {
			return Reply{}, err
		}
		defer release()
	}
	textID := fmt.Sprintf("text-%d", step)
	open := false
	reply, err := r.a.call(ctx, req, func(delta string) {
		r.release()
		if !open {
			r.send(Chunk{Type: "text-start", ID: textID})
			open = true
		}
		r.send(Chunk{Type: "text-delta", ID: textID, Delta: delta})
	})
	if reply.Usage != (Usage{}) && r.t.Record != nil {
		if rerr := r.t.Record(reply.Usage); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return reply, Public(err)
	}
	if !open && reply.Text != "" { // a provider that gave no deltas
		r.send(Chunk{Type: "text-start", ID: textID})
		r.send(Chunk{Type: "text-delta", ID: textID, Delta: reply.Text})
		open = true
	}
	if open {
		r.send(Chunk{Type: "text-end", ID: textID})
	}
	r.release()
	return reply, nil
}

// Call makes one model call (no streaming of its text) within the call
// time limit; its error is the provider's (Public tells the caller).
func (a *Assistant) Call(ctx context.Context, req Request) (Reply, error) {
	return a.call(ctx, req, func(string) {})
}

func (a *Assistant) call(ctx context.Context, req Request, onText func(string)) (Reply, error) {
	timeout := a.CallTimeout
	if timeout <= 0 {
		timeout = limits.AICallTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return a.Provider.Call(cctx, req, onText)
}

// runTool runs one tool call and answers the tool message for the model.
func (r *run) runTool(ctx context.Context, call ToolCall) Message {
	r.send(Chunk{Type: "tool-input-available", ToolCallID: call.ID, ToolName: call.Name, Input: call.Arguments})
	fail := func(msg string) Message {
		r.send(Chunk{Type: "tool-output-error", ToolCallID: call.ID, ErrorText: msg})
		return Message{Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: `{"error": ` + quote(msg) + `}`}
	}
	r.calls++
	if r.calls > limits.MaxAIToolCalls {
		return fail(fmt.Sprintf("not run: a turn may call tools at most %d times", limits.MaxAIToolCalls))
	}
	var tool *Tool
	for i := range r.t.Tools {
		if r.t.Tools[i].Name == call.Name {
			tool = &r.t.Tools[i]
		}
	}
	if tool == nil {
		return fail("no tool named " + quote(call.Name))
	}
	out, err := tool.Run(ctx, call.Arguments)
	if err != nil {
		if ctx.Err() != nil {
			return fail("the request ended")
		}
		_, msg, fields := apierr.Describe(err)
		if len(fields) > 0 {
			msg = err.Error()
		}
		return fail(msg)
	}
	raw := boundResult(out)
	r.send(Chunk{Type: "tool-output-available", ToolCallID: call.ID, Output: raw})
	return Message{Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: string(raw)}
}

// boundResult is a tool's output as JSON of at most limits.MaxAIToolResultBytes:
// a longer one becomes {"truncated": true, "bytes": n, "preview": "..."}.
func boundResult(out any) json.RawMessage {
	raw, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage(`{"error": "the tool's result could not be encoded"}`)
	}
	if len(raw) <= limits.MaxAIToolResultBytes {
		return raw
	}
	cut := limits.MaxAIToolResultBytes - 200
	for cut > 0 && raw[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	b, _ := json.Marshal(map[string]any{"truncated": true, "bytes": len(raw), "preview": string(raw[:cut]),
		"note": "the result was longer than the assistant may read; ask for fewer or smaller results"})
	return b
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// NewID is a random id for messages.
func NewID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "msg_" + hex.EncodeToString(b)
}
