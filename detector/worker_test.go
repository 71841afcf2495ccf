package detector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/store"
)

// TestJobsFetchAheadAndJudgeWithinTheBound: River runs twice as many of
// the analyzer's jobs as judge at once; a job fetched while every token
// is taken waits for one (without touching the database) and gives up
// when its context ends.
func TestJobsFetchAheadAndJudgeWithinTheBound(t *testing.T) {
	j := New(Config{Workers: 3})
	if q, n := j.Queue(); q != store.AnalyzerQueue || n != 6 {
		t.Fatalf("Queue() = %q, %d; want %q, 6 (3 judging, 3 fetched ahead)", q, n, store.AnalyzerQueue)
	}
	for range 3 {
		j.judging <- struct{}{}
	}
	w := &analyzeWorker{j: j}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := w.Work(ctx, &river.Job[store.AnalyzeArgs]{Args: store.AnalyzeArgs{DataOwnerID: 1, ClientUUID: "c"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Work with every token taken: %v, want the context's deadline", err)
	}
	if waited := time.Since(start); waited < 90*time.Millisecond {
		t.Errorf("Work returned after %s, want it to wait for a token until its context ended", waited)
	}
	if len(j.judging) != 3 {
		t.Errorf("%d tokens taken after Work gave up, want the 3 taken before", len(j.judging))
	}
}
