package es

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/search"
)

// CursorName is the indexer's row in worker_cursors.
const CursorName = "elasticsearch"

// Indexer copies documents into Elasticsearch in the order of their version
// (documents_version, bumped on every insert and update), at least once:
// the cursor in worker_cursors moves only after Elasticsearch has taken a
// batch, so a restart resends at most one batch.
//
// A version is taken from the sequence before its transaction commits, so a
// transaction may commit version 10 after version 11 is visible. The
// indexer therefore reads only versions up to a horizon: the sequence value
// seen at some moment, once every transaction running at that moment has
// ended (and Settle has passed, for the instant between nextval and the
// transaction getting its id). This relies on the sequence having CACHE 1,
// as created by the migration.
//
// An Indexer is not safe for concurrent use; run one per database.
type Indexer struct {
	client *elasticsearch.Client
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

	horizons []horizon // candidates, oldest first
	stable   int64     // highest settled version seen
}

// horizon: every version <= seq was handed out before a snapshot whose
// next transaction id was xmax.
type horizon struct {
	seq  int64
	xmax int64
	at   time.Time
}

const maxHorizons = 64

// NewIndexer makes an indexer with the default settings.
func NewIndexer(client *elasticsearch.Client, pool *pgxpool.Pool, logger *slog.Logger) *Indexer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Indexer{client: client, pool: pool, logger: logger,
		BatchSize: 500, Idle: time.Second, MinBackoff: time.Second, MaxBackoff: time.Minute, Settle: time.Second}
}

// Run indexes until ctx is done, then returns nil. Failed batches are
// retried with backoff.
func (ix *Indexer) Run(ctx context.Context) error {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		n, err := ix.RunOnce(ctx)
		var pause time.Duration
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
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

type row struct {
	version int64
	slug    string
	kind    string
	typ     *string
	docID   string
	doc     []byte
}

// RunOnce indexes the next batch and moves the cursor past it. It returns
// how many documents it sent (0 when there was nothing to do); on error
// the cursor stays where it was.
func (ix *Indexer) RunOnce(ctx context.Context) (int, error) {
	stable, err := ix.horizon(ctx)
	if err != nil {
		return 0, err
	}
	var cursor int64
	err = ix.pool.QueryRow(ctx, `SELECT position FROM worker_cursors WHERE name = $1`, CursorName).Scan(&cursor)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("elasticsearch indexer: read cursor: %w", err)
	}
	if stable <= cursor {
		return 0, nil
	}
	limit := ix.BatchSize
	if limit <= 0 {
		limit = 500
	}
	rows, err := ix.pool.Query(ctx, `
		SELECT d.version, o.slug, d.kind, d.type, d.doc_id, d.doc
		FROM documents d JOIN data_owners o ON o.id = d.data_owner_id
		WHERE d.version > $1 AND d.version <= $2
		ORDER BY d.version
		LIMIT $3`, cursor, stable, limit)
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
	if len(batch) == limit {
		next = batch[len(batch)-1].version
	}
	if len(batch) > 0 {
		if err := ix.send(ctx, batch); err != nil {
			return 0, err
		}
	}
	_, err = ix.pool.Exec(ctx, `
		INSERT INTO worker_cursors (name, position, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (name) DO UPDATE SET position = GREATEST(worker_cursors.position, EXCLUDED.position), updated_at = now()`,
		CursorName, next)
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: move cursor: %w", err)
	}
	return len(batch), nil
}

// horizon records a new candidate and returns the highest version known to
// be settled (0 if none yet).
func (ix *Indexer) horizon(ctx context.Context) (int64, error) {
	// The sequence first, then the snapshot: whoever took a value <= seq had
	// started before the snapshot.
	var seq int64
	err := ix.pool.QueryRow(ctx,
		`SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM documents_version`).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read documents_version: %w", err)
	}
	var xmin, xmax int64
	err = ix.pool.QueryRow(ctx, `SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint
		FROM pg_current_snapshot() AS s`).Scan(&xmin, &xmax)
	if err != nil {
		return 0, fmt.Errorf("elasticsearch indexer: read snapshot: %w", err)
	}
	now := time.Now()
	c := horizon{seq: seq, xmax: xmax, at: now}
	if n := len(ix.horizons); n == maxHorizons {
		ix.horizons[n-1] = c
	} else {
		ix.horizons = append(ix.horizons, c)
	}
	// The newest candidate whose transactions have all ended and that has
	// settled wins; it and the older ones are no longer needed.
	for i := len(ix.horizons) - 1; i >= 0; i-- {
		h := ix.horizons[i]
		if h.xmax <= xmin && now.Sub(h.at) >= ix.Settle {
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

// send indexes a batch with one bulk request. Items refused for good (a
// 4xx other than 429: mapping conflicts, bad index names) are logged and
// skipped; any other failure fails the batch.
func (ix *Indexer) send(ctx context.Context, batch []row) error {
	var body bytes.Buffer
	names := make([]string, len(batch))
	for i, r := range batch {
		typ := ""
		if r.typ != nil {
			typ = *r.typ
		}
		names[i] = search.IndexName(r.slug, search.Kind(r.kind), typ)
		action, err := json.Marshal(map[string]any{"index": map[string]any{"_index": names[i], "_id": r.docID}})
		if err != nil {
			return err
		}
		body.Write(action)
		body.WriteByte('\n')
		// jsonb prints on one line; compact anyway in case it ever does not.
		if err := json.Compact(&body, r.doc); err != nil {
			return fmt.Errorf("elasticsearch indexer: document %s: %w", r.docID, err)
		}
		body.WriteByte('\n')
	}
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
	if len(out.Items) != len(batch) {
		return fmt.Errorf("elasticsearch indexer: bulk: %d items answered for %d sent", len(out.Items), len(batch))
	}
	retry := 0
	var first string
	for i, m := range out.Items {
		it, ok := m["index"]
		if !ok {
			return errors.New("elasticsearch indexer: bulk: item without index result")
		}
		if it.Status >= 200 && it.Status < 300 {
			continue
		}
		reason := ""
		if it.Error != nil {
			reason = it.Error.Type + ": " + it.Error.Reason
		}
		if it.Status >= 400 && it.Status < 500 && it.Status != http.StatusTooManyRequests {
			ix.logger.Error("elasticsearch indexer: document refused, skipped",
				"index", names[i], "id", batch[i].docID, "version", batch[i].version, "status", it.Status, "reason", reason)
			continue
		}
		if retry == 0 {
			first = fmt.Sprintf("%s/%s: status %d %s", names[i], batch[i].docID, it.Status, reason)
		}
		retry++
	}
	if retry > 0 {
		return fmt.Errorf("elasticsearch indexer: bulk: %d of %d documents failed (first %s)", retry, len(batch), first)
	}
	return nil
}
