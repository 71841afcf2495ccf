package server_test

import (
	"net/http"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func TestHealthAndReadiness(t *testing.T) {
	e := apitest.Get(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := e.Do(t, http.MethodGet, path, "", nil); r.Status != http.StatusOK {
			t.Errorf("%s: status %d, want 200 (%s)", path, r.Status, r.Raw)
		}
	}
}

// TestFavicon: browsers opening GraphiQL ask for /favicon.ico; it answers
// 204, not a 404 in their console.
func TestFavicon(t *testing.T) {
	if r := apitest.Get(t).Do(t, http.MethodGet, "/favicon.ico", "", nil); r.Status != http.StatusNoContent {
		t.Errorf("status %d, want 204", r.Status)
	}
}

func TestCreateAndReadIspThroughBothInterfaces(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "smoke")
	r := e.Admin(t, http.MethodPost, "/isps", o.Key, map[string]any{"name": "Telekom", "country": "de", "type": "fixed"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	isp := r.Obj(t)["isp"].(map[string]any)
	if isp["country"] != "DE" || isp["name"] != "Telekom" {
		t.Errorf("created isp = %v", isp)
	}
	g := e.GraphQL(t, o.Key, `{ isps { id name country } }`, nil)
	if len(g.Errors) > 0 || len(g.Data["isps"].([]any)) != 1 {
		t.Fatalf("graphql isps: %s", g.Raw)
	}
}
