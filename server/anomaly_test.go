package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
)

// anomWorld is a data owner with anomaly events (two new, one resolved)
// and measurements, and a second data owner with an event of its own.
type anomWorld struct {
	*srchWorld
	newA, newB, resolved, foreign string
}

func anomEvent(id, client, status string) map[string]any {
	return map[string]any{"id": id, "client_uuid": client, "measurement_type": "VideoMeasurement", "subject": "youtube",
		"metric": "bitrate", "detection_pass": "spike", "severity": "warning", "status": status,
		"first_seen_at": srchBase.Format(time.RFC3339), "last_seen_at": srchBase.Add(time.Hour).Format(time.RFC3339),
		"created_at": srchBase.Format(time.RFC3339)}
}

func newAnomWorld(t *testing.T, prefix string) *anomWorld {
	t.Helper()
	w := &anomWorld{srchWorld: newSrchWorld(t, prefix), newA: "rule-1::spike::1740787200",
		newB: "rule-2::shift::1740787300", resolved: "rule-3::data_quality::1740787400", foreign: "rule-9::spike::1740787200"}
	w.o.InsertDocuments(t, "anomaly_event", anomEvent(w.newA, w.client, "new"), anomEvent(w.newB, w.client, "new"),
		anomEvent(w.resolved, w.client, "resolved"))
	w.other.InsertDocuments(t, "anomaly_event", anomEvent(w.foreign, w.otherClient, "new"))
	return w
}

// status reads an event's status through GET /anomaly_events/{id}.
func (w *anomWorld) status(t *testing.T, key, id string) string {
	t.Helper()
	r := w.e.Admin(t, http.MethodGet, "/anomaly_events/"+url.PathEscape(id), key, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET anomaly event %s: %d %s", id, r.Status, r.Raw)
	}
	ev, _ := r.Obj(t)["anomaly_event"].(map[string]any)
	if ev["id"] != id {
		t.Fatalf("anomaly_event = %s", r.Raw)
	}
	return fmt.Sprint(ev["status"])
}

func anomResolve(t *testing.T, e *apitest.Env, key string, body any) *apitest.Response {
	t.Helper()
	return e.Admin(t, http.MethodPatch, "/anomaly_events/resolve", key, body)
}

func TestAnomalyEventsResolve(t *testing.T) {
	w := newAnomWorld(t, "anom-res")
	r := anomResolve(t, w.e, w.editor, map[string]any{"anomaly_ids": []string{w.newA, w.resolved, w.foreign, "unknown::spike::1"}})
	if r.Status != http.StatusOK || fmt.Sprint(r.Obj(t)["updated"]) != "1" || fmt.Sprint(r.Obj(t)["requested"]) != "4" {
		t.Fatalf("resolve: %d %s", r.Status, r.Raw)
	}
	if s := w.status(t, w.o.Key, w.newA); s != "resolved" {
		t.Errorf("resolved event has status %q", s)
	}
	if s := w.status(t, w.o.Key, w.newB); s != "new" {
		t.Errorf("event not named changed to %q", s)
	}
	if s := w.status(t, w.other.Key, w.foreign); s != "new" {
		t.Errorf("another owner's event changed to %q", s)
	}
	r = anomResolve(t, w.e, w.editor, map[string]any{"anomaly_ids": []string{w.newA}})
	if r.Status != http.StatusOK || fmt.Sprint(r.Obj(t)["updated"]) != "0" || fmt.Sprint(r.Obj(t)["requested"]) != "1" {
		t.Errorf("resolving again: %d %s", r.Status, r.Raw)
	}
	many := make([]string, 500)
	for i := range many {
		many[i] = fmt.Sprintf("x::spike::%d", i)
	}
	many[499] = w.newB
	if r := anomResolve(t, w.e, w.o.Key, map[string]any{"anomaly_ids": many}); r.Status != http.StatusOK ||
		fmt.Sprint(r.Obj(t)["updated"]) != "1" || fmt.Sprint(r.Obj(t)["requested"]) != "500" {
		t.Errorf("500 ids: %d %s", r.Status, r.Raw)
	}

	t.Run("graphql", func(t *testing.T) {
		g := w.e.GraphQL(t, w.editor, `mutation { anomalyEventsResolve(anomalyIds: ["nope"]) { updated requested } }`, nil)
		if len(g.Errors) > 0 || fmt.Sprint(g.Data["anomalyEventsResolve"]) != "map[requested:1 updated:0]" {
			t.Errorf("anomalyEventsResolve: %s", g.Raw)
		}
	})
	t.Run("viewer cannot resolve", func(t *testing.T) {
		if r := anomResolve(t, w.e, w.viewer, map[string]any{"anomaly_ids": []string{w.newB}}); r.Status != http.StatusForbidden {
			t.Errorf("viewer resolve: %d %s", r.Status, r.Raw)
		}
	})
}

func TestAnomalyEventsResolveRejectsBadIDs(t *testing.T) {
	w := newAnomWorld(t, "anom-bad")
	cases := map[string]any{
		"missing":        map[string]any{},
		"empty list":     map[string]any{"anomaly_ids": []string{}},
		"501 ids":        map[string]any{"anomaly_ids": make([]string, 501)},
		"empty string":   map[string]any{"anomaly_ids": []string{w.newA, ""}},
		"not a list":     map[string]any{"anomaly_ids": w.newA},
		"not strings":    map[string]any{"anomaly_ids": []any{1, 2}},
		"null":           map[string]any{"anomaly_ids": nil},
		"unknown fields": map[string]any{"anomaly_ids": []string{w.newA}, "ids": []string{w.newA}},
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			r := anomResolve(t, w.e, w.editor, body)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.Status, r.Raw)
			}
			errs, _ := r.Obj(t)["errors"].(map[string]any)
			if name == "unknown fields" {
				if _, ok := errs["ids"]; !ok {
					t.Errorf("errors do not name ids: %s", r.Raw)
				}
				return
			}
			named := false
			for k := range errs {
				named = named || strings.HasPrefix(k, "anomaly_ids")
			}
			if !named {
				t.Errorf("errors do not name anomaly_ids: %s", r.Raw)
			}
		})
	}
	if s := w.status(t, w.o.Key, w.newA); s != "new" {
		t.Errorf("a refused request changed an event to %q", s)
	}
}

func TestAnomalyEventReadAndSearch(t *testing.T) {
	w := newAnomWorld(t, "anom-read")
	if s := w.status(t, w.viewer, w.resolved); s != "resolved" {
		t.Errorf("status %q", s)
	}
	for _, id := range []string{w.foreign, "unknown::spike::1"} {
		if r := w.e.Admin(t, http.MethodGet, "/anomaly_events/"+url.PathEscape(id), w.o.Key, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", id, r.Status)
		}
	}
	g := w.e.GraphQL(t, w.viewer, `query($id: ID!) { anomalyEvent(id: $id) { id document client { uuid } } }`, map[string]any{"id": w.newA})
	ev, _ := g.Data["anomalyEvent"].(map[string]any)
	if len(g.Errors) > 0 || ev["id"] != w.newA || ev["client"].(map[string]any)["uuid"] != w.client {
		t.Errorf("anomalyEvent: %s", g.Raw)
	}

	body := map[string]any{"query": map[string]any{"match_all": map[string]any{}}}
	r := w.post(t, "/anomaly_events/search", w.viewer, map[string]any{"body": body})
	ids := srchHitIDs(t, r)
	sort.Strings(ids)
	want := []string{w.newA, w.newB, w.resolved}
	sort.Strings(want)
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("anomaly search hits %v, want %v", ids, want)
	}
	r = w.post(t, "/anomaly_events/search", w.o.Key, map[string]any{"body": `{"query":{"term":{"status":"resolved"}}}`, "source_only": true})
	if list, ok := r.JSON.([]any); r.Status != http.StatusOK || !ok || len(list) != 1 {
		t.Errorf("source_only term search: %d %s", r.Status, r.Raw)
	}
	apitest.Want400(t, w.post(t, "/anomaly_events/search", w.o.Key, map[string]any{"body": body, "index_scope": "video"}), "index_scope")
	apitest.Want400(t, w.post(t, "/anomaly_events/search", w.o.Key, map[string]any{"body": body, "scroll": "1m"}), "scroll")
	apitest.Want400(t, w.post(t, "/anomaly_events/search", w.o.Key, map[string]any{"body": body, "size": 10001}), "size")
}

// anomOverride posts an override and answers the record.
func anomOverride(t *testing.T, e *apitest.Env, key string, scope map[string]any, level string) map[string]any {
	t.Helper()
	r := e.Admin(t, http.MethodPost, "/anomaly_detection_overrides", key, map[string]any{"scope": scope, "level": level})
	if r.Status != http.StatusCreated {
		t.Fatalf("create override: %d %s", r.Status, r.Raw)
	}
	return r.Obj(t)["anomaly_detection_override"].(map[string]any)
}

func anomScope(subject string) map[string]any {
	return map[string]any{"subject": subject, "measurement_type": "VideoMeasurement", "metric": "bitrate", "detection_pass": "spike"}
}

func TestAnomalyDetectionOverrides(t *testing.T) {
	w := newAnomWorld(t, "anom-ovr")
	o := anomOverride(t, w.e, w.editor, anomScope("youtube"), "low")
	wantKeys := []string{"created_at", "id", "level", "origin", "scope", "scope_key", "source_anomaly_id", "updated_at",
		"updated_by_id", "updated_by_name"}
	var keys []string
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("override keys %v, want %v", keys, wantKeys)
	}
	if o["scope_key"] != "youtube|VideoMeasurement|bitrate|spike" || o["level"] != "low" || o["origin"] != "manual" ||
		!reflect.DeepEqual(o["scope"], anomScope("youtube")) || o["updated_by_name"] == nil {
		t.Errorf("override = %v", o)
	}
	id := fmt.Sprint(o["id"])

	again := anomOverride(t, w.e, w.editor, anomScope("youtube"), "high")
	if fmt.Sprint(again["id"]) != id || again["level"] != "high" {
		t.Errorf("setting the scope again: %v", again)
	}
	r := w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides/"+id, w.viewer, nil)
	if r.Status != http.StatusOK || r.Obj(t)["anomaly_detection_override"].(map[string]any)["level"] != "high" {
		t.Errorf("GET override: %d %s", r.Status, r.Raw)
	}
	anomOverride(t, w.e, w.o.Key, anomScope("netflix"), "off")
	r = w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides", w.viewer, nil)
	if list, _ := r.Obj(t)["anomaly_detection_overrides"].([]any); r.Status != http.StatusOK || len(list) != 2 {
		t.Errorf("list: %d %s", r.Status, r.Raw)
	}

	t.Run("other owner neither sees nor deletes them", func(t *testing.T) {
		if r := w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides/"+id, w.other.Key, nil); r.Status != http.StatusNotFound {
			t.Errorf("other owner GET: %d", r.Status)
		}
		r := w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides", w.other.Key, nil)
		if list, _ := r.Obj(t)["anomaly_detection_overrides"].([]any); len(list) != 0 {
			t.Errorf("other owner lists %s", r.Raw)
		}
		r = w.e.Admin(t, http.MethodDelete, "/anomaly_detection_overrides?id="+id, w.other.Key, nil)
		if r.Status != http.StatusOK || fmt.Sprint(r.Obj(t)["deleted"]) != "0" {
			t.Errorf("other owner DELETE: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("invalid overrides are 422", func(t *testing.T) {
		bad := map[string]map[string]any{
			"scope.detection_pass": {"scope": map[string]any{"subject": "a", "measurement_type": "b", "metric": "c", "detection_pass": "trend"}, "level": "low"},
			"level":                {"scope": anomScope("youtube"), "level": "default"},
			"scope.subject":        {"scope": map[string]any{"subject": " ", "measurement_type": "b", "metric": "c", "detection_pass": "spike"}, "level": "low"},
			"scope":                {"level": "low"},
		}
		for field, body := range bad {
			r := w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides", w.editor, body)
			errs, _ := r.Obj(t)["errors"].(map[string]any)
			if _, named := errs[field]; r.Status != http.StatusUnprocessableEntity || !named {
				t.Errorf("%s: %d %s", field, r.Status, r.Raw)
			}
		}
	})
	t.Run("viewer cannot change overrides", func(t *testing.T) {
		r := w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides", w.viewer, map[string]any{"scope": anomScope("x"), "level": "low"})
		if r.Status != http.StatusForbidden {
			t.Errorf("viewer create: %d", r.Status)
		}
		if r := w.e.Admin(t, http.MethodDelete, "/anomaly_detection_overrides?id="+id, w.viewer, nil); r.Status != http.StatusForbidden {
			t.Errorf("viewer delete: %d", r.Status)
		}
		r = w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides/feedback", w.viewer,
			map[string]any{"scope": anomScope("x"), "direction": "up"})
		if r.Status != http.StatusForbidden {
			t.Errorf("viewer feedback: %d", r.Status)
		}
	})
	t.Run("delete by id and by scope", func(t *testing.T) {
		del := func(query string) *apitest.Response {
			return w.e.Admin(t, http.MethodDelete, "/anomaly_detection_overrides?"+query, w.editor, nil)
		}
		for _, q := range []string{"", "subject=youtube", "id=abc", "id=" + id + "&subject=a&measurement_type=b&metric=c&detection_pass=spike"} {
			if r := del(q); r.Status != http.StatusBadRequest {
				t.Errorf("DELETE ?%s: %d %s, want 400", q, r.Status, r.Raw)
			}
		}
		if r := del("id=" + id); r.Status != http.StatusOK || fmt.Sprint(r.Obj(t)["deleted"]) != "1" {
			t.Errorf("DELETE by id: %d %s", r.Status, r.Raw)
		}
		if r := del("id=" + id); fmt.Sprint(r.Obj(t)["deleted"]) != "0" {
			t.Errorf("DELETE again: %s", r.Raw)
		}
		if r := del("subject=netflix&measurement_type=VideoMeasurement&metric=bitrate&detection_pass=spike"); r.Status != http.StatusOK ||
			fmt.Sprint(r.Obj(t)["deleted"]) != "1" {
			t.Errorf("DELETE by scope: %d %s", r.Status, r.Raw)
		}
		if r := w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides/"+id, w.o.Key, nil); r.Status != http.StatusNotFound {
			t.Errorf("deleted override still answers %d", r.Status)
		}
	})
}

func TestAnomalyDetectionOverrideFeedbackWalk(t *testing.T) {
	w := newAnomWorld(t, "anom-fb")
	scope := anomScope("youtube")
	steps := []struct {
		direction, level string // level "" means deleted (default)
		deleted          bool
	}{
		{"down", "low", false},
		{"down", "off", false},
		{"down", "off", false}, // the quietest level stays
		{"up", "low", false},
		{"up", "", true}, // default: the override goes
		{"up", "high", false},
		{"up", "high", false}, // the loudest level stays
		{"down", "", true},
	}
	for i, s := range steps {
		r := w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides/feedback", w.editor,
			map[string]any{"scope": scope, "direction": s.direction, "source_anomaly_id": w.newA})
		if r.Status != http.StatusOK {
			t.Fatalf("step %d: %d %s", i, r.Status, r.Raw)
		}
		body := r.Obj(t)
		if body["deleted"] != s.deleted {
			t.Errorf("step %d (%s): deleted = %v, want %v", i, s.direction, body["deleted"], s.deleted)
		}
		o, _ := body["anomaly_detection_override"].(map[string]any)
		switch {
		case s.level == "" && o != nil:
			t.Errorf("step %d: override %v, want null", i, o)
		case s.level != "" && (o == nil || o["level"] != s.level || o["origin"] != "feedback" || o["source_anomaly_id"] != w.newA):
			t.Errorf("step %d (%s): override %v, want level %s from feedback", i, s.direction, o, s.level)
		}
	}
	bad := w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides/feedback", w.editor,
		map[string]any{"scope": scope, "direction": "sideways"})
	if errs, _ := bad.Obj(t)["errors"].(map[string]any); bad.Status != http.StatusUnprocessableEntity || errs["direction"] == nil {
		t.Errorf("bad direction: %d %s", bad.Status, bad.Raw)
	}
	g := w.e.GraphQL(t, w.editor, `mutation { anomalyDetectionOverrideFeedback(input: {scope: {subject: "s", measurementType: "VideoMeasurement",
		metric: "bitrate", detectionPass: "shift"}, direction: up}) { anomalyDetectionOverride { level scopeKey } deleted } }`, nil)
	if len(g.Errors) > 0 || fmt.Sprint(g.Data["anomalyDetectionOverrideFeedback"]) != "map[anomalyDetectionOverride:map[level:high scopeKey:s|VideoMeasurement|bitrate|shift] deleted:false]" {
		t.Errorf("graphql feedback: %s", g.Raw)
	}
}

// The dimensions are what the data owner's enabled rules watch in its
// stored data: the types with data and a rule, the rules' metrics, the
// stored subjects they apply to.
func TestAnomalyDetectionDimensions(t *testing.T) {
	w := newAnomWorld(t, "anom-dim")
	for _, rule := range []map[string]any{
		{"name": "stalls", "measurement_type": "VideoMeasurement", "metric": "statistic_values.stalls", "direction": "up"},
		{"name": "ttfb", "measurement_type": "WebMeasurement", "metric": "statistic_values.ttfb", "direction": "up", "subject": "website"},
		{"name": "off", "measurement_type": "NetworkMeasurement", "metric": "statistic_values.lookup_ms", "direction": "up", "enabled": false},
		{"name": "no data", "measurement_type": "GamingMeasurement", "metric": "statistic_values.fps", "direction": "down"},
	} {
		apitest.WantStatus(t, w.e.Admin(t, http.MethodPost, "/anomaly_rules", w.editor, rule), http.StatusCreated)
	}
	r := w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides/dimensions", w.viewer, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("dimensions: %d %s", r.Status, r.Raw)
	}
	d := r.Obj(t)["dimensions"].(map[string]any)
	if fmt.Sprint(d["detection_passes"]) != "[spike shift data_quality]" || fmt.Sprint(d["levels"]) != "[off low default high]" {
		t.Errorf("passes and levels: %v", d)
	}
	got := map[string]string{}
	for _, m := range d["measurement_types"].([]any) {
		mt := m.(map[string]any)
		got[mt["measurement_type"].(string)] = fmt.Sprint(mt["metrics"]) + " " + fmt.Sprint(mt["subjects"])
	}
	want := map[string]string{
		"VideoMeasurement": "[stalls] [netflix youtube]",
		"WebMeasurement":   "[ttfb] [website]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("measurement types %v, want %v", got, want)
	}
	if strings.Contains(string(r.Raw), "secret") {
		t.Errorf("dimensions show another owner's data: %s", r.Raw)
	}
	fresh := w.e.NewOwner(t, "anom-dim-empty")
	r = w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides/dimensions", fresh.Key, nil)
	if list, _ := r.Obj(t)["dimensions"].(map[string]any)["measurement_types"].([]any); r.Status != http.StatusOK || len(list) != 0 {
		t.Errorf("empty owner: %d %s", r.Status, r.Raw)
	}
}

// The anomaly routes in the spec walk and the role matrix.
func init() {
	event := func(t *testing.T, e *apitest.Env, o *apitest.Owner) string {
		id := apitest.Unique("rule") + "::spike::1740787200"
		o.InsertDocuments(t, "anomaly_event", anomEvent(id, uuid.NewString(), "new"))
		return id
	}
	override := func(t *testing.T, e *apitest.Env, key string) string {
		return fmt.Sprint(anomOverride(t, e, key, anomScope(apitest.Unique("subject")), "low")["id"])
	}
	overrideShape := func(t *testing.T, r *apitest.Response, key string) {
		if o, _ := r.Obj(t)[key].(map[string]any); o == nil || o["scope_key"] == nil || o["level"] == nil {
			t.Errorf("want {%s: override}: %s", key, r.Raw)
		}
	}
	specRoutes["POST /anomaly_events/search"] = specRoute{"anomaly event search answers the search envelope", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			event(t, w.e, w.o)
			return "/anomaly_events/search", map[string]any{"body": srchAll}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if ids := srchHitIDs(t, r); len(ids) == 0 {
				t.Errorf("no hits: %s", r.Raw)
			}
		}}
	specRoutes["PATCH /anomaly_events/resolve"] = specRoute{"resolve answers {updated, requested}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/anomaly_events/resolve", map[string]any{"anomaly_ids": []string{event(t, w.e, w.o), "unknown"}}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if fmt.Sprint(r.Obj(t)) != "map[requested:2 updated:1]" {
				t.Errorf("resolve answered %s", r.Raw)
			}
		}}
	specRoutes["GET /anomaly_events/{anomalyId}"] = specRoute{"anomaly event answers {anomaly_event: document}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			w.passed = event(t, w.e, w.o)
			return "/anomaly_events/" + url.PathEscape(w.passed), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if ev, _ := apitest.WantEnvelope(t, r, 200, "anomaly_event").(map[string]any); ev["id"] != w.passed {
				t.Errorf("anomaly_event = %s", r.Raw)
			}
		}}
	specRoutes["GET /anomaly_detection_overrides"] = specRoute{"override list answers {anomaly_detection_overrides: [..]}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			override(t, w.e, w.o.Key)
			return "/anomaly_detection_overrides", nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "anomaly_detection_overrides")); len(list) == 0 {
				t.Errorf("empty list")
			}
		}}
	specRoutes["POST /anomaly_detection_overrides"] = specRoute{"override create answers 201 {anomaly_detection_override}", 201,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/anomaly_detection_overrides", map[string]any{"scope": anomScope(apitest.Unique("subject")), "level": "off"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			overrideShape(t, r, "anomaly_detection_override")
		}}
	specRoutes["DELETE /anomaly_detection_overrides"] = specRoute{"override delete answers {deleted: n}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/anomaly_detection_overrides?id=" + override(t, w.e, w.o.Key), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			if fmt.Sprint(r.Obj(t)) != "map[deleted:1]" {
				t.Errorf("delete answered %s", r.Raw)
			}
		}}
	specRoutes["POST /anomaly_detection_overrides/feedback"] = specRoute{"feedback answers {anomaly_detection_override, deleted}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/anomaly_detection_overrides/feedback", map[string]any{"scope": anomScope(apitest.Unique("subject")), "direction": "up"}
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			overrideShape(t, r, "anomaly_detection_override")
			if r.Obj(t)["deleted"] != false {
				t.Errorf("deleted = %v", r.Obj(t)["deleted"])
			}
		}}
	specRoutes["GET /anomaly_detection_overrides/dimensions"] = specRoute{"dimensions answer {dimensions: {..}}", 200,
		func(t *testing.T, w *specWorld) (string, any) { return "/anomaly_detection_overrides/dimensions", nil },
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			d, _ := apitest.WantEnvelope(t, r, 200, "dimensions").(map[string]any)
			for _, k := range []string{"measurement_types", "detection_passes", "levels"} {
				apitest.List(t, d[k])
			}
		}}
	specRoutes["GET /anomaly_detection_overrides/{id}"] = specRoute{"override answers {anomaly_detection_override}", 200,
		func(t *testing.T, w *specWorld) (string, any) {
			return "/anomaly_detection_overrides/" + override(t, w.e, w.o.Key), nil
		},
		func(t *testing.T, w *specWorld, r *apitest.Response) {
			overrideShape(t, r, "anomaly_detection_override")
		}}

	cell := func(action string, min model.Role, call func(t *testing.T, f *rolesFixture) rolesCall) rolesCell {
		return rolesCell{action, min, call}
	}
	rolesMatrix["POST /anomaly_events/search"] = cell("search anomaly events", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_events/search", body: map[string]any{"body": srchAll}}
	})
	rolesMatrix["PATCH /anomaly_events/resolve"] = cell("resolve anomaly events", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_events/resolve", body: map[string]any{"anomaly_ids": []string{event(t, f.e, f.o)}}}
	})
	rolesMatrix["GET /anomaly_events/{anomalyId}"] = cell("read an anomaly event", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_events/" + url.PathEscape(event(t, f.e, f.o))}
	})
	rolesMatrix["GET /anomaly_detection_overrides"] = cell("list overrides", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_detection_overrides"}
	})
	rolesMatrix["POST /anomaly_detection_overrides"] = cell("create an override", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_detection_overrides", body: map[string]any{"scope": anomScope(apitest.Unique("subject")), "level": "high"}}
	})
	rolesMatrix["DELETE /anomaly_detection_overrides"] = cell("delete an override", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		id := override(t, f.e, f.o.Key)
		return rolesCall{path: "/anomaly_detection_overrides?id=" + id, intact: "/anomaly_detection_overrides/" + id}
	})
	rolesMatrix["POST /anomaly_detection_overrides/feedback"] = cell("give override feedback", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_detection_overrides/feedback", body: map[string]any{"scope": anomScope(apitest.Unique("subject")), "direction": "down"}}
	})
	rolesMatrix["GET /anomaly_detection_overrides/dimensions"] = cell("read override dimensions", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_detection_overrides/dimensions"}
	})
	rolesMatrix["GET /anomaly_detection_overrides/{id}"] = cell("read an override", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
		return rolesCall{path: "/anomaly_detection_overrides/" + override(t, f.e, f.o.Key)}
	})
}

func TestAnomalyGraphQLRolesAndTenancy(t *testing.T) {
	w := newAnomWorld(t, "anom-gql")
	refused := map[string]string{
		"viewer cannot resolve":          `mutation { anomalyEventsResolve(anomalyIds: ["a"]) { updated } }`,
		"viewer cannot create overrides": `mutation { anomalyDetectionOverrideCreate(input: {scope: {subject: "s", measurementType: "t", metric: "m", detectionPass: "spike"}, level: "off"}) { id } }`,
		"viewer cannot delete overrides": `mutation { anomalyDetectionOverridesDelete(id: 1) }`,
		"viewer cannot give feedback":    `mutation { anomalyDetectionOverrideFeedback(input: {scope: {subject: "s", measurementType: "t", metric: "m", detectionPass: "spike"}, direction: up}) { deleted } }`,
	}
	for name, q := range refused {
		t.Run(name, func(t *testing.T) {
			if g := w.e.GraphQL(t, w.viewer, q, nil); g.Code() != "FORBIDDEN" {
				t.Errorf("%s", g.Raw)
			}
		})
	}
	g := w.e.GraphQL(t, w.viewer, `{ anomalyDetectionOverrides { id } anomalyDetectionDimensions { levels }
		anomalyEventSearch(body: {query: {match_all: {}}}, sourceOnly: true) }`, nil)
	if len(g.Errors) > 0 {
		t.Errorf("viewer reads: %s", g.Raw)
	}
	if list, _ := g.Data["anomalyEventSearch"].([]any); len(list) != 3 {
		t.Errorf("viewer anomaly search: %s", g.Raw)
	}
	g = w.e.GraphQL(t, w.o.Key, `query($id: ID!) { anomalyEvent(id: $id) { id } }`, map[string]any{"id": w.foreign})
	if g.Code() != "NOT_FOUND" {
		t.Errorf("another owner's event: %s", g.Raw)
	}
	g = w.e.GraphQL(t, w.o.Key, `mutation { anomalyEventsResolve(anomalyIds: []) { updated } }`, nil)
	if g.Code() != "BAD_USER_INPUT" {
		t.Errorf("empty ids: %s", g.Raw)
	}
}

func TestAnomalyEventIDsInPaths(t *testing.T) {
	w := newAnomWorld(t, "anom-path")
	slashed, percent := "team/rule-4::spike::1740787500", "rule%41::shift::1740787600"
	w.o.InsertDocuments(t, "anomaly_event", anomEvent(slashed, w.client, "new"), anomEvent(percent, w.client, "new"))
	paths := map[string]string{
		"rule-1::spike::1740787200":                w.newA, // as is
		"rule-1%3A%3Aspike%3A%3A1740787200":        w.newA, // "::" escaped
		"rule-1%3a%3aspike%3a%3a1740787200":        w.newA, // lower-case escapes
		"%72ule-1::spike::1740787200":              w.newA, // an escaped letter
		"team%2Frule-4%3A%3Aspike%3A%3A1740787500": slashed,
		"team%2Frule-4::spike::1740787500":         slashed,
		"rule%2541::shift::1740787600":             percent, // "%" escaped once, decoded once
		"rule%2541%3A%3Ashift%3A%3A1740787600":     percent,
	}
	for path, id := range paths {
		t.Run(path, func(t *testing.T) {
			r := w.e.Admin(t, http.MethodGet, "/anomaly_events/"+path, w.viewer, nil)
			ev, _ := r.Obj(t)["anomaly_event"].(map[string]any)
			if r.Status != http.StatusOK || ev["id"] != id {
				t.Errorf("GET %s: %d %s, want %s", path, r.Status, r.Raw, id)
			}
		})
	}
	for _, path := range []string{"rule-9%3A%3Aspike%3A%3A1740787200", "ruleA::shift::1740787600", "team/rule-4::spike::1740787500"} {
		if r := w.e.Admin(t, http.MethodGet, "/anomaly_events/"+path, w.o.Key, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404: %s", path, r.Status, r.Raw)
		}
	}
	g := w.e.GraphQL(t, w.o.Key, `query($id: ID!) { anomalyEvent(id: $id) { id } }`, map[string]any{"id": percent})
	if ev, _ := g.Data["anomalyEvent"].(map[string]any); len(g.Errors) > 0 || ev["id"] != percent {
		t.Errorf("graphql anomalyEvent %s: %s", percent, g.Raw)
	}
}

func TestAnomalyEventsResolveCountsDistinctIDs(t *testing.T) {
	w := newAnomWorld(t, "anom-dup")
	ids := []string{w.newA, w.newA, w.newB, "unknown::spike::1", w.newB, "unknown::spike::1", w.resolved, w.foreign}
	r := anomResolve(t, w.e, w.editor, map[string]any{"anomaly_ids": ids})
	// distinct: newA, newB, unknown, resolved, foreign = 5; active ones of the owner: newA, newB.
	if r.Status != http.StatusOK || fmt.Sprint(r.Obj(t)) != "map[requested:5 updated:2]" {
		t.Fatalf("resolve with repeats: %d %s", r.Status, r.Raw)
	}
	if s := w.status(t, w.o.Key, w.newB); s != "resolved" {
		t.Errorf("newB is %q", s)
	}
	dup := make([]string, 500)
	for i := range dup {
		dup[i] = w.newA
	}
	if r := anomResolve(t, w.e, w.editor, map[string]any{"anomaly_ids": dup}); fmt.Sprint(r.Obj(t)) != "map[requested:1 updated:0]" {
		t.Errorf("500 times one resolved id: %d %s", r.Status, r.Raw)
	}
	if r := anomResolve(t, w.e, w.editor, map[string]any{"anomaly_ids": append(dup, w.newA)}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("501 entries (one distinct): %d %s", r.Status, r.Raw)
	}
}

func TestAnomalyEventWithoutClient(t *testing.T) {
	w := newAnomWorld(t, "anom-nocl")
	ev := anomEvent("orphan::spike::1740787700", "", "new")
	delete(ev, "client_uuid")
	w.o.InsertDocuments(t, "anomaly_event", ev)
	g := w.e.GraphQL(t, w.viewer, `query($a: ID!, $b: ID!) { a: anomalyEvent(id: $a) { id client { uuid } }
		b: anomalyEvent(id: $b) { id client { uuid } } }`, map[string]any{"a": "orphan::spike::1740787700", "b": w.newA})
	a, _ := g.Data["a"].(map[string]any)
	b, _ := g.Data["b"].(map[string]any)
	if len(g.Errors) > 0 || a == nil || a["client"] != nil || b["client"].(map[string]any)["uuid"] != w.client {
		t.Errorf("anomalyEvent clients: %s", g.Raw)
	}
}

func TestAnomalyDetectionOverrideRules(t *testing.T) {
	w := newAnomWorld(t, "anom-rules")
	o := anomOverride(t, w.e, w.editor, anomScope("youtube"), "off")
	id := fmt.Sprint(o["id"])
	intact := func(t *testing.T) {
		t.Helper()
		if r := w.e.Admin(t, http.MethodGet, "/anomaly_detection_overrides/"+id, w.o.Key, nil); r.Status != http.StatusOK {
			t.Fatalf("override %s is gone: %d", id, r.Status)
		}
	}

	t.Run("creating level default is refused with a pointer to DELETE", func(t *testing.T) {
		r := w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides", w.editor, map[string]any{"scope": anomScope("youtube"), "level": "default"})
		errs, _ := r.Obj(t)["errors"].(map[string]any)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(errs["level"]), "delete") {
			t.Errorf("level default: %d %s", r.Status, r.Raw)
		}
		intact(t)
	})
	t.Run("unknown and repeated DELETE parameters are 400", func(t *testing.T) {
		scope := "subject=youtube&measurement_type=VideoMeasurement&metric=bitrate&detection_pass=spike"
		for q, mention := range map[string]string{
			"id=" + id + "&force=true": "force",
			"ids=" + id:                "ids",
			"id=" + id + "&id=999999":  "more than once",
			scope + "&scope_key=x":     "scope_key",
			scope + "&subject=netflix": "more than once",
			"subject=youtube&measurement_type=VideoMeasurement&metric=bitrate&detection_pass=trend": "detection_pass",
			"id=": "give id",
		} {
			r := w.e.Admin(t, http.MethodDelete, "/anomaly_detection_overrides?"+q, w.editor, nil)
			msg, _ := r.Obj(t)["message"].(string)
			if r.Status != http.StatusBadRequest || !strings.Contains(msg, mention) {
				t.Errorf("DELETE ?%s: %d %s, want 400 mentioning %q", q, r.Status, r.Raw, mention)
			}
		}
		intact(t)
		r := w.e.Admin(t, http.MethodDelete, "/anomaly_detection_overrides?"+scope, w.editor, nil)
		if r.Status != http.StatusOK || fmt.Sprint(r.Obj(t)) != "map[deleted:1]" {
			t.Errorf("DELETE by scope: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("feedback source_anomaly_id", func(t *testing.T) {
		post := func(source any) *apitest.Response {
			return w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides/feedback", w.editor,
				map[string]any{"scope": anomScope("netflix"), "direction": "down", "source_anomaly_id": source})
		}
		r := post("")
		o, _ := r.Obj(t)["anomaly_detection_override"].(map[string]any)
		if r.Status != http.StatusOK || o == nil || o["level"] != "low" || o["source_anomaly_id"] != nil {
			t.Errorf("blank source: %d %s", r.Status, r.Raw)
		}
		r = post(strings.Repeat("x", 256))
		if errs, _ := r.Obj(t)["errors"].(map[string]any); r.Status != http.StatusUnprocessableEntity || errs["source_anomaly_id"] == nil {
			t.Errorf("long source: %d %s", r.Status, r.Raw)
		}
		r = post(w.newA)
		o, _ = r.Obj(t)["anomaly_detection_override"].(map[string]any)
		if r.Status != http.StatusOK || o["level"] != "off" || o["source_anomaly_id"] != w.newA {
			t.Errorf("feedback with a source: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("feedback scope is validated", func(t *testing.T) {
		r := w.e.Admin(t, http.MethodPost, "/anomaly_detection_overrides/feedback", w.editor,
			map[string]any{"scope": map[string]any{"subject": "s", "measurement_type": "t", "metric": "", "detection_pass": "burst"}, "direction": "up"})
		errs, _ := r.Obj(t)["errors"].(map[string]any)
		if r.Status != http.StatusUnprocessableEntity || errs["scope.metric"] == nil || errs["scope.detection_pass"] == nil {
			t.Errorf("bad feedback scope: %d %s", r.Status, r.Raw)
		}
	})
}
