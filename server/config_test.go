package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// cfgStudy is a study of a public config document.
func cfgStudy(id, typ, subject string) map[string]any {
	return map[string]any{"id": id, "type": typ, "subject": subject, "params": map[string]any{"n": 1},
		"names": map[string]any{"en_US": map[string]any{"short": id, "long": "Study " + id}}}
}

// cfgDoc is a public config document of studies.
func cfgDoc(studies ...map[string]any) map[string]any {
	list := make([]any, len(studies))
	for i, s := range studies {
		list[i] = s
	}
	return map[string]any{"version": 1, "studies": list}
}

// cfgObj reads the config of an envelope answer.
func cfgObj(t *testing.T, r *apitest.Response, status int, key string) map[string]any {
	t.Helper()
	return apitest.WantEnvelope(t, r, status, key).(map[string]any)
}

// cfgVersion reads a version object of a config, nil when null.
func cfgVersion(c map[string]any, which string) map[string]any {
	v, _ := c[which].(map[string]any)
	return v
}

// cfgRevision reads an integer field that may be null (-1 then).
func cfgRevision(t *testing.T, v any) int64 {
	t.Helper()
	if v == nil {
		return -1
	}
	return apitest.Int(t, v)
}

// canonicalHash is what data_hash must be: SHA-256 of the document with
// keys sorted and no insignificant space.
func canonicalHash(t *testing.T, data any) string {
	t.Helper()
	raw, err := json.Marshal(data) // maps marshal with sorted keys
	if err != nil {
		t.Fatal(err)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// TestConfigDraftPublishLifecycle: create with a draft, save it (same
// revision), publish (the draft becomes the published version), save a new
// draft (next revision), publish again (the old one is superseded),
// discard a draft; 409 for publish or discard without a draft.
func TestConfigDraftPublishLifecycle(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cfglife")
	path := func(id int64, tail string) string { return fmt.Sprintf("/public_configs/%d%s", id, tail) }

	created := cfgObj(t, e.Admin(t, http.MethodPost, "/public_configs", o.Key, map[string]any{"name": "Fleet A",
		"description": "first", "data": cfgDoc(cfgStudy("yt", "VIDEO", "youtube"), cfgStudy("web", "WEB", "website"))}),
		http.StatusCreated, "public_config")
	id := apitest.Int(t, created["id"])
	for _, k := range []string{"draft_version", "published_version", "revisions", "delivered_client_count",
		"delivered_clients", "schedule_configs", "warnings", "draft_version_id", "published_version_id",
		"draft_revision", "published_revision", "is_default", "created_at", "updated_at", "import_source"} {
		if _, ok := created[k]; !ok {
			t.Errorf("create answer lacks %q: %v", k, created)
		}
	}
	draft := cfgVersion(created, "draft_version")
	if draft == nil || cfgVersion(created, "published_version") != nil {
		t.Fatalf("a new config has a draft and no published version: %v", created)
	}
	if got := apitest.Int(t, draft["revision"]); got != 1 {
		t.Errorf("first draft revision = %d, want 1", got)
	}
	data := draft["data"].(map[string]any)
	if apitest.Int(t, data["revision"]) != 1 || apitest.Int(t, data["version"]) != 1 {
		t.Errorf("the document carries version 1 and its revision: %v", data)
	}
	if draft["data_hash"] != canonicalHash(t, data) {
		t.Errorf("data_hash %v is not the SHA-256 of the canonical document (%s)", draft["data_hash"], canonicalHash(t, data))
	}
	studies := apitest.List(t, draft["studies"])
	if len(studies) != 2 || apitest.Int(t, draft["study_count"]) != 2 {
		t.Fatalf("draft studies = %v", draft["studies"])
	}
	s0 := studies[0].(map[string]any)
	for k, want := range map[string]any{"study_id": "yt", "study_type": "VIDEO", "subject": "youtube", "name": "Study yt"} {
		if s0[k] != want {
			t.Errorf("study 0 %s = %v, want %v", k, s0[k], want)
		}
	}
	if apitest.Int(t, s0["revision"]) != 1 || apitest.Int(t, s0["latest_revision"]) != 1 || apitest.Int(t, s0["position"]) != 0 {
		t.Errorf("study 0 revisions/position = %v", s0)
	}
	if !strings.Contains(fmt.Sprint(created["warnings"]), "no published version") {
		t.Errorf("an unpublished config warns: %v", created["warnings"])
	}

	// Saving the draft keeps its revision and changes its hash.
	saved := cfgObj(t, e.Admin(t, http.MethodPut, path(id, ""), o.Key, map[string]any{"name": "Fleet A2",
		"data": cfgDoc(cfgStudy("yt", "VIDEO", "youtube"))}), http.StatusOK, "public_config")
	d2 := cfgVersion(saved, "draft_version")
	if apitest.Int(t, d2["revision"]) != 1 || apitest.Int(t, d2["id"]) != apitest.Int(t, draft["id"]) {
		t.Errorf("a saved draft keeps its id and revision 1: %v", d2)
	}
	if d2["data_hash"] == draft["data_hash"] || saved["name"] != "Fleet A2" || saved["description"] != "first" {
		t.Errorf("save changed hash/name, kept description: %v", saved)
	}

	// Publish: the draft becomes the published version.
	pub := cfgObj(t, e.Admin(t, http.MethodPost, path(id, "/publish"), o.Key, nil), http.StatusOK, "public_config")
	pv := cfgVersion(pub, "published_version")
	if cfgVersion(pub, "draft_version") != nil || pv == nil || apitest.Int(t, pv["revision"]) != 1 || pv["published"] != true {
		t.Fatalf("after publish: %v", pub)
	}
	if pv["published_at"] == nil || pv["published_by_id"] == nil || pv["published_by_name"] == nil {
		t.Errorf("a published version says when and by whom: %v", pv)
	}
	if cfgRevision(t, pub["published_revision"]) != 1 || pub["draft_revision"] != nil || pub["draft_version_id"] != nil {
		t.Errorf("summary after publish: %v", pub)
	}
	apitest.WantMessage(t, e.Admin(t, http.MethodPost, path(id, "/publish"), o.Key, nil), http.StatusConflict, "no draft")
	apitest.WantMessage(t, e.Admin(t, http.MethodDelete, path(id, "/draft"), o.Key, nil), http.StatusConflict, "no draft")

	// A new draft gets the next revision; publishing it supersedes revision 1.
	next := cfgObj(t, e.Admin(t, http.MethodPut, path(id, ""), o.Key, map[string]any{
		"data": cfgDoc(cfgStudy("yt", "VIDEO", "youtube"), cfgStudy("dns", "NETWORK", "dns"))}), http.StatusOK, "public_config")
	if r := apitest.Int(t, cfgVersion(next, "draft_version")["revision"]); r != 2 {
		t.Errorf("the draft after a publish has revision %d, want 2", r)
	}
	if r := apitest.Int(t, cfgVersion(next, "published_version")["revision"]); r != 1 {
		t.Errorf("the published version stays revision 1 while a draft exists: %d", r)
	}
	pub2 := cfgObj(t, e.Admin(t, http.MethodPost, path(id, "/publish"), o.Key, nil), http.StatusOK, "public_config")
	if r := apitest.Int(t, cfgVersion(pub2, "published_version")["revision"]); r != 2 {
		t.Errorf("published revision = %d, want 2", r)
	}
	revs := apitest.List(t, pub2["revisions"])
	if len(revs) != 2 {
		t.Fatalf("revisions = %v", revs)
	}
	r0, r1 := revs[0].(map[string]any), revs[1].(map[string]any)
	if apitest.Int(t, r0["revision"]) != 2 || r0["published"] != true || apitest.Int(t, r1["revision"]) != 1 || r1["published"] != false {
		t.Errorf("revisions newest first with states: %v", revs)
	}
	if _, has := r0["data"]; has {
		t.Errorf("a revision summary carries no data: %v", r0)
	}

	// Discard: the draft goes, the published version stays.
	cfgObj(t, e.Admin(t, http.MethodPut, path(id, ""), o.Key, map[string]any{"data": cfgDoc()}), http.StatusOK, "public_config")
	disc := cfgObj(t, e.Admin(t, http.MethodDelete, path(id, "/draft"), o.Key, nil), http.StatusOK, "public_config")
	if cfgVersion(disc, "draft_version") != nil || apitest.Int(t, cfgVersion(disc, "published_version")["revision"]) != 2 {
		t.Errorf("after discard: %v", disc)
	}
	// The discarded revision 3 is given again to the next draft.
	again := cfgObj(t, e.Admin(t, http.MethodPut, path(id, ""), o.Key, map[string]any{"data": cfgDoc()}), http.StatusOK, "public_config")
	if r := apitest.Int(t, cfgVersion(again, "draft_version")["revision"]); r != 3 {
		t.Errorf("a draft after a discard has revision %d, want 3", r)
	}

	// The list has the summary fields; GET one the full shape; DELETE.
	list := apitest.List(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/public_configs", o.Key, nil), 200, "public_configs"))
	if len(list) != 1 {
		t.Fatalf("list = %v", list)
	}
	for _, k := range []string{"id", "name", "is_default", "created_at", "updated_at", "draft_version_id", "published_version_id"} {
		if _, ok := list[0].(map[string]any)[k]; !ok {
			t.Errorf("list item lacks %q", k)
		}
	}
	cfgObj(t, e.Admin(t, http.MethodGet, path(id, ""), o.Key, nil), http.StatusOK, "public_config")
	apitest.WantStatus(t, e.Admin(t, http.MethodDelete, path(id, ""), o.Key, nil), http.StatusOK)
	apitest.WantNotFound(t, e.Admin(t, http.MethodGet, path(id, ""), o.Key, nil), "deleted config")

	// A schedule config is not a public config: 404 on the other path.
	sched := o.NewConfig(t, store.ConfigAutomator, "", false)
	apitest.WantNotFound(t, e.Admin(t, http.MethodGet, path(sched, ""), o.Key, nil), "schedule config under /public_configs")
	apitest.WantNotFound(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d?kind=automator", sched), o.Key, nil),
		"kind parameter cannot pick the kind")
	cfgObj(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/schedule_configs/%d", sched), o.Key, nil), http.StatusOK, "schedule_config")
}

// TestConfigDeliveryPrecedence: a client gets the published version of
// its own assignment, else of its groups' (the latest assigned), else the
// data owner's default; a config without a published version is skipped;
// unmanaged clients get nothing.
func TestConfigDeliveryPrecedence(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cfgdeliver")
	ctx := context.Background()
	def := o.NewConfigWith(t, apitest.ConfigOpts{Name: "Default", IsDefault: true,
		Published: cfgDoc(cfgStudy("yt", "VIDEO", "youtube"))})
	grp := o.NewConfig(t, store.ConfigPublic, "Group", false)
	own := o.NewConfig(t, store.ConfigPublic, "Own", false)
	later := o.NewConfig(t, store.ConfigPublic, "Later group", false)
	draftOnly := o.NewConfigWith(t, apitest.ConfigOpts{Name: "Draft only", Unpublished: true, Draft: cfgDoc()})
	sched := o.NewConfigWith(t, apitest.ConfigOpts{Kind: store.ConfigAutomator, Name: "Nightly",
		Published: map[string]any{"version": 1, "studySchedules": []any{map[string]any{"studyIds": []string{"yt"}, "cron": "0 3 * * *"}}}})

	c1 := o.NewClient(t, store.NewClient{Label: apitest.Ptr("c1")}).ID // own config, in the group
	c2 := o.NewClient(t, store.NewClient{Label: apitest.Ptr("c2")}).ID // the group only
	c3 := o.NewClient(t, store.NewClient{Label: apitest.Ptr("c3")}).ID // nothing: the default
	c4 := o.NewClient(t, store.NewClient{Label: apitest.Ptr("c4")}).ID // unmanaged
	e.SQL(t, `UPDATE clients SET config_managed = false WHERE id = $1`, c4)
	g1 := o.NewGroup(t, "g1", c1, c2)
	g2 := o.NewGroup(t, "g2", c2)

	assign := func(kind string, cfg int64, body map[string]any, tail string) map[string]any {
		t.Helper()
		base, key := "/public_configs", "public_config"
		if kind == store.ConfigAutomator {
			base, key = "/schedule_configs", "schedule_config"
		}
		return cfgObj(t, e.Admin(t, http.MethodPost, fmt.Sprintf("%s/%d/%s", base, cfg, tail), o.Key, body), http.StatusOK, key)
	}
	assign(store.ConfigPublic, grp, map[string]any{"client_group_ids": []int64{g1}}, "assign")
	assign(store.ConfigPublic, own, map[string]any{"client_ids": []int64{c1}}, "assign")
	assign(store.ConfigPublic, draftOnly, map[string]any{"client_ids": []int64{c3}}, "assign")
	assign(store.ConfigAutomator, sched, map[string]any{"client_ids": []int64{c2}}, "assign")

	delivered := func(client int64) (pub, auto any) {
		t.Helper()
		c := apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/clients/%d", client), o.Key, nil), 200, "client").(map[string]any)
		id := func(v any) any {
			if m, ok := v.(map[string]any); ok {
				return apitest.Int(t, m["id"])
			}
			return nil
		}
		return id(c["delivered_public_config"]), id(c["delivered_automator_config"])
	}
	check := func(what string, client int64, wantPub, wantAuto any) {
		t.Helper()
		gotPub, gotAuto := delivered(client)
		if gotPub != wantPub || gotAuto != wantAuto {
			t.Errorf("%s: delivered public %v automator %v, want %v %v", what, gotPub, gotAuto, wantPub, wantAuto)
		}
		d, err := e.Store.DeliveredConfigsForClient(ctx, o.ID, client)
		if err != nil {
			t.Fatalf("DeliveredConfigsForClient: %v", err)
		}
		var storePub, storeAuto any
		if d.Public != nil {
			storePub = d.Public.ID
		}
		if d.Automator != nil {
			storeAuto = d.Automator.ID
		}
		if storePub != wantPub || storeAuto != wantAuto {
			t.Errorf("%s: store delivers public %v automator %v, want %v %v", what, storePub, storeAuto, wantPub, wantAuto)
		}
	}
	check("own assignment before its group's", c1, own, nil)
	check("group assignment", c2, grp, sched)
	check("an assigned draft-only config falls through to the default", c3, def, nil)
	check("unmanaged client gets nothing", c4, nil, nil)

	// The latest group assignment wins among the client's groups.
	assign(store.ConfigPublic, later, map[string]any{"client_group_ids": []int64{g2}}, "assign")
	check("latest group assignment", c2, later, sched)
	// Unassigning the client's own config leaves the group's.
	assign(store.ConfigPublic, own, map[string]any{"client_ids": []int64{c1}}, "unassign")
	check("after unassigning its own", c1, grp, nil)
	// Unassigning a config the client does not have changes nothing.
	assign(store.ConfigPublic, own, map[string]any{"client_ids": []int64{c2}, "client_group_ids": []int64{g1}}, "unassign")
	check("unassigning another config", c2, later, sched)

	// What the store hands the check-in: the published document, its revision and hash.
	d, err := e.Store.DeliveredConfigsForClient(ctx, o.ID, c3)
	if err != nil || d.Public == nil {
		t.Fatalf("delivery of c3: %+v %v", d, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(d.Public.Data, &doc); err != nil || len(doc["studies"].([]any)) != 1 {
		t.Errorf("delivered data = %s (%v)", d.Public.Data, err)
	}
	if d.Public.Revision != 1 || d.Public.DataHash == "" || d.Public.Source != "default" {
		t.Errorf("delivered public = %+v", d.Public)
	}

	// delivered_clients of a config: sorted by label, counted, unmanaged ones left out.
	g := cfgObj(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", grp), o.Key, nil), http.StatusOK, "public_config")
	clients := apitest.List(t, g["delivered_clients"])
	if apitest.Int(t, g["delivered_client_count"]) != 1 || len(clients) != 1 || apitest.Int(t, clients[0].(map[string]any)["id"]) != c1 {
		t.Errorf("group config delivered to %v (count %v), want [c1]", clients, g["delivered_client_count"])
	}
	gq := e.GraphQLData(t, o.Key, `query($id: Int!) { measurementConfig(kind: public, id: $id) { clientGroups { id } revisions { state } } }`,
		map[string]any{"id": grp})["measurementConfig"].(map[string]any)
	if groups := apitest.List(t, gq["clientGroups"]); len(groups) != 1 || apitest.Int(t, groups[0].(map[string]any)["id"]) != g1 {
		t.Errorf("group config's clientGroups = %v", groups)
	}
	if fmt.Sprint(gq["revisions"]) != "[map[state:published]]" {
		t.Errorf("revisions' states = %v", gq["revisions"])
	}
	dc := cfgObj(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", def), o.Key, nil), http.StatusOK, "public_config")
	if n := apitest.Int(t, dc["delivered_client_count"]); n != 1 {
		t.Errorf("default delivered to %d clients, want 1 (c3): %v", n, dc["delivered_clients"])
	}
	// The schedule config that runs study yt is listed on the public config defining it.
	sc := apitest.List(t, dc["schedule_configs"])
	if len(sc) != 1 || apitest.Int(t, sc[0].(map[string]any)["id"]) != sched ||
		fmt.Sprint(sc[0].(map[string]any)["study_ids"]) != "[yt]" {
		t.Errorf("schedule_configs = %v", sc)
	}

	// Deleting the group's config: its clients fall back to the default.
	apitest.WantStatus(t, e.Admin(t, http.MethodDelete, fmt.Sprintf("/public_configs/%d", grp), o.Key, nil), 200)
	check("after the group's config is deleted", c1, def, nil)

	// Setting another default moves the default.
	newDef := cfgObj(t, e.Admin(t, http.MethodPut, fmt.Sprintf("/public_configs/%d/default", own), o.Key, nil), 200, "public_config")
	if newDef["is_default"] != true {
		t.Errorf("set default: %v", newDef)
	}
	check("the new default", c1, own, nil)
	old := cfgObj(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", def), o.Key, nil), 200, "public_config")
	if old["is_default"] != false {
		t.Errorf("the previous default is still one: %v", old)
	}
	cfgObj(t, e.Admin(t, http.MethodDelete, fmt.Sprintf("/public_configs/%d/default", own), o.Key, nil), 200, "public_config")
	check("no default", c1, nil, nil)

	// Assigning ids that are not the data owner's changes nothing: 404.
	other := e.NewOwner(t, "cfgdeliver-other")
	foreign := other.NewClient(t, store.NewClient{}).ID
	r := e.Admin(t, http.MethodPost, fmt.Sprintf("/public_configs/%d/assign", later), o.Key,
		map[string]any{"client_ids": []int64{c3, foreign}})
	apitest.WantMessage(t, r, http.StatusNotFound, fmt.Sprint(foreign))
	check("a refused assignment changes nothing", c3, nil, nil)
	apitest.WantStatus(t, e.Admin(t, http.MethodPost, fmt.Sprintf("/public_configs/%d/assign", later), o.Key,
		map[string]any{}), http.StatusUnprocessableEntity)
}

// TestConfigDeliveredSecrets: configs name credentials by service; API
// answers never carry the stored secret, the delivery fills it in.
func TestConfigDeliveredSecrets(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cfgsecret")
	o.NewCredential(t, apitest.CredentialOpts{Service: "ookla", Username: apitest.Ptr("fleet-login"), Password: "hunter2-secret"})
	doc := cfgDoc(cfgStudy("ookla", "SPEEDTEST", "ookla"))
	doc["credentials"] = map[string]any{"ookla": map[string]any{"region": "eu"}, "nperf": map[string]any{}}
	id := o.NewConfigWith(t, apitest.ConfigOpts{IsDefault: true, Published: doc})
	client := o.NewClient(t, store.NewClient{}).ID

	r := e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", id), o.Key, nil)
	if strings.Contains(string(r.Raw), "hunter2-secret") || strings.Contains(string(r.Raw), "fleet-login") {
		t.Errorf("the config answer shows the stored credential: %s", r.Raw)
	}
	warnings := fmt.Sprint(cfgObj(t, r, 200, "public_config")["warnings"])
	if !strings.Contains(warnings, `credentials.nperf`) || strings.Contains(warnings, "credentials.ookla") {
		t.Errorf("warnings name the service without a stored credential only: %s", warnings)
	}
	d, err := e.Store.DeliveredConfigsForClient(context.Background(), o.ID, client)
	if err != nil {
		t.Fatal(err)
	}
	filled, err := d.WithSecrets(e.Sealer.Open)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(filled, &got)
	ookla := got["credentials"].(map[string]any)["ookla"].(map[string]any)
	if ookla["username"] != "fleet-login" || ookla["password"] != "hunter2-secret" || ookla["region"] != "eu" {
		t.Errorf("delivered ookla credential = %v", ookla)
	}
	if len(got["credentials"].(map[string]any)["nperf"].(map[string]any)) != 0 {
		t.Errorf("a service without a stored credential stays as written: %v", got["credentials"])
	}
}

// TestConfigValidation: every bad document or body is a 422 naming the field.
func TestConfigValidation(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cfgvalid")
	withCreds := cfgDoc(cfgStudy("a", "WEB", "website"))
	withCreds["credentials"] = map[string]any{"ookla": map[string]any{"password": "x"}}
	big := cfgDoc(cfgStudy("a", "WEB", "website"))
	big["blob"] = strings.Repeat("x", 300<<10)
	many := make([]map[string]any, 501)
	for i := range many {
		many[i] = cfgStudy(fmt.Sprint("s", i), "WEB", "website")
	}
	sched := func(cron any, ids ...any) map[string]any {
		return map[string]any{"version": 1, "studySchedules": []any{map[string]any{"studyIds": ids, "cron": cron}}}
	}
	cases := []struct {
		name, path string
		body       map[string]any
		field      string
	}{
		{"blank name", "/public_configs", map[string]any{"name": " "}, "name"},
		{"data not an object", "/public_configs", map[string]any{"name": "x", "data": []int{1}}, "data"},
		{"version 2", "/public_configs", map[string]any{"name": "x", "data": map[string]any{"version": 2, "studies": []any{}}}, "data.version"},
		{"no studies", "/public_configs", map[string]any{"name": "x", "data": map[string]any{"version": 1}}, "data.studies"},
		{"unknown study type", "/public_configs", map[string]any{"name": "x", "data": cfgDoc(cfgStudy("a", "AUDIO", "x"))}, "data.studies.0.type"},
		{"lower-case study type", "/public_configs", map[string]any{"name": "x", "data": cfgDoc(cfgStudy("a", "web", "x"))}, "data.studies.0.type"},
		{"blank subject", "/public_configs", map[string]any{"name": "x", "data": cfgDoc(cfgStudy("a", "WEB", ""))}, "data.studies.0.subject"},
		{"duplicate study id", "/public_configs", map[string]any{"name": "x", "data": cfgDoc(cfgStudy("a", "WEB", "w"), cfgStudy("a", "VIDEO", "v"))}, "data.studies.1.id"},
		{"params not an object", "/public_configs", map[string]any{"name": "x", "data": cfgDoc(map[string]any{"id": "a", "type": "WEB", "subject": "w", "params": 3})}, "data.studies.0.params"},
		{"secret in credentials", "/public_configs", map[string]any{"name": "x", "data": withCreds}, "data.credentials.ookla.password"},
		{"bad service name", "/public_configs", map[string]any{"name": "x", "data": map[string]any{"version": 1, "studies": []any{}, "credentials": map[string]any{"Ookla!": map[string]any{}}}}, "data.credentials.Ookla!"},
		{"too many studies", "/public_configs", map[string]any{"name": "x", "data": cfgDoc(many...)}, "data.studies"},
		{"document too large", "/public_configs", map[string]any{"name": "x", "data": big}, "data"},
		{"publish without data", "/public_configs", map[string]any{"name": "x", "publish": true}, "publish"},
		{"cron with 4 fields", "/schedule_configs", map[string]any{"name": "x", "data": sched("0 * * *", "a")}, "data.studySchedules.0.cron"},
		{"cron minute 60", "/schedule_configs", map[string]any{"name": "x", "data": sched("60 * * * *", "a")}, "data.studySchedules.0.cron"},
		{"cron backwards range", "/schedule_configs", map[string]any{"name": "x", "data": sched("0 9-5 * * *", "a")}, "data.studySchedules.0.cron"},
		{"cron step 0", "/schedule_configs", map[string]any{"name": "x", "data": sched("*/0 * * * *", "a")}, "data.studySchedules.0.cron"},
		{"cron unknown macro", "/schedule_configs", map[string]any{"name": "x", "data": sched("@sometimes", "a")}, "data.studySchedules.0.cron"},
		{"cron not a string", "/schedule_configs", map[string]any{"name": "x", "data": sched(5, "a")}, "data.studySchedules.0.cron"},
		{"no study ids", "/schedule_configs", map[string]any{"name": "x", "data": sched("@daily")}, "data.studySchedules.0.studyIds"},
		{"blank study id", "/schedule_configs", map[string]any{"name": "x", "data": sched("@daily", " ")}, "data.studySchedules.0.studyIds.0"},
		{"schedules missing", "/schedule_configs", map[string]any{"name": "x", "data": map[string]any{"version": 1}}, "data.studySchedules"},
		{"import without data", "/public_configs/import", map[string]any{"name": "x"}, "data"},
		{"import of a new config without name", "/public_configs/import", map[string]any{"data": cfgDoc()}, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.Admin(t, http.MethodPost, c.path, o.Key, c.body)
			apitest.WantStatus(t, r, http.StatusUnprocessableEntity)
			fields, _ := r.Obj(t)["errors"].(map[string]any)
			if _, ok := fields[c.field]; !ok {
				t.Errorf("errors %v lack %q", fields, c.field)
			}
		})
	}
	t.Run("nothing was created", func(t *testing.T) {
		for _, p := range []string{"/public_configs", "/schedule_configs"} {
			r := e.Admin(t, http.MethodGet, p, o.Key, nil)
			if n := len(apitest.List(t, r.Obj(t)[strings.TrimPrefix(p, "/")])); n != 0 {
				t.Errorf("%s lists %d configs after refused creates", p, n)
			}
		}
	})
	t.Run("valid cron expressions pass", func(t *testing.T) {
		for _, cron := range []string{"*/15 * * * *", "0 0-23/2 * * MON-FRI", "5,35 8 1 jan,jul sun", "@hourly", "0 12 * * 7"} {
			r := e.Admin(t, http.MethodPost, "/schedule_configs", o.Key, map[string]any{"name": cron, "data": sched(cron, "a")})
			apitest.WantStatus(t, r, http.StatusCreated)
		}
	})
	t.Run("null data on update is refused", func(t *testing.T) {
		id := o.NewConfig(t, store.ConfigPublic, "", false)
		r := e.Admin(t, http.MethodPut, fmt.Sprintf("/public_configs/%d", id), o.Key, map[string]any{"data": nil})
		apitest.WantStatus(t, r, http.StatusUnprocessableEntity)
	})
}

// TestConfigImport: an import answers {public_config, import}: the study
// descriptions it created, revised or reused, how credentials link to
// stored service credentials, and its warnings; secrets are dropped.
func TestConfigImport(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cfgimport")
	cred := o.NewCredential(t, apitest.CredentialOpts{Service: "ookla", Password: "pw"})
	doc := cfgDoc(cfgStudy("yt", "VIDEO", "youtube"), cfgStudy("web", "WEB", "website"))
	doc["credentials"] = map[string]any{"ookla": map[string]any{"password": "leaked"}, "nperf": map[string]any{}}
	raw, _ := json.Marshal(doc)

	// The document may come as its JSON text (a file's content).
	r := e.Admin(t, http.MethodPost, "/public_configs/import", o.Key, map[string]any{"name": "Imported",
		"import_source": "fleet.json", "data": string(raw)})
	body := apitest.WantStatus(t, r, http.StatusOK).(map[string]any)
	if len(body) != 2 || body["public_config"] == nil || body["import"] == nil {
		t.Fatalf("import answer = %s", r.Raw)
	}
	if strings.Contains(string(r.Raw), "leaked") {
		t.Errorf("the imported secret was kept: %s", r.Raw)
	}
	cfg := body["public_config"].(map[string]any)
	first := apitest.Int(t, cfg["id"])
	if cfg["import_source"] != "fleet.json" || cfgVersion(cfg, "draft_version") == nil {
		t.Errorf("imported config = %v", cfg)
	}
	imp := body["import"].(map[string]any)
	for _, sd := range apitest.List(t, imp["study_descriptions"]) {
		m := sd.(map[string]any)
		if m["action"] != "created" || apitest.Int(t, m["revision"]) != 1 || m["from_revision"] != nil {
			t.Errorf("first import of a study: %v", m)
		}
	}
	links := map[string]map[string]any{}
	for _, sc := range apitest.List(t, imp["service_credentials"]) {
		links[sc.(map[string]any)["service"].(string)] = sc.(map[string]any)
	}
	if links["ookla"]["action"] != "linked" || apitest.Int(t, links["ookla"]["service_credential_id"]) != cred.ID {
		t.Errorf("ookla link = %v", links["ookla"])
	}
	if links["nperf"]["action"] != "missing" || links["nperf"]["service_credential_id"] != nil {
		t.Errorf("nperf link = %v", links["nperf"])
	}
	if w := fmt.Sprint(imp["warnings"]); !strings.Contains(w, "ookla.password") || !strings.Contains(w, "nperf") {
		t.Errorf("import warnings = %s", w)
	}

	// Importing a changed study into another config revises its description;
	// the first config then sees the newer revision.
	changed := cfgStudy("yt", "VIDEO", "youtube")
	changed["params"] = map[string]any{"n": 2}
	r = e.Admin(t, http.MethodPost, "/public_configs/import", o.Key, map[string]any{"name": "Second",
		"data": cfgDoc(changed, cfgStudy("web", "WEB", "website"))})
	imp = apitest.WantStatus(t, r, http.StatusOK).(map[string]any)["import"].(map[string]any)
	actions := map[string]map[string]any{}
	for _, sd := range apitest.List(t, imp["study_descriptions"]) {
		actions[sd.(map[string]any)["study_id"].(string)] = sd.(map[string]any)
	}
	if a := actions["yt"]; a["action"] != "updated" || apitest.Int(t, a["revision"]) != 2 || apitest.Int(t, a["from_revision"]) != 1 {
		t.Errorf("changed study: %v", a)
	}
	if a := actions["web"]; a["action"] != "unchanged" || apitest.Int(t, a["revision"]) != 1 {
		t.Errorf("same study: %v", a)
	}
	c1 := cfgObj(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", first), o.Key, nil), 200, "public_config")
	yt := apitest.List(t, cfgVersion(c1, "draft_version")["studies"])[0].(map[string]any)
	if apitest.Int(t, yt["revision"]) != 1 || apitest.Int(t, yt["latest_revision"]) != 2 || yt["latest_version_id"] == nil {
		t.Errorf("the first config's yt study = %v", yt)
	}
	if !strings.Contains(fmt.Sprint(c1["warnings"]), `study "yt" is newer`) {
		t.Errorf("warnings of the first config = %v", c1["warnings"])
	}

	// Importing into an existing config saves its draft and can publish it.
	r = e.Admin(t, http.MethodPost, "/public_configs/import", o.Key, map[string]any{"config_id": first,
		"data": cfgDoc(changed), "publish": true})
	cfg = apitest.WantStatus(t, r, http.StatusOK).(map[string]any)["public_config"].(map[string]any)
	if apitest.Int(t, cfg["id"]) != first || cfg["name"] != "Imported" || cfgVersion(cfg, "draft_version") != nil ||
		apitest.Int(t, cfgVersion(cfg, "published_version")["revision"]) != 1 {
		t.Errorf("import into an existing config: %v", cfg)
	}
}

// TestConfigGraphQL: the same operations through /graphql, with the
// viewer reading and the editor managing.
func TestConfigGraphQL(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cfggql")
	viewer, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
	editor, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleEditor})
	client := o.NewClient(t, store.NewClient{Label: apitest.Ptr("gql-probe")}).ID

	const create = `mutation($d: JSON) { measurementConfigCreate(kind: automator, input: {name: "Nightly", data: $d, publish: true}) {
		id kind publishedRevision publishedVersion { revision data dataHash studyCount } } }`
	vars := map[string]any{"d": map[string]any{"version": 1, "studySchedules": []any{
		map[string]any{"studyIds": []string{"a", "b"}, "cron": "0 3 * * *"}}}}
	if _, ge := e.GraphQLFail(t, viewer, create, vars); ge.Extensions["code"] != "FORBIDDEN" {
		t.Errorf("viewer creates a config: %v", ge)
	}
	data := e.GraphQLData(t, editor, create, vars)["measurementConfigCreate"].(map[string]any)
	id := apitest.Int(t, data["id"])
	pv := data["publishedVersion"].(map[string]any)
	if data["kind"] != "automator" || apitest.Int(t, pv["revision"]) != 1 || apitest.Int(t, pv["studyCount"]) != 2 {
		t.Errorf("created schedule config = %v", data)
	}
	e.GraphQLData(t, editor, `mutation($id: Int!, $c: Int!) { measurementConfigAssign(kind: automator, id: $id, input: {clientIds: [$c]}) {
		deliveredClientCount } }`, map[string]any{"id": id, "c": client})
	got := e.GraphQLData(t, viewer, `query($id: Int!) { measurementConfig(kind: automator, id: $id) {
		name deliveredClientCount deliveredClients { id label } warnings revisions { revision state } }
		measurementConfigs(kind: automator) { id } clients { id deliveredAutomatorConfig { id name } } }`,
		map[string]any{"id": id})
	mc := got["measurementConfig"].(map[string]any)
	if apitest.Int(t, mc["deliveredClientCount"]) != 1 || !strings.Contains(fmt.Sprint(mc["warnings"]), `study "a" is defined by no public config`) {
		t.Errorf("schedule config read by the viewer = %v", mc)
	}
	for _, c := range apitest.List(t, got["clients"]) {
		cm := c.(map[string]any)
		if apitest.Int(t, cm["id"]) == client && apitest.Int(t, cm["deliveredAutomatorConfig"].(map[string]any)["id"]) != id {
			t.Errorf("client's delivered schedule config = %v", cm)
		}
	}
	// Through GraphQL a public config id under the automator kind is NOT_FOUND.
	pub := o.NewConfig(t, store.ConfigPublic, "", false)
	if _, ge := e.GraphQLFail(t, viewer, `query($id: Int!) { measurementConfig(kind: automator, id: $id) { id } }`,
		map[string]any{"id": pub}); ge.Extensions["code"] != "NOT_FOUND" {
		t.Errorf("wrong kind: %v", ge)
	}
	// A validation failure names the GraphQL field path.
	_, ge := e.GraphQLFail(t, editor, `mutation { measurementConfigCreate(kind: public, input: {name: "x", data: {version: 1, studies: [{id: "a", type: "AUDIO", subject: "s"}]}}) { id } }`, nil)
	if errs, _ := ge.Extensions["errors"].(map[string]any); errs["data.studies.0.type"] == nil {
		t.Errorf("validation error = %v", ge)
	}
}

// TestConfigConcurrentWrites: drafts of two configs naming the same
// studies in opposite orders, publishes and overlapping assignments, all at
// once: every answer is a success or a 409 (publish without a draft), never
// a 500, and each config ends with at most one draft and one published
// version.
func TestConfigConcurrentWrites(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "cfgrace")
	a := o.NewConfig(t, store.ConfigPublic, "A", false)
	b := o.NewConfig(t, store.ConfigPublic, "B", false)
	var clients []int64
	for range 5 {
		clients = append(clients, o.NewClient(t, store.NewClient{}).ID)
	}
	reversed := []int64{clients[4], clients[3], clients[2], clients[1], clients[0]}
	studies := []map[string]any{cfgStudy("s1", "WEB", "website"), cfgStudy("s2", "VIDEO", "youtube"), cfgStudy("s3", "NETWORK", "dns")}
	type call struct {
		method, path string
		body         any
	}
	var calls []call
	for round := range 6 {
		for i, id := range []int64{a, b} {
			list := []map[string]any{studies[0], studies[1], studies[2]}
			if i == 1 {
				list = []map[string]any{studies[2], studies[1], studies[0]}
			}
			changed := cfgStudy("s2", "VIDEO", "youtube")
			changed["params"] = map[string]any{"round": round}
			list[1] = changed
			p := fmt.Sprintf("/public_configs/%d", id)
			ids := clients
			if i == 1 {
				ids = reversed
			}
			calls = append(calls, call{http.MethodPut, p, map[string]any{"data": cfgDoc(list...)}},
				call{http.MethodPost, p + "/publish", nil},
				call{http.MethodPost, p + "/assign", map[string]any{"client_ids": ids}})
		}
	}
	results := make(chan string, len(calls))
	for _, c := range calls {
		go func() {
			r := e.Admin(t, c.method, c.path, o.Key, c.body)
			if r.Status != http.StatusOK && r.Status != http.StatusConflict {
				results <- fmt.Sprintf("%s %s: %d %s", c.method, c.path, r.Status, r.Raw)
				return
			}
			results <- ""
		}()
	}
	for range calls {
		if msg := <-results; msg != "" {
			t.Error(msg)
		}
	}
	for _, id := range []int64{a, b} {
		c := cfgObj(t, e.Admin(t, http.MethodGet, fmt.Sprintf("/public_configs/%d", id), o.Key, nil), 200, "public_config")
		drafts, published := 0, 0
		for _, v := range apitest.List(t, c["revisions"]) {
			if v.(map[string]any)["published"] == true {
				published++
			} else if apitest.Int(t, v.(map[string]any)["id"]) == cfgRevision(t, c["draft_version_id"]) {
				drafts++
			}
		}
		if published != 1 || drafts > 1 {
			t.Errorf("config %d: %d published, %d drafts", id, published, drafts)
		}
	}
}
