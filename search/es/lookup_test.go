package es

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// The exact body of a lookup index's creation: index mode lookup, the
// fields of search.LookupClientFields with their contract types.
const lookupCreateBody = `{"settings":{"index":{"mode":"lookup"}},"mappings":{"properties":{` +
	`"client_uuid":{"type":"keyword"},"client_label":{"type":"keyword"},"client_extra_label":{"type":"keyword"},` +
	`"client_type":{"type":"keyword"},"client_tags":{"type":"keyword"},"client_created_at":{"type":"date"}}}}`

const (
	acmeLookup = "analytics-production-acme-lookup-clients"
	betaLookup = "analytics-production-beta-lookup-clients"
)

// lookupES answers index creations and bulk requests like Elasticsearch.
func lookupES(r apitest.ESRequest) (int, string) {
	if r.Method == http.MethodPut {
		return 200, `{"acknowledged":true,"shards_acknowledged":true,"index":"` + strings.TrimPrefix(r.Path, "/") + `"}`
	}
	return bulkAnswer()(r)
}

// newLookupIndexer is an indexer that runs a lookup pass on every RunOnce.
func newLookupIndexer(t *testing.T, f *apitest.FakeES, pool *pgxpool.Pool, batch int) *Indexer {
	t.Helper()
	ix := newTestIndexer(t, f, pool, batch)
	ix.LookupInterval = 0
	return ix
}

// addClient inserts a client; tags nil is NULL.
func addClient(t *testing.T, pool *pgxpool.Pool, owner int64, uuid, typ string, label, extra *string, tags []string, created string) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(context.Background(), `
		INSERT INTO clients (data_owner_id, uuid, type, label, extra_label, tags, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz) RETURNING id`,
		owner, uuid, typ, label, extra, tags, created).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wantCreate checks the creation request of a lookup index.
func wantCreate(t *testing.T, r apitest.ESRequest, index string) {
	t.Helper()
	if r.Method != http.MethodPut || r.Path != "/"+index || len(r.Query) != 0 {
		t.Fatalf("request %s %s?%v, want PUT /%s", r.Method, r.Path, r.Query, index)
	}
	if r.ContentType != "application/json" {
		t.Fatalf("content type %q", r.ContentType)
	}
	apitest.SameJSON(t, "body", r.Body, lookupCreateBody)
}

// lookupDoc is one expected action of a lookup bulk request: an index of
// exactly source (delete when source is "").
type lookupDoc struct{ index, id, source string }

// wantLookupBulk checks a bulk request line by line: the action with an
// external version, greater than the last one seen (*last), and the source
// byte for byte (field order included).
func wantLookupBulk(t *testing.T, r apitest.ESRequest, last *int64, want ...lookupDoc) {
	t.Helper()
	if r.Method != http.MethodPost || r.Path != "/_bulk" || len(r.Query) != 0 || r.ContentType != "application/x-ndjson" {
		t.Fatalf("bulk request %s %s?%v (%s)", r.Method, r.Path, r.Query, r.ContentType)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if !bytes.HasSuffix(r.Body, []byte("\n")) {
		t.Fatal("bulk body does not end with a newline")
	}
	i := 0
	for n, w := range want {
		if i >= len(lines) {
			t.Fatalf("bulk body has %d actions, want %d:\n%s", n, len(want), r.Body)
		}
		a, v := actionVersion(t, lines[i])
		op := "index"
		if w.source == "" {
			op = "delete"
		}
		if wa := `{"` + op + `":{"_id":"` + w.id + `","_index":"` + w.index + `"}}`; a != wa {
			t.Fatalf("action %d = %s, want %s", n, lines[i], wa)
		}
		if v <= *last {
			t.Fatalf("action %d: version %d not above %d", n, v, *last)
		}
		*last = v
		i++
		if op == "delete" {
			continue
		}
		if i >= len(lines) || lines[i] != w.source {
			t.Fatalf("source %d =\n%s\nwant\n%s", n, lines[min(i, len(lines)-1)], w.source)
		}
		i++
	}
	if i != len(lines) {
		t.Fatalf("bulk body has more than the %d actions wanted:\n%s", len(want), r.Body)
	}
}

// quiet runs RunOnce a few times and checks that nothing is sent.
func quiet(t *testing.T, ix *Indexer, f *apitest.FakeES) {
	t.Helper()
	before := len(f.Requests())
	for range 3 {
		if n, err := ix.RunOnce(context.Background()); n != 0 || err != nil {
			t.Fatalf("nothing to do: %d, %v", n, err)
		}
	}
	if reqs := f.Requests(); len(reqs) != before {
		t.Fatalf("%d requests with nothing to do: %+v", len(reqs)-before, reqs[before:])
	}
}

func lookupRows(t *testing.T, pool *pgxpool.Pool) (indices, docs int) {
	t.Helper()
	err := pool.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM es_lookup_indices), (SELECT count(*) FROM es_lookup_documents)`).Scan(&indices, &docs)
	if err != nil {
		t.Fatal(err)
	}
	return indices, docs
}

const (
	uuid1 = "11111111-1111-4111-8111-111111111111"
	uuid2 = "22222222-2222-4222-8222-222222222222"
	uuid3 = "33333333-3333-4333-8333-333333333333"
	uuid4 = "abcdef00-0000-4000-8000-000000000004"
)

// A small fleet: acme owns three clients (one shared with beta), beta one,
// gamma none. Each data owner gets its lookup index, each client one
// document in its own data owner's index only.
func TestLookupIndexCreatedAndFleetIndexed(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, lookupES)
	acme, beta := addOwner(t, pool, "acme"), addOwner(t, pool, "beta")
	addOwner(t, pool, "gamma")
	// Microseconds are cut to milliseconds; another offset becomes UTC.
	shared := addClient(t, pool, acme, uuid1, "automator", apitest.Ptr("Kitchen"), nil, []string{"living", "4k"}, "2026-11-01 06:00:00.123456+00")
	addClient(t, pool, acme, uuid2, "browser", nil, nil, []string{}, "2026-11-01 08:00:00+02")
	addClient(t, pool, acme, uuid3, "automator", apitest.Ptr(`Bob's "den"`), apitest.Ptr("2nd floor"), nil, "2025-12-31 23:59:59.9999+00")
	addClient(t, pool, beta, strings.ToUpper(uuid4), "automator", apitest.Ptr("Lab"), nil, []string{"x"}, "2026-01-02 03:04:05.006+00")
	exec(t, pool, `INSERT INTO client_shares (client_id, data_owner_id) VALUES ($1, $2)`, shared, beta)

	ix := newLookupIndexer(t, f, pool, 10)
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 3+4 {
		t.Fatalf("first pass: %d, %v; want 3 indices and 4 documents", n, err)
	}
	reqs := f.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 3 creations and a bulk: %+v", len(reqs), reqs)
	}
	wantCreate(t, reqs[0], acmeLookup)
	wantCreate(t, reqs[1], betaLookup)
	wantCreate(t, reqs[2], "analytics-production-gamma-lookup-clients")
	var last int64
	wantLookupBulk(t, reqs[3], &last,
		lookupDoc{acmeLookup, uuid1, `{"client_uuid":"` + uuid1 + `","client_label":"Kitchen","client_extra_label":null,"client_type":"automator","client_tags":["living","4k"],"client_created_at":"2026-11-01T06:00:00.123Z"}`},
		lookupDoc{acmeLookup, uuid2, `{"client_uuid":"` + uuid2 + `","client_label":null,"client_extra_label":null,"client_type":"browser","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`},
		lookupDoc{acmeLookup, uuid3, `{"client_uuid":"` + uuid3 + `","client_label":"Bob's \"den\"","client_extra_label":"2nd floor","client_type":"automator","client_tags":null,"client_created_at":"2025-12-31T23:59:59.999Z"}`},
		lookupDoc{betaLookup, uuid4, `{"client_uuid":"` + uuid4 + `","client_label":"Lab","client_extra_label":null,"client_type":"automator","client_tags":["x"],"client_created_at":"2026-01-02T03:04:05.006Z"}`},
	)
	// The documents have exactly the contract's fields, in its order.
	for _, l := range parseBulk(t, reqs[3]) {
		dec := jsonKeys(t, l.source)
		if fmt.Sprint(dec) != fmt.Sprint(search.LookupClientFields) {
			t.Fatalf("fields %v, want %v", dec, search.LookupClientFields)
		}
	}
	if i, d := lookupRows(t, pool); i != 3 || d != 4 {
		t.Fatalf("recorded %d indices, %d documents; want 3, 4", i, d)
	}
	quiet(t, ix, f)
}

// jsonKeys lists the top-level keys of a JSON object in order.
func jsonKeys(t *testing.T, src string) []string {
	t.Helper()
	var keys []string
	depth := 0
	expectKey := false
	// A tiny scanner is enough: keys are the strings right after { or , at
	// depth 1.
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '{', '[':
			depth++
			expectKey = c == '{' && depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			j := i + 1
			for ; src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			if expectKey {
				keys = append(keys, src[i+1:j])
				expectKey = false
			}
			i = j
		}
	}
	return keys
}

// Changes are sent, only they; a restart sends nothing when nothing
// changed, and what changed while the server was down.
func TestLookupChangesResynced(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, lookupES)
	acme := addOwner(t, pool, "acme")
	addClient(t, pool, acme, uuid1, "automator", apitest.Ptr("Kitchen"), nil, nil, "2026-11-01 06:00:00+00")
	addClient(t, pool, acme, uuid2, "automator", apitest.Ptr("Hall"), nil, nil, "2026-11-01 06:00:00+00")
	ix := newLookupIndexer(t, f, pool, 10)
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 3 {
		t.Fatalf("first pass: %d, %v", n, err)
	}
	var last int64
	wantLookupBulk(t, f.Requests()[1], &last,
		lookupDoc{acmeLookup, uuid1, `{"client_uuid":"` + uuid1 + `","client_label":"Kitchen","client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`},
		lookupDoc{acmeLookup, uuid2, `{"client_uuid":"` + uuid2 + `","client_label":"Hall","client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`},
	)
	quiet(t, ix, f)

	// A label change: that client alone. A change to a column outside the
	// document: nothing.
	exec(t, pool, `UPDATE clients SET label = 'Living room', last_seen_at = now() WHERE uuid = $1`, uuid1)
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("label change: %d, %v", n, err)
	}
	reqs := f.Requests()
	wantLookupBulk(t, reqs[len(reqs)-1], &last,
		lookupDoc{acmeLookup, uuid1, `{"client_uuid":"` + uuid1 + `","client_label":"Living room","client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`})
	exec(t, pool, `UPDATE clients SET last_seen_at = now(), updated_at = now() WHERE uuid = $1`, uuid2)
	quiet(t, ix, f)

	// The server restarts: nothing to send.
	ix.Close()
	ix = newLookupIndexer(t, f, pool, 10)
	quiet(t, ix, f)

	// Changed while the server was down: tags set, a client added, one
	// gone (clients go with their data owner only, but the index follows
	// the table either way).
	ix.Close()
	exec(t, pool, `UPDATE clients SET tags = '{a}', extra_label = 'x' WHERE uuid = $1`, uuid2)
	addClient(t, pool, acme, uuid3, "browser", nil, nil, nil, "2026-11-02 00:00:00+00")
	exec(t, pool, `DELETE FROM clients WHERE uuid = $1`, uuid1)
	ix = newLookupIndexer(t, f, pool, 10)
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 3 {
		t.Fatalf("after restart: %d, %v", n, err)
	}
	reqs = f.Requests()
	wantLookupBulk(t, reqs[len(reqs)-1], &last,
		lookupDoc{acmeLookup, uuid1, ""},
		lookupDoc{acmeLookup, uuid2, `{"client_uuid":"` + uuid2 + `","client_label":"Hall","client_extra_label":"x","client_type":"automator","client_tags":["a"],"client_created_at":"2026-11-01T06:00:00.000Z"}`},
		lookupDoc{acmeLookup, uuid3, `{"client_uuid":"` + uuid3 + `","client_label":null,"client_extra_label":null,"client_type":"browser","client_tags":null,"client_created_at":"2026-11-02T00:00:00.000Z"}`},
	)
	if i, d := lookupRows(t, pool); i != 1 || d != 2 {
		t.Fatalf("recorded %d indices, %d documents; want 1, 2", i, d)
	}
	quiet(t, ix, f)
}

// A client changed while its document is on the way is sent again.
func TestLookupChangeDuringSync(t *testing.T) {
	pool := testPool(t)
	acme := addOwner(t, pool, "acme")
	addClient(t, pool, acme, uuid1, "automator", apitest.Ptr("Old"), nil, nil, "2026-11-01 06:00:00+00")
	changed := false
	f := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		if r.Path == "/_bulk" && !changed {
			changed = true
			if _, err := pool.Exec(context.Background(), `UPDATE clients SET label = 'New' WHERE uuid = $1`, uuid1); err != nil {
				return 500, `{"error":"` + err.Error() + `"}`
			}
		}
		return lookupES(r)
	})
	ix := newLookupIndexer(t, f, pool, 10)
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 2 {
		t.Fatalf("first pass: %d, %v", n, err)
	}
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("second pass: %d, %v", n, err)
	}
	reqs := f.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want creation and two bulks", len(reqs))
	}
	var last int64
	wantLookupBulk(t, reqs[1], &last, lookupDoc{acmeLookup, uuid1, `{"client_uuid":"` + uuid1 + `","client_label":"Old","client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`})
	wantLookupBulk(t, reqs[2], &last, lookupDoc{acmeLookup, uuid1, `{"client_uuid":"` + uuid1 + `","client_label":"New","client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`})
	quiet(t, ix, f)
}

// A large fleet goes in bulk requests of BatchSize documents, one after
// the other even when the interval has not passed; then the interval
// holds.
func TestLookupBatches(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, lookupES)
	acme := addOwner(t, pool, "acme")
	var ids []string
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i)
		ids = append(ids, id)
		addClient(t, pool, acme, id, "automator", nil, nil, nil, "2026-11-01 06:00:00+00")
	}
	doc := func(id string) lookupDoc {
		return lookupDoc{acmeLookup, id, `{"client_uuid":"` + id + `","client_label":null,"client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`}
	}
	ix := newTestIndexer(t, f, pool, 2)
	if ix.LookupInterval != -1 {
		t.Fatal("newTestIndexer should turn lookups off")
	}
	if NewIndexer(nil, nil, nil).LookupInterval != 5*time.Second {
		t.Fatal("default LookupInterval")
	}
	ix.LookupInterval = time.Hour
	for i, want := range []int{1 + 2, 2, 1, 0, 0} {
		if n, err := ix.RunOnce(context.Background()); err != nil || n != want {
			t.Fatalf("pass %d: %d, %v; want %d", i, n, err, want)
		}
	}
	reqs := f.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want creation and 3 bulks", len(reqs))
	}
	wantCreate(t, reqs[0], acmeLookup)
	var last int64
	wantLookupBulk(t, reqs[1], &last, doc(ids[0]), doc(ids[1]))
	wantLookupBulk(t, reqs[2], &last, doc(ids[2]), doc(ids[3]))
	wantLookupBulk(t, reqs[3], &last, doc(ids[4]))

	// Within the interval a change waits; then it goes.
	exec(t, pool, `UPDATE clients SET type = 'browser' WHERE uuid = $1`, ids[2])
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 0 {
		t.Fatalf("within the interval: %d, %v", n, err)
	}
	ix.LookupInterval = 0
	if n, err := ix.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("interval passed: %d, %v", n, err)
	}
	reqs = f.Requests()
	wantLookupBulk(t, reqs[len(reqs)-1], &last, lookupDoc{acmeLookup, ids[2], `{"client_uuid":"` + ids[2] + `","client_label":null,"client_extra_label":null,"client_type":"browser","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`})
}

// Elasticsearch failing: nothing is apitest.ESRequest, the same documents go once
// it is back. An index already there counts as created; another 400 does
// not.
func TestLookupElasticsearchFailingThenBack(t *testing.T) {
	pool := testPool(t)
	acme := addOwner(t, pool, "acme")
	addClient(t, pool, acme, uuid1, "automator", apitest.Ptr("Kitchen"), nil, nil, "2026-11-01 06:00:00+00")
	addClient(t, pool, acme, uuid2, "automator", apitest.Ptr("Hall"), nil, nil, "2026-11-01 06:00:00+00")
	docs := []lookupDoc{
		{acmeLookup, uuid1, `{"client_uuid":"` + uuid1 + `","client_label":"Kitchen","client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`},
		{acmeLookup, uuid2, `{"client_uuid":"` + uuid2 + `","client_label":"Hall","client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"2026-11-01T06:00:00.000Z"}`},
	}
	f := apitest.NewFakeES(t, func(apitest.ESRequest) (int, string) {
		return 500, `{"error":{"type":"exception","reason":"boom"},"status":500}`
	})
	ix := newLookupIndexer(t, f, pool, 10)
	ix.MinBackoff, ix.MaxBackoff = 0, 0 // retry at once (TestIndexerRunLookupFailing has the backoff)
	ctx := context.Background()

	// The creation fails: nothing else is sent, nothing apitest.ESRequest.
	var le *LookupError
	if n, err := ix.RunOnce(ctx); !errors.As(err, &le) || n != 0 {
		t.Fatalf("creation 500: %d, %v", n, err)
	}
	// A 400 other than "already exists" fails too.
	f.SetAnswer(func(apitest.ESRequest) (int, string) {
		return 400, `{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"unknown setting [index.mode] value [lookup]"}],"type":"illegal_argument_exception","reason":"unknown setting"},"status":400}`
	})
	if n, err := ix.RunOnce(ctx); err == nil || n != 0 || !strings.Contains(err.Error(), "index.mode") {
		t.Fatalf("creation 400: %d, %v", n, err)
	}
	if i, d := lookupRows(t, pool); i != 0 || d != 0 {
		t.Fatalf("recorded %d indices, %d documents after failures", i, d)
	}
	// Already there (an earlier attempt's answer was lost): created. The
	// bulk then fails for one item (503): nothing apitest.ESRequest.
	f.SetAnswer(func(r apitest.ESRequest) (int, string) {
		if r.Method == http.MethodPut {
			return 400, `{"error":{"root_cause":[{"type":"resource_already_exists_exception","reason":"index [` + acmeLookup + `/x] already exists"}],"type":"resource_already_exists_exception","reason":"index [` + acmeLookup + `/x] already exists","index":"` + acmeLookup + `"},"status":400}`
		}
		return bulkAnswer(201, 503)(r)
	})
	if n, err := ix.RunOnce(ctx); err == nil || n != 1 || !strings.Contains(err.Error(), uuid2) {
		t.Fatalf("bulk item 503: %d, %v", n, err)
	}
	if i, d := lookupRows(t, pool); i != 1 || d != 0 {
		t.Fatalf("recorded %d indices, %d documents; want 1, 0", i, d)
	}
	// Down altogether for a while (a 500: the client retries a 503 by
	// itself).
	f.SetAnswer(func(apitest.ESRequest) (int, string) { return 500, `{"error":"unavailable"}` })
	if n, err := ix.RunOnce(ctx); err == nil || n != 0 {
		t.Fatalf("bulk 503: %d, %v", n, err)
	}
	// Back: the same documents, with newer versions; then quiet.
	f.SetAnswer(lookupES)
	if n, err := ix.RunOnce(ctx); err != nil || n != 2 {
		t.Fatalf("back: %d, %v", n, err)
	}
	reqs := f.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want PUT, PUT, PUT, bulk, bulk, bulk", len(reqs))
	}
	for _, r := range reqs[:3] {
		wantCreate(t, r, acmeLookup)
	}
	var last int64
	for _, r := range reqs[3:] {
		wantLookupBulk(t, r, &last, docs...)
	}
	if i, d := lookupRows(t, pool); i != 1 || d != 2 {
		t.Fatalf("recorded %d indices, %d documents; want 1, 2", i, d)
	}
	quiet(t, ix, f)
}

// A cluster that refuses lookup indices (older than 8.18) does not slow
// the documents down: the lookup pass retries on a backoff of its own.
func TestIndexerRunLookupFailing(t *testing.T) {
	pool := testPool(t)
	f := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		if r.Method == http.MethodPut {
			return 400, `{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"unknown value for [index.mode] must be one of [standard, time_series, logsdb], but was [lookup]"}],"type":"illegal_argument_exception","reason":"unknown value for [index.mode]"},"status":400}`
		}
		return bulkAnswer()(r)
	})
	acme := addOwner(t, pool, "acme")
	addClient(t, pool, acme, uuid1, "automator", nil, nil, nil, "2026-11-01 06:00:00+00")
	var last int64
	for i := range 3 {
		last = addDoc(t, pool, acme, "measurement", fmt.Sprintf("m%d", i), apitest.Ptr("VideoMeasurement"), `{}`)
	}
	ix := newLookupIndexer(t, f, pool, 1)
	ix.Idle, ix.MinBackoff, ix.MaxBackoff = 5*time.Millisecond, time.Hour, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for cursor(t, pool) < last {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("cursor %d never reached %d: requests %+v", cursor(t, pool), last, f.Requests())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
	puts, bulks := 0, 0
	for _, r := range f.Requests() {
		if r.Method == http.MethodPut {
			wantCreate(t, r, acmeLookup)
			puts++
		} else {
			wantLines(t, parseBulk(t, r), []bulkLine{{action(videoIndex, fmt.Sprintf("m%d", bulks)), `{}`}})
			bulks++
		}
	}
	if puts != 1 || bulks != 3 {
		t.Fatalf("%d creations, %d bulk requests; want 1 (then the backoff) and 3", puts, bulks)
	}
	if i, d := lookupRows(t, pool); i != 0 || d != 0 {
		t.Fatalf("recorded %d indices, %d documents", i, d)
	}
}

// A deleted data owner's tombstone drops its lookup index with the others;
// a new data owner of the same slug gets its own only after that, however
// long the tombstone waits.
func TestLookupDeletedDataOwner(t *testing.T) {
	pool := testPool(t)
	resolved := `{"indices":[{"name":"` + videoIndex + `","attributes":["open"]},` +
		`{"name":"` + acmeLookup + `","attributes":["open"]}],"aliases":[],"data_streams":[]}`
	f := apitest.NewFakeES(t, func(r apitest.ESRequest) (int, string) {
		switch {
		case r.Method == http.MethodGet && r.Path == "/_resolve/index/analytics-production-acme-*":
			return 200, resolved
		case r.Method == http.MethodDelete:
			return 200, `{"acknowledged":true}`
		}
		return lookupES(r)
	})
	acme, zeta := addOwner(t, pool, "acme"), addOwner(t, pool, "zeta")
	addClient(t, pool, acme, uuid1, "automator", apitest.Ptr("Old"), nil, nil, "2026-11-01 06:00:00+00")
	addDoc(t, pool, acme, "measurement", "m1", apitest.Ptr("VideoMeasurement"), `{"id":"m1"}`)
	ix := newLookupIndexer(t, f, pool, 10)
	indexAll(t, ix, pool, lastVersion(t, pool))
	quiet(t, ix, f)
	before := len(f.Requests())

	// A transaction holding an older version keeps the tombstone waiting.
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	addDoc(t, tx, zeta, "anomaly_event", "z1", nil, `{"id":"z1"}`)
	exec(t, pool, `DELETE FROM data_owners WHERE id = $1`, acme)
	if i, d := lookupRows(t, pool); i != 1 || d != 0 {
		t.Fatalf("recorded %d indices, %d documents; want zeta's index alone", i, d)
	}
	tomb := lastVersion(t, pool)
	acme2 := addOwner(t, pool, "acme")
	addClient(t, pool, acme2, uuid2, "browser", apitest.Ptr("New"), nil, nil, "2026-11-02 06:00:00+00")
	quiet(t, ix, f)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(f.Requests()) < before+5 {
		if _, err := ix.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests %+v", f.Requests()[before:])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c := cursor(t, pool); c < tomb {
		t.Fatalf("cursor %d before the tombstone %d", c, tomb)
	}
	reqs := f.Requests()[before:]
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want bulk, resolve, delete, create, bulk: %+v", len(reqs), reqs)
	}
	wantLines(t, parseBulk(t, reqs[0]), []bulkLine{{action("analytics-production-zeta-anomaly_events", "z1"), `{"id":"z1"}`}})
	if r := reqs[1]; r.Method != http.MethodGet || r.Path != "/_resolve/index/analytics-production-acme-*" {
		t.Fatalf("resolve request %s %s", r.Method, r.Path)
	}
	if r := reqs[2]; r.Method != http.MethodDelete || r.Path != "/"+videoIndex+","+acmeLookup {
		t.Fatalf("delete request %s %s", r.Method, r.Path)
	}
	wantCreate(t, reqs[3], acmeLookup)
	var last int64
	wantLookupBulk(t, reqs[4], &last, lookupDoc{acmeLookup, uuid2, `{"client_uuid":"` + uuid2 + `","client_label":"New","client_extra_label":null,"client_type":"browser","client_tags":null,"client_created_at":"2026-11-02T06:00:00.000Z"}`})
	quiet(t, ix, f)
}

// Clients created by an import (store.InsertDocuments, as `fleetgraph
// import` does) land in the lookup index.
func TestLookupImportedClients(t *testing.T) {
	db, st, err := testdb.Create(context.Background(), "fleetgraph_test_es", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Drop() })
	pool := st.Pool()
	f := apitest.NewFakeES(t, lookupES)
	acme := addOwner(t, pool, "acme")
	d, err := store.ParseDocument("measurement", []byte(`{"id":"m1","type":"VideoMeasurement","client_uuid":"`+uuid3+`","created_at":"2025-01-01T00:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := st.InsertDocuments(context.Background(), acme, []store.Document{d}); err != nil || res.ClientsCreated != 1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	var created time.Time
	if err := pool.QueryRow(context.Background(), `SELECT created_at FROM clients WHERE uuid = $1`, uuid3).Scan(&created); err != nil {
		t.Fatal(err)
	}
	ix := newLookupIndexer(t, f, pool, 10)
	// The measurement goes in its own bulk request, in the same pass or a
	// later one (once its version has settled).
	indexAll(t, ix, pool, lastVersion(t, pool))
	var lookups []apitest.ESRequest
	for _, r := range f.Requests() {
		if r.Method == http.MethodPut || bytes.Contains(r.Body, []byte(acmeLookup)) {
			lookups = append(lookups, r)
		}
	}
	if len(lookups) != 2 {
		t.Fatalf("%d lookup requests, want creation and bulk: %+v", len(lookups), lookups)
	}
	wantCreate(t, lookups[0], acmeLookup)
	var last int64
	wantLookupBulk(t, lookups[1], &last, lookupDoc{acmeLookup, uuid3, `{"client_uuid":"` + uuid3 + `","client_label":null,"client_extra_label":null,"client_type":"automator","client_tags":null,"client_created_at":"` +
		created.UTC().Format("2006-01-02T15:04:05.000Z") + `"}`})
}
