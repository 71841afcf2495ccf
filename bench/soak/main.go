// Command soak is the soak and fault test (bench/soak.sh builds and runs
// it; not part of CI): it starts a private PostgreSQL cluster (pglocal,
// never the shared server on 5432) and fleetgraph over it, then drives
// mixed traffic from three data owners for -duration: two well-behaved
// tenants (REST admin and export, GraphQL, writes, searches, ES|QL, each
// paced below its rate limits) and one attacker that cycles through the
// attacks of issue 16 (GraphQL documents that blow up validation, slow and
// oversized searches, answers over the byte budget, a gzip body over the
// limit, mutation floods, another tenant's ids, a rate-limit flood). At 40 %
// of the run the server is killed with SIGKILL and started again; at 65 %
// PostgreSQL is stopped and started again. It reports per tenant the
// requests, answers by status class, 5xx and transport errors inside and
// outside the outage windows, p50/p99/max latency (and the p99 of the
// answers other than 429, since a key's repeated 429s are held), the
// tenants' p50/p99 as the server's access log measured them (each request
// carries an X-Request-Id naming its tenant), and the server's peak
// RSS (VmRSS sampled every 100 ms, and the kernel's VmHWM of each server
// process). It exits 1 when a 5xx or a transport error happened outside
// the outage windows, or when the peak RSS passed -rss-bound.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fleetgraph/fleetgraph/store/pglocal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type options struct {
	bin, work     string
	port          int
	duration      time.Duration
	rssBound      int64 // bytes
	grace         time.Duration
	tenantRate    float64 // requests per second of each well-behaved tenant
	workers       int
	attackWorkers int
	only          *regexp.Regexp // the attacks whose names match, when set
}

func run(ctx context.Context, args []string) error {
	var o options
	var rssMB int64
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "", "the fleetgraph binary")
	fs.StringVar(&o.work, "work", "", "work directory (PostgreSQL cluster, data dir, logs)")
	fs.IntVar(&o.port, "port", 18095, "fleetgraph's port on 127.0.0.1")
	fs.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the traffic runs")
	fs.Int64Var(&rssMB, "rss-bound", 500, "peak RSS bound of the server, MB")
	fs.DurationVar(&o.grace, "grace", 5*time.Second, "how long after an outage's end answers still count as inside it")
	fs.Float64Var(&o.tenantRate, "tenant-rate", 10, "requests per second of each well-behaved tenant")
	fs.IntVar(&o.workers, "workers", 4, "goroutines of each well-behaved tenant")
	fs.IntVar(&o.attackWorkers, "attack-workers", 4, "goroutines of the attacker (one more floods the rate limit); 0: no attacker, a baseline")
	only := fs.String("attacks", "", "a regular expression: only the attacks whose names match it (a diagnosis: which attack costs the others what)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("-attacks: %w", err)
		}
		o.only = re
	}
	o.rssBound = rssMB << 20
	if o.bin == "" || o.work == "" {
		return errors.New("-bin and -work are required")
	}
	s := &soak{o: o, base: fmt.Sprintf("http://127.0.0.1:%d", o.port),
		client: &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}}
	return s.run(ctx)
}

type soak struct {
	o      options
	base   string
	client *http.Client
	dbURL  string
	pgDir  string

	seq     atomic.Int64
	mu      sync.Mutex
	server  *exec.Cmd
	windows []window // outages
	results []result
	peakRSS int64
	hwm     []int64 // VmHWM of each server process, read before it ended
}

type window struct {
	what       string
	start, end time.Time // end zero while open
}

type result struct {
	tenant, kind string
	at           time.Time
	took         time.Duration
	status       int  // 0: transport error
	rateHeaders  bool // X-RateLimit-Limit, -Remaining and -Reset all present
	retryAfter   bool // Retry-After present
}

type tenant struct {
	name, admin, export string
	flood               string // the attacker's second admin key, for the flood
	ispID               string // an ISP of its own, for the attacker to ask for
}

func (s *soak) log(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (s *soak) run(ctx context.Context) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.pgDir = filepath.Join(s.o.work, "pg")
	url, _, err := pglocal.StartPrivate(ctx, quiet, s.pgDir, "fleetgraph_soak")
	if err != nil {
		return err
	}
	s.dbURL = url
	defer func() { _ = pglocal.StopPrivate(context.Background(), quiet, s.pgDir) }()
	s.log("private PostgreSQL at %s", strings.Split(url, "/")[2])

	if err := s.cmd(ctx, nil, "migrate"); err != nil {
		return err
	}
	tenants := make([]*tenant, 3)
	for i, name := range []string{"soaka", "soakb", "soakevil"} {
		if tenants[i], err = s.bootstrap(ctx, name); err != nil {
			return err
		}
		if err := s.seed(ctx, name, i == 2); err != nil {
			return err
		}
	}
	second, err := s.bootstrapUser(ctx, tenants[2].name, "flood")
	if err != nil {
		return err
	}
	tenants[2].flood = second.admin
	if err := s.startServer(ctx); err != nil {
		return err
	}
	defer s.stopServer()
	for _, t := range tenants {
		r := s.do(ctx, "setup", "isp", http.MethodPost, "/client_admin_api/v1/isps", t.admin, "",
			fmt.Appendf(nil, `{"name": "home of %s", "country": "DE", "type": "fixed"}`, t.name))
		var body struct {
			Isp struct {
				ID json.Number `json:"id"`
			} `json:"isp"`
		}
		if r.status != http.StatusCreated || json.Unmarshal(r.body, &body) != nil {
			return fmt.Errorf("create an ISP of %s: %d %s", t.name, r.status, r.body)
		}
		t.ispID = body.Isp.ID.String()
	}
	s.results = nil

	load, _ := os.ReadFile("/proc/loadavg")
	s.log("traffic for %s (%d CPUs here; load average %s)", s.o.duration, cpus(), strings.Join(strings.Fields(string(load))[:3], " "))
	runCtx, cancel := context.WithTimeout(ctx, s.o.duration)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { s.sampleRSS(runCtx) })
	for _, t := range tenants[:2] {
		for w := range s.o.workers {
			wg.Go(func() { s.behave(runCtx, t, w) })
		}
	}
	attacks := s.attacks(tenants[2], tenants[0])
	if s.o.only != nil {
		attacks = slices.DeleteFunc(attacks, func(a attackReq) bool { return !s.o.only.MatchString(a.name) })
		if len(attacks) == 0 {
			return fmt.Errorf("-attacks %q matches no attack", s.o.only)
		}
	}
	for w := range s.o.attackWorkers {
		wg.Go(func() { s.attack(runCtx, tenants[2], attacks, w) })
	}
	if s.o.attackWorkers > 0 && (s.o.only == nil || s.o.only.MatchString("flood")) {
		wg.Go(func() { s.flood(runCtx, tenants[2]) })
	}
	wg.Go(func() { s.faults(runCtx) })
	wg.Wait()
	load, _ = os.ReadFile("/proc/loadavg")
	s.log("traffic over (load average %s)", strings.Join(strings.Fields(string(load))[:3], " "))
	s.readHWM()
	return s.report()
}

func cpus() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

// cmd runs fleetgraph with args against the soak's database.
func (s *soak) cmd(ctx context.Context, stdout io.Writer, args ...string) error {
	c := exec.CommandContext(ctx, s.o.bin, args...)
	c.Env = s.env()
	c.Stdout = stdout
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("fleetgraph %s: %w: %s", args[0], err, stderr.Bytes())
	}
	return nil
}

func (s *soak) env() []string {
	return append(os.Environ(), "DATABASE_URL="+s.dbURL, "FLEETGRAPH_DATA_DIR="+filepath.Join(s.o.work, "data"),
		"FLEETGRAPH_SECRET_KEY=0000000000000000000000000000000000000000000000000000000000000000")
}

func (s *soak) bootstrap(ctx context.Context, name string) (*tenant, error) {
	return s.bootstrapUser(ctx, name, "ops")
}

// bootstrapUser makes user@name.example an org_admin of data owner name
// (made when missing) and answers its keys.
func (s *soak) bootstrapUser(ctx context.Context, name, user string) (*tenant, error) {
	var out bytes.Buffer
	if err := s.cmd(ctx, &out, "bootstrap", "--data-owner", name, "--email", user+"@"+name+".example", "--json"); err != nil {
		return nil, err
	}
	var keys struct {
		API    string `json:"api_key"`
		Export string `json:"export_api_key"`
	}
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil || keys.API == "" || keys.Export == "" {
		return nil, fmt.Errorf("bootstrap %s printed no keys: %s", name, out.Bytes())
	}
	return &tenant{name: name, admin: keys.API, export: keys.Export}, nil
}

// seed imports 2,000 small measurements of 20 clients; the attacker also
// gets 120 of 200 KB, so that its listings and searches of size 10,000
// would answer far more than the byte budget.
func (s *soak) seed(ctx context.Context, name string, big bool) error {
	path := filepath.Join(s.o.work, name+".ndjson")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	subjects := []string{"youtube", "netflix", "website", "ookla"}
	tenantNo := 0
	for _, c := range name {
		tenantNo = tenantNo*31 + int(c)
	}
	tenantNo %= 1_000_000
	for i := range 2000 {
		_ = enc.Encode(map[string]any{"id": fmt.Sprintf("%s-m%05d", name, i), "type": "VideoMeasurement",
			"client_uuid": fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", tenantNo, i%20), "created_at": time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
			"study":            map[string]any{"subject": subjects[i%len(subjects)], "study_id": "s1"},
			"statistic_values": map[string]any{"bitrate": 1000 + i%700, "stalls": i % 3}})
	}
	if big {
		pad := strings.Repeat("x", 200<<10)
		for i := range 120 {
			_ = enc.Encode(map[string]any{"id": fmt.Sprintf("%s-big%04d", name, i), "type": "VideoMeasurement",
				"client_uuid": fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", tenantNo, 1), "created_at": time.Date(2026, 11, 3, 0, i, 0, 0, time.UTC),
				"study": map[string]any{"subject": "youtube"}, "pad": pad})
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_ = f.Close()
	return s.cmd(ctx, nil, "import", "--data-owner", name, "--kind", "measurement", path)
}

func (s *soak) startServer(ctx context.Context) error {
	logf, err := os.OpenFile(filepath.Join(s.o.work, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	c := exec.Command(s.o.bin, "serve", "--addr", fmt.Sprintf("127.0.0.1:%d", s.o.port))
	c.Env = s.env()
	c.Stdout, c.Stderr = logf, logf
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait(); _ = logf.Close() }()
	s.mu.Lock()
	s.server = c
	s.mu.Unlock()
	return s.waitReady(ctx, 60*time.Second)
}

func (s *soak) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		r, err := s.client.Get(s.base + "/readyz")
		if err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("fleetgraph not ready within %s (log in %s)", limit, s.o.work)
}

func (s *soak) stopServer() {
	s.mu.Lock()
	c := s.server
	s.mu.Unlock()
	if c != nil && c.Process != nil {
		_ = c.Process.Signal(syscall.SIGTERM)
		time.Sleep(time.Second)
		_ = c.Process.Kill()
	}
}

func (s *soak) serverPID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil || s.server.Process == nil {
		return 0
	}
	return s.server.Process.Pid
}

// procKB reads a "Name:   N kB" line of /proc/pid/status, in bytes.
func procKB(pid int, name string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n << 10
		}
	}
	return 0
}

func (s *soak) sampleRSS(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if pid := s.serverPID(); pid != 0 {
			rss := procKB(pid, "VmRSS")
			s.mu.Lock()
			s.peakRSS = max(s.peakRSS, rss)
			s.mu.Unlock()
		}
	}
}

func (s *soak) readHWM() {
	if pid := s.serverPID(); pid != 0 {
		if h := procKB(pid, "VmHWM"); h > 0 {
			s.mu.Lock()
			s.hwm = append(s.hwm, h)
			s.mu.Unlock()
		}
	}
}

// faults kills the server at 40 % of the run and restarts PostgreSQL at 65 %.
func (s *soak) faults(ctx context.Context) {
	wait := func(frac float64, since time.Time) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(since.Add(time.Duration(frac * float64(s.o.duration))))):
			return true
		}
	}
	start := time.Now()
	if !wait(0.4, start) {
		return
	}
	s.readHWM()
	w := s.open("kill -9 of the server")
	_ = syscall.Kill(s.serverPID(), syscall.SIGKILL)
	s.log("server killed (SIGKILL); starting it again")
	time.Sleep(time.Second)
	if err := s.startServer(ctx); err != nil {
		s.log("server did not come back: %v", err)
	}
	s.close(w)
	if !wait(0.65, start) {
		return
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w = s.open("PostgreSQL restart")
	if err := pglocal.StopPrivate(ctx, quiet, s.pgDir); err != nil {
		s.log("stopping PostgreSQL: %v", err)
	}
	s.log("PostgreSQL stopped; starting it again in 5 s")
	time.Sleep(5 * time.Second)
	if _, _, err := pglocal.StartPrivate(ctx, quiet, s.pgDir, "fleetgraph_soak"); err != nil {
		s.log("PostgreSQL did not start: %v", err)
	}
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		s.log("server not ready after the PostgreSQL restart: %v", err)
	}
	s.close(w)
}

func (s *soak) open(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.windows = append(s.windows, window{what: what, start: time.Now()})
	return len(s.windows) - 1
}

func (s *soak) close(i int) {
	s.mu.Lock()
	s.windows[i].end = time.Now()
	w := s.windows[i]
	s.mu.Unlock()
	s.log("%s: outage window %.1f s (answers until %s later still count inside it)", w.what, w.end.Sub(w.start).Seconds(), s.o.grace)
}

// inside reports whether a request that started at at and took took
// overlapped an outage window (with the grace after its end).
func (s *soak) inside(at time.Time, took time.Duration) bool {
	for _, w := range s.windows {
		end := w.end
		if end.IsZero() {
			end = time.Now()
		}
		if at.Before(end.Add(s.o.grace)) && at.Add(took).After(w.start) {
			return true
		}
	}
	return false
}

type answer struct {
	status             int
	body               []byte
	rateHeaders, retry bool
}

// do sends one request and records it under tenant and kind.
func (s *soak) do(ctx context.Context, tenantName, kind, method, path, key, encoding string, body []byte) answer {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		panic(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	req.Header.Set("X-Request-Id", fmt.Sprintf("%s.%d", tenantName, s.seq.Add(1))) // the access log's line, for serverSide
	start := time.Now()
	resp, err := s.client.Do(req)
	var a answer
	if err == nil {
		a.body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		a.status = resp.StatusCode
		h := resp.Header
		a.rateHeaders = h.Get("X-RateLimit-Limit") != "" && h.Get("X-RateLimit-Remaining") != "" && h.Get("X-RateLimit-Reset") != ""
		a.retry = h.Get("Retry-After") != ""
		if err != nil {
			a.status = 0
		}
	}
	if ctx.Err() != nil { // the run ended under the request: not an answer
		return a
	}
	s.mu.Lock()
	s.results = append(s.results, result{tenant: tenantName, kind: kind, at: start, took: time.Since(start), status: a.status,
		rateHeaders: a.rateHeaders, retryAfter: a.retry})
	s.mu.Unlock()
	if a.status == 0 || a.status >= 500 {
		time.Sleep(200 * time.Millisecond) // as a client would, rather than spin through an outage
	}
	return a
}

func (s *soak) graphql(ctx context.Context, t *tenant, kind, query string) answer {
	body, _ := json.Marshal(map[string]any{"query": query})
	return s.do(ctx, t.name, kind, http.MethodPost, "/graphql", t.admin, "", body)
}

// behave is one goroutine of a well-behaved tenant: a mix of reads,
// writes, searches and GraphQL, paced to its share of -tenant-rate.
func (s *soak) behave(ctx context.Context, t *tenant, worker int) {
	every := time.Duration(float64(time.Second) * float64(s.o.workers) / s.o.tenantRate)
	index := "analytics-production-" + t.name + "-measurements"
	esql := "/export_api/v1/esql?query=" + url.QueryEscape("FROM "+index+" | STATS n = COUNT(*) BY study.subject | SORT n DESC | LIMIT 10")
	search := []byte(`{"body": {"query": {"bool": {"filter": [{"term": {"study.subject": "youtube"}}]}}, "size": 20}}`)
	steps := []func(){
		func() { s.do(ctx, t.name, "GET /isps", http.MethodGet, "/client_admin_api/v1/isps", t.admin, "", nil) },
		func() {
			s.do(ctx, t.name, "GET /clients", http.MethodGet, "/client_admin_api/v1/clients", t.admin, "", nil)
		},
		func() { s.graphql(ctx, t, "GraphQL isps+clients", `{ isps { id name } clients { id uuid } }`) },
		func() {
			s.do(ctx, t.name, "export GET /measurements", http.MethodGet, "/export_api/v1/measurements?per_page=25", t.export, "", nil)
		},
		func() {
			s.do(ctx, t.name, "export POST /search", http.MethodPost, "/export_api/v1/search", t.export, "", search)
		},
		func() { s.do(ctx, t.name, "export ES|QL", http.MethodGet, esql, t.export, "", nil) },
		func() {
			r := s.do(ctx, t.name, "POST /isps", http.MethodPost, "/client_admin_api/v1/isps", t.admin, "",
				fmt.Appendf(nil, `{"name": "isp %d-%d", "country": "DE", "type": "mobile"}`, worker, time.Now().UnixNano()))
			var body struct {
				Isp struct {
					ID json.Number `json:"id"`
				} `json:"isp"`
			}
			if r.status == http.StatusCreated && json.Unmarshal(r.body, &body) == nil {
				s.do(ctx, t.name, "DELETE /isps/{id}", http.MethodDelete, "/client_admin_api/v1/isps/"+body.Isp.ID.String(), t.admin, "", nil)
			}
		},
	}
	next := time.Now().Add(time.Duration(worker) * every / time.Duration(s.o.workers))
	for i := worker; ctx.Err() == nil; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		next = next.Add(every)
		steps[i%len(steps)]()
	}
}

type attackReq struct {
	name     string
	method   string
	path     string
	export   bool // with the export key, else the admin key
	encoding string
	body     []byte
}

func repeat(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

func gql(query string) []byte { b, _ := json.Marshal(map[string]any{"query": query}); return b }

func js(v any) []byte { b, _ := json.Marshal(v); return b }

// attacks are the requests of issue 16's probe, as the attacker sends them.
func (s *soak) attacks(evil, victim *tenant) []attackReq {
	var frag strings.Builder
	fmt.Fprintf(&frag, "query { ...F30 } fragment F0 on Query { __typename }")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&frag, " fragment F%d on Query { ...F%d ...F%d }", i, i-1, i-1)
	}
	ors := strings.TrimSuffix(repeat(6000, "study.subject:s%d OR "), " OR ")
	// Ten of them in one document must stay under the 1 MiB body limit.
	shortOrs := strings.TrimSuffix(repeat(6000, "x:s%d OR "), " OR ")
	slowSearch := fmt.Sprintf(`measurementSearch(body: {query: {query_string: {query: %q}}})`, shortOrs)
	var sortKeys []any
	for i := range 300 {
		sortKeys = append(sortKeys, map[string]any{fmt.Sprintf("f%d", i): "asc"})
	}
	var sort400 []any
	for i := range 400 {
		sort400 = append(sort400, map[string]any{fmt.Sprintf("f%d", i): "asc"})
	}
	terms := make([]string, 60_000)
	for i := range terms {
		terms[i] = fmt.Sprintf("v%d", i)
	}
	index := "analytics-production-" + evil.name + "-measurements"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"query": "{ __typename }` + strings.Repeat(" ", 2<<20) + `"}`))
	_ = zw.Close()
	match := map[string]any{"match_all": map[string]any{}}
	return []attackReq{
		{name: "GraphQL alias overlap 22 KB", method: http.MethodPost, path: "/graphql",
			body: gql("{" + repeat(750, " a: capability(id: %d) { id }") + " }")},
		{name: "GraphQL fragments doubling 30 levels", method: http.MethodPost, path: "/graphql", body: gql(frag.String())},
		{name: "GraphQL list literal 200,000 deep", method: http.MethodPost, path: "/graphql",
			body: gql("{ anomalyEventSearch(body: " + strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) + ") }")},
		{name: "GraphQL 10 aliased slow searches", method: http.MethodPost, path: "/graphql",
			body: gql("{" + repeat(10, " s%d: "+strings.ReplaceAll(slowSearch, "%", "%%")) + " }")},
		{name: "GraphQL 10 aliased searches of size 10,000", method: http.MethodPost, path: "/graphql",
			body: gql("{" + repeat(10, " s%d: measurementSearch(body: {query: {match_all: {}}}, size: 10000)") + " }")},
		{name: "GraphQL 300 user creations with notifyUser", method: http.MethodPost, path: "/graphql",
			body: gql("mutation {" + repeat(300, ` u%d: userCreate(input: {email: "u%d@x.example", username: "u%d", role: viewer, notifyUser: true}) { id }`) + " }")},
		{name: "GraphQL gzip body over 1 MiB", method: http.MethodPost, path: "/graphql", encoding: "gzip", body: gz.Bytes()},
		{name: "search query_string 6,000 ORs", method: http.MethodPost, path: "/export_api/v1/search", export: true,
			body: js(map[string]any{"body": map[string]any{"query": map[string]any{"query_string": map[string]any{"query": ors}}}})},
		{name: "search query_string 5,000 parentheses", method: http.MethodPost, path: "/export_api/v1/search", export: true,
			body: js(map[string]any{"body": map[string]any{"query": map[string]any{"query_string": map[string]any{
				"query": strings.Repeat("(", 5000) + "a" + strings.Repeat(")", 5000)}}}})},
		{name: "search sort 300 keys", method: http.MethodPost, path: "/export_api/v1/search", export: true,
			body: js(map[string]any{"body": map[string]any{"query": match, "sort": sortKeys}})},
		{name: "search sort 400 keys", method: http.MethodPost, path: "/export_api/v1/search", export: true,
			body: js(map[string]any{"body": map[string]any{"query": match, "sort": sort400}})},
		{name: "search terms 60,000 values", method: http.MethodPost, path: "/export_api/v1/search", export: true,
			body: js(map[string]any{"body": map[string]any{"query": map[string]any{"terms": map[string]any{"study.subject": terms}}}})},
		{name: "search size 10,000 of 200 KB documents", method: http.MethodPost, path: "/export_api/v1/search", export: true,
			body: js(map[string]any{"body": map[string]any{"query": match}, "size": 10000})},
		{name: "export per_page=1000 of 200 KB documents", method: http.MethodGet, path: "/export_api/v1/measurements?per_page=1000", export: true},
		{name: "ES|QL EVAL 2,000 columns", method: http.MethodGet, export: true, path: "/export_api/v1/esql?query=" + url.QueryEscape(
			"FROM "+index+" | EVAL "+strings.TrimSuffix(repeat(2000, "c%d = 1, "), ", ")+" | LIMIT 1")},
		{name: "another tenant's ISP", method: http.MethodGet, path: "/client_admin_api/v1/isps/" + victim.ispID},
		{name: "another tenant's ISP deleted", method: http.MethodDelete, path: "/client_admin_api/v1/isps/" + victim.ispID},
	}
}

// attack is one goroutine of the attacker: every attack in turn, as fast
// as the answers come.
func (s *soak) attack(ctx context.Context, evil *tenant, attacks []attackReq, worker int) {
	for i := worker * 3; ctx.Err() == nil; i++ {
		a := attacks[i%len(attacks)]
		key := evil.admin
		if a.export {
			key = evil.export
		}
		s.do(ctx, evil.name, a.name, a.method, a.path, key, a.encoding, a.body)
	}
}

// flood sends the attacker's cheapest request as fast as it can with a
// key of its own: the key's rate limit answers most of them, and the
// attacks, on the other keys, still reach the server.
func (s *soak) flood(ctx context.Context, evil *tenant) {
	for ctx.Err() == nil {
		s.do(ctx, evil.name, "flood GET /isps (own key)", http.MethodGet, "/client_admin_api/v1/isps", evil.flood, "", nil)
	}
}

type stats struct {
	n, c2, c4, c429, c5in, c5out, errIn, errOut int
	noRate, noRetry                             int // answers outside the outages without X-RateLimit headers; 429s without Retry-After
	took                                        []time.Duration
	tookAnswered                                []time.Duration // of the answers other than 429 (a repeated 429 is held)
}

func (st *stats) add(s *soak, r result) {
	st.n++
	in := s.inside(r.at, r.took)
	switch {
	case r.status == 0 && in:
		st.errIn++
	case r.status == 0:
		st.errOut++
	case r.status >= 500 && in:
		st.c5in++
	case r.status >= 500:
		st.c5out++
	case r.status == http.StatusTooManyRequests:
		st.c429++
	case r.status >= 400:
		st.c4++
	default:
		st.c2++
	}
	if r.status != 0 && !in {
		st.took = append(st.took, r.took)
		if r.status != http.StatusTooManyRequests {
			st.tookAnswered = append(st.tookAnswered, r.took)
		}
		if !r.rateHeaders {
			st.noRate++
		}
		if r.status == http.StatusTooManyRequests && !r.retryAfter {
			st.noRetry++
		}
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func (s *soak) report() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	byTenant := map[string]*stats{}
	byKind := map[string]*stats{}
	var tenants, kinds []string
	for _, r := range s.results {
		if byTenant[r.tenant] == nil {
			byTenant[r.tenant] = &stats{}
			tenants = append(tenants, r.tenant)
		}
		byTenant[r.tenant].add(s, r)
		k := r.tenant + " | " + r.kind
		if byKind[k] == nil {
			byKind[k] = &stats{}
			kinds = append(kinds, k)
		}
		byKind[k].add(s, r)
	}
	slices.Sort(kinds)
	fmt.Println()
	fmt.Println("outage windows:")
	for _, w := range s.windows {
		fmt.Printf("  %-24s %.1f s (+ %s grace)\n", w.what, w.end.Sub(w.start).Seconds(), s.o.grace)
	}
	header := "| %-52s | %7s | %6s | %6s | %6s | %12s | %13s | %10s | %10s | %10s | %13s | %11s |\n"
	row := "| %-52s | %7d | %6d | %6d | %6d | %5d / %-4d | %6d / %-4d | %10s | %10s | %10s | %13s | %5d / %-3d |\n"
	print := func(title string, names []string, m map[string]*stats) {
		fmt.Println()
		fmt.Println(title)
		fmt.Printf(header, "", "reqs", "2xx", "4xx", "429", "5xx in/out", "errors in/out", "p50", "p99", "max", "p99 not 429", "no RL / RA")
		for _, n := range names {
			st := m[n]
			fmt.Printf(row, n, st.n, st.c2, st.c4, st.c429, st.c5in, st.c5out, st.errIn, st.errOut,
				ms(pct(st.took, 0.5)), ms(pct(st.took, 0.99)), ms(pct(st.took, 1)), ms(pct(st.tookAnswered, 0.99)), st.noRate, st.noRetry)
		}
	}
	print("per tenant (latencies of answers outside the outage windows; soakevil is the attacker; "+
		"p99 not 429: of the other answers, since a key's repeated 429s are held (FLEETGRAPH_RATE_LIMIT_REPEAT_HOLD); "+
		"no RL / RA: answers without the X-RateLimit headers, 429s without Retry-After):", tenants, byTenant)
	print("per request kind:", kinds, byKind)
	s.serverSide(tenants)
	hwm := slices.Max(append([]int64{0}, s.hwm...))
	fmt.Printf("\npeak RSS of the server: %d MB sampled (VmRSS every 100 ms), %d MB VmHWM of its processes; bound %d MB\n",
		s.peakRSS>>20, hwm>>20, s.o.rssBound>>20)
	var fails []string
	for _, n := range tenants {
		if st := byTenant[n]; st.c5out > 0 || st.errOut > 0 || st.noRetry > 0 {
			fails = append(fails, fmt.Sprintf("%s: %d 5xx and %d transport errors outside the outage windows, %d 429s without Retry-After",
				n, st.c5out, st.errOut, st.noRetry))
		}
	}
	if max(s.peakRSS, hwm) > s.o.rssBound {
		fails = append(fails, fmt.Sprintf("peak RSS %d MB over the bound %d MB", max(s.peakRSS, hwm)>>20, s.o.rssBound>>20))
	}
	if len(fails) > 0 {
		return errors.New("FAILED: " + strings.Join(fails, "; "))
	}
	fmt.Println("PASSED: no 5xx and no transport error outside the outage windows; peak RSS within the bound")
	return nil
}

// serverSide prints each tenant's p50 and p99 as the server's access log
// measured them (from its reading the request to its answer), outside the
// outage windows: what the server took, without the time the request and
// its answer spent in the kernel, the load generator and its scheduling.
func (s *soak) serverSide(tenants []string) {
	f, err := os.Open(filepath.Join(s.o.work, "server.log"))
	if err != nil {
		return
	}
	defer f.Close()
	took := map[string][]time.Duration{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Time       time.Time `json:"time"`
			Msg        string    `json:"msg"`
			RequestID  string    `json:"request_id"`
			DurationMS int64     `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" {
			continue
		}
		tenant, _, ok := strings.Cut(line.RequestID, ".")
		d := time.Duration(line.DurationMS) * time.Millisecond
		if ok && !s.inside(line.Time.Add(-d), d) {
			took[tenant] = append(took[tenant], d)
		}
	}
	fmt.Println()
	fmt.Println("per tenant as the server measured it (access log, whole milliseconds):")
	for _, t := range tenants {
		fmt.Printf("  %-10s %7d answers  p50 %s  p99 %s  max %s\n", t, len(took[t]), ms(pct(took[t], 0.5)), ms(pct(took[t], 0.99)), ms(pct(took[t], 1)))
	}
}
