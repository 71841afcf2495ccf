package server_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/store"
)

// limitedServer starts a server over the package's database with the
// given limits. Periods are an hour, so that no bucket refills noticeably
// while a test runs: the counts below are exact.
func limitedServer(t *testing.T, key, owner, probe ratelimit.Rate) string {
	t.Helper()
	e := apitest.Get(t)
	return e.StartServerWith(t, func(r *resolvers.Resolver) {
		r.RateLimits = &ratelimit.Limiter{Store: e.Store, Key: key, DataOwner: owner, Probe: probe, Logger: slog.Default()}
	})
}

func perHour(n int) ratelimit.Rate { return ratelimit.Rate{Limit: n, Period: time.Hour} }

// wantRateHeaders checks the X-RateLimit headers of an answer: the limit,
// what is left, and a reset in the future no later than a period away.
func wantRateHeaders(t *testing.T, h http.Header, limit, remaining int) {
	t.Helper()
	if got := h.Get(ratelimit.HeaderLimit); got != strconv.Itoa(limit) {
		t.Errorf("%s = %q, want %d", ratelimit.HeaderLimit, got, limit)
	}
	if got := h.Get(ratelimit.HeaderRemaining); got != strconv.Itoa(remaining) {
		t.Errorf("%s = %q, want %d", ratelimit.HeaderRemaining, got, remaining)
	}
	reset, err := strconv.ParseInt(h.Get(ratelimit.HeaderReset), 10, 64)
	now := time.Now().Unix()
	if err != nil || reset < now || reset > now+3600+5 {
		t.Errorf("%s = %q, want Unix seconds within the next hour (now %d)", ratelimit.HeaderReset, h.Get(ratelimit.HeaderReset), now)
	}
}

// wantRetryAfter checks a 429's Retry-After: the time until one more
// request would pass (a limit of n per hour refills one every 3600/n s),
// not the period.
func wantRetryAfter(t *testing.T, h http.Header, n int) {
	t.Helper()
	got, err := strconv.Atoi(h.Get("Retry-After"))
	want := 3600 / n
	if err != nil || got > want || got < want-60 {
		t.Errorf("Retry-After = %q, want about %d seconds (one request's refill of %d/1h, not the hour)", h.Get("Retry-After"), want, n)
	}
}

// TestRateLimitPerKey: every answer of a limited key carries the
// X-RateLimit headers (errors too), the request over the limit is a 429
// {"message"} naming the limit with a Retry-After of the refill time, and
// /graphql refuses the same key with TOO_MANY_REQUESTS.
func TestRateLimitPerKey(t *testing.T) {
	e := apitest.Get(t)
	base := limitedServer(t, perHour(3), perHour(100), ratelimit.Rate{})
	o := e.NewOwner(t, "rlkey")
	key, _ := o.NewKey(t, apitest.KeyOpts{})

	r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
	apitest.WantStatus(t, r, http.StatusOK)
	wantRateHeaders(t, r.Header, 3, 2)
	r = apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps/999999999", key, nil)
	apitest.WantStatus(t, r, http.StatusNotFound)
	wantRateHeaders(t, r.Header, 3, 1)
	g := apitest.GraphQLAt(t, base, key, `{ isps { id } }`, nil)
	if g.Status != http.StatusOK || len(g.Errors) > 0 {
		t.Fatalf("graphql: %d %s", g.Status, g.Raw)
	}
	wantRateHeaders(t, g.Header, 3, 0)

	r = apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
	msg := apitest.WantMessage(t, r, http.StatusTooManyRequests, "this API key may make 3 requests per 1h")
	if !strings.Contains(msg, "try again in") {
		t.Errorf("message %q does not say when to try again", msg)
	}
	wantRateHeaders(t, r.Header, 3, 0)
	wantRetryAfter(t, r.Header, 3)

	g = apitest.GraphQLAt(t, base, key, `{ isps { id } }`, nil)
	if g.Status != http.StatusTooManyRequests || g.Code() != "TOO_MANY_REQUESTS" || g.Data != nil {
		t.Fatalf("graphql over the limit: %d %s, want 429 TOO_MANY_REQUESTS", g.Status, g.Raw)
	}
	wantRetryAfter(t, g.Header, 3)

	// Another key of the same data owner has its own bucket.
	other, _ := o.NewKey(t, apitest.KeyOpts{})
	r = apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", other, nil)
	apitest.WantStatus(t, r, http.StatusOK)
	wantRateHeaders(t, r.Header, 3, 2)
}

// TestRateLimitPerDataOwner: the keys of one data owner share its limit
// (admin and export keys alike); the refused request is not charged to the
// key's own bucket; and another data owner, with the same limits, is not
// limited at all by the first one's exhaustion.
func TestRateLimitPerDataOwner(t *testing.T) {
	e := apitest.Get(t)
	base := limitedServer(t, perHour(50), perHour(4), ratelimit.Rate{})
	a, b := e.NewOwner(t, "rlownA"), e.NewOwner(t, "rlownB")
	admin, _ := a.NewKey(t, apitest.KeyOpts{})
	export, _ := a.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	keyB, _ := b.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})

	for i := range 2 {
		r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", admin, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		wantRateHeaders(t, r.Header, 4, 3-i) // the owner's bucket binds: fewer left than the key's
	}
	for i := range 2 {
		r := apitest.DoAt(t, base, http.MethodGet, "/export_api/v1/clients", export, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		wantRateHeaders(t, r.Header, 4, 1-i)
	}
	r := apitest.DoAt(t, base, http.MethodGet, "/export_api/v1/clients", export, nil)
	apitest.WantMessage(t, r, http.StatusTooManyRequests, "the API keys of this data owner together may make 4 requests per 1h")
	wantRetryAfter(t, r.Header, 4)

	for range 3 {
		r = apitest.DoAt(t, base, http.MethodGet, "/export_api/v1/clients", keyB, nil)
		apitest.WantStatus(t, r, http.StatusOK)
	}
	wantRateHeaders(t, r.Header, 4, 1)

	// The refused requests took nothing from the export key's own bucket:
	// 2 of its 50 are spent.
	var tat time.Time
	if err := e.Store.Pool().QueryRow(t.Context(),
		`SELECT to_timestamp(tat / 1e6) FROM rate_buckets WHERE bucket = 'key:' || (SELECT id FROM api_keys WHERE digest = $1)`,
		auth.Digest(export)).Scan(&tat); err != nil {
		t.Fatal(err)
	}
	// One request is 72 s of an hour's 50; three would put it 216 s ahead.
	if ahead := time.Until(tat); ahead > 2*time.Hour/50 || ahead < 2*time.Hour/50-time.Minute {
		t.Errorf("the export key's bucket is %s ahead, want 2 requests (%s)", ahead, 2*time.Hour/50)
	}
}

// TestRateLimitSharedByServers: two servers on one database count the
// same requests: what one server let through is gone for the other.
func TestRateLimitSharedByServers(t *testing.T) {
	e := apitest.Get(t)
	one := limitedServer(t, perHour(5), perHour(100), ratelimit.Rate{})
	two := limitedServer(t, perHour(5), perHour(100), ratelimit.Rate{})
	o := e.NewOwner(t, "rlshared")
	key, _ := o.NewKey(t, apitest.KeyOpts{})
	for i, base := range []string{one, two, one, two, two} {
		r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		wantRateHeaders(t, r.Header, 5, 4-i)
	}
	for _, base := range []string{one, two} {
		r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
		apitest.WantStatus(t, r, http.StatusTooManyRequests)
		wantRetryAfter(t, r.Header, 5)
	}
}

// TestRateLimitProbes: a probe's check-ins and reports count against its
// own limit on the client API, not against its data owner's API limit.
func TestRateLimitProbes(t *testing.T) {
	e := apitest.Get(t)
	base := limitedServer(t, perHour(50), perHour(2), perHour(2))
	o := e.NewOwner(t, "rlprobe")
	rk := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	p1, p2 := o.NewProbe(t, rk.RegistrationKey), o.NewProbe(t, rk.RegistrationKey)

	for i := range 2 {
		r := apitest.DoAt(t, base, http.MethodGet, "/client_api/v1/config", p1.Secret, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		wantRateHeaders(t, r.Header, 2, 1-i)
	}
	r := apitest.DoAt(t, base, http.MethodGet, "/client_api/v1/config", p1.Secret, nil)
	apitest.WantMessage(t, r, http.StatusTooManyRequests, "this probe may make 2 requests per 1h")
	wantRetryAfter(t, r.Header, 2)

	r = apitest.DoAt(t, base, http.MethodGet, "/client_api/v1/config", p2.Secret, nil)
	apitest.WantStatus(t, r, http.StatusOK)
	key, _ := o.NewKey(t, apitest.KeyOpts{})
	r = apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
	apitest.WantStatus(t, r, http.StatusOK)
	wantRateHeaders(t, r.Header, 2, 1)
}

// TestRateLimitParallel: 30 requests of one key at once, over two
// servers, against a limit of 10: exactly 10 pass (the charge locks the
// bucket's row, so no two requests spend the same place).
func TestRateLimitParallel(t *testing.T) {
	e := apitest.Get(t)
	servers := []string{limitedServer(t, perHour(10), perHour(100), ratelimit.Rate{}),
		limitedServer(t, perHour(10), perHour(100), ratelimit.Rate{})}
	o := e.NewOwner(t, "rlpar")
	key, _ := o.NewKey(t, apitest.KeyOpts{})
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = apitest.DoAt(t, servers[i%2], http.MethodGet, "/client_admin_api/v1/isps", key, nil).Status
		})
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if counts[http.StatusOK] != 10 || counts[http.StatusTooManyRequests] != 20 {
		t.Fatalf("statuses %v, want 10 × 200 and 20 × 429", counts)
	}
}

// countingCharger counts the charges (n) and flushes of charges owed
// (flushes) the limiter sends to the real store.
type countingCharger struct {
	*store.Store
	n, flushes atomic.Int64
}

func (c *countingCharger) ChargeRates(ctx context.Context, costs map[string]time.Duration) (map[string]time.Time, time.Time, error) {
	c.flushes.Add(1)
	return c.Store.ChargeRates(ctx, costs)
}

func (c *countingCharger) TakeRate(ctx context.Context, b []store.Bucket, t store.Take) (store.Charge, error) {
	c.n.Add(1)
	return c.Store.TakeRate(ctx, b, t)
}

// leasedServer is limitedServer with the limiter's charges counted.
func leasedServer(t *testing.T, key, owner ratelimit.Rate) (string, *countingCharger) {
	t.Helper()
	e := apitest.Get(t)
	c := &countingCharger{Store: e.Store}
	return e.StartServerWith(t, func(r *resolvers.Resolver) {
		r.RateLimits = &ratelimit.Limiter{Store: c, Key: key, DataOwner: owner, Logger: slog.Default()}
	}), c
}

// perDay is a limit of n a day: one refill every 86400/n s, so that none
// comes while a test runs.
func perDay(n int) ratelimit.Rate { return ratelimit.Rate{Limit: n, Period: 24 * time.Hour} }

// TestRateLimitLeasesABusyKey: a key making request after request is not
// charged a statement a request: while more than half its limit is left
// its requests pass on credit (charged afterwards, many in one statement),
// then in leases; every answer's headers count down by one exactly as if
// each request were charged alone; and PostgreSQL's bucket holds what was
// spent (once the credit is flushed) plus one lease at most.
func TestRateLimitLeasesABusyKey(t *testing.T) {
	e := apitest.Get(t)
	base, charges := leasedServer(t, perDay(800), perDay(100000)) // leases of 800/20 = 40 at most
	o := e.NewOwner(t, "rllease")
	key, _ := o.NewKey(t, apitest.KeyOpts{})
	const n = 700 // 400 on credit, then leases
	start := time.Now()
	for i := range n {
		r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		wantRateHeaders24h(t, r.Header, 800, 800-1-i)
	}
	elapsed := time.Since(start)
	t.Logf("%d requests in %s, %d charges, %d flushes", n, elapsed, charges.n.Load(), charges.flushes.Load())
	// A flush every 100 ms at most while requests are owed; a charge per
	// lease. (On a loaded machine the requests take longer: more flushes,
	// and leases, which grow while each is spent within 100 ms, stay
	// smaller.)
	if f := charges.flushes.Load(); f > int64(elapsed/(100*time.Millisecond))+2 {
		t.Errorf("%d flushes in %s, want one per 100 ms at most", f, elapsed)
	}
	if c := charges.n.Load() + charges.flushes.Load(); c > n/5 {
		t.Errorf("%d requests took %d statements, want credit and leases (under a fifth)", n, c)
	}
	if charges.n.Load() < 5 {
		t.Errorf("%d charges: past half the limit, requests should have been charged in leases", charges.n.Load())
	}
	emission := 24 * time.Hour / 800
	var spent int
	apitest.Eventually(t, "the requests on credit are charged", func() bool {
		var tat time.Time
		if err := e.Store.Pool().QueryRow(t.Context(),
			`SELECT to_timestamp(tat / 1e6) FROM rate_buckets WHERE bucket = 'key:' || (SELECT id FROM api_keys WHERE digest = $1)`,
			auth.Digest(key)).Scan(&tat); err != nil {
			t.Fatal(err)
		}
		spent = int((time.Until(tat) + emission/2) / emission)
		return spent >= n
	})
	if spent > n+40 {
		t.Errorf("the key's bucket holds %d requests, want %d spent plus one lease of 40 at most", spent, n)
	}
}

// wantRateHeaders24h is wantRateHeaders for a limit per day.
func wantRateHeaders24h(t *testing.T, h http.Header, limit, remaining int) {
	t.Helper()
	if got := h.Get(ratelimit.HeaderLimit) + "/" + h.Get(ratelimit.HeaderRemaining); got != strconv.Itoa(limit)+"/"+strconv.Itoa(remaining) {
		t.Errorf("limit/remaining = %s, want %d/%d", got, limit, remaining)
	}
}

// TestRateLimitTwoServersShareTheLimit: two servers charging one bucket
// let the limit through together, less a lease per server, and more only
// by what credit allows (lease.go): the requests one server passed on
// credit and had not yet flushed when the other took the bucket's last
// leases, half a limit at most. A refusal's Retry-After is the refill time
// of what the bucket holds past its limit; once refused, a server refuses
// the key's flood without a charge each.
func TestRateLimitTwoServersShareTheLimit(t *testing.T) {
	e := apitest.Get(t)
	const limit, lease = 400, 400 / 20
	one, c1 := leasedServer(t, perDay(limit), perDay(100000))
	two, c2 := leasedServer(t, perDay(limit), perDay(100000))
	o := e.NewOwner(t, "rlleasepar")
	key, _ := o.NewKey(t, apitest.KeyOpts{})
	const n = 1000
	statuses := make([]int, n)
	retry := make([]string, n)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 40 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				base := one
				if i%2 == 1 {
					base = two
				}
				r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
				statuses[i], retry[i] = r.Status, r.Header.Get("Retry-After")
			}
		})
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	ok := counts[http.StatusOK]
	t.Logf("statuses %v, %d charges", counts, c1.n.Load()+c2.n.Load())
	if ok > limit+limit/2 || ok < limit-2*lease || ok+counts[http.StatusTooManyRequests] != n {
		t.Fatalf("statuses %v: want %d to %d × 200 (the limit, less a lease per server, plus half a limit "+
			"of credit at most), the rest 429", counts, limit-2*lease, limit+limit/2)
	}
	// The bucket holds what passed and what the leases took unspent; past
	// the limit, a request has room again after the refill time of each
	// request over it and its own.
	refill := 86400 / limit
	over := max(0, ok+2*lease-limit)
	for i, s := range statuses {
		if s != http.StatusTooManyRequests {
			continue
		}
		if got, err := strconv.Atoi(retry[i]); err != nil || got < 1 || got > (over+1)*refill {
			t.Fatalf("Retry-After %q with %d passed, want the refill time of %d/24h (%d s) for each of %d requests at most",
				retry[i], ok, limit, refill, over+1)
		}
	}
	if c := c1.n.Load() + c2.n.Load(); c > int64(ok)+2*lease {
		t.Errorf("%d charges for %d requests passed and %d refused: a refused flood should cost no charge each",
			c, ok, counts[http.StatusTooManyRequests])
	}
}

// TestAnswerBytesPerDataOwner: a data owner's searches and exports may
// answer so many bytes per period together: the search that goes over is
// answered (its cost is known after it), the next one is a 429 with the
// time the data owner has room again, on REST and GraphQL alike; its small
// requests and another data owner's searches are not refused.
func TestAnswerBytesPerDataOwner(t *testing.T) {
	e := apitest.Get(t)
	base := e.StartServerWith(t, func(r *resolvers.Resolver) {
		r.RateLimits = &ratelimit.Limiter{Store: e.Store, Logger: slog.Default(),
			AnswerBytes: ratelimit.ByteRate{Bytes: 64 << 10, Period: time.Hour}}
	})
	a, b := e.NewOwner(t, "rlbytesA"), e.NewOwner(t, "rlbytesB")
	keyA, _ := a.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	adminA, _ := a.NewKey(t, apitest.KeyOpts{})
	keyB, _ := b.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	for _, o := range []*apitest.Owner{a, b} {
		c := o.NewClient(t, store.NewClient{})
		for i := range 10 { // 10 KB each: 100 KB in all, over A's 64 KiB an hour
			o.InsertDocuments(t, "measurement", map[string]any{"id": fmt.Sprintf("m%d", i), "type": "WebMeasurement",
				"client_uuid": c.UUID, "created_at": "2026-11-01T10:00:00Z", "padding": strings.Repeat("x", 10_000)})
		}
	}
	search := func(key string) *apitest.Response {
		return apitest.DoAt(t, base, http.MethodPost, "/export_api/v1/search", key,
			map[string]any{"body": map[string]any{"size": 100, "query": map[string]any{"match_all": map[string]any{}}}})
	}
	apitest.WantStatus(t, search(keyA), http.StatusOK)
	r := search(keyA)
	apitest.WantMessage(t, r, http.StatusTooManyRequests, "may answer 64 KiB per 1h")
	// 100 KB of a 64 KiB hour is about 1.5 hours: room again in about half an hour.
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1200 || s > 2400 {
		t.Errorf("Retry-After %q, want about 1,800 s (the debt past the hour's worth)", r.Header.Get("Retry-After"))
	}
	g := apitest.GraphQLAt(t, base, adminA, `{ measurementSearch(body: {query: {match_all: {}}}) }`, nil)
	if g.Code() != "TOO_MANY_REQUESTS" || g.Errors[0].Extensions["retryAfter"] == nil {
		t.Errorf("GraphQL search in debt: %s, want TOO_MANY_REQUESTS with retryAfter", g.Raw)
	}
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", adminA, nil), http.StatusOK)
	apitest.WantStatus(t, search(keyB), http.StatusOK)
}

// TestRateLimitHoldsRepeatedRefusals: with a repeat hold, a key's first
// 429 is answered at once; a key that comes back before its Retry-After
// and is refused again waits the hold for the same 429 (REST and
// /graphql), with a Retry-After of the moment the answer goes; a client
// that goes away ends its hold, which the held-requests metric shows.
func TestRateLimitHoldsRepeatedRefusals(t *testing.T) {
	const hold = 2 * time.Second
	e := apitest.Get(t)
	limiter := &ratelimit.Limiter{Store: e.Store, Key: perHour(2), DataOwner: perHour(100), RepeatHold: hold, Logger: slog.Default()}
	base := e.StartServerWith(t, func(r *resolvers.Resolver) { r.RateLimits = limiter })
	o := e.NewOwner(t, "rlhold")
	key, _ := o.NewKey(t, apitest.KeyOpts{})
	for range 2 {
		apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil), http.StatusOK)
	}
	start := time.Now()
	r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
	if took := time.Since(start); r.Status != http.StatusTooManyRequests || took >= hold {
		t.Fatalf("first refusal: %d after %s, want a 429 at once", r.Status, took)
	}
	wantRetryAfter(t, r.Header, 2)

	start = time.Now()
	r = apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
	if took := time.Since(start); r.Status != http.StatusTooManyRequests || took < hold {
		t.Fatalf("refusal before the Retry-After given: %d after %s, want a 429 after the %s hold", r.Status, took, hold)
	}
	wantRetryAfter(t, r.Header, 2)
	wantRateHeaders(t, r.Header, 2, 0)

	start = time.Now()
	g := apitest.GraphQLAt(t, base, key, `{ isps { id } }`, nil)
	if took := time.Since(start); g.Status != http.StatusTooManyRequests || g.Code() != "TOO_MANY_REQUESTS" || took < hold {
		t.Fatalf("graphql refusal before the Retry-After: %d %s after %s, want 429 TOO_MANY_REQUESTS after the hold", g.Status, g.Raw, took)
	}

	// A client that goes away ends its hold.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/client_admin_api/v1/isps", nil)
		req.Header.Set("X-API-KEY", key)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, 5*time.Second, "request held", func() bool { return limiter.Held() == 1 })
	if m := apitest.Scrape(t, base+"/metrics"); m.Value("fleetgraph_rate_limit_held_requests", nil) != 1 {
		t.Errorf("fleetgraph_rate_limit_held_requests = %v while one is held, want 1", m.Value("fleetgraph_rate_limit_held_requests", nil))
	}
	cancel()
	<-done
	waitFor(t, hold/2, "end of the hold with its client", func() bool { return limiter.Held() == 0 })
}

// TestRateLimitedGraphQLBodyIsNotRead: a /graphql request refused by its
// rate limit is answered without its body being read. The client sends
// the headers of a 1 MiB body and 10 bytes of it, and waits: the 429
// comes anyway.
func TestRateLimitedGraphQLBodyIsNotRead(t *testing.T) {
	e := apitest.Get(t)
	base := limitedServer(t, perHour(1), perHour(100), ratelimit.Rate{})
	key, _ := e.NewOwner(t, "rlbody").NewKey(t, apitest.KeyOpts{})
	apitest.WantStatus(t, apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil), http.StatusOK)

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"query\":",
		key, 1<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body is still being sent: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// heldFlushCharger is the real store whose flushes of credit answer late:
// once a flush's charge is written, it says so on holding, and its answer
// waits until a charge of a lease has been answered, or 300 ms (within
// the charge's timeout), as a flush slowed down by a busy machine would.
type heldFlushCharger struct {
	*store.Store
	holding, taken chan struct{}
	once           sync.Once
}

func (c *heldFlushCharger) ChargeRates(ctx context.Context, costs map[string]time.Duration) (map[string]time.Time, time.Time, error) {
	tats, now, err := c.Store.ChargeRates(ctx, costs)
	select {
	case c.holding <- struct{}{}:
	default:
	}
	select {
	case <-c.taken:
		time.Sleep(50 * time.Millisecond) // the charge's requests are answered first
	case <-time.After(300 * time.Millisecond):
	}
	return tats, now, err
}

func (c *heldFlushCharger) TakeRate(ctx context.Context, b []store.Bucket, t store.Take) (store.Charge, error) {
	charge, err := c.Store.TakeRate(ctx, b, t)
	c.once.Do(func() { close(c.taken) })
	return charge, err
}

// TestRateLimitFlushAnsweringLate: a charge for a lease that starts while
// a flush of the requests on credit is on its way must not count those
// requests twice. Its headers count down by one, and once the key is
// refused its Retry-After is one refill time, not one for each request
// the flush carried.
func TestRateLimitFlushAnsweringLate(t *testing.T) {
	e := apitest.Get(t)
	c := &heldFlushCharger{Store: e.Store, holding: make(chan struct{}, 1), taken: make(chan struct{})}
	base := e.StartServerWith(t, func(r *resolvers.Resolver) {
		r.RateLimits = &ratelimit.Limiter{Store: c, Key: perDay(400), DataOwner: perDay(100000), Logger: slog.Default()}
	})
	o := e.NewOwner(t, "rlflushlate")
	key, _ := o.NewKey(t, apitest.KeyOpts{})
	for i := range 400 {
		if i == 200 { // the first 200 passed on credit; this one takes a lease while they are flushed
			for len(c.holding) > 0 { // an earlier flush's
				<-c.holding
			}
			select {
			case <-c.holding:
			case <-time.After(5 * time.Second):
				t.Fatal("no flush of the requests on credit")
			}
		}
		r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		wantRateHeaders24h(t, r.Header, 400, 400-1-i)
		if t.Failed() {
			t.Fatalf("request %d", i+1)
		}
	}
	r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/isps", key, nil)
	apitest.WantStatus(t, r, http.StatusTooManyRequests)
	if got, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || got < 1 || got > 86400/400 {
		t.Fatalf("Retry-After %q, want the refill time of 400/24h (216 s) at most", r.Header.Get("Retry-After"))
	}
}
