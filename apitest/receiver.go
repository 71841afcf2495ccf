package apitest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/jobs"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

// Received is one request a Receiver got.
type Received struct {
	Header http.Header
	Body   []byte
	Path   string
}

// Receiver is a local webhook receiver (an HTTP server on 127.0.0.1) that
// records every request and answers what Answer says (200 when nil).
type Receiver struct {
	URL string
	// Answer decides the answer to the n-th request (from 0).
	Answer func(n int, w http.ResponseWriter, r *http.Request)
	mu     sync.Mutex
	got    []Received
	more   chan struct{}
}

// NewReceiver starts a receiver, closed at the end of the test.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	rc := &Receiver{more: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, Received{Header: r.Header.Clone(), Body: body, Path: r.URL.Path})
		answer := rc.Answer
		rc.mu.Unlock()
		select {
		case rc.more <- struct{}{}:
		default:
		}
		if answer != nil {
			answer(n, w, r)
		}
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// Got returns the requests so far.
func (rc *Receiver) Got() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.got...)
}

// WaitFor waits until n requests arrived (failing the test after limit).
func (rc *Receiver) WaitFor(t testing.TB, n int, limit time.Duration) []Received {
	t.Helper()
	deadline := time.After(limit)
	for {
		if got := rc.Got(); len(got) >= n {
			return got
		}
		select {
		case <-rc.more:
		case <-deadline:
			t.Fatalf("receiver got %d requests, want %d", len(rc.Got()), n)
		}
	}
}

// Loopback is the allow-list of tests' local receivers.
var Loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// Jobs are more workers for StartWebhooks' River client, on a queue of
// their own (detector.Jobs).
type Jobs interface {
	Register(*river.Workers) error
	Queue() (name string, workers int)
}

// StartWebhooks runs a webhook delivery engine over the test database until
// the test ends, allowed to deliver to 127.0.0.1, with schedule (nil: the
// real one), on a River client of its own that works the webhook jobs
// and those of more (the analyzer's), with no periodic jobs and no e-mail.
func (e *Env) StartWebhooks(t testing.TB, schedule []time.Duration, more ...Jobs) {
	t.Helper()
	eng := webhooks.New(webhooks.Config{Store: e.Store, Sealer: e.Sealer, AllowCIDRs: Loopback,
		Schedule: schedule, Timeout: 2 * time.Second})
	w := river.NewWorkers()
	if err := eng.Register(w); err != nil {
		t.Fatal(err)
	}
	queues := map[string]int{river.QueueDefault: 10}
	for _, m := range more {
		if err := m.Register(w); err != nil {
			t.Fatal(err)
		}
		q, n := m.Queue()
		queues[q] = n
	}
	r, err := jobs.Start(context.Background(), jobs.Config{Store: e.Store, Log: quietLog(), Workers: w,
		Queues: queues, JobTimeout: eng.JobTimeout(), RescueAfter: eng.JobTimeout() + 30*time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Stop(ctx)
	})
}
