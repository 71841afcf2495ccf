package analyzer

import (
	"testing"
)

// BenchmarkObserve: one stored value judged on the ingest path, the state
// warm (a month of half-hourly download values with a daily cycle).
func BenchmarkObserve(b *testing.B) {
	r := rule("speedtest-download")
	ps := series(1440+b.N, noisy(1, 80, 0.1))
	s := NewState()
	for _, p := range ps[:1440] {
		s.Observe(r, nil, p)
	}
	level := func(Pass) Level { return Default }
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.Observe(r, level, ps[1440+i])
	}
}

// BenchmarkExtract: a catalogue rule's value read out of a stored document.
func BenchmarkExtract(b *testing.B) {
	doc := []byte(`{"id":"6a1f0c00-2026-4b11-8000-000000000022","type":"SpeedtestMeasurement","client_uuid":"3e9c6f4b-a07d-4f5e-8b84-4d5e6f7a8b04","created_at":"2026-11-02T13:33:57.000Z","client_type":"automator","client_version":"3.5.0","study":{"subject":"ookla","study_id":"ookla-default","study_name":"ookla default","target":"https://www.speedtest.net"},"statistic_values":{"download":86.7,"upload":38.1,"ping":12.8,"jitter":1.8},"success":true,"network":{"isp":"Telekom","connection_type":"fixed"}}`)
	r := rule("speedtest-download")
	b.ReportAllocs()
	for range b.N {
		if _, ok := Extract(doc, r); !ok {
			b.Fatal("no value")
		}
	}
}

// BenchmarkMarshal: a warm state stored and loaded again.
func BenchmarkMarshal(b *testing.B) {
	r := rule("speedtest-download")
	s := NewState()
	for _, p := range series(1440, noisy(1, 80, 0.1)) {
		s.Observe(r, nil, p)
	}
	b.ReportAllocs()
	for range b.N {
		data, _ := s.MarshalBinary()
		if err := NewState().UnmarshalBinary(data); err != nil {
			b.Fatal(err)
		}
	}
	data, _ := s.MarshalBinary()
	b.ReportMetric(float64(len(data)), "bytes/state")
}
