package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func apq(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

// apqPost posts a GraphQL request with the APQ extension (query may be empty).
func apqPost(t *testing.T, e *apitest.Env, key, query, hash string, vars map[string]any) *apitest.Response {
	t.Helper()
	body := map[string]any{"extensions": apq(hash), "variables": vars}
	if query != "" {
		body["query"] = query
	}
	return e.Do(t, http.MethodPost, "/graphql", key, body)
}

// apqGet sends GET /graphql with the hash alone (and variables).
func apqGet(t *testing.T, e *apitest.Env, key, hash string, vars map[string]any, header http.Header) *apitest.Response {
	t.Helper()
	ext, _ := json.Marshal(apq(hash))
	q := url.Values{"extensions": {string(ext)}}
	if vars != nil {
		v, _ := json.Marshal(vars)
		q.Set("variables", string(v))
	}
	h := http.Header{}
	for k, vs := range header {
		h[k] = vs
	}
	if key != "" {
		h.Set("X-API-KEY", key)
	}
	return apitest.Send(t, nil, apitest.Request(t, http.MethodGet, e.URL+"/graphql?"+q.Encode(), h, nil))
}

// gqlErrorCode is extensions.code of a GraphQL answer's first error.
func gqlErrorCode(t *testing.T, r *apitest.Response) (string, string) {
	t.Helper()
	errs, _ := r.Obj(t)["errors"].([]any)
	if len(errs) == 0 {
		return "", ""
	}
	e := errs[0].(map[string]any)
	code, _ := e["extensions"].(map[string]any)["code"].(string)
	msg, _ := e["message"].(string)
	return code, msg
}

// TestAutomaticPersistedQueries: a hash alone misses until the query is
// sent with it once, then hits by POST and by GET; a wrong hash registers
// nothing; a registration is the data owner's own.
func TestAutomaticPersistedQueries(t *testing.T) {
	e := apitest.Get(t)
	o, other := e.NewOwner(t, "apq"), e.NewOwner(t, "apq-other")
	o.NewClient(t, store.NewClient{Label: apitest.Ptr("apq-probe")})
	query := `query Probes { clients { label } viewer { dataOwner } }`
	hash := sha256Hex(query)
	want := `{"clients":[{"label":"apq-probe"}],"viewer":{"dataOwner":"` + o.Slug + `"}}`

	r := apqPost(t, e, o.Key, "", hash, nil)
	if code, msg := gqlErrorCode(t, r); r.Status != http.StatusOK || code != "PERSISTED_QUERY_NOT_FOUND" || msg != "PersistedQueryNotFound" || r.Obj(t)["data"] != nil {
		t.Fatalf("unknown hash: %d %s", r.Status, r.Raw)
	}
	r = apqPost(t, e, o.Key, query, hash, nil)
	apitest.SameJSON(t, "registering", mustJSON(t, r.Obj(t)["data"]), want)
	r = apqPost(t, e, o.Key, "", hash, nil)
	apitest.SameJSON(t, "hash alone, POST", mustJSON(t, r.Obj(t)["data"]), want)

	t.Run("GET with the hash alone, cacheable by the caller", func(t *testing.T) {
		r := apqGet(t, e, o.Key, hash, nil, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET: %d %s", r.Status, r.Raw)
		}
		apitest.SameJSON(t, "hash alone, GET", mustJSON(t, r.Obj(t)["data"]), want)
		etag := r.Header.Get("ETag")
		if cc := r.Header.Get("Cache-Control"); cc != "private, no-cache" || etag == "" ||
			!strings.Contains(r.Header.Get("Vary"), "X-API-KEY") || !strings.Contains(r.Header.Get("Vary"), "Authorization") {
			t.Errorf("Cache-Control %q, ETag %q, Vary %q", cc, etag, r.Header.Values("Vary"))
		}
		again := apqGet(t, e, o.Key, hash, nil, http.Header{"If-None-Match": {etag}})
		if again.Status != http.StatusNotModified || len(again.Raw) != 0 {
			t.Errorf("revalidation: %d %s", again.Status, again.Raw)
		}
		o.NewClient(t, store.NewClient{Label: apitest.Ptr("apq-probe-2")})
		changed := apqGet(t, e, o.Key, hash, nil, http.Header{"If-None-Match": {etag}})
		if changed.Status != http.StatusOK || changed.Header.Get("ETag") == etag {
			t.Errorf("after a change: %d, ETag %q (was %q)", changed.Status, changed.Header.Get("ETag"), etag)
		}
	})
	t.Run("another data owner's registration does not answer", func(t *testing.T) {
		if code, _ := gqlErrorCode(t, apqPost(t, e, other.Key, "", hash, nil)); code != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("other data owner: %s", code)
		}
	})
	t.Run("a wrong hash is refused and registers nothing", func(t *testing.T) {
		wrong := sha256Hex("{ viewer { role } }")
		r := apqPost(t, e, o.Key, query, wrong, nil)
		if _, msg := gqlErrorCode(t, r); !strings.Contains(msg, "hash does not match") || r.Obj(t)["data"] != nil {
			t.Errorf("wrong hash: %d %s", r.Status, r.Raw)
		}
		if code, _ := gqlErrorCode(t, apqPost(t, e, o.Key, "", wrong, nil)); code != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("the wrong hash was registered: %s", code)
		}
	})
	t.Run("GET needs a key", func(t *testing.T) {
		if r := apqGet(t, e, "", hash, nil, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("no key: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("GET runs queries only", func(t *testing.T) {
		name := apitest.Unique("apq-group")
		mutation := `mutation($n: String!) { clientGroupCreate(input: {name: $n}) { id } }`
		q := url.Values{"query": {mutation}, "variables": {`{"n":"` + name + `"}`}}
		r := apitest.Send(t, nil, apitest.Request(t, http.MethodGet, e.URL+"/graphql?"+q.Encode(), http.Header{"X-API-KEY": {o.Key}}, nil))
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != http.MethodPost || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("mutation by GET: %d %v %s", r.Status, r.Header, r.Raw)
		}
		groups := e.GraphQLData(t, o.Key, `{ clientGroups { name } }`, nil)["clientGroups"].([]any)
		if strings.Contains(string(mustJSON(t, groups)), name) {
			t.Errorf("the mutation ran: %v", groups)
		}
	})
	t.Run("GET without a query, or from a browser, is the GraphiQL page", func(t *testing.T) {
		// (a 503 in a checkout whose GraphiQL files are not built; never a
		// GraphQL answer, which would be a 401 without a key)
		for _, req := range []*http.Request{
			apitest.Request(t, http.MethodGet, e.URL+"/graphql", nil, nil),
			apitest.Request(t, http.MethodGet, e.URL+"/graphql?query=%7Bviewer%7Brole%7D%7D", http.Header{"Accept": {"text/html,*/*;q=0.8"}}, nil),
		} {
			r := apitest.Send(t, nil, req)
			if r.Status == http.StatusUnauthorized || strings.Contains(r.Header.Get("Content-Type"), "json") {
				t.Errorf("GraphiQL at %s: %d %s %s", req.URL, r.Status, r.Header.Get("Content-Type"), r.Raw)
			}
		}
	})
}

// TestStoredOperationsArePersistedQueries: every REST route's stored
// operation is known by its hash (x-graphql-operation in the OpenAPI
// documents) on /graphql without being registered, and answers what the
// route answers.
func TestStoredOperationsArePersistedQueries(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "apq-stored")
	isp := o.NewISP(t, store.IspInput{Name: apitest.Ptr("apq-isp")})
	doc := e.Do(t, http.MethodGet, server.AdminBase+server.OpenAPIPath, "", nil).Obj(t)
	ops := 0
	var getIsp map[string]any
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			x, ok := op.(map[string]any)["x-graphql-operation"].(map[string]any)
			if !ok || len(x["sha256Hash"].(string)) != 64 {
				t.Errorf("%s %s: no x-graphql-operation", method, path)
				continue
			}
			ops++
			if method == "get" && path == "/isps/{id}" {
				getIsp = x
			}
		}
	}
	if ops == 0 || getIsp == nil {
		t.Fatalf("%d operations, GET /isps/{id}: %v", ops, getIsp)
	}
	r := apqGet(t, e, o.Key, getIsp["sha256Hash"].(string), map[string]any{"id": isp.ID}, nil)
	if r.Status != http.StatusOK || strings.Contains(string(r.Raw), `"errors"`) || !strings.Contains(string(r.Raw), `"apq-isp"`) {
		t.Errorf("%s by hash: %d %s", getIsp["name"], r.Status, r.Raw)
	}
}

// TestPersistedQueriesOfOneOwnerDoNotEvictAnothers: the probe's attack,
// 1,010 registrations by one data owner over HTTP, leaves another's
// registered hash answering (it evicted it from the shared cache).
func TestPersistedQueriesOfOneOwnerDoNotEvictAnothers(t *testing.T) {
	e := apitest.Get(t)
	victim, attacker := e.NewOwner(t, "apq-victim"), e.NewOwner(t, "apq-flood")
	query := `query Mine { viewer { dataOwner } }`
	apitest.SameJSON(t, "registering", mustJSON(t, apqPost(t, e, victim.Key, query, sha256Hex(query), nil).Obj(t)["data"]),
		`{"viewer":{"dataOwner":"`+victim.Slug+`"}}`)
	const flood, workers = 1010, 8
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				q := fmt.Sprintf(`query Flood%d { viewer { role } }`, i)
				if r := apqPost(t, e, attacker.Key, q, sha256Hex(q), nil); r.Status != http.StatusOK {
					t.Errorf("registration %d: %d %s", i, r.Status, r.Raw)
				}
			}
		}()
	}
	for i := range flood {
		next <- i
	}
	close(next)
	wg.Wait()
	r := apqPost(t, e, victim.Key, "", sha256Hex(query), nil)
	if code, _ := gqlErrorCode(t, r); code != "" {
		t.Fatalf("after another data owner's %d registrations: %s %s", flood, code, r.Raw)
	}
	apitest.SameJSON(t, "hash alone", mustJSON(t, r.Obj(t)["data"]), `{"viewer":{"dataOwner":"`+victim.Slug+`"}}`)
	q := fmt.Sprintf(`query Flood%d { viewer { role } }`, flood-1)
	if code, _ := gqlErrorCode(t, apqPost(t, e, attacker.Key, "", sha256Hex(q), nil)); code != "" {
		t.Errorf("the flood's last registration does not answer: %s", code)
	}
}
