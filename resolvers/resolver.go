// Package resolvers is fleetgraph's core: every query and mutation of the
// graph, with authorization (role checks), validation (input parsed into
// typed values or field errors) and the conversion of store rows into API
// types. REST reaches the same resolvers through stored operations.
package resolvers

import (
	"log/slog"
	"time"

	"github.com/fleetgraph/fleetgraph/auth"
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
	// RequestTimeout is the deadline of each API request (0:
	// server.DefaultRequestTimeout).
	RequestTimeout time.Duration
	// AIEnabled reports whether an AI provider is configured.
	AIEnabled bool
	// GqlgenMarshalOnly turns off the direct rendering of root lists
	// (render.go), so that tests can compare it with gqlgen's marshalling.
	GqlgenMarshalOnly bool
}
