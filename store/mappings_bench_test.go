package store_test

import (
	"fmt"
	"testing"

	"github.com/fleetgraph/fleetgraph/store"
)

// BenchmarkDetectMappings types a probe report's 500 measurements (the
// shape bench/probeload sends, with a study, network and statistics).
func BenchmarkDetectMappings(b *testing.B) {
	typ := "VideoMeasurement"
	docs := make([]store.Document, 500)
	for i := range docs {
		docs[i] = store.Document{Kind: "measurement", Type: &typ, Doc: fmt.Appendf(nil,
			`{"id": "fd8e5ad9-9730-42f5-86c1-0222ec6b1701-%d", "type": "VideoMeasurement", "study": {"subject": "youtube", "study_id": "youtube-default", "study_name": "youtube default"}, "network": {"asn": 64500, "isp": "Example Net", "connection_type": "fiber"}, "created_at": "2026-11-29T11:08:23.247586189Z", "client_type": "automator", "client_uuid": "fd8e5ad9-9730-42f5-86c1-0222ec6b1701", "client_version": "3.6.0", "statistic_values": {"rtt_avg": %d.62, "stalling_count": 2, "throughput_mbps": 133.2, "initial_loading_time": %d}}`, i, i, i*3)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(store.DetectMappings(docs, nil)); n != 16 {
			b.Fatalf("%d mappings", n)
		}
	}
}
