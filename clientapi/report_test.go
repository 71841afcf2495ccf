package clientapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

func TestCapabilityRefusal(t *testing.T) {
	name := "web only"
	p := &store.Probe{CapabilityName: &name, Capability: store.Capability{
		AllowedMeasurementTypes:      []string{"VideoMeasurement", "WebMeasurement"},
		AllowedMeasurementSubjects:   []string{"youtube", "website", "netflix"},
		ForbiddenMeasurementTypes:    []string{"WebMeasurement"},
		ForbiddenMeasurementSubjects: []string{"netflix"},
	}}
	open := &store.Probe{}
	s := func(v string) *string { return &v }
	tests := []struct {
		name          string
		probe         *store.Probe
		typ, subject  *string
		rule, mention string
	}{
		{"allowed type and subject", p, s("VideoMeasurement"), s("youtube"), "", ""},
		{"forbidden type wins over allowed", p, s("WebMeasurement"), s("website"), "forbidden_measurement_types", `capability "web only"`},
		{"forbidden subject wins over allowed", p, s("VideoMeasurement"), s("netflix"), "forbidden_measurement_subjects", "netflix"},
		{"type outside the allowed list", p, s("GamingMeasurement"), s("youtube"), "allowed_measurement_types", "GamingMeasurement"},
		{"subject outside the allowed list", p, s("VideoMeasurement"), s("vimeo"), "allowed_measurement_subjects", "vimeo"},
		{"no subject where subjects are restricted", p, s("VideoMeasurement"), nil, "allowed_measurement_subjects", "no study.subject"},
		{"empty lists allow everything", open, s("GamingMeasurement"), nil, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rule, msg := capabilityRefusal(tc.probe, store.Document{Type: tc.typ, Subject: tc.subject})
			if rule != tc.rule || !strings.Contains(msg, tc.mention) {
				t.Errorf("got %q %q, want rule %q mentioning %q", rule, msg, tc.rule, tc.mention)
			}
		})
	}
}

func TestReadItems(t *testing.T) {
	read := func(body string) ([]item, error) {
		r, _ := http.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		return readItems(r)
	}
	items, err := read("\n{\"a\":1}\r\n\n  \n{\"b\":2}")
	if err != nil || len(items) != 2 || items[0].line != 2 || items[1].line != 5 || string(items[0].raw) != `{"a":1}` {
		t.Errorf("NDJSON: %+v %v", items, err)
	}
	items, err = read(` [{"a":1}, 2, null]`)
	if err != nil || len(items) != 3 || items[1].line != 0 || string(items[1].raw) != "2" {
		t.Errorf("array: %+v %v", items, err)
	}
	for _, bad := range []string{"", "[]", "[{", strings.Repeat("{}\n", limits.MaxReportDocuments+1)} {
		if _, err := read(bad); err == nil {
			t.Errorf("%.20q read without error", bad)
		}
	}
}

func TestETagMatches(t *testing.T) {
	etag := `"abc"`
	for _, tc := range []struct {
		header []string
		want   bool
	}{
		{nil, false},
		{[]string{`"abc"`}, true},
		{[]string{`W/"abc"`}, true},
		{[]string{`"x", "abc"`}, true},
		{[]string{`"x"`, `"abc"`}, true},
		{[]string{`*`}, true},
		{[]string{`"abcd"`}, false},
	} {
		if got := etagMatches(tc.header, etag); got != tc.want {
			t.Errorf("If-None-Match %q: %v, want %v", tc.header, got, tc.want)
		}
	}
}

// A group refuses a document whose id another client's document in it
// has: the transaction would keep only the last copy.
func TestGroupRefusesAnotherClientsID(t *testing.T) {
	a, b := "a", "b"
	doc := func(id string, cu *string) store.Document {
		return store.Document{Kind: vocab.KindMeasurement, DocID: id, ClientUUID: cu}
	}
	g := newGroup()
	if at := g.add([]store.Document{doc("x", &a), doc("y", &a)}); at[0] != 0 || at[1] != 1 {
		t.Fatalf("first report: %v", at)
	}
	at := g.add([]store.Document{doc("x", &b), doc("x", &a), doc("z", &b)})
	if at[0] != -1 || at[1] != 2 || at[2] != 3 || len(g.docs) != 4 {
		t.Errorf("second report: %v (%d documents)", at, len(g.docs))
	}
}
