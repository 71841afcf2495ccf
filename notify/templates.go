package notify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/fleetgraph/fleetgraph/store"
)

// A mail template renders an outbox row's data (JSON, decoded into maps)
// into a subject line and a plain-text body. Every template an outbox row
// may name is in templates; a row naming another is given up at once.
type mailTemplate struct {
	subject, body *template.Template
}

// clientName names a client by its label, else its UUID.
const clientName = `{{define "client"}}{{with .}}{{or .label .uuid}}{{else}}(unknown client){{end}}{{end}}`

func newTemplate(name, subject, body string) mailTemplate {
	parse := func(part, text string) *template.Template {
		t := template.Must(template.New(name + "." + part).Option("missingkey=zero").Parse(clientName))
		return template.Must(t.Parse(text))
	}
	return mailTemplate{subject: parse("subject", subject), body: parse("body", body)}
}

var templates = map[string]mailTemplate{
	store.TemplateAccountCreated: newTemplate(store.TemplateAccountCreated,
		`Your fleetgraph account for {{.data_owner}}`,
		`Hello {{with .first_name}}{{.}}{{else}}{{.username}}{{end}},

an account was created for you on fleetgraph for {{.data_owner}}.

User name: {{.username}}
Role: {{.role}}

Sign in to the dashboard with this e-mail address. If you did not expect
this message, tell an administrator of {{.data_owner}}.
`),
	store.EventAnomalyCreated: newTemplate(store.EventAnomalyCreated,
		`[{{.data.anomaly_event.severity}}] Anomaly: {{.data.anomaly_event.subject}} {{.data.anomaly_event.metric}} ({{.data_owner}})`,
		`A new anomaly was detected for {{.data_owner}}.

`+anomalyLines+`
Event {{.id}} at {{.timestamp}}.
`),
	store.EventClientOffline: newTemplate(store.EventClientOffline,
		`Client offline: {{template "client" .data.client}} ({{.data_owner}})`,
		`The client {{template "client" .data.client}} of {{.data_owner}} was not seen within its offline
threshold of {{.data.offline_threshold_minutes}} minutes (last seen {{or .data.last_seen_at "never"}}).

Event {{.id}} at {{.timestamp}}.
`),
	store.EventHealthWarning:  healthTemplate(store.EventHealthWarning),
	store.EventHealthCritical: healthTemplate(store.EventHealthCritical),
	store.EventStudyExecutionFailed: newTemplate(store.EventStudyExecutionFailed,
		`Study failed: {{.data.measurement.type}} on {{template "client" .data.client}} ({{.data_owner}})`,
		`A study of {{.data_owner}} failed on the client {{template "client" .data.client}}.

Measurement: {{.data.measurement.id}} ({{.data.measurement.type}}{{with .data.measurement.study}}, {{.subject}}{{end}})
{{with .data.measurement.error}}Error: {{.}}
{{end}}
Event {{.id}} at {{.timestamp}}.
`),
	store.TemplateAnomalyDigest: newTemplate(store.TemplateAnomalyDigest,
		`{{.count}} anomaly event(s) for {{.data_owner}}`,
		`Anomalies detected for {{.data_owner}} since the last digest: {{.count}}.
{{range .events}}
{{.timestamp}}
`+anomalyLines+`{{end}}`),
}

// anomalyLines describe the anomaly of an event's data.
const anomalyLines = `Severity: {{.data.anomaly_event.severity}}
Client: {{template "client" .data.client}}
Measurement: {{.data.anomaly_event.measurement_type}} {{.data.anomaly_event.subject}}, metric {{.data.anomaly_event.metric}} ({{.data.anomaly_event.detection_pass}})
Anomaly: {{.data.anomaly_event.id}}
`

func healthTemplate(name string) mailTemplate {
	return newTemplate(name,
		`Client {{.data.to_state}}: {{template "client" .data.client}} ({{.data_owner}})`,
		`The health of the client {{template "client" .data.client}} of {{.data_owner}} went from
{{or .data.from_state "unknown"}} to {{.data.to_state}}.
{{range .data.reasons}}
- {{.metric}}: {{.percent}} % ({{.severity}}){{end}}

Event {{.id}} at {{.timestamp}}.
`)
}

// errUnknownTemplate fails a row for good: no later attempt can render it
// (an unknown template, data it cannot render).
var errUnknownTemplate = errors.New("mail not renderable")

// render answers the subject and body of an outbox row.
func render(name string, data json.RawMessage) (subject, body string, err error) {
	t, ok := templates[name]
	if !ok {
		return "", "", fmt.Errorf("%w: unknown template %q", errUnknownTemplate, name)
	}
	var v map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &v); err != nil {
			return "", "", fmt.Errorf("%w: data of %q: %v", errUnknownTemplate, name, err)
		}
	}
	var s, b bytes.Buffer
	if err := t.subject.Execute(&s, v); err != nil {
		return "", "", fmt.Errorf("%w: %s subject: %v", errUnknownTemplate, name, err)
	}
	if err := t.body.Execute(&b, v); err != nil {
		return "", "", fmt.Errorf("%w: %s body: %v", errUnknownTemplate, name, err)
	}
	return strings.Join(strings.Fields(s.String()), " "), b.String(), nil
}
