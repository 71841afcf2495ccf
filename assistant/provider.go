// Package assistant is the AI assistant's engine: one small Provider
// interface over the model APIs (OpenAI-compatible chat completions and
// Anthropic Messages, each through its vendor's Go SDK), the turn loop that
// lets the model call read-only tools, the bounds of a turn, and the AI SDK
// UI message stream the turn is reported in. What a tool reads, who may ask
// and what is stored are the resolvers' business (resolvers/ai.go).
package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
)

// Provider is a model API. Call sends one request, streaming the reply's
// text to onText as it arrives, and answers the whole reply with the
// provider's usage report. Its errors are *ProviderError or the context's.
type Provider interface {
	Call(ctx context.Context, req Request, onText func(delta string)) (Reply, error)
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int64
}

// Roles of Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool" // a tool's result, answering ToolCallID
)

// Message is one message of the model's context: a user's or assistant's
// text (an assistant's with the tool calls it made), or a tool's result.
type Message struct {
	Role       string
	Text       string
	ToolCalls  []ToolCall
	ToolCallID string // RoleTool
	ToolName   string // RoleTool
}

// ToolSpec is what the model is told of a tool.
type ToolSpec struct {
	Name        string
	Description string
	Schema      map[string]any // JSON Schema of the tool's input (an object)
}

// ToolCall is the model asking for a tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Usage is a call's tokens as the provider reported them.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
}

// Reply is the model's answer to one call.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// Stop is why the model stopped: "stop", "length", "tool-calls" or
	// "other" (the UI message stream's finish reasons).
	Stop string
}

// ProviderError is a failed model call: the provider's HTTP status (0 when
// none came: connection failure, broken stream) and what it said.
type ProviderError struct {
	Status int
	Detail string
}

func (e *ProviderError) Error() string {
	if e.Status == 0 {
		return "AI model provider: " + e.Detail
	}
	return fmt.Sprintf("AI model provider answered %d: %s", e.Status, e.Detail)
}

// Public turns a failed call into the answer a caller reads (never the
// provider's own words, which may name keys or internals): the provider
// rate limiting is a 429, the provider unavailable a 503, every other
// failure a 502. The log keeps err.
func Public(err error) error {
	var pe *ProviderError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return apierr.Errorf(apierr.ErrBadGateway, "the AI model provider did not answer in time; try again later")
	case errors.Is(err, context.Canceled):
		return err
	case !errors.As(err, &pe):
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return err
		}
		return apierr.Errorf(apierr.ErrBadGateway, "the AI model provider failed; try again later")
	case pe.Status == http.StatusTooManyRequests:
		return apierr.Errorf(apierr.ErrTooManyRequests, "the AI model provider is rate limiting requests; try again later")
	case pe.Status == http.StatusServiceUnavailable || pe.Status == 529: // 529: Anthropic overloaded
		return apierr.Errorf(apierr.ErrUnavailable, "the AI model provider is unavailable; try again later")
	case pe.Status == http.StatusUnauthorized || pe.Status == http.StatusForbidden:
		return apierr.Errorf(apierr.ErrBadGateway, "the AI model provider refused the server's credentials (FLEETGRAPH_AI_API_KEY)")
	case pe.Status == 0:
		return apierr.Errorf(apierr.ErrBadGateway, "the AI model provider's answer broke off; try again")
	default:
		return apierr.Errorf(apierr.ErrBadGateway, "the AI model provider failed (HTTP %d); try again later", pe.Status)
	}
}

// Provider names of FLEETGRAPH_AI_PROVIDER.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Config is the server's AI configuration (FLEETGRAPH_AI_*).
type Config struct {
	Provider string // ProviderOpenAI or ProviderAnthropic; "" is off
	BaseURL  string // "" is the vendor's
	APIKey   string
	Model    string
	// MonthlyTokens is the default monthly token limit of a data owner.
	MonthlyTokens int64
	// HTTPClient makes the calls (nil: http.DefaultClient).
	HTTPClient *http.Client
}

// Assistant is a configured model: its provider, the model's name and the
// default monthly limit.
type Assistant struct {
	Provider      Provider
	Model         string
	MonthlyTokens int64
	// CallTimeout bounds each model call (limits.AICallTimeout when 0).
	CallTimeout time.Duration
}

// New builds the Assistant of cfg; nil when no provider is configured.
func New(cfg Config) (*Assistant, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if name == "" {
		return nil, nil
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("FLEETGRAPH_AI_MODEL must name the model when FLEETGRAPH_AI_PROVIDER is set")
	}
	if cfg.MonthlyTokens < 0 {
		return nil, errors.New("FLEETGRAPH_AI_MONTHLY_TOKENS must not be negative")
	}
	if cfg.MonthlyTokens == 0 {
		cfg.MonthlyTokens = limits.AIMonthlyTokens
	}
	a := &Assistant{Model: cfg.Model, MonthlyTokens: cfg.MonthlyTokens}
	switch name {
	case ProviderOpenAI:
		a.Provider = NewOpenAI(cfg)
	case ProviderAnthropic:
		if cfg.APIKey == "" {
			return nil, errors.New("FLEETGRAPH_AI_API_KEY is required for the anthropic provider")
		}
		a.Provider = NewAnthropic(cfg)
	default:
		return nil, fmt.Errorf("FLEETGRAPH_AI_PROVIDER %q must be %s or %s", cfg.Provider, ProviderOpenAI, ProviderAnthropic)
	}
	return a, nil
}

// ErrNotConfigured answers every AI operation but the status when no
// provider is configured.
var ErrNotConfigured = apierr.Errorf(apierr.ErrUnavailable,
	"the AI assistant is not configured on this server: set FLEETGRAPH_AI_PROVIDER (and FLEETGRAPH_AI_MODEL)")
