package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/assistant"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/detector"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/pglocal"
)

// config is the process configuration: environment first, flags override.
type config struct {
	DatabaseURL string
	Addr        string
	DataDir     string
	SecretKey   string
	ElasticURL  string
	// SearchTimeout is the time limit of each search and ES|QL query on the
	// embedded backend, a Go duration (searchTimeout reads it).
	SearchTimeout string
	// DBMaxConns is the size of the PostgreSQL pool, a positive integer
	// (dbMaxConns reads it; empty: defaultDBMaxConns).
	DBMaxConns string
	// MaxAnswerBytes is the most one operation may answer, in bytes
	// (maxAnswerBytes reads it; empty: limits.AnswerBytes).
	MaxAnswerBytes string
	// Releases names the release catalogue file of GET /software/downloads
	// (releases.Load; empty: no components).
	Releases string
	// RequestTimeout is the deadline of each API request and
	// StatementTimeout PostgreSQL's statement_timeout on serve's pool, Go
	// durations (requestTimeout, statementTimeout read them).
	RequestTimeout   string
	StatementTimeout string
	// DatabaseWait is how long PostgreSQL may leave a ping unanswered
	// before requests answer 503, a Go duration or "off" (databaseWait
	// reads it).
	DatabaseWait string
	// MetricsAddr is where /metrics is served: empty on Addr, "off"
	// nowhere, else a listener of its own.
	MetricsAddr string
	// PprofAddr is where Go's runtime profiles are served: empty nowhere,
	// else a listener of its own (never Addr).
	PprofAddr string
	// SMTP is the mail server (mail.go).
	SMTP smtpConfig
	// AI* configure the AI assistant (assistant.Config; aiAssistant reads
	// them): provider openai or anthropic, empty is off.
	AIProvider, AIBaseURL, AIAPIKey, AIModel, AIMonthlyTokens string
	// Webhooks are the delivery engine's settings (webhooks.go).
	Webhooks webhookConfig
	// RateKey, RateDataOwner and RateProbe are the rate limits, "N/PERIOD"
	// or "off" (rateLimits reads them).
	RateKey, RateDataOwner, RateProbe string
	// RateWebClients bounds the clients the client analytics keys of one
	// data owner may create, "N/PERIOD" or "off".
	RateWebClients string
	// RateAnswerBytes limits what each data owner's searches and exports
	// may answer, "SIZE/PERIOD" or "off".
	RateAnswerBytes string
	// RateRepeatHold pauses the repeated refusals of a key that does not
	// wait its Retry-After, a Go duration, or "off".
	RateRepeatHold string
	// MemoryLimit is the Go runtime's soft memory limit, "384MiB" or
	// "off" (memoryLimit reads it).
	MemoryLimit string
	// HeapFloor is the heap the collector lets grow before it runs while
	// little is live (heapfloor.go), "64MiB" or "off".
	HeapFloor string
	// AnalyzerWorkers is how many clients the analyzer judges at once in
	// this process, a whole number; empty: detector.DefaultWorkers.
	AnalyzerWorkers string
	// RetentionDays is the operator's default retention in days, empty
	// keeps everything (retentionDays reads it; expire.go).
	RetentionDays string
	// ReadDatabaseURL is a streaming replica for reads (empty: none) and
	// ReadMaxLag how far behind it may be, a Go duration (replica.go).
	ReadDatabaseURL, ReadMaxLag string
	// tracer, when set, traces the store's statements (serve sets it when
	// tracing is on).
	tracer pgx.QueryTracer
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// flags registers every configuration flag (serve's set) on fs.
func (c *config) flags(fs *flag.FlagSet) {
	c.storeFlags(fs)
	c.replicaFlags(fs)
	c.retentionFlag(fs)
	c.secretFlag(fs)
	c.addrFlag(fs)
	c.searchFlags(fs)
	fs.StringVar(&c.MaxAnswerBytes, "max-answer-bytes", envOr("FLEETGRAPH_MAX_ANSWER_BYTES", ""),
		fmt.Sprintf("most bytes one GraphQL or REST operation (one page of a stream) may answer; over it a 400 says how to ask for less (env FLEETGRAPH_MAX_ANSWER_BYTES); empty: %d (%s)",
			limits.AnswerBytes, budget.Size(limits.AnswerBytes)))
	fs.StringVar(&c.Releases, "releases", envOr("FLEETGRAPH_RELEASES", ""),
		"release catalogue `file` (JSON) answered by GET /software/downloads (env FLEETGRAPH_RELEASES); empty: no components")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", envOr("FLEETGRAPH_METRICS_ADDR", ""),
		"where GET /metrics (Prometheus) is served, without authentication (env FLEETGRAPH_METRICS_ADDR): empty on --addr, "+
			"an address such as 127.0.0.1:9464 on a listener of its own (and not on --addr), off nowhere")
	fs.StringVar(&c.PprofAddr, "pprof-addr", envOr("FLEETGRAPH_PPROF_ADDR", ""),
		"where Go's runtime profiles (GET /debug/pprof/) are served, without authentication, on a listener of its own "+
			"such as 127.0.0.1:6060 (env FLEETGRAPH_PPROF_ADDR); empty: nowhere")
	c.deadlineFlags(fs)
	c.mailFlags(fs)
	c.aiFlags(fs)
	c.webhookFlags(fs)
	c.rateFlags(fs)
	fs.StringVar(&c.MemoryLimit, "memory-limit", envOr("FLEETGRAPH_MEMORY_LIMIT", defaultMemoryLimit),
		"soft memory limit of the Go runtime, bytes with a unit (256MiB, 1GiB) or off (env FLEETGRAPH_MEMORY_LIMIT); "+
			"GOMEMLIMIT, when set, wins")
	fs.StringVar(&c.HeapFloor, "heap-floor", envOr("FLEETGRAPH_HEAP_FLOOR", defaultHeapFloor),
		"heap the Go collector lets grow before it runs while little is live, bytes with a unit (64MiB) or off "+
			"(env FLEETGRAPH_HEAP_FLOOR); under the memory limit; GOGC, when set, wins")
}

// aiFlags registers the AI assistant's settings.
func (c *config) aiFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.AIProvider, "ai-provider", envOr("FLEETGRAPH_AI_PROVIDER", ""),
		"AI assistant's model API (env FLEETGRAPH_AI_PROVIDER): openai (any OpenAI-compatible chat completions server: "+
			"OpenAI, Azure OpenAI, Ollama, llama.cpp, vLLM) or anthropic; empty: the assistant is off (its operations answer 503)")
	fs.StringVar(&c.AIBaseURL, "ai-base-url", envOr("FLEETGRAPH_AI_BASE_URL", ""),
		"base `URL` of the model API (env FLEETGRAPH_AI_BASE_URL), e.g. http://127.0.0.1:11434/v1 for Ollama; empty: the vendor's")
	fs.Var(secretEnv(&c.AIAPIKey, "FLEETGRAPH_AI_API_KEY"), "ai-api-key",
		"API `key` of the model API (env FLEETGRAPH_AI_API_KEY); required for anthropic")
	fs.StringVar(&c.AIModel, "ai-model", envOr("FLEETGRAPH_AI_MODEL", ""),
		"model name sent to the model API (env FLEETGRAPH_AI_MODEL); required with --ai-provider")
	fs.StringVar(&c.AIMonthlyTokens, "ai-monthly-tokens", envOr("FLEETGRAPH_AI_MONTHLY_TOKENS", ""),
		fmt.Sprintf("default monthly token limit of a data owner (env FLEETGRAPH_AI_MONTHLY_TOKENS); an org_admin sets a data owner's own "+
			"(PUT /ai_assistant/token_limit); empty: %d", limits.AIMonthlyTokens))
}

// aiAssistant is the configured AI assistant (nil when off).
func (c *config) aiAssistant() (*assistant.Assistant, error) {
	var monthly int64
	if raw := strings.TrimSpace(c.AIMonthlyTokens); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--ai-monthly-tokens (FLEETGRAPH_AI_MONTHLY_TOKENS) %q must be a positive whole number of tokens", raw)
		}
		monthly = n
	}
	return assistant.New(assistant.Config{Provider: c.AIProvider, BaseURL: strings.TrimSpace(c.AIBaseURL), APIKey: c.AIAPIKey,
		Model: strings.TrimSpace(c.AIModel), MonthlyTokens: monthly})
}

// defaultMemoryLimit keeps the server's peak RSS under 500 MB under the
// attacks of bench/soak.sh (several answers of the 32 MiB budget at once):
// without it Go's collector let the heap grow to twice what was live, and
// the peak was 567 MB.
const defaultMemoryLimit = "384MiB"

// memoryLimit reads --memory-limit: bytes, or -1 when off (or left to
// GOMEMLIMIT).
func (c *config) memoryLimit() (int64, error) {
	raw := strings.TrimSpace(c.MemoryLimit)
	if os.Getenv("GOMEMLIMIT") != "" || strings.EqualFold(raw, "off") {
		return -1, nil
	}
	if raw == "" {
		raw = defaultMemoryLimit
	}
	if n, ok := budget.ParseSize(raw); ok {
		if n < 64<<20 {
			return 0, fmt.Errorf("--memory-limit (FLEETGRAPH_MEMORY_LIMIT) %q is under 64MiB: the server would spend its time collecting garbage", c.MemoryLimit)
		}
		return n, nil
	}
	return 0, fmt.Errorf("--memory-limit (FLEETGRAPH_MEMORY_LIMIT) %q must be bytes with a unit, such as 384MiB or 2GiB, or off", c.MemoryLimit)
}

// defaultHeapFloor: under lookups by id at 64 MiB the collector ran 57
// times in 10 s where it ran 209 times at Go's default, and the server's
// RSS grew by 55 MB (docs/benchmarks.md, "A heap floor"); 128 MiB halved
// the collections again for no more lookups a second and 75 MB more.
const defaultHeapFloor = "64MiB"

// heapFloor reads --heap-floor against the memory limit in force
// (memLimit, -1 when off or left to GOMEMLIMIT): bytes, or 0 when off
// (or left to GOGC).
func (c *config) heapFloor(memLimit int64) (uint64, error) {
	raw := strings.TrimSpace(c.HeapFloor)
	if os.Getenv("GOGC") != "" || strings.EqualFold(raw, "off") {
		return 0, nil
	}
	if raw == "" {
		raw = defaultHeapFloor
	}
	n, ok := budget.ParseSize(raw)
	if !ok {
		return 0, fmt.Errorf("--heap-floor (FLEETGRAPH_HEAP_FLOOR) %q must be bytes with a unit, such as 64MiB, or off", c.HeapFloor)
	}
	if n < 8<<20 {
		return 0, fmt.Errorf("--heap-floor (FLEETGRAPH_HEAP_FLOOR) %q is under 8MiB, where Go's collector runs anyway; say off instead", c.HeapFloor)
	}
	if memLimit < 0 {
		memLimit = debug.SetMemoryLimit(-1) // GOMEMLIMIT's, or none (math.MaxInt64)
	}
	if n >= memLimit {
		return 0, fmt.Errorf("--heap-floor (FLEETGRAPH_HEAP_FLOOR) %q is not under the memory limit (%d bytes, --memory-limit or GOMEMLIMIT), "+
			"which would collect first", c.HeapFloor, memLimit)
	}
	return uint64(n), nil
}

// rateFlags registers the rate limits.
func (c *config) rateFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.RateKey, "rate-limit-key", envOr("FLEETGRAPH_RATE_LIMIT_KEY", ratelimit.DefaultKey.String()),
		"requests one admin or export API key may make, count/period such as 1200/1m, or off (env FLEETGRAPH_RATE_LIMIT_KEY)")
	fs.StringVar(&c.RateDataOwner, "rate-limit-data-owner", envOr("FLEETGRAPH_RATE_LIMIT_DATA_OWNER", ratelimit.DefaultDataOwner.String()),
		"requests the admin and export API keys of one data owner may make together, count/period, or off (env FLEETGRAPH_RATE_LIMIT_DATA_OWNER)")
	fs.StringVar(&c.RateProbe, "rate-limit-probe", envOr("FLEETGRAPH_RATE_LIMIT_PROBE", ratelimit.DefaultProbe.String()),
		"requests one probe may make on the client API, count/period, or off (env FLEETGRAPH_RATE_LIMIT_PROBE)")
	fs.StringVar(&c.RateWebClients, "analytics-new-clients", envOr("FLEETGRAPH_ANALYTICS_NEW_CLIENTS", ratelimit.DefaultWebClients.String()),
		"new clients (license units) the client analytics keys of one data owner may create, count/period such as 1000/24h, or off; "+
			"reports naming more new clients are refused with 429, and the data owner gets a client_analytics.clients_limited event "+
			"(env FLEETGRAPH_ANALYTICS_NEW_CLIENTS)")
	fs.StringVar(&c.RateAnswerBytes, "rate-limit-answer-bytes", envOr("FLEETGRAPH_RATE_LIMIT_ANSWER_BYTES", ratelimit.DefaultAnswerBytes.String()),
		"bytes the searches, ES|QL queries and export listings of one data owner may answer together, size/period such as 1GiB/1m, or off (env FLEETGRAPH_RATE_LIMIT_ANSWER_BYTES)")
	fs.StringVar(&c.RateRepeatHold, "rate-limit-repeat-hold", envOr("FLEETGRAPH_RATE_LIMIT_REPEAT_HOLD", limits.RepeatHold.String()),
		"how long a key refused again before its Retry-After waits for its 429, a Go duration of at most 10s, or off (env FLEETGRAPH_RATE_LIMIT_REPEAT_HOLD)")
}

// rateLimits is the configured limiter over st.
func (c *config) rateLimits(st *store.Store, log *slog.Logger) (*ratelimit.Limiter, error) {
	l := &ratelimit.Limiter{Store: st, Logger: log}
	for _, s := range []struct {
		raw, name string
		to        *ratelimit.Rate
	}{
		{c.RateKey, "--rate-limit-key (FLEETGRAPH_RATE_LIMIT_KEY)", &l.Key},
		{c.RateDataOwner, "--rate-limit-data-owner (FLEETGRAPH_RATE_LIMIT_DATA_OWNER)", &l.DataOwner},
		{c.RateProbe, "--rate-limit-probe (FLEETGRAPH_RATE_LIMIT_PROBE)", &l.Probe},
		{c.RateWebClients, "--analytics-new-clients (FLEETGRAPH_ANALYTICS_NEW_CLIENTS)", &l.WebClients},
	} {
		r, err := ratelimit.ParseRate(s.raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		*s.to = r
	}
	b, err := ratelimit.ParseByteRate(c.RateAnswerBytes)
	if err != nil {
		return nil, fmt.Errorf("--rate-limit-answer-bytes (FLEETGRAPH_RATE_LIMIT_ANSWER_BYTES): %w", err)
	}
	l.AnswerBytes = b
	if raw := strings.TrimSpace(c.RateRepeatHold); !strings.EqualFold(raw, "off") && raw != "0" {
		if l.RepeatHold, err = duration(raw, limits.RepeatHold, limits.MaxRepeatHold,
			"--rate-limit-repeat-hold (FLEETGRAPH_RATE_LIMIT_REPEAT_HOLD)"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// defaultDatabaseWait is the default of --database-wait.
const defaultDatabaseWait = 5 * time.Second

// deadlineFlags registers the time limits of requests and statements
// (serve only: import and migrate run long statements on purpose).
func (c *config) deadlineFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.RequestTimeout, "request-timeout", envOr("FLEETGRAPH_REQUEST_TIMEOUT", limits.RequestTimeout.String()),
		"deadline of each API request, a Go duration, at least --search-timeout and at most 2m (env FLEETGRAPH_REQUEST_TIMEOUT); "+
			"a request still waiting for PostgreSQL then answers 503")
	fs.StringVar(&c.StatementTimeout, "statement-timeout", envOr("FLEETGRAPH_STATEMENT_TIMEOUT", limits.StatementTimeout.String()),
		"PostgreSQL statement_timeout of the server's connections, a Go duration of at most 2m (env FLEETGRAPH_STATEMENT_TIMEOUT); "+
			"searches use --search-timeout instead")
	fs.StringVar(&c.DatabaseWait, "database-wait", envOr("FLEETGRAPH_DATABASE_WAIT", defaultDatabaseWait.String()),
		"how long PostgreSQL may leave a ping unanswered (pinged every second over a connection of its own) before it is declared down: "+
			"API requests then answer 503 with Retry-After at once, whatever --request-timeout, and /readyz 503; "+
			"a Go duration of at most --request-timeout, or off (env FLEETGRAPH_DATABASE_WAIT)")
}

// databaseWait is the configured --database-wait (0: off).
func (c *config) databaseWait(requestTimeout time.Duration) (time.Duration, error) {
	if strings.EqualFold(strings.TrimSpace(c.DatabaseWait), "off") {
		return 0, nil
	}
	return duration(c.DatabaseWait, defaultDatabaseWait, requestTimeout, "--database-wait (FLEETGRAPH_DATABASE_WAIT)")
}

// metricsOff is the --metrics-addr that serves no metrics.
const metricsOff = "off"

// storeFlags registers the flags of the database connection.
func (c *config) storeFlags(fs *flag.FlagSet) {
	fs.Var(secretEnv(&c.DatabaseURL, "DATABASE_URL"), "database-url",
		"PostgreSQL `URL`, postgres://user:password@host:port/database (env DATABASE_URL); empty: local PostgreSQL at 127.0.0.1:5432, else a private one under the data dir")
	fs.StringVar(&c.DataDir, "data-dir", envOr("FLEETGRAPH_DATA_DIR", ".fleetgraph"),
		"directory for the private PostgreSQL and generated secrets (env FLEETGRAPH_DATA_DIR)")
	fs.StringVar(&c.DBMaxConns, "db-max-conns", envOr("FLEETGRAPH_DB_MAX_CONNS", ""),
		fmt.Sprintf("size of the PostgreSQL connection pool (env FLEETGRAPH_DB_MAX_CONNS); empty: 4 per CPU, at least 8 (here %d)", defaultDBMaxConns()))
}

// secretFlag registers the flag of the key sealing stored secrets.
func (c *config) secretFlag(fs *flag.FlagSet) {
	fs.Var(secretEnv(&c.SecretKey, "FLEETGRAPH_SECRET_KEY"), "secret-key",
		"32-byte encryption `key`, hex or base64 (env FLEETGRAPH_SECRET_KEY); generated into the data dir when empty")
}

// addrFlag registers the listen address (bootstrap reads it for its example).
func (c *config) addrFlag(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", envOr("FLEETGRAPH_ADDR", ":8080"),
		"listen address (env FLEETGRAPH_ADDR); a bare :port listens on all interfaces, 127.0.0.1:port on this machine only")
}

// searchFlags registers the search backend's flags.
func (c *config) searchFlags(fs *flag.FlagSet) {
	fs.Var(secretEnv(&c.ElasticURL, "ELASTICSEARCH_URL"), "elasticsearch-url",
		"Elasticsearch `URL` (env ELASTICSEARCH_URL); empty: searches run on the embedded PostgreSQL backend")
	fs.StringVar(&c.SearchTimeout, "search-timeout", envOr("FLEETGRAPH_SEARCH_TIMEOUT", limits.SearchTimeout.String()),
		"time limit of each search and ES|QL query on the embedded backend, a Go duration such as 30s or 2m (env FLEETGRAPH_SEARCH_TIMEOUT)")
}

// maxDBMaxConns bounds --db-max-conns: PostgreSQL's own default
// max_connections is 100, and each connection costs it a process.
const maxDBMaxConns = 1000

// defaultDBMaxConns is the pool size when none is configured: 4 per CPU
// the process may use, at least 8. pgx's own default (max(4, CPUs)) let
// a few slow searches hold every connection.
func defaultDBMaxConns() int32 {
	return int32(max(8, 4*runtime.GOMAXPROCS(0)))
}

// dbMaxConns is the configured pool size.
func (c *config) dbMaxConns() (int32, error) {
	raw := strings.TrimSpace(c.DBMaxConns)
	if raw == "" {
		return defaultDBMaxConns(), nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > maxDBMaxConns {
		return 0, fmt.Errorf("--db-max-conns (FLEETGRAPH_DB_MAX_CONNS) %q must be a whole number from 1 to %d", c.DBMaxConns, maxDBMaxConns)
	}
	return int32(n), nil
}

// analyzerWorkers is the configured number of clients the analyzer judges
// at once for a pool of pool connections: each judging client holds a
// connection, so at most half the pool, which the requests keep. Empty:
// detector.DefaultWorkers, or half the pool when that is smaller.
func (c *config) analyzerWorkers(pool int32) (int, error) {
	most := max(1, int(pool)/2)
	raw := strings.TrimSpace(c.AnalyzerWorkers)
	if raw == "" {
		return min(detector.DefaultWorkers, most), nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > most {
		return 0, fmt.Errorf("--analyzer-workers (FLEETGRAPH_ANALYZER_WORKERS) %q must be a whole number from 1 to %d: each client judged "+
			"holds one of the %d database connections (--db-max-conns, FLEETGRAPH_DB_MAX_CONNS), and the requests keep half of them",
			c.AnalyzerWorkers, most, pool)
	}
	return n, nil
}

// maxAnswerBytes is the configured answer budget.
func (c *config) maxAnswerBytes() (int64, error) {
	raw := strings.TrimSpace(c.MaxAnswerBytes)
	if raw == "" {
		return limits.AnswerBytes, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < limits.MinAnswerBytes || n > limits.MaxAnswerBytes {
		return 0, fmt.Errorf("--max-answer-bytes (FLEETGRAPH_MAX_ANSWER_BYTES) %q must be a whole number of bytes from %d (%s) to %d (%s)",
			c.MaxAnswerBytes, limits.MinAnswerBytes, budget.Size(limits.MinAnswerBytes), limits.MaxAnswerBytes, budget.Size(limits.MaxAnswerBytes))
	}
	return n, nil
}

// secretValue is a string flag whose value may hold a password: usage text
// and flag errors say that it is set, never what it is.
type secretValue struct {
	p   *string
	env string
}

// secretEnv registers p's default from the environment variable env.
func secretEnv(p *string, env string) *secretValue {
	*p = envOr(env, "")
	return &secretValue{p: p, env: env}
}

func (s *secretValue) String() string {
	if s == nil || s.p == nil || *s.p == "" {
		return ""
	}
	return "from " + s.env + ", not shown"
}

func (s *secretValue) Set(v string) error { *s.p = v; return nil }

// searchTimeout is the configured time limit of searches (limits.SearchTimeout
// when not set, at most limits.MaxSearchTimeout).
func (c *config) searchTimeout() (time.Duration, error) {
	if strings.TrimSpace(c.SearchTimeout) == "" {
		return limits.SearchTimeout, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(c.SearchTimeout))
	if err != nil || d <= 0 || d > limits.MaxSearchTimeout {
		return 0, fmt.Errorf("--search-timeout (FLEETGRAPH_SEARCH_TIMEOUT) %q must be a positive Go duration of at most %s, such as 30s or 1m30s",
			c.SearchTimeout, limits.MaxSearchTimeout)
	}
	return d, nil
}

// requestTimeout is the configured request deadline; it may not be shorter
// than the search time limit, which must be able to report itself.
func (c *config) requestTimeout() (time.Duration, error) {
	d, err := duration(c.RequestTimeout, limits.RequestTimeout, limits.MaxRequestTimeout, "--request-timeout (FLEETGRAPH_REQUEST_TIMEOUT)")
	if err != nil {
		return 0, err
	}
	search, err := c.searchTimeout()
	if err != nil {
		return 0, err
	}
	if d < search {
		return 0, fmt.Errorf("--request-timeout (FLEETGRAPH_REQUEST_TIMEOUT) %s is shorter than --search-timeout %s: "+
			"a request must outlast its searches", d, search)
	}
	return d, nil
}

// statementTimeout is the configured statement_timeout of serve's pool (0
// for the other commands, which do not register the flag).
func (c *config) statementTimeout() (time.Duration, error) {
	if strings.TrimSpace(c.StatementTimeout) == "" {
		return 0, nil
	}
	return duration(c.StatementTimeout, limits.StatementTimeout, limits.MaxRequestTimeout, "--statement-timeout (FLEETGRAPH_STATEMENT_TIMEOUT)")
}

// duration reads a positive Go duration of at most maxD (def when blank);
// name is the flag and variable, for the message.
func duration(raw string, def, maxD time.Duration, name string) (time.Duration, error) {
	if strings.TrimSpace(raw) == "" {
		return def, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(raw))
	if err != nil || d <= 0 || d > maxD {
		return 0, fmt.Errorf("%s %q must be a positive Go duration of at most %s, such as 30s or 1m30s", name, raw, maxD)
	}
	return d, nil
}

// newLogger is the process's JSON log on stderr; a line logged for a
// request carries its request_id.
func newLogger() *slog.Logger {
	return obs.Logger(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
}

// openStore connects (starting a private PostgreSQL when needed) and
// migrates. The returned stop closes the pool and any private server.
func (c *config) openStore(ctx context.Context, log *slog.Logger) (*store.Store, func(), error) {
	if err := checkPostgresURL(c.DatabaseURL, "--database-url (DATABASE_URL)"); err != nil {
		return nil, nil, err
	}
	maxConns, err := c.dbMaxConns()
	if err != nil {
		return nil, nil, err
	}
	url, stopPG := c.DatabaseURL, func(context.Context) error { return nil }
	if url == "" {
		url, stopPG, err = pglocal.Resolve(ctx, log, c.DataDir, "fleetgraph")
		if err != nil {
			return nil, nil, err
		}
	}
	stmtTimeout, err := c.statementTimeout()
	if err != nil {
		_ = stopPG(context.Background())
		return nil, nil, err
	}
	s, err := store.Open(ctx, url, store.Options{MaxConns: maxConns, StatementTimeout: stmtTimeout, Tracer: c.tracer})
	if err != nil {
		_ = stopPG(context.Background())
		return nil, nil, err
	}
	log.Info("connected to PostgreSQL; applying migrations", "database", s.Database())
	if err := s.Migrate(ctx); err != nil {
		var busy *store.BusyError
		if errors.As(err, &busy) {
			err = fmt.Errorf("%w. Wait until it has finished and start again, or stop it", err)
		}
		s.Close()
		_ = stopPG(context.Background())
		return nil, nil, err
	}
	return s, func() {
		s.Close()
		if err := stopPG(context.Background()); err != nil {
			log.Warn("stopping private PostgreSQL failed", "err", err)
		}
	}, nil
}

// checkPostgresURL refuses a URL of another database; pgx also takes the
// key=value form (host=... dbname=...), which has no scheme. The message
// names the setting (name) and the scheme only: the URL may hold a
// password.
func checkPostgresURL(u, name string) error {
	scheme, _, ok := strings.Cut(u, "://")
	if !ok || scheme == "postgres" || scheme == "postgresql" {
		return nil
	}
	return fmt.Errorf("%s must be a PostgreSQL URL, postgres://user:password@host:port/database; got a %s:// URL", name, scheme)
}

// sealer builds the AES-GCM sealer from the server's secret key.
func (c *config) sealer(log *slog.Logger) (*auth.Sealer, error) {
	key, err := c.secretKey(log)
	if err != nil {
		return nil, err
	}
	return auth.NewSealer(key)
}

// secretKey is the configured key, or a key generated once into the data dir.
func (c *config) secretKey(log *slog.Logger) ([]byte, error) {
	raw := strings.TrimSpace(c.SecretKey)
	if raw == "" {
		path := filepath.Join(c.DataDir, "secret.key")
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			key := make([]byte, 32)
			_, _ = rand.Read(key)
			raw = hex.EncodeToString(key)
			if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
				return nil, fmt.Errorf("create data dir: %w", err)
			}
			if err := os.WriteFile(path, []byte(raw+"\n"), 0o600); err != nil {
				return nil, fmt.Errorf("write generated secret key: %w", err)
			}
			log.Warn("FLEETGRAPH_SECRET_KEY is not set; generated one", "path", path)
		case err != nil:
			return nil, fmt.Errorf("read secret key: %w", err)
		default:
			raw = strings.TrimSpace(string(b))
		}
	}
	return decodeKey(raw)
}

func decodeKey(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, errors.New("FLEETGRAPH_SECRET_KEY must be 32 bytes, as 64 hex digits or base64")
}
