// Package server assembles fleetgraph's HTTP surface: /graphql (with the
// offline GraphiQL page), the Administration REST API v1 and the Data Export
// REST API v1, all over one executable schema and one executor configuration,
// plus /healthz and /readyz.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/graphiql"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/store"
)

// ComplexityLimit caps how much one GraphQL operation may ask for.
const ComplexityLimit = 1000

// Base paths of the REST APIs.
const (
	AdminBase  = "/client_admin_api/v1"
	ExportBase = "/export_api/v1"
)

// New builds the HTTP handler of the whole server.
func New(res *resolvers.Resolver) (http.Handler, error) {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: res})

	gql := handler.New(es)
	gql.AddTransport(transport.POST{})
	gql.Use(extension.Introspection{})
	configure(gql, res)

	exec := executor.New(es)
	configure(exec, res)
	adapter, err := rest.NewAdapter(exec, es.Schema())
	if err != nil {
		return nil, err
	}

	r := chi.NewRouter()
	r.Use(recoverer(res.Logger), accessLog(res.Logger))
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		rest.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", readyz(res.Store))
	r.Get("/", http.RedirectHandler("/graphql", http.StatusFound).ServeHTTP)
	r.Get("/graphql", graphiql.Page("/graphql", "/graphiql/assets/").ServeHTTP)
	r.Handle("/graphiql/assets/*", graphiql.Assets("/graphiql/assets/"))
	r.With(limitBody, auth.Middleware(res.Store, auth.KindClientAdmin, true, graphqlAuthError), loaders.Middleware(res.Store)).
		Post("/graphql", gql.ServeHTTP)

	var mountErr error
	r.Route(AdminBase, func(r chi.Router) {
		r.Use(limitBody, auth.Middleware(res.Store, auth.KindClientAdmin, false, restAuthError), loaders.Middleware(res.Store))
		mountErr = adapter.Mount(r, rest.AdminRoutes)
	})
	if mountErr != nil {
		return nil, mountErr
	}
	// Middleware on the mount itself: chi skips a router's own middleware
	// while it has no routes, which would let any key reach a 404.
	r.With(limitBody, auth.Middleware(res.Store, auth.KindExport, false, restAuthError), loaders.Middleware(res.Store)).
		Route(ExportBase, func(r chi.Router) {
			mountErr = adapter.Mount(r, rest.ExportRoutes)
		})
	if mountErr != nil {
		return nil, mountErr
	}
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) { rest.WriteError(w, http.StatusNotFound, "Not found") })
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		rest.WriteError(w, http.StatusMethodNotAllowed, "Method not allowed")
	})
	return r, nil
}

// executorConfig is what /graphql's server and the REST executor share.
type executorConfig interface {
	Use(graphql.HandlerExtension)
	SetErrorPresenter(graphql.ErrorPresenterFunc)
	SetRecoverFunc(graphql.RecoverFunc)
	SetQueryCache(graphql.Cache[*ast.QueryDocument])
}

// configure gives both executors the same extensions, error presenter,
// recovery and query cache.
func configure(x executorConfig, res *resolvers.Resolver) {
	x.Use(extension.FixedComplexityLimit(ComplexityLimit))
	x.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	x.SetErrorPresenter(res.PresentError)
	x.SetRecoverFunc(res.RecoverPanic)
}

func restAuthError(w http.ResponseWriter, _ *http.Request, status int, err error) {
	rest.WriteError(w, status, messageFor(status, err))
}

func graphqlAuthError(w http.ResponseWriter, _ *http.Request, status int, err error) {
	code := map[int]string{http.StatusUnauthorized: resolvers.CodeUnauthenticated, http.StatusForbidden: resolvers.CodeForbidden}[status]
	if code == "" {
		code = resolvers.CodeInternal
	}
	rest.WriteJSON(w, status, map[string]any{"errors": gqlerror.List{{
		Message: messageFor(status, err), Extensions: map[string]any{"code": code},
	}}})
}

func messageFor(status int, err error) string {
	if status >= 500 {
		return "Internal server error"
	}
	return err.Error()
}

// limitBody answers 413 for bodies over the limit and caps the rest.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > rest.MaxBodyBytes {
			rest.WriteError(w, http.StatusRequestEntityTooLarge, "request body is too large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, rest.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func readyz(s *store.Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			rest.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
			return
		}
		rest.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.ErrorContext(r.Context(), "handler panicked", "panic", p, "path", r.URL.Path)
					rest.WriteError(w, http.StatusInternalServerError, "")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func accessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rec, r)
			log.InfoContext(r.Context(), "request", "method", r.Method, "path", r.URL.Path,
				"status", rec.status, "duration_ms", time.Since(start).Milliseconds())
		})
	}
}
