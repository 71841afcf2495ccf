package obs

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one server's Prometheus registry and the metrics fleetgraph
// itself records; Handler serves them in the exposition format. Each
// server gets its own (tests run several servers in one process).
type Metrics struct {
	Registry *prometheus.Registry

	inFlight prometheus.Gauge
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	search   *prometheus.HistogramVec
	rollups  rollupMetrics
	indexer  indexerMetrics
	opNames  *opNames
}

// latencyBuckets span a cached key lookup (~1 ms) to the 2 minute write
// timeout.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// NewMetrics makes a registry with the Go runtime and process collectors
// and fleetgraph's own metrics.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fleetgraph_http_requests_in_flight", Help: "HTTP requests being answered.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetgraph_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern, GraphQL operation (on /graphql) and status.",
		}, []string{"method", "route", "operation", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fleetgraph_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request (to the end of its body), by method, route pattern, GraphQL operation and status.",
			Buckets: latencyBuckets,
		}, []string{"method", "route", "operation", "status"}),
		search: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fleetgraph_search_duration_seconds",
			Help: "Calls of the search backend, by API (graphql, admin, export), kind (dsl, scroll, esql), " +
				"index kind and outcome (ok, cancelled, or the error's code lower-cased: bad_request, service_unavailable, ...).",
			Buckets: latencyBuckets,
		}, []string{"api", "kind", "index", "outcome"}),
		rollups: newRollupMetrics(),
		indexer: newIndexerMetrics(),
		opNames: newOpNames(MaxOperationNames),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.inFlight, m.requests, m.duration, m.search)
	m.rollups.register(reg)
	m.indexer.register(reg)
	return m
}

// Handler serves the registry in the Prometheus exposition format (text,
// or protobuf/OpenMetrics as the scraper asks).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// requestInfo is what the middleware and the handlers below it know about
// a request: the GraphQL operation (set by the GraphQL extension) and the
// answer's status as written so far.
type requestInfo struct {
	operation string
	answer    statusWriter
}

type requestInfoKey struct{}

// setOperation records the request's GraphQL operation label.
func setOperation(ctx context.Context, op string) {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		info.operation = op
	}
}

// Operation is the request's GraphQL operation as labelled in the metrics
// ("" before it is known and outside /graphql).
func Operation(ctx context.Context) string {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.operation
	}
	return ""
}

// Middleware counts and times every request. It must sit on the root
// router: the route pattern is read from chi's routing context after the
// request was routed (a request no route took is "unmatched"), never the
// raw path.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inFlight.Inc()
		info := &requestInfo{answer: statusWriter{ResponseWriter: w, status: http.StatusOK}}
		defer func() {
			m.inFlight.Dec()
			labels := []string{methodLabel(r.Method), RoutePattern(r), info.operation, strconv.Itoa(info.answer.status)}
			m.requests.WithLabelValues(labels...).Inc()
			m.duration.WithLabelValues(labels...).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(&info.answer, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
	})
}

// Status is the status of the request's answer as written so far (200
// when nothing was: net/http answers 200 then), for the access log; 0
// outside the middleware.
func Status(ctx context.Context) int {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.answer.status
	}
	return 0
}

// RoutePattern is the chi route pattern that answered r ("unmatched" when
// none did, as for 404s and 405s).
func RoutePattern(r *http.Request) string {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil {
		return "unmatched"
	}
	p := rctx.RoutePattern()
	if p == "" || p == "/*" {
		return "unmatched"
	}
	return p
}

// methodLabel keeps the label to the methods HTTP defines: any method is
// routed (to a 405), so a client could otherwise make up labels.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// statusWriter records the status of the answer: 200 until a final status
// is written (net/http answers 200 when the handler writes none), then
// that one. It keeps Flush (scroll streams assert http.Flusher) and Unwrap
// (http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	status int
	final  bool // the status is sent
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.final && code >= 200 { // not 1xx: a final status follows
		s.status, s.final = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	s.final = true
	return s.ResponseWriter.Write(p)
}

func (s *statusWriter) Flush() {
	s.final = true
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// WatchRefusalHolds registers how many rate-limited requests the server is
// holding before their 429 (ratelimit's repeat hold), read by held.
func (m *Metrics) WatchRefusalHolds(held func() int64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "fleetgraph_rate_limit_held_requests",
		Help: "Refused requests held before their 429: their key came back before the Retry-After it was given.",
	}, func() float64 { return float64(held()) }))
}

// WatchWebClientsRefused reports refused(), the clients the client
// analytics keys named but the data owners' bound on new web clients did
// not let them create, as a counter.
func (m *Metrics) WatchWebClientsRefused(refused func() int64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "fleetgraph_analytics_clients_refused_total",
		Help: "Clients the client analytics keys' reports named but were not created: past the data owner's bound on new web clients.",
	}, func() float64 { return float64(refused()) }))
}
