package server_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestClientByIDWalk answers GET /clients/{id} of the admin API once, and
// FLEETGRAPH_WALK_AGAIN more times when that is set: bench/walk.sh
// compares the coverage counts of a run with none and a run with some to
// find the blocks every request runs once the caches are warm.
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
	again, err := strconv.Atoi(os.Getenv("FLEETGRAPH_WALK_AGAIN"))
	if err != nil && os.Getenv("FLEETGRAPH_WALK_AGAIN") != "" {
		t.Fatalf("FLEETGRAPH_WALK_AGAIN: %v", err)
	}
	for range again {
		get()
	}
}
