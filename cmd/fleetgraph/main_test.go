package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// asMainEnv, set to a JSON array of arguments, makes the test binary run
// fleetgraph's main with them instead of the tests: a real server process
// that a test may kill (TestWebhookDeliveriesSurviveKill).
const asMainEnv = "FLEETGRAPH_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if raw := os.Getenv(asMainEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintln(os.Stderr, asMainEnv, err)
			os.Exit(2)
		}
		os.Args = append([]string{"fleetgraph"}, args...)
		main()
		os.Exit(0)
	}
	apitest.Main(m)
}

func TestBootstrapPrintsJSONWithAWorkingKey(t *testing.T) {
	e := apitest.Get(t)
	var out bytes.Buffer
	args := []string{"--database-url", e.DatabaseURL, "--data-dir", t.TempDir(),
		"--data-owner", "boot_json", "--email", "owner@boot.example", "--json"}
	if err := bootstrap(context.Background(), args, &out); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not one JSON object: %v: %s", err, out.String())
	}
	for _, k := range []string{"data_owner", "user_id", "api_key"} {
		if _, ok := got[k]; !ok {
			t.Errorf("missing %q in %v", k, got)
		}
	}
	if got["data_owner"] != "boot_json" {
		t.Errorf("data_owner = %v", got["data_owner"])
	}
	key, _ := got["api_key"].(string)
	if r := e.Admin(t, http.MethodGet, "/isps", key, nil); r.Status != http.StatusOK {
		t.Errorf("bootstrapped key: GET /isps = %d %s", r.Status, r.Raw)
	}
	// A second run reuses the data owner and the user.
	out.Reset()
	if err := bootstrap(context.Background(), args, &out); err != nil {
		t.Fatalf("second bootstrap: %v", err)
	}
	var again map[string]any
	_ = json.Unmarshal(out.Bytes(), &again)
	if again["user_id"] != got["user_id"] || again["api_key"] == got["api_key"] {
		t.Errorf("second run: user %v (want %v), key should be new", again["user_id"], got["user_id"])
	}
}

func TestBootstrapRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"--data-owner", "Not A Slug", "--email", "a@b.example"},
		{"--data-owner", "acme-eu", "--email", "a@b.example"},
		{"--data-owner", "ok", "--email", "not-an-email"},
		{"--data-owner", "", "--email", "a@b.example"},
	} {
		err := bootstrap(context.Background(), append(args, "--data-dir", t.TempDir()), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: err = %v, want a message naming the flag", args, err)
		}
	}
}

func TestServeAnswersAndShutsDownGracefully(t *testing.T) {
	addr, stop := startServe(t, apitest.Get(t).DatabaseURL)
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz = %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Errorf("serve returned %v after shutdown, want nil", err)
	}
}

// startServe runs serve on the database at dbURL at a free address with the extra
// arguments until stop, which shuts it down and answers serve's error. It
// returns once the server answers /readyz.
func startServe(t *testing.T, dbURL string, extra ...string) (addr string, stop func() error) {
	t.Helper()
	addr = freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	t.Cleanup(func() { os.Stdout = stdout; devnull.Close() })
	args := append([]string{"--database-url", dbURL, "--addr", addr, "--data-dir", t.TempDir()}, extra...)
	go func() { done <- serve(ctx, args) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not shut down")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	// Up to 30 s: a start under the race detector on a busy 2-core
	// machine took over 5 s (migrations, the listener, the job queue).
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			return addr, stop
		}
		select {
		case serr := <-done:
			stopped = true
			t.Fatalf("serve ended before it answered: %v", serr)
		default:
		}
		if i == 600 {
			t.Fatalf("server never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	e := apitest.Get(t)
	for i := 0; i < 2; i++ {
		if err := migrate(context.Background(), []string{"--database-url", e.DatabaseURL, "--data-dir", t.TempDir()}); err != nil {
			t.Fatalf("migrate run %d: %v", i+1, err)
		}
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	if err := run(context.Background(), []string{"frobnicate"}); err != errUsage {
		t.Errorf("err = %v, want usage error", err)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprintf("127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port)
}
