// Package resolvers is fleetgraph's core: every query and mutation of the
// graph, one .resolvers.go per schema/*.graphqls, with authorization (role
// checks) and validation (input parsed into typed values or field errors).
// The nested fields below them are attached by the graph engine (package
// engine), which also converts store rows into API types. REST reaches the
// same resolvers through stored operations.
//
// gqlgen regenerates the .resolvers.go files and keeps only the bodies of
// their resolvers (any other code it comments out), so what several
// resolvers of a domain share is in a plain .go file of that domain
// (clients.go beside client.resolvers.go, ...); the error presenter is
// errors.go. What is not about the graph lives in the package named for
// it: search requests in search, the export API's parameters in export,
// the license report in license, keys in auth.
package resolvers

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/webhooks"

	"github.com/fleetgraph/fleetgraph/assistant"
	"github.com/fleetgraph/fleetgraph/assistant/chat"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/eventhub"
	"github.com/fleetgraph/fleetgraph/limits/admission"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/releases"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
)

// Resolver is the dependency root of the graph.
type Resolver struct {
	Store  *store.Store
	Sealer *auth.Sealer
	Logger *slog.Logger
	// Search answers Query DSL searches (PostgreSQL or Elasticsearch).
	Search search.Backend
	// Server-wide switches reported in data owner settings (*_on_server).
	OfflineDetectionOnServer  bool
	DegradedDetectionOnServer bool
	StudyFailureOnServer      bool
	// RetentionDaysDefault is the operator's retention for data owners
	// that set none (FLEETGRAPH_RETENTION_DAYS); nil keeps everything.
	RetentionDaysDefault *int64
	// Releases is the release catalogue of GET /software/downloads (nil:
	// none configured, no components).
	Releases *releases.Catalogue
	// RequestTimeout is the deadline of each API request (0:
	// limits.RequestTimeout).
	RequestTimeout time.Duration
	// Liveness, when set, watches PostgreSQL: API requests end with a 503
	// as soon as it is declared down (store.Liveness), and /readyz answers
	// 503 at once while it is.
	Liveness *store.Liveness
	// AI is the configured model of the AI assistant (nil: none
	// configured; every AI operation but the status answers 503).
	AI *assistant.Assistant
	// Operations runs stored REST operations for the assistant's tools
	// (server.New sets it to the REST adapter).
	Operations chat.OperationRunner
	// Heavy admits searches, ES|QL queries and export listings (package
	// admission); nil admits everything.
	Heavy *admission.Gate
	// RateLimits limits requests per API key, data owner and probe
	// (package ratelimit); nil limits nothing.
	RateLimits *ratelimit.Limiter
	// MaxAnswerBytes is the budget of one operation's answer (package
	// budget); 0 means limits.AnswerBytes.
	MaxAnswerBytes int64
	// GqlgenMarshalOnly turns off the direct rendering of root lists
	// (render.go), so that tests can compare it with gqlgen's marshalling.
	GqlgenMarshalOnly bool
	// Stream feeds subscriptions (nil: subscribing fails as unavailable).
	Stream *eventhub.Hub
	// OnPanic, when set, is told of every panic the server recovers from
	// (a resolver's, RecoverPanic, or an HTTP handler's), after it is
	// logged; ctx is the request's. apitest sets it so that a recovered
	// panic fails the test whose request caused it.
	OnPanic func(ctx context.Context, p any)
}

// Panicked logs p, a recovered panic of the request of ctx, as what
// (e.g. "resolver panicked") and tells OnPanic.
func (r *Resolver) Panicked(ctx context.Context, what string, p any) {
	r.Logger.ErrorContext(ctx, what, "panic", p, "stack", string(debug.Stack()))
	if r.OnPanic != nil {
		r.OnPanic(ctx, p)
	}
}

// New is the resolver of fleetgraph serve, and of the tests' servers:
// over st, with the server-side detections on and the heavy requests
// admitted by the size of st's pool. The caller sets what it configures
// beyond that (RateLimits, Releases, AI, Stream, RequestTimeout,
// MaxAnswerBytes).
func New(st *store.Store, sealer *auth.Sealer, log *slog.Logger, backend search.Backend) *Resolver {
	slots, perOwner := limits.AdmissionSlots(int(st.Pool().Config().MaxConns))
	return &Resolver{Store: st, Sealer: sealer, Logger: log, Search: backend,
		OfflineDetectionOnServer: true, DegradedDetectionOnServer: true, StudyFailureOnServer: true,
		Heavy: admission.New(slots, perOwner, limits.AdmissionWait)}
}

// chat is the AI assistant's core over r's store, model and operations.
func (r *Resolver) chat() *chat.Service {
	return &chat.Service{Store: r.Store, AI: r.AI, Operations: r.Operations, Logger: r.Logger}
}

// webhookOf converts a stored webhook with r's Sealer (its headers are
// sealed), header values masked.
func (r *Resolver) webhookOf(w store.WebhookEndpoint) (*model.Webhook, error) {
	return webhooks.ModelOf(r.Sealer, w)
}
