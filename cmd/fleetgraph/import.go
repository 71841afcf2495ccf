package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/detector"
	"github.com/fleetgraph/fleetgraph/vocab"

	"github.com/fleetgraph/fleetgraph/importer"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

// Exit statuses of "fleetgraph import" (main turns an *exitError into its
// code; every other error exits 1).
const (
	// exitPartial: the file is loaded except for bad lines (each reported
	// on stderr by number), so a script can tell a clean load (0) from one
	// to look at.
	exitPartial = 2
)

// exitError is an error that asks for a process exit status other than 1.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode is the process exit status main uses.
func (e *exitError) ExitCode() int { return e.code }

// importUsage is the usage text of "fleetgraph import".
const importUsage = `Usage: fleetgraph import --data-owner NAME --kind KIND [flags] FILE.ndjson (FILE - reads stdin)

Loads one JSON document a line into the data owner; a document replaces the
stored one of the same kind and id (importing a file again changes nothing).
Clients the documents name are created when missing. The measurements
loaded are then judged by the analyzer in time order, whatever the order of
the lines (docs/analyzer.md). Bad lines (invalid JSON,
missing or invalid id, client_uuid, created_at or type, another data owner's
client, longer than --max-line-bytes) are reported on stderr by line number
and skipped; the rest is loaded. Progress is shown on stderr when it is a
terminal.

Exit status: 0 every document loaded; 2 loaded, but some lines were bad and
skipped; 1 nothing loaded, or an error (bad flags, unknown data owner or kind,
unreadable file, database gone), after which documents of earlier batches may
be stored.

Flags:
`

// kindAliases lets --kind also take the plural the files are named after.
var kindAliases = map[string]string{
	"measurements": vocab.KindMeasurement, "client_reports": vocab.KindClientReport,
	"event_bundles": vocab.KindEventBundle, "network_requests": vocab.KindNetworkRequest,
	"user_feedbacks": vocab.KindUserFeedback, "anomaly_events": vocab.KindAnomalyEvent,
	"system_status_records": vocab.KindSystemStatus,
}

// importDocs is "fleetgraph import": it loads an NDJSON file of documents of
// one kind into a data owner (package importer), then rolls up the days
// written. Bad lines are reported on stderr by number and skipped, and then
// it answers an *exitError of exitPartial; it fails (exit status 1) when
// nothing was loaded or on a fatal error (database gone, interrupted).
func importDocs(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var cfg config
	var owner string
	opts := importer.Options{Out: stderr}
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, importUsage)
		fs.PrintDefaults()
	}
	cfg.storeFlags(fs)
	fs.StringVar(&owner, "data-owner", "", "short name (slug) of the data owner the documents belong to")
	fs.StringVar(&opts.Kind, "kind", "", "document kind: "+strings.Join(vocab.Kinds, ", "))
	fs.IntVar(&opts.Batch, "batch", importer.DefaultBatch, "documents per transaction")
	fs.IntVar(&opts.Workers, "workers", importer.DefaultWorkers, "batches written at the same time")
	fs.IntVar(&opts.MaxLineBytes, "max-line-bytes", importer.DefaultMaxLineBytes, "longest line (document) taken; longer lines are reported and skipped")
	files, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return errUsage
	}
	if err := checkImportFlags(owner, &opts, files); err != nil {
		return err
	}

	in, size, closeIn, err := openInput(files[0], stdin)
	if err != nil {
		return err
	}
	defer closeIn()
	opts.Size, opts.Progress = size, isTerminal(stderr)
	st, closeStore, err := cfg.openStore(ctx, newLogger())
	if err != nil {
		return err
	}
	defer closeStore()
	o, err := st.DataOwnerBySlug(ctx, owner)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("data owner %q not found (create it with: fleetgraph bootstrap --data-owner %s --email ...)", owner, owner)
	}
	if err != nil {
		return err
	}
	opts.OwnerID = o.ID

	start := time.Now()
	s, err := importer.Run(ctx, st, in, opts)
	elapsed := time.Since(start)
	rate := float64(s.Loaded()) / max(elapsed.Seconds(), 1e-9)
	fmt.Fprintf(stdout, "loaded %d %s documents into %s (%d new, %d updated, %d unchanged), skipped %d bad lines, created %d clients, in %s (%.0f documents/s)\n",
		s.Loaded(), opts.Kind, owner, s.Inserted, s.Updated, s.Unchanged, s.Bad, s.ClientsCreated,
		elapsed.Round(time.Millisecond), rate)
	switch {
	case err != nil:
		return fmt.Errorf("import stopped (the %d documents reported loaded are stored; the rest is not): %w", s.Loaded(), err)
	case s.Loaded() == 0 && s.Bad > 0:
		return fmt.Errorf("nothing loaded: all %d documents were bad", s.Bad)
	case s.Loaded() == 0:
		return fmt.Errorf("nothing loaded: %s holds no documents", files[0])
	}
	// What was loaded is read next (rollups, the analyzer) on fresh
	// statistics: store.RefreshDocumentStatistics says why.
	start = time.Now()
	if err := st.RefreshDocumentStatistics(ctx); err != nil {
		return fmt.Errorf("documents loaded, but analysing their table failed: %w", err)
	}
	fmt.Fprintf(stdout, "analysed the documents' statistics in %s\n", time.Since(start).Round(time.Millisecond))
	if err := rollUp(ctx, st, stdout); err != nil {
		return err
	}
	start = time.Now()
	clients, err := detector.Drain(ctx, st, o.ID)
	if err != nil {
		return fmt.Errorf("documents loaded, but the analyzer stopped (a running server goes on): %w", err)
	}
	fmt.Fprintf(stdout, "analyzed the measurements of %d clients in %s\n", clients, time.Since(start).Round(time.Millisecond))
	if s.Bad > 0 {
		return &exitError{code: exitPartial, msg: fmt.Sprintf("%d bad lines skipped (reported above by number); the other %d documents are loaded",
			s.Bad, s.Loaded())}
	}
	return nil
}

// checkImportFlags checks the flags of "fleetgraph import" and turns the
// plural kind names the files are named after into kinds.
func checkImportFlags(owner string, opts *importer.Options, files []string) error {
	if a, ok := kindAliases[opts.Kind]; ok {
		opts.Kind = a
	}
	switch {
	case owner == "":
		return errors.New("--data-owner is required")
	case !validKind(opts.Kind):
		return fmt.Errorf("--kind must be one of %s, got %q", strings.Join(vocab.Kinds, ", "), opts.Kind)
	case len(files) != 1:
		return errors.New("give exactly one FILE.ndjson (- for stdin)")
	case opts.Batch < 1:
		return errors.New("--batch must be at least 1")
	case opts.Workers < 1 || opts.Workers > 16:
		return errors.New("--workers must be between 1 and 16")
	case opts.MaxLineBytes < 1:
		return errors.New("--max-line-bytes must be at least 1")
	}
	return nil
}

// rollUp rolls up the days written, so that aggregations over them need
// not wait for a server's refresher, and refreshes the license pairs.
func rollUp(ctx context.Context, st *store.Store, stdout io.Writer) error {
	start := time.Now()
	days, err := pg.RefreshRollups(ctx, st.Pool())
	if err != nil {
		return fmt.Errorf("documents loaded, but rolling up their days failed (a running server retries): %w", err)
	}
	fmt.Fprintf(stdout, "rolled up %d days in %s\n", days, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	months, err := st.RefreshLicensePairs(ctx)
	if err != nil {
		return fmt.Errorf("documents loaded, but refreshing their license usage failed (a running server retries): %w", err)
	}
	fmt.Fprintf(stdout, "license usage: %d months refreshed in %s\n", months, time.Since(start).Round(time.Millisecond))
	return nil
}

// parseInterspersed parses flags that may come after the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	err := parseBriefly(fs, func() error {
		for {
			if err := fs.Parse(args); err != nil {
				return err
			}
			if fs.NArg() == 0 {
				return nil
			}
			pos = append(pos, fs.Arg(0))
			args = fs.Args()[1:]
		}
	})
	return pos, err
}

func validKind(kind string) bool {
	for _, k := range vocab.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// openInput opens name (- for stdin); size is the file's size, 0 when unknown.
func openInput(name string, stdin io.Reader) (io.Reader, int64, func(), error) {
	if name == "-" {
		return stdin, 0, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("cannot read the input: %w", err)
	}
	var size int64
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, 0, nil, fmt.Errorf("cannot read the input: %s is a directory", name)
	} else if err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, func() { f.Close() }, nil
}

// isTerminal reports whether w is a terminal (a character device other
// than /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
