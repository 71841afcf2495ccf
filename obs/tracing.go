package obs

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the OpenTelemetry tracing of one process: HTTP requests
// (otelhttp), GraphQL operations (the GraphQL extension) and pgx
// statements (otelpgx), exported over OTLP/HTTP. A nil *Tracing is
// tracing off: nothing of it is installed, so it costs nothing.
type Tracing struct {
	provider   *sdktrace.TracerProvider
	propagator propagation.TextMapPropagator
}

// instrumentation names the tracer of fleetgraph's own spans.
const instrumentation = "github.com/fleetgraph/fleetgraph"

// TracingFromEnv sets tracing up as the standard OpenTelemetry environment
// variables say, or returns nil when they do not ask for it: tracing is on
// when OTEL_TRACES_EXPORTER is "otlp", or when it is unset and
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set;
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off. The
// exporter reads the rest of OTEL_EXPORTER_OTLP_* (endpoint, headers,
// timeout, compression, certificates), the SDK OTEL_TRACES_SAMPLER(_ARG)
// and OTEL_BSP_*, the resource OTEL_SERVICE_NAME (default "fleetgraph")
// and OTEL_RESOURCE_ATTRIBUTES. Only OTLP over HTTP (http/protobuf) is
// built in; another exporter or protocol is an error, not a silent no.
func TracingFromEnv(ctx context.Context) (*Tracing, error) {
	if !tracingRequested() {
		return nil, nil
	}
	if err := checkTracingEnv(); err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", "fleetgraph")))
	if err == nil {
		res, err = resource.Merge(res, resource.Environment()) // OTEL_SERVICE_NAME wins over the default
	}
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	return &Tracing{
		provider:   sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}, nil
}

func envTrim(key string) string { return strings.ToLower(strings.TrimSpace(os.Getenv(key))) }

// tracingRequested: see TracingFromEnv.
func tracingRequested() bool {
	if envTrim("OTEL_SDK_DISABLED") == "true" {
		return false
	}
	switch envTrim("OTEL_TRACES_EXPORTER") {
	case "none":
		return false
	case "":
		return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	return true
}

// checkTracingEnv refuses what is not built in.
func checkTracingEnv() error {
	if e := envTrim("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return fmt.Errorf("OTEL_TRACES_EXPORTER=%q is not supported: fleetgraph exports traces with otlp (or none)", e)
	}
	for _, key := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := envTrim(key); p != "" {
			if p != "http/protobuf" {
				return fmt.Errorf("%s=%q is not supported: fleetgraph exports OTLP over HTTP (http/protobuf)", key, p)
			}
			break // the traces-specific setting wins
		}
	}
	return nil
}

// Shutdown sends the spans not yet exported and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Tracer is the tracer of fleetgraph's own spans (nil when off).
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.provider.Tracer(instrumentation)
}

// Pgx is the statement tracer for the store's pool (nil when off). Spans
// carry the SQL text with its placeholders, never the parameters.
func (t *Tracing) Pgx() pgx.QueryTracer {
	if t == nil {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(t.provider), otelpgx.WithMeterProvider(noop.NewMeterProvider()))
}

// HTTP wraps the root handler in a server span per request, continuing an
// incoming W3C trace context; the span is named "METHOD route-pattern"
// once routed and carries the request id. Off: next as it is.
func (t *Tracing) HTTP(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	named := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		span := trace.SpanFromContext(r.Context())
		route := RoutePattern(r)
		span.SetName(r.Method + " " + route)
		span.SetAttributes(attribute.String("http.route", route), attribute.String("http.request.id", RequestIDFrom(r.Context())))
	})
	return otelhttp.NewHandler(named, "http", otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(t.propagator),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))
}
