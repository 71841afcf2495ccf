package pg

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/search"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Top-level body keys: accepted (some ignored) and refused by name.
var bodyKeys = map[string]bool{
	"query": true, "size": true, "from": true, "sort": true, "search_after": true, "_source": true,
	"track_total_hits": true, "aggs": true, "aggregations": true, "timeout": true, "version": true,
	"seq_no_primary_term": true, "stored_fields": true, "docvalue_fields": true, "track_scores": true,
}

// plan is a validated request.
type plan struct {
	scope       search.Scope
	body        map[string]any
	query       any
	size, from  int
	sortSpec    any
	searchAfter []any
	source      *srcFilter
	noSource    bool
	trackTotal  int64 // -1: exact; 0: not tracked; n: accurate up to n
	aggs        map[string]any
	version     bool
	seqNo       bool
	trackScores bool
	timeout     time.Duration // the body's timeout (0: none)
}

// intValue reads an integer body value (JSON number or numeric string).
func intValue(name string, v any) (int, error) {
	f, ok := numberOrNumeric(v)
	if !ok || f != float64(int64(f)) {
		return 0, search.Badf("%s must be an integer", name)
	}
	if f > 1e9 || f < -1e9 {
		return 0, search.Badf("%s is out of range", name)
	}
	return int(f), nil
}

func parsePlan(scope search.Scope, body map[string]any) (*plan, error) {
	p := &plan{scope: scope, body: body, size: limits.SearchSize, trackTotal: limits.MaxSearchSize}
	for k, v := range body {
		if k == "highlight" {
			return nil, search.Badf("unsupported search option %q", k)
		}
		if !bodyKeys[k] {
			return nil, search.Badf("unsupported search option %q", k)
		}
		var err error
		switch k {
		case "query":
			p.query = v
		case "size":
			if p.size, err = intValue("size", v); err != nil {
				return nil, err
			}
		case "from":
			if p.from, err = intValue("from", v); err != nil {
				return nil, err
			}
		case "sort":
			p.sortSpec = v
		case "search_after":
			l, ok := v.([]any)
			if !ok || len(l) == 0 {
				return nil, search.Badf("search_after must be a non-empty list")
			}
			p.searchAfter = l
		case "_source":
			if p.source, err = parseSource(v); err != nil {
				return nil, err
			}
		case "track_total_hits":
			switch t := v.(type) {
			case bool:
				if t {
					p.trackTotal = -1
				} else {
					p.trackTotal = 0
				}
			default:
				n, err := intValue("track_total_hits", v)
				if err != nil || n < 0 {
					return nil, search.Badf("track_total_hits must be a boolean or a non-negative integer")
				}
				p.trackTotal = int64(n)
				if n == 0 {
					p.trackTotal = 0
				}
			}
		case "aggs", "aggregations":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, search.Badf("%s must be an object", k)
			}
			if p.aggs != nil {
				return nil, search.Badf("use only one of aggs and aggregations")
			}
			p.aggs = m
		case "timeout":
			if p.timeout, err = bodyTimeout(v); err != nil {
				return nil, err
			}
		case "version":
			p.version = truthy(v)
		case "seq_no_primary_term":
			p.seqNo = truthy(v)
		case "track_scores":
			b, ok := v.(bool)
			if !ok {
				return nil, search.Badf("track_scores must be a boolean")
			}
			p.trackScores = b
		case "stored_fields":
			if s, ok := v.(string); ok && s == "_none_" {
				p.noSource = true
			}
		}
	}
	if p.size < 0 {
		return nil, search.Badf("size must not be negative")
	}
	if p.size > limits.MaxSearchSize {
		return nil, search.Badf("size must be at most %d", limits.MaxSearchSize)
	}
	if p.from < 0 {
		return nil, search.Badf("from must not be negative")
	}
	if p.from+p.size > limits.MaxSearchSize {
		return nil, search.Badf("from + size must be at most %d", limits.MaxSearchSize)
	}
	if p.searchAfter != nil && p.from > 0 {
		return nil, search.Badf("from must be 0 when search_after is used")
	}
	return p, nil
}

// cursor is the keyset position of a scroll: the sub-key values and row id
// of the last hit returned.
type cursor struct {
	Vals []any `json:"vals"`
	ID   int64 `json:"id"`
}

// result is one run of the statement.
type result struct {
	resp map[string]any
	last *cursor
	n    int
}

// run builds and runs the one SQL statement of a page. after continues a
// scroll; aggs are computed when withAggs is set.
func (b *Backend) run(ctx context.Context, q querier, p *plan, after *cursor, withAggs bool) (*result, error) {
	start := time.Now()
	types, err := scopeMapping(ctx, q, p.scope)
	if err != nil {
		return nil, err
	}
	a := &args{types: types}
	c := &compiler{a: a, now: start}
	where := scopeWhere(a, p.scope)
	if p.query != nil {
		qc, err := c.query(p.query)
		if err != nil {
			return nil, err
		}
		if c.patterns > limits.MaxQueryPatterns { // priced before it runs
			return nil, search.QueryPatternsBad(c.patterns)
		}
		where += " AND (" + qc + ")"
	}
	// Aggregating and counting take the index prefilter (prefilter.go),
	// each with placeholders of its own statement.
	aggArgs := a.clone()
	aggWhere := where
	if pf := (&compiler{a: aggArgs, now: start}).prefilter(p.query); pf != "" {
		aggWhere += " AND (" + pf + ")"
	}

	keys, err := c.parseSort(p.sortSpec)
	if err != nil {
		return nil, err
	}
	var subs []subKey
	for _, k := range keys {
		subs = append(subs, k.subs...)
	}
	// The row id breaks ties, in the direction of the first key so that an
	// index on (..., created_at DESC, id DESC) serves the common sort.
	tieDesc := len(subs) > 0 && subs[0].desc
	all := append(append([]subKey(nil), subs...), subKey{"d.id", tieDesc, "bigint"})

	hitWhere := where
	sa, err := p.searchAfterCond(c, keys)
	if err != nil {
		return nil, err
	}
	hitWhere += sa
	if after != nil {
		if len(after.Vals) != len(subs) {
			return nil, search.Badf("unknown or expired scroll id")
		}
		hitWhere += " AND " + c.afterCond(all, append(append([]any(nil), after.Vals...), after.ID))
	}

	var total string
	countWhere := where
	if p.trackTotal != 0 {
		if pf := c.prefilter(p.query); pf != "" {
			countWhere += " AND (" + pf + ")"
		}
	}
	switch {
	case p.trackTotal == 0:
		total = "SELECT NULL::bigint AS total"
	case p.trackTotal < 0:
		total = "SELECT count(*) AS total FROM documents d WHERE " + countWhere
	default:
		total = "SELECT count(*) AS total FROM (SELECT 1 FROM documents d WHERE " + countWhere +
			" LIMIT " + a.add(p.trackTotal+1) + "::bigint) c"
	}
	var sel, order, outer, names []string
	for i, k := range keys {
		if k.sel != "" {
			e := k.sel
			if k.kind == "json" {
				e = "(" + e + ")::text"
			}
			sel = append(sel, e+" AS s"+strconv.Itoa(i))
			names = append(names, "p.s"+strconv.Itoa(i))
		}
	}
	for i, s := range all {
		sel = append(sel, s.expr+" AS k"+strconv.Itoa(i))
		names = append(names, "p.k"+strconv.Itoa(i))
		dir := " ASC"
		if s.desc {
			dir = " DESC"
		}
		order = append(order, s.expr+dir)
		outer = append(outer, "h.k"+strconv.Itoa(i)+dir)
	}
	offset := ""
	if p.from > 0 {
		offset = " OFFSET " + a.add(int64(p.from)) + "::bigint"
	}
	// The documents are sorted as they are stored (TOAST pointers) and
	// written as text only as the sorted rows are sent (the OFFSET 0 keeps
	// the page a subquery, whose rows come in its order): written before
	// the sort, 24 MB of documents were written out and sorted on disk
	// before the first row, and an answer over its budget stopped nothing
	// (issue 16).
	stmt := "SELECT p.total, p.doc_id, p.type, p.doc::text AS doc, p.version, " + strings.Join(names, ", ") +
		" FROM (SELECT t.total, h.* FROM (" + total + ") t LEFT JOIN LATERAL (" +
		"SELECT d.doc_id, d.type, d.doc, d.version, " + strings.Join(sel, ", ") +
		" FROM documents d WHERE " + hitWhere + " ORDER BY " + strings.Join(order, ", ") +
		" LIMIT " + a.add(int64(p.size)) + "::bigint" + offset + ") h ON true ORDER BY " + strings.Join(outer, ", ") +
		" OFFSET 0) p"

	rows, err := q.Query(ctx, stmt, a.vals...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	hits, totalVal, last, err := p.readHits(ctx, rows, keys)
	if err != nil {
		return nil, err
	}
	hitsObj := map[string]any{"max_score": nil, "hits": hits}
	if len(hits) > 0 && p.scored(keys) {
		hitsObj["max_score"] = 1.0
	}
	if p.trackTotal != 0 {
		n, _ := totalVal.(int64)
		rel := "eq"
		if p.trackTotal > 0 && n > p.trackTotal {
			n, rel = p.trackTotal, "gte"
		}
		hitsObj["total"] = map[string]any{"value": n, "relation": rel}
	}
	resp := map[string]any{
		"timed_out": false,
		"_shards":   map[string]any{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
		"hits":      hitsObj,
	}
	if withAggs && p.aggs != nil {
		aggs, err := b.aggregations(withAggScope(ctx, p.scope), q, aggArgs, aggWhere, p.aggs, &rollupRequest{p.query, c})
		if err != nil {
			return nil, err
		}
		resp["aggregations"] = aggs
	}
	resp["took"] = time.Since(start).Milliseconds()
	return &result{resp: resp, last: last, n: len(hits)}, nil
}

// searchAfterCond is the condition (" AND ...") keeping the hits after the
// body's search_after values, "" without them.
func (p *plan) searchAfterCond(c *compiler, keys []sortKey) (string, error) {
	if p.searchAfter == nil {
		return "", nil
	}
	if len(keys) == 0 {
		return "", search.Badf("search_after needs a sort")
	}
	if len(p.searchAfter) != len(keys) {
		return "", search.Badf("search_after has %d values but the sort has %d keys", len(p.searchAfter), len(keys))
	}
	var vals []any
	var afterSubs []subKey
	for i, k := range keys {
		v, err := k.afterValues(p.searchAfter[i])
		if err != nil {
			return "", err
		}
		vals = append(vals, v...)
		afterSubs = append(afterSubs, k.subs...)
	}
	return " AND " + c.afterCond(afterSubs, vals), nil
}

// readHits reads the statement's rows: the hits, the total and the cursor
// of the last hit.
func (p *plan) readHits(ctx context.Context, rows pgx.Rows, keys []sortKey) (hits []any, totalVal any, last *cursor, err error) {
	defer rows.Close()
	hits = []any{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("search: %w", err)
		}

		totalVal = vals[0]
		if vals[1] == nil { // no hit: the LEFT JOIN's empty side
			continue
		}
		hit, cur, err := p.hit(keys, vals[1:5], vals[5:])
		if err != nil {
			return nil, nil, nil, err
		}
		if err := budget.Spend(ctx, p.hitBytes(vals, hit)); err != nil {
			cancelStatement(ctx, rows)
			return nil, nil, nil, err
		}
		hits = append(hits, hit)
		last = cur
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("search: %w", err)
	}
	return hits, totalVal, last, nil
}

// cancelStatement asks PostgreSQL to stop the statement rows reads, whose
// answer is refused (over its budget): closing the rows would read all that
// is left of it first (ten aliased searches of 24 MB read 240 MB for an
// answer refused at 32 MiB; issue 16). CancelRequest returns once the
// server has signalled the statement's backend, which ignores the signal
// if the statement is already done, so no later statement is cancelled.
func cancelStatement(ctx context.Context, rows pgx.Rows) {
	if c := rows.Conn(); c != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = c.PgConn().CancelRequest(cctx)
	}
}

// hit builds one hit from its row: base = doc_id, type, doc, version; rest =
// the sort values (s...), then the sub-key values (k...).
func (p *plan) hit(keys []sortKey, base, rest []any) (map[string]any, *cursor, error) {
	docID, _ := base[0].(string)
	typ, _ := base[1].(string)
	hit := map[string]any{
		"_index": search.IndexName(p.scope.Slug, p.scope.Kind, typ),
		"_id":    docID,
		"_score": nil,
	}
	if p.scored(keys) {
		hit["_score"] = 1.0
	}
	if !p.noSource && (p.source == nil || !p.source.none) {
		raw, _ := base[2].(string)
		src, err := p.source.source(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("search: decode document: %w", err)
		}
		hit["_source"] = src
	}
	if p.version {
		hit["_version"] = base[3]
	}
	if p.seqNo {
		hit["_seq_no"] = base[3]
		hit["_primary_term"] = 1
	}
	i := 0
	if len(keys) > 0 {
		sortVals := make([]any, 0, len(keys))
		for _, k := range keys {
			switch k.kind {
			case "score":
				sortVals = append(sortVals, 1.0)
				continue
			case "time":
				t, _ := rest[i].(time.Time)
				sortVals = append(sortVals, t.UnixMilli())
			case "date":
				t, ok := rest[i].(time.Time)
				switch {
				case ok:
					sortVals = append(sortVals, t.UnixMilli())
				case k.desc:
					sortVals = append(sortVals, int64(math.MinInt64))
				default:
					sortVals = append(sortVals, int64(math.MaxInt64))
				}
			case "json":
				var v any
				if s, ok := rest[i].(string); ok {
					dec := json.NewDecoder(strings.NewReader(s))
					dec.UseNumber()
					_ = dec.Decode(&v)
				}
				sortVals = append(sortVals, v)
			default:
				sortVals = append(sortVals, rest[i])
			}
			i++
		}
		hit["sort"] = sortVals
	}
	ks := rest[i:]
	cur := &cursor{Vals: append([]any(nil), ks[:len(ks)-1]...)}
	cur.ID, _ = ks[len(ks)-1].(int64)
	return hit, cur, nil
}

// scored reports whether hits carry a score: as on Elasticsearch, not when
// sorted by fields only (unless track_scores). Every score is 1.0.
func (p *plan) scored(keys []sortKey) bool {
	if len(keys) == 0 || p.trackScores {
		return true
	}
	for _, k := range keys {
		if k.kind == "score" {
			return true
		}
	}
	return false
}

// Search runs a DSL request; with req.Scroll it also opens a scroll.
func (b *Backend) Search(ctx context.Context, req search.Request) (search.Response, error) {
	var keep time.Duration
	if req.Scroll != "" {
		var err error
		if keep, err = parseKeepAlive(req.Scroll); err != nil {
			return nil, err
		}
	}
	body := req.Body
	if body == nil {
		body = map[string]any{}
	}
	p, err := parsePlan(req.Scope, body)
	if err != nil {
		return nil, err
	}
	if req.Scroll != "" {
		if p.searchAfter != nil {
			return nil, search.Badf("search_after cannot be used with scroll")
		}
		if p.from > 0 {
			return nil, search.Badf("from cannot be used with scroll")
		}
	}
	var res *result
	err = b.limited(ctx, b.reads(ctx), b.limit(p.timeout), searchTx, "search", func(ctx context.Context, q *limitedTx) error {
		var err error
		res, err = b.run(ctx, q, p, nil, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	if req.Scroll == "" {
		return res.resp, nil
	}
	if res.n == 0 {
		// Nothing to scroll through: no scroll is kept (as on the
		// Elasticsearch backend, which clears it), so no _scroll_id.
		return res.resp, nil
	}
	st := scrollState{Scope: p.scope, Body: scrollBody(body), Keep: req.Scroll, After: res.last}
	if st.After == nil {
		st.Done = true
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("scroll: %w", err)
	}
	id := newScrollID()
	// One statement counts and inserts, under a per-owner lock, so that
	// concurrent scrolls cannot pass the cap together.
	var opened bool
	err = pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483647)::int)",
			scrollLockClass, p.scope.DataOwnerID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO search_scrolls (id, data_owner_id, state, expires_at)
			SELECT $1, $2, $3::jsonb, now() + make_interval(secs => $4::float8)
			WHERE (SELECT count(*) FROM search_scrolls WHERE data_owner_id = $2 AND expires_at >= now()) < $5
			RETURNING true`, id, p.scope.DataOwnerID, string(raw), keep.Seconds(), limits.MaxOpenScrolls).Scan(&opened)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: a data owner may hold %d open scrolls at once; read them to the end or let them expire",
			search.ErrTooManyScrolls, limits.MaxOpenScrolls)
	}
	if err != nil {
		return nil, fmt.Errorf("scroll: %w", err)
	}
	res.resp["_scroll_id"] = id
	return res.resp, nil
}

// scrollLockClass is the first key of the advisory lock that serialises
// opening scrolls per data owner (the second is its id).
const scrollLockClass = 0x53637273 // "Scrs"

// searchTx is the transaction of a search: one snapshot for all of its
// statements (hits, total, aggregations, rollups).
var searchTx = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// scrollBody is the body a scroll continues with: no aggregations (only the
// first page has them).
func scrollBody(body map[string]any) map[string]any {
	out := make(map[string]any, len(body))
	for k, v := range body {
		if k != "aggs" && k != "aggregations" {
			out[k] = v
		}
	}
	return out
}

// scrollState is a search_scrolls row's state.
type scrollState struct {
	Scope search.Scope   `json:"scope"`
	Body  map[string]any `json:"body"`
	Keep  string         `json:"keep"`
	After *cursor        `json:"after,omitempty"`
	Done  bool           `json:"done,omitempty"`
}

func newScrollID() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseKeepAlive reads an Elasticsearch time value (1m, 30s, 500ms); at
// most limits.MaxScroll.
func parseKeepAlive(s string) (time.Duration, error) {
	n, unit, ok := search.ParseTimeValue(s)
	if !ok {
		return 0, search.Badf("invalid scroll keep-alive %q", s)
	}
	if n > int64(limits.MaxScroll/unit) {
		return 0, search.Badf("scroll keep-alive %q is longer than %s", s, search.TimeValue(limits.MaxScroll))
	}
	if n == 0 {
		return 0, search.Badf("scroll keep-alive must be positive")
	}
	return time.Duration(n) * unit, nil
}

var errUnknownScroll = search.Badf("unknown or expired scroll id")

// ScrollNext returns the next page of a scroll of the data owner.
func (b *Backend) ScrollNext(ctx context.Context, dataOwnerID int64, scrollID, keepAlive string) (search.Response, error) {
	if scrollID == "" || strings.IndexByte(scrollID, 0) >= 0 {
		// No id this backend makes holds a NUL, which PostgreSQL text cannot.
		return nil, errUnknownScroll
	}
	if _, err := b.pool.Exec(ctx, "DELETE FROM search_scrolls WHERE expires_at < now()"); err != nil {
		return nil, fmt.Errorf("scroll: %w", err)
	}
	var resp search.Response
	// page reads the scroll's row (locked) and writes it through tx, and
	// reads its next page through l.
	page := func(ctx context.Context, tx pgx.Tx, l *limitedTx) error {
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT state::text FROM search_scrolls
			WHERE id = $1 AND data_owner_id = $2 AND expires_at >= now() FOR UPDATE`, scrollID, dataOwnerID).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return errUnknownScroll
		}
		if err != nil {
			return err
		}
		var st scrollState
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&st); err != nil || st.Scope.DataOwnerID != dataOwnerID {
			return errUnknownScroll
		}
		if keepAlive == "" {
			keepAlive = st.Keep
		}
		keep, err := parseKeepAlive(keepAlive)
		if err != nil {
			return err
		}
		p, err := parsePlan(st.Scope, st.Body)
		if err != nil {
			return err
		}
		ctx, cancel := l.shorten(ctx, p.timeout)
		defer cancel()
		if st.Done {
			p.size = 0
		}
		if st.After != nil {
			for i, v := range st.After.Vals {
				if n, ok := v.(json.Number); ok {
					if iv, err := n.Int64(); err == nil {
						st.After.Vals[i] = iv
					} else if f, err := n.Float64(); err == nil {
						st.After.Vals[i] = f
					}
				}
			}
		}
		res, err := b.run(ctx, l, p, st.After, false)
		if err != nil {
			return err
		}
		if res.n == 0 {
			// The scroll is read to its end: it is cleared (as on the
			// Elasticsearch backend), and this last page has no _scroll_id.
			if _, err := tx.Exec(ctx, "DELETE FROM search_scrolls WHERE id = $1", scrollID); err != nil {
				return err
			}
			resp = res.resp
			return nil
		}
		if res.last != nil {
			st.After = res.last
		} else {
			st.Done = true
		}
		st.Keep = keepAlive
		out, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE search_scrolls SET state = $2::jsonb, expires_at = now() + make_interval(secs => $3::float8)
			WHERE id = $1`, scrollID, string(out), keep.Seconds()); err != nil {
			return err
		}
		res.resp["_scroll_id"] = scrollID
		resp = res.resp
		return nil
	}
	var err error
	if reads := b.reads(ctx); reads == b.pool {
		// One transaction for the row and the page: one connection.
		err = b.limited(ctx, b.pool, b.limit(0), pgx.TxOptions{}, "search", func(ctx context.Context, l *limitedTx) error {
			return page(ctx, l.tx, l)
		})
	} else {
		// The row on the primary, locked while the page is read on the
		// read replica.
		err = pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			return b.limited(ctx, reads, b.limit(0), searchTx, "search", func(ctx context.Context, l *limitedTx) error {
				return page(ctx, tx, l)
			})
		})
	}
	if err != nil {
		var bad *search.BadRequestError
		if errors.As(err, &bad) {
			return nil, err
		}
		return nil, fmt.Errorf("scroll: %w", err)
	}
	return resp, nil
}

var _ search.Backend = (*Backend)(nil)

// hitBytes is about what a hit adds to the answer: its row without the
// document, and the document as _source filtering leaves it.
func (p *plan) hitBytes(vals []any, hit map[string]any) int {
	raw, _ := vals[3].(string)
	n := rowBytes(vals) - len(raw)
	switch src, ok := hit["_source"]; {
	case !ok:
	case p.source == nil:
		n += len(raw)
	default:
		b, _ := json.Marshal(src)
		n += len(b)
	}
	return n
}

// rowBytes is about what a row adds to an answer: its text and bytes, and
// a few bytes for every other value (budget.Spend counts it).
func rowBytes(vals []any) int {
	n := 0
	for _, v := range vals {
		switch v := v.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		default:
			n += 8
		}
	}
	return n
}
