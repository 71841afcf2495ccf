package detector

import (
	"context"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// AnalyzeOptions narrow a replay (fleetgraph analyze).
type AnalyzeOptions struct {
	// Since: only measurements created at or after it (zero: all); the
	// states start afresh there.
	Since time.Time
	// RuleID: only this rule (empty: every enabled rule).
	RuleID string
	// Progress is called after each client (may be nil).
	Progress func(done, clients, measurements int)
}

// AnalyzeSummary is what a replay did.
type AnalyzeSummary struct {
	Clients, Measurements int
}

// Analyze replays detection over the data owner's stored measurements,
// client by client, each in time order from fresh states: deterministic
// and idempotent (the same data, rules and overrides make the same
// episodes, ids included). It does not sweep at the current time: the
// periodic sweep does (so two runs agree whenever they run).
func Analyze(ctx context.Context, st *store.Store, ownerID int64, opt AnalyzeOptions) (AnalyzeSummary, error) {
	var sum AnalyzeSummary
	clients, err := st.MeasurementClients(ctx, ownerID, opt.Since)
	if err != nil {
		return sum, err
	}
	start := func(b store.AnalyzerBatch) (store.Replay, error) {
		b.States = nil // afresh
		j, err := NewJudge(b)
		if err != nil {
			return store.Replay{}, err
		}
		return store.Replay{Observe: j.Observe, Result: j.Result}, nil
	}
	for i, c := range clients {
		n, err := st.ReplayClient(ctx, ownerID, c, opt.Since, opt.RuleID, start)
		if err != nil {
			return sum, err
		}
		sum.Clients++
		sum.Measurements += n
		if opt.Progress != nil {
			opt.Progress(i+1, len(clients), sum.Measurements)
		}
	}
	return sum, nil
}

// Drain judges the data owner's inbox now, in this process (fleetgraph
// import, after its documents are stored): what the River jobs would do,
// under the same locks, so that a server working the same clients judges
// nothing twice. It answers how many clients it judged.
func Drain(ctx context.Context, st *store.Store, ownerID int64) (int, error) {
	clients, err := st.InboxClients(ctx, ownerID)
	if err != nil {
		return 0, err
	}
	for _, c := range clients {
		for more := true; more; {
			if more, err = st.AnalyzeInbox(ctx, ownerID, c, batchSize, judgeBatch, nil); err != nil {
				return 0, err
			}
		}
	}
	return len(clients), nil
}
