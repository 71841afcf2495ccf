package obs

import (
	"context"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/search"
)

// Search wraps b so that every call is timed in
// fleetgraph_search_duration_seconds, labelled by the API the request came
// through (from its route: graphql, admin, export), the kind of call (dsl,
// scroll, esql), the index kind (search.Kind; "" for scroll pages and ES|QL,
// whose indices the query names) and the outcome. Wrapping a wrapped
// backend returns it as it is.
func (m *Metrics) Search(b search.Backend) search.Backend {
	if _, ok := b.(timedSearch); ok || b == nil {
		return b
	}
	return timedSearch{b: b, m: m}
}

type timedSearch struct {
	b search.Backend
	m *Metrics
}

func (t timedSearch) Search(ctx context.Context, req search.Request) (search.Response, error) {
	start := time.Now()
	resp, err := t.b.Search(ctx, req)
	kind := "dsl"
	if req.Scroll != "" {
		kind = "scroll"
	}
	t.observe(ctx, kind, string(req.Scope.Kind), start, err)
	return resp, err
}

func (t timedSearch) ScrollNext(ctx context.Context, dataOwnerID int64, scrollID, keepAlive string) (search.Response, error) {
	start := time.Now()
	resp, err := t.b.ScrollNext(ctx, dataOwnerID, scrollID, keepAlive)
	t.observe(ctx, "scroll", "", start, err)
	return resp, err
}

func (t timedSearch) ESQL(ctx context.Context, dataOwnerID int64, slug, query string) ([]map[string]any, error) {
	start := time.Now()
	rows, err := t.b.ESQL(ctx, dataOwnerID, slug, query)
	t.observe(ctx, "esql", "", start, err)
	return rows, err
}

func (t timedSearch) PrecheckESQL(query string) error { return t.b.PrecheckESQL(query) }

func (t timedSearch) observe(ctx context.Context, kind, index string, start time.Time, err error) {
	t.m.search.WithLabelValues(apiOf(ctx), kind, index, outcome(ctx, err)).Observe(time.Since(start).Seconds())
}

// apiOf names the API of the request ctx belongs to, from its route.
func apiOf(ctx context.Context) string {
	rctx := chi.RouteContext(ctx)
	if rctx == nil {
		return "other"
	}
	p := rctx.RoutePattern()
	switch {
	case p == "/graphql":
		return "graphql"
	case strings.HasPrefix(p, "/client_admin_api/"):
		return "admin"
	case strings.HasPrefix(p, "/export_api/"):
		return "export"
	}
	return "other"
}

// outcome is "ok", "cancelled" (the request ended first) or the code of
// the error's class in apierr's table, lower-cased ("bad_request",
// "service_unavailable", "too_many_requests", "internal_server_error").
func outcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "ok"
	case ctx.Err() != nil:
		return "cancelled"
	}
	return strings.ToLower(apierr.ClassOf(err).Code)
}
