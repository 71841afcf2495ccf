package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/pg"
)

// generatedID is what the server makes: crypto/rand.Text, 128 bits.
var generatedID = regexp.MustCompile(`^[A-Z2-7]{26}$`)

func sendWithID(t *testing.T, base, method, path, key, id string, body any) *apitest.Response {
	t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("X-API-KEY", key)
	}
	if id != "" {
		h.Set(obs.RequestIDHeader, id)
	}
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	return apitest.Send(t, nil, apitest.Request(t, method, base+path, h, body))
}

func TestEveryAnswerCarriesARequestID(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "reqid")
	t.Run("a sane incoming id is kept", func(t *testing.T) {
		for _, id := range []string{"abc", "0f8fad5b-d9cb-469f-a165-70867728950e", "Root=1-5759e988-bd862e3fe1be46a994272793",
			"svc.a:b/c+d@e_f", strings.Repeat("x", 128)} {
			r := sendWithID(t, e.URL, http.MethodGet, "/client_admin_api/v1/isps", o.Key, id, nil)
			if got := r.Header.Get(obs.RequestIDHeader); got != id {
				t.Errorf("sent %q, answer carries %q", id, got)
			}
		}
	})
	t.Run("an insane one is replaced", func(t *testing.T) {
		sent := 0
		for _, id := range []string{strings.Repeat("x", 129), "a b", `a"b`, "a\tb", "a,b", "ä", "<script>", "a\x00b"} {
			req := apitest.Request(t, http.MethodGet, e.URL+"/client_admin_api/v1/isps", http.Header{"X-Api-Key": {o.Key}}, nil)
			req.Header[obs.RequestIDHeader] = []string{id} // set raw: some are not valid header values for the client's checks
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				continue // the client refused to send it: nothing to check
			}
			resp.Body.Close()
			sent++
			if got := resp.Header.Get(obs.RequestIDHeader); !generatedID.MatchString(got) {
				t.Errorf("sent %q, answer carries %q, want a generated id", id, got)
			}
		}
		if sent < 6 {
			t.Errorf("only %d of the ids could be sent", sent)
		}
	})
	t.Run("none is generated, different each time, on every kind of answer", func(t *testing.T) {
		seen := map[string]bool{}
		for _, r := range []*apitest.Response{
			e.Do(t, http.MethodGet, "/client_admin_api/v1/isps", o.Key, nil),
			e.Do(t, http.MethodGet, "/client_admin_api/v1/isps", "", nil),              // 401
			e.Do(t, http.MethodGet, "/client_admin_api/v1/isps/987654321", o.Key, nil), // 404
			e.Do(t, http.MethodGet, "/nowhere", "", nil),                               // 404 of no route
			e.Do(t, http.MethodDelete, "/healthz", "", nil),                            // 405
			e.Do(t, http.MethodGet, "/healthz", "", nil),
			e.Do(t, http.MethodPost, "/graphql", o.Key, map[string]any{"query": "{ __typename }"}),
			e.Do(t, http.MethodPost, "/graphql", o.Key, strings.Repeat("x", 2<<20)), // 413
		} {
			id := r.Header.Get(obs.RequestIDHeader)
			if !generatedID.MatchString(id) {
				t.Errorf("status %d: request id %q", r.Status, id)
			}
			if seen[id] {
				t.Errorf("request id %q given twice", id)
			}
			seen[id] = true
		}
	})
}

// failingSearch is a search backend that is down.
type failingSearch struct{ search.Backend }

func (failingSearch) Search(context.Context, search.Request) (search.Response, error) {
	return nil, search.ErrUnavailable
}

// Every line a request logs carries its id: here the resolver's warning
// about the search backend and the access log line.
func TestEveryLogLineOfARequestCarriesItsID(t *testing.T) {
	e := apitest.Get(t)
	logs := &logBuffer{}
	base := e.StartServer(t, slog.New(slog.NewJSONHandler(logs, nil)), failingSearch{pg.New(e.Store.Pool())})
	o := e.NewOwner(t, "reqidlog")
	body := map[string]any{"body": map[string]any{"query": map[string]any{"match_all": map[string]any{}}}}

	r := sendWithID(t, base, http.MethodPost, "/client_admin_api/v1/measurements/search", o.Key, "caller-chosen-42", body)
	apitest.WantStatus(t, r, http.StatusServiceUnavailable)
	r2 := sendWithID(t, base, http.MethodPost, "/client_admin_api/v1/measurements/search", o.Key, "", body)
	generated := r2.Header.Get(obs.RequestIDHeader)

	byID := map[string][]string{}
	for _, line := range logs.lines() {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		id, _ := rec["request_id"].(string)
		if id == "" {
			t.Errorf("a line without request_id: %s", line)
		}
		byID[id] = append(byID[id], rec["msg"].(string))
	}
	for _, id := range []string{"caller-chosen-42", generated} {
		msgs := strings.Join(byID[id], ", ")
		if len(byID[id]) != 2 || !strings.Contains(msgs, "search backend unavailable") || !strings.Contains(msgs, "request") {
			t.Errorf("lines of request %s: %q, want the resolver's warning and the access log line", id, msgs)
		}
	}
}
