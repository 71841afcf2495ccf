package assistant

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// openAIProvider speaks the OpenAI-compatible chat completions protocol
// (OpenAI, Azure OpenAI, Ollama, llama.cpp's server, vLLM) through
// github.com/openai/openai-go/v3, always streaming and asking for the usage
// report at the end of the stream (stream_options.include_usage).
type openAIProvider struct {
	client openai.Client
}

// NewOpenAI is the OpenAI-compatible provider of cfg (BaseURL "" is
// OpenAI's). The SDK's own retries are off: a refused call is answered
// at once, and the caller decides.
func NewOpenAI(cfg Config) Provider {
	opts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &openAIProvider{client: openai.NewClient(opts...)}
}

func (p *openAIProvider) Call(ctx context.Context, req Request, onText func(string)) (Reply, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		Messages:      openAIMessages(req),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(req.MaxTokens)
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(t.Schema),
		}))
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var (
		reply  Reply
		text   strings.Builder
		calls  = map[int64]*ToolCall{}
		args   = map[int64]*strings.Builder{}
		finish string
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() && (chunk.Usage.PromptTokens > 0 || chunk.Usage.CompletionTokens > 0) {
			reply.Usage = Usage{PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens}
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				onText(c.Delta.Content)
			}
			for _, tc := range c.Delta.ToolCalls {
				call, ok := calls[tc.Index]
				if !ok {
					call = &ToolCall{}
					calls[tc.Index], args[tc.Index] = call, &strings.Builder{}
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Function.Name != "" {
					call.Name += tc.Function.Name
				}
				args[tc.Index].WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return reply, openAIError(ctx, err)
	}
	if finish == "" {
		// The stream ended without a finish reason: it broke off.
		return reply, &ProviderError{Detail: "the stream ended before the answer was complete"}
	}
	reply.Text = text.String()
	idx := make([]int64, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		c := calls[i]
		c.Arguments = rawArguments(args[i].String())
		reply.ToolCalls = append(reply.ToolCalls, *c)
	}
	reply.Stop = finishReason(finish, len(reply.ToolCalls) > 0)
	return reply, nil
}

// openAIMessages is the request's context as chat messages: the system
// prompt first, tool results as tool messages after the assistant's call.
func openAIMessages(req Request) []openai.ChatCompletionMessageParamUnion {
	out := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(req.System)}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			out = append(out, openai.UserMessage(m.Text))
		case RoleTool:
			out = append(out, openai.ToolMessage(m.Text, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Text != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Arguments)}},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

func openAIError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return &ProviderError{Status: apiErr.StatusCode, Detail: apiErr.Message}
	}
	return &ProviderError{Detail: err.Error()}
}

// finishReason maps a provider's stop reason onto the UI message stream's.
func finishReason(reason string, calledTools bool) string {
	switch {
	case calledTools:
		return "tool-calls"
	case reason == "stop" || reason == "end_turn" || reason == "stop_sequence":
		return "stop"
	case reason == "length" || reason == "max_tokens":
		return "length"
	case reason == "content_filter" || reason == "refusal":
		return "content-filter"
	}
	return "other"
}
