// Package importer streams NDJSON documents of one kind into a data owner:
// a reading goroutine parses the lines into batches, writer goroutines (one
// database connection each) store each batch in its own transaction. Bad
// lines are reported by number and skipped, and a progress line can be
// drawn on a terminal. The command around it, "fleetgraph import" (flags,
// summary, exit status), lives in cmd/fleetgraph.
package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/store"
)

// Defaults of the Options left zero.
const (
	// DefaultBatch is the number of documents per transaction.
	DefaultBatch = 5000
	// DefaultWorkers is the number of batches written at the same time.
	DefaultWorkers = 2
	// DefaultMaxLineBytes is the longest line (one document) taken; a
	// longer line is skipped and reported like any other bad line, without
	// being held in memory. Measurements are a few KiB; a larger limit is
	// a choice (--max-line-bytes), as every search and export of such
	// documents spends more of its answer budget (package budget).
	DefaultMaxLineBytes = 1 << 20
)

// maxBatchBytes ends a batch early when its documents reach this size, so
// that batches of large documents stay small.
const maxBatchBytes = 32 << 20

// Options says where the documents go and how they are loaded.
type Options struct {
	OwnerID      int64
	Kind         string // a store document kind (vocab.Kinds)
	Batch        int    // documents per transaction (0: DefaultBatch)
	Workers      int    // batches written at the same time (0: DefaultWorkers)
	MaxLineBytes int    // longest line taken (0: DefaultMaxLineBytes)
	// Out receives the bad lines ("line N: reason") and the progress line;
	// nil discards them.
	Out io.Writer
	// Progress redraws a progress line on Out twice a second (for a
	// terminal); it is cleared before each bad line and at the end.
	Progress bool
	// Size is the input's size in bytes, for the progress percentage (0:
	// unknown).
	Size int64
}

// Summary counts what an import did.
type Summary struct {
	store.InsertResult
	Bad int // lines reported and skipped
}

// importer is one run: the options and what the goroutines share.
type importer struct {
	st *store.Store
	Options

	mu       sync.Mutex // guards Out, sum, progress, groups, order and hint
	sum      Summary
	progress bool // a progress line is on screen
	// groups are the bad lines by reason, order the reasons as first met
	// (reportBad).
	groups map[string]*badGroup
	order  []string
	hint   string // what the input's shape suggests (noteShape)

	// analyzedAt is the number of documents stored when the statistics
	// were last refreshed (keepStatistics); analyzing is set while a
	// refresh runs.
	analyzedAt int
	analyzing  bool

	read      atomic.Int64 // bytes read
	lines     atomic.Int64 // lines read
	startedAt time.Time
}

// lineBatch is a batch of parsed documents and the line number of each.
type lineBatch struct {
	docs  []store.Document
	lines []int
	size  int // bytes of the documents
}

// Run loads the NDJSON documents of in into the store. Each document
// replaces the stored one of the same kind and id; when the input repeats a
// document, its last copy is the one stored. The summary counts what was
// stored even when Run fails (the database gone, ctx done): the documents of
// the batches written before are kept.
//
// The measurements stored are judged by the analyzer once the import ends
// (store.InsertOptions.HoldAnalysis), in time order whatever the order of
// the lines; also when it fails, for what it stored.
func Run(ctx context.Context, st *store.Store, in io.Reader, opts Options) (Summary, error) {
	im := &importer{st: st, Options: withDefaults(opts)}
	err := im.run(ctx, in)
	im.reportGroups()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if rerr := st.ReleaseAnalysis(rctx, im.OwnerID); rerr != nil && err == nil {
		err = fmt.Errorf("queue the analysis of the import: %w", rerr)
	}
	return im.sum, err
}

// releaseTimeout bounds the release of an import's analysis (else the
// analyzer's sweep releases it: detector.heldFor).
// (one statement over every row the import held: a million rows take
// tens of seconds on a busy machine).
const releaseTimeout = 10 * time.Minute

func withDefaults(o Options) Options {
	if o.Batch == 0 {
		o.Batch = DefaultBatch
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return o
}

// run starts the writers, reads in into their queues and waits for them.
func (im *importer) run(ctx context.Context, in io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	im.startedAt = time.Now()
	queues := make([]chan lineBatch, im.Workers)
	errs := make(chan error, im.Workers)
	for w := range queues {
		queues[w] = make(chan lineBatch, 1)
		go func() { errs <- im.write(ctx, cancel, queues[w]) }()
	}
	stopProgress := im.showProgress()
	readErr := im.readLines(ctx, in, queues)
	for _, q := range queues {
		close(q)
	}
	var writeErr error
	for range queues {
		if err := <-errs; err != nil && writeErr == nil {
			writeErr = err
		}
	}
	stopProgress()
	if writeErr != nil {
		return writeErr
	}
	if readErr != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return readErr
}

// write stores the batches of its queue until the queue closes; after its
// first error it cancels the import and only drains the queue.
func (im *importer) write(ctx context.Context, cancel func(), queue <-chan lineBatch) error {
	var err error
	for b := range queue {
		if err == nil {
			if err = im.insert(ctx, b); err != nil {
				cancel()
			}
		}
	}
	return err
}

// insert stores a batch (Store), reporting its bad documents by line.
func (im *importer) insert(ctx context.Context, b lineBatch) error {
	res, err := StoreWith(ctx, im.st, im.OwnerID, b.docs, store.InsertOptions{HoldAnalysis: true},
		func(i int, err error) { im.reportBad(b.lines[i], err) })
	if err != nil {
		return err
	}
	im.mu.Lock()
	s := &im.sum
	s.Inserted += res.Inserted
	s.Updated += res.Updated
	s.Unchanged += res.Unchanged
	s.ClientsCreated += res.ClientsCreated
	stored := s.Inserted + s.Updated
	refresh := !im.analyzing && stored >= max(2*im.analyzedAt, firstAnalyze)
	im.analyzing = refresh
	im.mu.Unlock()
	if refresh {
		return im.keepStatistics(ctx, stored)
	}
	return nil
}

// firstAnalyze is the number of documents stored when an import first
// refreshes the documents' statistics (keepStatistics).
const firstAnalyze = 5000

// keepStatistics has PostgreSQL analyse the documents table while the
// import goes on, each time the documents stored have doubled since the
// last time (about 11 times for 10,000,000 documents, seconds each), so the
// statistics are never less than half of what is stored. Autovacuum
// analyses a growing partition late or, when it is off, never, and the
// statements that store a batch are then planned as if its partition were
// empty: a 10,000,000-document import chose an index on the client and
// read every stored document for each document of a batch.
func (im *importer) keepStatistics(ctx context.Context, stored int) error {
	err := im.st.RefreshDocumentStatistics(ctx)
	im.mu.Lock()
	im.analyzing = false
	if err == nil {
		im.analyzedAt = stored
	}
	im.mu.Unlock()
	return err
}

// Store stores parsed documents (store.ParseDocument) of the data owner as
// "fleetgraph import" does, and is what the client API's reports are
// stored by: in one transaction, replacing a stored document of the same
// kind and id, creating the clients they name. When the database refuses
// the batch because of one document's data, the batch is halved until the
// culprit is alone; such a document and one naming another data owner's
// client are passed to bad with their index in docs, and not stored. The
// result counts what the other documents did (Refused is left empty).
func Store(ctx context.Context, st *store.Store, ownerID int64, docs []store.Document, bad func(i int, err error)) (store.InsertResult, error) {
	return StoreWith(ctx, st, ownerID, docs, store.InsertOptions{}, bad)
}

// StoreWith is Store with the store's insert options; a document whose id
// another client's stored document has (InsertOptions.KeepOthers) is
// refused with store.ErrTakenID.
func StoreWith(ctx context.Context, st *store.Store, ownerID int64, docs []store.Document, opt store.InsertOptions,
	bad func(i int, err error)) (store.InsertResult, error) {
	var sum store.InsertResult
	err := storeFrom(ctx, st, ownerID, docs, 0, opt, bad, &sum)
	return sum, err
}

// storeFrom stores docs, the documents from index off of a batch.
func storeFrom(ctx context.Context, st *store.Store, ownerID int64, docs []store.Document, off int, opt store.InsertOptions,
	bad func(int, error), sum *store.InsertResult) error {
	res, err := st.InsertDocumentsWith(ctx, ownerID, docs, opt)
	if err != nil && isDataError(err) {
		if len(docs) == 1 {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				err = errors.New("refused by the database: " + pgErr.Message)
			}
			bad(off, err)
			return nil
		}
		h := len(docs) / 2
		if err := storeFrom(ctx, st, ownerID, docs[:h], off, opt, bad, sum); err != nil {
			return err
		}
		return storeFrom(ctx, st, ownerID, docs[h:], off+h, opt, bad, sum)
	}
	if err != nil {
		return err
	}
	for _, i := range res.Refused {
		bad(off+i, store.ErrForeignClient)
	}
	for _, i := range res.Taken {
		bad(off+i, store.ErrTakenID)
	}
	sum.Inserted += res.Inserted
	sum.Updated += res.Updated
	sum.Unchanged += res.Unchanged
	sum.ClientsCreated += res.ClientsCreated
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
