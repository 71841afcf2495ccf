package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// The shapes of the spec's "Public config" resource (schedule configs, our
// own, have the same).
var (
	specConfigSummaryShape = specShape{"id": "int", "name": "str", "description": "str?", "import_source": "str?",
		"is_default": "bool", "created_at": "time", "updated_at": "time", "draft_version_id": "int?",
		"published_version_id": "int?", "draft_revision": "int?", "published_revision": "int?"}
	specConfigShape = specConfigSummaryShape.with(specShape{"draft_version": "obj?", "published_version": "obj?",
		"revisions": "list", "delivered_client_count": "int", "delivered_clients": "list", "schedule_configs": "list",
		"warnings": "strs"})
	specConfigRevisionShape = specShape{"id": "int", "revision": "int", "data_hash": "str", "created_at": "time",
		"updated_at": "time", "created_by_id": "int?", "created_by_name": "str?", "published_at": "time?",
		"published_by_id": "int?", "published_by_name": "str?", "published": "bool", "study_count": "int"}
	specConfigVersionShape = specConfigRevisionShape.with(specShape{"data": "obj", "studies": "list"})
	specConfigStudyShape   = specShape{"id": "int", "position": "int", "study_description_version_id": "int",
		"study_description_id": "int", "revision": "int", "latest_revision": "int?", "latest_version_id": "int?",
		"name": "str", "study_id": "str", "study_type": "str", "subject": "str", "internal_id": "str?"}
	specConfigClientShape   = specShape{"id": "int", "uuid": "str", "label": "str?", "last_seen_at": "time?"}
	specScheduleConfigShape = specShape{"id": "int", "name": "str", "is_default": "bool", "draft_revision": "int?",
		"published_revision": "int?", "study_ids": "strs"}
	specImportShape      = specShape{"study_descriptions": "list", "service_credentials": "list", "warnings": "strs"}
	specImportStudyShape = specShape{"study_id": "str", "action": "str", "study_description_id": "int", "name": "str",
		"study_description_version_id": "int", "revision": "int", "from_revision": "int?"}
	specImportServiceShape = specShape{"service": "str", "action": "str", "service_credential_id": "int?", "reason": "str?"}
)

// specCheckConfig checks a config and every nested object of it.
func specCheckConfig(t testing.TB, where string, v any) map[string]any {
	t.Helper()
	c := specCheck(t, where, v, specConfigShape)
	for _, k := range []string{"draft_version", "published_version"} {
		if c[k] == nil {
			continue
		}
		ver := specCheck(t, where+"."+k, c[k], specConfigVersionShape)
		for i, s := range apitest.List(t, ver["studies"]) {
			specCheck(t, fmt.Sprintf("%s.%s.studies[%d]", where, k, i), s, specConfigStudyShape)
		}
	}
	for name, shape := range map[string]specShape{"revisions": specConfigRevisionShape,
		"delivered_clients": specConfigClientShape, "schedule_configs": specScheduleConfigShape} {
		for i, item := range apitest.List(t, c[name]) {
			specCheck(t, fmt.Sprintf("%s.%s[%d]", where, name, i), item, shape)
		}
	}
	return c
}

func init() {
	for base, kind := range map[string]string{"/public_configs": store.ConfigPublic, "/schedule_configs": store.ConfigAutomator} {
		for pattern, route := range specConfigRoutes(base, kind) {
			specRoutes[pattern] = route
		}
	}
}

// specConfigRoutes are the spec entries of the config routes under base.
func specConfigRoutes(base, kind string) map[string]specRoute {
	one, many := strings.TrimSuffix(strings.TrimPrefix(base, "/"), "s"), strings.TrimPrefix(base, "/")
	doc := func() map[string]any {
		if kind == store.ConfigAutomator {
			return map[string]any{"version": 1, "studySchedules": []any{map[string]any{"studyIds": []string{"spec-yt"}, "cron": "@daily"}}}
		}
		return cfgDoc(cfgStudy("spec-yt", "VIDEO", "youtube"))
	}
	// full makes a config with a published version, a draft, and the probe
	// assigned, so that every nested list has items.
	full := func(t *testing.T, w *specWorld) string {
		id := w.o.NewConfigWith(t, apitest.ConfigOpts{Kind: kind, Published: doc(), Draft: doc()})
		if kind == store.ConfigPublic {
			w.o.NewConfigWith(t, apitest.ConfigOpts{Kind: store.ConfigAutomator, Published: map[string]any{"version": 1,
				"studySchedules": []any{map[string]any{"studyIds": []string{"spec-yt"}, "cron": "0 * * * *"}}}})
		}
		cfgObj(t, w.admin(t, http.MethodPost, fmt.Sprintf("%s/%d/assign", base, id), map[string]any{"client_ids": []int64{w.bare.ID}}),
			http.StatusOK, one)
		return fmt.Sprintf("%s/%d", base, id)
	}
	checkOne := func(check func(t *testing.T, c map[string]any)) func(t *testing.T, w *specWorld, r *apitest.Response) {
		return func(t *testing.T, w *specWorld, r *apitest.Response) {
			c := specCheckConfig(t, one, apitest.WantEnvelope(t, r, r.Status, one))
			if check != nil {
				check(t, c)
			}
		}
	}
	wantRevisions := func(draft, published any) func(t *testing.T, c map[string]any) {
		return func(t *testing.T, c map[string]any) {
			specWant(t, one, c, "draft_revision", draft)
			specWant(t, one, c, "published_revision", published)
		}
	}
	return map[string]specRoute{
		"GET " + base: {many + " list answers {" + many + ": [summary]}", 200,
			func(t *testing.T, w *specWorld) (string, any) { full(t, w); return base, nil },
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				list := apitest.List(t, apitest.WantEnvelope(t, r, 200, many))
				if len(list) == 0 {
					t.Fatalf("empty list")
				}
				for i, item := range list {
					specCheck(t, fmt.Sprintf("%s[%d]", many, i), item, specConfigSummaryShape)
				}
			}},
		"POST " + base: {many + " create answers 201 {" + one + "} with versions", 201,
			func(t *testing.T, w *specWorld) (string, any) {
				return base, map[string]any{"name": apitest.Unique("spec cfg"), "data": doc()}
			},
			checkOne(wantRevisions(1, nil))},
		"POST " + base + "/import": {many + " import answers {" + one + ", import}", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				d := doc()
				d["credentials"] = map[string]any{"ookla": map[string]any{}}
				return base + "/import", map[string]any{"name": apitest.Unique("spec import"), "data": d}
			},
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				body := apitest.WantStatus(t, r, 200).(map[string]any)
				if len(body) != 2 {
					t.Errorf("import answer has keys %v, want %s and import", body, one)
				}
				specCheckConfig(t, one, body[one])
				imp := specCheck(t, "import", body["import"], specImportShape)
				for i, s := range apitest.List(t, imp["study_descriptions"]) {
					specCheck(t, fmt.Sprintf("import.study_descriptions[%d]", i), s, specImportStudyShape)
				}
				for i, s := range apitest.List(t, imp["service_credentials"]) {
					specCheck(t, fmt.Sprintf("import.service_credentials[%d]", i), s, specImportServiceShape)
				}
			}},
		"GET " + base + "/{id}": {many + " get answers {" + one + "} with every nested list filled", 200,
			func(t *testing.T, w *specWorld) (string, any) { return full(t, w), nil },
			checkOne(func(t *testing.T, c map[string]any) {
				lists := []string{"revisions", "delivered_clients"}
				if kind == store.ConfigPublic {
					lists = append(lists, "schedule_configs")
				}
				for _, k := range lists {
					if len(apitest.List(t, c[k])) == 0 {
						t.Errorf("%s is empty: the check saw no item", k)
					}
				}
				specWant(t, one, c, "delivered_client_count", 1)
			})},
		"PUT " + base + "/{id}": {many + " update saves the draft", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				return full(t, w), map[string]any{"description": "spec", "data": doc()}
			},
			checkOne(wantRevisions(2, 1))},
		"DELETE " + base + "/{id}": {many + " delete answers {}", 200,
			func(t *testing.T, w *specWorld) (string, any) { return full(t, w), nil }, nil},
		"POST " + base + "/{id}/publish": {many + " publish makes the draft the published version", 200,
			func(t *testing.T, w *specWorld) (string, any) { return full(t, w) + "/publish", nil },
			checkOne(wantRevisions(nil, 2))},
		"DELETE " + base + "/{id}/draft": {many + " discard drops the draft", 200,
			func(t *testing.T, w *specWorld) (string, any) { return full(t, w) + "/draft", nil },
			checkOne(wantRevisions(nil, 1))},
		"PUT " + base + "/{id}/default": {many + " set default", 200,
			func(t *testing.T, w *specWorld) (string, any) { return full(t, w) + "/default", nil },
			checkOne(func(t *testing.T, c map[string]any) { specWant(t, one, c, "is_default", true) })},
		"DELETE " + base + "/{id}/default": {many + " unset default", 200,
			func(t *testing.T, w *specWorld) (string, any) { return full(t, w) + "/default", nil },
			checkOne(func(t *testing.T, c map[string]any) { specWant(t, one, c, "is_default", false) })},
		"POST " + base + "/{id}/assign": {many + " assign to a client group", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				return full(t, w) + "/assign", map[string]any{"client_group_ids": []int64{w.group}}
			},
			checkOne(nil)},
		"POST " + base + "/{id}/unassign": {many + " unassign from a client", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				return full(t, w) + "/unassign", map[string]any{"client_ids": []int64{w.bare.ID}}
			},
			checkOne(func(t *testing.T, c map[string]any) { specWant(t, one, c, "delivered_client_count", 0) })},
	}
}
