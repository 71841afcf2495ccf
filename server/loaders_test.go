package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// ldrQuery touches every dataloader a client list fans out to, three
// levels deep.
const ldrQuery = `{ clients { id clientGroups { id name clients { id } } currentIspContract { ispName isp { name ispContractsCount } client { uuid } } registrationKey { registrationKey clientsCount capability { name } } deliveredPublicConfig { name } offline } }`

// ldrGroupSize is how many clients share a client group.
const ldrGroupSize = 5

// ldrSeed makes a data owner with n clients, each in a client group, with a
// current ISP contract (half of them also an expired one), a registration
// key of a capability and an assigned public config, seen a minute ago.
func ldrSeed(tb testing.TB, e *apitest.Env, prefix string, n int) *apitest.Owner {
	tb.Helper()
	o := e.NewOwner(tb, prefix)
	var isps []int64
	for i := range 5 {
		isps = append(isps, o.NewISP(tb, store.IspInput{Name: apitest.Ptr(fmt.Sprintf("ISP %d", i))}).ID)
	}
	var regKeys []int64
	for i := range 2 {
		c := o.NewCapability(tb, store.CapabilityInput{Name: apitest.Ptr(fmt.Sprintf("Capability %d", i)),
			AllowedMeasurementTypes: []string{"VideoMeasurement"}})
		for j := range 2 {
			regKeys = append(regKeys, o.NewRegistrationKey(tb, store.RegistrationKeyInput{CapabilityID: c.ID,
				RegistrationKey: fmt.Sprintf("%s-%d-%d-%s", o.Slug, i, j, uuid.NewString()[:8])}).ID)
		}
	}
	o.NewConfig(tb, "public", "Default config", true)
	var configs []int64
	for i := range 3 {
		configs = append(configs, o.NewConfig(tb, "public", fmt.Sprintf("Config %d", i), false))
	}
	seen := time.Now().Add(-time.Minute)
	yearAgo, monthAgo, inAYear := time.Now().AddDate(-1, 0, 0), time.Now().AddDate(0, -1, 0), time.Now().AddDate(1, 0, 0)
	var group []int64
	for i := range n {
		id := o.NewClient(tb, store.NewClient{Label: apitest.Ptr(fmt.Sprintf("probe-%03d", i)),
			RegistrationKeyID: &regKeys[i%len(regKeys)], PublicConfigID: &configs[i%len(configs)], LastSeenAt: &seen}).ID
		o.NewContract(tb, store.NewContract{IspID: isps[i%len(isps)], ClientID: id, Name: "current",
			ValidFrom: &monthAgo, ValidUntil: &inAYear})
		if i%2 == 0 {
			o.NewContract(tb, store.NewContract{IspID: isps[(i+1)%len(isps)], ClientID: id, Name: "expired",
				ValidFrom: &yearAgo, ValidUntil: &monthAgo})
		}
		group = append(group, id)
		if len(group) == ldrGroupSize || i == n-1 {
			o.NewGroup(tb, fmt.Sprintf("Group %03d", i/ldrGroupSize), group...)
			group = nil
		}
	}
	return o
}

// ldrRun runs the nested query for o and answers the statements it cost.
func ldrRun(tb testing.TB, e *apitest.Env, o *apitest.Owner, n int) int64 {
	tb.Helper()
	before := e.Counter.Count()
	g := e.GraphQL(tb, o.Key, ldrQuery, nil)
	stmts := e.Counter.Count() - before
	if len(g.Errors) > 0 {
		tb.Fatalf("nested query: %.500s", g.Raw)
	}
	clients, _ := g.Data["clients"].([]any)
	if len(clients) != n {
		tb.Fatalf("%d clients, want %d", len(clients), n)
	}
	for _, c := range clients {
		ldrCheckClient(tb, c.(map[string]any))
	}
	return stmts
}

// ldrCheckClient asserts that every nested object the query asked for came back.
func ldrCheckClient(tb testing.TB, c map[string]any) {
	tb.Helper()
	groups, _ := c["clientGroups"].([]any)
	if len(groups) != 1 {
		tb.Fatalf("client %v: %d groups, want 1", c["id"], len(groups))
	}
	members, _ := groups[0].(map[string]any)["clients"].([]any)
	found := false
	for _, m := range members {
		found = found || fmt.Sprint(m.(map[string]any)["id"]) == fmt.Sprint(c["id"])
	}
	if len(members) == 0 || len(members) > ldrGroupSize || !found {
		tb.Fatalf("client %v: group members %v", c["id"], members)
	}
	contract, _ := c["currentIspContract"].(map[string]any)
	isp, _ := contract["isp"].(map[string]any)
	if contract == nil || isp == nil || contract["ispName"] != isp["name"] || fmt.Sprint(isp["ispContractsCount"]) == "0" {
		tb.Fatalf("client %v: current contract %v", c["id"], contract)
	}
	if client, _ := contract["client"].(map[string]any); client == nil || client["uuid"] == "" {
		tb.Fatalf("client %v: contract client %v", c["id"], contract["client"])
	}
	key, _ := c["registrationKey"].(map[string]any)
	capability, _ := key["capability"].(map[string]any)
	if key == nil || capability == nil || capability["name"] == "" || fmt.Sprint(key["clientsCount"]) == "0" {
		tb.Fatalf("client %v: registration key %v", c["id"], key)
	}
	if cfg, _ := c["deliveredPublicConfig"].(map[string]any); cfg == nil || cfg["name"] == "Default config" {
		tb.Fatalf("client %v: delivered config %v, want its assigned one", c["id"], c["deliveredPublicConfig"])
	}
	if c["offline"] != false {
		tb.Fatalf("client %v: offline = %v, want false", c["id"], c["offline"])
	}
}

// TestNestedClientsQueryStatementCount: the dataloaders make the query's
// cost in SQL statements independent of how many clients it returns. Not
// parallel: the statement counter is shared by the whole test binary.
func TestNestedClientsQueryStatementCount(t *testing.T) {
	e := apitest.Get(t)
	const small, large, rounds, most = 5, 500, 5, 20
	x := ldrSeed(t, e, "loaders-x", small)
	y := ldrSeed(t, e, "loaders-y", large)
	ldrCompareCounts(t, rounds, most, small, large,
		func() int64 { return ldrRun(t, e, x, small) }, func() int64 { return ldrRun(t, e, y, large) })
}

// ldrCompareCounts runs a query rounds times for a data owner with small
// and one with large clients and fails unless both cost the same number of
// statements, fewer than most.
func ldrCompareCounts(t *testing.T, rounds int, most int64, small, large int, runSmall, runLarge func() int64) {
	t.Helper()
	for i := range rounds {
		cx, cy := runSmall(), runLarge()
		t.Logf("round %d: %d clients -> %d statements, %d clients -> %d statements", i+1, small, cx, large, cy)
		if cx != cy {
			t.Errorf("round %d: %d statements for %d clients but %d for %d: some loader ran more than one batch",
				i+1, cx, small, cy, large)
		}
		if cx >= most || cy >= most {
			t.Errorf("round %d: %d and %d statements, want fewer than %d", i+1, cx, cy, most)
		}
	}
}

// BenchmarkNestedClientsQuery runs the nested query over 500 clients.
func BenchmarkNestedClientsQuery(b *testing.B) {
	e := apitest.Get(b)
	const n = 500
	o := ldrSeed(b, e, "loaders-bench", n)
	start := e.Counter.Count()
	for b.Loop() {
		g := e.GraphQL(b, o.Key, ldrQuery, nil)
		if len(g.Errors) > 0 {
			b.Fatalf("nested query: %.500s", g.Raw)
		}
	}
	b.ReportMetric(float64(e.Counter.Count()-start)/float64(b.N), "stmts/op")
}
