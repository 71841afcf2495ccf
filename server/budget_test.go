package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestAnswerBudget: with a 256 KiB answer budget and twenty 30 KB
// documents, every way of reading documents answers what fits and refuses
// what does not with a 400 saying how to ask for less — searches (also
// several aliased in one GraphQL request, which share the budget), ES|QL,
// the export listing — while a scroll streams every document, each page
// with a budget of its own.
func TestAnswerBudget(t *testing.T) {
	e := apitest.Get(t)
	base := e.StartServerWith(t, func(r *resolvers.Resolver) { r.MaxAnswerBytes = 256 << 10 })
	o := e.NewOwner(t, "budget")
	exportKey, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	client := o.NewClient(t, store.NewClient{})
	pad := strings.Repeat("x", 30_000)
	for i := range 20 {
		o.InsertDocuments(t, "measurement", map[string]any{"id": fmt.Sprintf("big-%02d", i), "type": "WebMeasurement",
			"client_uuid": client.UUID, "created_at": fmt.Sprintf("2026-11-01T10:%02d:00Z", i), "pad": pad})
	}
	wantRefused := func(t *testing.T, r *apitest.Response) {
		t.Helper()
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Raw), "ask for less") || !strings.Contains(string(r.Raw), "256 KiB") {
			t.Fatalf("status %d, want 400 naming the budget and how to ask for less: %.300s", r.Status, r.Raw)
		}
	}
	wantOK := func(t *testing.T, r *apitest.Response) {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %.300s", r.Status, r.Raw)
		}
	}
	export := func(method, path string, body any) *apitest.Response {
		return apitest.DoAt(t, base, method, "/export_api/v1"+path, exportKey, body)
	}
	all := map[string]any{"query": map[string]any{"match_all": map[string]any{}}}

	t.Run("search", func(t *testing.T) {
		wantOK(t, export(http.MethodPost, "/search", map[string]any{"body": all, "size": 5}))
		wantRefused(t, export(http.MethodPost, "/search", map[string]any{"body": all, "size": 20}))
		wantOK(t, export(http.MethodPost, "/search", map[string]any{"body": all, "size": 20, "_source_includes": []string{"id"}}))
	})
	t.Run("aliased searches share one budget", func(t *testing.T) {
		one := `measurementSearch(body: {query: {match_all: {}}}, size: 5)`
		g := apitest.GraphQLAt(t, base, o.Key, "{ a: "+one+" }", nil)
		if len(g.Errors) > 0 {
			t.Fatalf("one search of 150 KB: %s", g.Raw)
		}
		g = apitest.GraphQLAt(t, base, o.Key, "{ a: "+one+" b: "+one+" c: "+one+" }", nil)
		if g.Code() != "BAD_REQUEST" || !strings.Contains(g.Errors[0].Message, "ask for less") {
			t.Fatalf("three searches of 150 KB: %.300s", g.Raw)
		}
	})
	t.Run("ES|QL", func(t *testing.T) {
		from := "FROM analytics-production-" + o.Slug + "-measurements"
		wantOK(t, export(http.MethodGet, "/esql?query="+url.QueryEscape(from+" | SORT id | LIMIT 5"), nil))
		wantRefused(t, export(http.MethodGet, "/esql?query="+url.QueryEscape(from+" | SORT id | LIMIT 20"), nil))
	})
	t.Run("export listing", func(t *testing.T) {
		wantOK(t, export(http.MethodGet, "/measurements?per_page=5", nil))
		wantRefused(t, export(http.MethodGet, "/measurements?per_page=20", nil))
	})
	t.Run("a list of many small records is checked as a whole", func(t *testing.T) {
		many := e.NewOwner(t, "budgetmany")
		seedFleet(t, e, many.ID, 2000) // about 400 KB of clients
		r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/clients", many.Key, nil)
		wantRefused(t, r)
		g := apitest.GraphQLAt(t, base, many.Key, "{ clients { id } }", nil)
		if len(g.Errors) > 0 {
			t.Fatalf("the ids alone fit: %.300s", g.Raw)
		}
	})
	t.Run("a scroll streams everything, page by page", func(t *testing.T) {
		r := export(http.MethodPost, "/search", map[string]any{"body": all, "size": 5, "scroll": "1m"})
		if ids := exportNDJSON(t, r); len(ids) != 20 {
			t.Fatalf("streamed %d documents, want 20", len(ids))
		}
	})
}
