package webhooks_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

// TestSignStandardVector: the test vector of the Standard Webhooks
// specification (its reference libraries all check it).
func TestSignStandardVector(t *testing.T) {
	got, err := webhooks.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
		[]byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; err != nil || got != want {
		t.Fatalf("signature %q (%v), want %q", got, err, want)
	}
}

func render(t *testing.T, format string, opts model.WebhookFormatOptions, typ string, data map[string]any) map[string]any {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"id": "e1", "type": typ, "timestamp": "2026-11-24T10:30:00.000Z", "data": data})
	body, ct, err := webhooks.Render(format, opts, payload)
	if err != nil || ct != "application/json" {
		t.Fatalf("render %s: %v %q", format, err, ct)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRenderSlack: an incoming-webhook message with Block Kit sections,
// the mentions first and the event's text escaped.
func TestRenderSlack(t *testing.T) {
	ch := "here"
	out := render(t, webhooks.FormatSlack, model.WebhookFormatOptions{MentionUsers: []string{"U024BE7LH"},
		MentionGroups: []string{"SAZ94GDB8"}, MentionChannel: &ch}, "client.disabled",
		map[string]any{"client": map[string]any{"label": "<!channel> & <b>"}, "reason": "a<b"})
	text := out["text"].(string)
	if !strings.HasPrefix(text, "<!here> <!subteam^SAZ94GDB8> <@U024BE7LH> ") {
		t.Fatalf("mentions: %q", text)
	}
	if !strings.Contains(text, "&lt;!channel&gt; &amp; &lt;b&gt;") || strings.Contains(text, "<!channel>") {
		t.Fatalf("event text not escaped: %q", text)
	}
	blocks := out["blocks"].([]any)
	first := blocks[0].(map[string]any)
	if first["type"] != "section" || first["text"].(map[string]any)["type"] != "mrkdwn" {
		t.Fatalf("first block %v", first)
	}
	fields := blocks[1].(map[string]any)["fields"].([]any)
	if len(fields) == 0 || !strings.Contains(fields[len(fields)-3].(map[string]any)["text"].(string), "a&lt;b") {
		t.Fatalf("fields %v", fields)
	}
}

// TestRenderTeams: a Workflows message whose one attachment is an Adaptive
// Card; each <at> mention in the card's text is an msteams entity.
func TestRenderTeams(t *testing.T) {
	out := render(t, webhooks.FormatTeams, model.WebhookFormatOptions{MentionUsers: []string{"ops@example.com"}},
		"client_health.critical", map[string]any{"client": map[string]any{"uuid": "u1"}, "to_state": "critical",
			"reasons": []any{map[string]any{"metric": "cpu", "percent": 97.2, "severity": "critical"}}})
	att := out["attachments"].([]any)[0].(map[string]any)
	if out["type"] != "message" || att["contentType"] != "application/vnd.microsoft.card.adaptive" {
		t.Fatalf("message %v", out)
	}
	card := att["content"].(map[string]any)
	if card["type"] != "AdaptiveCard" || card["version"] == nil {
		t.Fatalf("card %v", card)
	}
	ents := card["msteams"].(map[string]any)["entities"].([]any)
	ent := ents[0].(map[string]any)
	if len(ents) != 1 || ent["type"] != "mention" || ent["text"] != "<at>ops@example.com</at>" ||
		ent["mentioned"].(map[string]any)["id"] != "ops@example.com" {
		t.Fatalf("entities %v", ents)
	}
	payload, _ := json.Marshal(map[string]any{"id": "e1", "type": "client_health.critical", "timestamp": "t",
		"data": map[string]any{"reasons": []any{map[string]any{"metric": "cpu", "percent": 97.2, "severity": "critical"}}}})
	b, _, _ := webhooks.Render(webhooks.FormatTeams, model.WebhookFormatOptions{MentionUsers: []string{"ops@example.com"}}, payload)
	if !strings.Contains(string(b), "<at>ops@example.com</at>") || !strings.Contains(string(b), "cpu 97.2% (critical)") {
		t.Fatalf("body %s", b)
	}
}

// TestCatalogueSamples: every sample is an envelope of its type, with data.
func TestCatalogueSamples(t *testing.T) {
	for _, et := range webhooks.Catalogue().EventTypes {
		s := et.Sample.Value.(map[string]any)
		if s["type"] != et.Type || s["data"] == nil {
			t.Errorf("%s: sample %v", et.Type, s)
		}
	}
}
