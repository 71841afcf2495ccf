package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// A start that cannot succeed ends within seconds, in a process of its own,
// with a message saying what is taken and what to do: never a server that
// waits silently (issue 30, item 1).

// failedStart runs `fleetgraph serve` with args on database dbURL in a
// process of its own (this test binary run as main) and answers its output
// once it has exited, failing the test when it runs longer than within or
// exits with status 0.
func failedStart(t *testing.T, dbURL string, within time.Duration, args ...string) string {
	t.Helper()
	all, _ := json.Marshal(append([]string{"serve", "--database-url", dbURL, "--data-dir", t.TempDir()}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), within+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), asMainEnv+"="+string(all))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("serve %v: %v after %s, want exit status 1; it printed:\n%s", args, err, took, out.String())
	}
	if took > within {
		t.Errorf("serve %v took %s to give up, want at most %s; it printed:\n%s", args, took, within, out.String())
	}
	return out.String()
}

func wantSaid(t *testing.T, out string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(out, p) {
			t.Errorf("the output lacks %q:\n%s", p, out)
		}
	}
}

func TestServeOnATakenAddressSaysSoAndExits(t *testing.T) {
	t.Parallel()
	e := apitest.Get(t)
	first := startServeProcess(t, e, t.TempDir())
	out := failedStart(t, e.DatabaseURL, 5*time.Second, "--addr", first.addr)
	wantSaid(t, out, "address "+first.addr+" is taken", "--addr", "FLEETGRAPH_ADDR")
	if strings.Count(strings.TrimSpace(out), "\n") > 1 {
		t.Errorf("a taken address printed more than its message:\n%s", out)
	}
}

// A start that fails after the background loops (license pairs, mail,
// webhooks, the search indexer) have started stops them and exits.
func TestServeStopsItsBackgroundLoopsWhenTheStartFails(t *testing.T) {
	t.Parallel()
	e := apitest.Get(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, flag := range []string{"--metrics-addr", "--pprof-addr"} {
		out := failedStart(t, e.DatabaseURL, 20*time.Second, "--addr", freeAddr(t), flag, taken.Addr().String())
		wantSaid(t, out, "listen on "+taken.Addr().String()+" ("+flag+")", "address already in use")
	}
}

// Another process applying migrations to the database, or loading the
// demo into it, makes serve wait store.StartWait at most, then say which
// process it is and what to do. Each case has a database of its own: the
// step's lock is the database's.
func TestServeSaysWhenAnotherProcessHoldsTheDatabase(t *testing.T) {
	t.Parallel()
	for step, want := range map[store.StartStep][]string{
		store.StepMigrate: {"another process has been applying migrations to database", "Wait until it has finished"},
		store.StepDemo:    {"another process has been loading the demo data owner into database", "start without --demo"},
	} {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			db, st, err := testdb.Create(context.Background(), "fleetgraph_test_busy", store.Options{MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			t.Cleanup(db.Drop)
			// The other process: a store of its own holding the step.
			u, err := url.Parse(db.URL)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("application_name", "the_other_process")
			u.RawQuery = q.Encode()
			other, err := store.Open(context.Background(), u.String(), store.Options{MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			holding, release := make(chan struct{}), make(chan struct{})
			go func() {
				_ = other.Alone(context.Background(), step, time.Minute, func() error { close(holding); <-release; return nil })
			}()
			<-holding
			defer close(release)
			out := failedStart(t, db.URL, store.StartWait+15*time.Second, "--addr", freeAddr(t), "--demo")
			wantSaid(t, out, append(want, "the_other_process", `"`+strings.TrimPrefix(u.Path, "/")+`" on `, "PostgreSQL backend pid")...)
		})
	}
}

// More analyzer workers than half the pool is refused before anything
// starts, naming both settings.
func TestServeRefusesMoreAnalyzerWorkersThanHalfThePool(t *testing.T) {
	t.Parallel()
	e := apitest.Get(t)
	out := failedStart(t, e.DatabaseURL, 5*time.Second, "--addr", freeAddr(t), "--db-max-conns", "6", "--analyzer-workers", "4")
	wantSaid(t, out, "--analyzer-workers (FLEETGRAPH_ANALYZER_WORKERS) \"4\" must be a whole number from 1 to 3", "--db-max-conns")
}
