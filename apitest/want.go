package apitest

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Eventually polls cond every 20 ms until it holds, failing the test with
// what after 3 s: far below the auth caches' 30 s lifetime, so a cached
// entry that changes within it was changed by a notification.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 3 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WantStatus fails the test unless r has status, and returns the decoded
// body.
func WantStatus(t testing.TB, r *Response, status int) any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %.300s", r.Status, status, r.Raw)
	}
	return r.JSON
}

// WantEnvelope asserts the status and the one-key envelope {key: ...} and
// returns the enveloped value.
func WantEnvelope(t testing.TB, r *Response, status int, key string) any {
	t.Helper()
	WantStatus(t, r, status)
	obj := r.Obj(t)
	if _, ok := obj[key]; !ok || len(obj) != 1 {
		t.Fatalf("want the envelope {%q: ...}, got %s", key, r.Raw)
	}
	return obj[key]
}

// WantMessage asserts status and a JSON {"message"} body that mentions
// mention, and returns the message.
func WantMessage(t testing.TB, r *Response, status int, mention string) string {
	t.Helper()
	WantStatus(t, r, status)
	msg, _ := r.Obj(t)["message"].(string)
	if !strings.Contains(msg, mention) {
		t.Errorf("message %q does not mention %q", msg, mention)
	}
	return msg
}

// Want400 is WantMessage for a 400.
func Want400(t testing.TB, r *Response, mention string) string {
	t.Helper()
	return WantMessage(t, r, http.StatusBadRequest, mention)
}

// WantError reports (without stopping the test) unless r has status, a
// JSON content type and a JSON object body with a non-empty "message".
func WantError(t testing.TB, r *Response, status int, what string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.Status, status, r.Raw)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: %d content type %q, want application/json: %s", what, status, ct, r.Raw)
		return
	}
	obj, ok := r.JSON.(map[string]any)
	if !ok {
		t.Errorf("%s: %d body is not a JSON object: %s", what, status, r.Raw)
		return
	}
	if msg, _ := obj["message"].(string); msg == "" {
		t.Errorf("%s: %d body has no message: %s", what, status, r.Raw)
	}
}

// WantRefused asserts a REST answer is status with a body that is exactly
// {"message": "..."} and does not echo the presented key.
func WantRefused(t testing.TB, r *Response, status int, key string) {
	t.Helper()
	body, _ := WantStatus(t, r, status).(map[string]any)
	if body == nil {
		t.Fatalf("body is not a JSON object: %s", r.Raw)
	}
	if len(body) != 1 {
		t.Errorf("error body has keys beyond \"message\": %s", r.Raw)
	}
	if msg, _ := body["message"].(string); msg == "" {
		t.Errorf("error body has no message: %s", r.Raw)
	}
	if key != "" && bytes.Contains(r.Raw, []byte(key)) {
		t.Errorf("error body echoes the presented key: %s", r.Raw)
	}
}

// WantForbidden is WantError for a 403.
func WantForbidden(t testing.TB, r *Response) {
	t.Helper()
	WantError(t, r, http.StatusForbidden, "forbidden")
}

// WantNotFound is WantError for a 404.
func WantNotFound(t testing.TB, r *Response, what string) {
	t.Helper()
	WantError(t, r, http.StatusNotFound, what)
}

// IDs asserts a 200 JSON array (a listing, an export, a source-only search)
// and returns its items' ids.
func IDs(t testing.TB, r *Response) []string {
	t.Helper()
	WantStatus(t, r, http.StatusOK)
	if _, ok := r.JSON.([]any); !ok {
		t.Fatalf("body is not a JSON array: %.300s", r.Raw)
	}
	return Field(t, r.JSON, "id")
}

// HitIDs asserts a 200 search envelope and returns its hits' _ids.
func HitIDs(t testing.TB, r *Response) []string {
	t.Helper()
	WantStatus(t, r, http.StatusOK)
	hits, _ := r.Obj(t)["hits"].(map[string]any)
	return Field(t, hits["hits"], "_id")
}

// AdminCreate posts body to path of the Administration API, wants a 201
// with a one-key envelope {"thing": {...}} and returns the record.
func (e *Env) AdminCreate(t testing.TB, key, path string, body any) map[string]any {
	t.Helper()
	r := e.Admin(t, http.MethodPost, path, key, body)
	WantStatus(t, r, http.StatusCreated)
	obj := r.Obj(t)
	if len(obj) != 1 {
		t.Fatalf("POST %s: want a one-key envelope, got %s", path, r.Raw)
	}
	for _, v := range obj {
		return Object(t, v)
	}
	return nil
}
