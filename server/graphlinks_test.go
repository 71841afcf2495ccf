package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// anomalyDoc is an anomaly event document of a client.
func anomalyDoc(clientUUID, id, status, severity, metric string, firstSeen time.Time, measurementIDs ...string) map[string]any {
	if measurementIDs == nil {
		measurementIDs = []string{}
	}
	d := map[string]any{"id": id, "rule_id": "speedtest-" + metric, "client_uuid": clientUUID,
		"measurement_type": "SpeedtestMeasurement", "subject": "ookla", "metric": metric, "detection_pass": "shift",
		"severity": severity, "status": status, "first_seen_at": firstSeen.UTC().Format(time.RFC3339Nano),
		"last_seen_at": firstSeen.Add(time.Hour).UTC().Format(time.RFC3339Nano),
		"created_at":   firstSeen.Add(time.Minute).UTC().Format(time.RFC3339Nano), "value": 42.5, "measurement_ids": measurementIDs}
	if status == "resolved" {
		d["resolved_at"] = firstSeen.Add(2 * time.Hour).UTC().Format(time.RFC3339Nano)
	}
	return d
}

// edgeNodes answers the nodes of a connection's edges.
func edgeNodes(t *testing.T, conn any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range apitest.List(t, conn.(map[string]any)["edges"]) {
		out = append(out, e.(map[string]any)["node"].(map[string]any))
	}
	return out
}

// TestGraphLinks: each link the dashboard walks answers its rows, filtered
// and paged, and never another data owner's.
func TestGraphLinks(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "links")
	x := e.NewOwner(t, "links-other")
	capability := o.NewCapability(t, store.CapabilityInput{Name: apitest.Ptr("probes"), AllowedMeasurementTypes: []string{"SpeedtestMeasurement"}})
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID, RegistrationKey: apitest.Unique("links-key")})
	var clients []apitest.Client
	for i := range 3 {
		clients = append(clients, o.NewClient(t, store.NewClient{Label: apitest.Ptr(fmt.Sprintf("probe-%d", i)), RegistrationKeyID: &key.ID}))
	}
	a := clients[0]
	isp := o.NewISP(t, store.IspInput{Name: apitest.Ptr("Links ISP")})
	o.NewContract(t, store.NewContract{IspID: isp.ID, ClientID: clients[0].ID})
	o.NewContract(t, store.NewContract{IspID: isp.ID, ClientID: clients[2].ID})
	group := o.NewGroup(t, "links group", clients[0].ID, clients[1].ID, clients[2].ID)

	// The other data owner's: a client with an anomaly event, and
	// documents stored under a's UUID (no import takes them: written
	// straight), which must never show under a.
	xc := x.NewClient(t, store.NewClient{})
	x.InsertDocuments(t, vocab.KindAnomalyEvent, anomalyDoc(xc.UUID, "x-own", "new", "critical", "download", time.Now()))
	for _, kind := range []string{vocab.KindAnomalyEvent, vocab.KindSystemStatus} {
		e.SQL(t, `INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, created_at, doc)
			VALUES ($1, $2, 'x-under-a', $3::uuid, now(), $4)`, x.ID, kind, a.UUID,
			`{"id": "x-under-a", "status": "new", "severity": "critical", "cpu_average_percent": 99}`)
	}

	day := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	ms := o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: a.UUID, Type: "SpeedtestMeasurement"},
		apitest.MeasurementOpts{ClientUUID: a.UUID, Type: "SpeedtestMeasurement"})
	o.InsertDocuments(t, vocab.KindAnomalyEvent,
		anomalyDoc(a.UUID, "a-1", "resolved", "warning", "download", day, ms[0]),
		anomalyDoc(a.UUID, "a-2", "new", "critical", "download", day.Add(24*time.Hour), ms[1], "gone-measurement", ms[0]),
		anomalyDoc(a.UUID, "a-3", "new", "warning", "upload", day.Add(48*time.Hour)),
		anomalyDoc(clients[1].UUID, "b-1", "new", "warning", "upload", day))
	for i := range 3 {
		o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: a.UUID, CreatedAt: time.Now().Add(time.Duration(i-2) * time.Minute),
			CPU: apitest.Ptr(10.0 * float64(i+1)), Memory: apitest.Ptr(20.0)})
	}
	hook := apitest.Int(t, newWebhook(t, e, o, nil)["id"])
	xhook := apitest.Int(t, newWebhook(t, e, x, nil)["id"])
	for range 3 {
		e.GraphQLData(t, o.Key, `mutation($id: Int!) { webhookTest(id: $id) { id } }`, map[string]any{"id": hook})
	}
	e.GraphQLData(t, x.Key, `mutation($id: Int!) { webhookTest(id: $id) { id } }`, map[string]any{"id": xhook})

	t.Run("client health, open anomalies, anomaly events and system status", func(t *testing.T) {
		const q = `query($id: ID!, $since: Time) { client(id: $id) { openAnomalyCount
			health { clientId state sourceSystemStatusRecordId metricSummary { cpu { percent } } }
			all: anomalyEvents { totalCount edges { cursor node { id status severity metric measurementType detectionPass ruleId
				firstSeenAt lastSeenAt resolvedAt value createdAt client { id } measurements { id client { id } } } } }
			open: anomalyEvents(filter: {statuses: ["new"], severities: ["critical"]}) { totalCount edges { node { id } } }
			recent: anomalyEvents(filter: {since: $since}) { totalCount edges { node { id } } }
			page: anomalyEvents(first: 2) { pageInfo { hasNextPage endCursor } edges { node { id } } }
			systemStatusRecords { totalCount edges { node { id cpuAveragePercent clientUuid } } }
			lastTwo: systemStatusRecords(first: 2) { pageInfo { hasNextPage } edges { node { cpuAveragePercent } } } } }`
		c := e.GraphQLData(t, o.Key, q, map[string]any{"id": fmt.Sprint(a.ID),
			"since": day.Add(36 * time.Hour).Format(time.RFC3339)})["client"].(map[string]any)
		if apitest.Int(t, c["openAnomalyCount"]) != 2 {
			t.Errorf("openAnomalyCount %v, want 2 (a-2, a-3; not the other owner's)", c["openAnomalyCount"])
		}
		h := c["health"].(map[string]any)
		if apitest.Int(t, h["clientId"]) != a.ID || h["state"] != "healthy" || h["sourceSystemStatusRecordId"] == nil ||
			fmt.Sprint(h["metricSummary"].(map[string]any)["cpu"].(map[string]any)["percent"]) != "30" {
			t.Errorf("health %v, want healthy from the newest record (cpu 30)", h)
		}
		all := edgeNodes(t, c["all"])
		if apitest.Int(t, c["all"].(map[string]any)["totalCount"]) != 3 || len(all) != 3 ||
			all[0]["id"] != "a-3" || all[1]["id"] != "a-2" || all[2]["id"] != "a-1" {
			t.Fatalf("anomalyEvents %v, want a-3, a-2, a-1 (newest first, 3 in all)", all)
		}
		a2 := all[1]
		if a2["status"] != "new" || a2["severity"] != "critical" || a2["metric"] != "download" || fmt.Sprint(a2["value"]) != "42.5" ||
			a2["measurementType"] != "SpeedtestMeasurement" || a2["detectionPass"] != "shift" || a2["ruleId"] != "speedtest-download" ||
			a2["firstSeenAt"] == nil || a2["resolvedAt"] != nil || apitest.Int(t, a2["client"].(map[string]any)["id"]) != a.ID {
			t.Errorf("a-2's fields: %v", a2)
		}
		if all[2]["resolvedAt"] == nil {
			t.Errorf("a-1 resolvedAt is null")
		}
		got := apitest.List(t, a2["measurements"])
		if len(got) != 2 || got[0].(map[string]any)["id"] != ms[1] || got[1].(map[string]any)["id"] != ms[0] ||
			apitest.Int(t, got[0].(map[string]any)["client"].(map[string]any)["id"]) != a.ID {
			t.Errorf("a-2 measurements %v, want %s then %s (the gone one left out)", got, ms[1], ms[0])
		}
		if open := edgeNodes(t, c["open"]); len(open) != 1 || open[0]["id"] != "a-2" {
			t.Errorf("open critical %v, want a-2", open)
		}
		if recent := edgeNodes(t, c["recent"]); len(recent) != 1 || recent[0]["id"] != "a-3" || apitest.Int(t, c["recent"].(map[string]any)["totalCount"]) != 1 {
			t.Errorf("since day+36h: %v, want a-3 alone (a-2 was last seen at day+25h)", recent)
		}
		page := c["page"].(map[string]any)
		if n := edgeNodes(t, page); len(n) != 2 || page["pageInfo"].(map[string]any)["hasNextPage"] != true {
			t.Fatalf("first 2: %v", page)
		}
		next := e.GraphQLData(t, o.Key, `query($id: ID!, $after: String) { client(id: $id) { anomalyEvents(first: 2, after: $after) {
			pageInfo { hasNextPage } edges { node { id } } } } }`,
			map[string]any{"id": a.UUID, "after": page["pageInfo"].(map[string]any)["endCursor"]})
		conn := next["client"].(map[string]any)["anomalyEvents"]
		if n := edgeNodes(t, conn); len(n) != 1 || n[0]["id"] != "a-1" || conn.(map[string]any)["pageInfo"].(map[string]any)["hasNextPage"] != false {
			t.Errorf("second page %v, want a-1 alone", conn)
		}
		recs := edgeNodes(t, c["systemStatusRecords"])
		if apitest.Int(t, c["systemStatusRecords"].(map[string]any)["totalCount"]) != 3 || len(recs) != 3 ||
			fmt.Sprint(recs[0]["cpuAveragePercent"]) != "30" || fmt.Sprint(recs[2]["cpuAveragePercent"]) != "10" || recs[0]["clientUuid"] != a.UUID {
			t.Errorf("systemStatusRecords %v, want 3 newest first (not the other owner's)", recs)
		}
		last := c["lastTwo"].(map[string]any)
		if n := edgeNodes(t, last); len(n) != 2 || last["pageInfo"].(map[string]any)["hasNextPage"] != true {
			t.Errorf("first 2 records %v", last)
		}
	})

	t.Run("health as fleetHealth reports it", func(t *testing.T) {
		// clients[1]'s only record is older than the offline threshold
		// (60 minutes): unknown; clients[2] has none: unknown.
		o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: clients[1].UUID, CreatedAt: time.Now().Add(-2 * time.Hour), CPU: apitest.Ptr(95.0)})
		d := e.GraphQLData(t, o.Key, `{ fleetHealth { clientId state evaluatedAt reasons { metric } }
			clients { id health { clientId state reasons { metric } } } }`, nil)
		fleet := map[int64]string{}
		for _, h := range apitest.List(t, d["fleetHealth"]) {
			fleet[apitest.Int(t, h.(map[string]any)["clientId"])] = h.(map[string]any)["state"].(string)
		}
		want := map[int64]string{a.ID: "healthy", clients[1].ID: "unknown", clients[2].ID: "unknown"}
		for _, c := range apitest.List(t, d["clients"]) {
			c := c.(map[string]any)
			id := apitest.Int(t, c["id"])
			h := c["health"].(map[string]any)
			if h["state"] != want[id] || fleet[id] != want[id] || apitest.Int(t, h["clientId"]) != id {
				t.Errorf("client %d: health %v, fleetHealth %s, want %s", id, h, fleet[id], want[id])
			}
		}
	})

	t.Run("the resolvers answer the pages the walk read", func(t *testing.T) {
		// A page and its count: two statements per connection, none read
		// again by the field's resolver (whose arguments, parsed by gqlgen,
		// must name the page the walk kept), with literals and variables.
		stmts := func(q string, vars map[string]any) int64 {
			e.GraphQLData(t, o.Key, q, vars) // the key is read once
			before := e.Counter.Count()
			e.GraphQLData(t, o.Key, q, vars)
			return e.Counter.Count() - before
		}
		base := stmts(`query($id: ID!) { client(id: $id) { id } }`, map[string]any{"id": a.UUID})
		withPages := stmts(`query($id: ID!, $since: Time, $first: Int) { client(id: $id) { id
			a: anomalyEvents(first: $first, filter: {since: $since, statuses: ["new"], severities: []}) { totalCount edges { node { id } } }
			b: systemStatusRecords(first: 2, filter: {since: $since}) { totalCount edges { node { id } } } } }`,
			map[string]any{"id": a.UUID, "since": day.Add(-time.Hour).Format(time.RFC3339Nano), "first": 2})
		if withPages-base != 5 { // the level's round trip opens with its plan setting (store.genericPlans)
			t.Errorf("two connections with counts cost %d statements more than none, want 5: 4 reads and the plan setting", withPages-base)
		}
	})

	t.Run("recent filter", func(t *testing.T) {
		// since: episodes still seen at or after it; a-2 was last seen at
		// day+25h, a-3 at day+49h.
		c := e.GraphQLData(t, o.Key, `query($id: ID!, $since: Time, $until: Time) { client(id: $id) {
			anomalyEvents(filter: {since: $since, until: $until}) { edges { node { id } } } } }`,
			map[string]any{"id": fmt.Sprint(a.ID), "since": day.Add(25 * time.Hour).Format(time.RFC3339),
				"until": day.Add(48 * time.Hour).Format(time.RFC3339)})
		if n := edgeNodes(t, c["client"].(map[string]any)["anomalyEvents"]); len(n) != 1 || n[0]["id"] != "a-2" {
			t.Errorf("since day+25h until day+48h: %v, want a-2 alone", n)
		}
	})

	t.Run("fleet-wide anomaly events", func(t *testing.T) {
		const q = `query($f: AnomalyEventFilter, $ids: [ID!]) { anomalyEventsConnection(filter: $f, clientIds: $ids) {
			totalCount edges { node { id client { id } } } } }`
		conn := e.GraphQLData(t, o.Key, q, nil)["anomalyEventsConnection"]
		if n := edgeNodes(t, conn); len(n) != 4 || apitest.Int(t, conn.(map[string]any)["totalCount"]) != 4 {
			t.Errorf("every event of the data owner: %v", n)
		}
		conn = e.GraphQLData(t, o.Key, q, map[string]any{"f": map[string]any{"metrics": []string{"upload"}},
			"ids": []string{clients[1].UUID, fmt.Sprint(xc.ID)}})["anomalyEventsConnection"]
		if n := edgeNodes(t, conn); len(n) != 1 || n[0]["id"] != "b-1" {
			t.Errorf("upload of clients[1] (and another owner's client, which matches nothing): %v", n)
		}
		conn = e.GraphQLData(t, x.Key, q, map[string]any{"ids": []string{a.UUID}})["anomalyEventsConnection"]
		if n := edgeNodes(t, conn); len(n) != 0 {
			t.Errorf("another data owner naming a's UUID: %v, want nothing", n)
		}
	})

	t.Run("clients of a key, capability, ISP and group", func(t *testing.T) {
		const q = `query($cap: Int!, $isp: Int!, $group: Int!) {
			capability(id: $cap) { clients { totalCount edges { node { id } } } registrationKeys { clients(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { node { id label } } } } }
			isp(id: $isp) { clients { totalCount edges { node { id currentIspContract { isp { id } } } } } }
			clientGroup(id: $group) { clientsConnection(first: 1) { totalCount edges { node { id clientGroups { id } } } } } }`
		d := e.GraphQLData(t, o.Key, q, map[string]any{"cap": capability.ID, "isp": isp.ID, "group": group})
		ids := func(conn any) []int64 {
			var out []int64
			for _, n := range edgeNodes(t, conn) {
				out = append(out, apitest.Int(t, n["id"]))
			}
			return out
		}
		capConn := d["capability"].(map[string]any)["clients"]
		if got := ids(capConn); fmt.Sprint(got) != fmt.Sprint([]int64{clients[0].ID, clients[1].ID, clients[2].ID}) {
			t.Errorf("capability clients %v", got)
		}
		keyConn := apitest.List(t, d["capability"].(map[string]any)["registrationKeys"])[0].(map[string]any)["clients"].(map[string]any)
		if got := ids(keyConn); fmt.Sprint(got) != fmt.Sprint([]int64{clients[0].ID, clients[1].ID}) || apitest.Int(t, keyConn["totalCount"]) != 3 ||
			keyConn["pageInfo"].(map[string]any)["hasNextPage"] != true {
			t.Errorf("key clients, first 2: %v", keyConn)
		}
		ispConn := d["isp"].(map[string]any)["clients"]
		if got := ids(ispConn); fmt.Sprint(got) != fmt.Sprint([]int64{clients[0].ID, clients[2].ID}) {
			t.Errorf("ISP clients %v", got)
		}
		groupConn := d["clientGroup"].(map[string]any)["clientsConnection"].(map[string]any)
		if got := ids(groupConn); fmt.Sprint(got) != fmt.Sprint([]int64{clients[0].ID}) || apitest.Int(t, groupConn["totalCount"]) != 3 {
			t.Errorf("group clients, first 1: %v", groupConn)
		}
		// The second page of the key's clients.
		d = e.GraphQLData(t, o.Key, `query($id: Int!, $after: String) { registrationKey(id: $id) { clients(after: $after) { edges { node { id } } } } }`,
			map[string]any{"id": key.ID, "after": keyConn["pageInfo"].(map[string]any)["endCursor"]})
		if got := ids(d["registrationKey"].(map[string]any)["clients"]); fmt.Sprint(got) != fmt.Sprint([]int64{clients[2].ID}) {
			t.Errorf("key clients after the first 2: %v", got)
		}
	})

	t.Run("webhook deliveries and users' keys", func(t *testing.T) {
		const q = `{ webhooks { id deliveries(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { node { id webhookEndpointId eventType } } } }
			usersConnection { edges { node { id apiKeys { id clientAdminUserId } } } } }`
		d := e.GraphQLData(t, o.Key, q, nil)
		hooks := apitest.List(t, d["webhooks"])
		if len(hooks) != 1 {
			t.Fatalf("webhooks %v", hooks)
		}
		conn := hooks[0].(map[string]any)["deliveries"].(map[string]any)
		n := edgeNodes(t, conn)
		if len(n) != 2 || apitest.Int(t, conn["totalCount"]) != 3 || conn["pageInfo"].(map[string]any)["hasNextPage"] != true ||
			apitest.Int(t, n[0]["webhookEndpointId"]) != hook || apitest.Int(t, n[0]["id"]) < apitest.Int(t, n[1]["id"]) {
			t.Errorf("deliveries, first 2: %v", conn)
		}
		users := edgeNodes(t, d["usersConnection"])
		if len(users) != 1 || len(apitest.List(t, users[0]["apiKeys"])) != 1 ||
			apitest.Int(t, apitest.List(t, users[0]["apiKeys"])[0].(map[string]any)["clientAdminUserId"]) != o.UserID {
			t.Errorf("users with their keys: %v", users)
		}
	})

	t.Run("a client shared with another data owner", func(t *testing.T) {
		// x sees a, shared with it, but none of o's documents of it and no
		// health (a's health is o's); only what x itself holds of a.
		if err := e.Store.ShareClient(context.Background(), o.ID, a.ID, x.ID); err != nil {
			t.Fatal(err)
		}
		c := e.GraphQLData(t, x.Key, `query($id: ID!) { client(id: $id) { accessLevel health { state } openAnomalyCount
			anomalyEvents { edges { node { id } } } systemStatusRecords { edges { node { cpuAveragePercent } } } } }`,
			map[string]any{"id": a.UUID})["client"].(map[string]any)
		events, recs := edgeNodes(t, c["anomalyEvents"]), edgeNodes(t, c["systemStatusRecords"])
		if c["accessLevel"] != "shared" || c["health"] != nil || apitest.Int(t, c["openAnomalyCount"]) != 1 ||
			len(events) != 1 || events[0]["id"] != "x-under-a" || len(recs) != 1 || fmt.Sprint(recs[0]["cpuAveragePercent"]) != "99" {
			t.Errorf("the shared client as x sees it: %v", c)
		}
	})

	t.Run("bad arguments and roles", func(t *testing.T) {
		viewer, _ := o.NewKey(t, apitest.KeyOpts{UserRole: "viewer"})
		for _, tc := range []struct {
			name, key, query, code string
		}{
			{"first above 100", o.Key, `{ clients { anomalyEvents(first: 101) { totalCount } } }`, "BAD_USER_INPUT"},
			{"a cursor of another connection", o.Key, `{ webhooks { deliveries(after: "eyJvIjoiaWQiLCJpIjoxfQ") { totalCount } } }`, "BAD_USER_INPUT"},
			{"until before since", o.Key, `{ anomalyEventsConnection(filter: {since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z"}) { totalCount } }`, "BAD_USER_INPUT"},
			{"no client ids", o.Key, `{ anomalyEventsConnection(clientIds: []) { totalCount } }`, "BAD_USER_INPUT"},
			{"a client id that is none", o.Key, `{ anomalyEventsConnection(clientIds: ["probe-1"]) { totalCount } }`, "BAD_USER_INPUT"},
			{"a filter list of 51", o.Key, `{ anomalyEventsConnection(filter: {metrics: [` + strings.Repeat(`"m", `, 51) + `]}) { totalCount } }`, "BAD_USER_INPUT"},
			{"system status until before since", o.Key, `{ clients { systemStatusRecords(filter: {since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z"}) { totalCount } } }`, "BAD_USER_INPUT"},
			{"first 0 of a group's clients", o.Key, `{ clientGroups { clientsConnection(first: 0) { totalCount } } }`, "BAD_USER_INPUT"},
			{"a viewer asking for users' keys", viewer, `{ usersConnection { edges { node { apiKeys { id } } } } }`, "FORBIDDEN"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if g := e.GraphQL(t, tc.key, tc.query, nil); g.Code() != tc.code {
					t.Errorf("got %s, want %s", g.Raw, tc.code)
				}
			})
		}
	})
}

// dashSeed is ldrSeed's fleet with, per client, an open anomaly event of
// a measurement and a system status record; it answers the clients' UUIDs
// (by id) and a webhook with deliveries.
func dashSeed(t testing.TB, e *apitest.Env, prefix string, n int) (*apitest.Owner, []store.Client, int64) {
	t.Helper()
	o := ldrSeed(t, e, prefix, n)
	cs, err := e.Store.Clients(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	var events, measurements, records []map[string]any
	now := time.Now().Add(-10 * time.Minute)
	for i, c := range cs {
		mid := fmt.Sprintf("%s-m-%d", o.Slug, i)
		measurements = append(measurements, map[string]any{"id": mid, "client_uuid": c.UUID, "type": "SpeedtestMeasurement",
			"created_at": now.UTC().Format(time.RFC3339Nano)})
		events = append(events, anomalyDoc(c.UUID, fmt.Sprintf("%s-a-%d", o.Slug, i), "new", "warning", "download", now, mid))
		records = append(records, map[string]any{"id": fmt.Sprintf("%s-s-%d", o.Slug, i), "client_uuid": c.UUID,
			"created_at": now.UTC().Format(time.RFC3339Nano), "run_id": "run", "study_ids": []string{}, "measurement_ids": []int64{},
			"collection_errors": []string{}, "connection_details": []map[string]any{}, "filesystems": []map[string]any{},
			"cpu_average_percent": 12.5, "cpu_valid_sample_count": 10})
	}
	o.InsertDocuments(t, vocab.KindMeasurement, measurements...)
	o.InsertDocuments(t, vocab.KindAnomalyEvent, events...)
	o.InsertDocuments(t, vocab.KindSystemStatus, records...)
	hook := apitest.Int(t, e.AdminCreate(t, o.Key, "/webhooks", map[string]any{"name": "dashboard hook",
		"url": "http://127.0.0.1:9/hook", "event_types": []string{store.EventAnomalyCreated}})["id"])
	for range 3 {
		e.GraphQLData(t, o.Key, `mutation($id: Int!) { webhookTest(id: $id) { id } }`, map[string]any{"id": hook})
	}
	return o, cs, hook
}

// BenchmarkDashboardViews runs each dashboard view's query over a fleet
// of 1,000 clients (the fleet view's page: 100 of them).
func BenchmarkDashboardViews(b *testing.B) {
	e := apitest.Get(b)
	o, cs, _ := dashSeed(b, e, "dash-bench", 1000)
	e.SQL(b, "ANALYZE") // as autovacuum would have by then
	for _, v := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"fleet", dashFleetQuery, map[string]any{"first": 100}},
		{"probe", dashProbeQuery, map[string]any{"id": fmt.Sprint(cs[500].ID)}},
		{"anomalies", dashAnomaliesQuery, nil},
		{"webhooks", dashWebhookQuery, nil},
		{"groups", dashGroupsQuery, nil},
	} {
		b.Run(v.name, func(b *testing.B) {
			start := e.Counter.Count()
			for b.Loop() {
				e.GraphQLData(b, o.Key, v.query, v.vars)
			}
			b.ReportMetric(float64(e.Counter.Count()-start)/float64(b.N), "stmts/op")
		})
	}
}

// The dashboard's views, as the queries they send.
const (
	dashFleetQuery = `query($first: Int) { clientsConnection(first: $first) { totalCount pageInfo { hasNextPage endCursor }
		edges { node { id uuid label lastSeenAt offline openAnomalyCount health { state reasons { metric severity } }
			clientGroups { id name } currentIspContract { isp { id name } } deliveredPublicConfig { name } } } } }`
	dashProbeQuery = `query($id: ID!) { client(id: $id) { id label health { state evaluatedAt }
		anomalyEvents(first: 20) { totalCount edges { node { id severity status firstSeenAt lastSeenAt measurements { id document } } } }
		open: anomalyEvents(filter: {statuses: ["new"]}) { totalCount }
		systemStatusRecords(first: 50) { edges { node { createdAt cpuAveragePercent memoryAveragePercent filesystems { mount finalPercent } } } }
		registrationKey { registrationKey capability { name } } ispContracts { isp { name } } clientGroups { name } } }`
	dashAnomaliesQuery = `{ anomalyEventsConnection(first: 50, filter: {statuses: ["new"]}) { totalCount
		edges { node { id severity metric client { id label health { state } registrationKey { registrationKey } } measurements { id } } } } }`
	dashWebhookQuery = `{ webhooksConnection { edges { node { id name deliveries(first: 20) { totalCount edges { node { id status eventType } } } } } } }`
	dashGroupsQuery  = `{ clientGroupsConnection(first: 100) { edges { node { id name clientsConnection(first: 5) { totalCount edges { node { id health { state } openAnomalyCount } } } } } }
		capabilitiesConnection { edges { node { name registrationKeys { registrationKey clients(first: 5) { totalCount edges { node { id } } } } clients(first: 5) { totalCount } } } }
		ispsConnection { edges { node { name clients(first: 5) { totalCount edges { node { id label } } } } } } }`
)

// TestDashboardQueriesStatementCount: each view of the dashboard costs
// the same statements for a fleet of 10 clients as for one of 1,000. Not
// parallel: the statement counter is shared by the whole test binary.
func TestDashboardQueriesStatementCount(t *testing.T) {
	e := apitest.Get(t)
	const small, large = 10, 1000
	so, scs, _ := dashSeed(t, e, "dash-small", small)
	lo, lcs, _ := dashSeed(t, e, "dash-large", large)
	for _, v := range []struct {
		name  string
		query string
		vars  func([]store.Client) map[string]any
		check func(t *testing.T, d map[string]any, n int)
		most  int64
	}{
		{"fleet", dashFleetQuery, func([]store.Client) map[string]any { return map[string]any{"first": 100} },
			func(t *testing.T, d map[string]any, n int) {
				nodes := edgeNodes(t, d["clientsConnection"])
				if len(nodes) != min(n, 100) {
					t.Fatalf("fleet page of %d clients: %d", n, len(nodes))
				}
				for _, c := range nodes {
					if apitest.Int(t, c["openAnomalyCount"]) != 1 || c["health"].(map[string]any)["state"] != "healthy" ||
						len(apitest.List(t, c["clientGroups"])) != 1 || c["currentIspContract"] == nil {
						t.Fatalf("fleet row %v", c)
					}
				}
			}, 20},
		{"probe", dashProbeQuery, func(cs []store.Client) map[string]any { return map[string]any{"id": fmt.Sprint(cs[len(cs)/2].ID)} },
			func(t *testing.T, d map[string]any, _ int) {
				c := d["client"].(map[string]any)
				events := edgeNodes(t, c["anomalyEvents"])
				if len(events) != 1 || len(apitest.List(t, events[0]["measurements"])) != 1 ||
					len(edgeNodes(t, c["systemStatusRecords"])) != 1 || c["registrationKey"] == nil {
					t.Fatalf("probe page %v", c)
				}
			}, 20},
		{"anomalies", dashAnomaliesQuery, func([]store.Client) map[string]any { return nil },
			func(t *testing.T, d map[string]any, n int) {
				events := edgeNodes(t, d["anomalyEventsConnection"])
				if len(events) != min(n, 50) || events[0]["client"] == nil || len(apitest.List(t, events[0]["measurements"])) != 1 {
					t.Fatalf("anomalies page %v", events[:1])
				}
			}, 20},
		{"webhooks", dashWebhookQuery, func([]store.Client) map[string]any { return nil },
			func(t *testing.T, d map[string]any, _ int) {
				hooks := edgeNodes(t, d["webhooksConnection"])
				if len(hooks) != 1 || len(edgeNodes(t, hooks[0]["deliveries"])) != 3 {
					t.Fatalf("webhooks %v", hooks)
				}
			}, 20},
		{"groups, capabilities and ISPs", dashGroupsQuery, func([]store.Client) map[string]any { return nil },
			func(t *testing.T, d map[string]any, n int) {
				groups := edgeNodes(t, d["clientGroupsConnection"])
				if len(groups) != min(n/ldrGroupSize, 100) || len(edgeNodes(t, groups[0]["clientsConnection"])) != ldrGroupSize {
					t.Fatalf("groups %v", groups[:1])
				}
			}, 30},
	} {
		t.Run(v.name, func(t *testing.T) {
			count := func(o *apitest.Owner, vars map[string]any, n int) func() int64 {
				return func() int64 {
					before := e.Counter.Count()
					d := e.GraphQLData(t, o.Key, v.query, vars)
					stmts := e.Counter.Count() - before
					v.check(t, d, n)
					return stmts
				}
			}
			runSmall, runLarge := count(so, v.vars(scs), small), count(lo, v.vars(lcs), large)
			runSmall() // a key's first request also reads the key
			runLarge()
			ldrCompareCounts(t, 2, v.most, small, large, runSmall, runLarge)
		})
	}
}
