package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

// exportBase is the moment the fixture documents are measured from.
var exportBase = time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)

// exportWorld is one data owner with clients and documents of every kind,
// and an export key.
type exportWorld struct {
	e       *apitest.Env
	o       *apitest.Owner
	key     string // export key
	a, b, c string // client UUIDs: a tags t1,t2 label alpha; b tag t1 label beta; c none
}

// exportDoc is one fixture row of documents.
type exportDoc struct {
	kind, id, client, typ, subject, measurement string
	at                                          time.Duration // after exportBase
	extra                                       map[string]any
}

func newExportWorld(t *testing.T, prefix string) *exportWorld {
	t.Helper()
	e := apitest.Get(t)
	o := e.NewOwner(t, prefix)
	key, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	w := &exportWorld{e: e, o: o, key: key, a: uuid.NewString(), b: uuid.NewString(), c: uuid.NewString()}
	w.client(t, w.a, "alpha", []string{"t1", "t2"})
	w.client(t, w.b, "beta", []string{"t1"})
	w.client(t, w.c, "", nil)
	h := time.Hour
	w.insert(t,
		exportDoc{kind: "measurement", id: "m1", client: w.a, typ: "VideoMeasurement", subject: "youtube", at: 1 * h},
		exportDoc{kind: "measurement", id: "m2", client: w.b, typ: "WebMeasurement", subject: "website", at: 2 * h},
		exportDoc{kind: "measurement", id: "m3", client: w.c, typ: "NetworkMeasurement", subject: "dns", at: 3 * h},
		exportDoc{kind: "measurement", id: "m4", client: w.a, typ: "SpeedtestMeasurement", subject: "ookla", at: 26 * h},
		exportDoc{kind: "measurement", id: "m5", client: w.b, typ: "ConferencingMeasurement", subject: "googlemeet", at: 50 * h},
		exportDoc{kind: "client_report", id: "r1", client: w.a, typ: "IcmpPingClientReport", measurement: "m1", at: 1 * h},
		exportDoc{kind: "client_report", id: "r2", client: w.b, typ: "P1203ClientReport", measurement: "m2", at: 2 * h},
		exportDoc{kind: "event_bundle", id: "e1", client: w.a, typ: "VideoEventBundle", measurement: "m1", at: 1 * h},
		exportDoc{kind: "event_bundle", id: "e2", client: w.b, typ: "WebEventBundle", measurement: "m2", at: 2 * h},
		exportDoc{kind: "network_request", id: "n1", client: w.b, measurement: "m2", at: 2 * h, extra: exportNetworkRequest()},
		exportDoc{kind: "network_request", id: "n2", client: w.a, measurement: "m1", at: 1 * h},
		exportDoc{kind: "user_feedback", id: "1", client: w.a, typ: "rating", at: 4 * h,
			extra: map[string]any{"data_type": "object", "data": map[string]any{"stars": 4}}},
		exportDoc{kind: "user_feedback", id: "2", client: w.b, typ: "comment", at: 5 * h},
	)
	return w
}

// exportNetworkRequest carries every field the spec prunes, and some it keeps.
func exportNetworkRequest() map[string]any {
	return map[string]any{
		"client_time": "2024-05-01T02:00:00Z",
		"data": map[string]any{"requestId": "42", "initiator": map[string]any{"type": "parser"},
			"redirectHasExtraInfo": false, "hasUserGesture": false,
			"request": map[string]any{"url": "https://example.com/", "method": "GET", "mixedContentType": "none",
				"initialPriority": "High", "referrerPolicy": "origin", "isSameSite": true}},
		"network_response": map[string]any{"client_time": "2024-05-01T02:00:01Z",
			"data": map[string]any{"requestId": "42", "hasExtraInfo": true,
				"response": map[string]any{"status": 200, "securityState": "secure",
					"securityDetails": map[string]any{"protocol": "TLS 1.3"}, "alternateProtocolUsage": "unspecified"}}},
	}
}

func (w *exportWorld) client(t *testing.T, id, label string, tags []string) {
	t.Helper()
	var l *string
	if label != "" {
		l = &label
	}
	w.o.NewClient(t, store.NewClient{UUID: id, Label: l, Tags: tags})
}

// insert writes fixture documents with plain SQL.
func (w *exportWorld) insert(t *testing.T, docs ...exportDoc) {
	t.Helper()
	for _, d := range docs {
		at := exportBase.Add(d.at)
		doc := map[string]any{"id": d.id, "client_uuid": d.client, "created_at": at.Format(time.RFC3339)}
		if d.typ != "" {
			doc["type"] = d.typ
		}
		if d.kind == "measurement" {
			doc["study"] = map[string]any{"subject": d.subject, "study_id": "s-" + d.subject}
			doc["statistic_values"] = map[string]any{"value": 1}
		}
		if d.measurement != "" {
			doc["measurement_id"] = d.measurement
		}
		for k, v := range d.extra {
			doc[k] = v
		}
		raw, _ := json.Marshal(doc)
		const q = `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc)
			VALUES ($1, $2, $3, $4, NULLIF($5, ''), NULLIF($6, ''), NULLIF($7, ''), $8, $9)`
		if _, err := w.e.Store.Pool().Exec(context.Background(), q, w.o.ID, d.kind, d.id, d.client, d.typ, d.subject,
			d.measurement, at, raw); err != nil {
			t.Fatalf("insert %s %s: %v", d.kind, d.id, err)
		}
	}
}

// get sends GET path?rawQuery to the export API with the world's key.
func (w *exportWorld) get(t *testing.T, path, rawQuery string) *apitest.Response {
	t.Helper()
	if rawQuery != "" {
		path += "?" + rawQuery
	}
	return w.e.Do(t, http.MethodGet, server.ExportBase+path, w.key, nil)
}

type exportCase struct {
	name, path, query string
	want              []string // ids, newest first
	bad               string   // when set: a 400 whose message mentions it
}

func runExportCases(t *testing.T, w *exportWorld, cases []exportCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.get(t, c.path, c.query)
			if c.bad != "" {
				apitest.Want400(t, r, c.bad)
				return
			}
			if got := apitest.IDs(t, r); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("GET %s?%s: ids %v, want %v", c.path, c.query, got, c.want)
			}
		})
	}
}

func TestExportMeasurementFilters(t *testing.T) {
	w := newExportWorld(t, "expm")
	other := newExportWorld(t, "expmx") // same ids, other data owner
	_ = other
	all := []string{"m5", "m4", "m3", "m2", "m1"}
	endAt2 := exportBase.Add(2 * time.Hour)
	runExportCases(t, w, []exportCase{
		{name: "all measurements newest first", path: "/measurements", want: all},
		{name: "type VideoMeasurement", path: "/measurements", query: "type=VideoMeasurement", want: []string{"m1"}},
		{name: "type ConferencingMeasurement from the design vocabulary", path: "/measurements", query: "type=ConferencingMeasurement", want: []string{"m5"}},
		{name: "type GamingMeasurement accepted", path: "/measurements", query: "type=GamingMeasurement", want: []string{}},
		{name: "unknown type is refused", path: "/measurements", query: "type=VideoEventBundle", bad: "type"},
		{name: "subject[] array syntax", path: "/measurements", query: "subject[]=youtube&subject[]=ookla", want: []string{"m4", "m1"}},
		{name: "subject comma syntax", path: "/measurements", query: "subject=youtube,ookla", want: []string{"m4", "m1"}},
		{name: "study_id[] array syntax", path: "/measurements", query: "study_id[]=s-dns&study_id[]=s-website", want: []string{"m3", "m2"}},
		{name: "study_id comma syntax", path: "/measurements", query: "study_id=s-dns,s-googlemeet", want: []string{"m5", "m3"}},
		{name: "start_time date only", path: "/measurements", query: "start_time=2024-05-02", want: []string{"m5", "m4"}},
		{name: "end_time ISO 8601 with Z, inclusive", path: "/measurements", query: "end_time=2024-05-01T02:00:00Z", want: []string{"m2", "m1"}},
		{name: "end_time with an offset", path: "/measurements", query: "end_time=" + url.QueryEscape("2024-05-01T04:00:00+02:00"), want: []string{"m2", "m1"}},
		{name: "end_time with an unencoded + offset", path: "/measurements", query: "end_time=2024-05-01T04:00:00+02:00", want: []string{"m2", "m1"}},
		{name: "end_time without a zone is UTC", path: "/measurements", query: "end_time=2024-05-01T02:00:00", want: []string{"m2", "m1"}},
		{name: "end_time with a space separator", path: "/measurements", query: "end_time=2024-05-01%2002:00:00", want: []string{"m2", "m1"}},
		{name: "end_time with fractions", path: "/measurements", query: "end_time=2024-05-01T02:00:00.000Z", want: []string{"m2", "m1"}},
		{name: "end_time epoch seconds", path: "/measurements", query: fmt.Sprintf("end_time=%d", endAt2.Unix()), want: []string{"m2", "m1"}},
		{name: "end_time epoch milliseconds", path: "/measurements", query: fmt.Sprintf("end_time=%d", endAt2.UnixMilli()), want: []string{"m2", "m1"}},
		{name: "end_time with a compact offset", path: "/measurements", query: "end_time=" + url.QueryEscape("2024-05-01T04:00:00+0200"), want: []string{"m2", "m1"}},
		{name: "end_time without seconds", path: "/measurements", query: "end_time=2024-05-01T02:00Z", want: []string{"m2", "m1"}},
		{name: "end_time date and minutes without a zone", path: "/measurements", query: "end_time=2024-05-01%2002:00", want: []string{"m2", "m1"}},
		{name: "end_time epoch seconds with fractions", path: "/measurements", query: fmt.Sprintf("end_time=%d.5", endAt2.Unix()), want: []string{"m2", "m1"}},
		{name: "start and end together", path: "/measurements", query: "start_time=2024-05-01T02:00:00Z&end_time=2024-05-01T03:00:00Z", want: []string{"m3", "m2"}},
		{name: "invalid start_time names the parameter", path: "/measurements", query: "start_time=yesterday", bad: "start_time"},
		{name: "invalid end_time names the parameter", path: "/measurements", query: "end_time=2024-13-45", bad: "end_time"},
		{name: "client_uuid", path: "/measurements", query: "client_uuid=" + w.a, want: []string{"m4", "m1"}},
		{name: "invalid client_uuid", path: "/measurements", query: "client_uuid=nope", bad: "client_uuid"},
		{name: "client_uuid overrides tags", path: "/measurements", query: "client_uuid=" + w.a + "&tags=nobody", want: []string{"m4", "m1"}},
		{name: "tags[] array syntax: all tags", path: "/measurements", query: "tags[]=t1&tags[]=t2", want: []string{"m4", "m1"}},
		{name: "tags comma syntax: all tags", path: "/measurements", query: "tags=t1,t2", want: []string{"m4", "m1"}},
		{name: "one tag", path: "/measurements", query: "tags=t1", want: []string{"m5", "m4", "m2", "m1"}},
		{name: "unknown tag matches nothing", path: "/measurements", query: "tags=t3", want: []string{}},
		{name: "label exact", path: "/measurements", query: "label=beta", want: []string{"m5", "m2"}},
		{name: "label is not a prefix match", path: "/measurements", query: "label=bet", want: []string{}},
		{name: "measurement_id selects the measurement", path: "/measurements", query: "measurement_id=m2", want: []string{"m2"}},
		{name: "measurement_id overrides every other parameter", path: "/measurements",
			query: "measurement_id=m2&type=VideoMeasurement&client_uuid=" + w.a + "&start_time=2030-01-01&tags=none&label=x&subject=dns", want: []string{"m2"}},
		{name: "unknown measurement_id", path: "/measurements", query: "measurement_id=zzz", want: []string{}},
	})
}

func TestExportOtherListings(t *testing.T) {
	w := newExportWorld(t, "expo")
	runExportCases(t, w, []exportCase{
		{name: "client reports", path: "/client_reports", want: []string{"r2", "r1"}},
		{name: "client reports by type", path: "/client_reports", query: "type=IcmpPingClientReport", want: []string{"r1"}},
		{name: "client reports of a measurement", path: "/client_reports", query: "measurement_id=m2", want: []string{"r2"}},
		{name: "client reports: measurement_id overrides type", path: "/client_reports", query: "measurement_id=m2&type=IcmpPingClientReport", want: []string{"r2"}},
		{name: "client reports by tags", path: "/client_reports", query: "tags[]=t2", want: []string{"r1"}},
		{name: "event bundles require type", path: "/event_bundles", bad: "type"},
		{name: "event bundles refuse other types", path: "/event_bundles", query: "type=VideoMeasurement", bad: "type"},
		{name: "event bundles of type VideoEventBundle", path: "/event_bundles", query: "type=VideoEventBundle", want: []string{"e1"}},
		{name: "event bundles of type WebEventBundle", path: "/event_bundles", query: "type=WebEventBundle", want: []string{"e2"}},
		{name: "event bundles by measurement_id need no type", path: "/event_bundles", query: "measurement_id=m2", want: []string{"e2"}},
		{name: "event bundles by time", path: "/event_bundles", query: "type=WebEventBundle&start_time=2024-05-02", want: []string{}},
		{name: "network requests", path: "/network_requests", want: []string{"n1", "n2"}},
		{name: "network requests of a measurement", path: "/network_requests", query: "measurement_id=m1", want: []string{"n2"}},
		{name: "network requests by client label", path: "/network_requests", query: "label=alpha", want: []string{"n2"}},
		{name: "user feedbacks", path: "/user_feedbacks", want: []string{"2", "1"}},
		{name: "user feedbacks by type", path: "/user_feedbacks", query: "type=rating", want: []string{"1"}},
		{name: "user feedbacks by client", path: "/user_feedbacks", query: "client_uuid=" + w.b, want: []string{"2"}},
		{name: "user feedbacks take no measurement_id", path: "/user_feedbacks", query: "measurement_id=m1", bad: "measurement_id"},
		{name: "clients take no measurement_id", path: "/clients", query: "measurement_id=m1", bad: "measurement_id"},
	})

	t.Run("network requests are pruned as the spec lists", func(t *testing.T) {
		r := w.get(t, "/network_requests", "measurement_id=m2")
		apitest.IDs(t, r)
		doc := r.JSON.([]any)[0].(map[string]any)
		data := doc["data"].(map[string]any)
		req := data["request"].(map[string]any)
		resp := doc["network_response"].(map[string]any)["data"].(map[string]any)
		for what, obj := range map[string]map[string]any{"data": data, "data.request": req, "network_response.data": resp,
			"network_response.data.response": resp["response"].(map[string]any)} {
			for _, gone := range []string{"initiator", "redirectHasExtraInfo", "hasUserGesture", "mixedContentType", "initialPriority",
				"referrerPolicy", "isSameSite", "hasExtraInfo", "securityState", "securityDetails", "alternateProtocolUsage"} {
				if _, ok := obj[gone]; ok {
					t.Errorf("%s.%s was not pruned", what, gone)
				}
			}
		}
		if req["url"] != "https://example.com/" || data["requestId"] != "42" || doc["client_time"] == nil {
			t.Errorf("kept fields are missing: %s", r.Raw)
		}
		if fmt.Sprint(resp["response"].(map[string]any)["status"]) != "200" {
			t.Errorf("response.status is missing: %s", r.Raw)
		}
	})

	t.Run("user feedbacks carry client {uuid}", func(t *testing.T) {
		r := w.get(t, "/user_feedbacks", "type=rating")
		apitest.IDs(t, r)
		fb := r.JSON.([]any)[0].(map[string]any)
		if c, _ := fb["client"].(map[string]any); c == nil || c["uuid"] != w.a {
			t.Fatalf("client = %v, want {uuid: %s}", fb["client"], w.a)
		}
		if fb["data_type"] != "object" || fb["type"] != "rating" {
			t.Fatalf("feedback fields lost: %s", r.Raw)
		}
	})
}

func TestExportPaging(t *testing.T) {
	w := newExportWorld(t, "expp")
	link := func(r *apitest.Response) map[string]url.Values {
		out := map[string]url.Values{}
		for _, part := range strings.Split(r.Header.Get("Link"), ", ") {
			target, rel, ok := strings.Cut(part, ">; rel=")
			if !ok || !strings.HasPrefix(target, "<") {
				t.Fatalf("malformed Link entry %q", part)
			}
			u, err := url.Parse(strings.TrimPrefix(target, "<"))
			if err != nil || !strings.HasSuffix(u.Path, server.ExportBase+"/measurements") || u.Host == "" {
				t.Fatalf("Link target %q is not the listing's absolute URL", target)
			}
			out[strings.Trim(rel, `"`)] = u.Query()
		}
		return out
	}
	pages := func(l map[string]url.Values) map[string]string {
		out := map[string]string{}
		for rel, q := range l {
			out[rel] = q.Get("page")
		}
		return out
	}
	cases := []struct {
		name, query string
		want        []string
		links       map[string]string
	}{
		{"default page", "", []string{"m5", "m4", "m3", "m2", "m1"}, map[string]string{"first": "1", "last": "1"}},
		{"first page of three", "per_page=2", []string{"m5", "m4"}, map[string]string{"first": "1", "next": "2", "last": "3"}},
		{"middle page", "per_page=2&page=2", []string{"m3", "m2"}, map[string]string{"first": "1", "prev": "1", "next": "3", "last": "3"}},
		{"last page", "per_page=2&page=3", []string{"m1"}, map[string]string{"first": "1", "prev": "2", "last": "3"}},
		{"past the last page is empty", "per_page=2&page=9", []string{}, map[string]string{"first": "1", "prev": "3", "last": "3"}},
		{"per_page at the maximum", "per_page=1000", []string{"m5", "m4", "m3", "m2", "m1"}, map[string]string{"first": "1", "last": "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.get(t, "/measurements", c.query)
			if got := apitest.IDs(t, r); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ids %v, want %v", got, c.want)
			}
			if r.Header.Get("Total") != "5" {
				t.Errorf("Total = %q, want 5", r.Header.Get("Total"))
			}
			perPage := "100"
			if q, _ := url.ParseQuery(c.query); q.Get("per_page") != "" {
				perPage = q.Get("per_page")
			}
			if r.Header.Get("Per-Page") != perPage {
				t.Errorf("Per-Page = %q, want %s", r.Header.Get("Per-Page"), perPage)
			}
			if got := pages(link(r)); !reflect.DeepEqual(got, c.links) {
				t.Errorf("Link pages %v, want %v (%s)", got, c.links, r.Header.Get("Link"))
			}
		})
	}
	t.Run("Link keeps the other query parameters", func(t *testing.T) {
		r := w.get(t, "/measurements", "per_page=1&tags[]=t1&tags[]=t2&start_time=2024-05-01")
		if got := apitest.IDs(t, r); !reflect.DeepEqual(got, []string{"m4"}) {
			t.Fatalf("ids %v", got)
		}
		next := link(r)["next"]
		if next.Get("page") != "2" || next.Get("per_page") != "1" || !reflect.DeepEqual(next["tags[]"], []string{"t1", "t2"}) ||
			next.Get("start_time") != "2024-05-01" {
			t.Fatalf("next link lost parameters: %v", next)
		}
		if r.Header.Get("Total") != "2" {
			t.Fatalf("Total = %q, want 2", r.Header.Get("Total"))
		}
	})
	for _, c := range []struct{ name, query, param string }{
		{"per_page over the maximum", "per_page=1001", "per_page"},
		{"per_page zero", "per_page=0", "per_page"},
		{"per_page not a number", "per_page=ten", "per_page"},
		{"page zero", "page=0", "page"},
		{"page negative", "page=-1", "page"},
		{"page not a number", "page=two", "page"},
	} {
		t.Run(c.name, func(t *testing.T) { apitest.Want400(t, w.get(t, "/measurements", c.query), c.param) })
	}
}

func TestExportClients(t *testing.T) {
	w := newExportWorld(t, "expc")
	other := newExportWorld(t, "expcx")
	ctx := context.Background()
	var sharedID int64
	if err := other.e.Store.Pool().QueryRow(ctx, `SELECT id FROM clients WHERE uuid = $1`, other.a).Scan(&sharedID); err != nil {
		t.Fatal(err)
	}
	if err := w.e.Store.ShareClient(ctx, other.o.ID, sharedID, w.o.ID); err != nil {
		t.Fatalf("share client: %v", err)
	}
	uuids := func(r *apitest.Response) []string {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		var out []string
		for _, c := range r.JSON.([]any) {
			out = append(out, c.(map[string]any)["uuid"].(string))
		}
		return out
	}
	t.Run("own clients only, newest first, with the spec's fields", func(t *testing.T) {
		r := w.get(t, "/clients", "")
		if got := uuids(r); !reflect.DeepEqual(got, []string{w.c, w.b, w.a}) {
			t.Fatalf("clients %v, want %v (shared %s must not appear)", got, []string{w.c, w.b, w.a}, other.a)
		}
		if r.Header.Get("Total") != "3" || r.Header.Get("Per-Page") != "100" || r.Header.Get("Link") == "" {
			t.Fatalf("paging headers: %v", r.Header)
		}
		a := r.JSON.([]any)[2].(map[string]any)
		// Optional fields are absent when unset (never null): a has a label
		// and tags, no extra label, is not disabled and has no registration key.
		wantKeys := []string{"created_at", "label", "tags", "type", "updated_at", "uuid"}
		var keys []string
		for k := range a {
			keys = append(keys, k)
		}
		if strings.Join(exportSorted(keys), ",") != strings.Join(wantKeys, ",") {
			t.Fatalf("client fields %v, want %v", exportSorted(keys), wantKeys)
		}
		if a["label"] != "alpha" || a["type"] != "automator" || !reflect.DeepEqual(a["tags"], []any{"t1", "t2"}) {
			t.Fatalf("client a: %v", a)
		}
	})
	runUUIDs := func(name, query string, want []string) {
		t.Run(name, func(t *testing.T) {
			if got := uuids(w.get(t, "/clients", query)); !reflect.DeepEqual(got, want) {
				t.Fatalf("clients %v, want %v", got, want)
			}
		})
	}
	runUUIDs("by tags[]", "tags[]=t1&tags[]=t2", []string{w.a})
	runUUIDs("by comma tags", "tags=t1", []string{w.b, w.a})
	runUUIDs("by label", "label=beta", []string{w.b})
	runUUIDs("by client_uuid, overriding tags", "client_uuid="+w.c+"&tags=t1", []string{w.c})
	runUUIDs("another data owner's client_uuid", "client_uuid="+other.a, nil)
	runUUIDs("created after start_time", "start_time=2000-01-01", []string{w.c, w.b, w.a})
	runUUIDs("none created after a future start_time", "start_time=2100-01-01", nil)
	runUUIDs("none created before end_time", "end_time=2000-01-01T00:00:00Z", nil)
	runUUIDs("paged", "per_page=1&page=2", []string{w.b})

	t.Run("registration_key: -1 means unlimited", func(t *testing.T) {
		g := w.e.GraphQL(t, w.o.Key, `mutation { capabilityCreate(input: {name: "cap"}) { id } }`, nil)
		if len(g.Errors) > 0 {
			t.Fatalf("capabilityCreate: %s", g.Raw)
		}
		capID := g.Data["capabilityCreate"].(map[string]any)["id"]
		g = w.e.GraphQL(t, w.o.Key, `mutation($c: Int!, $k: String!) { registrationKeyCreate(input: {capabilityId: $c, registrationKey: $k}) { id } }`,
			map[string]any{"c": capID, "k": "unlimited-key-" + w.o.Slug})
		if len(g.Errors) > 0 {
			t.Fatalf("registrationKeyCreate: %s", g.Raw)
		}
		var keyID int64
		fmt.Sscan(fmt.Sprint(g.Data["registrationKeyCreate"].(map[string]any)["id"]), &keyID)
		id := uuid.NewString()
		w.o.NewClient(t, store.NewClient{UUID: id, RegistrationKeyID: &keyID})
		r := w.get(t, "/clients", "client_uuid="+id)
		if uuids(r)[0] != id {
			t.Fatal("client not found")
		}
		rk := r.JSON.([]any)[0].(map[string]any)["registration_key"].(map[string]any)
		if rk["registration_key"] != "unlimited-key-"+w.o.Slug || fmt.Sprint(rk["num_registrations_left"]) != "-1" || len(rk) != 2 {
			t.Fatalf("registration_key = %v", rk)
		}
	})
}

func exportSorted(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestExportTenancy(t *testing.T) {
	w := newExportWorld(t, "expt")
	other := newExportWorld(t, "exptx")
	marker := "only-" + other.o.Slug
	other.insert(t, exportDoc{kind: "measurement", id: marker, client: other.a, typ: "VideoMeasurement", subject: "youtube", at: 99 * time.Hour})
	for _, path := range []string{"/measurements", "/client_reports", "/event_bundles?type=VideoEventBundle", "/network_requests",
		"/user_feedbacks", "/clients"} {
		t.Run("no foreign data in "+path, func(t *testing.T) {
			p, q, _ := strings.Cut(path, "?")
			r := w.get(t, p, q)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Raw)
			}
			for _, s := range []string{marker, other.a, other.b, other.c, other.o.Slug} {
				if strings.Contains(string(r.Raw), s) {
					t.Fatalf("answer contains the other data owner's %q: %s", s, r.Raw)
				}
			}
		})
	}
	t.Run("another data owner's measurement_id", func(t *testing.T) {
		if got := apitest.IDs(t, w.get(t, "/measurements", "measurement_id="+marker)); len(got) != 0 {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("another data owner's client_uuid", func(t *testing.T) {
		if got := apitest.IDs(t, w.get(t, "/measurements", "client_uuid="+other.a)); len(got) != 0 {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("admin keys are refused", func(t *testing.T) {
		r := w.e.Do(t, http.MethodGet, server.ExportBase+"/measurements", w.o.Key, nil)
		if r.Status != http.StatusForbidden {
			t.Fatalf("status %d, want 403: %s", r.Status, r.Raw)
		}
	})
	t.Run("no key", func(t *testing.T) {
		if r := w.e.Do(t, http.MethodGet, server.ExportBase+"/measurements", "", nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", r.Status)
		}
	})
}

// exportHits reads a search envelope's hits: the _source ids and the total.
func exportHits(t *testing.T, r *apitest.Response) ([]string, string) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", r.Status, r.Raw)
	}
	hits, ok := r.Obj(t)["hits"].(map[string]any)
	if !ok {
		t.Fatalf("no hits in the envelope: %s", r.Raw)
	}
	ids := []string{}
	for _, h := range hits["hits"].([]any) {
		src := h.(map[string]any)["_source"].(map[string]any)
		ids = append(ids, fmt.Sprint(src["id"]))
	}
	total := ""
	if tot, ok := hits["total"].(map[string]any); ok {
		total = fmt.Sprint(tot["value"])
	}
	return ids, total
}

func (w *exportWorld) post(t *testing.T, path string, body any) *apitest.Response {
	t.Helper()
	return w.e.Do(t, http.MethodPost, server.ExportBase+path, w.key, body)
}

func exportJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestExportSearch(t *testing.T) {
	w := newExportWorld(t, "exps")
	other := newExportWorld(t, "expsx")
	other.insert(t, exportDoc{kind: "measurement", id: "foreign", client: other.a, typ: "VideoMeasurement", subject: "youtube", at: time.Hour})
	byType := map[string]any{"query": map[string]any{"term": map[string]any{"type.keyword": "VideoMeasurement"}}}
	newestFirst := []any{map[string]any{"created_at": "desc"}}
	all := []string{"m5", "m4", "m3", "m2", "m1"}

	t.Run("GET with body as a JSON string answers the full envelope", func(t *testing.T) {
		r := w.get(t, "/search", "body="+url.QueryEscape(exportJSON(byType)))
		ids, total := exportHits(t, r)
		if !reflect.DeepEqual(ids, []string{"m1"}) || total != "1" {
			t.Fatalf("ids %v total %s: %s", ids, total, r.Raw)
		}
		if _, ok := r.Obj(t)["took"]; !ok {
			t.Errorf("envelope lacks took: %s", r.Raw)
		}
	})
	t.Run("POST with body as an object", func(t *testing.T) {
		ids, _ := exportHits(t, w.post(t, "/search", map[string]any{"body": byType}))
		if !reflect.DeepEqual(ids, []string{"m1"}) {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("POST with body as a JSON string", func(t *testing.T) {
		ids, _ := exportHits(t, w.post(t, "/search", map[string]any{"body": exportJSON(byType)}))
		if !reflect.DeepEqual(ids, []string{"m1"}) {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("only the data owner's measurements", func(t *testing.T) {
		r := w.post(t, "/search", map[string]any{"body": map[string]any{"query": map[string]any{"match_all": map[string]any{}}}, "sort": newestFirst})
		ids, total := exportHits(t, r)
		if !reflect.DeepEqual(ids, all) || total != "5" {
			t.Fatalf("ids %v total %s", ids, total)
		}
		if strings.Contains(string(r.Raw), "foreign") || strings.Contains(string(r.Raw), other.a) {
			t.Fatalf("another data owner's document: %s", r.Raw)
		}
	})
	t.Run("q is ANDed with the body's query", func(t *testing.T) {
		body := map[string]any{"query": map[string]any{"terms": map[string]any{"type.keyword": []any{"VideoMeasurement", "WebMeasurement"}}}}
		ids, _ := exportHits(t, w.post(t, "/search", map[string]any{"body": body, "q": "study.subject:youtube"}))
		if !reflect.DeepEqual(ids, []string{"m1"}) {
			t.Fatalf("ids %v", ids)
		}
		ids, _ = exportHits(t, w.get(t, "/search", "body="+url.QueryEscape(exportJSON(body))+"&q="+url.QueryEscape("study.subject:website")))
		if !reflect.DeepEqual(ids, []string{"m2"}) {
			t.Fatalf("GET ids %v", ids)
		}
	})
	t.Run("q alone with an empty body", func(t *testing.T) {
		ids, _ := exportHits(t, w.get(t, "/search", "body=%7B%7D&q="+url.QueryEscape("type:SpeedtestMeasurement")))
		if !reflect.DeepEqual(ids, []string{"m4"}) {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("_index in q only filters within the scope", func(t *testing.T) {
		r := w.get(t, "/search", "body=%7B%7D&q="+url.QueryEscape("_index:analytics-production-"+other.o.Slug+"-measurements"))
		if ids, _ := exportHits(t, r); len(ids) != 0 {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("_index term in the body only filters within the scope", func(t *testing.T) {
		byIndex := func(slug string) map[string]any {
			return map[string]any{"body": map[string]any{"query": map[string]any{"term": map[string]any{
				"_index": "analytics-production-" + slug + "-measurements-videomeasurement"}}}}
		}
		if ids, _ := exportHits(t, w.post(t, "/search", byIndex(w.o.Slug))); !reflect.DeepEqual(ids, []string{"m1"}) {
			t.Fatalf("own index: ids %v", ids)
		}
		if ids, _ := exportHits(t, w.post(t, "/search", byIndex(other.o.Slug))); len(ids) != 0 {
			t.Fatalf("other owner's index: ids %v", ids)
		}
	})
	t.Run("source_only answers the _source array (POST)", func(t *testing.T) {
		r := w.post(t, "/search", map[string]any{"body": map[string]any{"sort": newestFirst}, "source_only": true})
		if got := apitest.IDs(t, r); !reflect.DeepEqual(got, all) {
			t.Fatalf("ids %v: %s", got, r.Raw)
		}
	})
	t.Run("source_only, size and URL sort as GET parameters", func(t *testing.T) {
		r := w.get(t, "/search", "body=%7B%7D&source_only=true&size=2&sort=created_at:asc")
		if got := apitest.IDs(t, r); !reflect.DeepEqual(got, []string{"m1", "m2"}) {
			t.Fatalf("ids %v: %s", got, r.Raw)
		}
	})
	t.Run("from pages the hits", func(t *testing.T) {
		r := w.post(t, "/search", map[string]any{"body": map[string]any{"sort": newestFirst}, "size": 2, "from": 2, "source_only": true})
		if got := apitest.IDs(t, r); !reflect.DeepEqual(got, []string{"m3", "m2"}) {
			t.Fatalf("ids %v: %s", got, r.Raw)
		}
	})
	for _, c := range []struct {
		name    string
		r       func(t *testing.T) *apitest.Response
		mention string
	}{
		{"GET without body", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "q=a") }, "body"},
		{"POST without body", func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"q": "a"})
		}, "body"},
		{"body that is not JSON", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7Bnope") }, "body"},
		{"body that is not an object", func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"body": []any{1}})
		}, "body"},
		{"GET index parameter", func(t *testing.T) *apitest.Response {
			return w.get(t, "/search", "body=%7B%7D&index="+url.QueryEscape("analytics-production-"+other.o.Slug+"*"))
		}, "index"},
		{"POST index parameter", func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"body": map[string]any{}, "index": "analytics-production-" + other.o.Slug + "*"})
		}, "index"},
		{"GET routing parameter", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&routing=x") }, "routing"},
		{"unsupported GET parameter", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&foo=bar") }, "foo"},
		{"_index document in the body's query", func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"body": map[string]any{"query": map[string]any{"more_like_this": map[string]any{
				"like": []any{map[string]any{"_index": "analytics-production-" + other.o.Slug + "-measurements", "_id": "m1"}}}}}})
		}, "_index"},
		{"size over the cap", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&size=10001") }, "size"},
		{"size not a number", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&size=many") }, "size"},
		{"scroll over 5m", func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D&scroll=10m") }, "scroll"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) { apitest.Want400(t, c.r(t), c.mention) })
	}
}

// exportNDJSON asserts an NDJSON answer and returns each line's id.
func exportNDJSON(t *testing.T, r *apitest.Response) []string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Fatalf("Content-Type %q, want application/x-ndjson", ct)
	}
	ids := []string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(r.Raw), "\n"), "\n") {
		if line == "" {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", line, err)
		}
		ids = append(ids, fmt.Sprint(doc["id"]))
	}
	return ids
}

func TestExportSearchScroll(t *testing.T) {
	w := newExportWorld(t, "expsc")
	other := newExportWorld(t, "expscx")
	other.insert(t, exportDoc{kind: "measurement", id: "foreign", client: other.a, typ: "VideoMeasurement", subject: "youtube", at: time.Hour})
	all := []string{"m5", "m4", "m3", "m2", "m1"}
	t.Run("GET scroll streams every page as NDJSON", func(t *testing.T) {
		body := url.QueryEscape(exportJSON(map[string]any{"sort": []any{map[string]any{"created_at": "desc"}}}))
		got := exportNDJSON(t, w.get(t, "/search", "body="+body+"&scroll=1m&size=2"))
		if !reflect.DeepEqual(got, all) {
			t.Fatalf("ids %v, want %v", got, all)
		}
	})
	t.Run("POST scroll with a query", func(t *testing.T) {
		got := exportNDJSON(t, w.post(t, "/search", map[string]any{
			"body":   map[string]any{"query": map[string]any{"terms": map[string]any{"client_uuid": []any{w.a, other.a}}}, "sort": []any{map[string]any{"created_at": "asc"}}},
			"scroll": "30s", "size": 1}))
		if !reflect.DeepEqual(got, []string{"m1", "m4"}) {
			t.Fatalf("ids %v", got)
		}
	})
	t.Run("scroll with no hits is an empty stream", func(t *testing.T) {
		got := exportNDJSON(t, w.post(t, "/search", map[string]any{
			"body": map[string]any{"query": map[string]any{"term": map[string]any{"type.keyword": "GamingMeasurement"}}}, "scroll": "1m"}))
		if len(got) != 0 {
			t.Fatalf("ids %v", got)
		}
	})
}

func TestExportESQL(t *testing.T) {
	w := newExportWorld(t, "expq")
	other := newExportWorld(t, "expqx")
	from := "FROM analytics-production-" + w.o.Slug + "-measurements"
	query := from + " | WHERE type == \"VideoMeasurement\" OR type == \"WebMeasurement\" | KEEP id, type | SORT id"
	want := []any{map[string]any{"id": "m1", "type": "VideoMeasurement"}, map[string]any{"id": "m2", "type": "WebMeasurement"}}
	check := func(t *testing.T, r *apitest.Response) {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		if !reflect.DeepEqual(r.JSON, want) {
			t.Fatalf("rows %s, want %v", r.Raw, want)
		}
	}
	t.Run("GET answers one object per row", func(t *testing.T) { check(t, w.get(t, "/esql", "query="+url.QueryEscape(query))) })
	t.Run("POST answers one object per row", func(t *testing.T) { check(t, w.post(t, "/esql", map[string]any{"query": query})) })
	t.Run("only the data owner's documents", func(t *testing.T) {
		r := w.get(t, "/esql", "query="+url.QueryEscape(from+" | KEEP id, client_uuid"))
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		if n := len(r.JSON.([]any)); n != 5 || strings.Contains(string(r.Raw), other.a) {
			t.Fatalf("%d rows: %s", n, r.Raw)
		}
	})
	t.Run("the data owner's pattern reads every kind of its documents", func(t *testing.T) {
		r := w.get(t, "/esql", "query="+url.QueryEscape("FROM analytics-production-"+w.o.Slug+"* | KEEP id, client_uuid"))
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		if n := len(r.JSON.([]any)); n != 13 || strings.Contains(string(r.Raw), other.a) {
			t.Fatalf("%d rows, want the 13 fixture documents: %s", n, r.Raw)
		}
	})
	for _, c := range []struct{ name, query, mention string }{
		{"another data owner's index", "FROM analytics-production-" + other.o.Slug + "-measurements | KEEP id", other.o.Slug},
		{"every index", "FROM * | KEEP id", "*"},
		{"ENRICH", from + " | ENRICH policy ON id", "ENRICH is not supported"},
		{"no FROM", "ROW a = 1", "FROM"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			apitest.Want400(t, w.get(t, "/esql", "query="+url.QueryEscape(c.query)), c.mention)
			apitest.Want400(t, w.post(t, "/esql", map[string]any{"query": c.query}), c.mention)
		})
	}
	t.Run("refused: GET without query", func(t *testing.T) { apitest.Want400(t, w.get(t, "/esql", ""), "query") })
	t.Run("refused: POST without query", func(t *testing.T) { apitest.Want400(t, w.post(t, "/esql", map[string]any{}), "query") })
	t.Run("refused: POST with another key", func(t *testing.T) {
		apitest.Want400(t, w.post(t, "/esql", map[string]any{"query": query, "index": "x"}), "index")
	})
}

// LOOKUP JOIN on the data owner's lookup-clients index through /esql: the
// lookup documents are the data owner's own clients (a: alpha, tags t1 t2;
// b: beta, tag t1; c: no label, no tags; all "automator"). Measurement m6
// names a client of another data owner shared with this one (label alpha
// there): not a lookup document of this data owner, so its fields are null.
func TestExportESQLLookupJoin(t *testing.T) {
	w := newExportWorld(t, "expl")
	other := newExportWorld(t, "explx")
	ctx := context.Background()
	var sharedID int64
	if err := w.e.Store.Pool().QueryRow(ctx, "SELECT id FROM clients WHERE uuid = $1", other.a).Scan(&sharedID); err != nil {
		t.Fatal(err)
	}
	if err := w.e.Store.ShareClient(ctx, other.o.ID, sharedID, w.o.ID); err != nil {
		t.Fatal(err)
	}
	w.insert(t, exportDoc{kind: "measurement", id: "m6", client: other.a, typ: "VideoMeasurement", subject: "youtube", at: 60 * time.Hour})
	p := "analytics-production-" + w.o.Slug
	L := " | LOOKUP JOIN " + p + "-lookup-clients ON client_uuid"
	rows := func(t *testing.T, r *apitest.Response, want string) {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		var w any
		dec := json.NewDecoder(strings.NewReader(want))
		dec.UseNumber() // as the response is decoded
		if err := dec.Decode(&w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.JSON, w) {
			t.Fatalf("rows %s, want %s", r.Raw, want)
		}
	}
	for _, c := range []struct{ name, query, want string }{
		{"stats by client, then join", "FROM " + p + "-measurements* | STATS n = COUNT(*) BY client_uuid" + L + " | KEEP client_label, n | SORT client_label, n",
			`[{"client_label":"alpha","n":2},{"client_label":"beta","n":2},{"client_label":null,"n":1},{"client_label":null,"n":1}]`},
		{"join, then stats by label", "FROM " + p + "-measurements" + L + " | STATS n = COUNT(*) BY client_label | SORT client_label",
			`[{"n":2,"client_label":"alpha"},{"n":2,"client_label":"beta"},{"n":2,"client_label":null}]`},
		{"lookup fields of rows", "FROM " + p + "-measurements" + L + " | SORT id | KEEP id, client_label, client_type, client_tags",
			`[{"id":"m1","client_label":"alpha","client_type":"automator","client_tags":["t1","t2"]},
			  {"id":"m2","client_label":"beta","client_type":"automator","client_tags":"t1"},
			  {"id":"m3","client_label":null,"client_type":"automator","client_tags":null},
			  {"id":"m4","client_label":"alpha","client_type":"automator","client_tags":["t1","t2"]},
			  {"id":"m5","client_label":"beta","client_type":"automator","client_tags":"t1"},
			  {"id":"m6","client_label":null,"client_type":null,"client_tags":null}]`},
	} {
		t.Run("GET "+c.name, func(t *testing.T) { rows(t, w.get(t, "/esql", "query="+url.QueryEscape(c.query)), c.want) })
		t.Run("POST "+c.name, func(t *testing.T) { rows(t, w.post(t, "/esql", map[string]any{"query": c.query}), c.want) })
	}
	M := "FROM " + p + "-measurements"
	for _, c := range []struct{ name, query, mention string }{
		{"another data owner's lookup index", M + " | LOOKUP JOIN analytics-production-" + other.o.Slug + "-lookup-clients ON client_uuid", "outside"},
		{"a wildcard lookup index", M + " | LOOKUP JOIN " + p + "-lookup-* ON client_uuid", "one index"},
		{"an unknown lookup index", M + " | LOOKUP JOIN " + p + "-measurements ON client_uuid", "not a known lookup index"},
		{"a remote lookup index", M + " | LOOKUP JOIN remote:" + p + "-lookup-clients ON client_uuid", "remote"},
		{"join on another field", M + " | LOOKUP JOIN " + p + "-lookup-clients ON client_label", "LOOKUP JOIN on [client_label] is not supported"},
		{"FROM the lookup index", "FROM " + p + "-lookup-clients", "lookup index"},
		{"LOOKUP without JOIN", M + " | LOOKUP " + p + "-lookup-clients ON client_uuid", "only LOOKUP JOIN"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			apitest.Want400(t, w.get(t, "/esql", "query="+url.QueryEscape(c.query)), c.mention)
			apitest.Want400(t, w.post(t, "/esql", map[string]any{"query": c.query}), c.mention)
		})
	}
}

// TestExportEveryRoute calls every route of rest.ExportRoutes with an
// export key and minimal valid parameters, so that no route goes untested.
func TestExportEveryRoute(t *testing.T) {
	w := newExportWorld(t, "expr")
	esql := "FROM analytics-production-" + w.o.Slug + "-measurements | KEEP id"
	samples := map[string]func(t *testing.T) *apitest.Response{
		"GET /measurements":     func(t *testing.T) *apitest.Response { return w.get(t, "/measurements", "") },
		"GET /client_reports":   func(t *testing.T) *apitest.Response { return w.get(t, "/client_reports", "") },
		"GET /event_bundles":    func(t *testing.T) *apitest.Response { return w.get(t, "/event_bundles", "type=VideoEventBundle") },
		"GET /network_requests": func(t *testing.T) *apitest.Response { return w.get(t, "/network_requests", "") },
		"GET /clients":          func(t *testing.T) *apitest.Response { return w.get(t, "/clients", "") },
		"GET /user_feedbacks":   func(t *testing.T) *apitest.Response { return w.get(t, "/user_feedbacks", "") },
		"GET /search":           func(t *testing.T) *apitest.Response { return w.get(t, "/search", "body=%7B%7D") },
		"POST /search": func(t *testing.T) *apitest.Response {
			return w.post(t, "/search", map[string]any{"body": map[string]any{}})
		},
		"GET /esql":     func(t *testing.T) *apitest.Response { return w.get(t, "/esql", "query="+url.QueryEscape(esql)) },
		"POST /esql":    func(t *testing.T) *apitest.Response { return w.post(t, "/esql", map[string]any{"query": esql}) },
		"GET /_mapping": func(t *testing.T) *apitest.Response { return w.get(t, "/_mapping", "") },
		"GET /{index}/_mapping": func(t *testing.T) *apitest.Response {
			return w.get(t, "/analytics-production-"+w.o.Slug+"-*/_mapping", "")
		},
	}
	for _, rt := range rest.ExportRoutes {
		pattern := rt.Method + " " + rt.Path
		t.Run(pattern, func(t *testing.T) {
			call, ok := samples[pattern]
			if !ok {
				t.Fatalf("route %s has no sample request in TestExportEveryRoute", pattern)
			}
			r := call(t)
			if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d (%s): %s", r.Status, r.Header.Get("Content-Type"), r.Raw)
			}
			if rt.Paged && (r.Header.Get("Total") == "" || r.Header.Get("Per-Page") == "" || r.Header.Get("Link") == "") {
				t.Fatalf("paged route without paging headers: %v", r.Header)
			}
		})
	}
	if len(samples) != len(rest.ExportRoutes) {
		t.Errorf("%d samples for %d routes", len(samples), len(rest.ExportRoutes))
	}
}

func TestExportGraphQL(t *testing.T) {
	w := newExportWorld(t, "expg")
	g := w.e.GraphQL(t, w.o.Key, `{ exportMeasurements(filter: {tags: ["t1", "t2"]}, perPage: 1) { items total page perPage }
		exportClients(filter: {label: "beta"}) { items { uuid } total } }`, nil)
	if len(g.Errors) > 0 {
		t.Fatalf("errors: %s", g.Raw)
	}
	page := g.Data["exportMeasurements"].(map[string]any)
	items := page["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != "m4" || fmt.Sprint(page["total"]) != "2" || fmt.Sprint(page["perPage"]) != "1" {
		t.Fatalf("exportMeasurements: %s", g.Raw)
	}
	clients := g.Data["exportClients"].(map[string]any)["items"].([]any)
	if len(clients) != 1 || clients[0].(map[string]any)["uuid"] != w.b {
		t.Fatalf("exportClients: %s", g.Raw)
	}
	g = w.e.GraphQL(t, w.o.Key, `{ exportEventBundles { total } }`, nil)
	if g.Code() != "BAD_REQUEST" {
		t.Fatalf("event bundles without type: %s", g.Raw)
	}
}

// ES|QL answers a document's numbers as stored: a long beyond float64's
// exact range is not rounded, and a number beyond float64's range is no
// failure.
func TestExportESQLKeepsNumbersExact(t *testing.T) {
	w := newExportWorld(t, "expnum")
	w.o.InsertDocuments(t, "measurement", map[string]any{"id": "big", "client_uuid": w.a, "type": "GamingMeasurement",
		"created_at": "2026-11-05T00:00:00Z", "n": json.RawMessage("12345678901234567"), "neg": json.RawMessage("-9007199254740993"),
		"huge": json.RawMessage("1e400")})
	q := "FROM analytics-production-" + w.o.Slug + "-measurements* | WHERE id == \"big\" | KEEP id, n, neg, huge"
	r := w.get(t, "/esql", "query="+url.QueryEscape(q))
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	// (PostgreSQL stores 1e400 as the numeric 1 followed by 400 zeros.)
	if want := `[{"huge":1` + strings.Repeat("0", 400) + `,"id":"big","n":12345678901234567,"neg":-9007199254740993}]`; strings.TrimSpace(string(r.Raw)) != want {
		t.Fatalf("rows %s, want %s", r.Raw, want)
	}
	// Without KEEP the document's fields come flattened, just as exact.
	r = w.get(t, "/esql", "query="+url.QueryEscape("FROM analytics-production-"+w.o.Slug+"-measurements* | WHERE id == \"big\""))
	if r.Status != http.StatusOK || !strings.Contains(string(r.Raw), `"n":12345678901234567`) {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
}

// An ES|QL comparison of a multi-value is null, and the answer carries
// Elasticsearch's Warning headers (299, the agent, the quoted text).
func TestExportESQLMultiValueWarnings(t *testing.T) {
	w := newExportWorld(t, "expwarn")
	w.o.InsertDocuments(t, "measurement", map[string]any{"id": "mv", "client_uuid": w.a, "type": "GamingMeasurement",
		"created_at": "2026-11-05T00:00:00Z", "v": []any{1, 20}})
	q := "FROM analytics-production-" + w.o.Slug + "-measurements* | WHERE v > 10 | KEEP id"
	r := w.get(t, "/esql", "query="+url.QueryEscape(q))
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Raw)) != "[]" {
		t.Fatalf("status %d: %s, want no rows", r.Status, r.Raw)
	}
	col := strings.Index(q, "v > 10") + 1
	agent := "299 Elasticsearch-" + search.ESVersion + "-unknown "
	want := []string{
		agent + fmt.Sprintf(`"Line 1:%d: evaluation of [v > 10] failed, treating result as null. Only first 20 failures recorded."`, col),
		agent + fmt.Sprintf(`"Line 1:%d: java.lang.IllegalArgumentException: single-value function encountered multi-value"`, col),
	}
	if got := r.Header.Values("Warning"); !slices.Equal(got, want) {
		t.Fatalf("Warning headers %q, want %q", got, want)
	}
	r = w.get(t, "/esql", "query="+url.QueryEscape("FROM analytics-production-"+w.o.Slug+"-measurements* | WHERE id == \"mv\" | KEEP id"))
	if r.Status != http.StatusOK || len(r.Header.Values("Warning")) != 0 {
		t.Fatalf("status %d, Warning %q: want none", r.Status, r.Header.Values("Warning"))
	}
}
