package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestRaceKeyCreateCapabilityDelete: registration keys created while their
// capability is deleted answer as created or as not found, never 500.
func TestRaceKeyCreateCapabilityDelete(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "racekeys")
	for round := range 5 {
		capability := o.NewCapability(t, store.CapabilityInput{})
		statuses := make(chan int, 21)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := e.GraphQL(t, o.Key, `mutation($c: Int!, $k: String!) { registrationKeyCreate(input: {capabilityId: $c, registrationKey: $k}) { id } }`,
					map[string]any{"c": capability.ID, "k": fmt.Sprintf("race-key-%d-%d-%s", round, i, o.Slug)})
				if code := g.Code(); code != "" && code != "NOT_FOUND" {
					t.Errorf("round %d: registrationKeyCreate answered %s: %s", round, code, g.Raw)
				}
				statuses <- g.Status
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- e.Admin(t, http.MethodDelete, fmt.Sprintf("/capabilities/%d", capability.ID), o.Key, nil).Status
		}()
		wg.Wait()
		close(statuses)
		for s := range statuses {
			if s >= 500 {
				t.Errorf("round %d: status %d", round, s)
			}
		}
	}
}
