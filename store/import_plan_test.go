package store_test

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/store"
)

// TestImportFindsStoredCopiesByIndex: the statements that store a batch
// find the batch's stored copies by index probes, one per document, with
// statistics as an import keeps them (importer: analysed each time the
// documents stored have doubled, so they count at least half the rows). A
// join planned from such statistics read every document of the data owner
// for every batch: a 10,000,000-document import slowed to 500 documents/s
// by its 400,000th.
//
// And with the statistics of the empty table (a new database, or a month's
// partition analysed before its first document) while 20,000 documents
// are stored: the probes of the first groups stored into it must not
// depend on statistics the server refreshes only seconds later. Planned on
// them, a group of 5,000 reports' measurements ran into the 60 s statement
// timeout at the start of bench/probes.sh.
func TestImportFindsStoredCopiesByIndex(t *testing.T) {
	t.Run("analysed at half", func(t *testing.T) { importFindsStoredCopiesByIndex(t, false) })
	t.Run("analysed while empty", func(t *testing.T) { importFindsStoredCopiesByIndex(t, true) })
}

func importFindsStoredCopiesByIndex(t *testing.T, analysedEmpty bool) {
	ctx := context.Background()
	_, pool := ownDB(t, "fleetgraph_importplan")
	owner := newOwnerIn(t, pool, "planner", nil)
	client := uuid.NewString()
	const stored, batch = 20000, 500
	if analysedEmpty {
		if _, err := pool.Exec(ctx, `ANALYZE documents`); err != nil {
			t.Fatal(err)
		}
	}
	for _, from := range []int{1, stored/2 + 1} {
		_, err := pool.Exec(ctx, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, created_at, doc)
			SELECT $1, 'measurement', md5(g::text)::uuid::text, $2::uuid, 'VideoMeasurement', '2026-11-01'::timestamptz + g * interval '1 minute', '{}'
			FROM generate_series($3::int, $3::int + $4::int - 1) g`, owner, client, from, stored/2)
		if err != nil {
			t.Fatal(err)
		}
		if from == 1 && !analysedEmpty {
			if _, err := pool.Exec(ctx, `ANALYZE documents`); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Half the batch is stored already (at another time: moved), half new.
	docs := make([]store.Document, batch)
	for g := 1; g <= batch; g++ {
		docs[g-1] = measurementDoc(2*g, client, time.Date(2026, 11, 20, 0, 0, g, 0, time.UTC))
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for _, mayMove := range []bool{true, false} {
		upsert, args := store.ImportStatement(owner, docs, false, true, mayMove)
		if read, plan := documentRowsRead(t, tx, upsert, args...); read > batch {
			t.Errorf("the upsert (may move %v) read %.0f stored documents for a batch of %d (of %d stored): a scan, not index probes\n%s",
				mayMove, read, batch, stored, plan)
		}
	}
}

// measurementDoc is the measurement of client whose id is
// md5(g::text)::uuid::text, as the tests' stored documents are made in SQL.
func measurementDoc(g int, client string, at time.Time) store.Document {
	typ := "VideoMeasurement"
	return store.Document{Kind: "measurement", DocID: uuid.UUID(md5.Sum([]byte(strconv.Itoa(g)))).String(),
		ClientUUID: &client, Type: &typ, CreatedAt: at, Doc: []byte(`{"a":1}`)}
}

// documentRowsRead runs sql with args under EXPLAIN ANALYZE in tx and
// answers the rows its plan read of the documents, and the plan.
func documentRowsRead(t *testing.T, tx pgx.Tx, sql string, args ...any) (float64, []byte) {
	t.Helper()
	var plan []byte
	if err := tx.QueryRow(context.Background(), `EXPLAIN (ANALYZE, FORMAT JSON) `+sql, args...).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var root []struct{ Plan planNode }
	if err := json.Unmarshal(plan, &root); err != nil || len(root) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	return root[0].Plan.documentRowsRead(), plan
}

type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	ActualRows   float64    `json:"Actual Rows"`
	ActualLoops  float64    `json:"Actual Loops"`
	Filtered     float64    `json:"Rows Removed by Filter"`
	Plans        []planNode `json:"Plans"`
}

// documentRowsRead sums the rows the plan's scans read from the documents
// table's partitions, those their filters removed included (an index on
// other columns reads every row of the data owner and filters by id).
func (n planNode) documentRowsRead() float64 {
	var sum float64
	if strings.HasSuffix(n.NodeType, "Scan") && strings.HasPrefix(n.RelationName, "documents_") {
		sum += (n.ActualRows + n.Filtered) * n.ActualLoops
	}
	for _, c := range n.Plans {
		sum += c.documentRowsRead()
	}
	return sum
}
