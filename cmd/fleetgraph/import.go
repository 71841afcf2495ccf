package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

// importBatch is the default number of documents per transaction.
const importBatch = 5000

// maxLineBytes is the default longest line (one document) taken; a longer
// line is skipped and reported like any other bad line, without being held
// in memory.
const maxLineBytes = 16 << 20

// maxBatchBytes ends a batch early when its documents reach this size, so
// that batches of large documents stay small.
const maxBatchBytes = 32 << 20

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
Clients the documents name are created when missing. Bad lines (invalid JSON,
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
	"measurements": store.KindMeasurement, "client_reports": store.KindClientReport,
	"event_bundles": store.KindEventBundle, "network_requests": store.KindNetworkRequest,
	"user_feedbacks": store.KindUserFeedback, "anomaly_events": store.KindAnomalyEvent,
	"system_status_records": store.KindSystemStatus,
}

// importDocs is "fleetgraph import": it loads an NDJSON file of documents of
// one kind into a data owner, batch by batch. Bad lines are reported on
// stderr by number and skipped, and then it answers an *exitError of
// exitPartial; it fails (exit status 1) when nothing was loaded or on a
// fatal error (database gone, interrupted).
func importDocs(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var cfg config
	var owner, kind string
	var batch, workers int
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, importUsage)
		fs.PrintDefaults()
	}
	cfg.flags(fs)
	fs.StringVar(&owner, "data-owner", "", "short name (slug) of the data owner the documents belong to")
	fs.StringVar(&kind, "kind", "", "document kind: "+strings.Join(store.DocumentKinds, ", "))
	fs.IntVar(&batch, "batch", importBatch, "documents per transaction")
	fs.IntVar(&workers, "workers", 2, "batches written at the same time")
	maxLine := fs.Int("max-line-bytes", maxLineBytes, "longest line (document) taken; longer lines are reported and skipped")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return errUsage
	}
	if a, ok := kindAliases[kind]; ok {
		kind = a
	}
	switch {
	case owner == "":
		return errors.New("--data-owner is required")
	case !validKind(kind):
		return fmt.Errorf("--kind must be one of %s, got %q", strings.Join(store.DocumentKinds, ", "), kind)
	case len(files) != 1:
		return errors.New("give exactly one FILE.ndjson (- for stdin)")
	case batch < 1:
		return errors.New("--batch must be at least 1")
	case workers < 1 || workers > 16:
		return errors.New("--workers must be between 1 and 16")
	case *maxLine < 1:
		return errors.New("--max-line-bytes must be at least 1")
	}

	in, size, closeIn, err := openInput(files[0], stdin)
	if err != nil {
		return err
	}
	defer closeIn()
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

	im := &importer{st: st, ownerID: o.ID, kind: kind, batch: batch, workers: workers, maxLine: *maxLine,
		out: stderr, tty: isTerminal(stderr), size: size}
	start := time.Now()
	err = im.run(ctx, in)
	elapsed := time.Since(start)
	im.clearProgress()
	s := &im.sum
	rate := float64(s.loaded()) / max(elapsed.Seconds(), 1e-9)
	fmt.Fprintf(stdout, "loaded %d %s documents into %s (%d new, %d updated, %d unchanged), skipped %d bad lines, created %d clients, in %s (%.0f documents/s)\n",
		s.loaded(), kind, owner, s.Inserted, s.Updated, s.Unchanged, s.bad, s.ClientsCreated,
		elapsed.Round(time.Millisecond), rate)
	switch {
	case err != nil:
		return fmt.Errorf("import stopped (the %d documents reported loaded are stored; the rest is not): %w", s.loaded(), err)
	case s.loaded() == 0 && s.bad > 0:
		return fmt.Errorf("nothing loaded: all %d documents were bad", s.bad)
	case s.loaded() == 0:
		return fmt.Errorf("nothing loaded: %s holds no documents", files[0])
	}
	// Roll up the days written, so that aggregations over them need not
	// wait for a server's refresher.
	start = time.Now()
	days, err := pg.RefreshRollups(ctx, st.Pool())
	if err != nil {
		return fmt.Errorf("documents loaded, but rolling up their days failed (a running server retries): %w", err)
	}
	fmt.Fprintf(stdout, "rolled up %d days in %s\n", days, time.Since(start).Round(time.Millisecond))
	if s.bad > 0 {
		return &exitError{code: exitPartial, msg: fmt.Sprintf("%d bad lines skipped (reported above by number); the other %d documents are loaded",
			s.bad, s.loaded())}
	}
	return nil
}

// parseInterspersed parses flags that may come after the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func validKind(kind string) bool {
	for _, k := range store.DocumentKinds {
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

// importer streams one file into the store: the reading goroutine parses
// lines into batches, inserting goroutines (one database connection each)
// write them, each batch in its own transaction.
type importer struct {
	st      *store.Store
	ownerID int64
	kind    string
	batch   int
	workers int
	maxLine int       // longest line taken, in bytes
	out     io.Writer // bad lines and progress
	tty     bool
	size    int64 // 0: unknown

	mu  sync.Mutex // guards out and sum
	sum summary

	read      atomic.Int64 // bytes read
	lines     atomic.Int64 // lines read
	progress  bool         // a progress line is on screen (under mu)
	startedAt time.Time
}

type summary struct {
	store.InsertResult
	bad int
}

func (s *summary) loaded() int { return s.Inserted + s.Updated + s.Unchanged }

type lineBatch struct {
	docs  []store.Document
	lines []int
	size  int // bytes of the documents
}

func (im *importer) run(ctx context.Context, in io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	im.startedAt = time.Now()
	queues := make([]chan lineBatch, im.workers)
	errs := make(chan error, im.workers)
	for w := range queues {
		queues[w] = make(chan lineBatch, 1)
		go func() {
			var err error
			for b := range queues[w] {
				if err == nil {
					if err = im.insert(ctx, b); err != nil {
						cancel()
					}
				}
			}
			errs <- err
		}()
	}
	stopProgress := im.showProgress()
	readErr := im.readLines(ctx, in, queues)
	var insertErr error
	for _, q := range queues {
		close(q)
	}
	for range queues {
		if err := <-errs; err != nil && insertErr == nil {
			insertErr = err
		}
	}
	stopProgress()
	if insertErr != nil {
		return insertErr
	}
	if readErr != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return readErr
}

// readLines parses in line by line and sends full batches to the workers.
// A document always goes to the same worker (by its id), so the last copy
// of a document in the file is the one stored.
func (im *importer) readLines(ctx context.Context, in io.Reader, queues []chan lineBatch) error {
	r := bufio.NewReaderSize(in, 1<<20)
	batches := make([]lineBatch, len(queues))
	send := func(w int) error {
		select {
		case queues[w] <- batches[w]:
			batches[w] = lineBatch{}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line, length, err := readLine(r, im.maxLine)
		if length > 0 {
			im.read.Add(length)
			im.lines.Add(1)
		}
		switch {
		case line == nil && length > 0:
			im.reportBad(n, fmt.Errorf("longer than %d bytes (the --max-line-bytes limit): %d bytes", im.maxLine, length))
		case len(bytes.TrimSpace(line)) > 0:
			d, perr := store.ParseDocument(im.kind, line)
			if perr != nil {
				im.reportBad(n, perr)
				break
			}
			w := worker(d.DocID, len(queues))
			b := &batches[w]
			b.docs, b.lines, b.size = append(b.docs, d), append(b.lines, n), b.size+len(d.Doc)
			if len(b.docs) >= im.batch || b.size >= maxBatchBytes {
				if err := send(w); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			for w := range batches {
				if len(batches[w].docs) > 0 {
					if err := send(w); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read line %d: %w", n, err)
		}
	}
}

// readLine reads the next line of r: its text without the line end, and
// its length in bytes with the line end (0 at the end of the input). A
// line longer than max bytes (line end not counted) is read to its end but
// not kept: its text is nil. err is io.EOF when the input ends with (or
// right after) this line.
func readLine(r *bufio.Reader, max int) (line []byte, length int64, err error) {
	keep := true
	for {
		frag, ferr := r.ReadSlice('\n')
		length += int64(len(frag))
		if keep {
			// max+2 leaves room for the line end (\r\n), trimmed below.
			if len(line)+len(frag) > max+2 {
				keep, line = false, nil
			} else {
				line = append(line, frag...)
			}
		}
		if ferr == bufio.ErrBufferFull {
			continue
		}
		if keep {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if len(line) > max {
				line = nil
			}
		}
		return line, length, ferr
	}
}

// worker picks the worker of a document id (FNV-1a).
func worker(docID string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(docID); i++ {
		h = (h ^ uint32(docID[i])) * 16777619
	}
	return int(h % uint32(n))
}

// insert stores a batch; when the database refuses the batch because of
// one document's data, it halves the batch until the culprit is alone.
func (im *importer) insert(ctx context.Context, b lineBatch) error {
	res, err := im.st.InsertDocuments(ctx, im.ownerID, b.docs)
	if err != nil && isDataError(err) {
		if len(b.docs) == 1 {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				err = errors.New("refused by the database: " + pgErr.Message)
			}
			im.reportBad(b.lines[0], err)
			return nil
		}
		h := len(b.docs) / 2
		if err := im.insert(ctx, lineBatch{docs: b.docs[:h], lines: b.lines[:h]}); err != nil {
			return err
		}
		return im.insert(ctx, lineBatch{docs: b.docs[h:], lines: b.lines[h:]})
	}
	if err != nil {
		return err
	}
	for _, i := range res.Refused {
		im.reportBad(b.lines[i], store.ErrForeignClient)
	}
	im.mu.Lock()
	s := &im.sum
	s.Inserted += res.Inserted
	s.Updated += res.Updated
	s.Unchanged += res.Unchanged
	s.ClientsCreated += res.ClientsCreated
	im.mu.Unlock()
	return nil
}

// isDataError: PostgreSQL refused a value (data exception, integrity
// constraint, size limit), not the connection or the statement.
func isDataError(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return errors.Is(err, store.ErrInvalidText)
	}
	c := pgErr.Code
	return strings.HasPrefix(c, "22") || strings.HasPrefix(c, "23") || strings.HasPrefix(c, "54")
}

func (im *importer) reportBad(line int, err error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.sum.bad++
	im.clearProgressLocked()
	fmt.Fprintf(im.out, "line %d: %v\n", line, err)
}

// showProgress redraws a progress line twice a second on a terminal.
func (im *importer) showProgress() (stop func()) {
	if !im.tty {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				im.drawProgress()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (im *importer) drawProgress() {
	lines := im.lines.Load()
	rate := float64(lines) / max(time.Since(im.startedAt).Seconds(), 1e-9)
	msg := fmt.Sprintf("%d lines  %.0f lines/s", lines, rate)
	if im.size > 0 {
		msg += fmt.Sprintf("  %.1f%%", 100*float64(im.read.Load())/float64(im.size))
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	fmt.Fprintf(im.out, "\r\033[K%s  (loaded %d, bad %d)", msg, im.sum.loaded(), im.sum.bad)
	im.progress = true
}

func (im *importer) clearProgress() {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.clearProgressLocked()
}

func (im *importer) clearProgressLocked() {
	if im.progress {
		fmt.Fprint(im.out, "\r\033[K")
		im.progress = false
	}
}
