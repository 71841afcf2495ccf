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

func newTemplate(name, subject, body string) mailTemplate {
	return mailTemplate{
		subject: template.Must(template.New(name + ".subject").Option("missingkey=zero").Parse(subject)),
		body:    template.Must(template.New(name + ".body").Option("missingkey=zero").Parse(body)),
	}
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
}

// errUnknownTemplate fails a row for good: no later attempt can render it.
var errUnknownTemplate = errors.New("unknown mail template")

// render answers the subject and body of an outbox row.
func render(name string, data json.RawMessage) (subject, body string, err error) {
	t, ok := templates[name]
	if !ok {
		return "", "", fmt.Errorf("%w %q", errUnknownTemplate, name)
	}
	var v map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &v); err != nil {
			return "", "", fmt.Errorf("%w: data of %q: %v", errUnknownTemplate, name, err)
		}
	}
	var s, b bytes.Buffer
	if err := t.subject.Execute(&s, v); err != nil {
		return "", "", fmt.Errorf("render %s subject: %w", name, err)
	}
	if err := t.body.Execute(&b, v); err != nil {
		return "", "", fmt.Errorf("render %s body: %w", name, err)
	}
	return strings.Join(strings.Fields(s.String()), " "), b.String(), nil
}
