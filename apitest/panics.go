package apitest

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fleetgraph/fleetgraph/obs"
)

// Every server the harness starts tells panics of the panics it recovers
// from (resolvers.Resolver.OnPanic), keyed by the request id. Send fails
// the test whose answer carries the id of a request that panicked; Main
// fails the test binary for those no Send claimed (requests sent by other
// clients, subscriptions), listing them.
var panics = &panicLog{byRequest: map[string][]string{}}

type panicLog struct {
	mu        sync.Mutex
	byRequest map[string][]string // request id → panic and stack
}

// OnPanic is the resolvers.Resolver.OnPanic of every server the harness
// starts; a test that builds a server of its own (server.New) sets it too,
// so that a panic there fails the test as well.
func OnPanic(ctx context.Context, p any) { panics.record(ctx, p) }

// record notes p, recovered while answering the request of ctx.
func (l *panicLog) record(ctx context.Context, p any) {
	id := obs.RequestIDFrom(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byRequest[id] = append(l.byRequest[id], fmt.Sprintf("%v\n%s", p, debug.Stack()))
}

// claim answers and forgets the panics of the request of id.
func (l *panicLog) claim(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.byRequest[id]
	delete(l.byRequest, id)
	return out
}

// failOnPanic fails t when the server panicked answering req (its answer's
// request id names a recorded panic).
func failOnPanic(t testing.TB, req *http.Request, header http.Header) {
	t.Helper()
	id := header.Get(obs.RequestIDHeader)
	if id == "" {
		return
	}
	for _, p := range panics.claim(id) {
		t.Errorf("the server panicked answering %s %s (request %s): %s", req.Method, req.URL.Path, id, p)
	}
}

// unclaimed describes the panics no Send claimed ("" when none).
func (l *panicLog) unclaimed() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.byRequest))
	for id := range l.byRequest {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		for _, p := range l.byRequest[id] {
			fmt.Fprintf(&b, "request %q: %s\n", id, p)
		}
	}
	return b.String()
}
