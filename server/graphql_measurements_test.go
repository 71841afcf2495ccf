package server_test

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Client.measurements, Measurement.client/reports and AnomalyEvent.client
// over the testdata/ fixture set; expectations from testdata/README.md.

// gmWorld is a data owner holding the fixture set (measurements, client
// reports, anomaly events) plus a bulk client, and a second data owner
// holding the same fixture set under other client UUIDs.
type gmWorld struct {
	e         *apitest.Env
	o, other  *apitest.Owner
	c, otherC map[string]string // C1..C6 -> client UUID
	bulk      string            // o's client with gmBulk measurements
}

// gmBulk measurements of the bulk client: bulk-00 .. bulk-24, five to a
// created_at (2026-10-01 + i/5 hours), so pages must order ties.
const gmBulk = 25

// gmKinds are the fixture files each data owner of the world loads.
var gmKinds = []string{vocab.KindMeasurement, vocab.KindClientReport, vocab.KindAnomalyEvent}

func newGMWorld(t *testing.T, prefix string) *gmWorld {
	t.Helper()
	e := apitest.Get(t)
	w := &gmWorld{e: e, o: e.NewOwner(t, prefix), other: e.NewOwner(t, prefix+"-other"), bulk: uuid.NewString()}
	w.c = e.LoadFixtures(t, w.o.ID, gmKinds...)
	w.otherC = e.LoadFixtures(t, w.other.ID, gmKinds...)
	var bulk []map[string]any
	for i := range gmBulk {
		at := time.Date(2026, 10, 1, i/5, 0, 0, 0, time.UTC)
		bulk = append(bulk, map[string]any{"id": fmt.Sprintf("bulk-%02d", i), "client_uuid": w.bulk, "type": "WebMeasurement",
			"created_at": at.Format(time.RFC3339), "study": map[string]any{"subject": "website"}})
	}
	w.o.InsertDocuments(t, vocab.KindMeasurement, bulk...)
	// A LightweightVideoPlayerPerformanceReport for #1 (the fixtures have
	// none), after its P.1203 report (created 06:01:15); an anomaly event
	// naming no client.
	w.o.InsertDocuments(t, vocab.KindClientReport, map[string]any{"id": "lvp-0001", "client_uuid": w.c["C1"],
		"type": "LightweightVideoPlayerPerformanceReport", "measurement_id": apitest.FixtureMeasurement(1), "created_at": "2026-11-01T06:01:30Z"})
	w.o.InsertDocuments(t, vocab.KindAnomalyEvent, map[string]any{"id": "fleet-wide::shift::1793500000",
		"measurement_type": "VideoMeasurement", "subject": "youtube", "status": "new", "created_at": "2026-11-01T00:00:00Z"})
	return w
}

// bulkIDs is the bulk client's measurements newest first: the latest hour
// (bulk-20..24) first, ties by id descending.
func bulkIDs() []string {
	out := []string{}
	for h := gmBulk/5 - 1; h >= 0; h-- {
		for i := 4; i >= 0; i-- {
			out = append(out, fmt.Sprintf("bulk-%02d", h*5+i))
		}
	}
	return out
}

const gmPageQuery = `query($id: ID!, $first: Int, $after: String, $filter: MeasurementFilter) {
  client(id: $id) { measurements(first: $first, after: $after, filter: $filter) {
    edges { cursor node { id document } } pageInfo { hasNextPage endCursor } } } }`

// gmPage is one page of Client.measurements.
type gmPage struct {
	ids, cursors, clients []string // clients: each document's client_uuid
	next                  bool
	end                   any // endCursor: a string or nil
}

// page asks for one page of client's measurements as key; vars holds first,
// after and filter (nil: not given).
func (w *gmWorld) page(t *testing.T, key, client string, vars map[string]any) gmPage {
	t.Helper()
	v := map[string]any{"id": client}
	for k, x := range vars {
		v[k] = x
	}
	g := w.e.GraphQL(t, key, gmPageQuery, v)
	if len(g.Errors) > 0 {
		t.Fatalf("measurements of %s %v: %s", client, vars, g.Raw)
	}
	conn := g.Data["client"].(map[string]any)["measurements"].(map[string]any)
	p := gmPage{ids: []string{}}
	for _, e := range conn["edges"].([]any) {
		edge := e.(map[string]any)
		node := edge["node"].(map[string]any)
		p.ids = append(p.ids, node["id"].(string))
		p.cursors = append(p.cursors, edge["cursor"].(string))
		p.clients = append(p.clients, fmt.Sprint(node["document"].(map[string]any)["client_uuid"]))
	}
	pi := conn["pageInfo"].(map[string]any)
	p.next, p.end = pi["hasNextPage"].(bool), pi["endCursor"]
	// endCursor is the last edge's cursor, null on an empty page.
	if n := len(p.cursors); (n == 0 && p.end != nil) || (n > 0 && p.end != p.cursors[n-1]) {
		t.Errorf("endCursor %v, edges' cursors %v", p.end, p.cursors)
	}
	return p
}

// walk follows endCursor from the first page to the last with pages of
// first, checking every page but the last is full and says hasNextPage.
func (w *gmWorld) walk(t *testing.T, client string, first int, filter map[string]any) []string {
	t.Helper()
	all := []string{}
	var after any
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("more than 100 pages")
		}
		p := w.page(t, w.o.Key, client, map[string]any{"first": first, "after": after, "filter": filter})
		all = append(all, p.ids...)
		if !p.next {
			if len(p.ids) > first {
				t.Errorf("last page of %d, first %d", len(p.ids), first)
			}
			return all
		}
		if len(p.ids) != first {
			t.Errorf("page %d has %d measurements and a next page, first %d", pages, len(p.ids), first)
		}
		after = p.end
	}
}

func TestGraphQLClientMeasurementsFilters(t *testing.T) {
	w := newGMWorld(t, "gm-filter")
	cases := []struct {
		name, client string
		filter       map[string]any
		want         []string
	}{
		{"C1, newest first", "C1", nil, apitest.FixtureMeasurements(19, 7, 25, 13, 1)},
		{"C2, newest first", "C2", nil, apitest.FixtureMeasurements(20, 8, 26, 14, 2)},
		{"C4, newest first", "C4", nil, apitest.FixtureMeasurements(10, 28, 16, 4, 22)},
		{"C1 video", "C1", map[string]any{"type": "VideoMeasurement"}, apitest.FixtureMeasurements(7, 1)},
		{"C1 youtube", "C1", map[string]any{"subject": "youtube"}, apitest.FixtureMeasurements(1)},
		{"C1 dns", "C1", map[string]any{"subject": "dns"}, apitest.FixtureMeasurements(13)},
		{"C4 network", "C4", map[string]any{"type": "NetworkMeasurement"}, apitest.FixtureMeasurements(16)},
		{"C2 has no gaming", "C2", map[string]any{"type": "GamingMeasurement"}, apitest.FixtureMeasurements()},
		{"type and subject that do not go together", "C1", map[string]any{"type": "WebMeasurement", "subject": "youtube"}, apitest.FixtureMeasurements()},
		{"C3 since #3's time: inclusive", "C3", map[string]any{"since": "2026-11-03T06:26:34.074Z"}, apitest.FixtureMeasurements(9, 27, 15, 3)},
		{"C3 until #3's time: exclusive", "C3", map[string]any{"until": "2026-11-03T06:26:34.074Z"}, apitest.FixtureMeasurements(21)},
		{"C3 days 3 to 7", "C3", map[string]any{"since": "2026-11-03T00:00:00Z", "until": "2026-11-08T00:00:00Z"}, apitest.FixtureMeasurements(27, 15, 3)},
		{"C6 since #6's time with an offset", "C6", map[string]any{"since": "2026-11-06T14:05:25.185+01:00"}, apitest.FixtureMeasurements(30, 18, 6)},
		{"C5 speedtest breitbandmessung since day 3", "C5",
			map[string]any{"type": "SpeedtestMeasurement", "subject": "breitbandmessung", "since": "2026-11-03T00:00:00+01:00"}, apitest.FixtureMeasurements(23)},
		{"C5 the same until #23's time", "C5",
			map[string]any{"type": "SpeedtestMeasurement", "until": "2026-11-03T06:46:14.814Z"}, apitest.FixtureMeasurements()},
		{"since equal to until: nothing", "C1", map[string]any{"since": "2026-11-01T06:00:00Z", "until": "2026-11-01T06:00:00Z"}, apitest.FixtureMeasurements()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := w.page(t, w.o.Key, w.c[tc.client], map[string]any{"filter": tc.filter})
			if !reflect.DeepEqual(p.ids, tc.want) || p.next {
				t.Errorf("ids %v next %v, want %v and no next page", p.ids, p.next, tc.want)
			}
			for _, c := range p.clients {
				if c != w.c[tc.client] {
					t.Errorf("a measurement of client %s", c)
				}
			}
			// The same filter, a page at a time, gives the same list.
			if got := w.walk(t, w.c[tc.client], 1, tc.filter); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("walked one at a time: %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGraphQLClientMeasurementsPaging(t *testing.T) {
	w := newGMWorld(t, "gm-page")
	c1 := w.c["C1"]

	t.Run("C1 two at a time", func(t *testing.T) {
		want := []struct {
			ids  []string
			next bool
		}{{apitest.FixtureMeasurements(19, 7), true}, {apitest.FixtureMeasurements(25, 13), true}, {apitest.FixtureMeasurements(1), false}}
		var after any
		for i, wp := range want {
			p := w.page(t, w.o.Key, c1, map[string]any{"first": 2, "after": after})
			if !reflect.DeepEqual(p.ids, wp.ids) || p.next != wp.next {
				t.Fatalf("page %d: %v next %v, want %v next %v", i+1, p.ids, p.next, wp.ids, wp.next)
			}
			after = p.end
		}
	})
	t.Run("a page that takes exactly the rest has no next page", func(t *testing.T) {
		if p := w.page(t, w.o.Key, c1, map[string]any{"first": 5}); len(p.ids) != 5 || p.next {
			t.Errorf("first 5 of 5: %v next %v", p.ids, p.next)
		}
		p := w.page(t, w.o.Key, c1, map[string]any{"first": 4})
		if !p.next {
			t.Fatalf("first 4 of 5: no next page")
		}
		if last := w.page(t, w.o.Key, c1, map[string]any{"first": 4, "after": p.end}); !reflect.DeepEqual(last.ids, apitest.FixtureMeasurements(1)) || last.next {
			t.Errorf("after 4 of 5: %v next %v", last.ids, last.next)
		}
	})
	t.Run("first defaults to 20", func(t *testing.T) {
		for _, vars := range []map[string]any{{}, {"first": nil}} {
			p := w.page(t, w.o.Key, w.bulk, vars)
			if !reflect.DeepEqual(p.ids, bulkIDs()[:20]) || !p.next {
				t.Errorf("%v: %v next %v, want the newest 20 and a next page", vars, p.ids, p.next)
			}
		}
		if p := w.page(t, w.o.Key, w.bulk, map[string]any{"first": 100}); !reflect.DeepEqual(p.ids, bulkIDs()) || p.next {
			t.Errorf("first 100: %v next %v, want all %d", p.ids, p.next, gmBulk)
		}
	})
	t.Run("walking the pages gives the full list, ties in order", func(t *testing.T) {
		for _, first := range []int{1, 3, 4, 5, 7, 24, 25, 26} {
			if got := w.walk(t, w.bulk, first, nil); !reflect.DeepEqual(got, bulkIDs()) {
				t.Errorf("pages of %d: %v\nwant %v", first, got, bulkIDs())
			}
		}
		// Within one created_at (bulk-05..09 at 01:00), with a filter.
		filter := map[string]any{"since": "2026-10-01T01:00:00Z", "until": "2026-10-01T02:00:00Z", "type": "WebMeasurement"}
		want := []string{"bulk-09", "bulk-08", "bulk-07", "bulk-06", "bulk-05"}
		if got := w.walk(t, w.bulk, 2, filter); !reflect.DeepEqual(got, want) {
			t.Errorf("one hour, pages of 2: %v, want %v", got, want)
		}
	})
}

func TestGraphQLClientMeasurementsArguments(t *testing.T) {
	w := newGMWorld(t, "gm-args")
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name  string
		vars  map[string]any
		field string
	}{
		{"first 0", map[string]any{"first": 0}, "first"},
		{"first -1", map[string]any{"first": -1}, "first"},
		{"first 101", map[string]any{"first": 101}, "first"},
		{"after not base64", map[string]any{"after": "not a cursor!"}, "after"},
		{"after base64 of text", map[string]any{"after": cursor("hello")}, "after"},
		{"after without a document id", map[string]any{"after": cursor("2026-11-01T06:00:00Z|")}, "after"},
		{"after with a bad time", map[string]any{"after": cursor("yesterday|" + apitest.FixtureMeasurement(1))}, "after"},
		{"after with an over-long id", map[string]any{"after": cursor("2026-11-01T06:00:00Z|" + strings.Repeat("x", 513))}, "after"},
		{"since after until", map[string]any{"filter": map[string]any{"since": "2026-11-05T00:00:00Z", "until": "2026-11-04T00:00:00Z"}}, "filter.since"},
		{"since not a time", map[string]any{"filter": map[string]any{"since": "yesterday"}}, "filter.since"},
		{"until not a time", map[string]any{"filter": map[string]any{"until": "2026-13-01T00:00:00Z"}}, "filter.until"},
		{"since empty", map[string]any{"filter": map[string]any{"since": ""}}, "filter.since"},
		{"until empty", map[string]any{"filter": map[string]any{"until": ""}}, "filter.until"},
		{"type blank", map[string]any{"filter": map[string]any{"type": ""}}, "filter.type"},
		{"subject blank", map[string]any{"filter": map[string]any{"subject": "  "}}, "filter.subject"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := map[string]any{"id": w.c["C1"]}
			for k, x := range tc.vars {
				v[k] = x
			}
			g := w.e.GraphQL(t, w.o.Key, gmPageQuery, v)
			if g.Code() != "BAD_USER_INPUT" {
				t.Fatalf("code %q, want BAD_USER_INPUT: %s", g.Code(), g.Raw)
			}
			if tc.field != "" {
				errs, _ := g.Errors[0].Extensions["errors"].(map[string]any)
				if _, ok := errs[tc.field]; !ok || !strings.Contains(g.Errors[0].Message, tc.field) {
					t.Errorf("error does not name %s: %s", tc.field, g.Raw)
				}
			}
			if c, _ := g.Data["client"].(map[string]any); c != nil {
				t.Errorf("data alongside the error: %s", g.Raw)
			}
		})
	}
	// The same arguments in the query text (lookahead reads them there).
	for _, arg := range []string{`first: 0`, `first: 101`, `after: "%%%"`, `filter: {since: "yesterday"}`,
		`filter: {since: "2026-11-02T00:00:00Z", until: "2026-11-01T00:00:00Z"}`} {
		g := w.e.GraphQL(t, w.o.Key, `query($id: ID!) { client(id: $id) { measurements(`+arg+`) { edges { node { id } } } } }`,
			map[string]any{"id": w.c["C1"]})
		if g.Code() != "BAD_USER_INPUT" {
			t.Errorf("%s in the query: %s", arg, g.Raw)
		}
	}
	if p := w.page(t, w.o.Key, w.c["C1"], map[string]any{"after": ""}); !reflect.DeepEqual(p.ids, apitest.FixtureMeasurements(19, 7, 25, 13, 1)) {
		t.Errorf("empty after (no cursor): %v", p.ids)
	}
}

// A cursor is a position (created_at, measurement id), nothing more: one
// from another client or another data owner pages through the asked
// client's own measurements only, and cursors carry nothing global (equal
// documents of two data owners have equal cursors).
func TestGraphQLClientMeasurementsForeignCursors(t *testing.T) {
	w := newGMWorld(t, "gm-cursor")
	mine := w.page(t, w.o.Key, w.c["C1"], map[string]any{"first": 5})
	theirs := w.page(t, w.other.Key, w.otherC["C1"], map[string]any{"first": 5})
	if !reflect.DeepEqual(mine.cursors, theirs.cursors) {
		t.Errorf("cursors of the same documents differ between data owners (they carry more than the position):\n%v\n%v",
			mine.cursors, theirs.cursors)
	}
	// The other owner's cursor after its #7 (day 7) on o's C1: o's C1
	// measurements older than day 7, 06:18:42.222.
	p := w.page(t, w.o.Key, w.c["C1"], map[string]any{"after": theirs.cursors[1]})
	if !reflect.DeepEqual(p.ids, apitest.FixtureMeasurements(25, 13, 1)) || p.next {
		t.Errorf("other owner's cursor: %v next %v, want #25, #13, #1", p.ids, p.next)
	}
	for _, c := range p.clients {
		if c != w.c["C1"] {
			t.Errorf("other owner's cursor reads client %s", c)
		}
	}
	// C2's cursor after #20 (day 10, 13:07) on C1: all of C1, nothing of C2.
	c2 := w.page(t, w.o.Key, w.c["C2"], map[string]any{"first": 1})
	if p := w.page(t, w.o.Key, w.c["C1"], map[string]any{"after": c2.end}); !reflect.DeepEqual(p.ids, apitest.FixtureMeasurements(19, 7, 25, 13, 1)) {
		t.Errorf("C2's cursor on C1: %v", p.ids)
	}
	// The other owner reads nothing of o through o's cursors, nor o's client.
	p = w.page(t, w.other.Key, w.otherC["C1"], map[string]any{"after": mine.cursors[0]})
	for _, c := range p.clients {
		if c != w.otherC["C1"] {
			t.Errorf("o's cursor gives the other owner client %s", c)
		}
	}
	if g := w.e.GraphQL(t, w.other.Key, gmPageQuery, map[string]any{"id": w.c["C1"]}); g.Code() != "NOT_FOUND" {
		t.Errorf("the other owner asks for o's client: %s", g.Raw)
	}
}

func TestGraphQLMeasurementAndAnomalyEventFields(t *testing.T) {
	w := newGMWorld(t, "gm-fields")
	const fields = `id client { uuid } reports { id type } p1203ClientReport networkPerformanceReport
		lightweightVideoPlayerPerformanceReport`
	type want struct {
		reports          []string // id:type, oldest first
		p1203, perf, lvp string   // report ids, "" for null
	}
	// testdata/README.md: reports cr-0001..7 (P.1203) of #1..#7,
	// cr-0008..12 (Performance) of #8..#12, cr-0013/14 (DNS) of #13/#14,
	// cr-0015/16 (ICMP ping) of #17/#18; lvp-0001 added for #1.
	wants := map[string]want{
		apitest.FixtureMeasurement(1):  {[]string{"cr-0001:P1203ClientReport", "lvp-0001:LightweightVideoPlayerPerformanceReport"}, "cr-0001", "", "lvp-0001"},
		apitest.FixtureMeasurement(7):  {[]string{"cr-0007:P1203ClientReport"}, "cr-0007", "", ""},
		apitest.FixtureMeasurement(13): {[]string{"cr-0013:DnsClientReport"}, "", "", ""},
		apitest.FixtureMeasurement(19): {[]string{}, "", "", ""},
		apitest.FixtureMeasurement(25): {[]string{}, "", "", ""},
		apitest.FixtureMeasurement(2):  {[]string{"cr-0002:P1203ClientReport"}, "cr-0002", "", ""},
		apitest.FixtureMeasurement(8):  {[]string{"cr-0008:PerformanceClientReport"}, "", "cr-0008", ""},
		apitest.FixtureMeasurement(14): {[]string{"cr-0014:DnsClientReport"}, "", "", ""},
		apitest.FixtureMeasurement(20): {[]string{}, "", "", ""},
		apitest.FixtureMeasurement(26): {[]string{}, "", "", ""},
	}
	check := func(t *testing.T, node map[string]any, client string) {
		t.Helper()
		id := node["id"].(string)
		wt, ok := wants[id]
		if !ok {
			t.Fatalf("unexpected measurement %s", id)
		}
		if c, _ := node["client"].(map[string]any); c == nil || c["uuid"] != client {
			t.Errorf("%s: client %v, want %s", id, node["client"], client)
		}
		reports := []string{}
		for _, r := range node["reports"].([]any) {
			r := r.(map[string]any)
			reports = append(reports, fmt.Sprint(r["id"], ":", r["type"]))
		}
		if !reflect.DeepEqual(reports, wt.reports) {
			t.Errorf("%s: reports %v, want %v", id, reports, wt.reports)
		}
		for field, wantID := range map[string]string{"p1203ClientReport": wt.p1203, "networkPerformanceReport": wt.perf,
			"lightweightVideoPlayerPerformanceReport": wt.lvp} {
			doc, _ := node[field].(map[string]any)
			switch {
			case wantID == "" && node[field] != nil:
				t.Errorf("%s: %s %v, want null", id, field, node[field])
			case wantID != "" && (doc == nil || doc["id"] != wantID || doc["measurement_id"] != id):
				t.Errorf("%s: %s %v, want report %s", id, field, node[field], wantID)
			}
		}
	}

	t.Run("through Client.measurements of two clients", func(t *testing.T) {
		g := w.e.GraphQL(t, w.o.Key, `query($c1: ID!, $c2: ID!) {
			a: client(id: $c1) { measurements { edges { node { `+fields+` } } } }
			b: client(id: $c2) { measurements { edges { node { `+fields+` } } } } }`,
			map[string]any{"c1": w.c["C1"], "c2": w.c["C2"]})
		if len(g.Errors) > 0 {
			t.Fatalf("%s", g.Raw)
		}
		seen := 0
		for alias, client := range map[string]string{"a": w.c["C1"], "b": w.c["C2"]} {
			for _, e := range g.Data[alias].(map[string]any)["measurements"].(map[string]any)["edges"].([]any) {
				check(t, e.(map[string]any)["node"].(map[string]any), client)
				seen++
			}
		}
		if seen != 10 {
			t.Errorf("%d measurements, want 10", seen)
		}
	})
	t.Run("through Query.measurement", func(t *testing.T) {
		for _, n := range []int{1, 8, 19} {
			g := w.e.GraphQL(t, w.o.Key, `query($id: ID!) { measurement(id: $id) { `+fields+` } }`, map[string]any{"id": apitest.FixtureMeasurement(n)})
			if len(g.Errors) > 0 {
				t.Fatalf("%s", g.Raw)
			}
			client := w.c["C1"]
			if n == 8 {
				client = w.c["C2"]
			}
			check(t, g.Data["measurement"].(map[string]any), client)
		}
	})
	t.Run("AnomalyEvent.client", func(t *testing.T) {
		// testdata/README.md: the anomaly events' clients.
		for id, client := range map[string]string{
			"video-stalling::spike::1793687194":     w.c["C3"],
			"speedtest-download::shift::1793626437": w.c["C4"],
			"ping-loss::data_quality::1794032912":   w.c["C5"],
			"meet-jitter::shift::1793971505":        w.c["C2"],
		} {
			g := w.e.GraphQL(t, w.o.Key, `query($id: ID!) { anomalyEvent(id: $id) { id client { uuid
				measurements(first: 1) { edges { node { id } } } } } }`, map[string]any{"id": id})
			ev, _ := g.Data["anomalyEvent"].(map[string]any)
			c, _ := ev["client"].(map[string]any)
			if len(g.Errors) > 0 || c == nil || c["uuid"] != client {
				t.Errorf("%s: %s, want client %s", id, g.Raw, client)
				continue
			}
			if edges := c["measurements"].(map[string]any)["edges"].([]any); len(edges) != 1 {
				t.Errorf("%s: client's measurements %v", id, edges)
			}
		}
		g := w.e.GraphQL(t, w.o.Key, `{ anomalyEvent(id: "fleet-wide::shift::1793500000") { id client { uuid } } }`, nil)
		if ev, _ := g.Data["anomalyEvent"].(map[string]any); len(g.Errors) > 0 || ev == nil || ev["client"] != nil {
			t.Errorf("anomaly event without a client: %s", g.Raw)
		}
		// The same anomaly id in the other data owner names its own client.
		g = w.e.GraphQL(t, w.other.Key, `{ anomalyEvent(id: "video-stalling::spike::1793687194") { client { uuid } } }`, nil)
		if c, _ := g.Data["anomalyEvent"].(map[string]any)["client"].(map[string]any); c == nil || c["uuid"] != w.otherC["C3"] {
			t.Errorf("other owner's anomaly event: %s", g.Raw)
		}
	})
}

// One operation reads at most loaders.MaxMeasurementsPerOperation
// measurements over all its Client.measurements pages (clients × first):
// past that the pages are refused before anything is read, with a message
// saying how to ask for less.
func TestGraphQLClientMeasurementsOperationLimit(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "gm-limit")
	const clients = 101 // × first 100 = 10,100 > 10,000
	docs := make([]map[string]any, clients)
	for i := range docs {
		docs[i] = srchMeasurement(fmt.Sprintf("lim-%03d", i), uuid.NewString(), "VideoMeasurement", "youtube", i, nil)
	}
	o.InsertDocuments(t, "measurement", docs...)
	q := `query($first: Int) { clients { uuid measurements(first: $first) { edges { node { id } } } } }`
	g := e.GraphQL(t, o.Key, q, map[string]any{"first": 100})
	if g.Code() != "BAD_REQUEST" || !strings.Contains(g.Errors[0].Message, "more than 10000 measurements (here 101 clients × first 100)") {
		t.Fatalf("101 clients × first 100: %s", g.Raw)
	}
	g = e.GraphQL(t, o.Key, q, map[string]any{"first": 99}) // 9,999
	cs, _ := g.Data["clients"].([]any)
	if len(g.Errors) > 0 || len(cs) != clients {
		t.Fatalf("101 clients × first 99: %s", g.Raw)
	}
	for _, c := range cs {
		if edges := c.(map[string]any)["measurements"].(map[string]any)["edges"].([]any); len(edges) != 1 {
			t.Fatalf("a client's measurements: %v", c)
		}
	}
	// The budget is the operation's: two aliased lists add up.
	g = e.GraphQL(t, o.Key, `{ a: clients { measurements(first: 50) { edges { node { id } } } }
		b: clients { measurements(first: 50, filter: {type: "VideoMeasurement"}) { edges { node { id } } } } }`, nil)
	if g.Code() != "BAD_REQUEST" {
		t.Fatalf("two lists of 101 × 50: %s", g.Raw)
	}
}
