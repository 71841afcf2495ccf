package server_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/server"
)

// inpCase is one bad request to the Administration API and what it must
// answer: the status and, for validation failures, the field named in
// "errors" (snake_case, dotted for nested fields).
type inpCase struct {
	name   string
	method string
	path   string // relative to the API base
	body   any    // nil, a raw string or a JSON value
	status int
	field  string // key that "errors" must hold; "" when none is expected
	want   string // substring of one of the field's messages (optional)
}

// inpFixture is a data owner with an ISP and a user to aim updates at.
type inpFixture struct {
	e      *apitest.Env
	o      *apitest.Owner
	ispID  int64
	userID int64
}

func newInpFixture(t *testing.T) *inpFixture {
	t.Helper()
	e := apitest.Get(t)
	o := e.NewOwner(t, "input")
	r := e.Admin(t, http.MethodPost, "/isps", o.Key, map[string]any{"name": "Fixture ISP", "country": "DE", "type": "fixed"})
	if r.Status != http.StatusCreated {
		t.Fatalf("fixture isp: %d %s", r.Status, r.Raw)
	}
	return &inpFixture{e: e, o: o, ispID: apitest.ID(t, r.Obj(t)["isp"]), userID: o.UserID}
}

// inpCheck asserts the answer of one case: its status, a JSON error body
// with a message, never a 5xx, and the named field in "errors".
func inpCheck(t *testing.T, c inpCase, r *apitest.Response) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("%s %s: got a %d: %s", c.method, c.path, r.Status, r.Raw)
	}
	if r.Status != c.status {
		t.Fatalf("%s %s: status %d, want %d: %s", c.method, c.path, r.Status, c.status, r.Raw)
	}
	if c.status < 400 {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error answer has Content-Type %q, want JSON: %s", ct, r.Raw)
	}
	body := r.Obj(t)
	if msg, _ := body["message"].(string); msg == "" {
		t.Errorf("error body has no message: %s", r.Raw)
	}
	if c.field == "" {
		return
	}
	errs, ok := body["errors"].(map[string]any)
	if !ok {
		t.Fatalf("error body has no \"errors\" object: %s", r.Raw)
	}
	msgs, ok := errs[c.field].([]any)
	if !ok || len(msgs) == 0 {
		t.Fatalf("errors does not name %q: %s", c.field, r.Raw)
	}
	if c.want == "" {
		return
	}
	for _, m := range msgs {
		if s, _ := m.(string); strings.Contains(s, c.want) {
			return
		}
	}
	t.Errorf("errors[%q] = %v, want a message containing %q", c.field, msgs, c.want)
}

func TestRESTBadInput(t *testing.T) {
	f := newInpFixture(t)
	isp := fmt.Sprintf("/isps/%d", f.ispID)
	user := fmt.Sprintf("/client_admin_users/%d", f.userID)
	validIsp := `{"name": "Valid", "country": "DE", "type": "fixed"}`
	nc := func(key string, v any) map[string]any {
		return map[string]any{"notification_config": map[string]any{key: v}}
	}
	const ncPrefix = "notification_config."
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)

	cases := []inpCase{
		// Bodies that are not one JSON object: 400 with a message.
		{name: "truncated JSON", method: http.MethodPost, path: "/isps", body: `{"name": "x", `, status: 400},
		{name: "not JSON at all", method: http.MethodPost, path: "/isps", body: `name=x&country=DE`, status: 400},
		{name: "array body", method: http.MethodPost, path: "/isps", body: `[{"name": "x"}]`, status: 400},
		{name: "string body", method: http.MethodPost, path: "/isps", body: `"an isp"`, status: 400},
		{name: "number body", method: http.MethodPost, path: "/isps", body: `42`, status: 400},
		{name: "null body", method: http.MethodPost, path: "/isps", body: `null`, status: 400},
		{name: "trailing garbage", method: http.MethodPost, path: "/isps", body: validIsp + ` garbage`, status: 400},
		{name: "two objects", method: http.MethodPost, path: "/isps", body: validIsp + validIsp, status: 400},
		{name: "trailing closing brace", method: http.MethodPost, path: "/isps", body: validIsp + `}`, status: 400},
		{name: "trailing closing bracket", method: http.MethodPost, path: "/isps", body: validIsp + `]`, status: 400},
		{name: "malformed PUT body", method: http.MethodPut, path: user, body: `{"first_name": }`, status: 400},

		// Missing required fields: 422 naming each.
		{name: "isp without name", method: http.MethodPost, path: "/isps", body: map[string]any{"country": "DE", "type": "fixed"},
			status: 422, field: "name", want: "required"},
		{name: "isp without country", method: http.MethodPost, path: "/isps", body: map[string]any{"name": "x", "type": "fixed"},
			status: 422, field: "country", want: "required"},
		{name: "isp without type", method: http.MethodPost, path: "/isps", body: map[string]any{"name": "x", "country": "DE"},
			status: 422, field: "type", want: "required"},
		{name: "empty isp body", method: http.MethodPost, path: "/isps", body: ``, status: 422, field: "name", want: "required"},
		{name: "user without email", method: http.MethodPost, path: "/client_admin_users",
			body: map[string]any{"username": "nomail", "role": "viewer"}, status: 422, field: "email", want: "required"},
		{name: "user without role", method: http.MethodPost, path: "/client_admin_users",
			body: map[string]any{"username": "norole", "email": "norole@example.com"}, status: 422, field: "role", want: "required"},
		{name: "isp name null", method: http.MethodPost, path: "/isps", body: map[string]any{"name": nil, "country": "DE", "type": "fixed"},
			status: 422, field: "name"},
		{name: "isp name blank", method: http.MethodPost, path: "/isps", body: map[string]any{"name": "  ", "country": "DE", "type": "fixed"},
			status: 422, field: "name", want: "blank"},
		{name: "capability without name", method: http.MethodPost, path: "/capabilities", body: map[string]any{"comment": "x"},
			status: 422, field: "name", want: "required"},

		// Wrong JSON types: 422 naming the field.
		{name: "name as number", method: http.MethodPost, path: "/isps", body: map[string]any{"name": 7, "country": "DE", "type": "fixed"},
			status: 422, field: "name", want: "string"},
		{name: "name as object", method: http.MethodPut, path: isp, body: map[string]any{"name": map[string]any{"x": 1}},
			status: 422, field: "name", want: "string"},
		{name: "is_vpn as string", method: http.MethodPost, path: "/isps", body: map[string]any{"name": "x", "country": "DE", "type": "fixed", "is_vpn": "yes"},
			status: 422, field: "is_vpn"},
		{name: "is_vpn as number on update", method: http.MethodPut, path: isp, body: map[string]any{"is_vpn": 1}, status: 422, field: "is_vpn"},
		{name: "isp type unknown", method: http.MethodPost, path: "/isps", body: map[string]any{"name": "x", "country": "DE", "type": "cable"},
			status: 422, field: "type", want: "one of"},
		{name: "allowed_measurement_types as string", method: http.MethodPost, path: "/capabilities",
			body: map[string]any{"name": "c", "allowed_measurement_types": "VideoMeasurement"}, status: 422, field: "allowed_measurement_types", want: "array"},
		{name: "list items of the wrong type", method: http.MethodPost, path: "/capabilities",
			body: map[string]any{"name": "c", "allowed_measurement_subjects": []any{"youtube", 3}}, status: 422, field: "allowed_measurement_subjects[1]", want: "string"},
		{name: "list items null", method: http.MethodPost, path: "/capabilities",
			body: map[string]any{"name": "c", "forbidden_measurement_types": []any{nil}}, status: 422, field: "forbidden_measurement_types[0]"},
		{name: "effective_role unknown", method: http.MethodPost, path: "/client_admin_api_keys",
			body: map[string]any{"effective_role": "superuser"}, status: 422, field: "effective_role", want: "one of"},
		{name: "role unknown", method: http.MethodPost, path: "/client_admin_users",
			body: map[string]any{"username": "r", "email": "r@example.com", "role": "root"}, status: 422, field: "role"},
		{name: "valid_until not a date", method: http.MethodPost, path: "/client_admin_api_keys",
			body: map[string]any{"valid_until": "next tuesday"}, status: 422, field: "valid_until"},
		{name: "notification_config as string", method: http.MethodPut, path: user,
			body: map[string]any{"notification_config": "all"}, status: 422, field: "notification_config", want: "object"},
		{name: "nested wrong type", method: http.MethodPut, path: user, body: nc("anomaly_events", "yes"),
			status: 422, field: ncPrefix + "anomaly_events"},
		{name: "nested integer as float", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_hours", 1.5),
			status: 422, field: ncPrefix + "anomaly_events_digest_hours", want: "integer"},
		{name: "integer too large for int64", method: http.MethodPut, path: "/data_owner/settings",
			body: `{"offline_threshold_minutes": 99999999999999999999999}`, status: 422, field: "offline_threshold_minutes"},

		// Out of range and pattern violations.
		{name: "digest hours 0", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_hours", 0),
			status: 422, field: ncPrefix + "anomaly_events_digest_hours", want: "between 1 and 168"},
		{name: "digest hours 169", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_hours", 169),
			status: 422, field: ncPrefix + "anomaly_events_digest_hours", want: "between 1 and 168"},
		{name: "interval count 0", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_interval_count", 0),
			status: 422, field: ncPrefix + "anomaly_events_digest_interval_count"},
		{name: "interval count 169", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_interval_count", 169),
			status: 422, field: ncPrefix + "anomaly_events_digest_interval_count"},
		{name: "day of week 0", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_day_of_week", 0),
			status: 422, field: ncPrefix + "anomaly_events_digest_day_of_week", want: "between 1 and 7"},
		{name: "day of week 8", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_day_of_week", 8),
			status: 422, field: ncPrefix + "anomaly_events_digest_day_of_week", want: "between 1 and 7"},
		{name: "at_time 24:00", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_at_time", "24:00"),
			status: 422, field: ncPrefix + "anomaly_events_digest_at_time"},
		{name: "at_time 7:5", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_at_time", "7:5"),
			status: 422, field: ncPrefix + "anomaly_events_digest_at_time"},
		{name: "frequency weekly", method: http.MethodPut, path: user, body: nc("anomaly_events_frequency", "weekly"),
			status: 422, field: ncPrefix + "anomaly_events_frequency"},
		{name: "interval unit month", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_interval_unit", "month"),
			status: 422, field: ncPrefix + "anomaly_events_digest_interval_unit"},
		{name: "range violation on create", method: http.MethodPost, path: "/client_admin_users",
			body: map[string]any{"username": "range", "email": "range@example.com", "role": "viewer",
				"notification_config": map[string]any{"anomaly_events_digest_day_of_week": 9}},
			status: 422, field: ncPrefix + "anomaly_events_digest_day_of_week"},
		{name: "dashboard version 1.2", method: http.MethodPut, path: user, body: map[string]any{"last_visited_dashboard_version": "1.2"},
			status: 422, field: "last_visited_dashboard_version"},
		{name: "dashboard version with text", method: http.MethodPut, path: user, body: map[string]any{"last_visited_dashboard_version": "v1.2.3"},
			status: 422, field: "last_visited_dashboard_version"},
		{name: "country DEU", method: http.MethodPost, path: "/isps", body: map[string]any{"name": "x", "country": "DEU", "type": "fixed"},
			status: 422, field: "country", want: "two-letter"},
		{name: "country digits on update", method: http.MethodPut, path: isp, body: map[string]any{"country": "12"},
			status: 422, field: "country"},
		{name: "service with spaces", method: http.MethodPost, path: "/service_credentials",
			body: map[string]any{"name": "svc", "service": "Not Valid!"}, status: 422, field: "service"},
		{name: "admin key valid_until in the past", method: http.MethodPost, path: "/client_admin_api_keys",
			body: map[string]any{"valid_until": past}, status: 422, field: "valid_until", want: "future"},
		{name: "export key valid_until in the past", method: http.MethodPost, path: "/export_api_keys",
			body: map[string]any{"valid_until": past}, status: 422, field: "valid_until", want: "future"},
		{name: "invalid email", method: http.MethodPost, path: "/client_admin_users",
			body: map[string]any{"username": "bad-mail", "email": "not-an-address", "role": "viewer"}, status: 422, field: "email"},
		{name: "NUL in a string", method: http.MethodPost, path: "/isps", body: map[string]any{"name": "a\x00b", "country": "DE", "type": "fixed"},
			status: 422, field: "name", want: "NUL"},
		{name: "NUL in a list item", method: http.MethodPost, path: "/capabilities",
			body: `{"name": "c", "allowed_measurement_types": ["web\u0000"]}`, status: 422, field: "allowed_measurement_types[0]", want: "NUL"},
		{name: "NUL in a nested string", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_at_time", "\x00"),
			status: 422, field: ncPrefix + "anomaly_events_digest_at_time", want: "NUL"},
		{name: "NUL in a key name", method: http.MethodPost, path: "/client_admin_api_keys", body: map[string]any{"name": "k\x00"},
			status: 422, field: "name", want: "NUL"},
		{name: "offline threshold null ok but zero not", method: http.MethodPut, path: "/data_owner/settings",
			body: map[string]any{"offline_threshold_minutes": 0}, status: 422, field: "offline_threshold_minutes"},

		// Unknown fields.
		{name: "unknown top-level field", method: http.MethodPost, path: "/isps",
			body: map[string]any{"name": "x", "country": "DE", "type": "fixed", "colour": "red"}, status: 422, field: "colour", want: "is not a known field"},
		{name: "camelCase spelling is unknown", method: http.MethodPost, path: "/isps",
			body: map[string]any{"name": "x", "country": "DE", "type": "fixed", "isVpn": true}, status: 422, field: "isVpn", want: "is not a known field"},
		{name: "unknown nested field", method: http.MethodPut, path: user, body: nc("anomaly_events_digest_minutes", 5),
			status: 422, field: ncPrefix + "anomaly_events_digest_minutes", want: "is not a known field"},
		{name: "unknown field on update", method: http.MethodPut, path: isp, body: map[string]any{"verified": true},
			status: 422, field: "verified", want: "is not a known field"},

		// Paths, methods and query parameters.
		{name: "unknown path", method: http.MethodGet, path: "/no_such_resource", status: 404},
		{name: "unknown nested path", method: http.MethodGet, path: isp + "/no_such_child", status: 404},
		{name: "wrong method on collection", method: http.MethodDelete, path: "/isps", status: 405},
		{name: "wrong method on record", method: http.MethodPatch, path: isp, body: map[string]any{"name": "x"}, status: 405},
		{name: "wrong method on users", method: http.MethodDelete, path: user, status: 405},
		{name: "non-numeric id", method: http.MethodGet, path: "/isps/abc", status: 404},
		{name: "zero id", method: http.MethodGet, path: "/isps/0", status: 404},
		{name: "negative id", method: http.MethodGet, path: "/isps/-1", status: 404},
		{name: "id beyond int64", method: http.MethodGet, path: "/isps/99999999999999999999", status: 404},
		{name: "non-numeric id on update", method: http.MethodPut, path: "/isps/abc", body: map[string]any{"name": "x"}, status: 404},
		{name: "non-numeric id on delete", method: http.MethodDelete, path: "/capabilities/1e3", status: 404},
		{name: "unknown id", method: http.MethodGet, path: "/isps/987654321", status: 404},
		{name: "verified=maybe", method: http.MethodGet, path: "/isps?verified=maybe", status: 400},
		{name: "country filter DEU", method: http.MethodGet, path: "/isps?country=DEU", status: 400},
		{name: "NUL in a query parameter", method: http.MethodGet, path: "/isps?name=a%00b", status: 400},
		{name: "NUL in a label query", method: http.MethodGet, path: "/clients/check_label_availability?label=a%00b", status: 400},
		{name: "missing required query parameter", method: http.MethodGet, path: "/clients/check_label_availability", status: 400},
		{name: "bad exclude_id", method: http.MethodGet, path: "/clients/check_label_availability?label=x&exclude_id=abc", status: 400},
		{name: "non-numeric client id", method: http.MethodGet, path: "/clients/not-a-uuid", status: 404},
		{name: "unknown type filter is ignored", method: http.MethodGet, path: "/isps?type=cable", status: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.e.Admin(t, c.method, c.path, f.o.Key, c.body)
			inpCheck(t, c, r)
		})
	}

	// Values the patterns must let through.
	for _, v := range []string{"1.2.3", "1.2.3-beta", "1.2.3+build", "10.20.30-rc.1+build.5"} {
		r := f.e.Admin(t, http.MethodPut, user, f.o.Key, map[string]any{"last_visited_dashboard_version": v})
		if r.Status != http.StatusOK {
			t.Errorf("version %q: %d %s", v, r.Status, r.Raw)
			continue
		}
		if got := r.Obj(t)["user"].(map[string]any)["last_visited_dashboard_version"]; got != v {
			t.Errorf("version %q stored as %v", v, got)
		}
	}
	ok := map[string]any{"anomaly_events_digest_hours": 168, "anomaly_events_digest_interval_count": 1,
		"anomaly_events_digest_day_of_week": 7, "anomaly_events_digest_at_time": "23:59",
		"anomaly_events_frequency": "digest", "anomaly_events_digest_interval_unit": "week"}
	r := f.e.Admin(t, http.MethodPut, user, f.o.Key, map[string]any{"notification_config": ok})
	if r.Status != http.StatusOK {
		t.Fatalf("boundary notification config: %d %s", r.Status, r.Raw)
	}
	got := r.Obj(t)["user"].(map[string]any)["notification_config"].(map[string]any)
	for k, v := range ok {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("notification_config.%s = %v, want %v", k, got[k], v)
		}
	}
	if r := f.e.Admin(t, http.MethodPost, "/isps", f.o.Key, map[string]any{"name": "Lower", "country": "at", "type": "mobile"}); r.Status != http.StatusCreated {
		t.Errorf("lower-case country: %d %s", r.Status, r.Raw)
	}
	if r := f.e.Admin(t, http.MethodPost, "/service_credentials", f.o.Key, map[string]any{"name": "ok-svc", "service": "breitband_2"}); r.Status != http.StatusCreated {
		t.Errorf("valid service: %d %s", r.Status, r.Raw)
	}
}

// TestRESTUnknownPathsAnswerJSON covers the paths outside every route table.
func TestRESTUnknownPathsAnswerJSON(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "paths")
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/no/such/path", 404},
		{http.MethodGet, server.AdminBase, 404},
		{http.MethodGet, server.AdminBase + "/", 404},
		{http.MethodPut, "/healthz", 405},
	} {
		r := e.Do(t, c.method, c.path, o.Key, nil)
		if r.Status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.Status, c.status, r.Raw)
			continue
		}
		inpCheck(t, inpCase{method: c.method, path: c.path, status: c.status}, r)
	}
}

// inpSend posts body to the admin API; chunked hides its length from the
// server (Transfer-Encoding: chunked).
func inpSend(t *testing.T, e *apitest.Env, key, path string, body string, chunked bool) *apitest.Response {
	t.Helper()
	var rdr io.Reader = strings.NewReader(body)
	if chunked {
		rdr = io.MultiReader(rdr) // not a type net/http can size
	}
	req, err := http.NewRequest(http.MethodPost, e.URL+server.AdminBase+path, rdr)
	if err != nil {
		t.Fatal(err)
	}
	if chunked && req.ContentLength != 0 {
		t.Fatalf("chunked request has a length %d", req.ContentLength)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-KEY", key)
	return apitest.Send(t, nil, req)
}

func TestRESTBodySizeLimit(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "size")
	obj := `{"name": "Big", "country": "DE", "type": "fixed"}`
	exact := obj + strings.Repeat(" ", limits.MaxBodyBytes-len(obj))
	over := `{"name": "` + strings.Repeat("x", limits.MaxBodyBytes) + `", "country": "DE", "type": "fixed"}`
	for _, chunked := range []bool{false, true} {
		name := map[bool]string{false: "content-length", true: "chunked"}[chunked]
		t.Run(name, func(t *testing.T) {
			r := inpSend(t, e, o.Key, "/isps", exact, chunked)
			if r.Status != http.StatusCreated {
				t.Errorf("body of exactly %d bytes: %d %.200s", len(exact), r.Status, r.Raw)
			}
			r = inpSend(t, e, o.Key, "/isps", exact+" ", chunked)
			inpCheck(t, inpCase{method: http.MethodPost, path: "/isps", status: http.StatusRequestEntityTooLarge}, r)
			r = inpSend(t, e, o.Key, "/isps", over, chunked)
			inpCheck(t, inpCase{method: http.MethodPost, path: "/isps", status: http.StatusRequestEntityTooLarge}, r)
		})
	}
	// Nothing over the limit was created.
	r := e.Admin(t, http.MethodGet, "/isps", o.Key, nil)
	if n := len(r.Obj(t)["isps"].([]any)); n != 2 {
		t.Errorf("%d ISPs after the size tests, want 2 (one per exact-size request)", n)
	}
}

func TestRESTDuplicateUserEmail(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "dupe")
	body := map[string]any{"email": "twin@example.com", "username": "twin", "role": "viewer"}
	if r := e.Admin(t, http.MethodPost, "/client_admin_users", o.Key, body); r.Status != http.StatusCreated {
		t.Fatalf("first user: %d %s", r.Status, r.Raw)
	}
	for _, b := range []map[string]any{
		{"email": "twin@example.com", "username": "twin2", "role": "viewer"},
		{"email": "TWIN@Example.com", "username": "twin3", "role": "viewer"},
		{"email": "other@example.com", "username": "Twin", "role": "viewer"},
	} {
		r := e.Admin(t, http.MethodPost, "/client_admin_users", o.Key, b)
		inpCheck(t, inpCase{method: http.MethodPost, path: "/client_admin_users", status: http.StatusConflict}, r)
	}
	// Another data owner may use the same address.
	o2 := e.NewOwner(t, "dupe")
	if r := e.Admin(t, http.MethodPost, "/client_admin_users", o2.Key, body); r.Status != http.StatusCreated {
		t.Errorf("same e-mail in another data owner: %d %s", r.Status, r.Raw)
	}
	g := e.GraphQL(t, o.Key, `mutation($input: UserCreateInput!) { userCreate(input: $input) { id } }`,
		map[string]any{"input": map[string]any{"email": "twin@example.com", "username": "twin4", "role": "viewer"}})
	if g.Code() != "CONFLICT" {
		t.Errorf("graphql duplicate e-mail: code %q, want CONFLICT: %s", g.Code(), g.Raw)
	}
}

// inpGQLCase is one invalid input through GraphQL and the camelCase field
// extensions.errors must name.
type inpGQLCase struct {
	name  string
	query string
	vars  map[string]any
	field string // "" when extensions.errors is not expected
}

func TestGraphQLBadInput(t *testing.T) {
	f := newInpFixture(t)
	const (
		ispCreate    = `mutation($input: IspCreateInput!) { ispCreate(input: $input) { id } }`
		ispUpdate    = `mutation($id: Int!, $input: IspUpdateInput!) { ispUpdate(id: $id, input: $input) { id } }`
		userCreate   = `mutation($input: UserCreateInput!) { userCreate(input: $input) { id } }`
		userUpdate   = `mutation($id: Int!, $input: UserUpdateInput!) { userUpdate(id: $id, input: $input) { id } }`
		capCreate    = `mutation($input: CapabilityCreateInput!) { capabilityCreate(input: $input) { id } }`
		keyCreate    = `mutation($input: ClientAdminApiKeyCreateInput!) { clientAdminApiKeyCreate(input: $input) { id } }`
		credCreate   = `mutation($input: ServiceCredentialCreateInput!) { serviceCredentialCreate(input: $input) { id } }`
		regKeyCreate = `mutation($input: RegistrationKeyCreateInput!) { registrationKeyCreate(input: $input) { id } }`
	)
	cr := f.e.Admin(t, http.MethodPost, "/capabilities", f.o.Key, map[string]any{"name": "gql-input"})
	if cr.Status != http.StatusCreated {
		t.Fatalf("fixture capability: %d %s", cr.Status, cr.Raw)
	}
	capID := apitest.ID(t, cr.Obj(t)["capability"])
	in := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"input": m}
	}
	upd := func(key string, v any) map[string]any {
		return map[string]any{"id": f.userID, "input": map[string]any{"notificationConfig": map[string]any{key: v}}}
	}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	cases := []inpGQLCase{
		{name: "missing name", query: ispCreate, vars: in("country", "DE", "type", "fixed"), field: "name"},
		{name: "missing email", query: userCreate, vars: in("username", "u", "role", "viewer"), field: "email"},
		{name: "missing role", query: userCreate, vars: in("username", "u", "email", "u@example.com"), field: "role"},
		{name: "name as boolean", query: ispCreate, vars: in("name", true, "country", "DE", "type", "fixed"), field: "name"},
		{name: "name as object", query: ispCreate, vars: in("name", map[string]any{"x": 1}, "country", "DE", "type", "fixed"), field: "name"},
		{name: "isVpn as string", query: ispCreate, vars: in("name", "x", "country", "DE", "type", "fixed", "isVpn", "yes"), field: "isVpn"},
		{name: "allowedMeasurementTypes of booleans", query: capCreate, vars: in("name", "c", "allowedMeasurementTypes", []any{"web", true}), field: "allowedMeasurementTypes[1]"},
		{name: "nested integer as text", query: userUpdate, vars: upd("anomalyEventsDigestHours", "many"), field: "notificationConfig.anomalyEventsDigestHours"},
		{name: "nested object as string", query: userUpdate, vars: map[string]any{"id": f.userID, "input": map[string]any{"notificationConfig": "all"}}, field: "notificationConfig"},
		{name: "effectiveRole unknown", query: keyCreate, vars: in("effectiveRole", "superuser"), field: "effectiveRole"},
		{name: "role unknown", query: userCreate, vars: in("username", "u", "email", "u@example.com", "role", "root"), field: "role"},
		{name: "unknown field", query: ispCreate, vars: in("name", "x", "country", "DE", "type", "fixed", "colour", "red"), field: "colour"},
		{name: "unknown nested field", query: userUpdate, vars: upd("anomalyEventsDigestMinutes", 5), field: "notificationConfig.anomalyEventsDigestMinutes"},
		{name: "id as text", query: userUpdate, vars: map[string]any{"id": "me", "input": map[string]any{}}, field: "id"},
		{name: "digest hours 0", query: userUpdate, vars: upd("anomalyEventsDigestHours", 0), field: "notificationConfig.anomalyEventsDigestHours"},
		{name: "digest hours 169", query: userUpdate, vars: upd("anomalyEventsDigestHours", 169), field: "notificationConfig.anomalyEventsDigestHours"},
		{name: "interval count 169", query: userUpdate, vars: upd("anomalyEventsDigestIntervalCount", 169), field: "notificationConfig.anomalyEventsDigestIntervalCount"},
		{name: "day of week 8", query: userUpdate, vars: upd("anomalyEventsDigestDayOfWeek", 8), field: "notificationConfig.anomalyEventsDigestDayOfWeek"},
		{name: "at time 24:00", query: userUpdate, vars: upd("anomalyEventsDigestAtTime", "24:00"), field: "notificationConfig.anomalyEventsDigestAtTime"},
		{name: "at time 7:5", query: userUpdate, vars: upd("anomalyEventsDigestAtTime", "7:5"), field: "notificationConfig.anomalyEventsDigestAtTime"},
		{name: "frequency weekly", query: userUpdate, vars: upd("anomalyEventsFrequency", "weekly"), field: "notificationConfig.anomalyEventsFrequency"},
		{name: "interval unit month", query: userUpdate, vars: upd("anomalyEventsDigestIntervalUnit", "month"), field: "notificationConfig.anomalyEventsDigestIntervalUnit"},
		{name: "dashboard version 1.2", query: userUpdate, vars: map[string]any{"id": f.userID, "input": map[string]any{"lastVisitedDashboardVersion": "1.2"}}, field: "lastVisitedDashboardVersion"},
		{name: "country DEU", query: ispCreate, vars: in("name", "x", "country", "DEU", "type", "fixed"), field: "country"},
		{name: "country DEU on update", query: ispUpdate, vars: map[string]any{"id": f.ispID, "input": map[string]any{"country": "DEU"}}, field: "country"},
		{name: "service Not Valid!", query: credCreate, vars: in("name", "svc", "service", "Not Valid!"), field: "service"},
		{name: "validUntil in the past", query: keyCreate, vars: in("validUntil", past), field: "validUntil"},
		{name: "numRegistrationsLeft beyond the column", query: regKeyCreate,
			vars: in("capabilityId", capID, "numRegistrationsLeft", int64(3_000_000_000)), field: "numRegistrationsLeft"},
		// A NUL reaches the database from GraphQL; it is refused as bad input
		// (without a field name: the store cannot tell which).
		{name: "NUL in a string", query: ispCreate, vars: in("name", "a\x00b", "country", "DE", "type", "fixed")},
		{name: "NUL in a filter", query: `query($name: String) { isps(filter: {name: $name}) { id } }`, vars: map[string]any{"name": "\x00"}},
	}
	// gqlparser's variable coercion lets a JSON number through for a String
	// (json.Number is a string kind); the strict String scalar rejects it, as
	// REST does.
	strictStrings := []inpGQLCase{
		{name: "name as number", query: ispCreate, vars: in("name", 7, "country", "DE", "type", "fixed"), field: "name"},
		{name: "allowedMeasurementTypes of numbers", query: capCreate, vars: in("name", "c", "allowedMeasurementTypes", []any{1}), field: "allowedMeasurementTypes[0]"},
	}
	for _, c := range append(cases, strictStrings...) {
		t.Run(c.name, func(t *testing.T) {
			g := f.e.GraphQL(t, f.o.Key, c.query, c.vars)
			if g.Status >= 500 {
				t.Fatalf("status %d: %s", g.Status, g.Raw)
			}
			if len(g.Errors) == 0 {
				t.Fatalf("no error: %s", g.Raw)
			}
			if g.Code() != "BAD_USER_INPUT" {
				t.Fatalf("code %q, want BAD_USER_INPUT: %s", g.Code(), g.Raw)
			}
			if c.field == "" {
				return
			}
			fields, ok := g.Errors[0].Extensions["errors"].(map[string]any)
			if !ok {
				t.Fatalf("extensions.errors missing: %s", g.Raw)
			}
			if msgs, ok := fields[c.field].([]any); !ok || len(msgs) == 0 {
				t.Fatalf("extensions.errors does not name %q: %s", c.field, g.Raw)
			}
		})
	}
	// The accepted version forms pass through GraphQL too.
	for _, v := range []string{"1.2.3-beta", "1.2.3+build"} {
		g := f.e.GraphQL(t, f.o.Key, userUpdate, map[string]any{"id": f.userID, "input": map[string]any{"lastVisitedDashboardVersion": v}})
		if len(g.Errors) > 0 {
			t.Errorf("version %q: %s", v, g.Raw)
		}
	}
}
