package fleetprocs

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/jobs"
)

// Counts are the answers to one kind of request.
type Counts struct{ N, OK, Other, Status5xx, NoAnswer int }

// Subscription is what one subscription received.
type Subscription struct {
	Proc, PID int
	// Listening: its process stayed up and it did not end.
	Listening bool
	Ended     string
	// Owed: the events committed after it was listening; Missing: those
	// of them it did not receive.
	Received, Owed, Missing int
	// ViaOthers: received events written through another process;
	// ViaKilled: through the process that was killed.
	ViaOthers, ViaKilled int
}

// Result is what a run counted.
type Result struct {
	Processes         int
	Killed, KilledPID int // the process killed (1-based) and its pid; 0: none
	Restarted         bool
	Leaders           []string // the River leaders seen, in turn
	Requests          map[string]Counts
	Reports           struct{ Acked, Retried, GaveUp int }
	// Documents acknowledged (in 2xx reports), stored (rows and distinct
	// ids), acknowledged but not stored, ids stored more than once.
	AckedDocs, Stored, StoredDistinct, AckedMissing, Duplicates int
	// Events of the data owner, by the process they were written through
	// (0: by a background job), and by type.
	Events     int
	EventsVia  map[int]int
	EventTypes map[string]int
	// Webhook deliveries received, events delivered, events never
	// delivered, events delivered more than once; deliveries by status.
	Deliveries, Delivered, Lost, Redelivered int
	DeliveryStatus                           map[string]int
	// Jobs: runs finalized per kind and process (1-based); Moved: jobs
	// attempted by more than one process (rescued from the killed one).
	Jobs  map[string]map[int]int
	Moved map[string]int
	// Overlaps: two runs of one periodic job, or two analyses of one
	// client, that ran at the same time.
	Overlaps        []string
	NotRunSinceKill []string
	AnalyzerLeft    int
	Subscriptions   []Subscription
	PeakConns       int
	Drain           time.Duration
	DrainedAll      bool

	acked      []string
	writtenVia map[eventKey]int
}

func newResult(procs int) *Result {
	return &Result{Processes: procs, Requests: map[string]Counts{}, EventsVia: map[int]int{}, EventTypes: map[string]int{},
		DeliveryStatus: map[string]int{}, Jobs: map[string]map[int]int{}, Moved: map[string]int{}, writtenVia: map[eventKey]int{}}
}

// collect reads the database and the records into r.res.
func (r *run) collect(ctx context.Context) error {
	r.stopWatch()
	<-r.watchDone
	res := r.res
	if r.killed != nil {
		res.Killed, res.KilledPID = r.killed.n, r.killed.pids[0]
	}
	for _, l := range r.leaders {
		res.Leaders = append(res.Leaders, fmt.Sprintf("process %d (pid %d) from %.1f s", l.proc, l.pid, l.since.Sub(r.start).Seconds()))
	}
	if err := r.collectDocuments(ctx); err != nil {
		return err
	}
	evs, err := r.events(ctx)
	if err != nil {
		return err
	}
	res.Events = len(evs)
	for _, e := range evs {
		res.EventsVia[res.writtenVia[eventKey{e.typ, e.client}]]++
		res.EventTypes[e.typ]++
	}
	got, reqs := r.rec.delivered()
	res.Deliveries = reqs
	for _, e := range evs {
		switch n := got[e.id]; {
		case n == 0:
			res.Lost++
		case n > 1:
			res.Redelivered++
		}
	}
	res.Delivered = len(got)
	rows, err := r.db.Query(ctx, `SELECT status, count(*) FROM webhook_deliveries WHERE data_owner_id = $1 GROUP BY status`, r.owner)
	if err != nil {
		return err
	}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return err
		}
		res.DeliveryStatus[status] = n
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := r.collectJobs(ctx); err != nil {
		return err
	}
	for _, s := range r.subs.list() {
		sr := Subscription{Proc: s.proc.n, PID: s.pid, Listening: r.listening(s), Ended: s.ended}
		received := s.received()
		sr.Received = len(received)
		for _, e := range evs {
			if s.after >= 0 && e.seq > s.after {
				sr.Owed++
				if !received[e.id] {
					sr.Missing++
				}
			}
			if received[e.id] {
				if via := res.writtenVia[eventKey{e.typ, e.client}]; via != 0 && via != s.proc.n {
					sr.ViaOthers++
				}
				if via := res.writtenVia[eventKey{e.typ, e.client}]; via != 0 && via == res.Killed && s.proc.n != res.Killed {
					sr.ViaKilled++
				}
			}
		}
		res.Subscriptions = append(res.Subscriptions, sr)
	}
	return nil
}

func (r *run) collectDocuments(ctx context.Context) error {
	res := r.res
	res.AckedDocs = len(res.acked)
	stored := map[string]int{}
	rows, err := r.db.Query(ctx, `SELECT doc_id, count(*) FROM documents WHERE data_owner_id = $1 AND kind = 'measurement' GROUP BY doc_id`, r.owner)
	if err != nil {
		return fmt.Errorf("documents: %w", err)
	}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		stored[id] = n
		res.Stored += n
		if n > 1 {
			res.Duplicates++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	res.StoredDistinct = len(stored)
	for _, id := range res.acked {
		if stored[id] == 0 {
			res.AckedMissing++
		}
	}
	return nil
}

func (r *run) collectJobs(ctx context.Context) error {
	res := r.res
	runs, err := r.jobRuns(ctx)
	if err != nil {
		return err
	}
	res.NotRunSinceKill = r.notRunSinceKill(runs)
	periodic := jobs.PeriodicKinds()
	groups := map[string][]jobRun{}
	for _, j := range runs {
		p := r.lastProc(j)
		if p == nil {
			continue // a job of another process on this database
		}
		last := p.n
		if j.finalized {
			if res.Jobs[j.kind] == nil {
				res.Jobs[j.kind] = map[int]int{}
			}
			res.Jobs[j.kind][last]++
		}
		if len(slices.Compact(slices.Clone(j.by))) > 1 {
			res.Moved[j.kind]++
		}
		// A run on the killed process ended with it, whatever the row
		// says until the rescue.
		if r.killed != nil && len(j.by) > 0 && jobs.PIDOf(j.by[len(j.by)-1]) == r.killed.pids[0] && j.end.After(r.killedAt) {
			j.end = r.killedAt
		}
		switch {
		case slices.Contains(periodic, j.kind):
			groups[j.kind] = append(groups[j.kind], j)
		case j.kind == "analyze_client":
			groups[j.kind+" of "+j.client] = append(groups[j.kind+" of "+j.client], j)
		}
	}
	for name, g := range groups {
		slices.SortFunc(g, func(a, b jobRun) int { return a.start.Compare(b.start) })
		for i := 1; i < len(g); i++ {
			if g[i].start.Before(g[i-1].end) {
				res.Overlaps = append(res.Overlaps, fmt.Sprintf("%s: a run from %s to %s and one from %s", name,
					g[i-1].start.Format("15:04:05.000"), g[i-1].end.Format("15:04:05.000"), g[i].start.Format("15:04:05.000")))
			}
		}
	}
	slices.Sort(res.Overlaps)
	return r.db.QueryRow(ctx, `SELECT count(*) FROM analyzer_inbox WHERE data_owner_id = $1`, r.owner).Scan(&res.AnalyzerLeft)
}

// Failures lists what the run found wrong (none: it passed).
func (res *Result) Failures() []string {
	var f []string
	add := func(bad bool, format string, args ...any) {
		if bad {
			f = append(f, fmt.Sprintf(format, args...))
		}
	}
	add(res.AckedMissing > 0, "%d acknowledged measurements not stored", res.AckedMissing)
	add(res.Duplicates > 0, "%d measurement ids stored more than once", res.Duplicates)
	add(res.Reports.GaveUp > 0, "%d reports never acknowledged in 20 tries", res.Reports.GaveUp)
	add(res.Lost > 0, "%d events never delivered to the webhook", res.Lost)
	add(res.Events == 0, "no events")
	add(len(res.Overlaps) > 0, "%d overlapping job runs: %s", len(res.Overlaps), strings.Join(res.Overlaps, "; "))
	add(len(res.NotRunSinceKill) > 0, "periodic jobs not run since the leader's kill: %s", strings.Join(res.NotRunSinceKill, ", "))
	add(res.AnalyzerLeft > 0, "%d measurements left in the analyzer's inbox", res.AnalyzerLeft)
	add(res.Killed == 0, "no process was killed")
	survivors := 0
	for _, s := range res.Subscriptions {
		if s.Proc == res.Killed && s.PID == res.KilledPID {
			continue
		}
		survivors++
		add(!s.Listening, "the subscription on process %d (pid %d) ended: %s", s.Proc, s.PID, s.Ended)
		add(s.Missing > 0, "the subscription on process %d (pid %d) missed %d of %d events", s.Proc, s.PID, s.Missing, s.Owed)
		add(s.ViaOthers == 0, "the subscription on process %d (pid %d) received no event written through another process", s.Proc, s.PID)
	}
	add(survivors == 0, "no subscription on a surviving process")
	for _, kind := range slices.Sorted(maps.Keys(res.Requests)) {
		c := res.Requests[kind]
		add(c.Status5xx > 0, "%d 5xx answers to %s", c.Status5xx, kind)
	}
	return f
}

// Print writes the counts.
func (res *Result) Print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	restarted := "not restarted"
	if res.Restarted {
		restarted = "restarted"
	}
	p("processes: %d; killed with SIGKILL: process %d (pid %d), the River leader; %s", res.Processes, res.Killed, res.KilledPID, restarted)
	p("River leaders in turn: %s", strings.Join(res.Leaders, "; "))
	p("")
	p("requests (answers: 2xx / other / 5xx / no answer; no answer and retries are the kill's requests in flight):")
	for _, kind := range slices.Sorted(maps.Keys(res.Requests)) {
		c := res.Requests[kind]
		p("  %-36s %7d  %7d / %d / %d / %d", kind, c.N, c.OK, c.Other, c.Status5xx, c.NoAnswer)
	}
	p("")
	p("reports acknowledged: %d (%d of them after a retry on another process; %d given up)", res.Reports.Acked, res.Reports.Retried, res.Reports.GaveUp)
	p("measurements: acknowledged %d, stored %d rows of %d ids; acknowledged but not stored %d; ids stored twice %d",
		res.AckedDocs, res.Stored, res.StoredDistinct, res.AckedMissing, res.Duplicates)
	via := []string{}
	for _, n := range slices.Sorted(maps.Keys(res.EventsVia)) {
		name := fmt.Sprintf("through process %d", n)
		if n == 0 {
			name = "by background jobs"
		}
		via = append(via, fmt.Sprintf("%d %s", res.EventsVia[n], name))
	}
	types := []string{}
	for _, t := range slices.Sorted(maps.Keys(res.EventTypes)) {
		types = append(types, fmt.Sprintf("%s %d", t, res.EventTypes[t]))
	}
	p("events written: %d (%s; %s)", res.Events, strings.Join(via, ", "), strings.Join(types, ", "))
	status := []string{}
	for _, s := range slices.Sorted(maps.Keys(res.DeliveryStatus)) {
		status = append(status, fmt.Sprintf("%s %d", s, res.DeliveryStatus[s]))
	}
	p("webhook: %d deliveries received, %d events delivered, %d lost, %d delivered more than once (deliveries: %s)",
		res.Deliveries, res.Delivered, res.Lost, res.Redelivered, strings.Join(status, ", "))
	p("")
	p("job runs per process (finalized; moved: tried by more than one process):")
	for _, kind := range slices.Sorted(maps.Keys(res.Jobs)) {
		per := []string{}
		for _, n := range slices.Sorted(maps.Keys(res.Jobs[kind])) {
			per = append(per, fmt.Sprintf("process %d: %d", n, res.Jobs[kind][n]))
		}
		p("  %-24s %s; moved %d", kind, strings.Join(per, ", "), res.Moved[kind])
	}
	p("overlapping runs: %d; periodic jobs not run since the kill: %d; analyzer inbox left: %d",
		len(res.Overlaps), len(res.NotRunSinceKill), res.AnalyzerLeft)
	p("")
	p("subscriptions (owed: events committed while it listened):")
	for _, s := range slices.SortedFunc(slices.Values(res.Subscriptions), func(a, b Subscription) int {
		return cmp.Or(cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.PID, b.PID))
	}) {
		if s.Proc == res.Killed && s.PID == res.KilledPID {
			p("  process %d (pid %d): received %d before the kill; %d written through other processes", s.Proc, s.PID, s.Received, s.ViaOthers)
			continue
		}
		state := "listening to the end"
		if !s.Listening {
			state = "ended: " + s.Ended
		}
		p("  process %d (pid %d): received %d, owed %d, missed %d; %d written through other processes, %d through the killed one; %s",
			s.Proc, s.PID, s.Received, s.Owed, s.Missing, s.ViaOthers, s.ViaKilled, state)
	}
	p("")
	p("peak database connections of the processes: %d; drain after the load: %.1f s (everything settled: %v)",
		res.PeakConns, res.Drain.Seconds(), res.DrainedAll)
}
