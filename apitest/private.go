package apitest

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/pglocal"
)

// PrivateOpts shape the server of NewPrivateEnv.
type PrivateOpts struct {
	RequestTimeout   time.Duration // the server's request deadline (0: its default)
	StatementTimeout time.Duration // statement_timeout of its pool (0: none)
	// DatabaseWait is the server's bound on an unanswered ping of
	// PostgreSQL (resolvers.Resolver.Liveness; 0: not watched).
	DatabaseWait time.Duration
}

// PrivatePG is a PostgreSQL cluster of one test, which the test may kill,
// freeze (SIGSTOP), thaw and start again under the running server.
type PrivatePG struct {
	dir string // the data dir given to pglocal
}

// NewPrivateEnv starts a private PostgreSQL cluster of the test's own
// (pglocal, from the machine's binaries, in a temporary directory), and the
// real server over a fresh migrated database on it, with the key cache on
// as fleetgraph serve runs it. Everything stops when t ends.
func NewPrivateEnv(t testing.TB, opts PrivateOpts) (*Env, *PrivatePG) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Fatalf("NewPrivateEnv signals the cluster's processes through /proc (Linux)")
	}
	ctx := context.Background()
	p := &PrivatePG{dir: t.TempDir()}
	url := p.Start(t)
	t.Cleanup(func() {
		p.signal(t, syscall.SIGCONT)
		_ = pglocal.StopPrivate(context.Background(), quietLog(), p.dir)
	})
	st, err := store.Open(ctx, url, store.Options{StatementTimeout: opts.StatementTimeout})
	if err != nil {
		t.Fatalf("open store on the private PostgreSQL: %v", err)
	}
	t.Cleanup(st.Close)
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	notices := Listen(st)
	notices.Start()
	t.Cleanup(notices.Close)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, _ := auth.NewSealer(key)
	log := quietLog()
	if os.Getenv("FLEETGRAPH_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	var live *store.Liveness
	if opts.DatabaseWait > 0 {
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(stop)
		live = st.WatchLiveness(ctx, opts.DatabaseWait)
	}
	h, err := newHandler(st, sealer, log, pg.New(st.Pool()), func(r *resolvers.Resolver) {
		r.RequestTimeout, r.Liveness = opts.RequestTimeout, live
	})
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Env{URL: srv.URL, DatabaseURL: url, Store: st, Sealer: sealer, Counter: &store.StatementCounter{},
		adminURL: srv.URL + "/client_admin_api/v1", dropDB: func() {}, srv: srv}, p
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Start starts the cluster (again, after Kill: on the same port while it
// is free, after crash recovery) and returns its database's URL.
func (p *PrivatePG) Start(t testing.TB) string {
	t.Helper()
	url, _, err := pglocal.StartPrivate(context.Background(), quietLog(), p.dir, "fleetgraph_outage")
	if err != nil {
		t.Fatalf("start private PostgreSQL: %v", err)
	}
	return url
}

// Kill kills the postmaster and every backend with SIGKILL (a crash: open
// connections break, new ones are refused) and waits until they are gone.
func (p *PrivatePG) Kill(t testing.TB) {
	t.Helper()
	pids := p.signal(t, syscall.SIGCONT) // a frozen process dies on SIGKILL too; thawed, it is reaped sooner
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && !zombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("PostgreSQL process %d still runs 10 s after SIGKILL", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Freeze stops the postmaster and every backend with SIGSTOP: connections
// stay open and accepted, nothing answers.
func (p *PrivatePG) Freeze(t testing.TB) { t.Helper(); p.signal(t, syscall.SIGSTOP) }

// Thaw resumes a frozen cluster (SIGCONT).
func (p *PrivatePG) Thaw(t testing.TB) { t.Helper(); p.signal(t, syscall.SIGCONT) }

// signal sends sig to the postmaster and its children and returns their
// pids (none when the cluster does not run).
func (p *PrivatePG) signal(t testing.TB, sig syscall.Signal) []int {
	t.Helper()
	pids := p.pids()
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && err != syscall.ESRCH {
			t.Fatalf("signal %v to PostgreSQL process %d: %v", sig, pid, err)
		}
	}
	return pids
}

// pids are the postmaster's (first line of postmaster.pid) and its
// children's (from /proc/<pid>/stat).
func (p *PrivatePG) pids() []int {
	b, err := os.ReadFile(filepath.Join(p.dir, "postgres", "data", "postmaster.pid"))
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(string(b), "\n")
	postmaster, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || syscall.Kill(postmaster, 0) != nil {
		return nil
	}
	pids := []int{postmaster}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procField(pid, 1); ppid == strconv.Itoa(postmaster) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procField is field i after the command of /proc/<pid>/stat (0: state,
// 1: parent pid).
func procField(pid, i int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if i >= len(fields) {
		return "", false
	}
	return fields[i], true
}

// zombie reports whether pid has exited and waits for its parent.
func zombie(pid int) bool {
	state, ok := procField(pid, 0)
	return !ok || state == "Z" || state == "X"
}
