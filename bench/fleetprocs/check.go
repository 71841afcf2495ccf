package fleetprocs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fleetgraph/fleetgraph/jobs"
)

// event is an event row of the data owner.
type event struct {
	id, typ, client string
	seq             int64
}

type eventKey struct{ typ, client string }

func (r *run) events(ctx context.Context) ([]event, error) {
	rows, err := r.db.Query(ctx, `SELECT e.id::text, e.seq, e.type, coalesce(c.uuid::text, '')
		FROM events e LEFT JOIN clients c ON c.id = e.client_id AND c.data_owner_id = e.data_owner_id
		WHERE e.data_owner_id = $1 ORDER BY e.seq`, r.owner)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	var out []event
	for rows.Next() {
		var e event
		if err := rows.Scan(&e.id, &e.seq, &e.typ, &e.client); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// jobRun is a River job that ran.
type jobRun struct {
	kind, client string // client: the analyzed client of analyze_client
	state        string
	by           []string // attempted_by
	start, end   time.Time
	finalized    bool
}

func (r *run) jobRuns(ctx context.Context) ([]jobRun, error) {
	rows, err := r.db.Query(ctx, `SELECT kind, coalesce(args->>'client_uuid', ''), state::text, attempted_by, attempted_at,
			finalized_at IS NOT NULL, coalesce(finalized_at, now())
		FROM river_job WHERE attempted_at IS NOT NULL
			AND (args->>'data_owner_id' IS NULL OR (args->>'data_owner_id')::bigint = $1)`, r.owner)
	if err != nil {
		return nil, fmt.Errorf("river_job: %w", err)
	}
	defer rows.Close()
	var out []jobRun
	for rows.Next() {
		var j jobRun
		if err := rows.Scan(&j.kind, &j.client, &j.state, &j.by, &j.start, &j.finalized, &j.end); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// drained reports what the run still waits for after the load (empty:
// nothing).
func (r *run) drained(ctx context.Context) ([]string, error) {
	var waiting []string
	var analyzer, pending int
	err := r.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM analyzer_inbox WHERE data_owner_id = $1)
			+ (SELECT count(*) FROM river_job WHERE kind = 'analyze_client' AND (args->>'data_owner_id')::bigint = $1
				AND state IN ('available', 'running', 'scheduled', 'retryable', 'pending')),
		(SELECT count(*) FROM webhook_deliveries WHERE data_owner_id = $1 AND status = 'pending')`, r.owner).Scan(&analyzer, &pending)
	if err != nil {
		return nil, err
	}
	if analyzer > 0 {
		waiting = append(waiting, fmt.Sprintf("%d analyzer inbox rows and jobs", analyzer))
	}
	if pending > 0 {
		waiting = append(waiting, fmt.Sprintf("%d webhook deliveries pending", pending))
	}
	evs, err := r.events(ctx)
	if err != nil {
		return nil, err
	}
	got, _ := r.rec.delivered()
	if n := len(slices.DeleteFunc(slices.Clone(evs), func(e event) bool { return got[e.id] > 0 })); n > 0 {
		waiting = append(waiting, fmt.Sprintf("%d events not delivered", n))
	}
	for _, s := range r.subs.list() {
		if !r.listening(s) {
			continue
		}
		if miss := missing(s, evs); miss > 0 {
			waiting = append(waiting, fmt.Sprintf("%d events not received by the subscription on process %d", miss, s.proc.n))
		}
	}
	runs, err := r.jobRuns(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range r.notRunSinceKill(runs) {
		waiting = append(waiting, "periodic job "+k+" not run since the kill")
	}
	return waiting, nil
}

// listening reports whether s is on a process that is up and has not ended.
func (r *run) listening(s *subscription) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended == "" && s.after >= 0 && s.proc.up.Load() && s.proc.pid() == s.pid
}

// missing counts the events owed to s that it has not received.
func missing(s *subscription, evs []event) int {
	got := s.received()
	n := 0
	for _, e := range evs {
		if e.seq > s.after && !got[e.id] {
			n++
		}
	}
	return n
}

// notRunSinceKill are the periodic kinds with no run started after the
// kill by a live process. A kind whose run was running on the killed
// process is not inserted again until River rescued that run (unique
// while running; the next run comes a period later): for it the rescue
// is what is waited for.
func (r *run) notRunSinceKill(runs []jobRun) []string {
	if r.killed == nil {
		return nil
	}
	killed := r.killed.pids[0]
	var out []string
	for _, k := range jobs.PeriodicKinds() {
		ok := slices.ContainsFunc(runs, func(j jobRun) bool {
			return j.kind == k && j.start.After(r.killedAt) && j.finalized && j.state == "completed" && r.lastProc(j) != nil
		})
		for _, j := range runs {
			if j.kind == k && len(j.by) > 0 && jobs.PIDOf(j.by[len(j.by)-1]) == killed && j.start.Before(r.killedAt) &&
				(!j.finalized || j.end.After(r.killedAt)) {
				ok = j.finalized // running at the kill: rescued since
			}
		}
		if !ok {
			out = append(out, k)
		}
	}
	return out
}

// drain waits for what the load left to settle, at most Drain.
func (r *run) drain(ctx context.Context) {
	start := time.Now()
	var waiting []string
	for deadline := start.Add(r.cfg.Drain); ; {
		var err error
		waiting, err = r.drained(ctx)
		if err == nil && len(waiting) == 0 {
			r.logf("drained in %.1f s", time.Since(start).Seconds())
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.logf("still waiting after %s: %v %v", r.cfg.Drain, waiting, err)
			break
		}
		sleep(ctx, 250*time.Millisecond)
	}
	r.res.Drain = time.Since(start)
	r.res.DrainedAll = len(waiting) == 0
}

// lastProc is the process of this run that ran j last (nil: none did).
func (r *run) lastProc(j jobRun) *process {
	if len(j.by) == 0 {
		return nil
	}
	return r.procOf(jobs.PIDOf(j.by[len(j.by)-1]))
}
