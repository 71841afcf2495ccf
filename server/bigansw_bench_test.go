package server_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// BenchmarkBigAnswer serves, one at a time, the answers of about 24 MB that
// the soak test's attacker asks for (issue 16; bench/soak/main.go): 2,000
// small measurements and 120 of 200 KB, read by a search of size 10,000
// (REST and ten aliased in one GraphQL request, which the answer budget
// stops after the first) and by the export listing's page of 1,000. It
// measures the CPU one such answer costs (go test -cpuprofile).
func BenchmarkBigAnswer(b *testing.B) {
	e := apitest.Get(b)
	o := e.NewOwner(b, "bigansw")
	exportKey, _ := o.NewKey(b, apitest.KeyOpts{Kind: auth.KindExport})
	client := o.NewClient(b, store.NewClient{})
	subjects := []string{"youtube", "netflix", "website", "ookla"}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	docs := make([]map[string]any, 0, 2120)
	for i := range 2000 {
		docs = append(docs, map[string]any{"id": fmt.Sprintf("m%05d", i), "type": "VideoMeasurement",
			"client_uuid": client.UUID, "created_at": start.Add(time.Duration(i) * time.Minute),
			"study":            map[string]any{"subject": subjects[i%len(subjects)], "study_id": "s1"},
			"statistic_values": map[string]any{"bitrate": 1000 + i%700, "stalls": i % 3}})
	}
	pad := strings.Repeat("x", 200<<10)
	for i := range 120 {
		docs = append(docs, map[string]any{"id": fmt.Sprintf("big%04d", i), "type": "VideoMeasurement",
			"client_uuid": client.UUID, "created_at": start.Add(48*time.Hour + time.Duration(i)*time.Minute),
			"study": map[string]any{"subject": "youtube"}, "pad": pad})
	}
	for chunk := range slices.Chunk(docs, 200) {
		o.InsertDocuments(b, "measurement", chunk...)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	send := func(b *testing.B, method, path, key, body string, want int) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, e.URL+path, rd)
		req.Header.Set("X-API-KEY", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != want {
			b.Fatalf("%s %s: status %d (want %d), %d bytes: %v", method, path, resp.StatusCode, want, n, err)
		}
		b.SetBytes(n)
	}
	cases := []struct {
		name, method, path, key, body string
		want                          int
	}{
		{"rest-search-10000", http.MethodPost, "/export_api/v1/search", exportKey,
			`{"body": {"query": {"match_all": {}}}, "size": 10000}`, http.StatusOK},
		{"export-per-page-1000", http.MethodGet, "/export_api/v1/measurements?per_page=1000", exportKey, "", http.StatusOK},
		{"graphql-10-searches-10000", http.MethodPost, "/graphql", o.Key,
			fmt.Sprintf(`{"query": %q}`, "{"+aliasedSearches(10)+" }"), http.StatusOK},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				send(b, tc.method, tc.path, tc.key, tc.body, tc.want)
			}
		})
	}
}

// aliasedSearches is n searches of size 10,000, aliased s0 to s<n-1>.
func aliasedSearches(n int) string {
	var s strings.Builder
	for i := range n {
		fmt.Fprintf(&s, " s%d: measurementSearch(body: {query: {match_all: {}}}, size: 10000)", i)
	}
	return s.String()
}
