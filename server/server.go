// Package server assembles fleetgraph's HTTP surface: /graphql (with the
// offline GraphiQL page), the Administration REST API v1 and the Data Export
// REST API v1, all over one executable schema and one executor configuration,
// the probes' client API (package clientapi), plus /healthz, /readyz and /metrics (package obs).
package server

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/dashboard"
	"github.com/fleetgraph/fleetgraph/engine"
	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/graphiql"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/respond"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/store"
)

// Base paths of the REST APIs.
const (
	AdminBase  = "/client_admin_api/v1"
	ExportBase = "/export_api/v1"
)

// Option adjusts New.
type Option func(*options)

type options struct {
	metrics      *obs.Metrics
	metricsRoute bool
	tracing      *obs.Tracing
}

// WithMetrics records into m, the process's registry (the indexer and the
// rollup refresher record into it too); without it New makes one of its own.
func WithMetrics(m *obs.Metrics) Option { return func(o *options) { o.metrics = m } }

// WithoutMetricsRoute leaves /metrics out: it is served on a listener of its
// own (FLEETGRAPH_METRICS_ADDR) or not at all.
func WithoutMetricsRoute() Option { return func(o *options) { o.metricsRoute = false } }

// WithTracing traces requests, GraphQL operations (REST ones included) and,
// through res.Store's tracer, statements; nil is tracing off.
func WithTracing(t *obs.Tracing) Option { return func(o *options) { o.tracing = t } }

// New builds the HTTP handler of the whole server. It instruments res for
// the operator: res.Logger logs request ids (obs.Logger), res.Search is
// timed, res.Store's pool is watched; GET /metrics serves the metrics
// unless WithoutMetricsRoute.
func New(res *resolvers.Resolver, opts ...Option) (http.Handler, error) {
	o := options{metricsRoute: true}
	for _, opt := range opts {
		opt(&o)
	}
	if o.metrics == nil {
		o.metrics = obs.NewMetrics()
	}
	res.Logger = obs.Logger(res.Logger)
	res.Search = o.metrics.Search(res.Search)
	if res.Store != nil {
		o.metrics.WatchPool(res.Store.Pool())
		if _, ok := res.Store.ReplicaStats(); ok {
			o.metrics.WatchReplica(res.Store.ReplicaStats)
		}
	}
	o.metrics.WatchRefusalHolds(res.RateLimits.Held)
	o.metrics.WatchWebClientsRefused(res.RateLimits.WebClientsRefusedTotal)
	es := graph.NewExecutableSchema(graph.Config{Resolvers: res, Complexity: prices()})
	if missing := unpriced(es.Schema(), prices()); len(missing) > 0 {
		return nil, fmt.Errorf("fields that answer a page have no price in server/complexity.go: %s", strings.Join(missing, ", "))
	}

	answerBytes := res.MaxAnswerBytes
	if answerBytes <= 0 {
		answerBytes = limits.AnswerBytes
	}
	exec := executor.New(es)
	if o.tracing != nil {
		exec.Use(obs.GraphQL{Tracer: o.tracing.Tracer()}) // REST's stored operations; their label is the route
	}
	configure(exec, res, newKnownComplexity())
	adapter, err := rest.NewAdapter(exec, es.Schema(), answerBytes)
	if err != nil {
		return nil, err
	}
	res.Operations = adapter // the AI assistant's tools read through the stored operations

	gql := handler.New(es)
	gql.AddTransport(graphQLPost{answerBytes: answerBytes})
	gql.AddTransport(graphQLGet{answerBytes: answerBytes})
	gql.Use(obs.GraphQL{Metrics: o.metrics, Tracer: o.tracing.Tracer()}) // first: labels refused documents too
	gql.Use(extension.AutomaticPersistedQuery{Cache: newPersistedQueries(limits.PersistedQueriesPerOwner, adapter.PersistedQueries())})
	gql.Use(extension.Introspection{})
	gql.Use(newInputLimits(limits.DefaultGraphQL))
	gql.SetParserTokenLimit(limits.DefaultGraphQL.Tokens)
	gql.SetValidationRulesFn(cappedRules(limits.DefaultGraphQL.Errors))
	configure(gql, res, newKnownComplexity())

	r := chi.NewRouter()
	r.Use(obs.RequestID, o.tracing.HTTP, o.metrics.Middleware, recoverer(res), accessLog(res.Logger), tidyPath, compressJSON)
	if o.metricsRoute {
		r.Get("/metrics", o.metrics.Handler().ServeHTTP)
	}
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		respond.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", readyz(res.Store, res.Liveness))
	r.Get("/", dashboard.Page().ServeHTTP) // the web dashboard (a single-page app on the GraphQL API)
	r.Handle(dashboard.AssetsPrefix+"*", dashboard.Assets())
	r.Get("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }) // browsers ask for it; no 404 in their console
	streams := subscriptions(es, res, o)
	within := deadline(res.RequestTimeout, res.Liveness)
	graphqlAuth := auth.Middleware(res.Store, true, graphqlAuthError, auth.KindClientAdmin)
	get := graphQLOrPage(chi.Chain(within, graphqlAuth, loaders.Middleware(res.Store)).Handler(gql),
		graphiql.Page("/graphql", "/graphiql/assets/"))
	r.Get("/graphql", func(w http.ResponseWriter, r *http.Request) {
		if isWebSocket(r) {
			streams.webSocket.ServeHTTP(w, r)
			return
		}
		get.ServeHTTP(w, r)
	})
	r.Handle("/graphiql/assets/*", graphiql.Assets("/graphiql/assets/"))
	rate := res.RateLimits.Middleware
	// The body is read after the key and rate checks: a refused request costs
	// no read of up to a megabyte (or its gunzipping).
	post := chi.Chain(within, limitBody, graphqlAuth, rate(graphqlAuthError), bufferGraphQLBody, loaders.Middleware(res.Store)).Handler(gql)
	r.Post("/graphql", func(w http.ResponseWriter, r *http.Request) {
		if isEventStream(r) { // subscriptions (events, the AI assistant's streams) over SSE
			streams.sse.ServeHTTP(w, r)
			return
		}
		post.ServeHTTP(w, r)
	})

	docs, err := openAPIDocuments(adapter)
	if err != nil {
		return nil, err
	}
	for base, doc := range docs {
		r.Get(base+OpenAPIPath, serveOpenAPI(doc)) // no key: the contract is public
	}

	var mountErr error
	r.Route(AdminBase, func(r chi.Router) {
		r.Use(within, limitBody, auth.Middleware(res.Store, false, restAuthError, auth.KindClientAdmin), rate(restAuthError),
			loaders.Middleware(res.Store))
		mountErr = adapter.Mount(r, rest.AdminRoutes)
	})
	if mountErr != nil {
		return nil, mountErr
	}
	// Middleware on the mount itself: chi skips a router's own middleware
	// while it has no routes, which would let any key reach a 404.
	r.With(within, limitBody, auth.Middleware(res.Store, false, restAuthError, auth.KindExport), rate(restAuthError),
		loaders.Middleware(res.Store)).
		Route(ExportBase, func(r chi.Router) {
			mountErr = adapter.Mount(r, rest.ExportRoutes)
		})
	if mountErr != nil {
		return nil, mountErr
	}
	probes := &clientapi.API{Store: res.Store, Sealer: res.Sealer, Logger: res.Logger, RateLimits: res.RateLimits}
	r.With(within, limitBodyTo(limits.MaxProbeBodyBytes)).Route(clientapi.Base, probes.Mount)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) { respond.Error(w, http.StatusNotFound, "Not found") })
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		respond.Error(w, http.StatusMethodNotAllowed, "Method not allowed")
	})
	return r, nil
}

// graphQLOrPage answers GET /graphql: a GraphQL query when the URL carries
// one (query, or extensions with a persisted query's hash), else, or to a
// browser navigating there (Accept: text/html), the GraphiQL page.
func graphQLOrPage(api, page http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if (q.Has("query") || q.Has("extensions")) && !strings.Contains(r.Header.Get("Accept"), "text/html") {
			api.ServeHTTP(w, r)
			return
		}
		page.ServeHTTP(w, r)
	}
}

// OpenAPIPath is where each HTTP API (the REST APIs, the client API)
// serves its description, relative to its base path.
const OpenAPIPath = "/openapi.json"

// apis are the REST APIs as their OpenAPI documents name them.
var apis = []rest.API{
	{Title: "fleetgraph Administration REST API", Base: AdminBase, Routes: rest.AdminRoutes,
		Description: "Clients, users, capabilities and registration keys, ISPs, API keys, service credentials, " +
			"settings, anomaly handling and measurement search of the key's data owner. Generated from the " +
			"route table (rest/routes.go) and its stored GraphQL operations (rest/ops/); send an admin key " +
			"(client_admin-...) in X-API-KEY."},
	{Title: "fleetgraph Data Export REST API", Base: ExportBase, Routes: rest.ExportRoutes,
		Description: "Read-only listings (newest first, paged by page and per_page; Per-Page, Total and Link " +
			"headers), Query DSL search and ES|QL over the key's data owner's data. Generated from the " +
			"route table (rest/routes.go) and its stored GraphQL operations (rest/ops/); send an export key " +
			"(export-...) in X-API-KEY. Listed documents carry the stored fields as imported (see docs/export-api.md)."},
}

// openAPIDocuments are the OpenAPI documents of the HTTP APIs by base
// path: the REST APIs' and the client API's.
func openAPIDocuments(adapter *rest.Adapter) (map[string][]byte, error) {
	out := make(map[string][]byte, len(apis)+1)
	for _, api := range apis {
		doc, err := adapter.OpenAPI(api)
		if err != nil {
			return nil, fmt.Errorf("OpenAPI description of %s: %w", api.Base, err)
		}
		out[api.Base] = doc
	}
	doc, err := clientapi.OpenAPI()
	if err != nil {
		return nil, fmt.Errorf("OpenAPI description of %s: %w", clientapi.Base, err)
	}
	out[clientapi.Base] = doc
	return out, nil
}

// OpenAPIDocuments are the OpenAPI documents the server serves, by base
// path, made without a database (fleetgraph openapi, the linter).
func OpenAPIDocuments() (map[string][]byte, error) {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{}})
	adapter, err := rest.NewAdapter(executor.New(es), es.Schema(), limits.AnswerBytes)
	if err != nil {
		return nil, err
	}
	return openAPIDocuments(adapter)
}

// SubgraphSDL is fleetgraph's Apollo Federation subgraph schema, as
// _service { sdl } answers it, made without a database (fleetgraph sdl,
// for composing a supergraph without a running server).
func SubgraphSDL() (string, error) {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{}})
	exec := executor.New(es)
	exec.Use(extension.Introspection{}) // _service is federated introspection
	ctx := graphql.StartOperationTrace(context.Background())
	rc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: `{ _service { sdl } }`})
	if errs != nil {
		return "", fmt.Errorf("subgraph SDL: %w", errs)
	}
	answer, ctx := exec.DispatchOperation(ctx, rc)
	resp := answer(ctx)
	if len(resp.Errors) > 0 {
		return "", fmt.Errorf("subgraph SDL: %w", resp.Errors)
	}
	var data struct {
		Service struct {
			SDL string `json:"sdl"`
		} `json:"_service"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		return "", fmt.Errorf("subgraph SDL: %w", err)
	}
	return data.Service.SDL, nil
}

func serveOpenAPI(doc []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(doc)
	}
}

// executorConfig is what /graphql's server and the REST executor share.
type executorConfig interface {
	Use(graphql.HandlerExtension)
	SetErrorPresenter(graphql.ErrorPresenterFunc)
	SetRecoverFunc(graphql.RecoverFunc)
	SetQueryCache(graphql.Cache[*ast.QueryDocument])
}

// configure gives both executors the same extensions (the complexity
// limit, the edges attached below root fields, where the reads go:
// readRouting), error presenter, recovery and query cache; limit is the
// complexity limit's extension (knownComplexity).
func configure(x executorConfig, res *resolvers.Resolver, limit graphql.HandlerExtension) {
	x.Use(limit)
	x.Use(engine.Attacher{Store: res.Store, GqlgenMarshalOnly: res.GqlgenMarshalOnly})
	x.Use(readRouting{Store: res.Store})
	x.SetQueryCache(lru.New[*ast.QueryDocument](limits.DocumentsKept))
	x.SetErrorPresenter(res.PresentError)
	x.SetRecoverFunc(res.RecoverPanic)
}

// restAuthError answers an authentication failure as the REST APIs do.
func restAuthError(w http.ResponseWriter, _ *http.Request, err error) {
	class, msg, _ := apierr.Describe(err)
	respond.Error(w, class.Status, msg)
}

// graphqlAuthError answers an authentication failure as /graphql does: a
// GraphQL error with the class's extensions.code.
func graphqlAuthError(w http.ResponseWriter, _ *http.Request, err error) {
	class, msg, _ := apierr.Describe(err)
	respond.JSON(w, class.Status, map[string]any{"errors": gqlerror.List{{
		Message: msg, Extensions: map[string]any{"code": class.Code},
	}}})
}

// limitBody is limitBodyTo the REST APIs' and /graphql's limit.
func limitBody(next http.Handler) http.Handler { return limitBodyTo(limits.MaxBodyBytes)(next) }

// limitBodyTo answers 413 for bodies over max bytes and caps the rest. A
// gzip-compressed body (Content-Encoding: gzip, as Elasticsearch clients
// and probes may send) is decompressed, and the limit applies to both its
// compressed and its decompressed size; other content codings are a 415.
func limitBodyTo(max int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > max {
				bodyTooLarge(w, max)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, max)
			switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
			case "", "identity":
			case "gzip", "x-gzip":
				zr, err := gzip.NewReader(r.Body)
				switch {
				case errors.Is(err, io.EOF): // no body at all
				case err != nil:
					respond.Error(w, http.StatusBadRequest, "request body is not valid gzip data (Content-Encoding: "+enc+")")
					return
				default:
					r.Body = http.MaxBytesReader(w, zr, max)
				}
				r.Header.Del("Content-Encoding")
				r.ContentLength = -1
			default:
				respond.Error(w, http.StatusUnsupportedMediaType, fmt.Sprintf(
					"Content-Encoding %q is not supported: send the body uncompressed or gzip-compressed", enc))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// tidyPath routes a path with repeated or trailing slashes as the path
// without them (/export_api/v1//measurements/ as /export_api/v1/measurements):
// scripts joining a base URL ending in "/" with a path starting with one
// send such paths. The request's URL is left as sent.
func tidyPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.RawPath
		if p == "" {
			p = r.URL.Path
		}
		if strings.Contains(p, "//") || (len(p) > 1 && strings.HasSuffix(p, "/")) {
			for strings.Contains(p, "//") {
				p = strings.ReplaceAll(p, "//", "/")
			}
			if len(p) > 1 {
				p = strings.TrimSuffix(p, "/")
			}
			if rctx := chi.RouteContext(r.Context()); rctx != nil {
				rctx.RoutePath = p
			}
		}
		next.ServeHTTP(w, r)
	})
}

// compressJSON gzips JSON and NDJSON answers for clients that accept gzip
// (Accept-Encoding, q-values honoured), streaming-safe: each Flush of a
// scroll stream flushes the compressor too. A handler that aborts a stream
// (panics) leaves the gzip stream unterminated, so the client sees it
// broken. Other answers (GraphiQL's assets, HEAD, 204) pass through.
func compressJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		cw := &gzipWriter{ResponseWriter: w, accepts: acceptsGzip(r.Header.Values("Accept-Encoding"))}
		next.ServeHTTP(cw, r)
		cw.close()
	})
}

// acceptsGzip reads Accept-Encoding: gzip (or x-gzip) with a q-value
// above 0, or else * with one; an explicit gzip;q=0 refuses gzip whatever
// * says (RFC 9110, 12.5.3).
func acceptsGzip(values []string) bool {
	explicit, star := -1.0, -1.0 // -1: not named
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			q := 1.0
			if k, val, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					q = f
				}
			}
			if name == "*" {
				star = max(star, q)
			} else {
				explicit = max(explicit, q)
			}
		}
	}
	if explicit >= 0 {
		return explicit > 0
	}
	return star > 0
}

var gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression); return w }}

// gzipWriter decides at WriteHeader whether to compress: JSON and NDJSON
// answers with a body, to a client that accepts gzip.
type gzipWriter struct {
	http.ResponseWriter
	accepts     bool
	wroteHeader bool
	gz          *gzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.wroteHeader {
		g.ResponseWriter.WriteHeader(code)
		return
	}
	g.wroteHeader = true
	h := g.Header()
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	if ct = strings.TrimSpace(ct); (ct == "application/json" || ct == rest.NDJSONContentType) && h.Get("Content-Encoding") == "" &&
		code >= http.StatusOK && code != http.StatusNoContent && code != http.StatusNotModified {
		h.Add("Vary", "Accept-Encoding")
		if g.accepts {
			h.Set("Content-Encoding", "gzip")
			h.Del("Content-Length")
			g.gz = gzipPool.Get().(*gzip.Writer)
			g.gz.Reset(g.ResponseWriter)
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	if g.gz != nil {
		return g.gz.Write(p)
	}
	return g.ResponseWriter.Write(p)
}

// Flush sends what was written so far, through the compressor.
func (g *gzipWriter) Flush() {
	if g.gz != nil {
		_ = g.gz.Flush()
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// close ends the gzip stream (after a handler that returned normally).
func (g *gzipWriter) close() {
	if g.gz == nil {
		return
	}
	_ = g.gz.Close()
	g.gz.Reset(io.Discard)
	gzipPool.Put(g.gz)
	g.gz = nil
}

func readyz(s *store.Store, live *store.Liveness) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if live != nil {
			select {
			case <-live.Down(): // no ping would answer either
				respond.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
				return
			default:
			}
		}
		// Every connection in use: a load balancer should send new
		// requests elsewhere for now (and a ping would only queue).
		if st := s.Pool().Stat(); st.AcquiredConns() >= st.MaxConns() {
			respond.JSON(w, http.StatusServiceUnavailable, map[string]any{"status": "saturated",
				"connections_in_use": st.AcquiredConns(), "connections_max": st.MaxConns()})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			respond.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
			return
		}
		respond.JSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

func recoverer(res *resolvers.Resolver) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					res.Panicked(r.Context(), "handler panicked at "+r.URL.Path, p)
					respond.Error(w, http.StatusInternalServerError, "")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// accessLog logs one line per request, with the status the metrics'
// middleware (outside it) recorded. A request whose client went away
// (or whose deadline passed) before it was answered is logged as cancelled,
// with the cause: this line is the only one such a request leaves, as the
// error presenter does not log the failures its fields meet once it is.
func accessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			next.ServeHTTP(w, r)
			ctx := r.Context()
			cancelled := ctx.Err() != nil
			level, msg := slog.LevelInfo, "request"
			if cancelled {
				level, msg = slog.LevelWarn, "request cancelled"
			}
			if !log.Enabled(ctx, level) {
				return
			}
			var held [6]slog.Attr // typed attributes: nothing boxed, no slice grown
			attrs := append(held[:0], slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", obs.Status(ctx)), slog.Int64("duration_ms", time.Since(start).Milliseconds()))
			if op := obs.Operation(ctx); op != "" {
				attrs = append(attrs, slog.String("operation", op))
			}
			if cancelled {
				attrs = append(attrs, slog.Any("cause", context.Cause(ctx)))
			}
			log.LogAttrs(ctx, level, msg, attrs...)
		})
	}
}
