package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

const regKeyCreate = `mutation($c: Int!, $k: String) { registrationKeyCreate(input: {capabilityId: $c, registrationKey: $k}) { id registrationKey } }`

// TestRegistrationKeysHardToGuess: generated keys carry 128 random bits; a
// key of one's own choosing must be long and printable; a taken key is a
// 409 that names no data owner, also when another data owner holds it
// (keys are unique across data owners: a probe registers with the key
// alone).
func TestRegistrationKeysHardToGuess(t *testing.T) {
	e := apitest.Get(t)
	a, b := e.NewOwner(t, "regkeya"), e.NewOwner(t, "regkeyb")
	capA := a.NewCapability(t, store.CapabilityInput{}).ID
	capB := b.NewCapability(t, store.CapabilityInput{}).ID

	seen := map[string]bool{}
	generated := regexp.MustCompile(`^[a-z2-7]{26}$`) // 16 bytes of base32
	for range 20 {
		k := e.GraphQLData(t, a.Key, regKeyCreate, map[string]any{"c": capA})["registrationKeyCreate"].(map[string]any)["registrationKey"].(string)
		if !generated.MatchString(k) || seen[k] {
			t.Fatalf("generated key %q: want 26 base32 characters, each key new", k)
		}
		seen[k] = true
	}

	for _, bad := range []string{"abc", strings.Repeat("x", 19), "twenty chars with spaces", strings.Repeat("é", 20), strings.Repeat("k", 129)} {
		g, first := e.GraphQLFail(t, a.Key, regKeyCreate, map[string]any{"c": capA, "k": bad})
		if g.Code() != "BAD_USER_INPUT" || !strings.Contains(first.Message, "registrationKey") {
			t.Errorf("key %q: %s", bad, g.Raw)
		}
	}
	own := apitest.Unique("a-key-of-our-own-choosing")
	e.GraphQLData(t, a.Key, regKeyCreate, map[string]any{"c": capA, "k": own})

	g, first := e.GraphQLFail(t, b.Key, regKeyCreate, map[string]any{"c": capB, "k": own})
	if g.Code() != "CONFLICT" || strings.Contains(first.Message, a.Slug) || strings.Contains(strings.ToLower(first.Message), "owner") {
		t.Errorf("taken key: %s", g.Raw)
	}
	if r := e.Admin(t, http.MethodGet, "/capabilities", b.Key, nil); strings.Contains(string(r.Raw), own) {
		t.Errorf("another owner's key is listed: %s", r.Raw)
	}

	// The probe's oracle (issue 31): creating another data owner's key
	// string answers exactly what creating one's own again answers, and
	// changes nothing of the holder's key. What it confirms, /register
	// confirms too (and registers a probe with): the defence is the key
	// space, docs/decisions.md "Registration keys".
	generatedA := e.GraphQLData(t, a.Key, regKeyCreate, map[string]any{"c": capA})["registrationKeyCreate"].(map[string]any)
	ownAgain, _ := e.GraphQLFail(t, a.Key, regKeyCreate, map[string]any{"c": capA, "k": generatedA["registrationKey"]})
	foreign, _ := e.GraphQLFail(t, b.Key, regKeyCreate, map[string]any{"c": capB, "k": generatedA["registrationKey"]})
	if string(mustJSON(t, ownAgain.Errors)) != string(mustJSON(t, foreign.Errors)) || foreign.Code() != "CONFLICT" {
		t.Errorf("another data owner's key: %s; one's own again: %s; want the same 409", foreign.Raw, ownAgain.Raw)
	}
	keys := e.GraphQLData(t, a.Key, `query($c: Int!) { capability(id: $c) { registrationKeys { id registrationKey } } }`,
		map[string]any{"c": capA})
	if !strings.Contains(string(mustJSON(t, keys)), string(mustJSON(t, generatedA))) {
		t.Errorf("the holder's key changed: %v, want %v among them", keys, generatedA)
	}
}
