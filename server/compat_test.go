package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
)

// HTTP-level compatibility of the search, measurement and anomaly routes of
// the Administration API and of the whole Export API with what integrators'
// scripts and HTTP libraries send: header spellings, content types and
// codings, slashes, methods, query encodings, lenient body forms, and the
// answers' types, numbers and compression. The world is newExportWorld's:
// measurements m1 (client a, tags t1 t2, +1h), m2 (b, t1, +2h), m3 (c, +3h),
// m4 (a, +26h), m5 (b, +50h), listed newest first.

// compatResp is an answer as it came off the wire (not decompressed).
// compatDo sends a request to path (from the server root) with a client
// that neither asks for nor undoes a compression; headers are sent with
// their names exactly as given.
func compatDo(t *testing.T, w *exportWorld, method, path string, headers http.Header, body []byte) *apitest.Response {
	t.Helper()
	var b any
	if body != nil {
		b = body
	}
	return apitest.Send(t, apitest.RawClient, apitest.Request(t, method, w.e.URL+path, headers, b))
}

// compatHeaders is the export key plus extra headers.
func compatHeaders(key string, kv ...string) http.Header {
	h := http.Header{"X-API-KEY": {key}}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = []string{kv[i+1]}
	}
	return h
}

func compatWantIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ids %v, want %v", what, got, want)
	}
}

func compatWantMessage(t *testing.T, r *apitest.Response, status int, mention string) {
	t.Helper()
	apitest.WantStatus(t, r, status)
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("error Content-Type %q", ct)
	}
	msg, _ := apitest.DecodeJSON(t, r.Raw).(map[string]any)["message"].(string)
	if !strings.Contains(msg, mention) {
		t.Errorf("message %q does not mention %q", msg, mention)
	}
}

func compatGzip(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compatGunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("answer is not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("answer's gzip stream is broken: %v", err)
	}
	return out
}

// sortedSearch asks for every measurement, newest first.
const compatSearch = `{"body": {"query": {"match_all": {}}, "sort": [{"created_at": "desc"}]}}`

func TestCompatHeaderSpellingsAndContentTypes(t *testing.T) {
	w := newExportWorld(t, "cmphdr")
	all := []string{"m5", "m4", "m3", "m2", "m1"}

	r := compatDo(t, w, http.MethodGet, server.ExportBase+"/measurements", http.Header{"x-api-key": {w.key}}, nil)
	compatWantIDs(t, "lower-case x-api-key", apitest.IDs(t, r), all...)
	r = compatDo(t, w, http.MethodGet, server.AdminBase+"/measurements/m1", http.Header{"X-Api-Key": {w.o.Key}}, nil)
	apitest.WantStatus(t, r, http.StatusOK)

	// Bodies are JSON whatever the declared type: curl -d declares a form.
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8",
		"APPLICATION/JSON", "application/x-www-form-urlencoded", "text/plain"} {
		t.Run("content type "+ct, func(t *testing.T) {
			h := compatHeaders(w.key)
			if ct != "" {
				h["Content-Type"] = []string{ct}
			}
			r := compatDo(t, w, http.MethodPost, server.ExportBase+"/search", h, []byte(compatSearch))
			compatWantIDs(t, "export search", apitest.HitIDs(t, r), all...)
			h["X-API-KEY"] = []string{w.o.Key}
			r = compatDo(t, w, http.MethodPost, server.AdminBase+"/measurements/search", h, []byte(compatSearch))
			compatWantIDs(t, "admin search", apitest.HitIDs(t, r), all...)
			r = compatDo(t, w, http.MethodPatch, server.AdminBase+"/anomaly_events/resolve", h, []byte(`{"anomaly_ids": ["nope::1"]}`))
			apitest.WantStatus(t, r, http.StatusOK)
			if got := apitest.DecodeJSON(t, r.Raw).(map[string]any); got["updated"] != json.Number("0") || got["requested"] != json.Number("1") {
				t.Errorf("resolve: %v, want updated 0 of requested 1", got)
			}
			r = compatDo(t, w, http.MethodPost, server.AdminBase+"/anomaly_detection_overrides", h,
				[]byte(`{"scope": {"subject": "youtube", "measurement_type": "VideoMeasurement", "metric": "bitrate", "detection_pass": "spike"}, "level": "low"}`))
			apitest.WantStatus(t, r, http.StatusCreated)
			h["X-API-KEY"] = []string{w.key}
			r = compatDo(t, w, http.MethodPost, server.ExportBase+"/esql", h,
				[]byte(`{"query": "FROM analytics-production-`+w.o.Slug+`-measurements* | SORT created_at DESC | KEEP id | LIMIT 2"}`))
			compatWantIDs(t, "esql", apitest.IDs(t, r), "m5", "m4")
		})
	}

	// A body that is not JSON says what it was sent as.
	r = compatDo(t, w, http.MethodPost, server.ExportBase+"/search",
		compatHeaders(w.key, "Content-Type", "application/x-www-form-urlencoded"), []byte(`body=%7B%7D`))
	compatWantMessage(t, r, http.StatusBadRequest, "sent as application/x-www-form-urlencoded")

	// Whatever Accept says, a search without scroll answers its JSON envelope.
	for _, accept := range []string{"application/json", "application/x-ndjson", "*/*", "application/json, text/plain, */*", "text/html"} {
		r = compatDo(t, w, http.MethodPost, server.ExportBase+"/search", compatHeaders(w.key, "Accept", accept), []byte(compatSearch))
		compatWantIDs(t, "Accept "+accept, apitest.HitIDs(t, r), all...)
		if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("Accept %s: Content-Type %q", accept, ct)
		}
	}
}

func TestCompatCompressedRequestBodies(t *testing.T) {
	w := newExportWorld(t, "cmpgzin")
	gz := compatGzip(t, []byte(compatSearch))
	for _, enc := range []string{"gzip", "GZIP", "x-gzip"} {
		r := compatDo(t, w, http.MethodPost, server.ExportBase+"/search",
			compatHeaders(w.key, "Content-Type", "application/json", "Content-Encoding", enc), gz)
		compatWantIDs(t, "Content-Encoding "+enc, apitest.HitIDs(t, r), "m5", "m4", "m3", "m2", "m1")
	}
	r := compatDo(t, w, http.MethodPatch, server.AdminBase+"/anomaly_events/resolve",
		http.Header{"X-API-KEY": {w.o.Key}, "Content-Encoding": {"gzip"}}, compatGzip(t, []byte(`{"anomaly_ids": ["a", "b"]}`)))
	apitest.WantStatus(t, r, http.StatusOK)
	if got := apitest.DecodeJSON(t, r.Raw).(map[string]any)["requested"]; got != json.Number("2") {
		t.Errorf("gzip resolve: requested %v, want 2", got)
	}

	r = compatDo(t, w, http.MethodPost, server.ExportBase+"/search", compatHeaders(w.key, "Content-Encoding", "gzip"), []byte(compatSearch))
	compatWantMessage(t, r, http.StatusBadRequest, "not valid gzip")
	r = compatDo(t, w, http.MethodPost, server.ExportBase+"/search", compatHeaders(w.key, "Content-Encoding", "br"), []byte(compatSearch))
	compatWantMessage(t, r, http.StatusUnsupportedMediaType, `"br" is not supported`)
	// The size limit holds for the decompressed body: 2 MiB of spaces
	// compress to a few KiB.
	big := append([]byte(compatSearch), bytes.Repeat([]byte(" "), 2<<20)...)
	r = compatDo(t, w, http.MethodPost, server.ExportBase+"/search", compatHeaders(w.key, "Content-Encoding", "gzip"), compatGzip(t, big))
	compatWantMessage(t, r, http.StatusRequestEntityTooLarge, "larger than")
}

func TestCompatPathsAndMethods(t *testing.T) {
	w := newExportWorld(t, "cmppath")
	all := []string{"m5", "m4", "m3", "m2", "m1"}
	for _, p := range []string{"/export_api/v1/measurements/", "/export_api/v1//measurements", "//export_api/v1/measurements//"} {
		r := compatDo(t, w, http.MethodGet, p, compatHeaders(w.key), nil)
		compatWantIDs(t, p, apitest.IDs(t, r), all...)
	}
	r := compatDo(t, w, http.MethodGet, server.AdminBase+"/measurements/m1/", compatHeaders(w.o.Key), nil)
	if apitest.WantStatus(t, r, http.StatusOK); apitest.DecodeJSON(t, r.Raw).(map[string]any)["id"] != "m1" {
		t.Errorf("trailing slash on a measurement: %.200s", r.Raw)
	}
	r = compatDo(t, w, http.MethodPost, server.AdminBase+"/measurements/search/", compatHeaders(w.o.Key), []byte(compatSearch))
	compatWantIDs(t, "search with a trailing slash", apitest.HitIDs(t, r), all...)
	// An empty path segment is no id.
	r = compatDo(t, w, http.MethodGet, server.AdminBase+"/measurements//p1203_client_report", compatHeaders(w.o.Key), nil)
	compatWantMessage(t, r, http.StatusNotFound, "")

	// HEAD answers a GET's headers without its body.
	r = compatDo(t, w, http.MethodHead, server.ExportBase+"/measurements?per_page=2", compatHeaders(w.key, "Accept-Encoding", "gzip"), nil)
	apitest.WantStatus(t, r, http.StatusOK)
	if len(r.Raw) != 0 || r.Header.Get("Total") != "5" || r.Header.Get("Per-Page") != "2" || r.Header.Get("Content-Encoding") != "" {
		t.Errorf("HEAD: body %q, Total %q, Per-Page %q, Content-Encoding %q", r.Raw, r.Header.Get("Total"),
			r.Header.Get("Per-Page"), r.Header.Get("Content-Encoding"))
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("HEAD: Content-Type %q", ct)
	}

	// OPTIONS and wrong methods name the allowed ones; no CORS headers.
	for _, c := range []struct {
		key, path, allow string
	}{
		{w.key, server.ExportBase + "/measurements", "GET, HEAD, OPTIONS"},
		{w.key, server.ExportBase + "/search", "GET, HEAD, POST, OPTIONS"},
		{w.key, server.ExportBase + "/esql/", "GET, HEAD, POST, OPTIONS"},
		// GET of these paths is GET /measurements/{id} of the id "search".
		{w.o.Key, server.AdminBase + "/measurements/search", "GET, HEAD, POST, OPTIONS"},
		{w.o.Key, server.AdminBase + "/measurements/m1/network_performance_report", "GET, HEAD, OPTIONS"},
		{w.o.Key, server.AdminBase + "/anomaly_events/resolve", "GET, HEAD, PATCH, OPTIONS"},
		{w.o.Key, server.AdminBase + "/anomaly_detection_overrides", "GET, HEAD, POST, DELETE, OPTIONS"},
	} {
		r := compatDo(t, w, http.MethodOptions, c.path, compatHeaders(c.key, "Origin", "https://example.com",
			"Access-Control-Request-Method", "GET"), nil)
		if r.Status != http.StatusNoContent || r.Header.Get("Allow") != c.allow || len(r.Raw) != 0 {
			t.Errorf("OPTIONS %s: %d Allow %q body %q, want 204 Allow %q", c.path, r.Status, r.Header.Get("Allow"), r.Raw, c.allow)
		}
		if v := r.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("OPTIONS %s: Access-Control-Allow-Origin %q", c.path, v)
		}
		r = compatDo(t, w, http.MethodPut, c.path, compatHeaders(c.key), []byte(`{}`))
		compatWantMessage(t, r, http.StatusMethodNotAllowed, "allowed: "+c.allow)
		if r.Header.Get("Allow") != c.allow {
			t.Errorf("PUT %s: Allow %q, want %q", c.path, r.Header.Get("Allow"), c.allow)
		}
	}
	// OPTIONS needs a key like every request.
	r = compatDo(t, w, http.MethodOptions, server.ExportBase+"/measurements", nil, nil)
	apitest.WantStatus(t, r, http.StatusUnauthorized)

	// A body on a route that takes none is refused, not ignored.
	r = compatDo(t, w, http.MethodGet, server.ExportBase+"/measurements", compatHeaders(w.key), []byte(`{"type": "VideoMeasurement"}`))
	compatWantMessage(t, r, http.StatusBadRequest, "takes no request body")
	r = compatDo(t, w, http.MethodDelete, server.AdminBase+"/anomaly_detection_overrides", compatHeaders(w.o.Key), []byte(`{"id": 1}`))
	compatWantMessage(t, r, http.StatusBadRequest, "query string")
	r = compatDo(t, w, http.MethodGet, server.ExportBase+"/measurements", compatHeaders(w.key), []byte("\r\n"))
	compatWantIDs(t, "GET with a blank body", apitest.IDs(t, r), all...)
}

func TestCompatQueryEncodings(t *testing.T) {
	w := newExportWorld(t, "cmpq")
	z := uuid.NewString()
	w.client(t, z, "Zürich Süd α", []string{"ü"})
	w.insert(t, exportDoc{kind: "measurement", id: "m0", client: z, typ: "WebMeasurement", subject: "website", at: 30 * time.Minute})
	get := func(query string) *apitest.Response {
		return compatDo(t, w, http.MethodGet, server.ExportBase+"/measurements?"+query, compatHeaders(w.key), nil)
	}
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"tags[] percent-encoded", "tags%5B%5D=t1&tags%5B%5D=t2", []string{"m4", "m1"}},
		{"tags[] raw", "tags[]=t1&tags[]=t2", []string{"m4", "m1"}},
		{"tags comma list", "tags=t1,t2", []string{"m4", "m1"}},
		{"tags comma percent-encoded", "tags=t1%2Ct2", []string{"m4", "m1"}},
		{"UTF-8 tag", "tags=%C3%BC", []string{"m0"}},
		{"UTF-8 label, + for spaces", "label=Z%C3%BCrich+S%C3%BCd+%CE%B1", []string{"m0"}},
		{"UTF-8 label, %20 for spaces", "label=Z%C3%BCrich%20S%C3%BCd%20%CE%B1", []string{"m0"}},
		// 03:00+01:00 is 02:00Z: m2 (02:00Z) on.
		{"zone with encoded +", "start_time=2024-05-01T03:00:00%2B01:00", []string{"m5", "m4", "m3", "m2"}},
		{"zone with a raw + (arrives as a space)", "start_time=2024-05-01T03:00:00+01:00", []string{"m5", "m4", "m3", "m2"}},
		{"zone with a space", "start_time=2024-05-01T03:00:00%2001:00", []string{"m5", "m4", "m3", "m2"}},
		{"space separator and raw + zone", "start_time=2024-05-01+03:00:00+01:00", []string{"m5", "m4", "m3", "m2"}},
		{"negative zone", "start_time=2024-05-01T01:00:00-01:00", []string{"m5", "m4", "m3", "m2"}},
		{"per_page as digits", "per_page=2", []string{"m5", "m4"}},
		{"blank parameter", "label=&per_page=2", []string{"m5", "m4"}},
	} {
		compatWantIDs(t, c.name, apitest.IDs(t, get(c.query)), c.want...)
	}
	for _, c := range []struct{ name, query, mention string }{
		{"quoted per_page", "per_page=%222%22", "per_page must be an integer"},
		{"repeated single-valued key", "type=VideoMeasurement&type=WebMeasurement", "more than once"},
		{"unparseable time", "start_time=yesterday", "start_time"},
	} {
		compatWantMessage(t, get(c.query), http.StatusBadRequest, c.mention)
	}

	// + is a space in q: type:VideoMeasurement OR type:WebMeasurement.
	r := compatDo(t, w, http.MethodGet, server.ExportBase+"/search?body=%7B%22sort%22%3A%5B%7B%22created_at%22%3A%22asc%22%7D%5D%7D"+
		"&q=type:VideoMeasurement+OR+type:WebMeasurement", compatHeaders(w.key), nil)
	compatWantIDs(t, "q with + for spaces", apitest.HitIDs(t, r), "m0", "m1", "m2")
	r = compatDo(t, w, http.MethodGet, server.ExportBase+"/search?body=%7B%7D&size=2&source_only=true&q=type%3ANetworkMeasurement", compatHeaders(w.key), nil)
	compatWantIDs(t, "string size and source_only in the query", apitest.IDs(t, r), "m3")
}

func TestCompatLenientBodies(t *testing.T) {
	w := newExportWorld(t, "cmpbody")
	post := func(path, key, body string) *apitest.Response {
		return compatDo(t, w, http.MethodPost, path, compatHeaders(key, "Content-Type", "application/json"), []byte(body))
	}
	sorted := `"sort": [{"created_at": "desc"}]`
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"UTF-8 byte order mark", "\xef\xbb\xbf" + compatSearch, []string{"m5", "m4", "m3", "m2", "m1"}},
		{"trailing CRLF", compatSearch + "\r\n", []string{"m5", "m4", "m3", "m2", "m1"}},
		{"body as a JSON string", `{"body": "{\"sort\": [{\"created_at\": \"asc\"}], \"size\": 2}"}`, []string{"m1", "m2"}},
		{"top-level size as a string", `{"body": {` + sorted + `}, "size": "2"}`, []string{"m5", "m4"}},
		{"top-level from as a string", `{"body": {` + sorted + `}, "size": 2, "from": " 3 "}`, []string{"m2", "m1"}},
		{"size in body as a string", `{"body": {` + sorted + `, "size": "1", "from": "1"}}`, []string{"m4"}},
	} {
		compatWantIDs(t, c.name+" (export)", apitest.HitIDs(t, post(server.ExportBase+"/search", w.key, c.body)), c.want...)
		compatWantIDs(t, c.name+" (admin)", apitest.HitIDs(t, post(server.AdminBase+"/measurements/search", w.o.Key, c.body)), c.want...)
	}
	r := post(server.ExportBase+"/search", w.key, `{"body": {`+sorted+`}, "size": "1", "source_only": "true"}`)
	compatWantIDs(t, "source_only as a string", apitest.IDs(t, r), "m5")
	r = post(server.AdminBase+"/measurements/search", w.o.Key, `{"body": {`+sorted+`}, "size": 1, "source_only": "TRUE"}`)
	compatWantIDs(t, "source_only upper-case", apitest.IDs(t, r), "m5")
	for _, c := range []struct{ name, body, mention string }{
		{"size not a number", `{"body": {}, "size": "ten"}`, "size must be an integer"},
		{"size a fraction string", `{"body": {}, "size": "1.5"}`, "size must be an integer"},
		{"source_only yes", `{"body": {}, "source_only": "yes"}`, "source_only must be true or false"},
		{"body size not a number", `{"body": {"size": "ten"}}`, "size must be an integer"},
		{"two JSON values", compatSearch + `{}`, "malformed JSON"},
	} {
		compatWantMessage(t, post(server.ExportBase+"/search", w.key, c.body), http.StatusBadRequest, c.mention)
	}
}

func TestCompatResponses(t *testing.T) {
	w := newExportWorld(t, "cmpresp")
	// Integers beyond float64's 53 bits, and a float, come back as stored.
	w.insert(t, exportDoc{kind: "measurement", id: "big", client: w.a, typ: "VideoMeasurement", subject: "youtube", at: 90 * time.Hour,
		extra: map[string]any{"n": json.Number("12345678901234567"), "neg": json.Number("-9007199254740993"), "f": json.Number("0.1")}})
	const exact = `"n":12345678901234567`
	scroll := []byte(`{"body": {"sort": [{"created_at": "desc"}], "size": 2}, "scroll": "1m"}`)
	for _, c := range []struct {
		name, method, path, key string
		body                    []byte
		ct                      string
	}{
		{"listing", http.MethodGet, server.ExportBase + "/measurements?per_page=1", w.key, nil, "application/json; charset=utf-8"},
		{"measurement", http.MethodGet, server.AdminBase + "/measurements/big", w.o.Key, nil, "application/json; charset=utf-8"},
		{"search envelope", http.MethodPost, server.ExportBase + "/search", w.key, []byte(compatSearch), "application/json; charset=utf-8"},
		{"search source_only", http.MethodPost, server.AdminBase + "/measurements/search", w.o.Key,
			[]byte(`{"body": {}, "source_only": true, "size": 10}`), "application/json; charset=utf-8"},
		{"scroll", http.MethodPost, server.ExportBase + "/search", w.key, scroll, "application/x-ndjson"},
	} {
		r := compatDo(t, w, c.method, c.path, compatHeaders(c.key), c.body)
		apitest.WantStatus(t, r, http.StatusOK)
		if got := r.Header.Get("Content-Type"); got != c.ct {
			t.Errorf("%s: Content-Type %q, want %q", c.name, got, c.ct)
		}
		if !bytes.Contains(r.Raw, []byte(exact)) || !bytes.Contains(r.Raw, []byte(`"neg":-9007199254740993`)) ||
			!bytes.Contains(r.Raw, []byte(`"f":0.1`)) {
			t.Errorf("%s: numbers changed: %.400s", c.name, r.Raw)
		}
		// JSON answers are sized; streams are chunked.
		if cl := r.Header.Get("Content-Length"); (c.ct == "application/x-ndjson") != (cl == "") {
			t.Errorf("%s: Content-Length %q", c.name, cl)
		}
	}
}

func TestCompatGzipResponses(t *testing.T) {
	w := newExportWorld(t, "cmpgzout")
	w.insert(t, exportDoc{kind: "measurement", id: "m6", client: w.c, typ: "WebMeasurement", subject: "website", at: 60 * time.Hour})
	scroll := []byte(`{"body": {"sort": [{"created_at": "asc"}], "size": 2}, "scroll": "1m"}`)
	for _, c := range []struct {
		name, method, path, key string
		body                    []byte
	}{
		{"listing", http.MethodGet, server.ExportBase + "/measurements?per_page=1000", w.key, nil},
		{"client listing", http.MethodGet, server.ExportBase + "/clients", w.key, nil},
		{"search", http.MethodPost, server.ExportBase + "/search", w.key, []byte(compatSearch)},
		{"admin search", http.MethodPost, server.AdminBase + "/measurements/search", w.o.Key, []byte(compatSearch)},
		{"measurement", http.MethodGet, server.AdminBase + "/measurements/m1", w.o.Key, nil},
		{"error", http.MethodGet, server.ExportBase + "/measurements?type=Nope", w.key, nil},
		{"scroll of three pages", http.MethodPost, server.ExportBase + "/search", w.key, scroll},
	} {
		t.Run(c.name, func(t *testing.T) {
			plain := compatDo(t, w, c.method, c.path, compatHeaders(c.key), c.body)
			if plain.Header.Get("Content-Encoding") != "" || !strings.Contains(plain.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("plain answer: Content-Encoding %q, Vary %q", plain.Header.Get("Content-Encoding"), plain.Header.Get("Vary"))
			}
			for _, ae := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", "*"} {
				z := compatDo(t, w, c.method, c.path, compatHeaders(c.key, "Accept-Encoding", ae), c.body)
				if z.Status != plain.Status || z.Header.Get("Content-Encoding") != "gzip" ||
					z.Header.Get("Content-Type") != plain.Header.Get("Content-Type") {
					t.Fatalf("Accept-Encoding %s: %d %v, want %d gzip", ae, z.Status, z.Header, plain.Status)
				}
				if cl := z.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(z.Raw)) {
					t.Errorf("Accept-Encoding %s: Content-Length %s of a %d-byte body", ae, cl, len(z.Raw))
				}
				got := compatGunzip(t, z.Raw)
				took := regexp.MustCompile(`"took":[0-9]+`) // varies between requests
				if !bytes.Equal(took.ReplaceAll(got, nil), took.ReplaceAll(plain.Raw, nil)) {
					t.Errorf("Accept-Encoding %s: decompressed %.300s\nplain %.300s", ae, got, plain.Raw)
				}
			}
			for _, ae := range []string{"gzip;q=0", "identity", "br"} {
				r := compatDo(t, w, c.method, c.path, compatHeaders(c.key, "Accept-Encoding", ae), c.body)
				if r.Header.Get("Content-Encoding") != "" {
					t.Errorf("Accept-Encoding %s: compressed anyway", ae)
				}
			}
		})
	}
	// The scroll's lines, decompressed: all six measurements, oldest first.
	z := compatDo(t, w, http.MethodPost, server.ExportBase+"/search", compatHeaders(w.key, "Accept-Encoding", "gzip"), scroll)
	var ids []string
	for _, line := range strings.Split(strings.TrimSuffix(string(compatGunzip(t, z.Raw)), "\n"), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("NDJSON line %q: %v", line, err)
		}
		ids = append(ids, doc["id"].(string))
	}
	compatWantIDs(t, "gzip scroll", ids, "m1", "m2", "m3", "m4", "m5", "m6")
}
