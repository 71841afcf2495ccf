package server_test

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/graphiql"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestGraphiQLInABrowser opens GraphiQL in a real Chromium (Debian's
// chromium, driven by the pinned playwright-core of tools/browser) against
// the real server, as a new user does (issue 17 item 9): without a key the
// status line and the documentation panel say that a key is needed and how
// to get one; a wrong key shows as rejected; after a good key is applied the
// rejected answer is gone, queries and the schema work; /favicon.ico is no
// 404 and nothing is fetched from outside the server. A new tab opens with
// graphiql.ExampleQuery, and a subscription run once shows two events
// arriving one after the other (issue 30 item 3).
func TestGraphiQLInABrowser(t *testing.T) {
	if missing := graphiql.Missing(); len(missing) > 0 {
		t.Fatalf("GraphiQL's assets are not built into this test binary (missing %v): run bash graphiql/build.sh", missing)
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Fatal("this test needs Chromium (apt-get install chromium; .ci/run installs it)")
	}
	e := apitest.Get(t)
	o := e.NewOwner(t, "graphiql-browser")
	regKey := o.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey
	out := apitest.RunNode(t, "browser", 3*time.Minute,
		[]string{"FLEETGRAPH_URL=" + e.URL, "GOOD_KEY=" + o.Key, "REGISTRATION_KEY=" + regKey, "CHROMIUM=" + browser}, "graphiql.js")

	type pane struct{ Status, Docs, Result string }
	var seen struct {
		Favicon          int
		NoKey            pane
		WrongKey         pane
		GoodKeyBeforeRun pane
		GoodKeyReapplied string
		GoodKey          pane
		Responses        []struct {
			URL    string
			Status int
		}
		ConsoleErrors []string
		Offsite       []string
		DefaultQuery  string
		Subscription  struct{ Labels, Results []string }
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("the browser script printed %q: %v", out, err)
	}
	const bootstrap = "go run ./cmd/fleetgraph bootstrap"
	wants := []struct {
		what, text string
		want       []string
	}{
		{"status line without a key", seen.NoKey.Status, []string{"No key", bootstrap}},
		{"documentation panel without a key", seen.NoKey.Docs, []string{"Error fetching schema", "needs an API key", bootstrap}},
		{"status line with a wrong key", seen.WrongKey.Status, []string{"Rejected (HTTP 401)", bootstrap}},
		{"response pane with a wrong key", seen.WrongKey.Result, []string{"errors"}},
		{"status line with the good key", seen.GoodKeyBeforeRun.Status, []string{"Accepted"}},
		{"status line after Apply again with the same key", seen.GoodKeyReapplied, []string{"Accepted"}},
		{"response pane after a good key's query", seen.GoodKey.Result, []string{`"__typename": "Query"`}},
		{"documentation panel with the good key", seen.GoodKey.Docs, []string{"Query"}},
	}
	for _, w := range wants {
		for _, s := range w.want {
			if !strings.Contains(w.text, s) {
				t.Errorf("%s: %q does not say %q", w.what, w.text, s)
			}
		}
	}
	if strings.Contains(seen.GoodKeyBeforeRun.Result, "401") || strings.Contains(seen.GoodKeyBeforeRun.Result, "errors") {
		t.Errorf("after applying a good key the rejected answer stays: %q", seen.GoodKeyBeforeRun.Result)
	}
	if strings.Contains(seen.GoodKey.Status, "Rejected") || strings.Contains(seen.GoodKey.Docs, "Error fetching schema") {
		t.Errorf("with the good key: status %q, docs %q", seen.GoodKey.Status, seen.GoodKey.Docs)
	}
	if seen.DefaultQuery != graphiql.ExampleQuery {
		t.Errorf("a new tab opens with %q, want graphiql.ExampleQuery", seen.DefaultQuery)
	}
	sub := seen.Subscription
	if len(sub.Labels) != 2 {
		t.Errorf("the subscription showed %d registrations (%v), want two arriving one after the other", len(sub.Labels), sub.Labels)
	} else {
		for i, r := range sub.Results {
			if !strings.Contains(r, `"client.registered"`) || !strings.Contains(r, `"`+sub.Labels[i]+`"`) {
				t.Errorf("event %d: the response pane shows %q, want client.registered of %s", i+1, r, sub.Labels[i])
			}
		}
	}
	if seen.Favicon == http.StatusNotFound || seen.Favicon >= 400 {
		t.Errorf("/favicon.ico answered %d", seen.Favicon)
	}
	for _, r := range seen.Responses {
		if r.Status == http.StatusNotFound {
			t.Errorf("the page fetched %s: 404", r.URL)
		}
	}
	if len(seen.Offsite) > 0 {
		t.Errorf("the page fetched from outside the server: %v", seen.Offsite)
	}
}
