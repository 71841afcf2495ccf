package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/webhooks"
)

// Every mail of an event renders the event types' catalogue sample (the
// data the event stream writes) without a template error or a missing
// value, and the digest renders a list of them.
func TestTemplatesRenderCatalogueSamples(t *testing.T) {
	var digest []any
	for name := range templates {
		if name == store.TemplateAccountCreated || name == store.TemplateAnomalyDigest {
			continue
		}
		t.Run(name, func(t *testing.T) {
			sample := webhooks.Sample(name)
			if sample == nil {
				t.Fatalf("the catalogue has no sample of %s", name)
			}
			env := map[string]any{"id": "3f1c2a9e-0000-4000-8000-000000000001", "type": name,
				"timestamp": "2026-11-24T08:15:00.000Z", "data": sample["data"], "data_owner": "Acme Networks"}
			if name == store.EventAnomalyCreated {
				digest = append(digest, env)
			}
			subject, body := mustRender(t, name, env)
			if !strings.Contains(subject, "Acme Networks") || !strings.Contains(body, "3f1c2a9e") {
				t.Errorf("subject %q, body:\n%s", subject, body)
			}
		})
	}
	subject, body := mustRender(t, store.TemplateAnomalyDigest, map[string]any{"data_owner": "Acme Networks", "count": 1, "events": digest})
	if subject != "1 anomaly event(s) for Acme Networks" || !strings.Contains(body, "video-stalling::spike::1793687194") {
		t.Errorf("digest %q:\n%s", subject, body)
	}
}

func mustRender(t *testing.T, name string, data any) (string, string) {
	t.Helper()
	raw, _ := json.Marshal(data)
	subject, body, err := render(name, raw)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(subject+body, "<no value>") || strings.Contains(subject+body, "<nil>") {
		t.Errorf("%s renders a missing value:\n%s\n%s", name, subject, body)
	}
	return subject, body
}
