package pglocal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// testLogger sends slog output to t.Log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// requireServerBinaries skips only when no PostgreSQL server is installed at
// all; every other discovery failure fails the test.
func requireServerBinaries(t *testing.T) {
	t.Helper()
	b, err := findBinaries(context.Background(), "")
	if errors.Is(err, errNoBinaries) {
		t.Skipf("no PostgreSQL server binaries on this machine (%v); install e.g. `apt-get install postgresql` to run this test", err)
	}
	if err != nil {
		t.Fatalf("findBinaries: %v", err)
	}
	t.Logf("using PostgreSQL %s binaries from %s", b.version, b.dir)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startPrivate calls StartPrivate and registers a cleanup that stops the
// server before t.TempDir removes the data.
func startPrivate(t *testing.T, ctx context.Context, dataDir, dbName string) (string, func(context.Context) error, time.Duration) {
	t.Helper()
	began := time.Now()
	u, stop, err := StartPrivate(ctx, testLogger(t), dataDir, dbName)
	took := time.Since(began)
	if err != nil {
		t.Fatalf("StartPrivate: %v", err)
	}
	if stop == nil {
		t.Fatal("StartPrivate returned a nil stop function")
	}
	t.Cleanup(func() {
		if err := stop(context.Background()); err != nil {
			t.Errorf("cleanup stop: %v", err)
		}
	})
	return u, stop, took
}

func connect(t *testing.T, ctx context.Context, connURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, connURL)
	if err != nil {
		t.Fatalf("connect %s: %v", connURL, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func urlPort(t *testing.T, connURL string) int {
	t.Helper()
	u, err := url.Parse(connURL)
	if err != nil {
		t.Fatalf("parse %q: %v", connURL, err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("url %q has no numeric port", connURL)
	}
	return p
}

func checkPrivateURL(t *testing.T, connURL, dbName string) {
	t.Helper()
	if !strings.HasPrefix(connURL, "postgres://postgres@127.0.0.1:") || !strings.HasSuffix(connURL, "/"+dbName+"?sslmode=disable") {
		t.Fatalf("unexpected URL %q", connURL)
	}
	if p := urlPort(t, connURL); p == 5432 || p <= 0 {
		t.Fatalf("private server got port %d", p)
	}
}

func TestStartPrivatePersistsAcrossRestarts(t *testing.T) {
	requireServerBinaries(t)
	ctx := testCtx(t)
	dataDir := t.TempDir()
	const db = "fg_persist"
	pgdata := filepath.Join(dataDir, "postgres", "data")

	url1, stop1, took := startPrivate(t, ctx, dataDir, db)
	t.Logf("fresh cluster (initdb + start + create database): %v", took)
	checkPrivateURL(t, url1, db)
	if _, err := os.Stat(filepath.Join(pgdata, "PG_VERSION")); err != nil {
		t.Fatalf("cluster not under dataDir/postgres/data: %v", err)
	}
	if os.Geteuid() == 0 {
		checkRunsUnprivileged(t, dataDir, pgdata)
	}

	conn := connect(t, ctx, url1)
	var curDB, listen, dataDirSetting, sockDirs string
	if err := conn.QueryRow(ctx, "SELECT current_database(), current_setting('listen_addresses'), current_setting('data_directory'), current_setting('unix_socket_directories')").
		Scan(&curDB, &listen, &dataDirSetting, &sockDirs); err != nil {
		t.Fatal(err)
	}
	if curDB != db || listen != "127.0.0.1" || dataDirSetting != pgdata {
		t.Fatalf("server settings: database=%q listen_addresses=%q data_directory=%q", curDB, listen, dataDirSetting)
	}
	sockDir := socketDir(filepath.Join(dataDir, "postgres"))
	if !strings.HasPrefix(sockDir, dataDir) {
		t.Cleanup(func() { os.RemoveAll(sockDir) })
	}
	if sockDir == "" || sockDirs != sockDir {
		t.Fatalf("unix_socket_directories = %q, want %q", sockDirs, sockDir)
	}
	if _, err := os.Stat(filepath.Join(sockDir, ".s.PGSQL."+strconv.Itoa(urlPort(t, url1)))); err != nil {
		t.Fatalf("unix socket missing: %v", err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE survivor (id int PRIMARY KEY, note text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO survivor VALUES (1, 'still here')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	began := time.Now()
	if err := stop1(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	t.Logf("stop: %v", time.Since(began))
	if err := ping(ctx, url1); err == nil {
		t.Fatal("server still answers after stop")
	}
	if _, err := os.Stat(filepath.Join(pgdata, "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid after stop: %v", err)
	}
	if err := stop1(ctx); err != nil {
		t.Fatalf("second stop should be a no-op: %v", err)
	}

	// Restart: same port (persisted), data intact.
	url2, stop2, took := startPrivate(t, ctx, dataDir, db)
	t.Logf("restart of existing cluster: %v", took)
	if url2 != url1 {
		t.Fatalf("URL changed across restart although the port was free: %q -> %q", url1, url2)
	}
	checkRow(t, ctx, url2)
	if err := stop2(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}

	// The persisted port is taken now: a new one is chosen, data intact.
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(urlPort(t, url1))))
	if err != nil {
		t.Fatalf("occupying the old port: %v", err)
	}
	defer l.Close()
	url3, stop3, _ := startPrivate(t, ctx, dataDir, db)
	checkPrivateURL(t, url3, db)
	if urlPort(t, url3) == urlPort(t, url1) {
		t.Fatalf("started on occupied port %d", urlPort(t, url3))
	}
	checkRow(t, ctx, url3)
	if err := stop3(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}

	// A server that cannot start: the error carries the server log.
	autoConf := filepath.Join(pgdata, "postgresql.auto.conf")
	orig, err := os.ReadFile(autoConf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(autoConf, append(orig, "shared_buffers = 'lots'\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stop4, err := StartPrivate(ctx, testLogger(t), dataDir, db)
	if err == nil {
		stop4(ctx)
		t.Fatal("started with an invalid shared_buffers")
	}
	t.Logf("expected start failure: %v", err)
	for _, want := range []string{"pg_ctl start", "postgres.log", `invalid value for parameter "shared_buffers"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("start error lacks %q", want)
		}
	}
	if err := os.WriteFile(autoConf, orig, 0o600); err != nil {
		t.Fatal(err)
	}
}

func checkRow(t *testing.T, ctx context.Context, connURL string) {
	t.Helper()
	conn := connect(t, ctx, connURL)
	var note string
	if err := conn.QueryRow(ctx, "SELECT note FROM survivor WHERE id = 1").Scan(&note); err != nil {
		t.Fatalf("row did not survive the restart: %v", err)
	}
	if note != "still here" {
		t.Fatalf("note = %q", note)
	}
	conn.Close(ctx)
}

// checkRunsUnprivileged verifies the root handling: the cluster belongs to
// an unprivileged account and the (0700, root-owned) temp directories above
// it were made traversable.
func checkRunsUnprivileged(t *testing.T, dataDir, pgdata string) {
	t.Helper()
	acct, err := serverAccount()
	if err != nil || acct == nil {
		t.Fatalf("serverAccount as root: %v, %v", acct, err)
	}
	fi, err := os.Stat(pgdata)
	if err != nil {
		t.Fatal(err)
	}
	uid, _, ok := fileOwner(fi)
	if !ok || uid == 0 || uid != acct.uid {
		t.Fatalf("data directory owned by uid %d, want %s (%d)", uid, acct.name, acct.uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Fatalf("data directory mode %v, want no group/other access", perm)
	}
	// postmaster.pid's first line is the postmaster pid; it must not run as root.
	data, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _, _ := strings.Cut(string(data), "\n")
	status, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(pid), "status"))
	if err == nil {
		for line := range strings.Lines(string(status)) {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) == 0 || f[0] != strconv.Itoa(int(acct.uid)) {
					t.Fatalf("postmaster %s runs as uid %v, want %d", pid, f, acct.uid)
				}
			}
		}
	} else if runtime.GOOS == "linux" {
		t.Fatalf("reading postmaster status: %v", err)
	}
	// t.TempDir creates 0700 directories owned by root; the account needs
	// search permission on each.
	for dir := dataDir; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o111 == 0 {
			t.Fatalf("%s (mode %v) not traversable", dir, fi.Mode().Perm())
		}
	}
}

func TestStartPrivateReusesRunningServer(t *testing.T) {
	requireServerBinaries(t)
	ctx := testCtx(t)
	dataDir := t.TempDir()

	url1, stop1, _ := startPrivate(t, ctx, dataDir, "fg_first")
	// A second caller on the same directory adopts the running server.
	began := time.Now()
	url2, stop2, _ := startPrivate(t, ctx, dataDir, "fg_second")
	t.Logf("reuse of a running cluster: %v", time.Since(began))
	if urlPort(t, url2) != urlPort(t, url1) {
		t.Fatalf("reuse started another server: %q vs %q", url1, url2)
	}
	checkPrivateURL(t, url2, "fg_second")
	conn := connect(t, ctx, url2)
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil || db != "fg_second" {
		t.Fatalf("current_database = %q, %v", db, err)
	}
	conn.Close(ctx)

	// The adopter's stop leaves the server to its owner.
	if err := stop2(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ping(ctx, url1); err != nil {
		t.Fatalf("server went away after the adopter's stop: %v", err)
	}
	if err := stop1(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ping(ctx, url1); err == nil {
		t.Fatal("server still answers after the owner's stop")
	}
}

func TestStartPrivateConcurrentCallersShareOneServer(t *testing.T) {
	requireServerBinaries(t)
	ctx := testCtx(t)
	dataDir := t.TempDir()

	type result struct {
		url  string
		stop func(context.Context) error
		err  error
	}
	results := make(chan result, 2)
	for _, db := range []string{"fg_a", "fg_b"} {
		go func() {
			u, stop, err := StartPrivate(ctx, testLogger(t), dataDir, db)
			results <- result{u, stop, err}
		}()
	}
	var got []result
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Errorf("StartPrivate: %v", r.err)
			continue
		}
		t.Cleanup(func() { r.stop(context.Background()) })
		got = append(got, r)
	}
	if t.Failed() {
		return
	}
	if urlPort(t, got[0].url) != urlPort(t, got[1].url) {
		t.Fatalf("two servers for one data directory: %q, %q", got[0].url, got[1].url)
	}
	for _, r := range got {
		if err := ping(ctx, r.url); err != nil {
			t.Errorf("%s: %v", r.url, err)
		}
	}
	for _, r := range got {
		if err := r.stop(ctx); err != nil {
			t.Error(err)
		}
	}
	if err := ping(ctx, got[0].url); err == nil {
		t.Fatal("server still answers after both stops")
	}
}

func TestStartPrivateRecoversAfterCrash(t *testing.T) {
	requireServerBinaries(t)
	ctx := testCtx(t)
	dataDir := t.TempDir()
	const db = "fg_crash"
	url1, _, _ := startPrivate(t, ctx, dataDir, db)
	conn := connect(t, ctx, url1)
	if _, err := conn.Exec(ctx, "CREATE TABLE survivor (id int PRIMARY KEY, note text); INSERT INTO survivor VALUES (1, 'still here')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	// Kill the postmaster outright; postmaster.pid stays behind.
	pidFile := filepath.Join(dataDir, "postgres", "data", "postmaster.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		t.Fatal(err)
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatalf("kill postmaster %d: %v", pid, err)
	}
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("postmaster.pid should survive a SIGKILL: %v", err)
	}

	began := time.Now()
	url2, stop2, _ := startPrivate(t, ctx, dataDir, db)
	t.Logf("start after crash: %v", time.Since(began))
	if url2 != url1 {
		t.Fatalf("URL changed after crash: %q -> %q", url1, url2)
	}
	checkRow(t, ctx, url2)
	// This call started the server, so its stop must really stop it.
	if err := stop2(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ping(ctx, url2); err == nil {
		t.Fatal("server still answers after stop")
	}
}

// localAnswers reports whether the shared server Resolve looks for is there.
func localAnswers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return ping(ctx, "postgres://postgres@"+localAddr+"/postgres?sslmode=disable")
}

func TestResolveUsesLocalServer(t *testing.T) {
	ctx := testCtx(t)
	dataDir := t.TempDir()
	db := fmt.Sprintf("fg_pglocal_test_%d", time.Now().UnixNano())

	if err := localAnswers(ctx); err != nil {
		// No shared server here: Resolve must fall back to a private one.
		t.Logf("nothing usable on %s (%v); checking the fallback instead", localAddr, err)
		requireServerBinaries(t)
		u, stop, err := Resolve(ctx, testLogger(t), dataDir, db)
		if err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		defer stop(context.Background())
		checkPrivateURL(t, u, db)
		return
	}

	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), "postgres://postgres@"+localAddr+"/postgres?sslmode=disable")
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("cleanup: drop %s: %v", db, err)
		}
	})

	u, stop, err := Resolve(ctx, testLogger(t), dataDir, db)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	want := "postgres://postgres@127.0.0.1:5432/" + db + "?sslmode=disable"
	if u != want {
		t.Fatalf("Resolve URL = %q, want %q", u, want)
	}
	if stop == nil {
		t.Fatal("nil stop")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres")); !os.IsNotExist(err) {
		t.Fatalf("Resolve touched dataDir although a local server answered: %v", err)
	}
	conn := connect(t, ctx, u)
	var cur string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&cur); err != nil || cur != db {
		t.Fatalf("current_database = %q, %v", cur, err)
	}
	conn.Close(ctx)
	if err := stop(ctx); err != nil {
		t.Fatalf("stop of the shared server's no-op: %v", err)
	}
	if err := localAnswers(ctx); err != nil {
		t.Fatalf("shared server gone after stop: %v", err)
	}

	// Second call: the database exists already.
	u2, _, err := Resolve(ctx, testLogger(t), dataDir, db)
	if err != nil || u2 != want {
		t.Fatalf("second Resolve = %q, %v", u2, err)
	}
}

// unusedLocalAddr points Resolve at a port where nothing listens.
func unusedLocalAddr(t *testing.T) {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	old := localAddr
	localAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	t.Cleanup(func() { localAddr = old })
}

func TestResolveFallsBackToPrivate(t *testing.T) {
	requireServerBinaries(t)
	ctx := testCtx(t)
	unusedLocalAddr(t)
	dataDir := t.TempDir()
	const db = "fg fallback" // needs quoting as an identifier and escaping in the URL

	u, stop, err := Resolve(ctx, testLogger(t), dataDir, db)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	t.Cleanup(func() { stop(context.Background()) })
	if !strings.HasSuffix(u, "/fg%20fallback?sslmode=disable") {
		t.Fatalf("URL %q does not escape the database name", u)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres", "data", "PG_VERSION")); err != nil {
		t.Fatalf("no private cluster: %v", err)
	}
	conn := connect(t, ctx, u)
	var cur string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&cur); err != nil || cur != db {
		t.Fatalf("current_database = %q, %v", cur, err)
	}
	conn.Close(ctx)
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ping(ctx, u); err == nil {
		t.Fatal("private server still answers after stop")
	}
}

func TestResolveErrorSaysWhatToDo(t *testing.T) {
	ctx := testCtx(t)
	unusedLocalAddr(t)
	empty := t.TempDir()
	t.Setenv(envBinDir, empty) // binaries "missing"

	dataDir := t.TempDir()
	u, stop, err := Resolve(ctx, testLogger(t), dataDir, "fg")
	if err == nil {
		stop(ctx)
		t.Fatalf("Resolve succeeded without binaries: %q", u)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{"apt-get install postgresql", "DATABASE_URL", envBinDir + "=" + empty, localAddr} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if u != "" || stop != nil {
		t.Errorf("Resolve returned url=%q stop=%v with an error", u, stop != nil)
	}
	if !errors.Is(err, errNoBinaries) {
		t.Errorf("error does not wrap errNoBinaries: %v", err)
	}
}

func TestStartPrivateValidatesInput(t *testing.T) {
	ctx := testCtx(t)
	for _, tc := range []struct{ dir, db string }{
		{t.TempDir(), ""},
		{t.TempDir(), strings.Repeat("x", 64)},
		{"", "fg"},
	} {
		if _, _, err := StartPrivate(ctx, nil, tc.dir, tc.db); err == nil {
			t.Errorf("StartPrivate(%q, %q) succeeded", tc.dir, tc.db)
		}
	}
}

// fakeInstall creates a bin directory with scripts standing in for the
// server binaries; postgres --version reports version.
func fakeInstall(t *testing.T, dir, version string, names ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		script := "#!/bin/sh\nexit 0\n"
		if name == "postgres" {
			script = "#!/bin/sh\necho 'postgres (PostgreSQL) " + version + "'\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindBinaries(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses shell scripts as fake binaries")
	}
	ctx := testCtx(t)
	base := t.TempDir()
	all := []string{"initdb", "pg_ctl", "postgres"}
	v96 := fakeInstall(t, filepath.Join(base, "lib", "9.6", "bin"), "9.6.24", all...)
	v15 := fakeInstall(t, filepath.Join(base, "lib", "15", "bin"), "15.20 (Debian 15.20-0+deb12u1)", all...)
	fakeInstall(t, filepath.Join(base, "lib", "16", "bin"), "16.4", "pg_ctl", "postgres") // client-only: no initdb

	old := versionedBinGlob
	versionedBinGlob = filepath.Join(base, "lib", "*", "bin")
	t.Cleanup(func() { versionedBinGlob = old })
	pathDir := t.TempDir()
	t.Setenv("PATH", pathDir)
	t.Setenv(envBinDir, "")

	check := func(want string, wantDir, wantVersion string) {
		t.Helper()
		b, err := findBinaries(ctx, want)
		if err != nil {
			t.Fatalf("findBinaries(%q): %v", want, err)
		}
		if b.dir != wantDir || b.version != wantVersion {
			t.Fatalf("findBinaries(%q) = %+v, want %s (%s)", want, b, wantDir, wantVersion)
		}
	}
	// Highest complete version, compared numerically (15 > 9.6).
	check("", v15, "15")
	// An existing 9.6 cluster prefers the 9.6 installation.
	check("9.6", v96, "9.6")
	// No matching version: the best one is returned (StartPrivate reports the mismatch).
	check("14", v15, "15")

	// pg_config on PATH wins over the versioned directories.
	pgConfig := "#!/bin/sh\necho '" + v96 + "'\n"
	if err := os.WriteFile(filepath.Join(pathDir, "pg_config"), []byte(pgConfig), 0o755); err != nil {
		t.Fatal(err)
	}
	check("", v96, "9.6")

	// The override is exclusive.
	t.Setenv(envBinDir, v15)
	check("9.6", v15, "15")
	t.Setenv(envBinDir, filepath.Join(base, "lib", "16", "bin"))
	if _, err := findBinaries(ctx, ""); !errors.Is(err, errNoBinaries) || !strings.Contains(err.Error(), "initdb") {
		t.Fatalf("override without initdb: %v", err)
	}
	t.Setenv(envBinDir, "")

	// initdb on PATH (through a symlink) as the last resort.
	os.Remove(filepath.Join(pathDir, "pg_config"))
	versionedBinGlob = filepath.Join(base, "none", "*", "bin")
	if err := os.Symlink(filepath.Join(v15, "initdb"), filepath.Join(pathDir, "initdb")); err != nil {
		t.Fatal(err)
	}
	check("", v15, "15")

	// Nothing at all.
	os.Remove(filepath.Join(pathDir, "initdb"))
	if _, err := findBinaries(ctx, ""); !errors.Is(err, errNoBinaries) {
		t.Fatalf("findBinaries with nothing installed: %v", err)
	}
}

func TestStartPrivateRejectsVersionMismatch(t *testing.T) {
	requireServerBinaries(t)
	ctx := testCtx(t)
	dataDir := t.TempDir()
	pgdata := filepath.Join(dataDir, "postgres", "data")
	if err := os.MkdirAll(pgdata, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pgdata, "PG_VERSION"), []byte("9.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stop, err := StartPrivate(ctx, testLogger(t), dataDir, "fg")
	if err == nil {
		stop(ctx)
		t.Fatal("started a 9.1 cluster with other binaries")
	}
	if !strings.Contains(err.Error(), "created by PostgreSQL 9.1") {
		t.Fatalf("unclear error: %v", err)
	}
}

func TestMajorVersion(t *testing.T) {
	for in, want := range map[string]string{
		"postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n": "15",
		"postgres (PostgreSQL) 9.6.24":                           "9.6",
		"postgres (PostgreSQL) 17devel":                          "17",
		"postgres (PostgreSQL) 16beta1":                          "16",
		"postgres (PostgreSQL) 10.23":                            "10",
		"garbage":                                                "",
	} {
		got, ok := majorVersion(in)
		if got != want || ok != (want != "") {
			t.Errorf("majorVersion(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if compareVersions("9.6", "15") >= 0 || compareVersions("15", "15") != 0 || compareVersions("16", "9.6") <= 0 {
		t.Error("compareVersions is not numeric")
	}
}

func TestConfQuote(t *testing.T) {
	if got := confQuote(`/a b/it's\x`); got != `'/a b/it''s\\x'` {
		t.Fatalf("confQuote = %s", got)
	}
}

// TestStopPrivateStopsALeftServer: StopPrivate stops the cluster another
// caller left running (as the tests' shared server is), and a directory
// without a cluster is not an error.
func TestStopPrivateStopsALeftServer(t *testing.T) {
	requireServerBinaries(t)
	ctx := testCtx(t)
	dataDir := t.TempDir()
	url, _, _ := startPrivate(t, ctx, dataDir, "fg_left")
	if err := StopPrivate(ctx, testLogger(t), dataDir); err != nil {
		t.Fatal(err)
	}
	if err := ping(ctx, url); err == nil {
		t.Fatal("server still answers after StopPrivate")
	}
	if err := StopPrivate(ctx, testLogger(t), t.TempDir()); err != nil {
		t.Fatalf("StopPrivate on an empty directory: %v", err)
	}
}

func TestSocketDirFitsWhateverTheDataDirectory(t *testing.T) {
	short := "/srv/fg/postgres"
	if got := socketDir(short); got != filepath.Join(short, "run") {
		t.Errorf("socketDir(%q) = %q, want its run/", short, got)
	}
	long := "/" + strings.Repeat("d", 120) + "/postgres"
	got := socketDir(long)
	if !strings.HasPrefix(got, "/tmp/fleetgraph-pg-") || len(filepath.Join(got, ".s.PGSQL.65535")) > maxSocketPath {
		t.Errorf("socketDir(a %d-character root) = %q, want a short directory under /tmp", len(long), got)
	}
	if again := socketDir(long); again != got || socketDir(long+"2") == got {
		t.Errorf("socketDir is not one directory per root: %q, %q", got, again)
	}
}
