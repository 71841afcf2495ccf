package server_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestAccessLogNamesTheStatusAnswered: the access log's status is the one
// the client received (the metrics' middleware records it for both), for
// answers with a body, without one, and refusals made before any handler.
func TestAccessLogNamesTheStatusAnswered(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "accesslog")
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("logged")})
	logs := &logBuffer{}
	url := e.StartServer(t, slog.New(slog.NewTextHandler(logs, nil)), nil)
	for _, tc := range []struct {
		method, path, key string
		want              int
	}{
		{http.MethodGet, fmt.Sprintf("%s/clients/%d", server.AdminBase, c.ID), o.Key, http.StatusOK},
		{http.MethodHead, fmt.Sprintf("%s/clients/%d", server.AdminBase, c.ID), o.Key, http.StatusOK},
		{http.MethodGet, server.AdminBase + "/clients/999999999", o.Key, http.StatusNotFound},
		{http.MethodGet, server.AdminBase + "/clients/1", "not-a-key", http.StatusUnauthorized},
		{http.MethodPut, server.AdminBase + "/clients", o.Key, http.StatusMethodNotAllowed},
		{http.MethodOptions, server.AdminBase + "/clients", o.Key, http.StatusNoContent},
		{http.MethodGet, "/healthz", "", http.StatusOK},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, nil)
		if tc.key != "" {
			req.Header.Set("X-API-KEY", tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Fatalf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
		line := fmt.Sprintf("method=%s path=%s status=%d ", tc.method, tc.path, tc.want)
		waitFor(t, 5*time.Second, "the access log line "+line, func() bool {
			return matching(logs.lines(), `msg=request `, line) == 1
		})
	}
	if n := matching(logs.lines(), "status=0 "); n != 0 {
		t.Errorf("%d lines with status 0:\n%s", n, strings.Join(logs.lines(), "\n"))
	}
}
