package assistant

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/fleetgraph/fleetgraph/limits"
)

// anthropicProvider speaks Anthropic's Messages API through
// github.com/anthropics/anthropic-sdk-go, always streaming; the usage
// report comes in message_start (input) and message_delta (output).
type anthropicProvider struct {
	client anthropic.Client
}

// NewAnthropic is the Anthropic provider of cfg (BaseURL "" is
// Anthropic's); the SDK's retries are off, as for NewOpenAI.
func NewAnthropic(cfg Config) Provider {
	opts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...)}
}

func (p *anthropicProvider) Call(ctx context.Context, req Request, onText func(string)) (Reply, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = limits.AIOutputTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: maxTokens,
		System:    []anthropic.TextBlockParam{{Text: req.System}},
		Messages:  anthropicMessages(req.Messages),
	}
	for _, t := range req.Tools {
		schema := anthropic.ToolInputSchemaParam{Properties: t.Schema["properties"], ExtraFields: map[string]any{}}
		if req, ok := t.Schema["required"].([]string); ok {
			schema.Required = req
		}
		for k, v := range t.Schema {
			if k != "type" && k != "properties" && k != "required" {
				schema.ExtraFields[k] = v
			}
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name: t.Name, Description: anthropic.String(t.Description), InputSchema: schema,
		}})
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return Reply{}, &ProviderError{Detail: "unreadable stream: " + err.Error()}
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
				onText(ev.Delta.Text)
			}
		case "message_stop":
			stopped = true
		}
	}
	reply := Reply{Usage: Usage{PromptTokens: msg.Usage.InputTokens, CompletionTokens: msg.Usage.OutputTokens}}
	if err := stream.Err(); err != nil {
		return reply, anthropicError(ctx, err)
	}
	if !stopped {
		return reply, &ProviderError{Detail: "the stream ended before the answer was complete"}
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			reply.Text += b.Text
		case "tool_use":
			reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: rawArguments(string(b.Input))})
		}
	}
	reply.Stop = finishReason(string(msg.StopReason), len(reply.ToolCalls) > 0)
	return reply, nil
}

// anthropicMessages is the context as Messages API turns: consecutive tool
// results go together in one user turn, as the API requires.
func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			out = append(out, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Text)))
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, c := range m.ToolCalls {
				var input any = map[string]any{}
				_ = json.Unmarshal(c.Arguments, &input)
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			if len(blocks) > 0 {
				out = append(out, anthropic.NewAssistantMessage(blocks...))
			}
		case RoleTool:
			block := anthropic.NewToolResultBlock(m.ToolCallID, m.Text, false)
			if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser && isToolResults(out[n-1]) {
				out[n-1].Content = append(out[n-1].Content, block)
				continue
			}
			out = append(out, anthropic.NewUserMessage(block))
		}
	}
	return out
}

func isToolResults(m anthropic.MessageParam) bool {
	for _, b := range m.Content {
		if b.OfToolResult == nil {
			return false
		}
	}
	return len(m.Content) > 0
}

func anthropicError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		return &ProviderError{Status: apiErr.StatusCode, Detail: apiErr.Error()}
	}
	return &ProviderError{Detail: err.Error()}
}

// rawArguments is a tool call's arguments as JSON: an object, else {}
// (a model may send nothing, or something that is not JSON; the tool
// then reports the missing input).
func rawArguments(s string) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal([]byte(s), &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}
