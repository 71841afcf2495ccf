package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// What a new user meets in the first hour: usage text, bootstrap's keys and
// example, the messages of a wrong key. Issue 17's items, test by test:
// 1 TestUsageTextNeverShowsASecret; 3 TestBootstrapPrintsBothKeysAndTheConfiguredAddress
// (both keys, the 403 naming the key kinds) and TestBannerSaysWhenGraphiQLIsMissingAndTheAddressIsOpen
// (serve's keys); 4 TestBootstrapPrintsBothKeysAndTheConfiguredAddress; 6
// TestStopPrivateStopsALeftServer (store/pglocal; make test runs ./store/testdb/stop);
// 8 TestCommandsHelpSucceedsAndListsOnlyTheirFlags (-h, ignored flags, --version),
// TestBootstrapSaysWhatItExpects (positional arguments, a mysql:// URL), the Bearer 401 in
// TestBootstrapPrintsBothKeysAndTheConfiguredAddress and the open address in the banner test;
// 9 TestGraphiQLInABrowser (server/).

func TestUsageTextNeverShowsASecret(t *testing.T) {
	const dbURL, secret, esURL = "postgres://fleet:hunter2-db@db.example/fleet", "c2VjcmV0LWtleS12YWx1ZQ==", "https://elastic:hunter2-es@es.example"
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("FLEETGRAPH_SECRET_KEY", secret)
	t.Setenv("ELASTICSEARCH_URL", esURL)
	for name, args := range map[string][]string{
		"-h":             {"-h"},
		"mistyped flag":  {"--databse-url", "x"},
		"missing value":  {"--addr"},
		"stray argument": {"acme"},
	} {
		t.Run(name, func(t *testing.T) {
			var cfg config
			var out bytes.Buffer
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(&out)
			cfg.flags(fs)
			err := parseFlags(fs, args)
			if err != nil {
				out.WriteString(err.Error())
			}
			for _, s := range []string{dbURL, "hunter2", secret} {
				if strings.Contains(out.String(), s) {
					t.Errorf("output shows the secret %q:\n%s", s, out.String())
				}
			}
			if name == "-h" && !strings.Contains(out.String(), "from DATABASE_URL, not shown") {
				t.Errorf("-h does not say that DATABASE_URL is set:\n%s", out.String())
			}
			if cfg.DatabaseURL != dbURL || cfg.SecretKey != secret || cfg.ElasticURL != esURL {
				t.Errorf("environment not read: %+v", cfg)
			}
		})
	}
}

func TestCommandsHelpSucceedsAndListsOnlyTheirFlags(t *testing.T) {
	ignored := map[string][]string{
		"migrate":   {"-addr", "-elasticsearch-url", "-search-timeout", "-secret-key"},
		"bootstrap": {"-elasticsearch-url", "-search-timeout"},
		"import":    {"-addr", "-elasticsearch-url", "-search-timeout"},
		"analyze":   {"-addr", "-elasticsearch-url", "-search-timeout"},
	}
	for cmd, flags := range ignored {
		out := captureStderr(t, func() {
			if err := run(context.Background(), []string{cmd, "-h"}); err != nil {
				t.Errorf("%s -h: %v, want success (exit status 0)", cmd, err)
			}
		})
		if !strings.Contains(out, "-data-dir") {
			t.Errorf("%s -h does not list its flags:\n%s", cmd, out)
		}
		for _, f := range flags {
			if strings.Contains(out, f+" ") {
				t.Errorf("%s -h lists %s, which it ignores:\n%s", cmd, f, out)
			}
		}
	}
	for _, arg := range []string{"--version", "-h"} {
		var err error
		out := captureFile(t, &os.Stdout, func() { err = run(context.Background(), []string{arg}) })
		want := map[string]string{"--version": "fleetgraph ", "-h": "fleetgraph --version"}[arg]
		if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "fleetgraph") || !strings.Contains(out, want) {
			t.Errorf("fleetgraph %s: %v, printed %q (want success and %q)", arg, err, out, want)
		}
	}
}

func TestBootstrapSaysWhatItExpects(t *testing.T) {
	err := bootstrap(context.Background(), []string{"acme", "you@example.com"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `"acme"`) || !strings.Contains(err.Error(), "flags only") {
		t.Errorf("positional arguments: %v, want a message naming the argument", err)
	}
	err = migrate(context.Background(), []string{"--database-url", "mysql://root:hunter2@db/x", "--data-dir", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("mysql URL: %v, want a message asking for a postgres:// URL, without the password", err)
	}
}

func TestBootstrapPrintsBothKeysAndTheConfiguredAddress(t *testing.T) {
	e := apitest.Get(t)
	var out bytes.Buffer
	args := []string{"--database-url", e.DatabaseURL, "--data-dir", t.TempDir(), "--addr", "127.0.0.1:9911",
		"--data-owner", "boot_keys", "--email", "owner@keys.example"}
	if err := bootstrap(context.Background(), args, &out); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	text := out.String()
	if !strings.Contains(text, "curl -H 'X-API-KEY: ") || !strings.Contains(text, "http://127.0.0.1:9911"+server.AdminBase) ||
		!strings.Contains(text, "http://127.0.0.1:9911"+server.ExportBase) || strings.Contains(text, "localhost:8080") {
		t.Errorf("the example does not use --addr:\n%s", text)
	}
	out.Reset()
	if err := bootstrap(context.Background(), append(args, "--json"), &out); err != nil {
		t.Fatalf("bootstrap --json: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	admin, _ := got["api_key"].(string)
	export, _ := got["export_api_key"].(string)
	if r := e.Do(t, http.MethodGet, server.ExportBase+"/clients", export, nil); r.Status != http.StatusOK {
		t.Errorf("bootstrapped export key: GET /clients = %d %s", r.Status, r.Raw)
	}
	wantMessage(t, e.Do(t, http.MethodGet, server.ExportBase+"/clients", admin, nil), http.StatusForbidden,
		"a client_admin key cannot be used here: this API takes an export key", "exportApiKeyCreate", "fleetgraph bootstrap")
	wantMessage(t, e.Admin(t, http.MethodGet, "/isps", export, nil), http.StatusForbidden,
		"an export key cannot be used here: this API takes a client_admin key", "clientAdminApiKeyCreate")
	hdr := http.Header{"Authorization": {"Bearer " + admin}}
	r := apitest.Send(t, nil, apitest.Request(t, http.MethodGet, e.URL+server.AdminBase+"/isps", hdr, nil))
	wantMessage(t, r, http.StatusUnauthorized, "X-API-KEY")
}

func TestBaseURLIsWhereThisMachineReachesTheServer(t *testing.T) {
	for addr, want := range map[string]string{
		":8080": "http://localhost:8080", "0.0.0.0:9000": "http://localhost:9000", "[::]:9000": "http://localhost:9000",
		"127.0.0.1:9001": "http://127.0.0.1:9001", "fleet.example:80": "http://fleet.example:80",
	} {
		if got := baseURL(addr); got != want {
			t.Errorf("baseURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestBannerSaysWhenGraphiQLIsMissingAndTheAddressIsOpen(t *testing.T) {
	var out bytes.Buffer
	printBanner(&out, &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, issuedKeys{Admin: "client_admin-a", Export: "export-b"}, true)
	for _, want := range []string{"http://localhost:8080/graphql", "make assets", "all network interfaces", "export-b", "client_admin-a"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, out.String())
		}
	}
}

// wantMessage asserts r is status with a message holding every part.
func wantMessage(t *testing.T, r *apitest.Response, status int, parts ...string) {
	t.Helper()
	msg, _ := r.Obj(t)["message"].(string)
	if r.Status != status {
		t.Errorf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("message %q lacks %q", msg, p)
		}
	}
}

// captureStderr answers what f writes to os.Stderr.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	return captureFile(t, &os.Stderr, f)
}

// captureFile answers what f writes to *file (os.Stdout or os.Stderr).
func captureFile(t *testing.T, file **os.File, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := *file
	*file = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	f()
	*file = saved
	w.Close()
	return <-done
}

// A key bootstrap made on another database (DATABASE_URL set for one
// command only) is a 401 that names the server's database and says what to
// do; it names nothing of the other database, no user and no password. A
// key that is not of fleetgraph's form is the plain 401.
func TestAKeyOfAnotherDatabaseNamesTheServersDatabase(t *testing.T) {
	e := apitest.Get(t)
	db, st, err := testdb.Create(context.Background(), "fleetgraph_test_other", store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Cleanup(db.Drop)
	var out bytes.Buffer
	if err := bootstrap(context.Background(), []string{"--database-url", db.URL, "--data-dir", t.TempDir(),
		"--data-owner", "elsewhere", "--email", "owner@elsewhere.example", "--json"}, &out); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	var keys map[string]any
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	admin, _ := keys["api_key"].(string)
	parts := []string{"unknown API key: this server's database (" + e.Store.Database() + ") holds no such client_admin key",
		"--database-url (DATABASE_URL)"}
	r := e.Admin(t, http.MethodGet, "/isps", admin, nil)
	wantMessage(t, r, http.StatusUnauthorized, parts...)
	g := e.GraphQL(t, admin, `{ me { id } }`, nil)
	if len(g.Errors) == 0 || !strings.Contains(g.Errors[0].Message, parts[0]) {
		t.Errorf("GraphQL: %s, want the message naming the database", g.Raw)
	}
	u, _ := url.Parse(db.URL)
	for _, raw := range [][]byte{r.Raw, g.Raw} {
		if strings.Contains(string(raw), strings.TrimPrefix(u.Path, "/")) || strings.Contains(string(raw), "postgres@") {
			t.Errorf("the 401 names the other database or a user: %s", raw)
		}
	}
	wantMessage(t, e.Admin(t, http.MethodGet, "/isps", "not-a-fleetgraph-key", nil), http.StatusUnauthorized,
		"missing, unknown, expired or revoked API key")
}

// An unknown flag is one line and where the flags are listed, not the 70
// lines of every flag.
func TestAnUnknownFlagIsOneLineAndAPointerToH(t *testing.T) {
	for _, args := range [][]string{{"serve", "--databse-url", "x"}, {"import", "--kindd", "measurement", "f.ndjson"}, {"migrate", "--adr"}} {
		var err error
		out := captureStderr(t, func() { err = run(context.Background(), args) })
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err == nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "flag provided but not defined: ") ||
			lines[1] != "see fleetgraph "+args[0]+" -h for its flags" {
			t.Errorf("%v: %v, printed:\n%s", args, err, out)
		}
	}
}
