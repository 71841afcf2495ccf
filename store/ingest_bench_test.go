package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// probeMeasurement is the i-th measurement of the shape bench/probeload
// sends (a study, the network and statistics).
func probeMeasurement(i int) []byte {
	return fmt.Appendf(nil, `{"id": "fd8e5ad9-9730-42f5-86c1-0222ec6b1701-%d", "type": "VideoMeasurement", "study": {"subject": "youtube", "study_id": "youtube-default", "study_name": "youtube default"}, "network": {"asn": 64500, "isp": "Example Net", "connection_type": "fiber"}, "created_at": "2026-11-29T11:08:23.247586189Z", "client_type": "automator", "client_uuid": "fd8e5ad9-9730-42f5-86c1-0222ec6b1701", "client_version": "3.6.0", "statistic_values": {"rtt_avg": %d.62, "stalling_count": 2, "throughput_mbps": 133.2, "initial_loading_time": %d}}`, i, i, i*3)
}

// BenchmarkParseDocument reads the columns of a probe report's 500
// measurements.
func BenchmarkParseDocument(b *testing.B) {
	raws := make([][]byte, 500)
	for i := range raws {
		raws[i] = probeMeasurement(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, raw := range raws {
			if _, err := store.ParseDocument("measurement", raw); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDetectMappings types a probe report's 500 measurements.
func BenchmarkDetectMappings(b *testing.B) {
	typ := "VideoMeasurement"
	docs := make([]store.Document, 500)
	for i := range docs {
		docs[i] = store.Document{Kind: "measurement", Type: &typ, Doc: probeMeasurement(i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(store.DetectMappings(docs, nil)); n != 16 {
			b.Fatalf("%d mappings", n)
		}
	}
}

// BenchmarkInsertDocuments stores groups of probe measurements of 50
// clients, four groups at a time, as the client API's writers store
// concurrent reports (clientapi/writer.go): groups of 25, one report each
// (a light load), and of 500 (a heavy one, which groups reports). What storing a
// document costs PostgreSQL and Go without HTTP and without the analyzer,
// whose inbox rows are written but not judged. The statistics are kept
// as the server keeps them (KeepStatistics every 20 groups). Reports
// documents/s.
func BenchmarkInsertDocuments(b *testing.B) {
	for _, group := range []int{25, 500} {
		b.Run(fmt.Sprintf("group-%d", group), func(b *testing.B) { benchmarkInsertDocuments(b, group) })
	}
}

func benchmarkInsertDocuments(b *testing.B, group int) {
	ctx := context.Background()
	db, st, err := testdb.Create(ctx, "fleetgraph_insertbench", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close(); db.Drop() })
	var owner int64
	if err := st.Pool().QueryRow(ctx, `INSERT INTO data_owners (slug, name) VALUES ('ingest', 'ingest') RETURNING id`).Scan(&owner); err != nil {
		b.Fatal(err)
	}
	const clients = 50
	var next atomic.Int64
	// write stores the next group of documents.
	write := func(docs []store.Document) error {
		g := int(next.Add(1))
		at := time.Now().UTC().Format(time.RFC3339Nano)
		for i := range docs {
			n := g*group + i
			raw := fmt.Appendf(nil, `{"id": "m-%d", "type": "VideoMeasurement", "study": {"subject": "youtube", "study_id": "youtube-default", "study_name": "youtube default"}, "network": {"asn": 64500, "isp": "Example Net", "connection_type": "fiber"}, "created_at": %q, "client_type": "automator", "client_uuid": "00000000-0000-4000-8000-%012d", "client_version": "3.6.0", "statistic_values": {"rtt_avg": %d.62, "stalling_count": 2, "throughput_mbps": 133.2, "initial_loading_time": %d}}`,
				n, at, n%clients, n%200, n%5000)
			var err error
			if docs[i], err = store.ParseDocument("measurement", raw); err != nil {
				return err
			}
		}
		if g%(10000/group) == 0 {
			if _, err := st.KeepStatistics(ctx); err != nil {
				return err
			}
		}
		res, err := st.InsertDocumentsWith(ctx, owner, docs, store.InsertOptions{KeepOthers: true})
		if err == nil && res.Inserted != group {
			err = fmt.Errorf("group %d: %+v", g, res)
		}
		return err
	}
	// 10,000 documents stored and analysed first, the first group analysed
	// at once: the server's statistics of a month that has begun to fill.
	// (Planned on the statistics of an empty partition, the stored-copy
	// probe reads every document of the data owner: statistics.go.)
	docs := make([]store.Document, group)
	for i := range 10000 / group {
		if err := write(docs); err != nil {
			b.Fatal(err)
		}
		if i == 0 || i == 10000/group-1 {
			if _, err := st.Pool().Exec(ctx, `ANALYZE documents, analyzer_inbox`); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetParallelism(2) // 4 writers on 2 Ps
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		docs := make([]store.Document, group)
		for pb.Next() {
			if err := write(docs); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N*group)/b.Elapsed().Seconds(), "docs/s")
}
