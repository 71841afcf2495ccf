package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// The export listing reads its page's rows by (id, created_at): pages
// spanning several month partitions come whole, newest first, and hold
// none of another data owner's documents of the same months.
func TestExportDocumentsPagesAcrossMonthPartitions(t *testing.T) {
	ctx := context.Background()
	st, pool := ownDB(t, "fleetgraph_export_parts")
	mine := newOwnerIn(t, pool, "mine", nil)
	other := newOwnerIn(t, pool, "other", nil)
	at := func(month time.Month, day int) time.Time { return time.Date(2025, month, day, 12, 0, 0, 0, time.UTC) }
	for _, m := range []time.Month{3, 4, 5} {
		if _, err := pool.Exec(ctx, `SELECT fg_documents_partition($1)`, at(m, 1)); err != nil {
			t.Fatal(err)
		}
	}
	docs := []struct {
		id string
		at time.Time
	}{
		{"mar", at(3, 15)}, {"apr-a", at(4, 15)}, {"apr-b", at(4, 15)}, {"may", at(5, 15)}, {"jun-default", at(6, 15)},
	}
	for _, owner := range []int64{mine, other} {
		client := uuid.NewString()
		var batch []store.Document
		for _, d := range docs {
			id := d.id
			if owner == other {
				id = "other-" + id
			}
			batch = append(batch, mustParse(t, vocab.KindMeasurement, measurementJSON(id, client, d.at.Format(time.RFC3339), "")))
		}
		if res, err := st.InsertDocuments(ctx, owner, batch); err != nil || res.Inserted != len(batch) {
			t.Fatalf("insert: %+v, %v", res, err)
		}
	}
	// apr-b was inserted after apr-a at the same moment: its id is higher,
	// so it comes first.
	want := []string{"jun-default", "may", "apr-b", "apr-a", "mar"}
	for _, limit := range []int64{1, 2, 5} {
		var got []string
		for offset := int64(0); offset < int64(len(want)); offset += limit {
			page, total, err := st.ExportDocuments(ctx, mine, vocab.KindMeasurement, store.ExportFilter{Limit: limit, Offset: offset})
			if err != nil {
				t.Fatal(err)
			}
			if total != int64(len(want)) {
				t.Fatalf("limit %d offset %d: total %d, want %d", limit, offset, total, len(want))
			}
			for _, d := range page {
				got = append(got, d.DocID)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("pages of %d: %v, want %v", limit, got, want)
		}
	}
}
