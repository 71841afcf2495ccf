package assistant

import (
	"encoding/json"
	"strings"

	"github.com/fleetgraph/fleetgraph/limits"
)

// message builds the assistant's UIMessage from the chunks of its stream,
// as the AI SDK's own reader does: a step-start part per step, a text part
// per text block, a tool-<name> part per tool call (its state following
// the call), a data-* part per data chunk.
type message struct {
	id    string
	parts []map[string]any
	text  map[string]map[string]any // open text parts by id
	tools map[string]map[string]any // tool parts by call id
}

func newMessage() *message {
	return &message{id: NewID(), text: map[string]map[string]any{}, tools: map[string]map[string]any{}}
}

func (m *message) apply(c Chunk) {
	switch c.Type {
	case "start-step":
		m.parts = append(m.parts, map[string]any{"type": "step-start"})
	case "text-start":
		p := map[string]any{"type": "text", "text": "", "state": "streaming"}
		m.text[c.ID] = p
		m.parts = append(m.parts, p)
	case "text-delta":
		if p := m.text[c.ID]; p != nil {
			p["text"] = p["text"].(string) + c.Delta
		}
	case "text-end":
		if p := m.text[c.ID]; p != nil {
			p["state"] = "done"
			delete(m.text, c.ID)
		}
	case "tool-input-available":
		p := map[string]any{"type": "tool-" + c.ToolName, "toolCallId": c.ToolCallID, "state": "input-available",
			"input": json.RawMessage(c.Input)}
		m.tools[c.ToolCallID] = p
		m.parts = append(m.parts, p)
	case "tool-output-available":
		if p := m.tools[c.ToolCallID]; p != nil {
			p["state"], p["output"] = "output-available", json.RawMessage(c.Output)
		}
	case "tool-output-error":
		if p := m.tools[c.ToolCallID]; p != nil {
			p["state"], p["errorText"] = "output-error", c.ErrorText
		}
	default:
		if strings.HasPrefix(c.Type, "data-") {
			p := map[string]any{"type": c.Type, "data": c.Data}
			if c.ID != "" {
				p["id"] = c.ID
			}
			m.parts = append(m.parts, p)
		}
	}
}

func (m *message) uiMessage() map[string]any {
	parts := make([]any, len(m.parts))
	for i, p := range m.parts {
		parts[i] = p
	}
	return map[string]any{"id": m.id, "role": "assistant", "parts": parts}
}

// UIMessage is what the assistant reads of a stored message.
type UIMessage struct {
	ID    string            `json:"id"`
	Role  string            `json:"role"`
	Parts []json.RawMessage `json:"parts"`
}

// Context turns a conversation's UIMessages into the model's context: user
// and assistant messages with their text, earlier tool results and data
// parts as marked text (tool results are data, never instructions), system
// messages left out (the system prompt is the server's). Only the newest
// limits.MaxAIContextMessages within limits.MaxAIContextChars are kept; dropped says how
// many were left out.
func Context(msgs []UIMessage) (out []Message, dropped int) {
	for _, m := range msgs {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			continue
		}
		if text := partsText(m.Parts); text != "" {
			out = append(out, Message{Role: m.Role, Text: text})
		}
	}
	chars, keep := 0, 0
	for i := len(out) - 1; i >= 0 && keep < limits.MaxAIContextMessages; i-- {
		if chars+len(out[i].Text) > limits.MaxAIContextChars && keep > 0 {
			break
		}
		chars += len(out[i].Text)
		keep++
	}
	dropped = len(out) - keep
	out = out[dropped:]
	for len(out) > 0 && out[0].Role != RoleUser { // a context starts with the user
		out, dropped = out[1:], dropped+1
	}
	return out, dropped
}

func partsText(parts []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range parts {
		var p struct {
			Type   string          `json:"type"`
			Text   string          `json:"text"`
			Output json.RawMessage `json:"output"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		var add string
		switch {
		case p.Type == "text":
			add = p.Text
		case strings.HasPrefix(p.Type, "tool-") && len(p.Output) > 0:
			add = "[result of tool " + strings.TrimPrefix(p.Type, "tool-") + " (data): " + clip(string(p.Output), limits.MaxAIToolPartChars) + "]"
		case strings.HasPrefix(p.Type, "data-") && len(p.Data) > 0:
			add = "[" + p.Type + " (data): " + clip(string(p.Data), limits.MaxAIDataPartChars) + "]"
		}
		if add != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(add)
		}
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…(cut)"
}
