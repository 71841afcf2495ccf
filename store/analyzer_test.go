package store_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Two clients' episodes of one rule and pass that start in the same second,
// judged at the same time (two workers): the second waits until the first's
// episode is committed and takes the next second's id, never the same one.
func TestEpisodeIDsOfClientsJudgedAtOnceDiffer(t *testing.T) {
	ctx := context.Background()
	e := apitest.Get(t)
	o := e.NewOwner(t, "episode-ids")
	a, b := o.NewClient(t, store.NewClient{}), o.NewClient(t, store.NewClient{})
	at := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	o.InsertDocuments(t, vocab.KindMeasurement,
		apitest.AnalyzerDoc("ep-a", a.UUID, "VideoMeasurement", "youtube", at, map[string]any{"initial_loading_time": 600000}),
		apitest.AnalyzerDoc("ep-b", b.UUID, "VideoMeasurement", "youtube", at.Add(300*time.Millisecond), map[string]any{"initial_loading_time": 600000}))
	id := "video-initial-loading::spike::" + strconv.FormatInt(at.Unix(), 10)
	judge := func(client string, first time.Time) func(store.AnalyzerBatch) (store.AnalyzerResult, error) {
		return func(store.AnalyzerBatch) (store.AnalyzerResult, error) {
			when := first.Format("2006-01-02T15:04:05.000Z")
			return store.AnalyzerResult{Episodes: []map[string]any{{"id": id, "rule_id": "video-initial-loading", "client_uuid": client,
				"measurement_type": "VideoMeasurement", "subject": "youtube", "metric": "initial_loading_time", "detection_pass": "spike",
				"severity": "critical", "status": "new", "first_seen_at": when, "last_seen_at": when, "created_at": when,
				"value": 600000, "detected_by": "analyzer"}}}, nil
		}
	}

	// A places its episode and, before it commits, B is judged.
	placed, bDone := make(chan struct{}), make(chan error, 1)
	aDone := make(chan error, 1)
	go func() {
		_, err := e.Store.AnalyzeInbox(ctx, o.ID, a.UUID, 100, judge(a.UUID, at), func(pgx.Tx) error {
			close(placed)
			waitForALockWaiter(ctx, e, bDone)
			return nil
		})
		aDone <- err
	}()
	<-placed
	go func() {
		_, err := e.Store.AnalyzeInbox(ctx, o.ID, b.UUID, 100, judge(b.UUID, at.Add(300*time.Millisecond)), nil)
		bDone <- err
	}()
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}

	rows, _ := e.Store.Pool().Query(ctx, `SELECT doc_id, client_uuid::text FROM documents
		WHERE data_owner_id = $1 AND kind = 'anomaly_event' ORDER BY doc_id, client_uuid`, o.ID)
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var doc, client string
		err := r.Scan(&doc, &client)
		return doc + " " + client, err
	})
	next := "video-initial-loading::spike::" + strconv.FormatInt(at.Unix()+1, 10)
	if want := []string{id + " " + a.UUID, next + " " + b.UUID}; err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored episodes %v (%v), want %v", got, err, want)
	}
}

// waitForALockWaiter returns once a transaction of this database waits for
// an advisory lock, or done has a value (it was never blocked), or after 5 s.
func waitForALockWaiter(ctx context.Context, e *apitest.Env, done chan error) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			return
		default:
		}
		var n int
		_ = e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
		if n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEpisodeIDsStayApartOneAfterAnother: clients judged one after another
// whose episodes start in neighbouring seconds each get an id of their
// own, also when an earlier episode was moved onto a later one's second,
// and so do 70 clients' episodes of one second judged at once.
func TestEpisodeIDsStayApartOneAfterAnother(t *testing.T) {
	ctx := context.Background()
	e := apitest.Get(t)
	o := e.NewOwner(t, "episode-ids-seq")
	at := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	firsts := []time.Duration{0, 300 * time.Millisecond, 600 * time.Millisecond, 1200 * time.Millisecond, 1500 * time.Millisecond, 2100 * time.Millisecond}
	for i := range 70 { // more than the old bound of 60 ids past an episode's own, all in one second
		firsts = append(firsts, 3*time.Second+time.Duration(i)*13*time.Millisecond)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(firsts))
	for i, d := range firsts {
		c := o.NewClient(t, store.NewClient{})
		first := at.Add(d)
		o.InsertDocuments(t, vocab.KindMeasurement,
			apitest.AnalyzerDoc(fmt.Sprintf("seq-%d", i), c.UUID, "VideoMeasurement", "youtube", first, map[string]any{"initial_loading_time": 600000}))
		id := "video-initial-loading::spike::" + strconv.FormatInt(first.Unix(), 10)
		when := first.Format("2006-01-02T15:04:05.000Z")
		judge := func() {
			defer wg.Done()
			_, err := e.Store.AnalyzeInbox(ctx, o.ID, c.UUID, 100, func(store.AnalyzerBatch) (store.AnalyzerResult, error) {
				return store.AnalyzerResult{Episodes: []map[string]any{{"id": id, "rule_id": "video-initial-loading", "client_uuid": c.UUID,
					"measurement_type": "VideoMeasurement", "subject": "youtube", "metric": "initial_loading_time", "detection_pass": "spike",
					"severity": "critical", "status": "new", "first_seen_at": when, "last_seen_at": when, "created_at": when,
					"value": 600000, "detected_by": "analyzer"}}}, nil
			}, nil)
			errs <- err
		}
		wg.Add(1)
		if i < 6 {
			judge() // one after another
		} else {
			go judge() // at once
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n, ids int
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*), count(DISTINCT doc_id) FROM documents WHERE data_owner_id = $1 AND kind = 'anomaly_event'`,
		o.ID).Scan(&n, &ids); err != nil || n != len(firsts) || ids != len(firsts) {
		t.Errorf("%d episodes stored under %d ids (%v), want %d under as many", n, ids, err, len(firsts))
	}
}

// TestAnalyzeInboxIsFiveRoundTrips: a detection step that judges
// measurements and saves states takes five round trips to PostgreSQL:
// begin; the client's lock, inbox, states, rules and overrides; the
// measurements; the states saved and the inbox rows consumed; commit (ten
// before they were sent together).
func TestAnalyzeInboxIsFiveRoundTrips(t *testing.T) {
	ctx := context.Background()
	e := apitest.Get(t)
	o := e.NewOwner(t, "analyze-trips")
	c := o.NewClient(t, store.NewClient{})
	at := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	o.InsertDocuments(t, vocab.KindMeasurement,
		apitest.AnalyzerDoc("trip-1", c.UUID, "VideoMeasurement", "youtube", at, map[string]any{"initial_loading_time": 600}),
		apitest.AnalyzerDoc("trip-2", c.UUID, "VideoMeasurement", "youtube", at.Add(time.Second), map[string]any{"initial_loading_time": 700}))
	var judged int
	judge := func(b store.AnalyzerBatch) (store.AnalyzerResult, error) {
		judged = len(b.Measurements)
		if len(b.Rules) == 0 {
			return store.AnalyzerResult{}, fmt.Errorf("no rules read")
		}
		return store.AnalyzerResult{States: []store.DetectorState{{Key: store.StateKey{RuleID: "video-initial-loading", Subject: "youtube"},
			State: []byte("s"), LastAt: at.Add(time.Second)}}}, nil
	}
	before := e.Counter.RoundTrips()
	more, err := e.Store.AnalyzeInbox(store.Counted(ctx), o.ID, c.UUID, 100, judge, nil)
	if err != nil || more {
		t.Fatalf("more %v, err %v", more, err)
	}
	if trips := e.Counter.RoundTrips() - before; trips != 5 {
		t.Errorf("%d round trips, want 5", trips)
	}
	if judged != 2 {
		t.Errorf("judged %d measurements, want 2", judged)
	}
	var inbox, states int
	err = e.Store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM analyzer_inbox WHERE data_owner_id = $1 AND client_uuid = $2),
		(SELECT count(*) FROM analyzer_states WHERE data_owner_id = $1 AND client_uuid = $2)`, o.ID, c.UUID).Scan(&inbox, &states)
	if err != nil {
		t.Fatal(err)
	}
	if inbox != 0 || states != 1 {
		t.Errorf("%d inbox rows left and %d states saved, want 0 and 1", inbox, states)
	}
}
