package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/store"
)

// deadline gives every API request (/graphql and both REST APIs) a context
// deadline d after it arrives: its statements are cancelled on the server
// when it passes (pgx sends a cancel request, and gives up on the
// connection 2 s later if PostgreSQL does not answer it), so a frozen
// database answers a 503 within d plus that grace (apierr.Outage) instead
// of holding the request and its connection indefinitely. A scroll
// streamed as NDJSON gets d again for each page after the first
// (rest.StreamDeadline): the deadline bounds waiting, not exporting.
//
// With live (resolvers.Resolver.Liveness), a request also ends, as past
// its deadline, as soon as live declares PostgreSQL down (untilDown): a
// frozen database is a 503 within live's bound plus that grace, however
// long d is.
func deadline(d time.Duration, live *store.Liveness) func(http.Handler) http.Handler {
	if d <= 0 {
		d = limits.RequestTimeout // resolvers.Resolver.RequestTimeout is 0
	}
	cause := fmt.Errorf("the request's time limit of %s passed: %w", d, context.DeadlineExceeded)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if live != nil {
				var stop func()
				ctx, stop = untilDown(ctx, live.Down())
				defer stop()
			}
			ctx, cancel := context.WithTimeoutCause(ctx, d, cause)
			defer cancel()
			ctx = rest.WithStreamDeadline(ctx, rest.StreamDeadline{Client: r.Context(), Each: d})
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// unavailableStatus is /graphql's HTTP status for a response with errors:
// 503 (with Retry-After) when one of them is SERVICE_UNAVAILABLE (a
// database outage, or the search backend failing or out of time), as the
// REST APIs answer; else 0, leaving the status as gqlgen's transport sets it.
func unavailableStatus(w http.ResponseWriter, errs gqlerror.List) int {
	for _, e := range errs {
		if code, _ := e.Extensions["code"].(string); code == apierr.ErrUnavailable.Code {
			w.Header().Set("Retry-After", strconv.Itoa(apierr.RetryAfterSeconds))
			return http.StatusServiceUnavailable
		}
	}
	return 0
}

// downCtx is a request's context that also ends when PostgreSQL is
// declared down; it then reads as past its deadline, which every layer
// (pgx, apierr.Outage) already answers as an outage: a 503.
type downCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
	err  error
}

// untilDown is parent, ended as past its deadline when down closes; stop
// (once the request is answered) releases its goroutine.
func untilDown(parent context.Context, down <-chan struct{}) (ctx context.Context, stop func()) {
	c := &downCtx{Context: parent, done: make(chan struct{})}
	select {
	case <-down:
		c.end(context.DeadlineExceeded)
		return c, func() {}
	default:
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case <-parent.Done():
			c.end(parent.Err())
		case <-down:
			c.end(context.DeadlineExceeded)
		case <-stopped:
			c.end(context.Canceled)
		}
	}()
	return c, func() { close(stopped) }
}

func (c *downCtx) end(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}

func (c *downCtx) Done() <-chan struct{} { return c.done }

func (c *downCtx) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}
