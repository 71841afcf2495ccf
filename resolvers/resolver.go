// Package resolvers is fleetgraph's core: every query and mutation of the
// graph, with authorization (role checks), validation (input parsed into
// typed values or field errors) and the conversion of store rows into API
// types. REST reaches the same resolvers through stored operations.
package resolvers

import (
	"log/slog"
	"time"

	"github.com/fleetgraph/fleetgraph/admission"
	"github.com/fleetgraph/fleetgraph/assistant"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/ratelimit"
	"github.com/fleetgraph/fleetgraph/releases"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/stream"
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
	// server.DefaultRequestTimeout).
	RequestTimeout time.Duration
	// AI is the configured model of the AI assistant (nil: none
	// configured; every AI operation but the status answers 503).
	AI *assistant.Assistant
	// Operations runs stored REST operations for the assistant's tools
	// (server.New sets it to the REST adapter).
	Operations OperationRunner
	// Heavy admits searches, ES|QL queries and export listings (package
	// admission); nil admits everything.
	Heavy *admission.Gate
	// RateLimits limits requests per API key, data owner and probe
	// (package ratelimit); nil limits nothing.
	RateLimits *ratelimit.Limiter
	// MaxAnswerBytes is the budget of one operation's answer (package
	// budget); 0 means budget.DefaultBytes.
	MaxAnswerBytes int64
	// GqlgenMarshalOnly turns off the direct rendering of root lists
	// (render.go), so that tests can compare it with gqlgen's marshalling.
	GqlgenMarshalOnly bool
	// Stream feeds subscriptions (nil: subscribing fails as unavailable).
	Stream *stream.Hub
}
