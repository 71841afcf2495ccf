// Package obs is what an operator watches fleetgraph with: the request id
// every answer and log line carries (requestid.go, log.go), the Prometheus
// metrics served at /metrics (metrics.go: HTTP requests per route pattern,
// GraphQL operation and status; pool.go: the PostgreSQL pool; search.go:
// search backend calls; progress.go: the rollup refresher and the
// Elasticsearch indexer), and OpenTelemetry tracing of HTTP, GraphQL
// operations and pgx, enabled only by the standard OTEL_* environment
// variables (tracing.go, graphql.go).
//
// Label values are bounded by construction: routes are chi's patterns, never
// raw paths; GraphQL operation names are checked and folded (opnames.go);
// no label names a data owner, a key or an id.
package obs
