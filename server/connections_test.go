package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// connQuery asks for a page of clients with everything a pager reads.
const connQuery = `query($first: Int, $after: String, $last: Int, $before: String, $filter: ClientFilter, $orderBy: ClientOrder) {
	clientsConnection(first: $first, after: $after, last: $last, before: $before, filter: $filter, orderBy: $orderBy) {
		totalCount
		pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
		edges { cursor node { id label } } } }`

// connPage is one answer of connQuery.
type connPage struct {
	labels      []string
	total       int64
	next, prev  bool
	start, end  any
	edgeCursors []string
}

func getPage(t *testing.T, e *apitest.Env, key string, vars map[string]any) connPage {
	t.Helper()
	data := e.GraphQLData(t, key, connQuery, vars)
	c := data["clientsConnection"].(map[string]any)
	pi := c["pageInfo"].(map[string]any)
	p := connPage{total: int64(apitest.Int(t, c["totalCount"])), next: pi["hasNextPage"] == true,
		prev: pi["hasPreviousPage"] == true, start: pi["startCursor"], end: pi["endCursor"]}
	for _, edge := range c["edges"].([]any) {
		ed := edge.(map[string]any)
		p.labels = append(p.labels, fmt.Sprint(ed["node"].(map[string]any)["label"]))
		p.edgeCursors = append(p.edgeCursors, ed["cursor"].(string))
	}
	return p
}

// TestClientsConnectionPaging: pages forward and backward through every
// order meet each client once, in order, with Relay's page info.
func TestClientsConnectionPaging(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "connpage")
	// Labels not in id order, one client without a label.
	labels := []string{"delta", "Alpha", "charlie", "echo", "bravo", "foxtrot", "golf"}
	for _, l := range labels {
		o.NewClient(t, store.NewClient{Label: apitest.Ptr(l)})
	}
	o.NewClient(t, store.NewClient{})
	byID := append(slices.Clone(labels), "<nil>")
	byLabel := []string{"<nil>", "Alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"}
	reversed := func(s []string) []string { r := slices.Clone(s); slices.Reverse(r); return r }
	for _, tc := range []struct {
		name    string
		orderBy map[string]any
		want    []string
	}{
		{"by id (default)", nil, byID},
		{"by id descending", map[string]any{"field": "id", "direction": "desc"}, reversed(byID)},
		{"by created at", map[string]any{"field": "createdAt"}, byID},
		{"by label", map[string]any{"field": "label"}, byLabel},
		{"by label descending", map[string]any{"field": "label", "direction": "desc"}, reversed(byLabel)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			vars := map[string]any{"first": 3, "orderBy": tc.orderBy}
			for i := 0; ; i++ {
				p := getPage(t, e, o.Key, vars)
				if p.total != 8 || p.prev {
					t.Fatalf("page %d: totalCount %d, hasPreviousPage %v; want 8, false", i, p.total, p.prev)
				}
				got = append(got, p.labels...)
				if p.start != p.edgeCursors[0] || p.end != p.edgeCursors[len(p.edgeCursors)-1] {
					t.Fatalf("page %d: start/end cursors %v %v are not the edges' %v", i, p.start, p.end, p.edgeCursors)
				}
				if !p.next {
					break
				}
				vars["after"] = p.end
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("forward: %v, want %v", got, tc.want)
			}
			got = nil
			vars = map[string]any{"last": 3, "orderBy": tc.orderBy}
			for i := 0; ; i++ {
				p := getPage(t, e, o.Key, vars)
				if p.next {
					t.Fatalf("backward page %d: hasNextPage true", i)
				}
				got = append(slices.Clone(p.labels), got...)
				if !p.prev {
					break
				}
				vars["before"] = p.start
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("backward: %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("a cursor keeps its place when clients come and go before it", func(t *testing.T) {
		vars := map[string]any{"first": 2, "orderBy": map[string]any{"field": "label"}}
		first := getPage(t, e, o.Key, vars) // <nil>, Alpha
		aardvark := o.NewClient(t, store.NewClient{Label: apitest.Ptr("aardvark")})
		vars["after"] = first.end
		if p := getPage(t, e, o.Key, vars); !slices.Equal(p.labels, []string{"bravo", "charlie"}) {
			t.Fatalf("the page after Alpha once aardvark came before it: %v, want [bravo charlie]", p.labels)
		}
		e.GraphQLData(t, o.Key, `mutation($id: ID!) { clientDelete(id: $id) }`, map[string]any{"id": fmt.Sprint(aardvark.ID)})
	})
	t.Run("after and before together bound the page", func(t *testing.T) {
		all := getPage(t, e, o.Key, map[string]any{"first": 8})
		p := getPage(t, e, o.Key, map[string]any{"first": 10, "after": all.edgeCursors[1], "before": all.edgeCursors[5]})
		if !slices.Equal(p.labels, byID[2:5]) || p.next {
			t.Fatalf("between the 2nd and the 6th: %v (next %v), want %v", p.labels, p.next, byID[2:5])
		}
	})
}

// TestClientsConnectionFilters: each filter, alone and together, selects
// exactly its clients, and totalCount counts them.
func TestClientsConnectionFilters(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	o := e.NewOwner(t, "connfilter")
	other := e.NewOwner(t, "connfilter-other")
	capability := o.NewCapability(t, store.CapabilityInput{Name: apitest.Ptr("probes")})
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID})
	recent, old := time.Now().Add(-time.Minute), time.Now().Add(-48*time.Hour)
	mk := func(label, typ string, tags []string, seen *time.Time, withKey bool) apitest.Client {
		c := store.NewClient{Label: apitest.Ptr(label), Type: typ, Tags: tags, LastSeenAt: seen}
		if withKey {
			c.RegistrationKeyID = &key.ID
		}
		return o.NewClient(t, c)
	}
	berlin := mk("Berlin-1", "probe", []string{"de", "fiber"}, &recent, true)
	mk("berlin-2", "probe", []string{"de"}, &old, false)
	hamburg := mk("Hamburg", "automator", []string{"de", "fiber"}, &old, false)
	mk("Paris", "probe", []string{"fr", "fiber"}, nil, true)
	o.NewGroup(t, "north", berlin.ID, hamburg.ID)
	e.GraphQLData(t, o.Key, `mutation($id: ID!) { clientDisable(id: $id, input: {reason: "moved"}) { id } }`,
		map[string]any{"id": fmt.Sprint(hamburg.ID)})
	o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: berlin.UUID, CPU: apitest.Ptr(99.0)})
	shared := other.NewClient(t, store.NewClient{Label: apitest.Ptr("Berlin-shared"), Type: "probe", Tags: []string{"de"}, LastSeenAt: &recent})
	if err := e.Store.ShareClient(ctx, other.ID, shared.ID, o.ID); err != nil {
		t.Fatal(err)
	}
	other.NewClient(t, store.NewClient{Label: apitest.Ptr("Berlin-foreign"), Tags: []string{"de"}})

	for _, tc := range []struct {
		name   string
		filter map[string]any
		want   []string
	}{
		{"no filter: own and shared", nil, []string{"Berlin-1", "berlin-2", "Hamburg", "Paris", "Berlin-shared"}},
		{"search the label, any case", map[string]any{"search": "BERLIN"}, []string{"Berlin-1", "berlin-2", "Berlin-shared"}},
		{"search a part of the UUID", map[string]any{"search": strings.ToUpper(hamburg.UUID[9:18])}, []string{"Hamburg"}},
		{"search wildcards match themselves", map[string]any{"search": "%"}, nil},
		{"every tag", map[string]any{"tags": []string{"de", "fiber"}}, []string{"Berlin-1", "Hamburg"}},
		{"group", map[string]any{"groupId": o.NewGroup(t, "empty")}, nil},
		{"type", map[string]any{"type": "automator"}, []string{"Hamburg"}},
		{"offline", map[string]any{"offline": true}, []string{"berlin-2", "Hamburg"}},
		{"online", map[string]any{"offline": false}, []string{"Berlin-1", "Berlin-shared"}},
		{"disabled", map[string]any{"disabled": true}, []string{"Hamburg"}},
		{"enabled", map[string]any{"disabled": false}, []string{"Berlin-1", "berlin-2", "Paris", "Berlin-shared"}},
		{"registration key", map[string]any{"registrationKeyId": key.ID}, []string{"Berlin-1", "Paris"}},
		{"health critical", map[string]any{"healthStates": []string{"critical"}}, []string{"Berlin-1"}},
		{"health unknown (own clients only)", map[string]any{"healthStates": []string{"unknown", "healthy"}}, []string{"berlin-2", "Hamburg", "Paris"}},
		{"together", map[string]any{"search": "berlin", "tags": []string{"de"}, "offline": false, "disabled": false},
			[]string{"Berlin-1", "Berlin-shared"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := getPage(t, e, o.Key, map[string]any{"first": 100, "filter": tc.filter})
			if !slices.Equal(p.labels, tc.want) || p.total != int64(len(tc.want)) {
				t.Fatalf("%v (totalCount %d), want %v", p.labels, p.total, tc.want)
			}
		})
	}
	t.Run("group members", func(t *testing.T) {
		g := e.GraphQLData(t, o.Key, `{ clientGroups { id name } }`, nil)["clientGroups"].([]any)
		var north any
		for _, x := range g {
			if x.(map[string]any)["name"] == "north" {
				north = x.(map[string]any)["id"]
			}
		}
		p := getPage(t, e, o.Key, map[string]any{"filter": map[string]any{"groupId": north}})
		if !slices.Equal(p.labels, []string{"Berlin-1", "Hamburg"}) {
			t.Fatalf("group north: %v", p.labels)
		}
		// Another data owner's group selects none of its clients.
		if p := getPage(t, e, other.Key, map[string]any{"filter": map[string]any{"groupId": north}}); p.total != 0 {
			t.Fatalf("another data owner filtering by this group: %v", p.labels)
		}
	})
}

// TestClientsConnectionBadArguments: arguments that cannot be served are
// BAD_USER_INPUT naming the argument, never a server error.
func TestClientsConnectionBadArguments(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "connbad")
	o.NewClient(t, store.NewClient{Label: apitest.Ptr("one")})
	o.NewClient(t, store.NewClient{Label: apitest.Ptr("two")})
	byLabel := getPage(t, e, o.Key, map[string]any{"first": 1, "orderBy": map[string]any{"field": "label"}})
	for _, tc := range []struct {
		name  string
		vars  map[string]any
		field string
	}{
		{"first 0", map[string]any{"first": 0}, "first"},
		{"first over 100", map[string]any{"first": 101}, "first"},
		{"last negative", map[string]any{"last": -1}, "last"},
		{"first and last", map[string]any{"first": 2, "last": 2}, "last"},
		{"not base64", map[string]any{"after": "!!!"}, "after"},
		{"base64 of no cursor", map[string]any{"before": "aGVsbG8"}, "before"},
		{"cursor of another order", map[string]any{"after": byLabel.end}, "after"},
		{"cursor of another direction", map[string]any{"after": byLabel.end,
			"orderBy": map[string]any{"field": "label", "direction": "desc"}}, "after"},
		{"blank search", map[string]any{"filter": map[string]any{"search": "  "}}, "filter.search"},
		{"blank type", map[string]any{"filter": map[string]any{"type": ""}}, "filter.type"},
		{"bad tag", map[string]any{"filter": map[string]any{"tags": []string{"a\x00b"}}}, "filter.tags[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, ge := e.GraphQLFail(t, o.Key, connQuery, tc.vars)
			if g.Code() != "BAD_USER_INPUT" || !strings.Contains(fmt.Sprint(ge.Extensions["errors"]), tc.field) {
				t.Fatalf("%s: %s, want BAD_USER_INPUT on %s", tc.name, g.Raw, tc.field)
			}
		})
	}
}

// connNestedQuery is a dashboard page: clients with everything the
// loaders fan out to, three levels deep.
const connNestedQuery = `query($first: Int, $filter: ClientFilter) { clientsConnection(first: $first, filter: $filter) {
	totalCount pageInfo { hasNextPage endCursor }
	edges { cursor node { id clientGroups { id name clients { id } } currentIspContract { ispName isp { name ispContractsCount } client { uuid } } registrationKey { registrationKey clientsCount capability { name } } deliveredPublicConfig { name } offline } } } }`

// TestClientsConnectionStatementCount: a page costs the same statements
// whatever its size, with the lookahead of every level below it.
func TestClientsConnectionStatementCount(t *testing.T) {
	e := apitest.Get(t)
	const small, large = 5, 60
	o := ldrSeed(t, e, "conn-stmts", large)
	run := func(n int) func() int64 {
		return func() int64 {
			before := e.Counter.Count()
			data := e.GraphQLData(t, o.Key, connNestedQuery, map[string]any{"first": n,
				"filter": map[string]any{"search": "probe", "offline": false}})
			stmts := e.Counter.Count() - before
			edges := data["clientsConnection"].(map[string]any)["edges"].([]any)
			if len(edges) != n {
				t.Fatalf("%d edges, want %d", len(edges), n)
			}
			for _, edge := range edges {
				ldrCheckClient(t, edge.(map[string]any)["node"].(map[string]any))
			}
			return stmts
		}
	}
	run(small)() // the first request of a key also reads the key
	ldrCompareCounts(t, 3, 20, small, large, run(small), run(large))
}

// TestConnectionComplexity: a connection costs its selection once per
// limits.PageComplexityUnit edges it may answer, so the same selection
// passes on a page of 10 and exceeds the limit on a page of 100 that holds
// pages of 100 measurements; a document over the limit is refused at every
// request.
func TestConnectionComplexity(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "conncplx")
	o.NewClient(t, store.NewClient{Label: apitest.Ptr("one")})
	const q = `query($first: Int) { clientsConnection(first: $first) { edges { node { id
		measurements(first: 100) { edges { cursor node { id document reports { id type document } client { id } } } } } } } }`
	if g := e.GraphQL(t, o.Key, q, map[string]any{"first": 10}); len(g.Errors) > 0 {
		t.Fatalf("a page of 10: %s", g.Raw)
	}
	if g := e.GraphQL(t, o.Key, q, map[string]any{"first": 100}); g.Code() != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Fatalf("a page of 100 with pages of 100 below: %s", g.Raw)
	}
	// Without a variable the complexity is kept from the first request, a
	// refusal never: the same document is refused again.
	literal := strings.Replace(q, "query($first: Int) { clientsConnection(first: $first)", "{ clientsConnection(first: 100)", 1)
	for i := range 2 {
		if g := e.GraphQL(t, o.Key, literal, nil); g.Code() != "COMPLEXITY_LIMIT_EXCEEDED" {
			t.Fatalf("request %d of a literal page of 100 with pages of 100 below: %s", i+1, g.Raw)
		}
	}
	t.Run("lists paged by id", func(t *testing.T) {
		// Five pages of every delivery field (a selection of 23): 5 × (1 + 23)
		// for pages of 10, 5 × (1 + 230) over the limit of 1000 for pages of 100.
		page := `webhookDeliveriesConnection(webhookId: 1, first: $first) { edges { cursor node { id webhookEndpointId eventId
			eventType status attempts maxAttempts nextAttemptAt responseStatus errorMessage durationMs deliveredAt manual
			createdAt updatedAt payload responseBody renderedBody payloadFormat renderedContentType } } }`
		q := `query($first: Int) { a: ` + page + ` b: ` + page + ` c: ` + page + ` d: ` + page + ` e: ` + page + ` }`
		if g := e.GraphQL(t, o.Key, q, map[string]any{"first": 10}); g.Code() == "COMPLEXITY_LIMIT_EXCEEDED" {
			t.Fatalf("five pages of 10: %s", g.Raw)
		}
		if g := e.GraphQL(t, o.Key, q, map[string]any{"first": 100}); g.Code() != "COMPLEXITY_LIMIT_EXCEEDED" {
			t.Fatalf("five pages of 100: %s", g.Raw)
		}
	})
}

// TestListConnections: the data owner's client groups, users,
// capabilities, ISPs, API keys of each kind, configs of a kind, webhooks
// and a webhook's deliveries page forward and backward in their order
// (by id; deliveries newest first), each exactly once, counted by
// totalCount, without another data owner's, in the same statements
// whatever the page's size; a cursor that is none, or one of another
// connection, is refused.
func TestListConnections(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "connlists")
	other := e.NewOwner(t, "connlists-other")
	hooks := map[*apitest.Owner]int64{}
	for i := range 5 {
		for _, x := range []*apitest.Owner{o, other} {
			x.NewGroup(t, fmt.Sprintf("group %d", i))
			x.NewUser(t, store.NewUser{Email: fmt.Sprintf("u%d-%s@example.com", i, x.Slug), Username: fmt.Sprintf("u%d-%s", i, x.Slug), Role: "viewer"})
			x.NewCapability(t, store.CapabilityInput{Name: apitest.Ptr(fmt.Sprintf("cap %d", i))})
			x.NewISP(t, store.IspInput{Name: apitest.Ptr(fmt.Sprintf("ISP %d", i))})
			for _, kind := range []auth.Kind{auth.KindClientAdmin, auth.KindClientAnalytics, auth.KindExport} {
				x.NewKey(t, apitest.KeyOpts{Kind: kind})
			}
			x.NewConfig(t, store.ConfigPublic, fmt.Sprintf("config %d", 5-i), false) // names against the ids
			hook := apitest.Int(t, newWebhook(t, e, x, nil)["id"])
			if i == 0 {
				hooks[x] = hook
				x.NewConfig(t, store.ConfigAutomator, "schedule", false)
			}
			e.GraphQLData(t, x.Key, `mutation($id: Int!) { webhookTest(id: $id) { id } }`, map[string]any{"id": hooks[x]})
		}
	}
	hook := fmt.Sprint(hooks[o])
	isps := e.GraphQLData(t, o.Key, `{ ispsConnection(first: 1) { pageInfo { endCursor } } }`, nil)
	ispCursor := isps["ispsConnection"].(map[string]any)["pageInfo"].(map[string]any)["endCursor"]
	for _, tc := range []struct {
		field, args string
		want        int64
		desc        bool
	}{
		{"clientGroupsConnection", "", 5, false},
		{"usersConnection", "", 6, false}, // with the owner's own
		{"capabilitiesConnection", "", 5, false},
		{"ispsConnection", "", 5, false},
		{"clientAdminApiKeysConnection", "", 6, false}, // with the owner's own
		{"clientAnalyticsApiKeysConnection", "", 5, false},
		{"exportApiKeysConnection", "", 5, false},
		{"measurementConfigsConnection", "kind: public, ", 5, false},
		{"webhooksConnection", "", 5, false},
		{"webhookDeliveriesConnection", "webhookId: " + hook + ", ", 5, true},
	} {
		t.Run(tc.field, func(t *testing.T) {
			q := `query($first: Int, $after: String, $last: Int, $before: String) { c: ` + tc.field + `(` + tc.args + `first: $first, after: $after, last: $last, before: $before) {
				totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id } } } }`
			page := func(vars map[string]any) (ids []int64, info map[string]any, total int64) {
				c := e.GraphQLData(t, o.Key, q, vars)["c"].(map[string]any)
				for _, edge := range c["edges"].([]any) {
					ids = append(ids, apitest.Int(t, edge.(map[string]any)["node"].(map[string]any)["id"]))
				}
				return ids, c["pageInfo"].(map[string]any), apitest.Int(t, c["totalCount"])
			}
			var forward, backward []int64
			vars := map[string]any{"first": 2}
			for {
				ids, info, total := page(vars)
				if total != tc.want {
					t.Fatalf("totalCount %d, want %d", total, tc.want)
				}
				forward = append(forward, ids...)
				if info["hasNextPage"] != true {
					break
				}
				vars["after"] = info["endCursor"]
			}
			vars = map[string]any{"last": 2}
			for {
				ids, info, _ := page(vars)
				backward = append(slices.Clone(ids), backward...)
				if info["hasPreviousPage"] != true {
					break
				}
				vars["before"] = info["startCursor"]
			}
			ordered := slices.Clone(forward)
			if slices.Sort(ordered); tc.desc {
				slices.Reverse(ordered)
			}
			if int64(len(forward)) != tc.want || !slices.Equal(forward, backward) || !slices.Equal(forward, ordered) {
				t.Fatalf("forward %v, backward %v: want the %d of the data owner in order (descending: %v), both ways", forward, backward, tc.want, tc.desc)
			}
			counts := map[int]int64{}
			for _, n := range []int{1, 5} {
				before := e.Counter.Count()
				if ids, _, _ := page(map[string]any{"first": n}); len(ids) != n {
					t.Fatalf("first %d: %d rows", n, len(ids))
				}
				counts[n] = e.Counter.Count() - before
			}
			if counts[1] != counts[5] {
				t.Errorf("%d statements for a page of 1, %d for a page of 5", counts[1], counts[5])
			}
			for _, bad := range []struct {
				name string
				vars map[string]any
				arg  string
			}{
				{"not a cursor", map[string]any{"after": "bm90IGEgY3Vyc29y"}, "after"},
				{"another connection's cursor", map[string]any{"before": ispCursor}, "before"},
				{"first and last", map[string]any{"first": 1, "last": 1}, "last"},
				{"first over 100", map[string]any{"first": 101}, "first"},
				{"last 0", map[string]any{"last": 0}, "last"},
			} {
				if tc.field == "ispsConnection" && bad.name == "another connection's cursor" {
					continue
				}
				g := e.GraphQL(t, o.Key, q, bad.vars)
				if g.Code() != "BAD_USER_INPUT" || !strings.Contains(string(g.Raw), bad.arg) {
					t.Errorf("%s: %s", bad.name, g.Raw)
				}
			}
		})
	}
	t.Run("another data owner's webhook has no deliveries to page", func(t *testing.T) {
		q := `query($id: Int!) { webhookDeliveriesConnection(webhookId: $id) { totalCount } }`
		if g := e.GraphQL(t, o.Key, q, map[string]any{"id": hooks[other]}); g.Code() != "NOT_FOUND" {
			t.Fatalf("another data owner's webhook: %s", g.Raw)
		}
	})
}
