package store_test

import (
	"context"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestCheckInCommitsAsynchronouslyAlone: the check-in's batch turns
// synchronous_commit off for its own transaction only; the pooled
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
	store.QueueCheckIn(&b, o.ID, probe.ID, nil, nil, func(offline []bool, err error) { seen, seenErr = offline, err })
	if err := st.Send(ctx, &b); err != nil || seenErr != nil || len(seen) != 1 || seen[0] {
		t.Fatalf("check-in: %v, %v, %v", err, seenErr, seen)
	}
	var setting string
	if err := st.Pool().QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&setting); err != nil || setting != "on" {
		t.Errorf("after a check-in the connection's synchronous_commit is %q (%v), want on", setting, err)
	}
}
