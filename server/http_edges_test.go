package server_test

import (
	"net/http"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
)

// A search parameter given both in a POST body and in the query string is
// refused: taking one would silently drop the other.
func TestSearchParameterInBodyAndQueryIsRefused(t *testing.T) {
	w := newExportWorld(t, "rvboth")
	for _, c := range []struct {
		key, path, body, param string
	}{
		{w.key, server.ExportBase + "/search?q=id:m1", `{"body": {"query": {"match_all": {}}}, "q": "id:m2"}`, "q"},
		{w.key, server.ExportBase + "/search?size=1", `{"body": {}, "size": 2}`, "size"},
		{w.o.Key, server.AdminBase + "/measurements/search?size=1", `{"body": {}, "size": 2}`, "size"},
		{w.o.Key, server.AdminBase + "/measurements/search?source_only=true", `{"body": {}, "source_only": false}`, "source_only"},
	} {
		r := compatDo(t, w, http.MethodPost, c.path, compatHeaders(c.key), []byte(c.body))
		compatWantMessage(t, r, http.StatusBadRequest, c.param+" is given both in the body and as a query parameter")
	}
	// Each place alone still works: the query's size, then the body's.
	r := compatDo(t, w, http.MethodPost, server.ExportBase+"/search?size=1",
		compatHeaders(w.key), []byte(`{"body": {"sort": [{"created_at": "desc"}]}}`))
	compatWantIDs(t, "size in the query", apitest.HitIDs(t, r), "m5")
	r = compatDo(t, w, http.MethodPost, server.ExportBase+"/search",
		compatHeaders(w.key), []byte(`{"body": {"sort": [{"created_at": "desc"}]}, "size": 2}`))
	compatWantIDs(t, "size in the body", apitest.HitIDs(t, r), "m5", "m4")
}

// An explicit gzip;q=0 refuses gzip even when * accepts everything.
func TestGzipRefusedByQZero(t *testing.T) {
	w := newExportWorld(t, "rvgzq")
	for ae, want := range map[string]string{
		"gzip;q=0, *":       "",
		"*, gzip;q=0":       "",
		"x-gzip;q=0, *;q=1": "",
		"*;q=0.5":           "gzip",
		"gzip;q=0.1, *;q=0": "gzip",
		"identity, *;q=0":   "",
	} {
		r := compatDo(t, w, http.MethodGet, server.ExportBase+"/measurements", compatHeaders(w.key, "Accept-Encoding", ae), nil)
		apitest.WantStatus(t, r, http.StatusOK)
		if got := r.Header.Get("Content-Encoding"); got != want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", ae, got, want)
		}
		if want == "gzip" {
			r.Raw = compatGunzip(t, r.Raw)
			r.JSON = apitest.DecodeJSON(t, r.Raw)
		}
		compatWantIDs(t, "Accept-Encoding "+ae, apitest.IDs(t, r), "m5", "m4", "m3", "m2", "m1")
	}
}

// A body that asks for nothing ({} or null, as HTTP libraries send when
// given no data) on a route that takes no body is no error; one with
// content still is.
func TestEmptyJSONBodyOnBodilessRoute(t *testing.T) {
	w := newExportWorld(t, "rvempty")
	for _, body := range []string{`{}`, " { } \n", `null`, "\xef\xbb\xbf{}"} {
		r := compatDo(t, w, http.MethodGet, server.ExportBase+"/measurements?per_page=2", compatHeaders(w.key), []byte(body))
		compatWantIDs(t, "GET with body "+body, apitest.IDs(t, r), "m5", "m4")
	}
	r := compatDo(t, w, http.MethodDelete, server.AdminBase+"/anomaly_detection_overrides?id=999999", compatHeaders(w.o.Key), []byte(`{}`))
	apitest.WantStatus(t, r, http.StatusOK)
	if d := apitest.DecodeJSON(t, r.Raw).(map[string]any)["deleted"]; d == nil || d.(interface{ String() string }).String() != "0" {
		t.Errorf("DELETE with body {}: %.200s", r.Raw)
	}
	for _, body := range []string{`{"id": 1}`, `[]`, `{`, `"x"`} {
		r = compatDo(t, w, http.MethodGet, server.ExportBase+"/measurements", compatHeaders(w.key), []byte(body))
		compatWantMessage(t, r, http.StatusBadRequest, "takes no request body")
	}
}
