package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/server"
)

const keysViewerQuery = `{ viewer { dataOwner role keyKind } }`

// keysGraphQLRefused asserts a GraphQL answer failed with code and no data.
func keysGraphQLRefused(t *testing.T, g *apitest.GraphQLResponse, status int, code, key string) {
	t.Helper()
	if g.Status != status {
		t.Errorf("graphql status %d, want %d: %s", g.Status, status, g.Raw)
	}
	if g.Code() != code {
		t.Fatalf("graphql code %q, want %q: %s", g.Code(), code, g.Raw)
	}
	if g.Errors[0].Message == "" {
		t.Errorf("graphql error without message: %s", g.Raw)
	}
	if len(g.Data) != 0 {
		t.Errorf("refused request carries data: %s", g.Raw)
	}
	if key != "" && bytes.Contains(g.Raw, []byte(key)) {
		t.Errorf("graphql error echoes the presented key: %s", g.Raw)
	}
}

// keysCreate makes a key through the API with the owner's key and answers
// the plaintext key and its id.
func keysCreate(t *testing.T, e *apitest.Env, o *apitest.Owner, path, envelope string, body map[string]any) (string, int64) {
	t.Helper()
	r := e.Admin(t, http.MethodPost, path, o.Key, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Raw)
	}
	rec, _ := r.Obj(t)[envelope].(map[string]any)
	key, _ := rec["api_key"].(string)
	if key == "" {
		t.Fatalf("POST %s answered no api_key: %s", path, r.Raw)
	}
	return key, apitest.ID(t, rec)
}

func keysWorks(t *testing.T, e *apitest.Env, key string) {
	t.Helper()
	if r := e.Admin(t, http.MethodGet, "/isps", key, nil); r.Status != http.StatusOK {
		t.Fatalf("a valid key was refused: %d %s", r.Status, r.Raw)
	}
}

func TestAPIKeyRejectedKeysAnswer401(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keys401")
	ctx := context.Background()
	past := time.Now().Add(-time.Minute)

	expired, _ := o.NewKey(t, apitest.KeyOpts{ValidUntil: &past})
	notYet, notYetID := o.NewKey(t, apitest.KeyOpts{})
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE api_keys SET valid_from = now() + interval '1 hour' WHERE id = $1`, notYetID); err != nil {
		t.Fatal(err)
	}
	unknown := auth.NewKey(auth.KindClientAdmin) // well-formed, never stored
	last := byte('A')
	if o.Key[len(o.Key)-1] == last {
		last = 'B'
	}
	almost := o.Key[:len(o.Key)-1] + string(last)

	cases := []struct{ name, key string }{
		{"missing key", ""},
		{"unknown key", unknown},
		{"garbage key", "not a key at all"},
		{"key differing in the last character", almost},
		{"expired key", expired},
		{"key not yet valid", notYet},
		{"blank key", "   "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/isps", c.key, nil), http.StatusUnauthorized, c.key)
			apitest.WantRefused(t, e.Admin(t, http.MethodPost, "/isps", c.key, map[string]any{"name": "x", "country": "DE", "type": "fixed"}),
				http.StatusUnauthorized, c.key)
			apitest.WantRefused(t, e.Do(t, http.MethodGet, server.ExportBase+"/anything", c.key, nil), http.StatusUnauthorized, c.key)
			keysGraphQLRefused(t, e.GraphQL(t, c.key, keysViewerQuery, nil), http.StatusUnauthorized, "UNAUTHENTICATED", c.key)
		})
	}
	// Nothing was created by the refused POSTs.
	if r := e.Admin(t, http.MethodGet, "/isps", o.Key, nil); len(r.Obj(t)["isps"].([]any)) != 0 {
		t.Errorf("refused requests created ISPs: %s", r.Raw)
	}
}

func TestAPIKeyDeletedKeyStopsAtOnce(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keysdel")
	key, id := keysCreate(t, e, o, "/client_admin_api_keys", "client_admin_api_key", map[string]any{"name": "short-lived"})
	keysWorks(t, e, key)
	if g := e.GraphQL(t, key, keysViewerQuery, nil); len(g.Errors) > 0 {
		t.Fatalf("new key on graphql: %s", g.Raw)
	}
	r := e.Admin(t, http.MethodDelete, fmt.Sprintf("/client_admin_api_keys/%d", id), o.Key, nil)
	if r.Status != http.StatusOK || string(bytes.TrimSpace(r.Raw)) != "{}" {
		t.Fatalf("delete key: %d %s", r.Status, r.Raw)
	}
	apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/isps", key, nil), http.StatusUnauthorized, key)
	keysGraphQLRefused(t, e.GraphQL(t, key, keysViewerQuery, nil), http.StatusUnauthorized, "UNAUTHENTICATED", key)
	if r := e.Admin(t, http.MethodGet, fmt.Sprintf("/client_admin_api_keys/%d", id), o.Key, nil); r.Status != http.StatusNotFound {
		t.Errorf("deleted key still listed: %d %s", r.Status, r.Raw)
	}

	// A key deleted with its own credentials: the delete answers, the next request does not.
	self, selfID := keysCreate(t, e, o, "/client_admin_api_keys", "client_admin_api_key", map[string]any{})
	if r := e.Admin(t, http.MethodDelete, fmt.Sprintf("/client_admin_api_keys/%d", selfID), self, nil); r.Status != http.StatusOK {
		t.Fatalf("self-delete: %d %s", r.Status, r.Raw)
	}
	apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/isps", self, nil), http.StatusUnauthorized, self)

	// Export keys too.
	exp, expID := keysCreate(t, e, o, "/export_api_keys", "export_api_key", map[string]any{})
	if r := e.Do(t, http.MethodGet, server.ExportBase+"/anything", exp, nil); r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
		t.Fatalf("live export key refused on the export API: %d %s", r.Status, r.Raw)
	}
	if r := e.Admin(t, http.MethodDelete, fmt.Sprintf("/export_api_keys/%d", expID), o.Key, nil); r.Status != http.StatusOK {
		t.Fatalf("delete export key: %d %s", r.Status, r.Raw)
	}
	apitest.WantRefused(t, e.Do(t, http.MethodGet, server.ExportBase+"/anything", exp, nil), http.StatusUnauthorized, exp)
}

func TestAPIKeyKindsAndInterfaces(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keyskind")
	export, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	analytics, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindClientAnalytics})
	admin := o.Key

	t.Run("export key", func(t *testing.T) {
		apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/isps", export, nil), http.StatusForbidden, export)
		apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/client_admin_api_keys", export, nil), http.StatusForbidden, export)
		keysGraphQLRefused(t, e.GraphQL(t, export, keysViewerQuery, nil), http.StatusForbidden, "FORBIDDEN", export)
		if r := e.Do(t, http.MethodGet, server.ExportBase+"/anything", export, nil); r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
			t.Errorf("export key refused on the export API: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("analytics key", func(t *testing.T) {
		apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/isps", analytics, nil), http.StatusForbidden, analytics)
		keysGraphQLRefused(t, e.GraphQL(t, analytics, keysViewerQuery, nil), http.StatusForbidden, "FORBIDDEN", analytics)
		apitest.WantRefused(t, e.Do(t, http.MethodGet, server.ExportBase+"/anything", analytics, nil), http.StatusForbidden, analytics)
	})
	t.Run("admin key", func(t *testing.T) {
		apitest.WantRefused(t, e.Do(t, http.MethodGet, server.ExportBase+"/anything", admin, nil), http.StatusForbidden, admin)
		apitest.WantRefused(t, e.Do(t, http.MethodPost, server.ExportBase+"/search", admin, map[string]any{}), http.StatusForbidden, admin)
	})
	t.Run("bearer and X-API-KEY on /graphql", func(t *testing.T) {
		g := e.GraphQL(t, admin, keysViewerQuery, nil) // Authorization: Bearer
		if len(g.Errors) > 0 || g.Data["viewer"].(map[string]any)["dataOwner"] != o.Slug {
			t.Fatalf("bearer on /graphql: %s", g.Raw)
		}
		r := e.Do(t, http.MethodPost, "/graphql", admin, map[string]any{"query": keysViewerQuery}) // X-API-KEY
		if r.Status != http.StatusOK {
			t.Fatalf("X-API-KEY on /graphql: %d %s", r.Status, r.Raw)
		}
		viewer, _ := r.Obj(t)["data"].(map[string]any)["viewer"].(map[string]any)
		if viewer["dataOwner"] != o.Slug || viewer["keyKind"] != "client_admin" || viewer["role"] != "org_admin" {
			t.Errorf("X-API-KEY viewer = %v", viewer)
		}
		// An export key as bearer is still an export key.
		hdr := http.Header{"Authorization": {"Bearer " + export}, "Content-Type": {"application/json"}}
		r = apitest.Send(t, nil, apitest.Request(t, http.MethodPost, e.URL+"/graphql", hdr, `{"query": "{ viewer { role } }"}`))
		if r.Status != http.StatusForbidden {
			t.Errorf("export key as bearer on /graphql: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("bearer is not read by the REST APIs", func(t *testing.T) {
		hdr := http.Header{"Authorization": {"Bearer " + admin}}
		r := apitest.Send(t, nil, apitest.Request(t, http.MethodGet, e.URL+server.AdminBase+"/isps", hdr, nil))
		apitest.WantRefused(t, r, http.StatusUnauthorized, admin)
		hdr = http.Header{"Authorization": {"Bearer " + export}}
		r = apitest.Send(t, nil, apitest.Request(t, http.MethodGet, e.URL+server.ExportBase+"/anything", hdr, nil))
		apitest.WantRefused(t, r, http.StatusUnauthorized, export)
	})
	t.Run("keys of another data owner act in their own", func(t *testing.T) {
		other := e.NewOwner(t, "keyskind")
		if r := e.Admin(t, http.MethodPost, "/isps", other.Key, map[string]any{"name": "Theirs", "country": "FR", "type": "fixed"}); r.Status != http.StatusCreated {
			t.Fatalf("other owner's isp: %d %s", r.Status, r.Raw)
		}
		if r := e.Admin(t, http.MethodGet, "/isps", admin, nil); len(r.Obj(t)["isps"].([]any)) != 0 {
			t.Errorf("one data owner sees another's ISPs: %s", r.Raw)
		}
	})
}

// keysRow reads every column of an api_keys row as name -> value.
func keysRow(t *testing.T, e *apitest.Env, id int64) map[string]any {
	t.Helper()
	rows, err := e.Store.Pool().Query(context.Background(), `SELECT * FROM api_keys WHERE id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("api key %d not stored", id)
	}
	vals, err := rows.Values()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for i, fd := range rows.FieldDescriptions() {
		out[fd.Name] = vals[i]
	}
	return out
}

func TestAPIKeyStoredOnlyAsDigest(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keysdigest")
	for _, c := range []struct {
		kind     auth.Kind
		path     string
		envelope string
	}{
		{auth.KindClientAdmin, "/client_admin_api_keys", "client_admin_api_key"},
		{auth.KindExport, "/export_api_keys", "export_api_key"},
		{auth.KindClientAnalytics, "/client_analytics_api_keys", "client_analytics_api_key"},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			key, id := keysCreate(t, e, o, c.path, c.envelope, map[string]any{"name": "digest-" + string(c.kind)})
			prefix := string(c.kind) + "-"
			if !strings.HasPrefix(key, prefix) || len(key) < len(prefix)+32 {
				t.Fatalf("key %q lacks the kind prefix or randomness", key)
			}
			secret := key[len(prefix):]
			row := keysRow(t, e, id)
			want := sha256.Sum256([]byte(key))
			if d, _ := row["digest"].([]byte); !bytes.Equal(d, want[:]) {
				t.Errorf("digest = %x, want sha256(key) = %x", d, want)
			}
			for col, v := range row {
				var s []byte
				switch v := v.(type) {
				case string:
					s = []byte(v)
				case []byte:
					s = v
				default:
					s = []byte(fmt.Sprint(v))
				}
				if bytes.Contains(s, []byte(secret)) || bytes.Contains(s, []byte(secret[:16])) {
					t.Errorf("column %s holds the plaintext key", col)
				}
			}
			sealed, _ := row["sealed_key"].([]byte)
			if c.kind == auth.KindClientAnalytics {
				// Readable again, but only under the server's key.
				if plain, err := e.Sealer.Open(sealed); err != nil || plain != key {
					t.Errorf("analytics key sealed copy does not open to the key: %v", err)
				}
			} else if sealed != nil {
				t.Errorf("%s key has a sealed copy (%d bytes); only its digest may be stored", c.kind, len(sealed))
			}
			if c.kind == auth.KindClientAnalytics {
				return
			}
			preview, _ := row["key_preview"].(string)
			if !strings.HasPrefix(preview, prefix) || !strings.HasSuffix(preview, key[len(key)-4:]) {
				t.Errorf("key_preview %q, want the prefix %q and the last 4 characters %q", preview, prefix, key[len(key)-4:])
			}
			if len(preview) > len(prefix)+4+len("…") {
				t.Errorf("key_preview %q shows more than the prefix and 4 characters", preview)
			}
			// The API shows the preview, never the key, after creation.
			r := e.Admin(t, http.MethodGet, fmt.Sprintf("%s/%d", c.path, id), o.Key, nil)
			rec, _ := r.Obj(t)[c.envelope].(map[string]any)
			if rec["key_preview"] != preview {
				t.Errorf("GET key_preview = %v, want %q", rec["key_preview"], preview)
			}
			if v, present := rec["api_key"]; present && v != nil {
				t.Errorf("GET answers the key itself: %s", r.Raw)
			}
			if bytes.Contains(r.Raw, []byte(secret)) {
				t.Errorf("GET leaks the key: %s", r.Raw)
			}
			list := e.Admin(t, http.MethodGet, c.path, o.Key, nil)
			if bytes.Contains(list.Raw, []byte(secret)) {
				t.Errorf("list leaks the key: %s", list.Raw)
			}
		})
	}
	// The bootstrap key is stored the same way.
	var n int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM api_keys WHERE data_owner_id = $1 AND digest = $2`,
		o.ID, auth.Digest(o.Key)).Scan(&n); err != nil || n != 1 {
		t.Errorf("bootstrap key by digest: n=%d err=%v", n, err)
	}
}

func TestAPIKeyLastUsedAt(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keysused")
	lastUsed := func(id int64) any {
		t.Helper()
		r := e.Admin(t, http.MethodGet, fmt.Sprintf("/client_admin_api_keys/%d", id), o.Key, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("get key: %d %s", r.Status, r.Raw)
		}
		return r.Obj(t)["client_admin_api_key"].(map[string]any)["last_used_at"]
	}
	for _, via := range []string{"rest", "graphql"} {
		t.Run(via, func(t *testing.T) {
			key, id := o.NewKey(t, apitest.KeyOpts{})
			if v := lastUsed(id); v != nil {
				t.Fatalf("unused key has last_used_at %v", v)
			}
			before := time.Now().Add(-5 * time.Second)
			if via == "rest" {
				keysWorks(t, e, key)
			} else if g := e.GraphQL(t, key, keysViewerQuery, nil); len(g.Errors) > 0 {
				t.Fatalf("graphql: %s", g.Raw)
			}
			s, _ := lastUsed(id).(string)
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("last_used_at %q after use: %v", s, err)
			}
			if at.Before(before) || at.After(time.Now().Add(5*time.Second)) {
				t.Errorf("last_used_at %v is not the time of use", at)
			}
		})
	}
	// A refused key (expired) is not marked as used.
	past := time.Now().Add(-time.Minute)
	expired, expiredID := o.NewKey(t, apitest.KeyOpts{ValidUntil: &past})
	e.Admin(t, http.MethodGet, "/isps", expired, nil)
	if v := lastUsed(expiredID); v != nil {
		t.Errorf("expired key got last_used_at %v", v)
	}
}

func TestErrorBodiesCarryNoInternals(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keys5xx")
	// 401 and 403 bodies are {"message"} only (checked by keysRESTRefused).
	apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/isps", "", nil), http.StatusUnauthorized, "")
	export, _ := o.NewKey(t, apitest.KeyOpts{Kind: auth.KindExport})
	apitest.WantRefused(t, e.Admin(t, http.MethodGet, "/isps", export, nil), http.StatusForbidden, export)

	// A genuine server-side failure: an analytics key whose sealed copy no
	// longer opens (say, after the secret key changed).
	_, id := keysCreate(t, e, o, "/client_analytics_api_keys", "client_analytics_api_key", map[string]any{"name": "broken"})
	if _, err := e.Store.Pool().Exec(context.Background(), `UPDATE api_keys SET sealed_key = '\x0011223344556677889900aabbccddeeff' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	internals := []string{"sealed", "cipher", "authentication failed", "open", "SQLSTATE", "pgx", "goroutine", ".go:"}
	for _, path := range []string{fmt.Sprintf("/client_analytics_api_keys/%d", id), "/client_analytics_api_keys"} {
		r := e.Admin(t, http.MethodGet, path, o.Key, nil)
		if r.Status != http.StatusInternalServerError {
			t.Fatalf("GET %s with a broken sealed key: %d %s", path, r.Status, r.Raw)
		}
		body := r.Obj(t)
		if len(body) != 1 || body["message"] != "Internal server error" {
			t.Errorf("5xx body = %s, want {\"message\": \"Internal server error\"}", r.Raw)
		}
		for _, s := range internals {
			if strings.Contains(strings.ToLower(string(r.Raw)), strings.ToLower(s)) {
				t.Errorf("5xx body mentions %q: %s", s, r.Raw)
			}
		}
	}
	g := e.GraphQL(t, o.Key, fmt.Sprintf(`{ clientAnalyticsApiKey(id: %d) { apiKey } }`, id), nil)
	if g.Code() != "INTERNAL_SERVER_ERROR" || g.Errors[0].Message != "Internal server error" {
		t.Fatalf("graphql internal error: %s", g.Raw)
	}
	for _, s := range internals {
		if strings.Contains(strings.ToLower(string(g.Raw)), strings.ToLower(s)) {
			t.Errorf("graphql 5xx mentions %q: %s", s, g.Raw)
		}
	}
}
