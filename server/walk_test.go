package server_test

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestClientByIDWalk answers GET /clients/{id} of the admin API, once, or
// twice when FLEETGRAPH_WALK_AGAIN is set: bench/walk.sh compares the
// coverage counts of the two runs to find the functions one request runs
// once the caches are warm.
func TestClientByIDWalk(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "walk")
	c := o.NewClient(t, store.NewClient{Label: apitest.Ptr("walked")})
	get := func() {
		r := e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", c.ID), o.Key, nil)
		if got := apitest.Object(t, apitest.WantEnvelope(t, r, http.StatusOK, "client")); got["label"] != "walked" {
			t.Fatalf("client %v", got)
		}
	}
	get()
	if os.Getenv("FLEETGRAPH_WALK_AGAIN") != "" {
		get()
	}
}
