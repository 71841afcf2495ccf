package store_test

import (
	"context"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestCheckInCommitsAsynchronouslyAlone: the check-in's batch turns
// synchronous_commit off for its own transaction only, and its reads run
// on generic plans; the pooled
// connection's next transaction (a report's documents) commits
// synchronously again.
func TestCheckInCommitsAsynchronouslyAlone(t *testing.T) {
	ctx := context.Background()
	e := apitest.Get(t)
	st, err := store.Open(ctx, e.DatabaseURL, store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o := e.NewOwner(t, "checkin-commit")
	probe := o.NewProbe(t, o.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey)
	var b store.Batch
	var seen []bool
	var seenErr error
	var modes []string
	store.QueueCheckIn(&b, o.ID, probe.ID, nil, nil, func(offline []bool, err error) { seen, seenErr = offline, err })
	store.Queue(&b, store.SettingRead("plan_cache_mode"), func(rs []string, _ error) { modes = rs })
	if err := st.Send(ctx, &b); err != nil || seenErr != nil || len(seen) != 1 || seen[0] {
		t.Fatalf("check-in: %v, %v, %v", err, seenErr, seen)
	}
	// The reads queued after the check-in (its delivered configs) run on
	// generic plans, as every batch of reads does.
	if len(modes) != 1 || modes[0] != "force_generic_plan" {
		t.Errorf("a read queued after the check-in ran with plan_cache_mode %v, want force_generic_plan", modes)
	}
	var setting string
	if err := st.Pool().QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&setting); err != nil || setting != "on" {
		t.Errorf("after a check-in the connection's synchronous_commit is %q (%v), want on", setting, err)
	}
}
