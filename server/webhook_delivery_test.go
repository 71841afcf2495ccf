package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

// fastSchedule retries at once, so tests see every attempt.
var fastSchedule = make([]time.Duration, len(webhooks.Schedule))

// waitDelivery polls a webhook's newest delivery until done says so.
func waitDelivery(t *testing.T, e *apitest.Env, o *apitest.Owner, webhookID int64, done func(d map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d/deliveries?per_page=1", webhookID), o.Key, nil)
		list := apitest.WantStatus(t, r, 200).(map[string]any)["webhook_deliveries"].([]any)
		if len(list) > 0 {
			id := apitest.Int(t, list[0].(map[string]any)["id"])
			d := apitest.WantEnvelope(t, e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d/deliveries/%d", webhookID, id), o.Key, nil),
				200, "webhook_delivery").(map[string]any)
			if done(d) {
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery did not get there: %v", d)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("no delivery of webhook %d", webhookID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func statusIs(want string) func(map[string]any) bool {
	return func(d map[string]any) bool { return d["status"] == want }
}

// checkSignature verifies a received request as a Standard Webhooks
// receiver does.
func checkSignature(t *testing.T, secret string, got apitest.Received) {
	t.Helper()
	ts, err := strconv.ParseInt(got.Header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q", got.Header.Get("webhook-timestamp"))
	}
	want, err := webhooks.Sign(secret, got.Header.Get("webhook-id"), ts, got.Body)
	if err != nil || got.Header.Get("webhook-signature") != want {
		t.Fatalf("signature %q, want %q (%v)", got.Header.Get("webhook-signature"), want, err)
	}
}

func TestWebhookDeliverySigned(t *testing.T) {
	e := apitest.Get(t)
	e.StartWebhooks(t, fastSchedule)
	o := e.NewOwner(t, "wh-deliver")
	other := e.NewOwner(t, "wh-deliver-other")
	rc, otherRC, filteredRC := apitest.NewReceiver(t), apitest.NewReceiver(t), apitest.NewReceiver(t)
	w := newWebhook(t, e, o, map[string]any{"url": rc.URL + "/hook", "headers": map[string]any{"X-Team": "ops"}})
	newWebhook(t, e, other, map[string]any{"url": otherRC.URL})
	newWebhook(t, e, o, map[string]any{"url": filteredRC.URL, "filters": map[string]any{"client_tags": []string{"paris"}}})
	c := o.NewClient(t, store.NewClient{Tags: []string{"berlin"}})
	o.InsertDocuments(t, "anomaly_event", anomEvent("rule-1::spike::1740787200", c.UUID, "new"))

	got := rc.WaitFor(t, 1, 30*time.Second)[0]
	checkSignature(t, w["secret"].(string), got)
	if got.Header.Get("X-Team") != "ops" || got.Path != "/hook" || !strings.HasPrefix(got.Header.Get("webhook-id"), "msg_") {
		t.Fatalf("request headers %v path %s", got.Header, got.Path)
	}
	var env map[string]any
	if err := json.Unmarshal(got.Body, &env); err != nil || env["type"] != store.EventAnomalyCreated ||
		"msg_"+env["id"].(string) != got.Header.Get("webhook-id") {
		t.Fatalf("body %s (%v)", got.Body, err)
	}
	id := apitest.Int(t, w["id"])
	d := waitDelivery(t, e, o, id, statusIs("succeeded"))
	if apitest.Int(t, d["attempts"]) != 1 || d["rendered_body"] != string(got.Body) || d["payload_format"] != "standard" ||
		d["rendered_content_type"] != "application/json" || apitest.Int(t, d["response_status"]) != 200 || d["manual"] != false {
		t.Fatalf("delivery %v", d)
	}
	hook := apitest.WantEnvelope(t, e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200, "webhook").(map[string]any)
	if hook["last_success_at"] == nil || apitest.Int(t, hook["last_response_status"]) != 200 || apitest.Int(t, hook["consecutive_failures"]) != 0 {
		t.Fatalf("webhook after success %v", hook)
	}

	// Redeliver: a new manual delivery, same webhook-id.
	r := e.Admin(t, "POST", fmt.Sprintf("/webhooks/%d/deliveries/%d/redeliver", id, apitest.Int(t, d["id"])), o.Key, nil)
	re := apitest.WantEnvelope(t, r, 200, "webhook_delivery").(map[string]any)
	if re["manual"] != true || re["id"] == d["id"] || re["event_id"] != d["event_id"] {
		t.Fatalf("redelivery %v", re)
	}
	again := rc.WaitFor(t, 2, 30*time.Second)[1]
	checkSignature(t, w["secret"].(string), again)
	if again.Header.Get("webhook-id") != got.Header.Get("webhook-id") {
		t.Fatalf("redelivery webhook-id %q, want %q", again.Header.Get("webhook-id"), got.Header.Get("webhook-id"))
	}

	// Test-send reaches this webhook alone.
	r = e.Admin(t, "POST", fmt.Sprintf("/webhooks/%d/test", id), o.Key, nil)
	if apitest.WantEnvelope(t, r, 200, "webhook_delivery").(map[string]any)["event_type"] != webhooks.EventTest {
		t.Fatalf("test delivery %s", r.Raw)
	}
	test := rc.WaitFor(t, 3, 30*time.Second)[2]
	checkSignature(t, w["secret"].(string), test)

	// Paging: three deliveries, two a page.
	r = e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d/deliveries?page=2&per_page=2", id), o.Key, nil)
	page := apitest.WantStatus(t, r, 200).(map[string]any)
	pg := page["pagination"].(map[string]any)
	if len(page["webhook_deliveries"].([]any)) != 1 || apitest.Int(t, pg["total_count"]) != 3 || apitest.Int(t, pg["page"]) != 2 ||
		apitest.Int(t, pg["per_page"]) != 2 {
		t.Fatalf("page 2: %s", r.Raw)
	}
	apitest.Want400(t, e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d/deliveries?per_page=101", id), o.Key, nil), "per_page")

	if n := len(otherRC.Got()) + len(filteredRC.Got()); n != 0 {
		t.Fatalf("another data owner's or a filtered-out webhook got %d requests", n)
	}
}

func TestWebhookFaults(t *testing.T) {
	e := apitest.Get(t)
	e.StartWebhooks(t, fastSchedule)
	o := e.NewOwner(t, "wh-faults")
	c := o.NewClient(t, store.NewClient{})
	n := 0
	anomaly := func() {
		n++
		o.InsertDocuments(t, "anomaly_event", anomEvent(fmt.Sprintf("rule-%d::spike::1740787200", n), c.UUID, "new"))
	}
	watcher := apitest.NewReceiver(t) // subscribes to webhook.auto_disabled
	newWebhook(t, e, o, map[string]any{"url": watcher.URL, "event_types": []string{store.EventWebhookAutoDisabled}})

	t.Run("500 then 200 retries and succeeds", func(t *testing.T) {
		rc := apitest.NewReceiver(t)
		rc.Answer = func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 0 {
				w.WriteHeader(500)
			}
		}
		id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": rc.URL})["id"])
		anomaly()
		d := waitDelivery(t, e, o, id, statusIs("succeeded"))
		if apitest.Int(t, d["attempts"]) != 2 || len(rc.Got()) != 2 ||
			rc.Got()[0].Header.Get("webhook-id") != rc.Got()[1].Header.Get("webhook-id") {
			t.Fatalf("delivery %v after %d requests", d, len(rc.Got()))
		}
		apitest.WantStatus(t, e.Admin(t, "DELETE", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200)
	})

	t.Run("always 500 exhausts 8 attempts", func(t *testing.T) {
		rc := apitest.NewReceiver(t)
		rc.Answer = func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }
		id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": rc.URL})["id"])
		anomaly()
		d := waitDelivery(t, e, o, id, statusIs("exhausted"))
		if apitest.Int(t, d["attempts"]) != 8 || apitest.Int(t, d["max_attempts"]) != 8 || d["next_attempt_at"] != nil ||
			apitest.Int(t, d["response_status"]) != 500 || len(rc.Got()) != 8 {
			t.Fatalf("delivery %v after %d requests", d, len(rc.Got()))
		}
		hook := apitest.WantEnvelope(t, e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200, "webhook").(map[string]any)
		if apitest.Int(t, hook["consecutive_failures"]) != 8 || hook["active"] != true || hook["last_failure_at"] == nil {
			t.Fatalf("webhook %v", hook)
		}
		apitest.WantStatus(t, e.Admin(t, "DELETE", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200)
	})

	t.Run("410 disables the webhook", func(t *testing.T) {
		rc := apitest.NewReceiver(t)
		rc.Answer = func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) }
		id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": rc.URL})["id"])
		anomaly()
		waitDelivery(t, e, o, id, statusIs("cancelled"))
		hook := apitest.WantEnvelope(t, e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200, "webhook").(map[string]any)
		if hook["active"] != false || hook["enabled"] != true || hook["auto_disabled_reason"] != store.ReasonGone || len(rc.Got()) != 1 {
			t.Fatalf("webhook %v after %d requests", hook, len(rc.Got()))
		}
		got := watcher.WaitFor(t, 1, 30*time.Second)
		if !strings.Contains(string(got[0].Body), store.ReasonGone) {
			t.Fatalf("auto_disabled event %s", got[0].Body)
		}
		// Re-enabling clears it; a manual send to a disabled webhook is refused.
		apitest.WantStatus(t, e.Admin(t, "PUT", fmt.Sprintf("/webhooks/%d", id), o.Key, map[string]any{"enabled": false}), 200)
		apitest.WantStatus(t, e.Admin(t, "POST", fmt.Sprintf("/webhooks/%d/test", id), o.Key, nil), 409)
		hook = apitest.WantEnvelope(t, e.Admin(t, "POST", fmt.Sprintf("/webhooks/%d/enable", id), o.Key, nil), 200, "webhook").(map[string]any)
		if hook["active"] != true || hook["auto_disabled_at"] != nil || apitest.Int(t, hook["consecutive_failures"]) != 0 {
			t.Fatalf("enabled webhook %v", hook)
		}
	})

	t.Run("slow receiver times out", func(t *testing.T) {
		rc := apitest.NewReceiver(t)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		rc.Answer = func(_ int, w http.ResponseWriter, r *http.Request) {
			select { // longer than the engine's 2 s limit
			case <-release:
			case <-r.Context().Done():
			}
		}
		id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": rc.URL})["id"])
		anomaly()
		d := waitDelivery(t, e, o, id, func(d map[string]any) bool { return d["error_message"] != nil })
		if !strings.Contains(d["error_message"].(string), "timed out") || d["response_status"] != nil {
			t.Fatalf("delivery %v", d)
		}
		apitest.WantStatus(t, e.Admin(t, "DELETE", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200)
	})

	t.Run("redirect to a private address is a failure", func(t *testing.T) {
		rc := apitest.NewReceiver(t)
		rc.Answer = func(_ int, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		}
		id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": rc.URL})["id"])
		anomaly()
		d := waitDelivery(t, e, o, id, statusIs("exhausted"))
		if apitest.Int(t, d["response_status"]) != 302 || !strings.Contains(d["error_message"].(string), "redirect") {
			t.Fatalf("delivery %v", d)
		}
		apitest.WantStatus(t, e.Admin(t, "DELETE", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200)
	})

	t.Run("a private address outside the allow-list is refused", func(t *testing.T) {
		rc := apitest.NewReceiver(t)
		url := strings.Replace(rc.URL, "127.0.0.1", "127.0.0.2", 1)
		id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": url})["id"])
		anomaly()
		d := waitDelivery(t, e, o, id, statusIs("exhausted"))
		if d["response_status"] != nil || !strings.Contains(d["error_message"].(string), "not public") || len(rc.Got()) != 0 {
			t.Fatalf("delivery %v", d)
		}
		apitest.WantStatus(t, e.Admin(t, "DELETE", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200)
	})

	t.Run("50 consecutive failures or 5 days of failures disable", func(t *testing.T) {
		for _, c := range []struct{ set, reason string }{
			{"consecutive_failures = 49", store.ReasonFailures},
			{"failing_since = now() - interval '6 days'", store.ReasonFailingDays},
		} {
			rc := apitest.NewReceiver(t)
			rc.Answer = func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }
			id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": rc.URL})["id"])
			e.SQL(t, `UPDATE webhook_endpoints SET `+c.set+` WHERE id = $1`, id)
			anomaly()
			waitDelivery(t, e, o, id, statusIs("cancelled"))
			hook := apitest.WantEnvelope(t, e.Admin(t, "GET", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200, "webhook").(map[string]any)
			if hook["auto_disabled_reason"] != c.reason || hook["active"] != false {
				t.Fatalf("%s: webhook %v", c.set, hook)
			}
		}
	})
}

func TestWebhookRetrySchedule(t *testing.T) {
	e := apitest.Get(t)
	e.StartWebhooks(t, nil) // the real schedule
	o := e.NewOwner(t, "wh-schedule")
	c := o.NewClient(t, store.NewClient{})
	for _, tc := range []struct {
		name       string
		retryAfter string
		min, max   time.Duration
	}{
		{"second attempt 5 s after the first", "", 4500 * time.Millisecond, 6 * time.Second},
		{"Retry-After later than the schedule is honoured", "120", 119500 * time.Millisecond, 121 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := apitest.NewReceiver(t)
			rc.Answer = func(_ int, w http.ResponseWriter, _ *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(503)
			}
			id := apitest.Int(t, newWebhook(t, e, o, map[string]any{"url": rc.URL})["id"])
			o.InsertDocuments(t, "anomaly_event", anomEvent("sched::"+tc.name, c.UUID, "new"))
			d := waitDelivery(t, e, o, id, statusIs("failed"))
			next := apitest.Time(t, d["next_attempt_at"])
			at := apitest.Time(t, d["updated_at"])
			if gap := next.Sub(at); gap < tc.min || gap > tc.max {
				t.Fatalf("next attempt %s after the first, want %s to %s", gap, tc.min, tc.max)
			}
			apitest.WantStatus(t, e.Admin(t, "DELETE", fmt.Sprintf("/webhooks/%d", id), o.Key, nil), 200)
		})
	}
}
