package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// TestCancelledStatementStopsOnServer: when a request's context ends, its
// statement stops on the server too (a cancel request), instead of running
// for nobody after the client gave up on the socket.
func TestCancelledStatementStopsOnServer(t *testing.T) {
	e := apitest.Get(t)
	tag := "cancel-probe-" + strings.ReplaceAll(t.Name(), "/", "-")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Store.Pool().Exec(ctx, "SELECT pg_sleep(30) /* "+tag+" */")
	if err == nil {
		t.Fatal("the statement outlived its context")
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Fatalf("the cancelled statement returned after %v", waited)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		var running int
		if err := e.Store.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`, tag).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the statement still runs on the server 2 s after its context ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
