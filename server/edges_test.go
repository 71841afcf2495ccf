package server_test

import (
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestMutationResultsAttached: the object a mutation answers has its edges
// attached like a query's, nested edges and counts included.
func TestMutationResultsAttached(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "mutedges")
	capability := o.NewCapability(t, store.CapabilityInput{Name: apitest.Ptr("probes")})
	o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
	data := e.GraphQLData(t, o.Key, `mutation($c: Int!) {
		registrationKeyCreate(input: {capabilityId: $c, registrationKey: "mutation-edges-key-0001"}) {
			clientsCount capability { name registrationKeysCount registrationKeys { registrationKey capability { name } } } } }`,
		map[string]any{"c": capability.ID})
	k := data["registrationKeyCreate"].(map[string]any)
	c := k["capability"].(map[string]any)
	if c["name"] != "probes" || apitest.Int(t, c["registrationKeysCount"]) != 2 || apitest.Int(t, k["clientsCount"]) != 0 {
		t.Fatalf("attached edges of the created key: %v", k)
	}
	keys := c["registrationKeys"].([]any)
	if len(keys) != 2 || keys[1].(map[string]any)["capability"].(map[string]any)["name"] != "probes" {
		t.Fatalf("the capability's keys and their capability: %v", keys)
	}
}
