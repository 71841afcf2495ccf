package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// The webhook routes' entries in the spec check (specRoutes), the role
// matrix (rolesMatrix) and the cross-tenant check.

var (
	specWebhookShape = specShape{"id": "int", "name": "str", "description": "str?", "url": "str", "payload_format": "str",
		"format_options": "obj", "event_types": "strs", "filters": "obj", "enabled": "bool", "active": "bool",
		"headers": "obj", "secret_hint": "str", "auto_disabled_at": "time?", "auto_disabled_reason": "str?",
		"consecutive_failures": "int", "last_delivery_at": "time?", "last_success_at": "time?", "last_failure_at": "time?",
		"last_response_status": "int?", "last_error": "str?", "created_by_id": "int?", "created_at": "time",
		"updated_at": "time"}
	specWebhookCreateShape = specWebhookShape.with(specShape{"secret": "str"})
	specDeliveryShape      = specShape{"id": "int", "webhook_endpoint_id": "int", "event_id": "str", "event_type": "str",
		"status": "str", "attempts": "int", "max_attempts": "int", "next_attempt_at": "time?", "response_status": "int?",
		"error_message": "str?", "duration_ms": "int?", "delivered_at": "time?", "manual": "bool", "created_at": "time",
		"updated_at": "time"}
	specDeliveryDetailShape = specDeliveryShape.with(specShape{"payload": "obj", "response_body": "str?",
		"rendered_body": "str", "payload_format": "str", "rendered_content_type": "str"})
	specCatalogueShape = specShape{"groups": "list", "filters": "list", "severities": "strs", "health_metrics": "strs",
		"measurement_types": "strs", "event_types": "list"}
	specEventTypeShape  = specShape{"type": "str", "group": "str", "description": "str", "filters": "strs", "sample": "obj"}
	specFormatOptsShape = specShape{"mention_users": "strs", "mention_groups": "strs", "mention_channel": "str?"}
	// min_severity is absent when unset: the spec types it warning or
	// critical, never null (specCheckFilters).
	specFiltersShape = specShape{"client_tags": "strs", "measurement_types": "strs", "health_metrics": "strs"}
)

// specSeedWebhook makes the world's webhook (with a header and filters) and
// a pending test delivery of it (no engine runs in the spec check).
func specSeedWebhook(t testing.TB, w *specWorld) {
	t.Helper()
	w.webhook = w.create(t, "/webhooks", "webhook", map[string]any{"name": "Ops", "url": "https://hooks.example.com/fleet",
		"event_types": []string{store.EventAnomalyCreated, store.EventClientOffline}, "headers": map[string]any{"X-Team": "ops"},
		"filters": map[string]any{"min_severity": "critical"}})
	d := apitest.WantEnvelope(t, w.admin(t, http.MethodPost, fmt.Sprintf("/webhooks/%d/test", w.webhook), nil), 200, "webhook_delivery")
	w.delivery = apitest.Int(t, d.(map[string]any)["id"])
}

func specCheckWebhook(t *testing.T, where string, v any, shape specShape) map[string]any {
	t.Helper()
	h := specCheck(t, where, v, shape)
	specCheck(t, where+".format_options", h["format_options"], specFormatOptsShape)
	specCheckFilters(t, where+".filters", h["filters"])
	return h
}

// specCheckFilters checks a webhook's filters: the three lists, and
// min_severity only when set, then a string.
func specCheckFilters(t *testing.T, where string, v any) {
	t.Helper()
	f, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want a JSON object, got %T %v", where, v, v)
	}
	rest := map[string]any{}
	for k, x := range f {
		if k == "min_severity" {
			specKind(t, where+".min_severity", x, "str")
			continue
		}
		rest[k] = x
	}
	specCheck(t, where, rest, specFiltersShape)
}

func init() {
	hook := func(w *specWorld) string { return fmt.Sprintf("/webhooks/%d", w.webhook) }
	routes := map[string]specRoute{
		"GET /webhooks/event_types": {"webhook catalogue answers groups, filters, vocabularies and event types with samples", 200,
			func(t *testing.T, w *specWorld) (string, any) { return "/webhooks/event_types", nil },
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				c := specCheck(t, "catalogue", r.JSON, specCatalogueShape)
				for i, et := range apitest.List(t, c["event_types"]) {
					specCheck(t, fmt.Sprintf("event_types[%d]", i), et, specEventTypeShape)
				}
				for i, g := range apitest.List(t, c["groups"]) {
					specCheck(t, fmt.Sprintf("groups[%d]", i), g, specShape{"key": "str", "label": "str"})
				}
				for i, f := range apitest.List(t, c["filters"]) {
					specCheck(t, fmt.Sprintf("filters[%d]", i), f, specShape{"key": "str", "description": "str"})
				}
			}},
		"GET /webhooks": {"webhook list answers {webhooks: [webhook]} without secrets", 200,
			func(t *testing.T, w *specWorld) (string, any) { return "/webhooks", nil },
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				list := apitest.List(t, apitest.WantEnvelope(t, r, 200, "webhooks"))
				for i, item := range list {
					specCheckWebhook(t, fmt.Sprintf("webhooks[%d]", i), item, specWebhookShape)
				}
				h := specFind(t, list, w.webhook)
				specWant(t, "webhook.headers", h["headers"].(map[string]any), "X-Team", "********")
			}},
		"POST /webhooks": {"webhook create answers 201 {webhook} with the secret", 201,
			func(t *testing.T, w *specWorld) (string, any) {
				return "/webhooks", map[string]any{"name": "Slack", "url": "https://hooks.slack.com/services/T/B/X",
					"event_types": []string{store.EventHealthCritical}, "payload_format": "slack",
					"format_options": map[string]any{"mention_channel": "channel"}, "description": "ops channel"}
			},
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				h := specCheckWebhook(t, "webhook", apitest.WantEnvelope(t, r, 201, "webhook"), specWebhookCreateShape)
				for k, v := range map[string]any{"name": "Slack", "payload_format": "slack", "enabled": true, "active": true,
					"description": "ops channel", "consecutive_failures": 0, "created_by_id": w.o.UserID} {
					specWant(t, "webhook", h, k, v)
				}
				if f := h["filters"].(map[string]any); f["min_severity"] != nil || len(f) != 3 {
					t.Errorf("webhook.filters without min_severity: %v, want the key absent", f)
				}
			}},
		"GET /webhooks/{id}": {"webhook get answers {webhook}", 200,
			func(t *testing.T, w *specWorld) (string, any) { return hook(w), nil },
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				h := specCheckWebhook(t, "webhook", apitest.WantEnvelope(t, r, 200, "webhook"), specWebhookShape)
				specWant(t, "webhook", h, "name", "Ops")
				specWant(t, "webhook.filters", h["filters"].(map[string]any), "min_severity", "critical")
			}},
		"PUT /webhooks/{id}": {"webhook update answers {webhook} with the change", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				return hook(w), map[string]any{"description": "night shift", "headers": map[string]any{"X-Team": "********"}}
			},
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				h := specCheckWebhook(t, "webhook", apitest.WantEnvelope(t, r, 200, "webhook"), specWebhookShape)
				specWant(t, "webhook", h, "description", "night shift")
				specWant(t, "webhook.headers", h["headers"].(map[string]any), "X-Team", "********")
			}},
		"DELETE /webhooks/{id}": {"webhook delete answers {} and the webhook is gone", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				return fmt.Sprintf("/webhooks/%d", w.create(t, "/webhooks", "webhook", map[string]any{"name": "Gone",
					"url": "https://example.com/h", "event_types": []string{store.EventClientOffline}})), nil
			},
			nil},
		"POST /webhooks/{id}/enable": {"webhook enable answers {webhook}, active", 200,
			func(t *testing.T, w *specWorld) (string, any) { return hook(w) + "/enable", nil },
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				h := specCheckWebhook(t, "webhook", apitest.WantEnvelope(t, r, 200, "webhook"), specWebhookShape)
				specWant(t, "webhook", h, "active", true)
			}},
		"POST /webhooks/{id}/test": {"webhook test-send answers {webhook_delivery}, manual and pending", 200,
			func(t *testing.T, w *specWorld) (string, any) { return hook(w) + "/test", nil },
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				d := specCheck(t, "webhook_delivery", apitest.WantEnvelope(t, r, 200, "webhook_delivery"), specDeliveryDetailShape)
				specWant(t, "webhook_delivery", d, "manual", true)
				specWant(t, "webhook_delivery", d, "event_type", "webhook.test")
			}},
		"GET /webhooks/{webhook_id}/deliveries": {"delivery list answers {webhook_deliveries, pagination}", 200,
			func(t *testing.T, w *specWorld) (string, any) { return hook(w) + "/deliveries?page=1&per_page=25", nil },
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				body := specCheck(t, "deliveries", r.JSON, specShape{"webhook_deliveries": "list", "pagination": "obj"})
				for i, d := range apitest.List(t, body["webhook_deliveries"]) {
					specCheck(t, fmt.Sprintf("webhook_deliveries[%d]", i), d, specDeliveryShape)
				}
				p := specCheck(t, "pagination", body["pagination"], specShape{"page": "int", "per_page": "int", "total_count": "int"})
				specWant(t, "pagination", p, "page", 1)
				specWant(t, "pagination", p, "per_page", 25)
			}},
		"GET /webhooks/{webhook_id}/deliveries/{id}": {"delivery get answers {webhook_delivery} with payload", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				return fmt.Sprintf("/webhooks/%d/deliveries/%d", w.webhook, w.delivery), nil
			},
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				d := specCheck(t, "webhook_delivery", apitest.WantEnvelope(t, r, 200, "webhook_delivery"), specDeliveryDetailShape)
				specCheck(t, "payload", d["payload"], specShape{"id": "str", "type": "str", "timestamp": "str", "data": "obj"})
			}},
		"POST /webhooks/{webhook_id}/deliveries/{id}/redeliver": {"redeliver answers a new manual {webhook_delivery}", 200,
			func(t *testing.T, w *specWorld) (string, any) {
				return fmt.Sprintf("/webhooks/%d/deliveries/%d/redeliver", w.webhook, w.delivery), nil
			},
			func(t *testing.T, w *specWorld, r *apitest.Response) {
				d := specCheck(t, "webhook_delivery", apitest.WantEnvelope(t, r, 200, "webhook_delivery"), specDeliveryDetailShape)
				specWant(t, "webhook_delivery", d, "manual", true)
				specWant(t, "webhook_delivery", d, "status", "pending")
			}},
	}
	for k, v := range routes {
		specRoutes[k] = v
	}

	// The role matrix: editors manage webhooks and redeliver, viewers read
	// them and their deliveries.
	newHook := func(t *testing.T, f *rolesFixture) int64 {
		t.Helper()
		return apitest.Int(t, f.e.AdminCreate(t, f.o.Key, "/webhooks", map[string]any{"name": apitest.Unique("hook"),
			"url": "https://hooks.example.com/x", "event_types": []string{store.EventClientOffline}})["id"])
	}
	newDelivery := func(t *testing.T, f *rolesFixture, hook int64) int64 {
		t.Helper()
		r := f.e.Admin(t, http.MethodPost, fmt.Sprintf("/webhooks/%d/test", hook), f.o.Key, nil)
		return apitest.Int(t, apitest.WantEnvelope(t, r, 200, "webhook_delivery").(map[string]any)["id"])
	}
	cells := map[string]rolesCell{
		"GET /webhooks/event_types": {"read the webhook catalogue", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: "/webhooks/event_types"}
		}},
		"GET /webhooks": {"list webhooks", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: "/webhooks"}
		}},
		"POST /webhooks": {"create webhook", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: "/webhooks", body: map[string]any{"name": apitest.Unique("hook"),
				"url": "https://hooks.example.com/x", "event_types": []string{store.EventClientOffline}}}
		}},
		"GET /webhooks/{id}": {"read a webhook", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: fmt.Sprintf("/webhooks/%d", newHook(t, f))}
		}},
		"PUT /webhooks/{id}": {"update a webhook", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			p := fmt.Sprintf("/webhooks/%d", newHook(t, f))
			return rolesCall{path: p, body: map[string]any{"name": apitest.Unique("renamed")}, intact: p}
		}},
		"DELETE /webhooks/{id}": {"delete a webhook", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			p := fmt.Sprintf("/webhooks/%d", newHook(t, f))
			return rolesCall{path: p, intact: p}
		}},
		"POST /webhooks/{id}/enable": {"enable a webhook", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			p := fmt.Sprintf("/webhooks/%d", newHook(t, f))
			return rolesCall{path: p + "/enable", intact: p}
		}},
		"POST /webhooks/{id}/test": {"send a test event", model.RoleEditor, func(t *testing.T, f *rolesFixture) rolesCall {
			p := fmt.Sprintf("/webhooks/%d", newHook(t, f))
			return rolesCall{path: p + "/test", intact: p}
		}},
		"GET /webhooks/{webhook_id}/deliveries": {"list deliveries", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			return rolesCall{path: fmt.Sprintf("/webhooks/%d/deliveries", newHook(t, f))}
		}},
		"GET /webhooks/{webhook_id}/deliveries/{id}": {"read a delivery", model.RoleViewer, func(t *testing.T, f *rolesFixture) rolesCall {
			h := newHook(t, f)
			return rolesCall{path: fmt.Sprintf("/webhooks/%d/deliveries/%d", h, newDelivery(t, f, h))}
		}},
		"POST /webhooks/{webhook_id}/deliveries/{id}/redeliver": {"redeliver a delivery", model.RoleEditor,
			func(t *testing.T, f *rolesFixture) rolesCall {
				h := newHook(t, f)
				p := fmt.Sprintf("/webhooks/%d/deliveries/%d", h, newDelivery(t, f, h))
				return rolesCall{path: p + "/redeliver", intact: p}
			}},
	}
	for k, v := range cells {
		rolesMatrix[k] = v
	}
}

// TestCrossTenantWebhooks: data owner B, with an org_admin key, reaches
// none of A's webhooks or deliveries by id (404 everywhere, A's records
// unchanged) and does not see them in lists.
func TestCrossTenantWebhooks(t *testing.T) {
	e := apitest.Get(t)
	a, b := e.NewOwner(t, "wh-tenant-a"), e.NewOwner(t, "wh-tenant-b")
	hook := apitest.Int(t, newWebhook(t, e, a, map[string]any{"name": "A's secret hook"})["id"])
	r := e.Admin(t, http.MethodPost, fmt.Sprintf("/webhooks/%d/test", hook), a.Key, nil)
	delivery := apitest.Int(t, apitest.WantEnvelope(t, r, 200, "webhook_delivery").(map[string]any)["id"])
	before := e.Admin(t, http.MethodGet, fmt.Sprintf("/webhooks/%d", hook), a.Key, nil).Raw
	mine := apitest.Int(t, newWebhook(t, e, b, nil)["id"])

	for _, c := range []struct{ method, path string }{
		{"GET", fmt.Sprintf("/webhooks/%d", hook)},
		{"PUT", fmt.Sprintf("/webhooks/%d", hook)},
		{"DELETE", fmt.Sprintf("/webhooks/%d", hook)},
		{"POST", fmt.Sprintf("/webhooks/%d/enable", hook)},
		{"POST", fmt.Sprintf("/webhooks/%d/test", hook)},
		{"GET", fmt.Sprintf("/webhooks/%d/deliveries", hook)},
		{"GET", fmt.Sprintf("/webhooks/%d/deliveries/%d", hook, delivery)},
		{"POST", fmt.Sprintf("/webhooks/%d/deliveries/%d/redeliver", hook, delivery)},
		// A's delivery under B's own webhook is not B's either.
		{"GET", fmt.Sprintf("/webhooks/%d/deliveries/%d", mine, delivery)},
		{"POST", fmt.Sprintf("/webhooks/%d/deliveries/%d/redeliver", mine, delivery)},
	} {
		var body any
		if c.method == "PUT" {
			body = map[string]any{"name": "taken over", "url": "https://evil.example.com"}
		}
		apitest.WantNotFound(t, e.Admin(t, c.method, c.path, b.Key, body), "B: "+c.method+" "+c.path)
	}
	for _, id := range tenantIDs(t, e.Admin(t, http.MethodGet, "/webhooks", b.Key, nil), "webhooks") {
		if id == hook {
			t.Errorf("B's webhook list shows A's webhook %d", hook)
		}
	}
	after := e.Admin(t, http.MethodGet, fmt.Sprintf("/webhooks/%d", hook), a.Key, nil).Raw
	if string(before) != string(after) {
		t.Errorf("A's webhook changed: %s -> %s", before, after)
	}
	r = e.Admin(t, http.MethodGet, fmt.Sprintf("/webhooks/%d/deliveries", hook), a.Key, nil)
	if n := apitest.Int(t, apitest.WantStatus(t, r, 200).(map[string]any)["pagination"].(map[string]any)["total_count"]); n != 1 {
		t.Errorf("A's webhook has %d deliveries, want its 1", n)
	}
}
