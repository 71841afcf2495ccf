package main

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// otlpReceiver is an OTLP/HTTP trace receiver on 127.0.0.1: it keeps the
// spans of every POST /v1/traces.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	scopes  map[*tracepb.Span]string // instrumentation scope of each span
	service string
}

func startOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	rc := &otlpReceiver{scopes: map[*tracepb.Span]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, _ := io.ReadAll(body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					rc.service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					rc.spans = append(rc.spans, s)
					rc.scopes[s] = ss.GetScope().GetName()
				}
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, serve sends the spans of a GraphQL
// request to it: the HTTP server span continuing the caller's trace, the
// operation's span named after it, and the pgx spans of its statements
// below the operation's.
func TestServeTracesToTheOTLPEndpointOfTheEnvironment(t *testing.T) {
	rc, endpoint := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	e := apitest.Get(t)
	o := e.NewOwner(t, "traced")
	addr, stop := startServe(t, e.DatabaseURL)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	h := http.Header{"Content-Type": {"application/json"}, "X-Api-Key": {o.Key},
		"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}}
	r := apitest.Send(t, nil, apitest.Request(t, http.MethodPost, "http://"+addr+"/graphql", h,
		map[string]any{"query": "query TracedIsps { isps { id name } }"}))
	apitest.WantStatus(t, r, http.StatusOK)
	if err := stop(); err != nil { // shutting down sends the spans still batched
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.service != "fleetgraph" {
		t.Errorf("service.name %q, want fleetgraph", rc.service)
	}
	byID := map[string]*tracepb.Span{}
	var op, httpSpan *tracepb.Span
	for _, s := range rc.spans {
		if strings.EqualFold(hex.EncodeToString(s.GetTraceId()), traceID) {
			byID[string(s.GetSpanId())] = s
			switch {
			case s.GetName() == "query TracedIsps":
				op = s
			case s.GetName() == "POST /graphql":
				httpSpan = s
			}
		}
	}
	if httpSpan == nil || httpSpan.GetKind() != tracepb.Span_SPAN_KIND_SERVER || attr(httpSpan, "http.route") != "/graphql" ||
		attr(httpSpan, "http.request.id") != r.Header.Get("X-Request-Id") {
		t.Fatalf("no server span POST /graphql with its route and request id in the caller's trace; spans: %v", names(rc.spans))
	}
	if op == nil || attr(op, "graphql.operation.name") != "TracedIsps" || attr(op, "graphql.operation.type") != "query" {
		t.Fatalf("no span of the operation TracedIsps in the caller's trace; spans: %v", names(rc.spans))
	}
	below := func(s *tracepb.Span, ancestor *tracepb.Span) bool {
		for p := byID[string(s.GetParentSpanId())]; p != nil; p = byID[string(p.GetParentSpanId())] {
			if p == ancestor {
				return true
			}
		}
		return false
	}
	if !below(op, httpSpan) {
		t.Errorf("the operation's span is not below the HTTP span")
	}
	pgxBelowOp := 0
	for _, s := range byID {
		if strings.Contains(rc.scopes[s], "otelpgx") && below(s, op) && attr(s, "db.query.text") != "" {
			pgxBelowOp++
		}
	}
	if pgxBelowOp == 0 {
		t.Errorf("no pgx span with its statement below the operation's span; spans: %v", names(rc.spans))
	}
}

func names(spans []*tracepb.Span) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.GetName())
	}
	return out
}

// FLEETGRAPH_METRICS_ADDR moves /metrics to a listener of its own, with
// the rollup refresher's rounds that serve runs.
func TestServeMetricsOnTheirOwnAddress(t *testing.T) {
	metricsAddr := freeAddr(t)
	// A database of its own: on the tests' shared one, a rollup round of
	// a process an earlier test killed holds the periodic job until River
	// rescues it (RescueAfter, over a minute), and no round runs here.
	db, st, err := testdb.Create(t.Context(), "fleetgraph_test_metrics", store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Cleanup(db.Drop)
	addr, _ := startServe(t, db.URL, "--metrics-addr", metricsAddr)
	// The rollup refresher's first round runs at start; wait for its report
	// (15 s were not enough once, with a 10,000,000-document import
	// running beside the tests).
	var m apitest.Metrics
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		m = apitest.Scrape(t, "http://"+metricsAddr+"/metrics")
		if m.Value("fleetgraph_rollup_refreshes_total", map[string]string{"outcome": "ok"}) >= 1 || time.Now().After(deadline) {
			break
		}
	}
	if m.Value("fleetgraph_rollup_refreshes_total", map[string]string{"outcome": "ok"}) < 1 ||
		m.Value("fleetgraph_rollup_last_success_timestamp_seconds", nil) < float64(time.Now().Add(-time.Minute).Unix()) ||
		m.Value("fleetgraph_rollup_refresh_duration_seconds", nil) < 1 {
		t.Errorf("the rollup refresher's rounds are not reported")
	}
	if m.Value("fleetgraph_db_pool_max_connections", nil) < 1 {
		t.Errorf("the pool's metrics are missing")
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the API's address: %d, want 404", resp.StatusCode)
	}
}

// FLEETGRAPH_PPROF_ADDR serves Go's runtime profiles on a listener of their
// own, and never on the API's address.
func TestServeProfilesOnTheirOwnAddress(t *testing.T) {
	pprofAddr := freeAddr(t)
	addr, _ := startServe(t, apitest.Get(t).DatabaseURL, "--pprof-addr", pprofAddr)
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, body := get("http://" + pprofAddr + "/debug/pprof/"); status != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/: %d %.200q, want 200 listing the profiles", status, body)
	}
	if status, body := get("http://" + pprofAddr + "/debug/pprof/profile?seconds=1"); status != http.StatusOK || len(body) == 0 {
		t.Errorf("a CPU profile of 1 s: %d, %d bytes", status, len(body))
	}
	if status, body := get("http://" + pprofAddr + "/debug/pprof/cmdline"); status != http.StatusOK || !strings.Contains(body, os.Args[0]) {
		t.Errorf("/debug/pprof/cmdline: %d %q", status, body)
	}
	if status, _ := get("http://" + addr + "/debug/pprof/"); status != http.StatusNotFound {
		t.Errorf("/debug/pprof/ on the API's address: %d, want 404", status)
	}
}
