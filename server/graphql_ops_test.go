package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// This file runs the operations behind the Administration API through
// POST /graphql (camelCase fields) and checks the same values, the links
// between types, and the classification of errors in extensions.code.

const gqlOpsIspFields = `id name type alternativeNames asNumbers country isVpn verified createdAt ispContractsCount`

var gqlOpsIspShape = specShape{"id": "int", "name": "str", "type": "str", "alternativeNames": "strs",
	"asNumbers": "strs", "country": "str", "isVpn": "bool?", "verified": "bool?", "createdAt": "time",
	"ispContractsCount": "int"}

// TestGraphQLOpsIsps covers the ISP queries and mutations and the links
// IspContract.client and IspContract.isp.
func TestGraphQLOpsIsps(t *testing.T) {
	w := specSeed(t, "gql-isps")
	create := func(t *testing.T, input map[string]any) map[string]any {
		t.Helper()
		d := w.e.GraphQLData(t, w.o.Key, `mutation($in: IspCreateInput!) { ispCreate(input: $in) { `+gqlOpsIspFields+` } }`,
			map[string]any{"in": input})
		return specCheck(t, "ispCreate", d["ispCreate"], gqlOpsIspShape)
	}

	t.Run("ispCreate answers the ISP it stored", func(t *testing.T) {
		isp := create(t, map[string]any{"name": "KPN", "country": "nl", "type": "mobile", "isVpn": true})
		for k, v := range map[string]any{"name": "KPN", "country": "NL", "type": "mobile", "isVpn": true,
			"verified": nil, "alternativeNames": []string{}, "asNumbers": []string{}, "ispContractsCount": 0} {
			specWant(t, "ispCreate", isp, k, v)
		}
		specRecent(t, "createdAt", isp["createdAt"])
		got := apitest.Object(t, w.e.GraphQLData(t, w.o.Key, `query($id: Int!) { isp(id: $id) { `+gqlOpsIspFields+` } }`,
			map[string]any{"id": isp["id"]})["isp"])
		specWant(t, "isp", got, "name", "KPN")
		specWant(t, "isp", got, "createdAt", apitest.Time(t, isp["createdAt"]))
	})

	t.Run("isp answers contracts with their client and ISP", func(t *testing.T) {
		d := w.e.GraphQLData(t, w.o.Key, `query($id: Int!) { isp(id: $id) {
			name ispDetailsCount ispContractsCount
			ispContracts { id ispId clientId uploadSpeed downloadSpeed monthlyPrice currency assumedTariff
				connectionType name validFrom validUntil clientUuid clientLabel
				client { id uuid label accessLevel } isp { id name } ispName }
		} }`, map[string]any{"id": w.isp})
		isp := apitest.Object(t, d["isp"])
		specWant(t, "isp", isp, "ispDetailsCount", 2)
		specWant(t, "isp", isp, "ispContractsCount", 2)
		c := specFind(t, apitest.List(t, isp["ispContracts"]), w.contract)
		for k, v := range map[string]any{"ispId": w.isp, "clientId": w.probe.ID, "uploadSpeed": 50, "downloadSpeed": 250,
			"monthlyPrice": 49.99, "currency": "EUR", "assumedTariff": "business", "connectionType": "fiber",
			"name": "Business 250", "validFrom": w.from, "validUntil": nil, "clientUuid": w.probe.UUID,
			"clientLabel": w.probe.Label, "ispName": "Telekom"} {
			specWant(t, "contract", c, k, v)
		}
		client := c["client"].(map[string]any)
		specWant(t, "contract.client", client, "id", w.probe.ID)
		specWant(t, "contract.client", client, "uuid", w.probe.UUID)
		specWant(t, "contract.client", client, "accessLevel", "owner")
		specWant(t, "contract.isp", c["isp"].(map[string]any), "id", w.isp)
	})

	t.Run("isps filters like the REST list", func(t *testing.T) {
		for _, n := range []string{"Filter Alpha", "filter beta"} {
			create(t, map[string]any{"name": n, "country": "AT", "type": "satellite"})
		}
		cases := []struct {
			name   string
			filter map[string]any
			want   []string
		}{
			{"name is a case-insensitive substring", map[string]any{"name": "FILTER"}, []string{"Filter Alpha", "filter beta"}},
			{"country and type combine", map[string]any{"country": "AT", "type": "satellite"}, []string{"Filter Alpha", "filter beta"}},
			{"an unknown type is ignored", map[string]any{"type": "balloon", "name": "alpha"}, []string{"Filter Alpha"}},
			{"an unmatched name answers nothing", map[string]any{"name": "zzz"}, []string{}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				d := w.e.GraphQLData(t, w.o.Key, `query($f: IspFilter) { isps(filter: $f) { id name country } }`, map[string]any{"f": c.filter})
				var names []string
				for _, item := range apitest.List(t, d["isps"]) {
					names = append(names, item.(map[string]any)["name"].(string))
				}
				slices.Sort(names)
				if !slices.Equal(names, c.want) {
					t.Errorf("names = %q, want %q", names, c.want)
				}
			})
		}
	})

	t.Run("ispUpdate writes the given fields and keeps the others", func(t *testing.T) {
		isp := create(t, map[string]any{"name": "Vodafone", "country": "DE", "type": "fixed", "isVpn": false})
		d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { ispUpdate(id: $id, input: {name: "Vodafone Kabel", isVpn: null}) { `+gqlOpsIspFields+` } }`,
			map[string]any{"id": isp["id"]})
		got := specCheck(t, "ispUpdate", d["ispUpdate"], gqlOpsIspShape)
		for k, v := range map[string]any{"name": "Vodafone Kabel", "isVpn": nil, "country": "DE", "type": "fixed"} {
			specWant(t, "ispUpdate", got, k, v)
		}
	})

	t.Run("ispMergeInto answers the target and removes the source", func(t *testing.T) {
		src := create(t, map[string]any{"name": "Merged Away", "country": "DE", "type": "fixed"})
		target := create(t, map[string]any{"name": "Merge Target", "country": "DE", "type": "fixed"})
		w.e.SQL(t, `UPDATE isps SET alternative_names = '{MA}', as_numbers = '{AS64500}' WHERE id = $1`, apitest.Int(t, src["id"]))
		if _, err := w.e.Store.CreateContract(t.Context(), w.o.ID, store.NewContract{IspID: apitest.Int(t, src["id"]),
			ClientID: w.bare.ID, Name: "moved"}); err != nil {
			t.Fatalf("seed contract: %v", err)
		}
		d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!, $to: Int!) { ispMergeInto(id: $id, input: {targetId: $to}) {
			`+gqlOpsIspFields+` ispContracts { name ispId client { id } } } }`,
			map[string]any{"id": src["id"], "to": target["id"]})
		got := d["ispMergeInto"].(map[string]any)
		specWant(t, "ispMergeInto", got, "id", apitest.Int(t, target["id"]))
		specWant(t, "ispMergeInto", got, "asNumbers", []string{"AS64500"})
		specWant(t, "ispMergeInto", got, "ispContractsCount", 1)
		alt := apitest.Strings(t, got["alternativeNames"])
		if !slices.Contains(alt, "MA") || !slices.Contains(alt, "Merged Away") {
			t.Errorf("alternativeNames = %q, want MA and Merged Away", alt)
		}
		moved := apitest.List(t, got["ispContracts"])[0].(map[string]any)
		specWant(t, "moved contract", moved, "ispId", apitest.Int(t, target["id"]))
		specWant(t, "moved contract", moved["client"].(map[string]any), "id", w.bare.ID)
		g, _ := w.e.GraphQLFail(t, w.o.Key, `query($id: Int!) { isp(id: $id) { id } }`, map[string]any{"id": src["id"]})
		if g.Code() != "NOT_FOUND" {
			t.Errorf("merged source: code %q, want NOT_FOUND", g.Code())
		}
	})

	t.Run("ispDelete answers true and the ISP is gone", func(t *testing.T) {
		isp := create(t, map[string]any{"name": "Gone", "country": "AT", "type": "other"})
		d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { ispDelete(id: $id) }`, map[string]any{"id": isp["id"]})
		if d["ispDelete"] != true {
			t.Errorf("ispDelete = %v, want true", d["ispDelete"])
		}
		g, _ := w.e.GraphQLFail(t, w.o.Key, `query($id: Int!) { isp(id: $id) { id } }`, map[string]any{"id": isp["id"]})
		if g.Code() != "NOT_FOUND" {
			t.Errorf("deleted ISP: code %q, want NOT_FOUND", g.Code())
		}
	})
}

const gqlOpsKeyFields = `id capabilityId registrationKey comment validFrom validUntil numRegistrationsLeft usageLimitDays testing clientsCount`

var gqlOpsKeyShape = specShape{"id": "int", "capabilityId": "int", "registrationKey": "str", "comment": "str?",
	"validFrom": "time", "validUntil": "time?", "numRegistrationsLeft": "int", "usageLimitDays": "int?",
	"testing": "bool", "clientsCount": "int"}

// TestGraphQLOpsCapabilitiesAndRegistrationKeys covers capabilities, the
// registration key mutations and the links Capability.registrationKeys and
// RegistrationKey.capability.
func TestGraphQLOpsCapabilitiesAndRegistrationKeys(t *testing.T) {
	w := specSeed(t, "gql-caps")
	d := w.e.GraphQLData(t, w.o.Key, `mutation { capabilityCreate(input: {name: "Video", comment: "pilot",
		allowedMeasurementTypes: ["VideoMeasurement"], allowedMeasurementSubjects: ["youtube"],
		forbiddenMeasurementTypes: [], forbiddenMeasurementSubjects: ["netflix"]}) {
		id name comment allowedMeasurementTypes allowedMeasurementSubjects forbiddenMeasurementTypes
		forbiddenMeasurementSubjects registrationKeysCount registrationKeys { id } } }`, nil)
	capability := apitest.Object(t, d["capabilityCreate"])
	for k, v := range map[string]any{"name": "Video", "comment": "pilot", "allowedMeasurementTypes": []string{"VideoMeasurement"},
		"allowedMeasurementSubjects": []string{"youtube"}, "forbiddenMeasurementTypes": []string{},
		"forbiddenMeasurementSubjects": []string{"netflix"}, "registrationKeysCount": 0} {
		specWant(t, "capabilityCreate", capability, k, v)
	}
	capID := apitest.Int(t, capability["id"])
	createKey := func(t *testing.T, input map[string]any) map[string]any {
		t.Helper()
		input["capabilityId"] = capID
		d := w.e.GraphQLData(t, w.o.Key, `mutation($in: RegistrationKeyCreateInput!) { registrationKeyCreate(input: $in) {
			`+gqlOpsKeyFields+` capability { id name } } }`, map[string]any{"in": input})
		return specCheck(t, "registrationKeyCreate", d["registrationKeyCreate"], gqlOpsKeyShape.with(specShape{"capability": "obj"}))
	}
	var generated, given map[string]any

	t.Run("registrationKeyCreate without a key generates one with the defaults", func(t *testing.T) {
		generated = createKey(t, map[string]any{})
		if k := generated["registrationKey"].(string); !regexp.MustCompile(`^[a-z2-7]{26}$`).MatchString(k) {
			t.Errorf("generated registrationKey %q is not 26 base32 (128 random bits) characters", k)
		}
		for k, v := range map[string]any{"capabilityId": capID, "comment": nil, "validUntil": nil,
			"numRegistrationsLeft": -1, "usageLimitDays": nil, "testing": false, "clientsCount": 0} {
			specWant(t, "generated", generated, k, v)
		}
		specRecent(t, "validFrom", generated["validFrom"])
		specWant(t, "generated.capability", generated["capability"].(map[string]any), "name", "Video")
	})
	t.Run("registrationKeyCreate stores the given values", func(t *testing.T) {
		from := time.Now().UTC().Truncate(time.Second).Add(time.Hour)
		until := from.AddDate(0, 1, 0)
		given = createKey(t, map[string]any{"registrationKey": apitest.Unique("  video-rollout-" + w.o.Slug), "comment": "batch 1",
			"validFrom": from.Format(time.RFC3339), "validUntil": until.Format(time.RFC3339),
			"numRegistrationsLeft": 10, "usageLimitDays": 90, "testing": true})
		if k := given["registrationKey"].(string); !strings.HasPrefix(k, "video-rollout-") {
			t.Errorf("registrationKey %q was not trimmed", k)
		}
		for k, v := range map[string]any{"comment": "batch 1", "validFrom": from, "validUntil": until,
			"numRegistrationsLeft": 10, "usageLimitDays": 90, "testing": true} {
			specWant(t, "given", given, k, v)
		}
	})
	t.Run("registrationKeyUpdate writes the given fields and keeps the others", func(t *testing.T) {
		d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { registrationKeyUpdate(id: $id, input: {comment: null, testing: false,
			numRegistrationsLeft: 3}) { `+gqlOpsKeyFields+` } }`, map[string]any{"id": given["id"]})
		got := specCheck(t, "registrationKeyUpdate", d["registrationKeyUpdate"], gqlOpsKeyShape)
		for k, v := range map[string]any{"comment": nil, "testing": false, "numRegistrationsLeft": 3,
			"usageLimitDays": 90, "registrationKey": given["registrationKey"], "validUntil": apitest.Time(t, given["validUntil"])} {
			specWant(t, "registrationKeyUpdate", got, k, v)
		}
	})
	t.Run("Capability.registrationKeys and RegistrationKey.capability link both ways", func(t *testing.T) {
		d := w.e.GraphQLData(t, w.o.Key, `query($cap: Int!, $key: Int!) {
			capability(id: $cap) { registrationKeysCount registrationKeys { id registrationKey capability { id } } }
			registrationKey(id: $key) { id capability { id name registrationKeys { id } } }
			capabilities { id registrationKeysCount }
		}`, map[string]any{"cap": capID, "key": given["id"]})
		c := apitest.Object(t, d["capability"])
		specWant(t, "capability", c, "registrationKeysCount", 2)
		keys := apitest.List(t, c["registrationKeys"])
		for _, k := range []map[string]any{generated, given} {
			item := specFind(t, keys, apitest.Int(t, k["id"]))
			specWant(t, "capability.registrationKeys", item, "registrationKey", k["registrationKey"])
			specWant(t, "capability.registrationKeys.capability", item["capability"].(map[string]any), "id", capID)
		}
		back := apitest.Object(t, d["registrationKey"])["capability"].(map[string]any)
		specWant(t, "registrationKey.capability", back, "id", capID)
		if n := len(apitest.List(t, back["registrationKeys"])); n != 2 {
			t.Errorf("registrationKey.capability.registrationKeys has %d items, want 2", n)
		}
		specWant(t, "capabilities", specFind(t, apitest.List(t, d["capabilities"]), capID), "registrationKeysCount", 2)
		specWant(t, "capabilities", specFind(t, apitest.List(t, d["capabilities"]), w.capability), "registrationKeysCount", 1)
	})
	t.Run("the world's key counts its registered client", func(t *testing.T) {
		d := w.e.GraphQLData(t, w.o.Key, `query($id: Int!) { registrationKey(id: $id) { clientsCount capability { id } } }`,
			map[string]any{"id": w.regKeyID})
		k := apitest.Object(t, d["registrationKey"])
		specWant(t, "registrationKey", k, "clientsCount", 1)
		specWant(t, "registrationKey.capability", k["capability"].(map[string]any), "id", w.capability)
	})
	t.Run("registrationKeyDelete answers true and the key is gone", func(t *testing.T) {
		d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { registrationKeyDelete(id: $id) }`, map[string]any{"id": generated["id"]})
		if d["registrationKeyDelete"] != true {
			t.Errorf("registrationKeyDelete = %v, want true", d["registrationKeyDelete"])
		}
		g, _ := w.e.GraphQLFail(t, w.o.Key, `query($id: Int!) { registrationKey(id: $id) { id } }`, map[string]any{"id": generated["id"]})
		if g.Code() != "NOT_FOUND" {
			t.Errorf("deleted key: code %q, want NOT_FOUND", g.Code())
		}
		c := apitest.Object(t, w.e.GraphQLData(t, w.o.Key, `query($id: Int!) { capability(id: $id) { registrationKeysCount } }`,
			map[string]any{"id": capID})["capability"])
		specWant(t, "capability", c, "registrationKeysCount", 1)
	})
	t.Run("registrationKeyCreate with a taken key is a CONFLICT", func(t *testing.T) {
		g, _ := w.e.GraphQLFail(t, w.o.Key, `mutation($c: Int!, $k: String!) { registrationKeyCreate(input: {capabilityId: $c, registrationKey: $k}) { id } }`,
			map[string]any{"c": capID, "k": given["registrationKey"]})
		if g.Code() != "CONFLICT" {
			t.Errorf("code %q, want CONFLICT: %s", g.Code(), g.Raw)
		}
	})
	t.Run("registrationKeyCreate under an unknown capability is NOT_FOUND", func(t *testing.T) {
		g, _ := w.e.GraphQLFail(t, w.o.Key, `mutation { registrationKeyCreate(input: {capabilityId: 987654321}) { id } }`, nil)
		if g.Code() != "NOT_FOUND" {
			t.Errorf("code %q, want NOT_FOUND: %s", g.Code(), g.Raw)
		}
	})
	t.Run("capabilityUpdate writes the given fields and capabilityDelete removes its keys", func(t *testing.T) {
		d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { capabilityUpdate(id: $id, input: {name: "Video 2", allowedMeasurementSubjects: null}) {
			name comment allowedMeasurementTypes allowedMeasurementSubjects } }`, map[string]any{"id": capID})
		c := apitest.Object(t, d["capabilityUpdate"])
		for k, v := range map[string]any{"name": "Video 2", "comment": "pilot", "allowedMeasurementTypes": []string{"VideoMeasurement"},
			"allowedMeasurementSubjects": []string{}} {
			specWant(t, "capabilityUpdate", c, k, v)
		}
		if d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { capabilityDelete(id: $id) }`, map[string]any{"id": capID}); d["capabilityDelete"] != true {
			t.Errorf("capabilityDelete = %v", d["capabilityDelete"])
		}
		for _, q := range []struct{ query, id any }{
			{`query($id: Int!) { capability(id: $id) { id } }`, capID},
			{`query($id: Int!) { registrationKey(id: $id) { id } }`, given["id"]},
		} {
			if g, _ := w.e.GraphQLFail(t, w.o.Key, q.query.(string), map[string]any{"id": q.id}); g.Code() != "NOT_FOUND" {
				t.Errorf("%s after delete: code %q, want NOT_FOUND", q.query, g.Code())
			}
		}
	})
}

const gqlOpsClientFields = `id uuid type accessLevel label extraLabel tags createdAt updatedAt disabledAt disabledReason
	lastMeasurementAt lastSeenAt lastClientType lastClientVersion configManaged offline anomaliesMuted
	offlineNotificationsMuted systemHealthNotificationsMuted
	deliveredPublicConfig { id name isDefault } deliveredAutomatorConfig { id name isDefault }
	registrationKey { id registrationKey capability { id name } }
	clientGroups { id name clients { id } }
	currentIspContract { id ispId ispName name validFrom isp { id name } client { id uuid } }
	configuration { managed publicConfigId automatorConfigId }`

// TestGraphQLOpsClients covers the client queries and the links
// Client.clientGroups, Client.currentIspContract.isp, IspContract.client,
// ClientGroup.clients and Client.registrationKey.capability.
func TestGraphQLOpsClients(t *testing.T) {
	w := specSeed(t, "gql-clients")
	d := w.e.GraphQLData(t, w.o.Key, `{ clients { `+gqlOpsClientFields+` } clientGroups { id name clients { id uuid } } }`, nil)
	list := apitest.List(t, d["clients"])
	if len(list) != 3 {
		t.Errorf("%d clients, want 3", len(list))
	}
	type want struct {
		fields                         map[string]any
		publicCfg, automator, contract any
		regKey                         any
		groups                         []string
		managed                        bool
	}
	cases := []struct {
		name   string
		client apitest.Client
		want   want
	}{
		{"owned client links groups, contract with ISP and registration key", w.probe, want{
			fields: map[string]any{"type": "automator", "accessLevel": "owner", "label": "Probe Berlin 1",
				"extraLabel": "rack 4", "tags": []string{"berlin", "fiber"}, "disabledAt": w.measured,
				"disabledReason": "maintenance", "lastMeasurementAt": w.measured, "lastSeenAt": w.seenAt,
				"lastClientType": "lab", "lastClientVersion": "4.2.0", "configManaged": true, "offline": false,
				"anomaliesMuted": true, "offlineNotificationsMuted": true, "systemHealthNotificationsMuted": false},
			publicCfg: w.assignedPublic, automator: w.defaultAutomator, contract: w.contract, regKey: w.regKeyID,
			groups: []string{"Berlin"}, managed: true}},
		{"bare client gets the default configs", w.bare, want{
			fields: map[string]any{"type": "lab", "accessLevel": "owner", "label": nil, "tags": nil, "offline": nil,
				"configManaged": true},
			publicCfg: w.defaultPublic, automator: w.defaultAutomator, groups: []string{}, managed: true}},
		{"shared client carries no configuration", w.shared, want{
			fields: map[string]any{"accessLevel": "shared", "label": "Partner probe", "configManaged": nil},
			groups: []string{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			byUUID := apitest.Object(t, w.e.GraphQLData(t, w.o.Key, `query($id: ID!) { client(id: $id) { `+gqlOpsClientFields+` } }`,
				map[string]any{"id": c.client.UUID})["client"])
			for where, obj := range map[string]map[string]any{"clients": specFind(t, list, c.client.ID), "client(uuid)": byUUID} {
				specWant(t, where, obj, "uuid", c.client.UUID)
				for k, v := range c.want.fields {
					specWant(t, where, obj, k, v)
				}
				specWantRef(t, where+".deliveredPublicConfig", obj["deliveredPublicConfig"], c.want.publicCfg)
				specWantRef(t, where+".deliveredAutomatorConfig", obj["deliveredAutomatorConfig"], c.want.automator)
				specWantRef(t, where+".currentIspContract", obj["currentIspContract"], c.want.contract)
				specWantRef(t, where+".registrationKey", obj["registrationKey"], c.want.regKey)
				specWant(t, where+".configuration", obj["configuration"].(map[string]any), "managed", c.want.managed)
				var groups []string
				for _, g := range apitest.List(t, obj["clientGroups"]) {
					group := g.(map[string]any)
					groups = append(groups, group["name"].(string))
					specFind(t, apitest.List(t, group["clients"]), c.client.ID) // the group lists the client back
				}
				if !slices.Equal(groups, c.want.groups) {
					t.Errorf("%s.clientGroups = %q, want %q", where, groups, c.want.groups)
				}
			}
		})
	}

	t.Run("currentIspContract links the ISP and back to the client", func(t *testing.T) {
		cur := specFind(t, list, w.probe.ID)["currentIspContract"].(map[string]any)
		for k, v := range map[string]any{"ispId": w.isp, "ispName": "Telekom", "name": "Business 250", "validFrom": w.from} {
			specWant(t, "currentIspContract", cur, k, v)
		}
		specWant(t, "currentIspContract.isp", cur["isp"].(map[string]any), "name", "Telekom")
		specWant(t, "currentIspContract.client", cur["client"].(map[string]any), "uuid", w.probe.UUID)
	})
	t.Run("registrationKey links its capability", func(t *testing.T) {
		k := specFind(t, list, w.probe.ID)["registrationKey"].(map[string]any)
		specWant(t, "registrationKey", k, "registrationKey", w.regKey)
		specWant(t, "registrationKey.capability", k["capability"].(map[string]any), "id", w.capability)
	})
	t.Run("configuration names the assigned config", func(t *testing.T) {
		cfg := specFind(t, list, w.probe.ID)["configuration"].(map[string]any)
		specWant(t, "configuration", cfg, "publicConfigId", w.assignedPublic)
		specWant(t, "configuration", cfg, "automatorConfigId", nil)
	})
	t.Run("clientGroups lists each group with its clients", func(t *testing.T) {
		groups := apitest.List(t, d["clientGroups"])
		if len(groups) != 1 {
			t.Fatalf("%d groups, want 1", len(groups))
		}
		g := specFind(t, groups, w.group)
		specWant(t, "group", g, "name", "Berlin")
		members := apitest.List(t, g["clients"])
		if len(members) != 1 {
			t.Fatalf("group has %d clients, want 1", len(members))
		}
		specWant(t, "group.clients[0]", members[0].(map[string]any), "uuid", w.probe.UUID)
	})
	t.Run("clientLabelAvailable answers like the REST check", func(t *testing.T) {
		cases := []struct {
			name, label string
			exclude     any
			available   bool
		}{
			{"taken label", " probe BERLIN 1 ", nil, false},
			{"free label", "Probe Hamburg", nil, true},
			{"blank label", " ", nil, true},
			{"excluded by id", "Probe Berlin 1", fmt.Sprint(w.probe.ID), true},
			{"excluded by UUID", "Probe Berlin 1", w.probe.UUID, true},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				d := w.e.GraphQLData(t, w.o.Key, `query($l: String!, $x: String) { clientLabelAvailable(label: $l, excludeId: $x) { available label } }`,
					map[string]any{"l": c.label, "x": c.exclude})
				a := apitest.Object(t, d["clientLabelAvailable"])
				specWant(t, "clientLabelAvailable", a, "available", c.available)
				specWant(t, "clientLabelAvailable", a, "label", c.label)
			})
		}
	})
}

const gqlOpsUserFields = `id email username role firstName lastName aiUsageAccepted aiCustomPrompt
	lastVisitedDashboardVersion dashboardWhatsNewDisabled pendingEmail pendingEmailTokenSentAt pendingEmailState
	notificationConfig { anomalyEvents clientOffline clientDegraded studyExecutionFailures anomalyEventsFrequency
		anomalyEventsDigestHours anomalyEventsDigestIntervalUnit anomalyEventsDigestIntervalCount
		anomalyEventsDigestAtTime anomalyEventsDigestDayOfWeek }`

// TestGraphQLOpsUsers covers userCreate defaults and the partial userUpdate.
func TestGraphQLOpsUsers(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "gql-users")}
	d := w.e.GraphQLData(t, w.o.Key, `mutation($in: UserCreateInput!) { userCreate(input: $in) { `+gqlOpsUserFields+` } }`,
		map[string]any{"in": map[string]any{"email": "ada@example.org", "username": "ada", "role": "admin", "firstName": "Ada"}})
	u := apitest.Object(t, d["userCreate"])
	for k, v := range map[string]any{"email": "ada@example.org", "username": "ada", "role": "admin", "firstName": "Ada",
		"lastName": nil, "dashboardWhatsNewDisabled": false, "pendingEmailState": nil} {
		specWant(t, "userCreate", u, k, v)
	}
	nc := u["notificationConfig"].(map[string]any)
	specWant(t, "notificationConfig", nc, "clientOffline", true)
	specWant(t, "notificationConfig", nc, "anomalyEvents", false)
	id := u["id"]

	steps := []struct {
		name  string
		input string
		want  map[string]any // notificationConfig values
		user  map[string]any // user values
	}{
		{"userUpdate sets the digest keys", `{lastName: "Lovelace", notificationConfig: {anomalyEventsFrequency: "digest",
			anomalyEventsDigestIntervalUnit: "day", anomalyEventsDigestIntervalCount: 2, anomalyEventsDigestAtTime: "06:15"}}`,
			map[string]any{"anomalyEventsFrequency": "digest", "anomalyEventsDigestIntervalUnit": "day",
				"anomalyEventsDigestIntervalCount": 2, "anomalyEventsDigestAtTime": "06:15", "clientOffline": true},
			map[string]any{"lastName": "Lovelace", "firstName": "Ada"}},
		{"userUpdate with one key keeps the others", `{notificationConfig: {clientDegraded: true}}`,
			map[string]any{"clientDegraded": true, "anomalyEventsFrequency": "digest", "anomalyEventsDigestAtTime": "06:15",
				"clientOffline": true, "anomalyEvents": false},
			map[string]any{"lastName": "Lovelace"}},
		{"userUpdate with null removes a key", `{firstName: null, notificationConfig: {anomalyEventsDigestAtTime: null}}`,
			map[string]any{"anomalyEventsDigestAtTime": nil, "anomalyEventsFrequency": "digest"},
			map[string]any{"firstName": nil, "lastName": "Lovelace"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { userUpdate(id: $id, input: `+s.input+`) { `+gqlOpsUserFields+` } }`,
				map[string]any{"id": id})
			stored := w.e.GraphQLData(t, w.o.Key, `query($id: Int!) { user(id: $id) { `+gqlOpsUserFields+` } users { id email } }`,
				map[string]any{"id": id})
			for where, u := range map[string]map[string]any{"userUpdate": apitest.Object(t, d["userUpdate"]), "user": apitest.Object(t, stored["user"])} {
				for k, v := range s.user {
					specWant(t, where, u, k, v)
				}
				for k, v := range s.want {
					specWant(t, where+".notificationConfig", u["notificationConfig"].(map[string]any), k, v)
				}
			}
			specWant(t, "users", specFind(t, apitest.List(t, stored["users"]), apitest.Int(t, id)), "email", "ada@example.org")
		})
	}
}

// TestGraphQLOpsApiKeys covers the three key kinds: where each shows its
// secret, and that delete removes it.
func TestGraphQLOpsApiKeys(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "gql-keys")}
	until := specKeyUntil.Format(time.RFC3339)
	cases := []struct {
		name                         string
		create, list, get, del       string
		fields                       string
		secretInReads, previewInRead bool
		prefix                       string
	}{
		{"admin key shows apiKey only when created", "clientAdminApiKeyCreate", "clientAdminApiKeys", "clientAdminApiKey",
			"clientAdminApiKeyDelete", "id name validFrom validUntil keyPreview effectiveRole lastUsedAt createdAt clientAdminUserId apiKey",
			false, true, "client_admin-"},
		{"analytics key shows apiKey everywhere", "clientAnalyticsApiKeyCreate", "clientAnalyticsApiKeys", "clientAnalyticsApiKey",
			"clientAnalyticsApiKeyDelete", "id name validFrom validUntil apiKey", true, false, "client_analytics-"},
		{"export key shows apiKey only when created", "exportApiKeyCreate", "exportApiKeys", "exportApiKey",
			"exportApiKeyDelete", "id name validFrom validUntil keyPreview apiKey", false, true, "export-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := apitest.Unique("gql-key")
			input := fmt.Sprintf(`{name: %q, validUntil: %q}`, name, until)
			if c.create == "clientAdminApiKeyCreate" {
				input = fmt.Sprintf(`{name: %q, validUntil: %q, effectiveRole: viewer}`, name, until)
			}
			created := apitest.Object(t, w.e.GraphQLData(t, w.o.Key, `mutation { k: `+c.create+`(input: `+input+`) { `+c.fields+` } }`, nil)["k"])
			secret, _ := created["apiKey"].(string)
			if !strings.HasPrefix(secret, c.prefix) {
				t.Errorf("apiKey %q lacks prefix %q", secret, c.prefix)
			}
			id := apitest.Int(t, created["id"])
			d := w.e.GraphQLData(t, w.o.Key, `query($id: Int!) { list: `+c.list+` { `+c.fields+` } one: `+c.get+`(id: $id) { `+c.fields+` } }`,
				map[string]any{"id": id})
			for where, obj := range map[string]map[string]any{"list": specFind(t, apitest.List(t, d["list"]), id), "get": apitest.Object(t, d["one"])} {
				specWant(t, where, obj, "name", name)
				specWant(t, where, obj, "validUntil", specKeyUntil)
				if c.secretInReads {
					specWant(t, where, obj, "apiKey", secret)
				} else {
					specWant(t, where, obj, "apiKey", nil)
				}
				if c.previewInRead {
					specWant(t, where, obj, "keyPreview", auth.Preview(secret))
				}
				if c.create == "clientAdminApiKeyCreate" {
					specWant(t, where, obj, "effectiveRole", "viewer")
					specWant(t, where, obj, "clientAdminUserId", w.o.UserID)
					specWant(t, where, obj, "lastUsedAt", nil)
				}
			}
			if d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { `+c.del+`(id: $id) }`, map[string]any{"id": id}); d[c.del] != true {
				t.Errorf("%s = %v, want true", c.del, d[c.del])
			}
			g, _ := w.e.GraphQLFail(t, w.o.Key, `query($id: Int!) { `+c.get+`(id: $id) { id } }`, map[string]any{"id": id})
			if g.Code() != "NOT_FOUND" {
				t.Errorf("deleted key: code %q, want NOT_FOUND", g.Code())
			}
		})
	}
}

// TestGraphQLOpsServiceCredentials covers the write-only password.
func TestGraphQLOpsServiceCredentials(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "gql-creds")}
	const fields = `id name service username createdAt updatedAt passwordSet`
	c := apitest.Object(t, w.e.GraphQLData(t, w.o.Key, `mutation { serviceCredentialCreate(input: {name: "Ookla", service: "ookla",
		username: "probe", password: "pw-orig-M4"}) { `+fields+` } }`, nil)["serviceCredentialCreate"])
	for k, v := range map[string]any{"name": "Ookla", "service": "ookla", "username": "probe", "passwordSet": true} {
		specWant(t, "serviceCredentialCreate", c, k, v)
	}
	id := apitest.Int(t, c["id"])
	steps := []struct {
		name, input string
		stored      string
		want        map[string]any
	}{
		{"update without password keeps it", `{username: "other"}`, "pw-orig-M4", map[string]any{"username": "other", "passwordSet": true}},
		{"update with a blank password keeps it", `{password: ""}`, "pw-orig-M4", map[string]any{"username": "other", "passwordSet": true}},
		{"update with a new password replaces it", `{password: "pw-new-R8", name: "Ookla EU"}`, "pw-new-R8", map[string]any{"name": "Ookla EU", "passwordSet": true}},
		{"update with username null clears it", `{username: null}`, "pw-new-R8", map[string]any{"username": nil, "service": "ookla"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			g := w.e.GraphQL(t, w.o.Key, `mutation($id: Int!) { serviceCredentialUpdate(id: $id, input: `+s.input+`) { `+fields+` } }`,
				map[string]any{"id": id})
			if len(g.Errors) > 0 {
				t.Fatalf("update: %s", g.Raw)
			}
			if strings.Contains(string(g.Raw), "pw-") {
				t.Errorf("the password came back: %s", g.Raw)
			}
			got := apitest.Object(t, g.Data["serviceCredentialUpdate"])
			stored := w.e.GraphQLData(t, w.o.Key, `query($id: Int!) { one: serviceCredential(id: $id) { `+fields+` } all: serviceCredentials { id passwordSet } }`,
				map[string]any{"id": id})
			for k, v := range s.want {
				specWant(t, "serviceCredentialUpdate", got, k, v)
				specWant(t, "serviceCredential", apitest.Object(t, stored["one"]), k, v)
			}
			specWant(t, "serviceCredentials", specFind(t, apitest.List(t, stored["all"]), id), "passwordSet", true)
			if pw, _ := specSealed(t, w, id); pw != s.stored {
				t.Errorf("stored password %q, want %q", pw, s.stored)
			}
		})
	}
	t.Run("serviceCredentialDelete answers true and the credential is gone", func(t *testing.T) {
		if d := w.e.GraphQLData(t, w.o.Key, `mutation($id: Int!) { serviceCredentialDelete(id: $id) }`, map[string]any{"id": id}); d["serviceCredentialDelete"] != true {
			t.Errorf("serviceCredentialDelete = %v", d["serviceCredentialDelete"])
		}
		g, _ := w.e.GraphQLFail(t, w.o.Key, `query($id: Int!) { serviceCredential(id: $id) { id } }`, map[string]any{"id": id})
		if g.Code() != "NOT_FOUND" {
			t.Errorf("code %q, want NOT_FOUND", g.Code())
		}
	})
}

// TestGraphQLOpsSettingsAndAiStatus covers dataOwnerSettings and aiAssistantStatus.
func TestGraphQLOpsSettingsAndAiStatus(t *testing.T) {
	e := apitest.Get(t)
	w := &specWorld{e: e, o: e.NewOwner(t, "gql-settings")}
	const fields = `aiSystemPrompt offlineThresholdMinutes offlineThresholdMinutesDefault retentionDays retentionDaysDefault clientOfflineDetectionEnabled
		clientDegradedDetectionEnabled studyFailureDetectionEnabled clientOfflineDetectionEnabledOnServer
		clientDegradedDetectionEnabledOnServer studyFailureDetectionEnabledOnServer`
	shape := specShape{"aiSystemPrompt": "str?", "offlineThresholdMinutes": "int?", "offlineThresholdMinutesDefault": "int",
		"retentionDays": "int?", "retentionDaysDefault": "int?",
		"clientOfflineDetectionEnabled": "bool", "clientDegradedDetectionEnabled": "bool", "studyFailureDetectionEnabled": "bool",
		"clientOfflineDetectionEnabledOnServer": "bool", "clientDegradedDetectionEnabledOnServer": "bool",
		"studyFailureDetectionEnabledOnServer": "bool"}
	before := specCheck(t, "dataOwnerSettings", w.e.GraphQLData(t, w.o.Key, `{ dataOwnerSettings { `+fields+` } }`, nil)["dataOwnerSettings"], shape)
	specWant(t, "dataOwnerSettings", before, "offlineThresholdMinutes", nil)
	specWant(t, "dataOwnerSettings", before, "offlineThresholdMinutesDefault", 60)

	specWant(t, "dataOwnerSettings", before, "retentionDays", nil)
	d := w.e.GraphQLData(t, w.o.Key, `mutation { dataOwnerSettingsUpdate(input: {aiSystemPrompt: "Be terse", offlineThresholdMinutes: 30,
		clientDegradedDetectionEnabled: false, retentionDays: 365}) { `+fields+` } }`, nil)
	after := specCheck(t, "dataOwnerSettingsUpdate", d["dataOwnerSettingsUpdate"], shape)
	stored := specCheck(t, "dataOwnerSettings", w.e.GraphQLData(t, w.o.Key, `{ dataOwnerSettings { `+fields+` } }`, nil)["dataOwnerSettings"], shape)
	for k, v := range map[string]any{"aiSystemPrompt": "Be terse", "offlineThresholdMinutes": 30, "retentionDays": 365,
		"clientDegradedDetectionEnabled": false, "clientOfflineDetectionEnabled": true, "studyFailureDetectionEnabled": true} {
		specWant(t, "dataOwnerSettingsUpdate", after, k, v)
		specWant(t, "dataOwnerSettings", stored, k, v)
	}

	d = w.e.GraphQLData(t, w.o.Key, `{ aiAssistantStatus { enabled dataOwner } viewer { dataOwner } }`, nil)
	s := apitest.Object(t, d["aiAssistantStatus"])
	specWant(t, "aiAssistantStatus", s, "dataOwner", w.o.Slug)
	specWant(t, "viewer", apitest.Object(t, d["viewer"]), "dataOwner", w.o.Slug)
	specWant(t, "aiAssistantStatus", s, "enabled", true) // the package's server has a fake provider
}

// TestGraphQLOpsErrorCodes covers the classification in extensions.code and
// the field list in extensions.errors.
func TestGraphQLOpsErrorCodes(t *testing.T) {
	w := specSeed(t, "gql-errors")
	foreign := apitest.WantEnvelope(t, w.e.Admin(t, http.MethodPost, "/isps", w.partner.Key,
		map[string]any{"name": "Foreign", "country": "DE", "type": "fixed"}), 201, "isp").(map[string]any)["id"]
	dupName := apitest.Unique("dup")
	w.e.GraphQLData(t, w.o.Key, `mutation($n: String!) { serviceCredentialCreate(input: {name: $n, service: "smtp"}) { id } }`, map[string]any{"n": dupName})

	cases := []struct {
		name   string
		key    string // "" = the owner's
		query  string
		vars   map[string]any
		code   string
		field  string // a key of extensions.errors, when set
		status int    // HTTP status, when not 200
	}{
		{"a missing ISP id is NOT_FOUND", "", `{ isp(id: 987654321) { id } }`, nil, "NOT_FOUND", "", 0},
		{"another data owner's ISP is NOT_FOUND", "", `query($id: Int!) { isp(id: $id) { id } }`, map[string]any{"id": foreign}, "NOT_FOUND", "", 0},
		{"a missing client UUID is NOT_FOUND", "", `query($id: ID!) { client(id: $id) { id } }`, map[string]any{"id": uuid.NewString()}, "NOT_FOUND", "", 0},
		{"a client id that is neither integer nor UUID is NOT_FOUND", "", `{ client(id: "probe-1") { id } }`, nil, "NOT_FOUND", "", 0},
		{"updating a missing capability is NOT_FOUND", "", `mutation { capabilityUpdate(id: 987654321, input: {name: "x"}) { id } }`, nil, "NOT_FOUND", "", 0},
		{"deleting a missing export key is NOT_FOUND", "", `mutation { exportApiKeyDelete(id: 987654321) }`, nil, "NOT_FOUND", "", 0},
		{"a missing user is NOT_FOUND", "", `{ user(id: 987654321) { id } }`, nil, "NOT_FOUND", "", 0},
		{"an invalid country is BAD_USER_INPUT naming country", "", `mutation { ispCreate(input: {name: "X", country: "Germany", type: fixed}) { id } }`, nil, "BAD_USER_INPUT", "country", 0},
		{"a blank name is BAD_USER_INPUT naming name", "", `mutation { capabilityCreate(input: {name: "  "}) { id } }`, nil, "BAD_USER_INPUT", "name", 0},
		{"an invalid e-mail is BAD_USER_INPUT naming email", "", `mutation { userCreate(input: {email: "not-an-address", username: "x", role: viewer}) { id } }`, nil, "BAD_USER_INPUT", "email", 0},
		{"digest hours out of range are BAD_USER_INPUT naming the nested field", "",
			`mutation($id: Int!) { userUpdate(id: $id, input: {notificationConfig: {anomalyEventsDigestHours: 200}}) { id } }`,
			map[string]any{"id": w.o.UserID}, "BAD_USER_INPUT", "notificationConfig.anomalyEventsDigestHours", 0},
		{"a zero offline threshold is BAD_USER_INPUT naming it", "", `mutation { dataOwnerSettingsUpdate(input: {offlineThresholdMinutes: 0}) { offlineThresholdMinutes } }`, nil, "BAD_USER_INPUT", "offlineThresholdMinutes", 0},
		{"a short registration key is BAD_USER_INPUT naming it", "",
			`mutation($c: Int!) { registrationKeyCreate(input: {capabilityId: $c, registrationKey: "abc"}) { id } }`,
			map[string]any{"c": w.capability}, "BAD_USER_INPUT", "registrationKey", 0},
		{"merging an ISP into itself is BAD_USER_INPUT naming targetId", "",
			`mutation($id: Int!) { ispMergeInto(id: $id, input: {targetId: $id}) { id } }`,
			map[string]any{"id": w.isp}, "BAD_USER_INPUT", "targetId", 0},
		{"a bad excludeId is BAD_REQUEST", "", `{ clientLabelAvailable(label: "x", excludeId: "nope") { available } }`, nil, "BAD_REQUEST", "", 0},
		{"a duplicate credential name is CONFLICT", "", `mutation($n: String!) { serviceCredentialCreate(input: {name: $n, service: "smtp"}) { id } }`, map[string]any{"n": dupName}, "CONFLICT", "", 0},
		{"no key is UNAUTHENTICATED", "none", `{ isps { id } }`, nil, "UNAUTHENTICATED", "", http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := w.o.Key
			if c.key == "none" {
				key = ""
			}
			g, first := w.e.GraphQLFail(t, key, c.query, c.vars)
			want := c.status
			if want == 0 {
				want = http.StatusOK
			}
			if g.Status != want {
				t.Errorf("HTTP status %d, want %d", g.Status, want)
			}
			if g.Code() != c.code {
				t.Errorf("extensions.code = %q, want %q: %s", g.Code(), c.code, g.Raw)
			}
			if first.Message == "" || strings.Contains(first.Message, "sql") || strings.Contains(first.Message, "pgx") {
				t.Errorf("message %q is empty or internal", first.Message)
			}
			if c.field == "" {
				return
			}
			errs, ok := first.Extensions["errors"].(map[string]any)
			if !ok {
				t.Fatalf("extensions.errors missing: %s", g.Raw)
			}
			msgs, ok := errs[c.field].([]any)
			if !ok || len(msgs) == 0 {
				t.Fatalf("extensions.errors = %v, want messages for %s", errs, c.field)
			}
			if s, _ := msgs[0].(string); s == "" {
				t.Errorf("extensions.errors.%s[0] is not a message: %v", c.field, msgs[0])
			}
		})
	}
	t.Run("a NOT_FOUND error names the field's path and nulls the data", func(t *testing.T) {
		g, first := w.e.GraphQLFail(t, w.o.Key, `{ isp(id: 987654321) { id } }`, nil)
		if len(first.Path) != 1 || first.Path[0] != "isp" {
			t.Errorf("path = %v, want [isp]", first.Path)
		}
		if g.Data != nil && g.Data["isp"] != nil {
			t.Errorf("data.isp = %v, want null", g.Data["isp"])
		}
	})
	t.Run("a refused mutation leaves nothing behind", func(t *testing.T) {
		before := len(apitest.List(t, w.e.GraphQLData(t, w.o.Key, `{ isps { id } }`, nil)["isps"]))
		w.e.GraphQLFail(t, w.o.Key, `mutation { ispCreate(input: {name: "", country: "DE", type: fixed}) { id } }`, nil)
		if after := len(apitest.List(t, w.e.GraphQLData(t, w.o.Key, `{ isps { id } }`, nil)["isps"])); after != before {
			t.Errorf("%d ISPs after a refused create, want %d", after, before)
		}
	})
}
