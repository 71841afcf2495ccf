package rest

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A stream's later page runs under a deadline of its own, not the
// request's, with the request's values, and ends when the client goes away.
func TestPageRequestRenewsTheDeadline(t *testing.T) {
	type key struct{}
	client, leave := context.WithCancel(context.Background())
	defer leave()
	reqCtx, cancel := context.WithTimeout(context.WithValue(client, key{}, "principal"), time.Millisecond)
	defer cancel()
	reqCtx = WithStreamDeadline(reqCtx, StreamDeadline{Client: client, Each: time.Minute})
	<-reqCtx.Done() // the request's own deadline has passed
	r, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, "/", nil)

	pr, done := pageRequest(r)
	defer done()
	ctx := pr.Context()
	if ctx.Err() != nil {
		t.Fatalf("page context ended: %v", ctx.Err())
	}
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < 50*time.Second {
		t.Errorf("page deadline %v (set %v), want about a minute from now", dl, ok)
	}
	if ctx.Value(key{}) != "principal" {
		t.Errorf("page context lost the request's values")
	}
	leave()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("page context still running after the client left")
	}

	plain, _ := http.NewRequest(http.MethodGet, "/", nil)
	if pr, done := pageRequest(plain); pr != plain {
		t.Errorf("without a StreamDeadline the request is used as it is")
	} else {
		done()
	}
}
