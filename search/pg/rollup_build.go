package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// Rollups (migration 00004): writes to documents append rows to
// rollup_dirty; RefreshRollups rebuilds the cells (rollup_cells) and the
// catalog (rollup_days) of every dirty (data owner, kind, UTC day) from that
// day's documents. The query side reads cells for clean days only, so the
// cells must answer exactly what SQL over the documents answers; the rules
// are those of flattenDoc and dayRollup.

// rollupLockClass is the first key of the advisory locks that keep two
// refreshers off the same day (the second is a hash of owner, kind and day).
const rollupLockClass = 0x526f6c6c // "Roll"

// rollupWorkers is the number of days refreshed at the same time.
const rollupWorkers = 2

// maxKeywordValues is the number of distinct values a keyword field may have
// in one (day, type) before it is excluded from the cells. A variable for
// the tests.
var maxKeywordValues = 1000

// minSparseValues: a keyword field with more distinct values than this in
// one (day, type), and more than a quarter as many as documents, is
// excluded too (see typeRollup.cells).
const minSparseValues = 100

// rollupAfterIDs, when set (tests only), runs after a day's dirty ids are
// read and before anything is deleted.
var rollupAfterIDs func(ownerID int64, kind string, day time.Time)

// rollupDay is one dirty (data owner, kind, day).
type rollupDay struct {
	ownerID int64
	kind    string
	day     time.Time // UTC midnight
}

func (d rollupDay) String() string {
	return fmt.Sprintf("%d/%s/%s", d.ownerID, d.kind, d.day.Format(time.DateOnly))
}

// RefreshRollups rebuilds the rollups of every day that has rows in
// rollup_dirty and returns how many days it rebuilt. Days another refresher
// holds are skipped (it is rebuilding them); writes committed while a day is
// rebuilt leave it dirty for the next refresh. Errors of single days do not
// stop the others; they are returned together.
func RefreshRollups(ctx context.Context, pool *pgxpool.Pool) (days int, err error) {
	todo, err := listDirtyDays(ctx, pool)
	if err != nil {
		return 0, err
	}
	return refreshDays(ctx, pool, todo)
}

// dirtyDay is a day with dirty marks, and the newest mark's id.
type dirtyDay struct {
	rollupDay
	newest int64
}

// listDirtyDays lists the days with dirty marks.
func listDirtyDays(ctx context.Context, pool *pgxpool.Pool) ([]dirtyDay, error) {
	const q = `SELECT data_owner_id, kind, day, max(id) FROM rollup_dirty GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
	rows, err := pool.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("rollups: list dirty days: %w", err)
	}
	todo, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (dirtyDay, error) {
		var d dirtyDay
		err := r.Scan(&d.ownerID, &d.kind, &d.day, &d.newest)
		d.day = time.Date(d.day.Year(), d.day.Month(), d.day.Day(), 0, 0, 0, 0, time.UTC)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("rollups: list dirty days: %w", err)
	}
	return todo, nil
}

// refreshDays rebuilds the days given, rollupWorkers at a time.
func refreshDays(ctx context.Context, pool *pgxpool.Pool, todo []dirtyDay) (days int, err error) {
	queue := make(chan rollupDay)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range min(rollupWorkers, len(todo)) {
		wg.Go(func() {
			for d := range queue {
				done, err := refreshDay(ctx, pool, d)
				mu.Lock()
				if done {
					days++
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("rollups: day %s: %w", d, err))
				}
				mu.Unlock()
			}
		})
	}
	for _, d := range todo {
		if ctx.Err() != nil {
			break
		}
		queue <- d.rollupDay
	}
	close(queue)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return days, errors.Join(errs...)
}

// LiveDayWait bounds how long the refresher leaves a day that keeps being
// written to unrebuilt (see liveDays).
const LiveDayWait = 5 * time.Minute

// liveDays is what the refresher remembers of the dirty days between its
// rounds, to leave alone a day still being written to. Rebuilding such a
// day is wasted: the next write marks it dirty again at once, and searches
// read a dirty day from its documents anyway. So a dirty day is rebuilt
// once a round has seen no new write to it (its newest dirty mark is the
// one the round before saw), or once it has waited LiveDayWait since a
// round first saw it dirty. A day written to once is rebuilt one round
// later than it would be without this rule; the day the probes are
// reporting into (today) every LiveDayWait instead of every round.
type liveDays struct {
	wait time.Duration
	seen map[rollupDay]dirtySeen
}

type dirtySeen struct {
	newest int64     // the newest dirty mark seen
	since  time.Time // when a round first saw the day dirty
}

func newLiveDays(wait time.Duration) *liveDays {
	return &liveDays{wait: wait, seen: map[rollupDay]dirtySeen{}}
}

// due answers the days of dirty to rebuild now, and remembers the others.
func (l *liveDays) due(dirty []dirtyDay, now time.Time) []dirtyDay {
	var todo []dirtyDay
	still := make(map[rollupDay]dirtySeen, len(dirty))
	for _, d := range dirty {
		prev, ok := l.seen[d.rollupDay]
		switch {
		case ok && (prev.newest == d.newest || now.Sub(prev.since) >= l.wait):
			todo = append(todo, d)
		case ok:
			still[d.rollupDay] = dirtySeen{newest: d.newest, since: prev.since}
		default:
			still[d.rollupDay] = dirtySeen{newest: d.newest, since: now}
		}
	}
	l.seen = still
	return todo
}

// RollupEvery is how often the periodic job RollupArgs refreshes the
// rollups.
const RollupEvery = 5 * time.Second

// RollupArgs is the periodic job that refreshes the rollups.
type RollupArgs struct{}

// Kind names the job in river_job.
func (RollupArgs) Kind() string { return "rollup_refresh" }

// RollupWorker refreshes the rollups, one round per job, logging failures
// (the next round retries them) and leaving days still being written to
// for a later round (liveDays: what this process saw in its earlier
// rounds). Observe, if not nil, is told each round's days, time and error
// (the server's metrics).
type RollupWorker struct {
	river.WorkerDefaults[RollupArgs]
	Pool    *pgxpool.Pool
	Log     *slog.Logger
	Observe func(days int, took time.Duration, err error)

	mu   sync.Mutex // one round at a time in a process
	live *liveDays
}

// Work makes one round.
func (w *RollupWorker) Work(ctx context.Context, _ *river.Job[RollupArgs]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live == nil {
		w.live = newLiveDays(LiveDayWait)
	}
	start := time.Now()
	dirty, err := listDirtyDays(ctx, w.Pool)
	days := 0
	if err == nil {
		days, err = refreshDays(ctx, w.Pool, w.live.due(dirty, start))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if w.Observe != nil {
		w.Observe(days, time.Since(start), err)
	}
	if err != nil {
		w.Log.Error("rollup refresh failed", "err", err, "days", days)
	} else if days > 0 {
		w.Log.Debug("rollups refreshed", "days", days, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// refreshDay rebuilds one day in one REPEATABLE READ transaction: the dirty
// ids it deletes and the documents it reads come from the same snapshot.
// done is false when the day was skipped: another refresher holds it, or
// already rebuilt it (nothing dirty left in the snapshot, or a serialization
// failure because a refresher that committed after our snapshot deleted the
// same dirty rows; its rebuild is at least as new as ours would be).
func refreshDay(ctx context.Context, pool *pgxpool.Pool, d rollupDay) (done bool, err error) {
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		ids, ok, err := lockDirtyDay(ctx, tx, d)
		if err != nil || !ok {
			return err
		}
		if rollupAfterIDs != nil {
			rollupAfterIDs(d.ownerID, d.kind, d.day)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM rollup_dirty WHERE id = ANY($1)`, ids); err != nil {
			return fmt.Errorf("clear dirty marks: %w", err)
		}
		r, err := buildDay(ctx, tx, d)
		if err != nil {
			return err
		}
		if err := clearDay(ctx, tx, d); err != nil {
			return err
		}
		if err := writeDay(ctx, tx, d, r); err != nil {
			return err
		}
		done = true
		return nil
	})
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "40001": // serialization_failure
		return false, nil
	case errors.As(err, &pe) && pe.Code == "23503": // foreign_key_violation: the data owner is gone
		return dropDay(ctx, pool, d)
	case err != nil:
		return false, err
	}
	return done, nil
}

// lockDirtyDay takes the day's advisory lock and reads its dirty ids; ok is
// false when another refresher holds the day or nothing is dirty.
func lockDirtyDay(ctx context.Context, tx pgx.Tx, d rollupDay) (ids []int64, ok bool, err error) {
	const lock = `SELECT pg_try_advisory_xact_lock($1::int, hashtext($2))`
	if err := tx.QueryRow(ctx, lock, rollupLockClass, d.String()).Scan(&ok); err != nil {
		return nil, false, fmt.Errorf("lock: %w", err)
	}
	if !ok {
		return nil, false, nil
	}
	const q = `SELECT id FROM rollup_dirty WHERE data_owner_id = $1 AND kind = $2 AND day = $3`
	rows, err := tx.Query(ctx, q, d.ownerID, d.kind, d.day)
	if err != nil {
		return nil, false, fmt.Errorf("read dirty marks: %w", err)
	}
	ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, false, fmt.Errorf("read dirty marks: %w", err)
	}
	return ids, len(ids) > 0, nil
}

// clearDay deletes the day's cells and catalog rows.
func clearDay(ctx context.Context, tx pgx.Tx, d rollupDay) error {
	const cells = `DELETE FROM rollup_cells WHERE data_owner_id = $1 AND kind = $2 AND day = $3`
	if _, err := tx.Exec(ctx, cells, d.ownerID, d.kind, d.day); err != nil {
		return fmt.Errorf("delete cells: %w", err)
	}
	const days = `DELETE FROM rollup_days WHERE data_owner_id = $1 AND kind = $2 AND day = $3`
	if _, err := tx.Exec(ctx, days, d.ownerID, d.kind, d.day); err != nil {
		return fmt.Errorf("delete days: %w", err)
	}
	return nil
}

// dropDay is the rebuild of a day whose data owner was deleted meanwhile:
// no cells, and the dirty marks are cleared.
func dropDay(ctx context.Context, pool *pgxpool.Pool, d rollupDay) (done bool, err error) {
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		ids, ok, err := lockDirtyDay(ctx, tx, d)
		if err != nil || !ok {
			return err
		}
		if err := clearDay(ctx, tx, d); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM rollup_dirty WHERE id = ANY($1)`, ids); err != nil {
			return fmt.Errorf("clear dirty marks: %w", err)
		}
		done = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("drop day of a deleted data owner: %w", err)
	}
	return done, nil
}

// buildDay reads the day's documents and computes their rollup.
func buildDay(ctx context.Context, tx pgx.Tx, d rollupDay) (*dayRollup, error) {
	const q = `SELECT coalesce(type, ''), client_uuid::text, doc::text FROM documents
		WHERE data_owner_id = $1 AND kind = $2 AND created_at >= $3 AND created_at < $4`
	rows, err := tx.Query(ctx, q, d.ownerID, d.kind, d.day, d.day.AddDate(0, 0, 1))
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	defer rows.Close()
	r := newDayRollup()
	for rows.Next() {
		var typ, doc string
		var client *string
		if err := rows.Scan(&typ, &client, &doc); err != nil {
			return nil, fmt.Errorf("read documents: %w", err)
		}
		if err := r.add(typ, client, doc); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	return r, nil
}

// writeDay inserts the day's catalog rows and cells.
func writeDay(ctx context.Context, tx pgx.Tx, d rollupDay, r *dayRollup) error {
	const ins = `INSERT INTO rollup_days (data_owner_id, kind, day, type, docs, kfields_excluded, mfields_excluded)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	batch := &pgx.Batch{}
	var cells [][]any
	for _, typ := range r.typeNames() {
		t := r.types[typ]
		// cells() settles the exclusions: the catalog row comes after it.
		for _, c := range t.cells() {
			cells = append(cells, []any{d.ownerID, d.kind, d.day, typ, c.kfield, c.kvalue, c.mfield, c.n, c.sum, c.min, c.max})
		}
		batch.Queue(ins, d.ownerID, d.kind, d.day, typ, len(t.docs), sortedKeys(t.kx), sortedKeys(t.mx))
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("insert days: %w", err)
	}
	cols := []string{"data_owner_id", "kind", "day", "type", "kfield", "kvalue", "mfield", "n", "sum", "min", "max"}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"rollup_cells"}, cols, pgx.CopyFromRows(cells)); err != nil {
		return fmt.Errorf("insert cells: %w", err)
	}
	return nil
}

// dayRollup is the rollup of one day of a data owner's kind, per type.
type dayRollup struct {
	types map[string]*typeRollup
}

func newDayRollup() *dayRollup { return &dayRollup{types: map[string]*typeRollup{}} }

func (r *dayRollup) typeNames() []string {
	names := make([]string, 0, len(r.types))
	for n := range r.types {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// typeRollup collects the documents of one (day, type): the first pass
// (add) flattens them and notes exclusions and distinct values, the second
// (cells) aggregates what is not excluded.
type typeRollup struct {
	docs     []flatDoc
	kx, mx   map[string]bool                // excluded keyword / metric fields
	distinct map[string]map[string]struct{} // keyword field → values, until excluded
	names    map[string]string              // interned field names and values
}

// flatDoc is a document's keyword values and metric values.
type flatDoc struct {
	kvs []kv
	mvs []mv
}

type kv struct{ field, value string }

type mv struct {
	field string
	v     float64
}

// cell is a row of rollup_cells (without owner, kind, day, type); sum, min
// and max are nil for the document count (mfield "").
type cell struct {
	kfield, kvalue, mfield string
	n                      int64
	sum, min, max          *float64
}

// add flattens a document into the rollup of its type.
func (r *dayRollup) add(typ string, client *string, doc string) error {
	t := r.types[typ]
	if t == nil {
		t = &typeRollup{kx: map[string]bool{}, mx: map[string]bool{},
			distinct: map[string]map[string]struct{}{}, names: map[string]string{}}
		r.types[typ] = t
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("parse document: %w", err)
	}
	obj, _ := v.(map[string]any) // documents are objects; anything else has no fields
	f := flatDoc{kvs: []kv{{"", ""}}}
	if typ != "" {
		f.kvs = append(f.kvs, kv{"type", t.intern(typ)})
	}
	if client != nil {
		f.kvs = append(f.kvs, kv{"client_uuid", t.intern(*client)})
	}
	t.flatten(&f, "", obj)
	for _, x := range f.kvs {
		t.countDistinct(x)
	}
	t.docs = append(t.docs, f)
	return nil
}

// topLevelSkipped are answered from columns, not from the JSON.
var topLevelSkipped = map[string]bool{"type": true, "client_uuid": true, "created_at": true, "_id": true, "": true}

// flatten records the values of obj's fields under prefix: strings and
// arrays of strings are keyword values, numbers metric values; values of
// other types exclude their path where they cannot be answered from cells.
// Keys with a "." are skipped, arrays are not descended into.
func (t *typeRollup) flatten(f *flatDoc, prefix string, obj map[string]any) {
	for key, v := range obj {
		if strings.Contains(key, ".") || (prefix == "" && topLevelSkipped[key]) {
			continue
		}
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		switch v := v.(type) {
		case string:
			path = t.intern(path)
			f.kvs = append(f.kvs, kv{path, t.intern(v)})
			t.mx[path] = true
		case json.Number:
			path = t.intern(path)
			t.kx[path] = true
			x, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				t.mx[path] = true
			} else {
				f.mvs = append(f.mvs, mv{path, x})
			}
		case []any:
			t.flattenArray(f, t.intern(path), v)
		case bool:
			path = t.intern(path)
			t.kx[path] = true
			t.mx[path] = true
		case map[string]any:
			path = t.intern(path)
			t.kx[path] = true
			t.flatten(f, path, v)
		case nil:
		}
	}
}

// flattenArray records the distinct strings of an array of strings (and
// nulls); any other element excludes the path as a keyword.
func (t *typeRollup) flattenArray(f *flatDoc, path string, arr []any) {
	var seen []string
	for _, e := range arr {
		switch e := e.(type) {
		case string:
			if !slices.Contains(seen, e) {
				seen = append(seen, e)
			}
		case nil:
		default:
			t.kx[path] = true
			return
		}
	}
	for _, s := range seen {
		f.kvs = append(f.kvs, kv{path, t.intern(s)})
	}
}

// countDistinct notes a keyword value, excluding the field once it has more
// than maxKeywordValues distinct values.
func (t *typeRollup) countDistinct(x kv) {
	if t.kx[x.field] {
		return
	}
	vals := t.distinct[x.field]
	if vals == nil {
		vals = map[string]struct{}{}
		t.distinct[x.field] = vals
	}
	vals[x.value] = struct{}{}
	if len(vals) > maxKeywordValues {
		t.kx[x.field] = true
		delete(t.distinct, x.field)
	}
}

func (t *typeRollup) intern(s string) string {
	if v, ok := t.names[s]; ok {
		return v
	}
	t.names[s] = s
	return s
}

// metricAgg aggregates one metric over the documents of one keyword value.
type metricAgg struct {
	n             int64
	sum, min, max float64
}

type kvAgg struct {
	n       int64
	metrics []metricAgg // by metric index
}

// cells aggregates the documents into cells, sorted by kfield, kvalue and
// mfield.
func (t *typeRollup) cells() []cell {
	// A field with nearly one value per document (ids, per-document
	// timestamps as text) would have more cells than there are documents:
	// its terms read the documents instead.
	for field, vals := range t.distinct {
		if field != "" && len(vals) > minSparseValues && 4*len(vals) > len(t.docs) {
			t.kx[field] = true
		}
	}
	metrics := map[string]int{}
	var names []string
	for _, d := range t.docs {
		for _, m := range d.mvs {
			if _, ok := metrics[m.field]; !ok && !t.mx[m.field] {
				metrics[m.field] = len(names)
				names = append(names, m.field)
			}
		}
	}
	aggs := map[kv]*kvAgg{}
	for _, d := range t.docs {
		for _, x := range d.kvs {
			if t.kx[x.field] {
				continue
			}
			a := aggs[x]
			if a == nil {
				a = &kvAgg{metrics: make([]metricAgg, len(names))}
				aggs[x] = a
			}
			a.n++
			for _, m := range d.mvs {
				i, ok := metrics[m.field]
				if !ok {
					continue
				}
				ma := &a.metrics[i]
				if ma.n == 0 {
					ma.min, ma.max = math.Inf(1), math.Inf(-1)
				}
				ma.n++
				ma.sum += m.v
				ma.min = min(ma.min, m.v)
				ma.max = max(ma.max, m.v)
			}
		}
	}
	var out []cell
	for x, a := range aggs {
		out = append(out, cell{kfield: x.field, kvalue: x.value, n: a.n})
		for i, ma := range a.metrics {
			if ma.n > 0 {
				out = append(out, cell{kfield: x.field, kvalue: x.value, mfield: names[i], n: ma.n,
					sum: &ma.sum, min: &ma.min, max: &ma.max})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.kfield != b.kfield {
			return a.kfield < b.kfield
		}
		if a.kvalue != b.kvalue {
			return a.kvalue < b.kvalue
		}
		return a.mfield < b.mfield
	})
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
