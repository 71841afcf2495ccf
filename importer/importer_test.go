package importer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/importer"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// The tests that store documents run outside package importer: apitest's
// server imports the client API, which stores through this package.

func TestMain(m *testing.M) { apitest.Main(m) }

// measurement is one NDJSON line of a measurement of client c.
func measurement(id, c string) string {
	return fmt.Sprintf(`{"id":%q,"type":"WebMeasurement","client_uuid":%q,"created_at":"2026-11-02T10:00:00Z"}`, id, c)
}

func TestRunStoresTheDocumentsAndReportsBadLines(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "importer-run")
	c := uuid.NewString()
	in := strings.Join([]string{
		measurement("a", c),
		`{"id":"broken",`,
		measurement("b", c),
		measurement("a", c)[:60] + strings.Repeat(" ", 200) + "}", // over MaxLineBytes
		measurement("a", c) + ` `,                                 // the same document again: unchanged
	}, "\n")
	var out bytes.Buffer
	s, err := importer.Run(context.Background(), e.Store, strings.NewReader(in), importer.Options{
		OwnerID: o.ID, Kind: vocab.KindMeasurement, Batch: 1, Workers: 3, MaxLineBytes: 200, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	want := importer.Summary{InsertResult: store.InsertResult{Inserted: 2, Unchanged: 1, ClientsCreated: 1}, Bad: 2}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	if got := out.String(); !strings.HasPrefix(got, "line 2: invalid JSON") ||
		!strings.Contains(got, "\nline 4: longer than 200 bytes (the --max-line-bytes limit): ") || strings.Count(got, "\n") != 2 {
		t.Errorf("bad lines reported as %q", got)
	}
}

// syncBuffer is a bytes.Buffer safe to read while the importer writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

// With Progress set, Run redraws a progress line (lines, rate, share of
// Size read, loaded and bad) while the input stays open and clears it at
// the end.
func TestRunDrawsAndClearsTheProgressLine(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "importer-progress")
	line := measurement("p", uuid.NewString()) + "\n"
	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := importer.Run(context.Background(), e.Store, pr, importer.Options{OwnerID: o.ID, Kind: vocab.KindMeasurement,
			Out: &out, Progress: true, Size: int64(2 * len(line))})
		done <- err
	}()
	fmt.Fprint(pw, line)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "1 lines  "); {
		if time.Now().After(deadline) {
			t.Fatalf("no progress line after 20 s: %q", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "\r\x1b[K1 lines  ") || !strings.Contains(got, " lines/s  50.0%  (loaded ") ||
		!strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress output %q", got)
	}
}

// An import whose context has ended stores nothing and says why.
func TestRunStopsWhenTheContextHasEnded(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "importer-cancel")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := importer.Run(ctx, e.Store, strings.NewReader(measurement("x", uuid.NewString())), importer.Options{OwnerID: o.ID, Kind: vocab.KindMeasurement})
	if !errors.Is(err, context.Canceled) || s.Loaded() != 0 {
		t.Errorf("err = %v, %d loaded; want context.Canceled, 0", err, s.Loaded())
	}
}

// Store sets apart a document the database refuses by halving the batch,
// and names it by its index in the batch; the others are stored.
func TestStoreNamesTheRefusedDocumentByIndex(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "importer-store")
	c := uuid.NewString()
	docs := make([]store.Document, 7)
	for i := range docs {
		d, err := store.ParseDocument(vocab.KindMeasurement, []byte(measurement(fmt.Sprintf("s%d", i), c)))
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = d
	}
	docs[5].DocID = "nul\x00id" // PostgreSQL's text takes no NUL
	bad := map[int]error{}
	res, err := importer.Store(context.Background(), e.Store, o.ID, docs, func(i int, err error) { bad[i] = err })
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || bad[5] == nil || res.Inserted != 6 {
		t.Errorf("refused %v, inserted %d; want only index 5 refused and 6 inserted", bad, res.Inserted)
	}
}

// An import keeps the documents' statistics within half of what it has
// stored (with autovacuum off, as on the test machine, nothing else would
// analyse the partition): after 25,000 documents the partition's row count
// in pg_class is at least 12,500, where an import that never analyses
// leaves the 0 of the empty table it began with; the 100 clients it
// created are counted too.
func TestRunKeepsTheStatisticsWithTheLoad(t *testing.T) {
	ctx := context.Background()
	db, st, err := testdb.Create(ctx, "fleetgraph_importstats", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Drop() })
	var owner int64
	if err := st.Pool().QueryRow(ctx, `INSERT INTO data_owners (slug, name) VALUES ('stats', 'stats') RETURNING id`).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `ANALYZE documents`); err != nil {
		t.Fatal(err)
	}
	const n, clients = 25000, 100
	var in strings.Builder
	cs := make([]string, clients)
	for i := range cs {
		cs[i] = uuid.NewString()
	}
	for i := range n {
		c := cs[i%clients]
		fmt.Fprintf(&in, `{"id":"m-%06d-%s","type":"WebMeasurement","client_uuid":%q,"created_at":"2026-11-02T10:00:00Z"}`+"\n", i, c, c)
	}
	s, err := importer.Run(ctx, st, strings.NewReader(in.String()), importer.Options{OwnerID: owner, Kind: vocab.KindMeasurement, Batch: 1000})
	if err != nil || s.Inserted != n {
		t.Fatalf("import: %+v, %v", s, err)
	}
	var tuples float64
	err = st.Pool().QueryRow(ctx, `SELECT c.reltuples FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
		WHERE i.inhparent = 'documents'::regclass AND pg_get_expr(c.relpartbound, c.oid) LIKE '%2026-11-01%'`).Scan(&tuples)
	if err != nil {
		t.Fatal(err)
	}
	if tuples < n/2 {
		t.Errorf("after %d documents the partition's statistics count %.0f rows, want at least %d", n, tuples, n/2)
	}
	// The clients the import created are analysed with the documents.
	if err := st.Pool().QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'clients'::regclass`).Scan(&tuples); err != nil {
		t.Fatal(err)
	}
	if tuples != clients {
		t.Errorf("after the import the clients' statistics count %.0f rows, want %d", tuples, clients)
	}
}
