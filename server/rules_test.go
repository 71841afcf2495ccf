package server_test

import (
	"net/http"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
)

// Anomaly rules: an extension of the admin API (docs/admin-api.md
// "Anomaly rules").

var ruleKeys = []string{"id", "name", "measurement_type", "metric", "subject", "direction", "unit", "passes", "enabled", "builtin"}

func ruleShape(t *testing.T, what string, v any) map[string]any {
	t.Helper()
	r := apitest.Object(t, v)
	for _, k := range ruleKeys {
		if _, ok := r[k]; !ok {
			t.Errorf("%s has no %q: %v", what, k, r)
		}
	}
	if len(r) != len(ruleKeys) {
		t.Errorf("%s has keys beyond the documented: %v", what, r)
	}
	return r
}

var customRule = map[string]any{"name": "Netflix startup", "measurement_type": "VideoMeasurement",
	"metric": "statistic_values.initial_loading_time", "subject": "netflix", "direction": "up", "unit": "ms",
	"passes": []string{"spike", "shift"}}

// newRule creates a rule with key and answers its path.
func newRule(t *testing.T, e *apitest.Env, key string) string {
	t.Helper()
	r := apitest.WantEnvelope(t, e.Admin(t, http.MethodPost, "/anomaly_rules", key, customRule), http.StatusCreated, "anomaly_rule")
	return "/anomaly_rules/" + apitest.Object(t, r)["id"].(string)
}

func TestAnomalyRules(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "rules")
	other := e.NewOwner(t, "rules-other")
	viewer, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
	editor, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleEditor})

	t.Run("the list holds the catalogue, built-in and enabled", func(t *testing.T) {
		list := apitest.List(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/anomaly_rules", viewer, nil), 200, "anomaly_rules"))
		if len(list) < 16 {
			t.Fatalf("%d rules, want the catalogue's", len(list))
		}
		first := ruleShape(t, "anomaly_rules[0]", list[0])
		if first["id"] != "speedtest-download" || first["builtin"] != true || first["enabled"] != true ||
			first["metric"] != "statistic_values.download" || first["direction"] != "down" || first["subject"] != nil {
			t.Errorf("first rule %v", first)
		}
	})

	t.Run("an editor creates, reads, changes and deletes its own rule", func(t *testing.T) {
		path := newRule(t, e, editor)
		got := ruleShape(t, "rule", apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, path, viewer, nil), 200, "anomaly_rule"))
		if got["subject"] != "netflix" || got["builtin"] != false || got["enabled"] != true || len(apitest.List(t, got["passes"])) != 2 {
			t.Errorf("created %v", got)
		}
		upd := apitest.WantEnvelope(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"subject": nil, "direction": "both"}),
			200, "anomaly_rule")
		if u := apitest.Object(t, upd); u["subject"] != nil || u["direction"] != "both" || u["name"] != "Netflix startup" {
			t.Errorf("updated %v", u)
		}
		apitest.WantStatus(t, e.Admin(t, http.MethodDelete, path, editor, nil), 200)
		apitest.WantStatus(t, e.Admin(t, http.MethodGet, path, viewer, nil), 404)
		apitest.WantStatus(t, e.Admin(t, http.MethodDelete, path, editor, nil), 404)
	})

	t.Run("a built-in rule can be disabled, not changed or deleted", func(t *testing.T) {
		r := e.Admin(t, http.MethodPut, "/anomaly_rules/video-stalling", editor, map[string]any{"enabled": false})
		if got := apitest.Object(t, apitest.WantEnvelope(t, r, 200, "anomaly_rule")); got["enabled"] != false || got["builtin"] != true {
			t.Errorf("disabled %v", got)
		}
		wantFieldErrors(t, e.Admin(t, http.MethodPut, "/anomaly_rules/video-stalling", editor, map[string]any{"metric": "statistic_values.x"}), "metric")
		apitest.WantMessage(t, e.Admin(t, http.MethodDelete, "/anomaly_rules/video-stalling", editor, nil), http.StatusConflict, "disable it")
		got := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/anomaly_rules/video-stalling", viewer, nil), 200, "anomaly_rule"))
		if got["enabled"] != false || got["metric"] != "statistic_values.total_stalling_time" {
			t.Errorf("after the refusals %v", got)
		}
		theirs := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, "/anomaly_rules/video-stalling", other.Key, nil), 200, "anomaly_rule"))
		if theirs["enabled"] != true {
			t.Errorf("another data owner's catalogue rule was disabled too: %v", theirs)
		}
	})

	t.Run("bad fields are 422s naming them", func(t *testing.T) {
		wantFieldErrors(t, e.Admin(t, http.MethodPost, "/anomaly_rules", editor, map[string]any{"name": " ", "measurement_type": "Video Measurement",
			"metric": "statistic_values..x", "direction": "sideways", "passes": []string{"spike", "spike", "trend"}, "subject": ""}),
			"name", "measurement_type", "metric", "direction", "passes", "subject")
		wantFieldErrors(t, e.Admin(t, http.MethodPost, "/anomaly_rules", editor, map[string]any{"name": "x", "measurement_type": "VideoMeasurement",
			"metric": "statistic_values.x", "direction": "up", "passes": []string{}}), "passes")
		path := newRule(t, e, editor)
		wantFieldErrors(t, e.Admin(t, http.MethodPut, path, editor, map[string]any{"name": nil, "unit": "a very long unit that goes on and on"}), "name", "unit")
	})

	t.Run("another data owner's rule is a 404", func(t *testing.T) {
		path := newRule(t, e, editor)
		apitest.WantStatus(t, e.Admin(t, http.MethodGet, path, other.Key, nil), 404)
		apitest.WantStatus(t, e.Admin(t, http.MethodPut, path, other.Key, map[string]any{"enabled": false}), 404)
		apitest.WantStatus(t, e.Admin(t, http.MethodDelete, path, other.Key, nil), 404)
		if got := apitest.Object(t, apitest.WantEnvelope(t, e.Admin(t, http.MethodGet, path, viewer, nil), 200, "anomaly_rule")); got["enabled"] != true {
			t.Errorf("another data owner changed the rule: %v", got)
		}
		apitest.WantStatus(t, e.Admin(t, http.MethodGet, "/anomaly_rules/no-such-rule", viewer, nil), 404)
	})

	t.Run("GraphQL serves the same rules", func(t *testing.T) {
		g := e.GraphQL(t, viewer, `{ anomalyRule(id: "speedtest-download") { id metric builtin passes } }`, nil)
		if len(g.Errors) > 0 || apitest.Object(t, g.Data["anomalyRule"])["metric"] != "statistic_values.download" {
			t.Errorf("graphql: %s", g.Raw)
		}
	})
}

// The rule routes in the spec walk and the role matrix.
func init() {
	specRoutes["GET /anomaly_rules"] = specRoute{"rules answer {anomaly_rules: [rule]}", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/anomaly_rules", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			for _, v := range apitest.List(t, apitest.WantEnvelope(t, r, 200, "anomaly_rules")) {
				ruleShape(t, "rule", v)
			}
		}}
	specRoutes["POST /anomaly_rules"] = specRoute{"rule create answers 201 {anomaly_rule}", 201,
		func(t *testing.T, w *specWorld) (string, any) { return "/anomaly_rules", customRule },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			ruleShape(t, "anomaly_rule", apitest.WantEnvelope(t, r, 201, "anomaly_rule"))
		}}
	specRoutes["GET /anomaly_rules/{id}"] = specRoute{"rule answers {anomaly_rule}", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/anomaly_rules/speedtest-download", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			ruleShape(t, "anomaly_rule", apitest.WantEnvelope(t, r, 200, "anomaly_rule"))
		}}
	specRoutes["PUT /anomaly_rules/{id}"] = specRoute{"rule update answers {anomaly_rule}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return newRule(t, w.e, w.o.Key), map[string]any{"name": "renamed"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if ruleShape(t, "anomaly_rule", apitest.WantEnvelope(t, r, 200, "anomaly_rule"))["name"] != "renamed" {
				t.Errorf("update answered %s", r.Raw)
			}
		}}
	specRoutes["DELETE /anomaly_rules/{id}"] = specRoute{"rule delete answers {}", 200,
		func(t *testing.T, w *specWorld) (string, any) { return newRule(t, w.e, w.o.Key), nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if string(r.Raw) != "{}" {
				t.Errorf("delete answered %s", r.Raw)
			}
		}}

	cell := func(action string, min model.Role, call func(t *testing.T, f *rolesFixture) rolesCall) rolesCell {
		return rolesCell{action, min, call}
	}
	rolesMatrix["GET /anomaly_rules"] = cell("list anomaly rules", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_rules"}
	})
	rolesMatrix["POST /anomaly_rules"] = cell("create an anomaly rule", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_rules", body: customRule}
	})
	rolesMatrix["GET /anomaly_rules/{id}"] = cell("read an anomaly rule", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_rules/gaming-fps"}
	})
	rolesMatrix["PUT /anomaly_rules/{id}"] = cell("change an anomaly rule", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := newRule(t, f.e, f.o.Key)
		return rolesCall{path: p, body: map[string]any{"enabled": false}, intact: p}
	})
	rolesMatrix["DELETE /anomaly_rules/{id}"] = cell("delete an anomaly rule", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		p := newRule(t, f.e, f.o.Key)
		return rolesCall{path: p, intact: p}
	})
}
