package apitest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// ESRequest is one request the fake Elasticsearch received.
type ESRequest struct {
	Method, Path, ContentType string
	Query                     url.Values
	Body                      []byte
}

// ESAnswer scripts the fake Elasticsearch: the status and body it answers
// to a request.
type ESAnswer func(r ESRequest) (int, string)

// FakeES answers like Elasticsearch: GET / with the product header and a
// version, every other request through its answer (200 {} when nil), and
// records every other request exactly as sent so that tests check them.
type FakeES struct {
	URL    string
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []ESRequest
	answer ESAnswer
}

// NewFakeES starts a fake Elasticsearch, closed when the test ends.
func NewFakeES(t testing.TB, answer ESAnswer) *FakeES {
	t.Helper()
	f := &FakeES{answer: answer}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// Close stops the fake (Elasticsearch goes down).
func (f *FakeES) Close() { f.srv.Close() }

// Requests returns the requests received so far, oldest first.
func (f *FakeES) Requests() []ESRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ESRequest(nil), f.reqs...)
}

// SetAnswer replaces the script for the requests to come.
func (f *FakeES) SetAnswer(a ESAnswer) {
	f.mu.Lock()
	f.answer = a
	f.mu.Unlock()
}

// ServeHTTP records and answers one request.
func (f *FakeES) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet && r.URL.Path == "/" {
		_, _ = io.WriteString(w, `{"name":"fake","cluster_name":"fake","version":{"number":"8.19.7","build_flavor":"default"},"tagline":"You Know, for Search"}`)
		return
	}
	rec := ESRequest{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Query: r.URL.Query(), Body: body}
	f.mu.Lock()
	f.reqs = append(f.reqs, rec)
	answer := f.answer
	f.mu.Unlock()
	status, out := http.StatusOK, `{}`
	if answer != nil {
		status, out = answer(rec)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}
