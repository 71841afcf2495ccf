package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// The package's tests share one fresh, migrated database, created by
// TestMain on FLEETGRAPH_TEST_DATABASE_URL (else the local PostgreSQL on
// 127.0.0.1:5432, else a private one) and dropped at the end.
var testStore *store.Store

func TestMain(m *testing.M) {
	st, drop, err := openTestDB()
	if err != nil {
		fmt.Fprintln(os.Stderr, "search/pg tests:", err)
		os.Exit(1)
	}
	testStore = st
	code := m.Run()
	st.Close()
	drop()
	os.Exit(code)
}

func openTestDB() (*store.Store, func(), error) {
	db, st, err := testdb.Create(context.Background(), "fleetgraph_searchpg", store.Options{})
	if err != nil {
		return nil, nil, err
	}
	return st, db.Drop, nil
}

func testHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// testPool is the pool of the package's test database.
func testPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	if testStore == nil {
		t.Fatal("test database not open (TestMain did not run)")
	}
	return testStore.Pool()
}

var testOwnerSeq atomic.Int64

// testOwner creates a data owner with a unique slug starting with prefix
// (other characters than lower case letters, digits and "_" become "_")
// and returns its id and slug.
func testOwner(t testing.TB, prefix string) (int64, string) {
	t.Helper()
	// Slugs are [a-z0-9_] (migration 00003); any other character becomes "_".
	prefix = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return '_'
	}, prefix)
	slug := fmt.Sprintf("%s_%d_%s", prefix, testOwnerSeq.Add(1), testHex(3))
	var id int64
	err := testPool(t).QueryRow(context.Background(),
		"INSERT INTO data_owners (slug, name) VALUES ($1, $2) RETURNING id", slug, "Test "+slug).Scan(&id)
	if err != nil {
		t.Fatalf("create data owner %s: %v", slug, err)
	}
	return id, slug
}

// insertDocs stores docs of one kind for the data owner, deriving the
// indexed columns from the document: id → doc_id, client_uuid, type,
// study.subject (or subject) → subject, measurement_id, created_at (RFC 3339;
// now when absent).
func insertDocs(t testing.TB, ownerID int64, kind search.Kind, docs ...map[string]any) {
	t.Helper()
	ctx := context.Background()
	batch := &pgx.Batch{}
	for _, doc := range docs {
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("insertDocs: marshal: %v", err)
		}
		id := fmt.Sprint(doc["id"])
		if doc["id"] == nil {
			t.Fatalf("insertDocs: document without id: %s", raw)
		}
		str := func(m map[string]any, k string) *string {
			if s, ok := m[k].(string); ok {
				return &s
			}
			return nil
		}
		subject := str(doc, "subject")
		if study, ok := doc["study"].(map[string]any); ok {
			if s := str(study, "subject"); s != nil {
				subject = s
			}
		}
		created := time.Now().UTC()
		if s, ok := doc["created_at"].(string); ok {
			if created, err = time.Parse(time.RFC3339Nano, s); err != nil {
				t.Fatalf("insertDocs: created_at %q: %v", s, err)
			}
		}
		batch.Queue(`INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc)
			VALUES ($1, $2, $3, $4::uuid, $5, $6, $7, $8, $9::jsonb)`,
			ownerID, string(kind), id, str(doc, "client_uuid"), str(doc, "type"), subject,
			str(doc, "measurement_id"), created, string(raw))
	}
	if err := testPool(t).SendBatch(ctx, batch).Close(); err != nil {
		t.Fatalf("insertDocs: %v", err)
	}
}
