package store_test

import (
	"fmt"
	"testing"

	"github.com/fleetgraph/fleetgraph/store"
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
