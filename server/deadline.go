package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/rest"
)

// DefaultRequestTimeout is the deadline of an API request when
// resolvers.Resolver.RequestTimeout is 0 (fleetgraph serve's
// --request-timeout).
const DefaultRequestTimeout = 60 * time.Second

// deadline gives every API request (/graphql and both REST APIs) a context
// deadline d after it arrives: its statements are cancelled on the server
// when it passes (pgx sends a cancel request, and gives up on the
// connection 2 s later if PostgreSQL does not answer it), so a frozen
// database answers a 503 within d plus that grace (apierr.Outage) instead
// of holding the request and its connection indefinitely. A scroll
// streamed as NDJSON gets d again for each page after the first
// (rest.StreamDeadline): the deadline bounds waiting, not exporting.
func deadline(d time.Duration) func(http.Handler) http.Handler {
	if d <= 0 {
		d = DefaultRequestTimeout
	}
	cause := fmt.Errorf("the request's time limit of %s passed: %w", d, context.DeadlineExceeded)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeoutCause(r.Context(), d, cause)
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
