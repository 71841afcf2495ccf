package es

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/search"
)

// CursorName is the indexer's row in worker_cursors.
const CursorName = "elasticsearch"

// lockClass and lockID name the session advisory lock only one indexer per
// database holds (the first key is the class, as for the rollup locks).
const (
	lockClass = 0x45536978 // "ESix"
	lockID    = 1
)

// ErrLockHeld is returned by RunOnce when another indexer (another server
// replica) holds the indexer lock.
var ErrLockHeld = errors.New("elasticsearch indexer: another indexer holds the lock")

// Indexer copies documents into Elasticsearch in the order of their version
// (documents_version, bumped on every insert and update), at least once:
// the cursor in worker_cursors moves only after Elasticsearch has taken a
// batch, so a restart resends at most one batch. Every action carries the
// row's version as an external version, so a copy that arrives late (a
// bulk request given up on by its timeout, then applied by Elasticsearch
// after a newer one) never overwrites a newer one: Elasticsearch answers
// it 409, which counts as done.
//
// Removals come in the same stream: triggers write document_tombstones,
// with versions from the same sequence, for deleted documents, for the old
// index of a document whose type changed, and for deleted data owners. The
// first two become bulk delete actions; a data owner's tombstone drops all
// of its indices. Tombstones the cursor has passed are deleted with the
// cursor move.
//
// A version is taken from the sequence before its transaction commits, so a
// transaction may commit version 10 after version 11 is visible. The
// indexer therefore reads only versions up to a horizon: the sequence value
// seen at some moment, once every transaction that could hold a version up
// to it has ended (see horizon). This relies on the sequence having CACHE 1,
// as created by the migration, and on versions being taken through
// next_document_version() (migration 00006). Settle adds a margin on top.
//
// Only one indexer per database works at a time: the holder of a
// session-level advisory lock, taken on a connection of its own that then
// runs all of its queries. If that connection dies, PostgreSQL releases the
// lock and the old holder's next query (its cursor move included) fails, so
// a cursor is only ever moved by the current holder. The others try again
// every LockRetry. A session lock rather than pg_try_advisory_xact_lock per
// batch: a batch spans a bulk request that can be slow and retried, and a
// transaction held open across it would hold back vacuum and this
// indexer's own horizon.
//
// The indexer also maintains each data owner's ES|QL lookup index,
// analytics-production-<slug>-lookup-clients, from the clients table (see
// syncLookup in lookup.go), every LookupInterval.
//
// An Indexer is not safe for concurrent use; run several (one per server),
// not one from several goroutines. Close releases the lock.
type Indexer struct {
	client esapi.Transport
	pool   *pgxpool.Pool
	logger *slog.Logger

	// BatchSize is the most documents per bulk request (default 500).
	BatchSize int
	// Idle is the pause of Run when nothing is left to index (default 1s).
	Idle time.Duration
	// MinBackoff and MaxBackoff bound the pause of Run after a failed batch
	// (defaults 1s and 1m); the pause doubles on each failure in a row.
	MinBackoff, MaxBackoff time.Duration
	// Settle is how old a horizon must be before it is used (default 1s).
	Settle time.Duration
	// LockRetry is how often Run tries to take the lock while another
	// indexer holds it (default 10s).
	LockRetry time.Duration
	// Timeout bounds each request to Elasticsearch (default 2m): a cluster
	// that stops answering fails the batch, which is retried, instead of
	// holding the indexer forever.
	Timeout time.Duration
	// LookupInterval is how often RunOnce compares the lookup indices with
	// the clients table (default 5s; 0: on every call; negative: never, the
	// lookup indices are not maintained). A pass that left work behind (a
	// full batch) is followed by another on the next call; after a failed
	// one, the next waits at least a backoff between MinBackoff and
	// MaxBackoff of its own, doubling on each failure in a row.
	LookupInterval time.Duration
	// Observe, when set, is told the outcome of every round of Run (the
	// server's metrics).
	Observe func(Progress)

	lookupAt    time.Time     // start of the last lookup pass
	lookupMore  bool          // the last lookup pass left work behind
	lookupRetry time.Duration // backoff after failed lookup passes, 0 after a success

	conn     *pgx.Conn // the session holding the lock, nil when not held
	horizons []horizon // candidates, oldest first
	stable   int64     // highest settled version seen
	cursor   int64     // the cursor as last read or moved
}

// Progress is a round of Run as Observe sees it.
type Progress struct {
	Sent     int   // documents, tombstones and lookup documents sent
	Cursor   int64 // version up to which everything was sent
	Horizon  int64 // highest settled version seen
	LockHeld bool  // false: another indexer holds the lock
	Err      error
}

// horizon: every version <= seq was handed out to a transaction older
// than xid, a transaction id the indexer took after reading seq.
type horizon struct {
	seq int64
	xid int64
	at  time.Time
}

const maxHorizons = 64

// NewIndexer makes an indexer with the default settings.
func NewIndexer(client esapi.Transport, pool *pgxpool.Pool, logger *slog.Logger) *Indexer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Indexer{client: client, pool: pool, logger: logger,
		BatchSize: 500, Idle: time.Second, MinBackoff: time.Second, MaxBackoff: time.Minute, Settle: time.Second,
		LockRetry: 10 * time.Second, Timeout: 2 * time.Minute, LookupInterval: 5 * time.Second}
}

// Run indexes until ctx is done, then releases the lock and returns nil.
// Failed batches are retried with backoff; while another indexer holds the
// lock, Run waits for it.
func (ix *Indexer) Run(ctx context.Context) error {
	defer ix.Close()
	backoff := time.Duration(0)
	waiting := false
	for ctx.Err() == nil {
		n, err := ix.RunOnce(ctx)
		if ix.Observe != nil && (err == nil || ctx.Err() == nil) { // not a round cut short by the shutdown
			ix.Observe(Progress{Sent: n, Cursor: ix.cursor, Horizon: ix.stable, LockHeld: !errors.Is(err, ErrLockHeld), Err: err})
		}
		var pause time.Duration
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
		case isLookupError(err):
			// The documents went; the lookup pass has a backoff of its own
			// (lookupDue), so that a cluster refusing lookup indices (one
			// older than 8.18) does not slow the documents down.
			ix.logger.Warn("elasticsearch indexer: lookup indices failed, retrying", "err", err, "retry_in", max(ix.LookupInterval, ix.lookupRetry))
			backoff = 0
			if n == 0 {
				pause = ix.Idle
			}
		case errors.Is(err, ErrLockHeld):
			if !waiting {
				ix.logger.Info("elasticsearch indexer: another server indexes, waiting for its lock")
			}
			waiting, backoff = true, 0
			pause = ix.LockRetry
		case err != nil:
			backoff = min(max(2*backoff, ix.MinBackoff), ix.MaxBackoff)
			pause = backoff
			ix.logger.Warn("elasticsearch indexer: batch failed, retrying", "err", err, "retry_in", pause)
		case n == 0:
			backoff = 0
			pause = ix.Idle
		default:
			backoff = 0
		}
		if waiting && !errors.Is(err, ErrLockHeld) {
			waiting = false
			ix.logger.Info("elasticsearch indexer: took the lock, indexing")
		}
		if pause > 0 {
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
	return nil
}

// LookupError is the error of RunOnce when the documents went but the
// lookup pass failed (see syncLookup).
type LookupError struct{ Err error }

func (e *LookupError) Error() string { return e.Err.Error() }
func (e *LookupError) Unwrap() error { return e.Err }

// isLookupError tells whether err is a failure of the lookup pass alone.
func isLookupError(err error) bool {
	_, ok := err.(*LookupError)
	return ok
}

// Close releases the lock, if held, and ends its session. The lock is
// released explicitly first: the session's end releases it too, but only
// once the server has processed it, and another server waiting for the lock
// should be able to take it as soon as Close returns.
func (ix *Indexer) Close() {
	if ix.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pid := ix.conn.PgConn().PID()
	unlocked := false
	if !ix.conn.IsClosed() {
		_, err := ix.conn.Exec(ctx, `SELECT pg_advisory_unlock($1::int, $2::int)`, lockClass, lockID)
		unlocked = err == nil
	}
	_ = ix.conn.Close(ctx)
	ix.conn = nil
	if !unlocked {
		// The session died under a cancelled query: its lock goes when
		// the server has ended it. Wait for that (briefly), so that Close
		// returning still means the lock is free.
		ix.awaitSessionEnd(ctx, pid)
	}
}

// awaitSessionEnd waits until the server no longer has the session pid
// (or ctx ends).
func (ix *Indexer) awaitSessionEnd(ctx context.Context, pid uint32) {
	for {
		var alive bool
		err := ix.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, int64(pid)).Scan(&alive)
		if err != nil || !alive {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// lock returns the session holding the lock, taking the lock first if
// needed (ErrLockHeld when another session has it). The session is taken
// out of the pool: a pooled connection would carry the lock to others.
func (ix *Indexer) lock(ctx context.Context) (*pgx.Conn, error) {
	if ix.conn != nil && !ix.conn.IsClosed() {
		return ix.conn, nil
	}
	ix.Close()
	pc, err := ix.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("elasticsearch indexer: connect: %w", err)
	}
	conn := pc.Hijack()
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1::int, $2::int)`, lockClass, lockID).Scan(&ok); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("elasticsearch indexer: take lock: %w", err)
	}
	if !ok {
		_ = conn.Close(ctx)
		return nil, ErrLockHeld
	}
	ix.conn = conn
	return conn, nil
}

// row is a document to index, or a tombstone (doc nil): a document to
// delete, or with kind nil a deleted data owner whose indices to drop.
type row struct {
	version int64
	slug    string
	kind    *string
	typ     *string
	docID   *string
	doc     []byte
}

func (r row) index() string {
	typ := ""
	if r.typ != nil {
		typ = *r.typ
	}
	return search.IndexName(r.slug, search.Kind(*r.kind), typ)
}

// RunOnce indexes the next batch and moves the cursor past it, taking the
// lock first if this indexer does not hold it (ErrLockHeld when another
// does); then, when due (LookupInterval), it brings the lookup indices up
// to date by one batch. It returns how many documents, tombstones, lookup
// documents and lookup indices it sent (0 when there was nothing to do);
// on error the cursor stays where it was, and so does the lookup state of
// what failed. A failure of the lookup pass alone is a *LookupError.
func (ix *Indexer) RunOnce(ctx context.Context) (int, error) {
	conn, err := ix.lock(ctx)
	if err != nil {
		return 0, err
	}
	n, err := ix.runBatch(ctx, conn)
	if err == nil || !conn.IsClosed() {
		if ix.lookupDue() {
			m, lerr := ix.syncLookup(ctx, conn)
			n += m
			if lerr != nil && err == nil {
				err = &LookupError{Err: lerr}
			} else if lerr != nil {
				err = errors.Join(err, &LookupError{Err: lerr})
			}
		}
	}
	if err != nil && conn.IsClosed() {
		ix.Close() // the lock went with the session; take it again next time
	}
	return n, err
}

// readBatch reads up to limit documents and tombstones with versions in
// (cursor, stable], in version order.
const readBatch = `
	(SELECT d.version, o.slug, d.kind, d.type, d.doc_id, d.doc
	 FROM documents d JOIN data_owners o ON o.id = d.data_owner_id
	 WHERE d.version > $1 AND d.version <= $2
	 ORDER BY d.version LIMIT $3)
	UNION ALL
	(SELECT t.version, t.slug, t.kind, t.type, t.doc_id, NULL::jsonb
	 FROM document_tombstones t
	 WHERE t.version > $1 AND t.version <= $2
	 ORDER BY t.version LIMIT $3)
	ORDER BY 1 LIMIT $3`

// moveCursor moves the cursor and deletes the tombstones it has passed, in
// one statement.
const moveCursor = `
	WITH c AS (
		INSERT INTO worker_cursors (name, position, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (name) DO UPDATE SET position = GREATEST(worker_cursors.position, EXCLUDED.position), updated_at = now()
		RETURNING position
	)
	DELETE FROM document_tombstones WHERE version <= (SELECT position FROM c)`

func (ix *Indexer) runBatch(ctx context.Context, conn *pgx.Conn) (int, error) {
	stable, err := ix.horizon(ctx, conn)
	if err != nil {
		return 0, err
	}
	var cursor int64
	err = conn.QueryRow(ctx, `SELECT position FROM worker_cursors WHERE name = $1`, CursorName).Scan(&cursor)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("elasticsearch indexer: read cursor: %w", err)
	}
	ix.cursor = cursor
	if stable <= cursor {
		return 0, nil
	}
	limit := ix.BatchSize
	if limit <= 0 {
		limit = 500
	}
	rows, err := conn.Query(ctx, readBatch, cursor, stable, limit)
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read documents: %w", err)
	}
	batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.version, &x.slug, &x.kind, &x.typ, &x.docID, &x.doc)
		return x, err
	})
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read documents: %w", err)
	}
	next := stable // every version up to the horizon is settled
	// A deleted data owner goes alone: after what comes before it, before
	// what comes after (a new data owner of the same slug).
	for i, r := range batch {
		if r.kind == nil {
			batch = batch[:max(i, 1)]
			next = batch[len(batch)-1].version
			break
		}
	}
	if len(batch) == limit {
		next = batch[len(batch)-1].version
	}
	switch {
	case len(batch) == 1 && batch[0].kind == nil:
		err = ix.dropOwner(ctx, batch[0].slug)
	case len(batch) > 0:
		err = ix.send(ctx, batch)
	}
	if err != nil {
		return 0, err
	}
	if _, err := conn.Exec(ctx, moveCursor, CursorName, next); err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: move cursor: %w", err)
	}
	ix.cursor = next
	return len(batch), nil
}

// horizon records a new candidate when versions were handed out since the
// last one, and returns the highest version known to be settled (0 if none
// yet).
//
// A candidate pairs the sequence's value with a transaction id taken
// afterwards. Writers take versions through next_document_version(), which
// gives their transaction its id first, so every transaction holding a
// version <= seq has an id below the candidate's; once the oldest running
// transaction (the snapshot's xmin) is past that id, they have all ended.
// The snapshot's xmax cannot serve: it is one past the latest completed
// transaction, and a transaction that has its id but is still running may
// lie beyond it.
func (ix *Indexer) horizon(ctx context.Context, conn *pgx.Conn) (int64, error) {
	var seq int64
	err := conn.QueryRow(ctx,
		`SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM documents_version`).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read documents_version: %w", err)
	}
	now := time.Now()
	// A new candidate only when there is something new: each takes (and
	// commits) a transaction id, which an idle poll should not spend.
	if n := len(ix.horizons); seq > ix.stable && (n == 0 || ix.horizons[n-1].seq < seq) {
		var xid int64
		if err := conn.QueryRow(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&xid); err != nil {
			return 0, fmt.Errorf("elasticsearch indexer: take a transaction id: %w", err)
		}
		c := horizon{seq: seq, xid: xid, at: now}
		if n == maxHorizons {
			ix.horizons[n-1] = c
		} else {
			ix.horizons = append(ix.horizons, c)
		}
	}
	if len(ix.horizons) == 0 {
		return ix.stable, nil
	}
	var xmin int64
	err = conn.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`).Scan(&xmin)
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read snapshot: %w", err)
	}
	// The newest candidate whose transactions have all ended and that has
	// settled wins; it and the older ones are no longer needed.
	for i := len(ix.horizons) - 1; i >= 0; i-- {
		h := ix.horizons[i]
		if h.xid < xmin && now.Sub(h.at) >= ix.Settle {
			ix.stable = max(ix.stable, h.seq)
			ix.horizons = append(ix.horizons[:0], ix.horizons[i+1:]...)
			break
		}
	}
	return ix.stable, nil
}

type bulkItem struct {
	Status int `json:"status"`
	Error  *struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	} `json:"error"`
}

// withTimeout bounds one request to Elasticsearch.
func (ix *Indexer) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if ix.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, ix.Timeout)
}

// send indexes and deletes a batch of documents with one bulk request (see
// bulk).
func (ix *Indexer) send(ctx context.Context, batch []row) error {
	actions := make([]bulkAction, len(batch))
	for i, r := range batch {
		actions[i] = bulkAction{op: "index", index: r.index(), id: *r.docID, version: r.version, source: r.doc}
		if r.doc == nil {
			actions[i].op = "delete"
		}
	}
	return ix.bulk(ctx, actions)
}

// bulkAction is one action of a bulk request: an index (with its source)
// or a delete, with an external version.
type bulkAction struct {
	op, index, id string
	version       int64
	source        []byte // JSON, index only
}

// bulk sends actions with one bulk request.
//
// Per item: a delete of a document Elasticsearch does not have (404) has
// done its job, and so has an action Elasticsearch has a newer version of
// (409). A document Elasticsearch refuses as such (400: a mapping conflict,
// a value it cannot parse) is logged and skipped, so that one document
// does not stop the indexing of all others; an update of it is sent again.
// Any other failure (429, 5xx, and the 401, 403 and 404 of a cluster that
// refuses writes, has a write block or does not create indices) fails the
// batch, which is retried as a whole until Elasticsearch takes it: these
// say nothing about the document, and skipping would lose it.
func (ix *Indexer) bulk(ctx context.Context, actions []bulkAction) error {
	var body bytes.Buffer
	for _, a := range actions {
		line, err := json.Marshal(map[string]any{a.op: map[string]any{"_index": a.index, "_id": a.id,
			"version": a.version, "version_type": "external"}})
		if err != nil {
			return err
		}
		body.Write(line)
		body.WriteByte('\n')
		if a.op != "index" {
			continue
		}
		// jsonb prints on one line; compact anyway in case it ever does not.
		if err := json.Compact(&body, a.source); err != nil {
			return fmt.Errorf("elasticsearch indexer: document %s: %w", a.id, err)
		}
		body.WriteByte('\n')
	}
	ctx, cancel := ix.withTimeout(ctx)
	defer cancel()
	res, err := esapi.BulkRequest{
		Body:   bytes.NewReader(body.Bytes()),
		Header: http.Header{"Content-Type": []string{"application/x-ndjson"}},
	}.Do(ctx, ix.client)
	if err != nil {
		return fmt.Errorf("elasticsearch indexer: bulk: %w", err)
	}
	defer drain(res)
	if res.IsError() {
		return esError(res, "bulk")
	}
	var out struct {
		Errors bool                  `json:"errors"`
		Items  []map[string]bulkItem `json:"items"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return fmt.Errorf("elasticsearch indexer: bulk: decode response: %w", err)
	}
	if len(out.Items) != len(actions) {
		return fmt.Errorf("elasticsearch indexer: bulk: %d items answered for %d sent", len(out.Items), len(actions))
	}
	retry := 0
	var first string
	for i, m := range out.Items {
		a := actions[i]
		it, ok := m[a.op]
		if !ok {
			return fmt.Errorf("elasticsearch indexer: bulk: item %d without %s result", i, a.op)
		}
		if it.Status >= 200 && it.Status < 300 || it.Status == http.StatusConflict ||
			a.op == "delete" && it.Status == http.StatusNotFound {
			continue
		}
		reason := ""
		if it.Error != nil {
			reason = it.Error.Type + ": " + it.Error.Reason
		}
		if it.Status == http.StatusBadRequest {
			ix.logger.Error("elasticsearch indexer: "+a.op+" refused, skipped",
				"index", a.index, "id", a.id, "version", a.version, "status", it.Status, "reason", reason)
			continue
		}
		if retry == 0 {
			first = fmt.Sprintf("%s %s/%s: status %d %s", a.op, a.index, a.id, it.Status, reason)
		}
		retry++
	}
	if retry > 0 {
		return fmt.Errorf("elasticsearch indexer: bulk: %d of %d actions failed (first %s)", retry, len(actions), first)
	}
	return nil
}

// dropOwner deletes the indices of a deleted data owner, its lookup index
// included (the lookup state went with the data owner). Index names are
// resolved first: Elasticsearch refuses to delete by wildcard
// (action.destructive_requires_name). Slugs have no "-", so the pattern
// matches no other data owner's indices; ParseIndex checks anyway.
func (ix *Indexer) dropOwner(ctx context.Context, slug string) error {
	ctx, cancel := ix.withTimeout(ctx)
	defer cancel()
	res, err := esapi.IndicesResolveIndexRequest{
		Name: []string{search.IndexPrefix(slug) + "-*"}, ExpandWildcards: "all",
	}.Do(ctx, ix.client)
	if err != nil {
		return fmt.Errorf("elasticsearch indexer: resolve indices of %s: %w", slug, err)
	}
	defer drain(res)
	if res.IsError() {
		return esError(res, "resolve indices of "+slug)
	}
	var out struct {
		Indices []struct {
			Name string `json:"name"`
		} `json:"indices"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return fmt.Errorf("elasticsearch indexer: resolve indices of %s: decode response: %w", slug, err)
	}
	var names []string
	for _, in := range out.Indices {
		if _, _, ok := search.ParseIndex(slug, in.Name); ok || slices.Contains(search.LookupIndices(slug), in.Name) {
			names = append(names, in.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	ignore := true
	del, err := esapi.IndicesDeleteRequest{Index: names, IgnoreUnavailable: &ignore}.Do(ctx, ix.client)
	if err != nil {
		return fmt.Errorf("elasticsearch indexer: delete indices of %s: %w", slug, err)
	}
	defer drain(del)
	if del.IsError() && del.StatusCode != http.StatusNotFound {
		return esError(del, "delete indices of "+slug)
	}
	ix.logger.Info("elasticsearch indexer: data owner deleted, indices dropped", "data_owner", slug, "indices", names)
	return nil
}
