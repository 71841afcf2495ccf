package es

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
)

func newBackend(t *testing.T, f *apitest.FakeES, secret string) *Backend {
	t.Helper()
	b, err := New(f.URL, nil, []byte(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantQuery(t *testing.T, got url.Values, want map[string]string) {
	t.Helper()
	w := url.Values{}
	for k, v := range want {
		w.Set(k, v)
	}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("query = %v, want %v", got, w)
	}
}

// untypedPath is what a scope of acme's measurements (no types) searches.
const untypedPath = "/analytics-production-acme-measurements*/_search"

const searchAnswer = `{"took":1,"timed_out":false,"hits":{"total":{"value":2,"relation":"eq"},"max_score":1,
	"hits":[{"_index":"analytics-production-acme-measurements-videomeasurement","_id":"m1","_score":1,"_source":{"id":"m1","n":12345678901234567}}]}}`

func TestSearchRequest(t *testing.T) {
	f := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) { return 200, searchAnswer })
	b := newBackend(t, f, "secret")
	// The body's "index" is not an index choice: only the scope is.
	body := map[string]any{"query": map[string]any{"term": map[string]any{"study.subject": "s1"}}, "size": 5,
		"index": "analytics-production-other-*"}
	out, err := b.Search(context.Background(), search.Request{
		Scope: search.Scope{DataOwnerID: 1, Slug: "acme", Kind: search.KindMeasurement}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != untypedPath {
		t.Fatalf("request %s %s, want POST %s", r.Method, r.Path, untypedPath)
	}
	wantQuery(t, r.Query, map[string]string{"ignore_unavailable": "true", "allow_no_indices": "true"})
	apitest.SameJSON(t, "body", r.Body, `{"query":{"term":{"study.subject":"s1"}},"size":5,"index":"analytics-production-other-*"}`)
	if _, ok := out["_scroll_id"]; ok {
		t.Fatal("a search without scroll has a _scroll_id")
	}
	hits := out["hits"].(map[string]any)
	if got := hits["total"].(map[string]any)["value"]; got != json.Number("2") {
		t.Fatalf("total = %#v", got)
	}
	src := hits["hits"].([]any)[0].(map[string]any)["_source"].(map[string]any)
	if got := src["n"]; got != json.Number("12345678901234567") {
		t.Fatalf("large integer = %#v, want it exact", got)
	}
}

func TestSearchTypedScopeAndEmptyBody(t *testing.T) {
	f := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) { return 200, searchAnswer })
	b := newBackend(t, f, "secret")
	_, err := b.Search(context.Background(), search.Request{Scope: search.Scope{DataOwnerID: 1, Slug: "acme",
		Kind: search.KindMeasurement, Types: []string{"VideoMeasurement", "SpeedMeasurement"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Requests()[0]
	want := "/analytics-production-acme-measurements-videomeasurement,analytics-production-acme-measurements-speedmeasurement/_search"
	if r.Method != http.MethodPost || r.Path != want {
		t.Fatalf("request %s %s, want POST %s", r.Method, r.Path, want)
	}
	wantQuery(t, r.Query, map[string]string{"ignore_unavailable": "true", "allow_no_indices": "true"})
	apitest.SameJSON(t, "body", r.Body, `{}`)
}

func TestSearchRefusesBadScopes(t *testing.T) {
	f := apitest.NewFakeES(t, nil)
	b := newBackend(t, f, "secret")
	for _, types := range [][]string{{"x,analytics-production-other-measurements"}, {"VideoMeasurement", "video*"},
		{"video?"}, {"a b"}, {"a/b"}, {"a#b"}, {""}} {
		_, err := b.Search(context.Background(), search.Request{Scope: search.Scope{DataOwnerID: 1, Slug: "acme",
			Kind: search.KindMeasurement, Types: types}})
		if !errors.Is(err, search.ErrBadRequest) {
			t.Fatalf("types %q: err = %v, want a bad request", types, err)
		}
	}
	for _, keep := range []string{"10m", "1h", "0s", "abc", "-1m", "5"} {
		_, err := b.Search(context.Background(), search.Request{Scope: search.Scope{DataOwnerID: 1, Slug: "acme",
			Kind: search.KindMeasurement}, Scroll: keep})
		if !errors.Is(err, search.ErrBadRequest) {
			t.Fatalf("scroll %q: err = %v, want a bad request", keep, err)
		}
	}
	for _, scope := range []search.Scope{{DataOwnerID: 1}, {DataOwnerID: 1, Slug: "acme"},
		{DataOwnerID: 1, Slug: "acme-eu", Kind: search.KindMeasurement}, {DataOwnerID: 1, Slug: "a,b", Kind: search.KindMeasurement},
		{DataOwnerID: 1, Slug: "acme", Kind: "nope"}} {
		if _, err := b.Search(context.Background(), search.Request{Scope: scope}); err == nil || errors.Is(err, search.ErrBadRequest) {
			t.Fatalf("scope %+v: err = %v, want a server error", scope, err)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("%d requests reached Elasticsearch", n)
	}
}

func TestScroll(t *testing.T) {
	const esID = "FGluY2x1ZGVfY29udGV4dF91dWlkDXF1ZXJ5QW5kRmV0Y2gBFkVT=="
	const esID2 = "DXF1ZXJ5QW5kRmV0Y2gBFkVTMg=="
	const esID3 = "DXF1ZXJ5QW5kRmV0Y2gBFkVTMw=="
	page := func(id string, hits string) string {
		return `{"_scroll_id":"` + id + `","hits":{"total":{"value":2,"relation":"eq"},"hits":[` + hits + `]}}`
	}
	const hit1 = `{"_index":"analytics-production-acme-anomaly_events","_id":"a1","_source":{"id":"a1"}}`
	const hit2 = `{"_index":"analytics-production-acme-anomaly_events","_id":"a2","_source":{"id":"a2"}}`
	f := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		switch {
		case r.Method == http.MethodDelete:
			return 200, `{"succeeded":true,"num_freed":1}`
		case r.Path == "/_search/scroll" && strings.Contains(string(r.Body), esID2):
			return 200, page(esID3, "") // the end: no more hits
		case r.Path == "/_search/scroll":
			return 200, page(esID2, hit2)
		}
		return 200, page(esID, hit1)
	})
	b := newBackend(t, f, "secret")
	ctx := context.Background()
	scope := search.Scope{DataOwnerID: 7, Slug: "acme", Kind: search.KindAnomalyEvent}
	out, err := b.Search(ctx, search.Request{Scope: scope, Body: map[string]any{"size": 1}, Scroll: "1m"})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Requests()[0]
	if r.Path != "/analytics-production-acme-anomaly_events*/_search" {
		t.Fatalf("path %s", r.Path)
	}
	wantQuery(t, r.Query, map[string]string{"ignore_unavailable": "true", "allow_no_indices": "true", "scroll": "60000ms"})
	id, _ := out["_scroll_id"].(string)
	if !strings.HasPrefix(id, "fgs1.7.") || strings.Contains(id, esID) {
		t.Fatalf("scroll id %q is not wrapped", id)
	}

	next, err := b.ScrollNext(ctx, 7, id, "1m")
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	r = reqs[1]
	if r.Method != http.MethodPost || r.Path != "/_search/scroll" || len(r.Query) != 0 {
		t.Fatalf("scroll request %s %s?%v", r.Method, r.Path, r.Query)
	}
	apitest.SameJSON(t, "body", r.Body, `{"scroll":"1m","scroll_id":"`+esID+`"}`)
	id2, _ := next["_scroll_id"].(string)
	if !strings.HasPrefix(id2, "fgs1.7.") || id2 == id {
		t.Fatalf("next scroll id %q", id2)
	}
	// The last page (no hits) ends the scroll: Elasticsearch's search
	// context is cleared at once, and the page carries no scroll id.
	last, err := b.ScrollNext(ctx, 7, id2, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs = f.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want search, 2 scrolls and a clear", len(reqs))
	}
	apitest.SameJSON(t, "body", reqs[2].Body, `{"scroll_id":"`+esID2+`"}`)
	if r := reqs[3]; r.Method != http.MethodDelete || r.Path != "/_search/scroll" || len(r.Query) != 0 {
		t.Fatalf("clear request %s %s?%v", r.Method, r.Path, r.Query)
	}
	apitest.SameJSON(t, "body", reqs[3].Body, `{"scroll_id":["`+esID3+`"]}`)
	if _, ok := last["_scroll_id"]; ok {
		t.Fatalf("the last page carries a scroll id: %v", last)
	}
	if hits := last["hits"].(map[string]any)["hits"].([]any); len(hits) != 0 {
		t.Fatalf("last page hits %v", hits)
	}

	// Refused before any request: another data owner, forgeries, another
	// server's secret, a keep-alive over the maximum.
	other := newBackend(t, f, "other secret")
	out, err = other.Search(ctx, search.Request{Scope: scope, Scroll: "1m"})
	if err != nil {
		t.Fatal(err)
	}
	foreign := out["_scroll_id"].(string)
	parts := strings.Split(id, ".")
	sent := len(f.Requests())
	for name, c := range map[string]struct {
		owner int64
		id    string
	}{
		"other owner":     {8, id},
		"raw es id":       {7, esID},
		"empty":           {7, ""},
		"owner swapped":   {8, strings.Join([]string{parts[0], "8", parts[2], parts[3]}, ".")},
		"es id swapped":   {7, strings.Join([]string{parts[0], parts[1], "QUJD", parts[3]}, ".")},
		"mac changed":     {7, strings.Join([]string{parts[0], parts[1], parts[2], "AAAA" + parts[3][4:]}, ".")},
		"no mac":          {7, strings.Join(parts[:3], ".")},
		"extra part":      {7, id + ".x"},
		"other secret":    {7, foreign},
		"other version":   {7, "fgs2" + id[4:]},
		"scroll too long": {7, id},
	} {
		keep := "1m"
		if name == "scroll too long" {
			keep = "6m"
		}
		_, err := b.ScrollNext(ctx, c.owner, c.id, keep)
		if !errors.Is(err, search.ErrBadRequest) {
			t.Fatalf("%s: err = %v, want a bad request", name, err)
		}
	}
	if n := len(f.Requests()); n != sent {
		t.Fatalf("%d refused scroll ids reached Elasticsearch", n-sent)
	}

	// An expired scroll: Elasticsearch's 404 is a bad request.
	f.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 404, `{"error":{"root_cause":[{"type":"search_context_missing_exception","reason":"No search context found for id [1]"}],"type":"search_phase_execution_exception","reason":"all shards failed"},"status":404}`
	})
	if _, err := b.ScrollNext(ctx, 7, id, "1m"); !errors.Is(err, search.ErrBadRequest) {
		t.Fatalf("expired scroll: err = %v", err)
	}
}

func TestESQL(t *testing.T) {
	f := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) {
		return 200, `{"took":3,"is_partial":false,"columns":[{"name":"client_uuid","type":"keyword"},{"name":"n","type":"long"},{"name":"avg","type":"double"}],
			"values":[["c1",3,1.5],["c2",1,null]]}`
	})
	b := newBackend(t, f, "secret")
	const q = `FROM analytics-production-acme-measurements* | STATS n = COUNT(*), avg = AVG(x) BY client_uuid`
	rows, err := b.ESQL(context.Background(), 1, "acme", q)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Requests()[0]
	if r.Method != http.MethodPost || r.Path != "/_query" {
		t.Fatalf("request %s %s", r.Method, r.Path)
	}
	wantQuery(t, r.Query, map[string]string{"format": "json"})
	body, _ := json.Marshal(map[string]string{"query": q})
	apitest.SameJSON(t, "body", r.Body, string(body))
	want := []map[string]any{
		{"client_uuid": "c1", "n": json.Number("3"), "avg": json.Number("1.5")},
		{"client_uuid": "c2", "n": json.Number("1"), "avg": nil},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows = %#v", rows)
	}

	f.SetAnswer(func(apitest.ESRequest) (int, string) { return 200, `{"columns":[],"values":[]}` })
	rows, err = b.ESQL(context.Background(), 1, "acme", q)
	if err != nil || rows == nil || len(rows) != 0 {
		t.Fatalf("empty result: %#v, %v", rows, err)
	}
}

func TestErrors(t *testing.T) {
	f := apitest.NewFakeES(t, nil)
	b := newBackend(t, f, "secret")
	ctx := context.Background()
	scope := search.Scope{DataOwnerID: 1, Slug: "acme", Kind: search.KindMeasurement}

	f.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 400, `{"error":{"root_cause":[{"type":"parsing_exception","reason":"unknown query [nope]"}],"type":"parsing_exception","reason":"unknown query [nope]"},"status":400}`
	})
	_, err := b.Search(ctx, search.Request{Scope: scope, Body: map[string]any{"query": map[string]any{"nope": 1}}})
	if !errors.Is(err, search.ErrBadRequest) || !strings.Contains(err.Error(), "parsing_exception: unknown query [nope]") {
		t.Fatalf("400: err = %v", err)
	}
	f.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 400, `{"error":{"root_cause":[{"type":"verification_exception","reason":"Found 1 problem\nline 1:1: Unknown column [x]"}],"type":"verification_exception","reason":"Found 1 problem"},"status":400}`
	})
	if _, err := b.ESQL(ctx, 1, "acme", "FROM x"); !errors.Is(err, search.ErrBadRequest) || !strings.Contains(err.Error(), "Unknown column [x]") {
		t.Fatalf("esql 400: err = %v", err)
	}
	for _, status := range []int{500, 401, 429} {
		f.SetAnswer(func(apitest.ESRequest) (int, string) {
			return status, `{"error":{"type":"some_exception","reason":"broken"},"status":500}`
		})
		_, err := b.Search(ctx, search.Request{Scope: scope})
		if err == nil || errors.Is(err, search.ErrBadRequest) {
			t.Fatalf("%d: err = %v, want an upstream error", status, err)
		}
		if unavailable := status != 401; errors.Is(err, search.ErrUnavailable) != unavailable {
			t.Fatalf("%d: err = %v, unavailable should be %v", status, err, unavailable)
		}
	}

	// Time-outs come from the context.
	release := make(chan struct{})
	f.SetAnswer(func(apitest.ESRequest) (int, string) { <-release; return 200, `{}` })
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = b.Search(tctx, search.Request{Scope: scope})
	cancel()
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, search.ErrBadRequest) {
		t.Fatalf("timeout: err = %v", err)
	}

	// No Elasticsearch at all.
	f.Close()
	if _, err := b.Search(ctx, search.Request{Scope: scope}); err == nil || errors.Is(err, search.ErrBadRequest) {
		t.Fatalf("connection refused: err = %v", err)
	}
}

func TestNewChecksArguments(t *testing.T) {
	if _, err := New("http://127.0.0.1:9200", nil, nil, nil); err == nil {
		t.Fatal("empty secret accepted")
	}
	for _, u := range []string{"", "127.0.0.1:9200", "ftp://x", "http://"} {
		if _, err := New(u, nil, []byte("s"), nil); err == nil {
			t.Fatalf("url %q accepted", u)
		}
	}
}

// A scroll whose first page has no hits is over at once: cleared, no id.
// A failure to clear does not fail the page.
func TestScrollWithoutHits(t *testing.T) {
	f := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		if r.Method == http.MethodDelete {
			return 500, `{"error":{"type":"exception","reason":"boom"},"status":500}`
		}
		return 200, `{"_scroll_id":"c2Nyb2xs","hits":{"total":{"value":0,"relation":"eq"},"hits":[]}}`
	})
	b := newBackend(t, f, "secret")
	out, err := b.Search(context.Background(), search.Request{
		Scope: search.Scope{DataOwnerID: 1, Slug: "acme", Kind: search.KindMeasurement}, Scroll: "30s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out["_scroll_id"]; ok {
		t.Fatalf("an empty scroll carries a scroll id: %v", out)
	}
	reqs := f.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests, want the search and a clear", len(reqs))
	}
	wantQuery(t, reqs[0].Query, map[string]string{"ignore_unavailable": "true", "allow_no_indices": "true", "scroll": "30000ms"})
	for _, r := range reqs[1:] { // the client retries a 500 on its own
		if r.Method != http.MethodDelete || r.Path != "/_search/scroll" {
			t.Fatalf("clear request %s %s", r.Method, r.Path)
		}
		apitest.SameJSON(t, "body", r.Body, `{"scroll_id":["c2Nyb2xs"]}`)
	}

	// Without scroll nothing is cleared, even when Elasticsearch sends an id.
	sent := len(f.Requests())
	if _, err := b.Search(context.Background(), search.Request{
		Scope: search.Scope{DataOwnerID: 1, Slug: "acme", Kind: search.KindMeasurement}}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Requests()) - sent; n != 1 {
		t.Fatalf("%d requests for a plain search, want 1", n)
	}
}

// ES|QL over indices that do not exist yet: Elasticsearch 8 refuses the
// query ("Unknown index"); a data owner without documents gets no rows, as
// on the embedded backend. Names that can never exist, and other errors,
// stay errors.
func TestESQLMissingIndices(t *testing.T) {
	f := apitest.NewFakeES(t, nil)
	b := newBackend(t, f, "secret")
	ctx := context.Background()
	verification := func(reason string) func(apitest.ESRequest) (int, string) {
		body, _ := json.Marshal(map[string]any{"error": map[string]any{
			"root_cause": []any{map[string]any{"type": "verification_exception", "reason": reason}},
			"type":       "verification_exception", "reason": reason}, "status": 400})
		return func(apitest.ESRequest) (int, string) { return 400, string(body) }
	}
	empty := map[string]func(apitest.ESRequest) (int, string){
		"narrowed pattern": verification("Found 1 problem\nline 1:1: Unknown index [analytics-production-acme-*]"),
		"kind pattern":     verification("Found 1 problem\nline 1:1: Unknown index [analytics-production-acme-measurements*]"),
		"typed index":      verification("Found 1 problem\nline 1:1: Unknown index [analytics-production-acme-measurements-videomeasurement]"),
		"with exclusion":   verification("Found 1 problem\nline 1:1: Unknown index [analytics-production-acme-*,-analytics-production-acme-lookup-clients]"),
		"list":             verification("Found 1 problem\nline 1:1: Unknown index [analytics-production-acme-measurements*,analytics-production-acme-anomaly_events]"),
		"index not found": func(apitest.ESRequest) (int, string) {
			return 404, `{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [analytics-production-acme-anomaly_events]","index":"analytics-production-acme-anomaly_events"}],"type":"index_not_found_exception","reason":"no such index [analytics-production-acme-anomaly_events]","resource.type":"index_or_alias","resource.id":"analytics-production-acme-anomaly_events","index_uuid":"_na_","index":"analytics-production-acme-anomaly_events"},"status":404}`
		},
	}
	for name, h := range empty {
		f.SetAnswer(h)
		rows, err := b.ESQL(ctx, 1, "acme", "FROM analytics-production-acme*")
		if err != nil || rows == nil || len(rows) != 0 {
			t.Fatalf("%s: rows %v, err %v, want no rows", name, rows, err)
		}
	}
	bad := map[string]func(apitest.ESRequest) (int, string){
		"no such kind":    verification("Found 1 problem\nline 1:1: Unknown index [analytics-production-acme-nothing]"),
		"other owner":     verification("Found 1 problem\nline 1:1: Unknown index [analytics-production-beta-*]"),
		"and a column":    verification("Found 2 problems\nline 1:1: Unknown index [analytics-production-acme-*]\nline 1:40: Unknown column [x]"),
		"only exclusions": verification("Found 1 problem\nline 1:1: Unknown index [-analytics-production-acme-x]"),
		"unknown column":  verification("Found 1 problem\nline 1:40: Unknown column [x]"),
		"parsing": func(apitest.ESRequest) (int, string) {
			return 400, `{"error":{"type":"parsing_exception","reason":"line 1:1: mismatched input"},"status":400}`
		},
		"other not found": func(apitest.ESRequest) (int, string) {
			return 404, `{"error":{"type":"resource_not_found_exception","reason":"x"},"status":404}`
		},
	}
	for name, h := range bad {
		f.SetAnswer(h)
		if _, err := b.ESQL(ctx, 1, "acme", "FROM analytics-production-acme*"); !errors.Is(err, search.ErrBadRequest) {
			t.Fatalf("%s: err = %v, want a bad request", name, err)
		}
	}
	f.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 503, `{"error":{"type":"unavailable_shards_exception","reason":"x"},"status":503}`
	})
	if _, err := b.ESQL(ctx, 1, "acme", "FROM analytics-production-acme*"); err == nil || errors.Is(err, search.ErrBadRequest) {
		t.Fatalf("503: err = %v, want an upstream error", err)
	}
}

// Backend.Timeout bounds every request: a cluster that does not answer
// fails the search (a server error, not a bad request).
func TestBackendTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) { <-release; return 200, `{}` })
	b := newBackend(t, f, "secret")
	if b.Timeout != limits.ESTimeout {
		t.Fatalf("default timeout %v", b.Timeout)
	}
	b.Timeout = 100 * time.Millisecond
	scope := search.Scope{DataOwnerID: 1, Slug: "acme", Kind: search.KindMeasurement}
	start := time.Now()
	_, err := b.Search(context.Background(), search.Request{Scope: scope})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, search.ErrBadRequest) || !errors.Is(err, search.ErrUnavailable) {
		t.Fatalf("search: err = %v", err)
	}
	if _, err := b.ESQL(context.Background(), 1, "acme", "FROM analytics-production-acme*"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("esql: err = %v", err)
	}
	page := map[string]any{"_scroll_id": "c2Nyb2xs"}
	b.wrapScrollID(1, page)
	if _, err := b.ScrollNext(context.Background(), 1, page["_scroll_id"].(string), "1m"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("scroll: err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
