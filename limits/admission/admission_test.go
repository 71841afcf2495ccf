package admission

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// One owner gets at most its share; another owner still gets in while the
// first is at its share; nobody gets past the slots in all; a refused
// caller gets a 429 after the wait; a place given back is taken again.
func TestGate(t *testing.T) {
	ctx := context.Background()
	g := New(3, 2, 50*time.Millisecond)
	a1, err := g.Enter(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := g.Enter(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = g.Enter(ctx, 1)
	var busy *Busy
	if !errors.As(err, &busy) || apierr.ClassOf(err).Status != http.StatusTooManyRequests || busy.RetryAfter <= 0 {
		t.Fatalf("third place of owner 1: %v", err)
	}
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Fatalf("refused after %v, without waiting", waited)
	}
	b1, err := g.Enter(ctx, 2)
	if err != nil {
		t.Fatalf("owner 2 while owner 1 is at its share: %v", err)
	}
	if _, err := g.Enter(ctx, 2); !errors.As(err, &busy) {
		t.Fatalf("past the slots in all: %v", err)
	}
	a1()
	a1() // leaving twice gives back one place
	if _, err := g.Enter(ctx, 2); err != nil {
		t.Fatalf("after owner 1 left one place: %v", err)
	}
	if _, err := g.Enter(ctx, 3); !errors.As(err, &busy) {
		t.Fatal("a place was given back twice")
	}
	a2()
	b1()
}

// A waiting caller is admitted as soon as a place is free, and one whose
// context ends stops waiting with the context's error.
func TestGateWaits(t *testing.T) {
	g := New(1, 1, time.Second)
	leave, _ := g.Enter(context.Background(), 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l, err := g.Enter(context.Background(), 2)
		if err != nil {
			t.Errorf("waiting caller: %v", err)
			return
		}
		l()
	}()
	time.Sleep(20 * time.Millisecond)
	leave()
	wg.Wait()

	leave, _ = g.Enter(context.Background(), 1)
	defer leave()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Enter(ctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v", err)
	}
	var nilGate *Gate
	if l, err := nilGate.Enter(context.Background(), 1); err != nil || l == nil {
		t.Fatal("a nil gate admits")
	}
}
