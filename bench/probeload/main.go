// Command probeload is the client API's load test (bench/probes.sh starts
// the server and runs it): -probes goroutines, each a simulated probe,
// register with one registration key, then each -interval (first tick at a
// random offset, so the fleet's calls spread over the interval as a real
// fleet's do) check in (GET /config with the ETag of its last answer) and
// report -batch measurements, until -duration is over. All probes run at
// once from the first moment: registrations, check-ins and reports overlap.
// It prints the documents accepted per second and the latencies (p50,
// p99, max) of registration, check-in and report: over the whole run, and
// over its steady state, from one interval after the last registration to
// the end (every probe then reports at its pace). The targets are judged
// on the steady state's documents/s and on the whole run's check-in p99
// (registrations included, the stricter figure).
//
// With -ramp-from it looks for the ceiling instead (issue 28 item 4): the
// offered rate starts there and rises by -ramp-step documents/s (each
// probe's batch grows; the probes and the interval stay) for -step-for
// each, measured after one interval at the new rate, until the documents
// accepted per second stop growing (less than 5 % more than the step
// before: each probe waits for its report's answer, so what the server
// cannot take in is never accepted); the ceiling is the most accepted.
// Then the probes pause until the rounds under way have their answers (the
// last step offered more than the server takes in, and its queue would be
// worked off during the hold), the load holds at 80 % of the ceiling for
// -hold-for after one interval at that rate, and the check-in and report
// p99 of that stretch are printed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "probeload:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	url, adminKey     string
	probes, batch     int
	interval, runFor  time.Duration
	checkInTarget     time.Duration
	docsPerSecTarget  float64
	requestTimeout    time.Duration
	registrationLimit int
	// anomalyEvery: every anomalyEvery-th probe reports one anomaly (0: none).
	anomalyEvery, anomalyReport int
	tracker                     *tracker

	// The ramp (-ramp-from > 0): documents/s offered first, added each
	// step, at most; how long each step is measured and the 80 % hold.
	rampFrom, rampStep, rampMax float64
	stepFor, holdFor            time.Duration
	ceilingTarget               float64

	batchNow   *atomic.Int64 // measurements per report now (the ramp changes it)
	accepted   *atomic.Int64 // documents accepted so far, by every probe
	registered *atomic.Int64 // probes whose registration is over (done or failed)
	// paused: the probes skip their rounds (the ramp's drain before the
	// hold); busy counts the rounds under way.
	paused *atomic.Bool
	busy   *atomic.Int64

	// dbURL (-db): fleetgraph's database, where each step reads how far
	// the analyzer is behind (db, connected by run).
	dbURL string
	db    *pgxpool.Pool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("probeload", flag.ContinueOnError)
	fs.StringVar(&o.url, "url", "http://127.0.0.1:18090", "fleetgraph's base URL")
	fs.StringVar(&o.adminKey, "admin-key", "", "an admin key of the bench data owner (makes the capability and registration key)")
	fs.IntVar(&o.probes, "probes", 1000, "simulated probes (goroutines)")
	fs.IntVar(&o.batch, "batch", 30, "measurements per report")
	fs.DurationVar(&o.interval, "interval", 5*time.Second, "each probe checks in and reports once per interval")
	fs.DurationVar(&o.runFor, "duration", 40*time.Second, "length of the run")
	fs.DurationVar(&o.requestTimeout, "timeout", 30*time.Second, "time limit of one request")
	fs.DurationVar(&o.checkInTarget, "checkin-p99-target", 50*time.Millisecond, "target of the check-in p99")
	fs.Float64Var(&o.docsPerSecTarget, "docs-target", 5000, "target of documents accepted per second")
	fs.IntVar(&o.anomalyEvery, "anomaly-every", 5, "every n-th probe reports one anomalous value in its -anomaly-report-th report, "+
		"to measure the analyzer's latency (0: none)")
	fs.IntVar(&o.anomalyReport, "anomaly-report", 32, "the report that carries the anomaly (the analyzer judges spikes "+
		"once it has seen some 300 values of the client's metric: 30 reports of 10)")
	fs.Float64Var(&o.rampFrom, "ramp-from", 0, "look for the ceiling: documents/s offered first (0: a run at -batch for -duration)")
	fs.Float64Var(&o.rampStep, "ramp-step", 2000, "documents/s added each step of the ramp")
	fs.Float64Var(&o.rampMax, "ramp-max", 40000, "the most documents/s the ramp offers")
	fs.DurationVar(&o.stepFor, "step-for", 20*time.Second, "how long each step of the ramp is measured (after one interval at its rate)")
	fs.DurationVar(&o.holdFor, "hold-for", 40*time.Second, "how long the load holds at 80 % of the ceiling")
	fs.Float64Var(&o.ceilingTarget, "ceiling-target", 15000, "target of the ceiling, documents accepted per second")
	fs.StringVar(&o.dbURL, "db", "", "fleetgraph's PostgreSQL URL: each step of the ramp then prints how far the analyzer is behind")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.adminKey == "":
		return o, errors.New("-admin-key is required")
	case o.probes < 1 || o.batch < 1 || o.interval <= 0:
		return o, errors.New("-probes, -batch and -interval must be positive")
	case o.rampFrom < 0 || o.rampFrom > 0 && (o.rampStep <= 0 || o.rampMax < o.rampFrom || o.stepFor <= 0 || o.holdFor <= 0):
		return o, errors.New("the ramp needs -ramp-step, -step-for and -hold-for positive and -ramp-max at least -ramp-from")
	}
	o.registrationLimit = o.probes
	o.batchNow, o.accepted, o.registered = new(atomic.Int64), new(atomic.Int64), new(atomic.Int64)
	o.paused, o.busy = new(atomic.Bool), new(atomic.Int64)
	o.batchNow.Store(int64(o.batch))
	return o, nil
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// stats are one probe's observations.
type stats struct {
	register          []time.Duration
	checkIn, report   []call
	registeredAt      time.Time
	accepted, refused int
	failures          map[string]int
}

// call is one timed request: when it started, how long it took, and for
// reports the documents accepted.
type call struct {
	at       time.Time
	took     time.Duration
	accepted int
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: o.requestTimeout, Transport: &http.Transport{
		MaxIdleConns: o.probes, MaxIdleConnsPerHost: o.probes, IdleConnTimeout: time.Minute}}
	o.tracker = newTracker()
	if o.dbURL != "" {
		if o.db, err = pgxpool.New(ctx, o.dbURL); err != nil {
			return fmt.Errorf("-db: %w", err)
		}
		defer o.db.Close()
	}
	regKey, err := setUp(ctx, client, o)
	if err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	if o.anomalyEvery > 0 {
		go o.tracker.poll(pollCtx, client, o)
	}
	start := time.Now()
	done := make(chan struct{})
	var steps []step
	var hold step
	if o.rampFrom > 0 {
		fmt.Printf("%d probes, a check-in and a report every %s each; the offer rises from %.0f documents/s by %.0f a step "+
			"(%s measured a step) until the documents accepted stop growing, then holds at 80 %% of the ceiling for %s\n",
			o.probes, o.interval, o.rampFrom, o.rampStep, o.stepFor, o.holdFor)
		go func() {
			steps, hold = o.ramp(ctx)
			close(done)
		}()
	} else {
		fmt.Printf("%d probes, a check-in and a report of %d measurements every %s each (offered %.0f documents/s), for %s\n",
			o.probes, o.batch, o.interval, float64(o.probes*o.batch)/o.interval.Seconds(), o.runFor)
		time.AfterFunc(o.runFor, func() { close(done) })
	}
	all := make([]stats, o.probes)
	var wg sync.WaitGroup
	for i := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &probe{client: client, o: o, stats: &all[i], seq: i}
			p.run(ctx, regKey, done)
		}()
	}
	wg.Wait()
	end := time.Now()
	deadline := end
	if o.anomalyEvery > 0 {
		time.Sleep(15 * time.Second) // the last anomalies' episodes and deliveries
	}
	stopPoll()
	if o.rampFrom > 0 {
		printRamp(o, all, steps, hold)
	} else {
		report(o, all, start, deadline, end)
	}
	if o.anomalyEvery > 0 {
		o.tracker.print(ctx, client, o)
	}
	fmt.Printf("load average at the end: %s\n", loadAverage())
	return ctx.Err()
}

// setUp makes the capability and the registration key the probes register
// with (as many registrations as probes), through the admin API and GraphQL.
func setUp(ctx context.Context, client *http.Client, o options) (string, error) {
	var capability struct {
		Capability struct {
			ID int64 `json:"id"`
		} `json:"capability"`
	}
	name := fmt.Sprintf("probeload-%d", time.Now().UnixNano())
	err := send(ctx, client, http.MethodPost, o.url+"/client_admin_api/v1/capabilities", o.adminKey, map[string]any{
		"name": name, "allowed_measurement_types": []string{"VideoMeasurement", "WebMeasurement"},
		"forbidden_measurement_subjects": []string{"netflix"}}, http.StatusCreated, &capability)
	if err != nil {
		return "", err
	}
	var key struct {
		Data struct {
			RegistrationKeyCreate struct {
				RegistrationKey string `json:"registrationKey"`
			} `json:"registrationKeyCreate"`
		} `json:"data"`
	}
	q := `mutation($in: RegistrationKeyCreateInput!) { registrationKeyCreate(input: $in) { registrationKey } }`
	err = send(ctx, client, http.MethodPost, o.url+"/graphql", o.adminKey, map[string]any{"query": q, "variables": map[string]any{
		"in": map[string]any{"capabilityId": capability.Capability.ID, "numRegistrationsLeft": o.registrationLimit}}},
		http.StatusOK, &key)
	if err != nil {
		return "", err
	}
	if key.Data.RegistrationKeyCreate.RegistrationKey == "" {
		return "", errors.New("registrationKeyCreate answered no key")
	}
	if o.anomalyEvery > 0 {
		url, err := o.tracker.receive()
		if err != nil {
			return "", err
		}
		var hook map[string]any
		err = send(ctx, client, http.MethodPost, o.url+"/client_admin_api/v1/webhooks", o.adminKey, map[string]any{
			"name": name, "url": url, "event_types": []string{"anomaly_event.created"}}, http.StatusCreated, &hook)
		if err != nil {
			return "", fmt.Errorf("webhook (is FLEETGRAPH_WEBHOOK_ALLOW_CIDRS=127.0.0.1/32 set?): %w", err)
		}
	}
	return key.Data.RegistrationKeyCreate.RegistrationKey, nil
}

// probe is one simulated probe.
type probe struct {
	client  *http.Client
	o       options
	stats   *stats
	seq     int
	uuid    string
	secret  string
	etag    string
	sent    int
	reports int
	scratch bytes.Buffer
}

func (p *probe) run(ctx context.Context, regKey string, done <-chan struct{}) {
	p.stats.failures = map[string]int{}
	ok := p.register(ctx, regKey)
	p.o.registered.Add(1) // registered or failed: the ramp waits for every attempt
	if !ok {
		return
	}
	next := time.Now().Add(rand.N(p.o.interval))
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-time.After(time.Until(next)):
		}
		select {
		case <-done:
			return
		default:
		}
		if !p.o.paused.Load() { // a paused probe keeps its place in the interval
			p.o.busy.Add(1)
			p.checkIn(ctx)
			p.report(ctx)
			p.o.busy.Add(-1)
		}
		next = next.Add(p.o.interval)
	}
}

func (p *probe) fail(what string, err error) {
	p.stats.failures[what+": "+err.Error()]++
}

func (p *probe) register(ctx context.Context, regKey string) bool {
	var out struct {
		ClientUUID string `json:"client_uuid"`
		Secret     string `json:"secret"`
	}
	t := time.Now()
	err := send(ctx, p.client, http.MethodPost, p.o.url+"/client_api/v1/register", "", map[string]any{
		"registration_key": regKey, "label": fmt.Sprintf("load probe %d %d", p.seq, time.Now().UnixNano()),
		"client_type": "automator", "client_version": "3.6.0"}, http.StatusCreated, &out)
	if err != nil {
		p.fail("register", err)
		return false
	}
	p.stats.register = append(p.stats.register, time.Since(t))
	p.stats.registeredAt = time.Now()
	p.uuid, p.secret = out.ClientUUID, out.Secret
	return true
}

func (p *probe) checkIn(ctx context.Context) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.o.url+"/client_api/v1/config", nil)
	req.Header.Set("X-API-KEY", p.secret)
	req.Header.Set("X-Client-Type", "automator")
	req.Header.Set("X-Client-Version", "3.6.0")
	if p.etag != "" {
		req.Header.Set("If-None-Match", p.etag)
	}
	t := time.Now()
	resp, err := p.client.Do(req)
	if err != nil {
		p.fail("check-in", err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotModified {
		p.fail("check-in", fmt.Errorf("status %d", resp.StatusCode))
		return
	}
	p.stats.checkIn = append(p.stats.checkIn, call{at: t, took: time.Since(t)})
	p.etag = resp.Header.Get("ETag")
}

// report sends -batch measurements of fresh ids as NDJSON.
func (p *probe) report(ctx context.Context) {
	p.scratch.Reset()
	for range p.o.batchNow.Load() {
		p.sent++
		subject := [...]string{"youtube", "website", "amazon_trailer"}[p.sent%3]
		typ := "VideoMeasurement"
		if subject == "website" {
			typ = "WebMeasurement"
		}
		fmt.Fprintf(&p.scratch, `{"id":"%s-%d","type":"%s","client_uuid":"%s","created_at":"%s","client_type":"automator",`+
			`"client_version":"3.6.0","study":{"subject":"%s","study_id":"%s-default","study_name":"%s default"},`+
			`"network":{"isp":"Example Net","asn":64500,"connection_type":"fiber"},"statistic_values":{"initial_loading_time":%d,`+
			`"stalling_count":%d,"rtt_avg":%.2f,"throughput_mbps":%.1f}}`+"\n",
			p.uuid, p.sent, typ, p.uuid, time.Now().UTC().Format(time.RFC3339Nano), subject, subject, subject,
			300+rand.IntN(900), rand.IntN(3), 5+rand.Float64()*40, 20+rand.Float64()*500)
	}
	p.reports++
	anomalous := p.o.anomalyEvery > 0 && p.seq%p.o.anomalyEvery == 0 && p.reports == p.o.anomalyReport
	if anomalous { // after enough normal values: a video that took 10 minutes to start
		p.sent++
		fmt.Fprintf(&p.scratch, `{"id":"%s-%d","type":"VideoMeasurement","client_uuid":"%s","created_at":"%s",`+
			`"study":{"subject":"youtube"},"statistic_values":{"initial_loading_time":600000}}`+"\n",
			p.uuid, p.sent, p.uuid, time.Now().UTC().Format(time.RFC3339Nano))
	}
	var out struct {
		Accepted int `json:"accepted"`
		Refused  int `json:"refused"`
	}
	t := time.Now()
	err := send(ctx, p.client, http.MethodPost, p.o.url+"/client_api/v1/measurements", p.secret, p.scratch.Bytes(), http.StatusOK, &out)
	if err != nil {
		p.fail("report", err)
		return
	}
	if anomalous {
		p.o.tracker.reportedAt(p.uuid, time.Now())
	}
	p.stats.report = append(p.stats.report, call{at: t, took: time.Since(t), accepted: out.Accepted})
	p.stats.accepted += out.Accepted
	p.stats.refused += out.Refused
	p.o.accepted.Add(int64(out.Accepted))
}

// send sends body (raw bytes, or a value sent as JSON) and decodes the
// answer into out unless its status is not want.
func send(ctx context.Context, client *http.Client, method, url, key string, body any, want int, out any) error {
	raw, ok := body.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, got)
	}
	return json.Unmarshal(got, out)
}

// report prints the figures of the run against the targets.
func report(o options, all []stats, start, deadline, end time.Time) {
	var reg []time.Duration
	var chk, rep []call
	var lastRegistration time.Time
	accepted, refused := 0, 0
	failures := map[string]int{}
	for _, s := range all {
		reg, chk, rep = append(reg, s.register...), append(chk, s.checkIn...), append(rep, s.report...)
		accepted += s.accepted
		refused += s.refused
		if s.registeredAt.After(lastRegistration) {
			lastRegistration = s.registeredAt
		}
		for k, n := range s.failures {
			failures[k] += n
		}
	}
	steady := lastRegistration.Add(o.interval)
	fmt.Printf("run took %s; %d probes registered, the last after %s; steady state from %s to the end (%s)\n",
		end.Sub(start).Round(time.Millisecond), len(reg), lastRegistration.Sub(start).Round(time.Millisecond),
		steady.Sub(start).Round(time.Millisecond), deadline.Sub(steady).Round(time.Millisecond))
	latencies("registration", reg)
	latencies("check-in", took(chk, time.Time{}))
	latencies("  steady", took(chk, steady))
	latencies("report", took(rep, time.Time{}))
	latencies("  steady", took(rep, steady))
	steadyDocs := 0
	for _, c := range rep {
		if !c.at.Before(steady) {
			steadyDocs += c.accepted
		}
	}
	docsPerSec := float64(accepted) / end.Sub(start).Seconds()
	fmt.Printf("documents accepted: %d (%d refused), %.0f documents/s over the whole run\n", accepted, refused, docsPerSec)
	if window := deadline.Sub(steady); window > 0 {
		rate := float64(steadyDocs) / window.Seconds()
		fmt.Printf("steady state: %.0f documents/s (target ≥ %.0f: %s)\n", rate, o.docsPerSecTarget, verdict(rate >= o.docsPerSecTarget))
	} else {
		fmt.Println("steady state: none (the registrations took the whole run; give it a longer -duration)")
	}
	if ds := took(chk, time.Time{}); len(ds) > 0 {
		p99 := percentile(ds, 0.99)
		fmt.Printf("check-in p99: %s over the whole run (target < %s: %s)\n", p99.Round(10*time.Microsecond),
			o.checkInTarget, verdict(p99 < o.checkInTarget))
	}
	for k, n := range failures {
		fmt.Printf("FAILED %d× %s\n", n, k)
	}
}

// took are the durations of the calls started at from or later, sorted.
func took(calls []call, from time.Time) []time.Duration {
	return within(calls, from, time.Unix(1<<40, 0))
}

// percentile of sorted durations.
func percentile(ds []time.Duration, p float64) time.Duration {
	return ds[min(len(ds)-1, int(p*float64(len(ds))))]
}

// latencies prints a line of p50, p99 and max.
func latencies(name string, ds []time.Duration) {
	slices.Sort(ds)
	if len(ds) == 0 {
		fmt.Printf("%-13s none\n", name)
		return
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	fmt.Printf("%-13s %6d calls  p50 %9s  p99 %9s  max %9s\n", name, len(ds),
		r(percentile(ds, 0.50)), r(percentile(ds, 0.99)), r(ds[len(ds)-1]))
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// step is one stretch of the ramp: the offer, what was accepted, and when
// it was measured.
type step struct {
	batch             int
	offered, accepted float64
	from, to          time.Time
	load              string
	drained           time.Duration // the hold: how long the last step's queue took to drain
	analyzer          string        // how far the analyzer is behind at the step's end (-db)
}

// setRate sets each probe's batch for about rate documents/s and answers
// the step it makes.
func (o options) setRate(rate float64) step {
	b := max(1, int(rate*o.interval.Seconds()/float64(o.probes)+0.5))
	o.batchNow.Store(int64(b))
	return step{batch: b, offered: float64(o.probes*b) / o.interval.Seconds()}
}

// measure waits one interval for the probes to take the step's batch, then
// counts the documents accepted for d.
func (o options) measure(ctx context.Context, st step, d time.Duration) step {
	sleep(ctx, o.interval)
	a0 := o.accepted.Load()
	st.from = time.Now()
	sleep(ctx, d)
	st.to = time.Now()
	st.accepted = float64(o.accepted.Load()-a0) / st.to.Sub(st.from).Seconds()
	st.load = loadAverage()
	st.analyzer = o.analyzerBehind(ctx)
	return st
}

// analyzerBehind tells how far the analyzer is behind: the measurements
// stored and not judged yet (its inbox), and how long the oldest of them
// has waited; "" without -db.
func (o options) analyzerBehind(ctx context.Context) string {
	if o.db == nil {
		return ""
	}
	var rows int64
	var oldest float64
	err := o.db.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM now() - min(queued_at)), 0)::float8
		FROM analyzer_inbox WHERE NOT held`).Scan(&rows, &oldest)
	if err != nil {
		return fmt.Sprintf("; analyzer: not read (%v)", err)
	}
	return fmt.Sprintf("; analyzer: %d measurements to judge, the oldest waiting %.1fs", rows, oldest)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// ramp raises the offer step by step until the documents accepted per
// second stop growing, then holds at 80 % of the most accepted; it
// answers the steps and the hold.
func (o options) ramp(ctx context.Context) ([]step, step) {
	for o.registered.Load() < int64(o.probes) && ctx.Err() == nil { // registrations are not the load measured
		sleep(ctx, 100*time.Millisecond)
	}
	var steps []step
	best := 0.0
	for rate := o.rampFrom; rate <= o.rampMax && ctx.Err() == nil; rate += o.rampStep {
		st := o.measure(ctx, o.setRate(rate), o.stepFor)
		steps = append(steps, st)
		fmt.Printf("  offered %6.0f documents/s (batch %d): accepted %6.0f documents/s (load average %s%s)\n",
			st.offered, st.batch, st.accepted, st.load, st.analyzer)
		grew := st.accepted >= 1.05*best
		best = max(best, st.accepted)
		if !grew {
			break
		}
	}
	st := o.setRate(0.8 * best)
	st.drained = o.drain(ctx)
	hold := o.measure(ctx, st, o.holdFor)
	return steps, hold
}

// drain pauses the probes until the rounds under way have their answers,
// so that the hold measures the load at 80 % and not the server working
// off the last step's queue (the reports that step left waiting); it
// answers how long that took.
func (o options) drain(ctx context.Context) time.Duration {
	t := time.Now()
	o.paused.Store(true)
	defer o.paused.Store(false)
	for o.busy.Load() > 0 && ctx.Err() == nil {
		sleep(ctx, 100*time.Millisecond)
	}
	return time.Since(t)
}

// printRamp prints the ceiling and the latencies at 80 % of it.
func printRamp(o options, all []stats, steps []step, hold step) {
	if len(steps) == 0 {
		fmt.Println("ramp: no step measured")
		return
	}
	ceiling := 0.0
	for _, st := range steps {
		ceiling = max(ceiling, st.accepted)
	}
	last := steps[len(steps)-1]
	why := "the documents accepted stopped growing"
	if last.offered >= o.rampMax-o.rampStep && last.accepted >= 1.05*steps[max(len(steps)-2, 0)].accepted {
		why = "the ramp reached -ramp-max: the ceiling is higher"
	}
	fmt.Printf("ceiling: %.0f documents/s accepted (%s; target ≥ %.0f: %s)\n", ceiling, why, o.ceilingTarget,
		verdict(ceiling >= o.ceilingTarget))
	var chk, rep []time.Duration
	failures := map[string]int{}
	for _, s := range all {
		chk = append(chk, within(s.checkIn, hold.from, hold.to)...)
		rep = append(rep, within(s.report, hold.from, hold.to)...)
		for k, n := range s.failures {
			failures[k] += n
		}
	}
	fmt.Printf("at 80 %% of the ceiling: offered %.0f documents/s (batch %d), accepted %.0f documents/s for %s (load average %s; "+
		"the last step's queue drained in %s first%s)\n",
		hold.offered, hold.batch, hold.accepted, hold.to.Sub(hold.from).Round(time.Second), hold.load, hold.drained.Round(100*time.Millisecond),
		hold.analyzer)
	latencies("  check-in", chk)
	latencies("  report", rep)
	if len(chk) > 0 {
		p99 := percentile(chk, 0.99)
		fmt.Printf("check-in p99 at 80 %% of the ceiling: %s (target < %s: %s)\n", p99.Round(10*time.Microsecond),
			o.checkInTarget, verdict(p99 < o.checkInTarget))
	}
	if len(rep) > 0 {
		fmt.Printf("report p99 at 80 %% of the ceiling: %s\n", percentile(rep, 0.99).Round(10*time.Microsecond))
	}
	for k, n := range failures {
		fmt.Printf("FAILED %d× %s\n", n, k)
	}
}

// within are the durations of the calls started from from to to, sorted.
func within(calls []call, from, to time.Time) []time.Duration {
	var ds []time.Duration
	for _, c := range calls {
		if !c.at.Before(from) && c.at.Before(to) {
			ds = append(ds, c.took)
		}
	}
	slices.Sort(ds)
	return ds
}
