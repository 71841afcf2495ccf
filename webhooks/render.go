package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/fleetgraph/fleetgraph/model"
)

// Payload formats.
const (
	FormatStandard = "standard"
	FormatSlack    = "slack"
	FormatTeams    = "microsoft_teams"
)

// Render makes the body of a delivery of the envelope payload in format:
// standard is the envelope itself; slack an incoming-webhook message with
// Block Kit blocks and the mentions of opts; microsoft_teams a Workflows
// webhook message carrying an Adaptive Card whose <at> mentions are the
// card's msteams.entities. It answers the body and its content type.
func Render(format string, opts model.WebhookFormatOptions, payload json.RawMessage) ([]byte, string, error) {
	if format == FormatStandard {
		return payload, "application/json", nil
	}
	var env struct {
		ID        string         `json:"id"`
		Type      string         `json:"type"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(payload, &env); err != nil {
		return nil, "", fmt.Errorf("render: %w", err)
	}
	s := summarize(env.Type, env.Data)
	s.facts = append(s.facts, fact{"Event", env.Type}, fact{"Time", env.Timestamp})
	var msg any
	switch format {
	case FormatSlack:
		msg = slackMessage(s, opts)
	case FormatTeams:
		msg = teamsMessage(s, opts)
	default:
		return nil, "", fmt.Errorf("render: unknown payload format %q", format)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Slack's and Teams' markup reads better unescaped
	err := enc.Encode(msg)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), "application/json", err
}

type fact struct{ title, value string }

// summary is an event told for people: a title and facts.
type summary struct {
	title string
	facts []fact
}

// summarize tells an event of type typ with data in words.
func summarize(typ string, data map[string]any) summary {
	client := str(dig(data, "client", "label"))
	if client == "" {
		client = str(dig(data, "client", "uuid"))
	}
	s := summary{}
	add := func(title string, v any) {
		if t := str(v); t != "" {
			s.facts = append(s.facts, fact{title, t})
		}
	}
	switch {
	case strings.HasPrefix(typ, "anomaly_event."):
		a, _ := data["anomaly_event"].(map[string]any)
		verb := "Anomaly detected"
		if typ == "anomaly_event.resolved" {
			verb = "Anomaly resolved"
		}
		s.title = fmt.Sprintf("%s: %s %s (%s)", verb, str(a["subject"]), str(a["metric"]), str(a["severity"]))
		add("Client", client)
		add("Measurement type", a["measurement_type"])
		add("Detection", a["detection_pass"])
		add("First seen", a["first_seen_at"])
		add("Anomaly", a["id"])
	case strings.HasPrefix(typ, "client_health."):
		s.title = fmt.Sprintf("Client health %s: %s", str(data["to_state"]), client)
		add("Client", client)
		add("From", data["from_state"])
		if rs, ok := data["reasons"].([]any); ok {
			var parts []string
			for _, r := range rs {
				m, _ := r.(map[string]any)
				parts = append(parts, fmt.Sprintf("%s %v%% (%s)", str(m["metric"]), m["percent"], str(m["severity"])))
			}
			add("Reasons", strings.Join(parts, ", "))
		}
	case strings.HasPrefix(typ, "client."):
		s.title = fmt.Sprintf("Client %s: %s", strings.TrimPrefix(typ, "client."), client)
		add("Client", client)
		add("Last seen", data["last_seen_at"])
		add("Reason", data["reason"])
	case typ == "study_execution.failed":
		m, _ := data["measurement"].(map[string]any)
		s.title = fmt.Sprintf("Study failed: %s on %s", str(dig(m, "study", "study_id")), client)
		add("Client", client)
		add("Measurement type", m["type"])
		add("Error", dig(m, "error", "code"))
	case typ == "webhook.auto_disabled":
		s.title = fmt.Sprintf("Webhook disabled: %s", str(dig(data, "webhook", "name")))
		add("Reason", data["reason"])
		add("URL", dig(data, "webhook", "url"))
	default:
		s.title = typ
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(k, data[k])
		}
	}
	return s
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// slackEscape escapes text for Slack's mrkdwn: &, < and > (so that event
// data cannot mention anyone or make links).
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackMentions are the mentions of opts in Slack's syntax.
func slackMentions(opts model.WebhookFormatOptions) string {
	var m []string
	if opts.MentionChannel != nil {
		m = append(m, "<!"+*opts.MentionChannel+">")
	}
	for _, g := range opts.MentionGroups {
		m = append(m, "<!subteam^"+g+">")
	}
	for _, u := range opts.MentionUsers {
		m = append(m, "<@"+u+">")
	}
	return strings.Join(m, " ")
}

func slackMessage(s summary, opts model.WebhookFormatOptions) map[string]any {
	text := slackEscape(s.title)
	if m := slackMentions(opts); m != "" {
		text = m + " " + text
	}
	var fields []map[string]any
	for _, f := range s.facts {
		fields = append(fields, map[string]any{"type": "mrkdwn", "text": "*" + slackEscape(f.title) + "*\n" + slackEscape(f.value)})
	}
	blocks := []map[string]any{
		{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}},
	}
	for len(fields) > 0 { // a section holds at most 10 fields
		n := min(len(fields), 10)
		blocks = append(blocks, map[string]any{"type": "section", "fields": fields[:n]})
		fields = fields[n:]
	}
	return map[string]any{"text": text, "blocks": blocks}
}

// teamsEscape keeps event data from opening a mention: < and > become
// their full-width look-alikes.
func teamsEscape(s string) string {
	return strings.NewReplacer("<", "‹", ">", "›").Replace(s)
}

func teamsMessage(s summary, opts model.WebhookFormatOptions) map[string]any {
	title := teamsEscape(s.title)
	entities := []map[string]any{}
	var mentions []string
	for _, u := range opts.MentionUsers {
		at := "<at>" + u + "</at>"
		mentions = append(mentions, at)
		entities = append(entities, map[string]any{"type": "mention", "text": at,
			"mentioned": map[string]any{"id": u, "name": u}})
	}
	body := []map[string]any{{"type": "TextBlock", "text": title, "weight": "Bolder", "size": "Medium", "wrap": true}}
	if len(mentions) > 0 {
		body = append(body, map[string]any{"type": "TextBlock", "text": strings.Join(mentions, " "), "wrap": true})
	}
	facts := []map[string]any{}
	for _, f := range s.facts {
		facts = append(facts, map[string]any{"title": teamsEscape(f.title), "value": teamsEscape(f.value)})
	}
	body = append(body, map[string]any{"type": "FactSet", "facts": facts})
	card := map[string]any{"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard",
		"version": "1.4", "body": body, "msteams": map[string]any{"entities": entities, "width": "Full"}}
	return map[string]any{"type": "message", "attachments": []map[string]any{{
		"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": nil, "content": card}}}
}
