// Package pglocal finds or starts a PostgreSQL server for fleetgraph's
// embedded default, used when no DATABASE_URL was configured.
//
// [Resolve] first looks for a server on 127.0.0.1:5432 that accepts the
// "postgres" user without a password (trust authentication, the usual setup
// of a developer machine or CI container). If there is none, it falls back to
// [StartPrivate], which runs a private cluster from the PostgreSQL binaries
// installed on the machine.
//
// # Private cluster layout
//
// Everything lives under <dataDir>/postgres:
//
//	data/            the cluster (PGDATA), created by initdb on first use
//	data/fleetgraph.conf
//	                 listen address, port and socket directory; included from
//	                 postgresql.conf and rewritten on every start
//	run/             unix socket directory (mode 0700)
//	postgres.log     server log (rotated to postgres.log.1 past 10 MiB)
//	.lock            serialises concurrent starts on the same directory
//
// The server listens only on 127.0.0.1 (plus the unix socket) with trust
// authentication for the "postgres" superuser: any local process that can
// reach the port can use it, which is the intended trade-off for a local
// default. Set DATABASE_URL for anything shared or exposed.
//
// The port is chosen once and kept in data/fleetgraph.conf, so the URL stays
// stable across restarts as long as the port is still free; otherwise a new
// free port is chosen. If a server is already running on the cluster (a live
// postmaster.pid, e.g. left by an earlier process), it is reused and the
// returned stop function leaves it running.
//
// # Binaries
//
// The server binaries (initdb, pg_ctl, postgres) are looked up in this order:
// the directory named by FLEETGRAPH_PG_BINDIR (exclusively, if set); the
// output of `pg_config --bindir`; the highest version under
// /usr/lib/postgresql/*/bin; the directory of initdb on PATH. When an existing
// cluster was created by a different major version, a matching installation
// is preferred and a mismatch is reported as an error.
//
// # Running as root
//
// initdb and postgres refuse to run as root. When the process runs as root,
// the server is run as the "postgres" system account if it exists, otherwise
// as "nobody": <dataDir>/postgres is owned by that account, and every parent
// directory that the account cannot traverse gets the matching search (x)
// permission bit added — never read permission — with a warning in the log.
// For example, a dataDir under /root makes /root mode 0701.
package pglocal

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	// readyTimeout bounds waiting for a started server to accept connections.
	readyTimeout = 30 * time.Second
	// localProbeTimeout bounds the attempt to use a server on localAddr.
	localProbeTimeout = 3 * time.Second
	// maxLogSize is the size past which postgres.log is rotated on start.
	maxLogSize = 10 << 20
	// maxSocketPath is a conservative limit for a unix socket path
	// (sun_path is 108 bytes on Linux, 104 on BSDs/macOS).
	maxSocketPath = 100

	envBinDir  = "FLEETGRAPH_PG_BINDIR"
	superuser  = "postgres"
	confName   = "fleetgraph.conf"
	includeCmd = "include_if_exists = '" + confName + "'"

	installHint = "install the PostgreSQL server (e.g. `apt-get install postgresql`, " +
		"`dnf install postgresql-server`, `apk add postgresql` or `brew install postgresql`), " +
		"set " + envBinDir + " to the directory holding initdb and pg_ctl, " +
		"or set DATABASE_URL to an existing database"
)

// Variables rather than constants so tests can point them elsewhere.
var (
	// localAddr is where Resolve looks for an already running server.
	localAddr = "127.0.0.1:5432"
	// versionedBinGlob matches per-version installations (Debian/Ubuntu layout).
	versionedBinGlob = "/usr/lib/postgresql/*/bin"
)

// errNoBinaries marks failures to find the PostgreSQL server binaries.
var errNoBinaries = errors.New("PostgreSQL server binaries not found")

// Resolve returns a DATABASE_URL to use when none was configured.
//  1. If a PostgreSQL answers at 127.0.0.1:5432 (user postgres, trust auth),
//     it ensures database dbName exists there (CREATE DATABASE if missing) and
//     returns postgres://postgres@127.0.0.1:5432/<dbName>?sslmode=disable.
//  2. Otherwise it starts a private PostgreSQL from the machine's installed
//     binaries under dataDir/postgres (see [StartPrivate]), creates dbName,
//     and returns its URL plus a stop function.
//  3. If neither is possible it returns an error whose message says what to
//     install or to set DATABASE_URL.
//
// stop is never nil when err is nil; for the shared server on 127.0.0.1:5432
// it does nothing.
func Resolve(ctx context.Context, logger *slog.Logger, dataDir, dbName string) (url string, stop func(context.Context) error, err error) {
	logger = orDefault(logger)
	if err := validateDBName(dbName); err != nil {
		return "", nil, err
	}

	localURL, localErr := useLocal(ctx, dbName)
	if localErr == nil {
		logger.Info("using local PostgreSQL", "addr", localAddr, "database", dbName)
		return localURL, func(context.Context) error { return nil }, nil
	}
	if ctx.Err() != nil {
		return "", nil, fmt.Errorf("pglocal: %w", ctx.Err())
	}
	logger.Info("no usable PostgreSQL on "+localAddr+"; starting a private one", "reason", localErr.Error())

	url, stop, err = StartPrivate(ctx, logger, dataDir, dbName)
	if err == nil {
		return url, stop, nil
	}
	hint := "; set DATABASE_URL to an existing database"
	if errors.Is(err, errNoBinaries) {
		hint = "" // the error already says what to install
	}
	return "", nil, fmt.Errorf("pglocal: no PostgreSQL available: nothing usable on %s (%v), and a private server could not be started: %w%s",
		localAddr, localErr, err, hint)
}

// StartPrivate always does step 2 of [Resolve]: it starts (or reuses) a
// private PostgreSQL cluster under dataDir/postgres, listening on 127.0.0.1
// on a free port and on a unix socket inside dataDir, ensures database dbName
// exists, and returns its URL
// (postgres://postgres@127.0.0.1:<port>/<dbName>?sslmode=disable) and a
// function that stops the server with `pg_ctl stop -m fast`. The stop function
// may be called more than once. If the cluster was already running, it is
// reused and stop leaves it running.
func StartPrivate(ctx context.Context, logger *slog.Logger, dataDir, dbName string) (url string, stop func(context.Context) error, err error) {
	logger = orDefault(logger)
	if err := validateDBName(dbName); err != nil {
		return "", nil, err
	}
	c, unlock, err := prepareCluster(logger, dataDir)
	if err != nil {
		return "", nil, err
	}
	defer unlock()

	clusterVersion := readClusterVersion(c.pgdata)
	if c.bin, err = findBinaries(ctx, clusterVersion); err != nil {
		if errors.Is(err, errNoBinaries) {
			return "", nil, fmt.Errorf("pglocal: %w; %s", err, installHint)
		}
		return "", nil, fmt.Errorf("pglocal: %w", err)
	}
	if clusterVersion != "" && c.bin.version != clusterVersion {
		return "", nil, fmt.Errorf("pglocal: cluster %s was created by PostgreSQL %s but the binaries in %s are version %s; install PostgreSQL %s, point %s at its bin directory, or upgrade the cluster with pg_upgrade",
			c.pgdata, clusterVersion, c.bin.dir, c.bin.version, clusterVersion, envBinDir)
	}

	if c.running(ctx) {
		url, stop, err := c.reuse(ctx, dbName)
		if !errors.Is(err, errServerGone) {
			return url, stop, err
		}
		// A postmaster.pid whose process just died (e.g. killed and not yet
		// reaped when we looked): start the cluster afresh.
		logger.Info("PostgreSQL on the data directory exited; starting it again", "data_dir", c.pgdata)
	}
	if clusterVersion == "" {
		if err := c.initdb(ctx); err != nil {
			return "", nil, err
		}
	}
	return c.start(ctx, dbName)
}

// prepareCluster is the cluster under dataDir/postgres, its directory made
// and locked (unlock releases it) and usable by the server account.
func prepareCluster(logger *slog.Logger, dataDir string) (c *cluster, unlock func(), err error) {
	if dataDir == "" {
		return nil, nil, errors.New("pglocal: empty data directory")
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("pglocal: %w", err)
	}
	root := filepath.Join(abs, "postgres")
	c = &cluster{
		logger:  logger,
		root:    root,
		pgdata:  filepath.Join(root, "data"),
		sockDir: socketDir(root),
		logFile: filepath.Join(root, "postgres.log"),
	}
	if c.acct, err = serverAccount(); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, nil, fmt.Errorf("pglocal: %w", err)
	}
	unlock, err = lockFile(filepath.Join(root, ".lock"))
	if err != nil {
		return nil, nil, fmt.Errorf("pglocal: lock %s: %w", root, err)
	}
	if err := c.preparePermissions(); err != nil {
		unlock()
		return nil, nil, err
	}
	return c, unlock, nil
}

// StartStandby starts a streaming standby of the PostgreSQL server at
// primaryURL (a private one of StartPrivate: initdb's defaults let
// 127.0.0.1 connect for replication) under dataDir/postgres: the first time
// `pg_basebackup -R` copies the primary's cluster there, and the standby
// then streams from it, readable (hot standby), on a port of its own. It
// returns the standby's URL for dbName, which must exist on the primary,
// and the function that stops it.
func StartStandby(ctx context.Context, logger *slog.Logger, dataDir, primaryURL, dbName string) (url string, stop func(context.Context) error, err error) {
	logger = orDefault(logger)
	if err := validateDBName(dbName); err != nil {
		return "", nil, err
	}
	primary, err := pgconn.ParseConfig(primaryURL)
	if err != nil {
		return "", nil, fmt.Errorf("pglocal: primary: %w", err)
	}
	c, unlock, err := prepareCluster(logger, dataDir)
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	if c.bin, err = findBinaries(ctx, readClusterVersion(c.pgdata)); err != nil {
		return "", nil, fmt.Errorf("pglocal: %w", err)
	}
	if readClusterVersion(c.pgdata) == "" {
		out, err := c.command(ctx, "pg_basebackup", "-D", c.pgdata, "-h", primary.Host, "-p", strconv.Itoa(int(primary.Port)),
			"-U", primary.User, "-R", "-X", "stream", "-c", "fast", "--no-password",
			// A standby is made again from its primary at will: not
			// flushing every copied file to disk saves seconds.
			"--no-sync").CombinedOutput()
		if err != nil {
			return "", nil, fmt.Errorf("pglocal: pg_basebackup from %s:%d into %s (as %s): %w: %s",
				primary.Host, primary.Port, c.pgdata, c.userName(), err, lastLines(out, 10))
		}
	}
	return c.start(ctx, dbName)
}

// StopPrivate stops the private PostgreSQL cluster under dataDir that
// StartPrivate started (and left running for others to reuse), if one is
// running; a directory without a cluster is not an error.
func StopPrivate(ctx context.Context, logger *slog.Logger, dataDir string) error {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	root := filepath.Join(abs, "postgres")
	c := &cluster{logger: orDefault(logger), root: root, pgdata: filepath.Join(root, "data"),
		sockDir: socketDir(root), logFile: filepath.Join(root, "postgres.log")}
	version := readClusterVersion(c.pgdata)
	if version == "" {
		return nil
	}
	if c.acct, err = serverAccount(); err != nil {
		return err
	}
	if c.bin, err = findBinaries(ctx, version); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	if !c.running(ctx) {
		return nil
	}
	return c.stopFunc()(ctx)
}

// account is the unprivileged account the server runs as when we are root.
type account struct {
	name     string
	uid, gid uint32
}

// binaries is a directory holding initdb, pg_ctl and postgres.
type binaries struct {
	dir     string
	version string // major version as in PG_VERSION: "15", "9.6"
}

type cluster struct {
	logger  *slog.Logger
	acct    *account // nil unless running as root
	bin     binaries
	root    string // <dataDir>/postgres
	pgdata  string
	sockDir string
	logFile string
}

// serverAccount returns the account to run the server as, or nil when the
// current user can run it itself.
func serverAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			errs = append(errs, fmt.Errorf("user %s: unusable uid/gid %s/%s", name, u.Uid, u.Gid))
			continue
		}
		return &account{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("pglocal: running as root, but PostgreSQL refuses to run as root and no unprivileged account was found to run it as (create a \"postgres\" system user): %w", errors.Join(errs...))
}

// preparePermissions makes the cluster directories usable by the server
// account when running as root: it must be able to reach root through every
// parent directory and own everything below it.
func (c *cluster) preparePermissions() error {
	if err := c.prepareSocketDir(); err != nil {
		return err
	}
	if c.acct == nil {
		return nil
	}
	for dir := filepath.Dir(c.root); ; dir = filepath.Dir(dir) {
		if err := c.ensureSearchable(dir); err != nil {
			return err
		}
		if parent := filepath.Dir(dir); parent == dir {
			break
		}
	}
	// Fix ownership of the whole tree only when something is off (first run,
	// or a cluster created by another user), so restarts of big clusters
	// stay cheap.
	for _, p := range []string{c.root, c.sockDir, c.pgdata, c.logFile} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("pglocal: %w", err)
		}
		if uid, gid, ok := fileOwner(fi); ok && (uid != c.acct.uid || gid != c.acct.gid) {
			if err := chownTree(c.root, c.acct); err != nil {
				return fmt.Errorf("pglocal: giving %s to user %s: %w", c.root, c.acct.name, err)
			}
			break
		}
	}
	return nil
}

// ensureSearchable adds the search (x) permission bit that lets the server
// account traverse dir, if it lacks it.
func (c *cluster) ensureSearchable(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	uid, gid, ok := fileOwner(fi)
	if !ok {
		return nil
	}
	var bit fs.FileMode
	switch {
	case uid == c.acct.uid:
		bit = 0o100
	case gid == c.acct.gid:
		bit = 0o010
	default:
		bit = 0o001
	}
	if fi.Mode()&bit != 0 {
		return nil
	}
	mode := fi.Mode() | bit
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("pglocal: user %s cannot traverse %s (mode %v) to reach the cluster and chmod failed: %w; choose a data directory it can reach",
			c.acct.name, dir, fi.Mode().Perm(), err)
	}
	c.logger.Warn("added search permission so the PostgreSQL server account can reach its data directory",
		"dir", dir, "user", c.acct.name, "old_mode", fi.Mode().Perm().String(), "new_mode", mode.Perm().String())
	return nil
}

func chownTree(root string, acct *account) error {
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(acct.uid), int(acct.gid))
	})
}

// chown gives a file we created to the server account.
func (c *cluster) chown(p string) error {
	if c.acct == nil {
		return nil
	}
	return os.Lchown(p, int(c.acct.uid), int(c.acct.gid))
}

// command prepares a server binary invocation: run as the server account
// when root, inside the cluster root, with PG* variables removed so they
// cannot redirect it to another cluster.
func (c *cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin.dir, name), args...)
	cmd.Dir = c.root
	env := make([]string, 0, len(os.Environ())+3)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || k == "LC_ALL" || k == "LANG" || k == "LC_MESSAGES" || (c.acct != nil && k == "HOME") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "LC_ALL=C", "LANG=C")
	if c.acct != nil {
		env = append(env, "HOME="+c.root)
	}
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	configureProc(cmd, c.acct)
	return cmd
}

// running reports whether a postmaster is alive on the cluster.
func (c *cluster) running(ctx context.Context) bool {
	if _, err := os.Stat(filepath.Join(c.pgdata, "postmaster.pid")); err != nil {
		return false
	}
	// Exit status 0: running; 3: not running; 4: no accessible data directory.
	return c.command(ctx, "pg_ctl", "status", "-D", c.pgdata).Run() == nil
}

// reuse adopts a server that is already running on the cluster.
func (c *cluster) reuse(ctx context.Context, dbName string) (string, func(context.Context) error, error) {
	port, err := postmasterPort(c.pgdata)
	if err != nil {
		return "", nil, fmt.Errorf("pglocal: PostgreSQL is running on %s but its port is unknown: %w", c.pgdata, err)
	}
	alive := func() bool { return c.running(ctx) }
	if err := waitReady(ctx, pgURL(port, superuser), readyTimeout, alive); err != nil {
		return "", nil, fmt.Errorf("pglocal: PostgreSQL is running on %s (port %d) but does not accept connections: %w%s",
			c.pgdata, port, err, logTailMsg(c.logFile, -1))
	}
	if err := ensureDatabase(ctx, port, dbName); err != nil {
		return "", nil, fmt.Errorf("pglocal: %w", err)
	}
	c.logger.Info("reusing running private PostgreSQL; it will be left running",
		"data_dir", c.pgdata, "port", port, "database", dbName)
	return pgURL(port, dbName), func(context.Context) error { return nil }, nil
}

func (c *cluster) initdb(ctx context.Context) error {
	began := time.Now()
	out, err := c.command(ctx, "initdb",
		"-D", c.pgdata,
		"--auth=trust",
		"--username="+superuser,
		"--encoding=UTF8",
		"--no-locale",
	).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pglocal: initdb %s (as %s): %w: %s", c.pgdata, c.userName(), err, lastLines(out, 20))
	}
	f, err := os.OpenFile(filepath.Join(c.pgdata, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	_, err = fmt.Fprintf(f, "\n# Listen address, port and socket directory, managed by fleetgraph.\n%s\n", includeCmd)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	c.logger.Info("initialized private PostgreSQL cluster",
		"data_dir", c.pgdata, "version", c.bin.version, "user", c.userName(), "took", time.Since(began).Round(time.Millisecond))
	return nil
}

func (c *cluster) userName() string {
	if c.acct != nil {
		return c.acct.name
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Geteuid())
}

// start launches the server with pg_ctl, waits until it accepts
// connections and creates dbName.
func (c *cluster) start(ctx context.Context, dbName string) (string, func(context.Context) error, error) {
	began := time.Now()
	c.rotateLog()
	port := c.previousPort()
	const attempts = 3
	for attempt := 1; ; attempt++ {
		if port == 0 || !portFree(port) {
			p, err := freePort()
			if err != nil {
				return "", nil, fmt.Errorf("pglocal: choosing a port: %w", err)
			}
			port = p
		}
		if err := c.writeConf(port); err != nil {
			return "", nil, err
		}
		logStart := fileSize(c.logFile)
		out, err := c.command(ctx, "pg_ctl", "start",
			"-D", c.pgdata,
			"-l", c.logFile,
			"-w", "-t", strconv.Itoa(int(readyTimeout/time.Second)),
			"-s",
		).CombinedOutput()
		if err == nil {
			break
		}
		tail := readLogSince(c.logFile, logStart)
		if attempt < attempts && ctx.Err() == nil && strings.Contains(tail, "could not bind") {
			c.logger.Info("port taken while starting PostgreSQL; retrying on another", "port", port)
			port = 0
			continue
		}
		return "", nil, fmt.Errorf("pglocal: pg_ctl start %s (as %s, port %d): %w: %s%s",
			c.pgdata, c.userName(), port, err, lastLines(out, 10), formatTail(c.logFile, tail))
	}

	stop := c.stopFunc()
	// The configuration may be overridden (postgresql.auto.conf); trust the
	// port the postmaster reports.
	if p, err := postmasterPort(c.pgdata); err == nil {
		port = p
	}
	fail := func(err error) (string, func(context.Context) error, error) {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if serr := stop(stopCtx); serr != nil {
			err = errors.Join(err, serr)
		}
		return "", nil, err
	}
	alive := func() bool { return c.running(ctx) }
	if err := waitReady(ctx, pgURL(port, superuser), readyTimeout, alive); err != nil {
		return fail(fmt.Errorf("pglocal: PostgreSQL started on %s (port %d) but does not accept connections: %w%s",
			c.pgdata, port, err, logTailMsg(c.logFile, -1)))
	}
	if err := ensureDatabase(ctx, port, dbName); err != nil {
		return fail(fmt.Errorf("pglocal: %w", err))
	}
	c.logger.Info("started private PostgreSQL",
		"data_dir", c.pgdata, "port", port, "database", dbName, "version", c.bin.version,
		"user", c.userName(), "log", c.logFile, "took", time.Since(began).Round(time.Millisecond))
	return pgURL(port, dbName), stop, nil
}

func (c *cluster) stopFunc() func(context.Context) error {
	var (
		mu      sync.Mutex
		stopped bool
	)
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return nil
		}
		out, err := c.command(ctx, "pg_ctl", "stop", "-D", c.pgdata, "-m", "fast", "-w", "-t", "60", "-s").CombinedOutput()
		if err != nil {
			if ctx.Err() == nil && !c.running(ctx) {
				stopped = true
				c.removeSocketDir()
				return nil
			}
			return fmt.Errorf("pglocal: pg_ctl stop %s: %w: %s", c.pgdata, err, lastLines(out, 10))
		}
		stopped = true
		c.removeSocketDir()
		c.logger.Info("stopped private PostgreSQL", "data_dir", c.pgdata)
		return nil
	}
}

// socketDir is where the cluster under root puts its unix socket: root/run
// when the socket's path fits in a socket address (sun_path: 108 bytes on
// Linux, 104 on macOS), else a directory of its own under /tmp named after
// root, so that a long data directory or TMPDIR (macOS's is 49 characters)
// keeps the socket. Empty (TCP only) when neither fits.
func socketDir(root string) string {
	fits := func(dir string) bool { return len(filepath.Join(dir, ".s.PGSQL.65535")) <= maxSocketPath }
	if dir := filepath.Join(root, "run"); fits(dir) {
		return dir
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join("/tmp", "fleetgraph-pg-"+hex.EncodeToString(sum[:6]))
	if fi, err := os.Stat("/tmp"); err != nil || !fi.IsDir() || !fits(dir) {
		return ""
	}
	return dir
}

// prepareSocketDir makes the socket directory, mode 0700. One outside root
// (under /tmp, which everyone may write) must be this user's or the server
// account's, made by an earlier start: else the start stops rather than
// putting the socket where another user could reach it.
func (c *cluster) prepareSocketDir() error {
	if c.sockDir == "" {
		return nil
	}
	if err := os.MkdirAll(c.sockDir, 0o700); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	if strings.HasPrefix(c.sockDir, c.root+string(filepath.Separator)) {
		return nil
	}
	fi, err := os.Lstat(c.sockDir)
	if err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	uid, _, known := fileOwner(fi)
	mine := !known || uid == uint32(os.Geteuid()) || (c.acct != nil && uid == c.acct.uid)
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !mine {
		return fmt.Errorf("pglocal: the unix socket directory %s is not a directory of this user with mode 0700; remove it "+
			"(it is used because the data directory's own path is too long for a socket)", c.sockDir)
	}
	if c.acct != nil {
		if err := os.Chown(c.sockDir, int(c.acct.uid), int(c.acct.gid)); err != nil {
			return fmt.Errorf("pglocal: %w", err)
		}
	}
	return nil
}

// removeSocketDir removes a stopped server's socket directory when it is
// one of its own under /tmp (socketDir), so that stopped test clusters leave
// nothing there; one inside the data directory stays with it.
func (c *cluster) removeSocketDir() {
	if c.sockDir != "" && !strings.HasPrefix(c.sockDir, c.root+string(filepath.Separator)) {
		_ = os.Remove(c.sockDir) // empty once the server is stopped
	}
}

// writeConf writes the settings fleetgraph manages; postgresql.conf includes
// the file, and the port in it is reused on the next start.
func (c *cluster) writeConf(port int) error {
	sock := c.sockDir
	if len(filepath.Join(sock, ".s.PGSQL."+strconv.Itoa(port))) > maxSocketPath {
		c.logger.Debug("data directory path too long for a unix socket; TCP only", "dir", sock)
		sock = ""
	}
	var b strings.Builder
	b.WriteString("# Managed by fleetgraph (store/pglocal); rewritten on every start.\n")
	b.WriteString("listen_addresses = '127.0.0.1'\n")
	fmt.Fprintf(&b, "port = %d\n", port)
	fmt.Fprintf(&b, "unix_socket_directories = %s\n", confQuote(sock))
	p := filepath.Join(c.pgdata, confName)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	if err := c.chown(p); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	return nil
}

// previousPort returns the port of the last start, or 0.
func (c *cluster) previousPort() int {
	data, err := os.ReadFile(filepath.Join(c.pgdata, confName))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "port" {
			continue
		}
		if p, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && p > 0 && p < 65536 {
			return p
		}
	}
	return 0
}

func (c *cluster) rotateLog() {
	if fileSize(c.logFile) > maxLogSize {
		if err := os.Rename(c.logFile, c.logFile+".1"); err != nil {
			c.logger.Warn("rotating PostgreSQL log", "err", err)
		}
	}
}

// confQuote quotes a postgresql.conf string value.
func confQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `''`)
	return "'" + s + "'"
}

// postmasterPort reads the port from postmaster.pid (fourth line).
func postmasterPort(pgdata string) (int, error) {
	data, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 4 {
		return 0, errors.New("postmaster.pid has no port line")
	}
	p, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil || p <= 0 || p > 65535 {
		return 0, fmt.Errorf("postmaster.pid: bad port %q", lines[3])
	}
	return p, nil
}

func readClusterVersion(pgdata string) string {
	data, err := os.ReadFile(filepath.Join(pgdata, "PG_VERSION"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// findBinaries locates initdb, pg_ctl and postgres. With want set (the
// version of an existing cluster), an installation of that version is
// preferred.
func findBinaries(ctx context.Context, want string) (binaries, error) {
	if dir := os.Getenv(envBinDir); dir != "" {
		if missing := missingBinaries(dir); len(missing) > 0 {
			return binaries{}, fmt.Errorf("%w: %s=%s lacks %s", errNoBinaries, envBinDir, dir, strings.Join(missing, ", "))
		}
		v, err := serverVersion(ctx, dir)
		if err != nil {
			return binaries{}, err
		}
		return binaries{dir: dir, version: v}, nil
	}

	var candidates []string
	if pgConfig, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.CommandContext(ctx, pgConfig, "--bindir").Output(); err == nil {
			candidates = append(candidates, strings.TrimSpace(string(out)))
		}
	}
	candidates = append(candidates, versionedBinDirs()...)
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if resolved, err := filepath.EvalSymlinks(initdb); err == nil {
			initdb = resolved
		}
		candidates = append(candidates, filepath.Dir(initdb))
	}

	var (
		first binaries
		errs  []error
	)
	seen := map[string]bool{}
	for _, dir := range candidates {
		if dir == "" || seen[dir] {
			continue
		}
		seen[dir] = true
		if len(missingBinaries(dir)) > 0 {
			continue
		}
		v, err := serverVersion(ctx, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b := binaries{dir: dir, version: v}
		if want == "" || v == want {
			return b, nil
		}
		if first.dir == "" {
			first = b
		}
	}
	if first.dir != "" {
		return first, nil
	}
	if len(errs) > 0 {
		return binaries{}, errors.Join(errs...)
	}
	return binaries{}, fmt.Errorf("%w (looked for initdb, pg_ctl and postgres via %s, pg_config --bindir, %s and PATH)",
		errNoBinaries, envBinDir, versionedBinGlob)
}

// versionedBinDirs returns the matches of versionedBinGlob, highest version
// first.
func versionedBinDirs() []string {
	dirs, _ := filepath.Glob(versionedBinGlob)
	slices.SortStableFunc(dirs, func(a, b string) int {
		return -compareVersions(filepath.Base(filepath.Dir(a)), filepath.Base(filepath.Dir(b)))
	})
	return dirs
}

// compareVersions compares dotted numeric versions ("9.6" < "15");
// non-numeric parts compare as 0.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func missingBinaries(dir string) []string {
	var missing []string
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name+exe))
		if err != nil || fi.IsDir() || (exe == "" && fi.Mode()&0o111 == 0) {
			missing = append(missing, name)
		}
	}
	return missing
}

// serverVersion runs `postgres --version` (allowed as root) and returns the
// major version in PG_VERSION form.
func serverVersion(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "postgres")
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	v, ok := majorVersion(string(out))
	if !ok {
		return "", fmt.Errorf("%s --version: unrecognised output %q", bin, strings.TrimSpace(string(out)))
	}
	return v, nil
}

// majorVersion extracts the major version from `postgres --version` output
// such as "postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)": "15", or
// "9.6" for 9.6.24.
func majorVersion(s string) (string, bool) {
	fields := strings.Fields(s)
	for i, f := range fields {
		if f != "(PostgreSQL)" || i+1 >= len(fields) {
			continue
		}
		v := fields[i+1]
		end := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if end >= 0 {
			v = v[:end] // "17devel", "16beta1"
		}
		parts := strings.Split(v, ".")
		major, err := strconv.Atoi(parts[0])
		if err != nil {
			return "", false
		}
		if major >= 10 || len(parts) < 2 {
			return strconv.Itoa(major), true
		}
		return parts[0] + "." + parts[1], true
	}
	return "", false
}

// useLocal tries the shared server on localAddr and ensures dbName exists.
func useLocal(ctx context.Context, dbName string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, localProbeTimeout)
	defer cancel()
	host, portStr, err := net.SplitHostPort(localAddr)
	if err != nil {
		return "", err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", err
	}
	if err := ensureDatabaseAt(ctx, host, port, dbName); err != nil {
		return "", err
	}
	return buildURL(host, port, dbName), nil
}

func pgURL(port int, dbName string) string { return buildURL("127.0.0.1", port, dbName) }

func buildURL(host string, port int, dbName string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(superuser),
		Host:     net.JoinHostPort(host, strconv.Itoa(port)),
		Path:     "/" + dbName,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

func ensureDatabase(ctx context.Context, port int, dbName string) error {
	return ensureDatabaseAt(ctx, "127.0.0.1", port, dbName)
}

// ensureDatabaseAt creates dbName on the server unless it exists. It first
// connects to dbName itself, so a server where it exists but we may not
// create databases still works.
func ensureDatabaseAt(ctx context.Context, host string, port int, dbName string) error {
	if err := ping(ctx, buildURL(host, port, dbName)); err == nil {
		return nil
	} else if !isSQLState(err, "3D000") { // invalid_catalog_name: no such database
		return err
	}
	var conn *pgx.Conn
	var err error
	for _, maint := range []string{"postgres", "template1"} {
		conn, err = pgx.Connect(ctx, buildURL(host, port, maint))
		if err == nil || !isSQLState(err, "3D000") {
			break
		}
	}
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", dbName).Scan(&exists); err != nil {
		return fmt.Errorf("checking database %q: %w", dbName, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{dbName}.Sanitize())
	if err != nil && !isSQLState(err, "42P04") { // duplicate_database: created concurrently
		return fmt.Errorf("creating database %q: %w", dbName, err)
	}
	return nil
}

func ping(ctx context.Context, connURL string) error {
	conn, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.Ping(ctx)
}

// errServerGone reports that the postmaster exited while we waited for it.
var errServerGone = errors.New("server process exited")

// waitReady polls until the server accepts a connection. alive, if not nil,
// is consulted after each failed attempt so a dead server fails fast.
func waitReady(ctx context.Context, connURL string, timeout time.Duration, alive func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		attemptCtx, attemptCancel := context.WithTimeout(ctx, 5*time.Second)
		err := ping(attemptCtx, connURL)
		attemptCancel()
		if err == nil {
			return nil
		}
		if alive != nil && ctx.Err() == nil && !alive() {
			return fmt.Errorf("%w: %v", errServerGone, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w", timeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func isSQLState(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readLogSince returns at most the last 4 KiB written to the log after
// offset.
func readLogSince(p string, offset int64) string {
	const maxTail = 4 << 10
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	size := fileSize(p)
	if offset < 0 || offset > size {
		offset = 0
	}
	if size-offset > maxTail {
		offset = size - maxTail
	}
	data, err := io.ReadAll(io.NewSectionReader(f, offset, size-offset))
	if err != nil {
		return ""
	}
	return string(data)
}

func logTailMsg(p string, offset int64) string {
	return formatTail(p, readLogSince(p, offset))
}

func formatTail(p, tail string) string {
	tail = lastLines([]byte(tail), 15)
	if tail == "" {
		return ""
	}
	return fmt.Sprintf("\n--- last lines of %s ---\n%s", p, tail)
}

// lastLines returns the last n non-empty lines of b.
func lastLines(b []byte, n int) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), " \t\r"); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func validateDBName(name string) error {
	switch {
	case name == "":
		return errors.New("pglocal: empty database name")
	case len(name) > 63:
		return fmt.Errorf("pglocal: database name %q longer than 63 bytes", name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("pglocal: database name %q contains NUL", name)
	}
	return nil
}

func orDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
