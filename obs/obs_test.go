package obs

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestOperationNamesAreBounded(t *testing.T) {
	o := newOpNames(3)
	for _, tc := range []struct{ name, want string }{
		{"", OpAnonymous},
		{"ClientGet", OpUnknown}, // not learned from a refused document
		{"ClientGet", "ClientGet"},
		{"ClientGet", "ClientGet"},
		{"1abc", OpInvalid},
		{"a-b", OpInvalid},
		{"näme", OpInvalid},
		{strings.Repeat("x", 65), OpInvalid},
		{"B", "B"},
		{"C", "C"},
		{"D", OpOther}, // past the bound
		{"B", "B"},
	} {
		learn := !(tc.name == "ClientGet" && tc.want == OpUnknown)
		if got := o.label(tc.name, learn); got != tc.want {
			t.Errorf("label(%q, %v) = %q, want %q", tc.name, learn, got, tc.want)
		}
	}
	for i := range 1000 {
		o.label(fmt.Sprint("N", i), true)
	}
	if len(o.names) != 3 {
		t.Errorf("%d names kept, want at most 3", len(o.names))
	}
}

func TestTracingIsOffUnlessTheEnvironmentAsks(t *testing.T) {
	clear := func() {
		for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
			t.Setenv(k, "")
		}
	}
	for _, tc := range []struct {
		env     map[string]string
		on      bool
		wantErr string
	}{
		{env: nil, on: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, on: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, on: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: "OTEL_TRACES_EXPORTER"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true},
	} {
		clear()
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		tr, err := TracingFromEnv(context.Background())
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want one naming %s", tc.env, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case (tr != nil) != tc.on:
			t.Errorf("%v: tracing on = %v, want %v", tc.env, tr != nil, tc.on)
		}
		_ = tr.Shutdown(context.Background())
	}
}

// Off, nothing is installed: the HTTP wrapper is the handler itself and
// there is no tracer for the store.
func TestTracingOffInstallsNothing(t *testing.T) {
	var tr *Tracing
	if tr.Pgx() != nil || tr.Tracer() != nil {
		t.Error("a nil Tracing hands out tracers")
	}
	h := plainHandler{}
	if got := tr.HTTP(h); got != h {
		t.Errorf("the handler was wrapped in %T", got)
	}
}

type plainHandler struct{}

func (plainHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// TestGraphQLName: a GraphQL name, which the engine's rendering writes into
// JSON unescaped (anything else leaves the object to gqlgen) and the
// metrics take as an operation's label.
func TestGraphQLName(t *testing.T) {
	for s, want := range map[string]bool{"id": true, "_x9": true, "Client_2": true, "a": true,
		"": false, "9a": false, `a"b`: false, `a\b`: false, "é": false, "a b": false, "a:": false} {
		if got := GraphQLName(s); got != want {
			t.Errorf("GraphQLName(%q) = %v, want %v", s, got, want)
		}
	}
}
