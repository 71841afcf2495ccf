package clientapi

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLaneAdmitsAtMostItsPlaces: registrations beyond registrationLane wait
// in the server, and a waiting request whose context ends gives up.
func TestLaneAdmitsAtMostItsPlaces(t *testing.T) {
	var l lane
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if !l.enter(context.Background()) {
				t.Error("enter failed without a deadline")
				return
			}
			n := in.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			in.Add(-1)
			l.leave()
		})
	}
	wg.Wait()
	if m := most.Load(); m > registrationLane {
		t.Errorf("%d at once, want at most %d", m, registrationLane)
	}
	for range registrationLane {
		l.enter(context.Background())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if l.enter(ctx) {
		t.Error("a full lane admitted a request whose context had ended")
	}
}
