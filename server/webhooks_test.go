package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// newWebhook creates a webhook with the org_admin key (url and event types
// default to a local receiver and anomaly_event.created) and returns it.
func newWebhook(t *testing.T, e *apitest.Env, o *apitest.Owner, body map[string]any) map[string]any {
	t.Helper()
	b := map[string]any{"name": apitest.Unique("hook"), "url": "http://127.0.0.1:9/hook",
		"event_types": []string{store.EventAnomalyCreated}}
	for k, v := range body {
		b[k] = v
	}
	return e.AdminCreate(t, o.Key, "/webhooks", b)
}

func TestWebhookCatalogue(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "wh-cat")
	c := apitest.WantStatus(t, e.Admin(t, "GET", "/webhooks/event_types", o.Key, nil), 200).(map[string]any)
	for _, k := range []string{"groups", "filters", "severities", "health_metrics", "measurement_types", "event_types"} {
		if _, ok := c[k]; !ok {
			t.Errorf("catalogue has no %s", k)
		}
	}
	var types []string
	for _, et := range c["event_types"].([]any) {
		m := et.(map[string]any)
		types = append(types, m["type"].(string))
		s, _ := m["sample"].(map[string]any)
		if s["type"] != m["type"] || s["id"] == nil || s["timestamp"] == nil || s["data"] == nil {
			t.Errorf("sample of %s is not an envelope of its type: %v", m["type"], s)
		}
	}
	for _, want := range store.EventTypes {
		if !slices.Contains(types, want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
}

func TestWebhookCRUD(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "wh-crud")
	w := newWebhook(t, e, o, map[string]any{"headers": map[string]any{"Authorization": "Bearer abc"},
		"filters": map[string]any{"client_tags": []string{"berlin"}, "min_severity": "critical"}})
	secret, _ := w["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || !strings.HasSuffix(secret, strings.TrimPrefix(w["secret_hint"].(string), "whsec_…")) {
		t.Fatalf("secret %q, hint %v", secret, w["secret_hint"])
	}
	if w["headers"].(map[string]any)["Authorization"] != "********" || w["active"] != true || w["payload_format"] != "standard" {
		t.Fatalf("webhook %v", w)
	}
	id := apitest.Int(t, w["id"])
	p := fmt.Sprintf("/webhooks/%d", id)
	got := apitest.WantEnvelope(t, e.Admin(t, "GET", p, o.Key, nil), 200, "webhook").(map[string]any)
	if _, ok := got["secret"]; ok {
		t.Fatalf("GET shows the secret: %v", got)
	}
	list := apitest.WantEnvelope(t, e.Admin(t, "GET", "/webhooks", o.Key, nil), 200, "webhooks").([]any)
	if len(list) != 1 {
		t.Fatalf("list %v", list)
	}

	// Eight asterisks keep the stored value; a new header is added.
	r := e.Admin(t, "PUT", p, o.Key, map[string]any{"name": "renamed",
		"headers": map[string]any{"Authorization": "********", "X-Team": "ops"}})
	up := apitest.WantEnvelope(t, r, 200, "webhook").(map[string]any)
	if up["name"] != "renamed" || len(up["headers"].(map[string]any)) != 2 {
		t.Fatalf("updated %v", up)
	}
	stored, err := e.Store.Webhook(t.Context(), o.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := e.Sealer.Open(stored.SealedHeaders)
	if err != nil || !strings.Contains(plain, `"Authorization":"Bearer abc"`) || !strings.Contains(plain, `"X-Team":"ops"`) {
		t.Fatalf("stored headers %s (%v)", plain, err)
	}

	apitest.WantStatus(t, e.Admin(t, "DELETE", p, o.Key, nil), 200)
	apitest.WantNotFound(t, e.Admin(t, "GET", p, o.Key, nil), "deleted webhook")
}

func TestWebhookValidation(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "wh-valid")
	base := func(change map[string]any) map[string]any {
		b := map[string]any{"name": "n", "url": "https://hooks.example.com/x", "event_types": []string{store.EventClientOffline}}
		for k, v := range change {
			b[k] = v
		}
		return b
	}
	cases := []struct {
		name, field string
		body        map[string]any
	}{
		{"ftp URL", "url", base(map[string]any{"url": "ftp://example.com/x"})},
		{"URL without host", "url", base(map[string]any{"url": "https:///x"})},
		{"unknown event type", "event_types", base(map[string]any{"event_types": []string{"client.exploded"}})},
		{"no event types", "event_types", base(map[string]any{"event_types": []string{}})},
		{"unknown filter key", "filters", base(map[string]any{"filters": map[string]any{"color": []string{"red"}}})},
		{"bad severity", "filters", base(map[string]any{"filters": map[string]any{"min_severity": "info"}})},
		{"unknown measurement type", "filters", base(map[string]any{"filters": map[string]any{"measurement_types": []string{"Foo"}}})},
		{"unknown health metric", "filters", base(map[string]any{"filters": map[string]any{"health_metrics": []string{"gpu"}}})},
		{"unknown format", "payload_format", base(map[string]any{"payload_format": "xml"})},
		{"options with standard", "format_options", base(map[string]any{"format_options": map[string]any{"mention_channel": "here"}})},
		{"bad slack user", "format_options", base(map[string]any{"payload_format": "slack",
			"format_options": map[string]any{"mention_users": []string{"bob"}}})},
		{"teams groups", "format_options", base(map[string]any{"payload_format": "microsoft_teams",
			"format_options": map[string]any{"mention_groups": []string{"S123"}}})},
		{"reserved header", "headers", base(map[string]any{"headers": map[string]any{"webhook-signature": "x"}})},
		{"asterisks without stored value", "headers", base(map[string]any{"headers": map[string]any{"X-A": "********"}})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.Admin(t, "POST", "/webhooks", o.Key, c.body)
			body := apitest.WantStatus(t, r, 422).(map[string]any)
			if errs, _ := body["errors"].(map[string]any); errs[c.field] == nil {
				t.Fatalf("no error on %s: %s", c.field, r.Raw)
			}
		})
	}
	r := e.Admin(t, "POST", "/webhooks", o.Key, base(map[string]any{"payload_format": "slack",
		"format_options": map[string]any{"mention_users": []string{"U024BE7LH"}, "mention_groups": []string{"SAZ94GDB8"},
			"mention_channel": "here"}}))
	apitest.WantStatus(t, r, http.StatusCreated)
}
