// Package ratelimit limits how many requests an API key, a data owner and
// a probe may make in a period, with the count kept in PostgreSQL (one row
// per bucket, store.TakeRate) so that every replica of the server agrees.
//
// Each limit is a GCRA bucket ("generic cell rate algorithm", the leaky
// bucket as a meter): a limit of N per period P lets N requests through at
// once and then one every P/N. One statement charges every bucket of the
// request, or none when one of them is empty, and tells when each is full
// again; from that the answer's X-RateLimit-Limit, -Remaining and -Reset
// headers are exact, and a refused request's Retry-After is the time until
// a request would pass, not the period. A busy key's charge takes several
// requests at once, spent by the server without a statement each
// (lease.go).
package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/store"
)

// Rate is a limit of Limit requests per Period; the zero Rate is no limit.
type Rate struct {
	Limit  int
	Period time.Duration
}

// Off reports whether r limits nothing.
func (r Rate) Off() bool { return r.Limit <= 0 || r.Period <= 0 }

func (r Rate) String() string {
	if r.Off() {
		return "off"
	}
	return fmt.Sprintf("%d/%s", r.Limit, period(r.Period))
}

// period writes 1m rather than time.Duration's 1m0s.
func period(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParseRate reads "N/PERIOD" (a count and a Go duration: 1200/1m, 50/1s)
// or "off", within the ranges of package limits.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return Rate{}, nil
	}
	n, p, ok := strings.Cut(s, "/")
	limit, err := strconv.Atoi(strings.TrimSpace(n))
	per, perr := time.ParseDuration(strings.TrimSpace(p))
	if !ok || err != nil || perr != nil || limit < 1 || limit > limits.MaxRateLimit ||
		per < limits.MinRatePeriod || per > limits.MaxRatePeriod || per/time.Duration(limit) < time.Microsecond {
		return Rate{}, fmt.Errorf("%q is not a rate: write requests/period, such as 1200/1m (a count from 1 to %d, "+
			"a period from %s to %s), or off", s, limits.MaxRateLimit, period(limits.MinRatePeriod), period(limits.MaxRatePeriod))
	}
	return Rate{Limit: limit, Period: per}, nil
}

// Defaults of the limits (fleetgraph serve's settings), declared in
// package limits.
var (
	DefaultKey        = Rate(limits.KeyRate)
	DefaultDataOwner  = Rate(limits.DataOwnerRate)
	DefaultProbe      = Rate(limits.ProbeRate)
	DefaultWebClients = Rate(limits.WebClientsRate)
)

// Charger charges requests to buckets in PostgreSQL (store.Store).
type Charger interface {
	TakeRate(ctx context.Context, buckets []store.Bucket, t store.Take) (store.Charge, error)
	ChargeRates(ctx context.Context, costs map[string]time.Duration) (tats map[string]time.Time, now time.Time, err error)
}

// Limiter charges requests to their buckets. A nil *Limiter limits nothing.
type Limiter struct {
	Store Charger
	// Key limits each admin or export API key, DataOwner all the keys of a
	// data owner together (GraphQL, admin and export APIs), Probe each
	// probe's secret on the client API.
	Key, DataOwner, Probe Rate
	// WebClients is how many new clients the client analytics keys of one
	// data owner may create (clientapi: web clients named by reports);
	// past it the reports naming more are refused with 429.
	WebClients Rate
	// AnswerBytes limits what the heavy work of each data owner may
	// answer (answers.go).
	AnswerBytes ByteRate
	// RepeatHold pauses a refusal of a key refused before that comes back
	// before its Retry-After (hold.go); zero answers every refusal at once.
	RepeatHold time.Duration
	Logger     *slog.Logger

	leases  leases       // lease.go
	flusher flusher      // credit.go
	answers answerDebts  // answers.go
	held    atomic.Int64 // hold.go
	// webRefused counts the clients not made for WebClients.
	webRefused atomic.Int64
}

// WebClientBound is l's WebClients (no bound for a nil Limiter).
func (l *Limiter) WebClientBound() Rate {
	if l == nil {
		return Rate{}
	}
	return l.WebClients
}

// DefaultLimit is r as the default bound on new web clients: its count,
// -1 (no bound) when off.
func (r Rate) DefaultLimit() int {
	if r.Off() {
		return -1
	}
	return r.Limit
}

// BoundPeriod is r's period as the period of the bounds on new web
// clients: a data owner's own bound counts per it; 24 h when r is off.
func (r Rate) BoundPeriod() time.Duration {
	if r.Off() {
		return 24 * time.Hour
	}
	return r.Period
}

// WebClientsRefused counts n clients not made for the WebClients bound.
func (l *Limiter) WebClientsRefused(n int) {
	if l != nil {
		l.webRefused.Add(int64(n))
	}
}

// WebClientsRefusedTotal is how many clients this server did not make for
// the WebClients bound (a metric).
func (l *Limiter) WebClientsRefusedTotal() int64 {
	if l == nil {
		return 0
	}
	return l.webRefused.Load()
}

// chargeTimeout bounds the charge: when PostgreSQL does not answer in time
// the request goes on unlimited (its own statements meet the outage and
// answer 503), so that the limiter never adds an outage of its own.
const chargeTimeout = time.Second

// Headers of the answers.
const (
	HeaderLimit     = "X-RateLimit-Limit"
	HeaderRemaining = "X-RateLimit-Remaining"
	HeaderReset     = "X-RateLimit-Reset"
)

// The headers' keys as http.Header.Set writes them (the wire shows the same
// bytes), set without canonicalizing each at every request.
var (
	canonicalLimit     = http.CanonicalHeaderKey(HeaderLimit)
	canonicalRemaining = http.CanonicalHeaderKey(HeaderRemaining)
	canonicalReset     = http.CanonicalHeaderKey(HeaderReset)
)

// Middleware charges each authenticated request (auth.Middleware runs
// first) and sets the X-RateLimit headers; a request over a limit is
// answered by fail with a 429 (apierr.ErrTooManyRequests) whose
// Retry-After is set.
func (l *Limiter) Middleware(fail auth.ErrorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := auth.From(r.Context())
			limits := l.limits(p)
			if len(limits) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			charge, err := l.take(r.Context(), limits)
			if err != nil {
				if r.Context().Err() == nil && l.Logger != nil {
					l.Logger.WarnContext(r.Context(), "rate limit not checked: the request goes on unlimited", "err", err)
				}
				next.ServeHTTP(w, r)
				return
			}
			v := verdict(limits, charge)
			if !charge.Allowed {
				// The headers are of the moment the answer goes.
				charge.Now = charge.Now.Add(l.holdRefusal(r.Context(), limits, time.Now().Add(time.Duration(v.retryAfter)*time.Second)))
				v = verdict(limits, charge)
			}
			h := w.Header()
			values := []string{strconv.Itoa(v.limit), strconv.Itoa(v.remaining), strconv.FormatInt(v.reset, 10)} // one array for the three
			h[canonicalLimit], h[canonicalRemaining], h[canonicalReset] = values[0:1:1], values[1:2:2], values[2:3:3]
			if !charge.Allowed {
				h.Set("Retry-After", strconv.Itoa(v.retryAfter))
				fail(w, r, v.err())
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// limit is one bucket of a request and its rate.
type limit struct {
	name string
	what string // for the 429's message: "this API key"
	rate Rate
}

// limits are the buckets p's request is charged to: an admin or export
// key's own and its data owner's; a probe's own. Client analytics keys are
// shared by the browsers of a web-embedded client, so they are not limited.
func (l *Limiter) limits(p *auth.Principal) []limit {
	if p == nil {
		return nil
	}
	var out []limit
	add := func(name, what string, r Rate) {
		if !r.Off() {
			out = append(out, limit{name: name, what: what, rate: r})
		}
	}
	switch p.Kind {
	case auth.KindProbe:
		if p.Probe != nil {
			add("probe:"+strconv.FormatInt(p.Probe.ClientID, 10), "this probe", l.Probe)
		}
	case auth.KindClientAdmin, auth.KindExport:
		add("key:"+strconv.FormatInt(p.KeyID, 10), "this API key", l.Key)
		add("owner:"+strconv.FormatInt(p.DataOwnerID, 10), "the API keys of this data owner together", l.DataOwner)
	}
	return out
}

// buckets are the store's buckets of limits.
func buckets(limits []limit) []store.Bucket {
	out := make([]store.Bucket, len(limits))
	for i, lim := range limits {
		out[i] = lim.bucket()
	}
	return out
}

// bucket is the store's bucket of lim: one request is let through every
// Period/Limit, Limit at once from a full bucket.
func (lim limit) bucket() store.Bucket {
	emission := lim.rate.Period / time.Duration(lim.rate.Limit)
	return store.Bucket{Name: lim.name, Emission: emission, Burst: emission * time.Duration(lim.rate.Limit)}
}

// answer is what the headers and a 429 say: about the bucket that binds,
// the one with the fewest requests left (of a refused request, the one
// that refuses it longest).
type answer struct {
	limit, remaining int
	reset            int64 // Unix seconds when the bucket is full again
	retryAfter       int   // seconds until a request would pass (refused only)
	what             string
	rate             Rate
}

func verdict(limits []limit, c store.Charge) answer {
	var best answer
	var bestWait time.Duration = -1
	for i, lim := range limits {
		b := lim.bucket()
		tat := c.Buckets[i].TAT
		if tat.Before(c.Now) {
			tat = c.Now
		}
		// Room left: requests that would pass now.
		remaining := int((c.Now.Add(b.Burst).Sub(tat)) / b.Emission)
		remaining = max(0, min(remaining, lim.rate.Limit))
		// Wait until one more would pass.
		wait := tat.Add(b.Emission).Sub(c.Now.Add(b.Burst))
		a := answer{limit: lim.rate.Limit, remaining: remaining, reset: ceilUnix(tat), what: lim.what, rate: lim.rate}
		switch {
		case !c.Allowed && wait > 0 && wait > bestWait:
			best, bestWait = a, wait
			best.remaining = 0
			best.retryAfter = int(math.Ceil(wait.Seconds()))
		case bestWait < 0 && (i == 0 || remaining < best.remaining):
			best = a
		}
	}
	if !c.Allowed {
		best.remaining, best.retryAfter = 0, max(1, best.retryAfter)
	}
	return best
}

func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// err is the 429 of a refused request.
func (a answer) err() error {
	return apierr.Errorf(apierr.ErrTooManyRequests, "rate limit exceeded: %s may make %d requests per %s; try again in %d seconds",
		a.what, a.rate.Limit, period(a.rate.Period), a.retryAfter)
}
