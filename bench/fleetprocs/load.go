package fleetprocs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/jobs"
)

// load runs the probes, the admin, the exporter and the kill for
// Duration; the leader watch goes on until collect.
func (r *run) load(ctx context.Context) error {
	watchCtx, stopWatch := context.WithCancel(ctx)
	r.stopWatch = stopWatch
	r.watchDone = make(chan struct{})
	go func() { r.watch(watchCtx); close(r.watchDone) }()
	loadCtx, cancel := context.WithTimeout(ctx, r.cfg.Duration)
	defer cancel()
	r.logf("load for %s: %d probes reporting %d measurements every %s; the River leader is killed at %.0f %%",
		r.cfg.Duration, r.cfg.Probes, r.cfg.Batch, r.cfg.Interval, 100*r.cfg.KillAt)
	disable := make(chan string, 10_000)
	var wg sync.WaitGroup
	for range r.cfg.Probes {
		wg.Go(func() { r.probe(loadCtx, disable) })
	}
	wg.Go(func() { r.adminLoad(loadCtx, disable) })
	wg.Go(func() { r.exportLoad(loadCtx) })
	wg.Go(func() { r.fault(loadCtx) })
	wg.Wait()
	r.logf("load over")
	return ctx.Err()
}

// count records one request of kind: its status (0: no answer).
func (r *run) count(kind string, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.res.Requests[kind]
	c.N++
	switch {
	case status == 0:
		c.NoAnswer++
	case status >= 500:
		c.Status5xx++
	case status >= 300:
		c.Other++
	default:
		c.OK++
	}
	r.res.Requests[kind] = c
}

// register registers a new probe through p.
func (r *run) register(ctx context.Context, p *process) (uuid, secret string, err error) {
	var out struct {
		ClientUUID string `json:"client_uuid"`
		Secret     string `json:"secret"`
	}
	status, body, err := r.do(ctx, http.MethodPost, "http://"+p.addr+clientapi.Base+"/register", "", map[string]any{
		"registration_key": r.regKey, "label": fmt.Sprintf("procs probe %d", time.Now().UnixNano()),
		"client_type": "automator", "client_version": "3.6.0"})
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	r.count("client API register", status)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("status %d: %.200s", status, body)
	}
	if err == nil {
		err = json.Unmarshal(body, &out)
	}
	if err != nil {
		return "", "", err
	}
	r.mu.Lock()
	r.res.writtenVia[eventKey{"client.registered", out.ClientUUID}] = p.n
	r.mu.Unlock()
	return out.ClientUUID, out.Secret, nil
}

// probe is one simulated probe slot: a probe registers, checks in and
// reports Reports times, then hands its uuid to the admin to disable and
// a new probe takes the slot.
func (r *run) probe(ctx context.Context, disable chan<- string) {
	for ctx.Err() == nil {
		var uuid, secret string
		for ctx.Err() == nil {
			var err error
			if uuid, secret, err = r.register(ctx, r.next()); err == nil {
				break
			}
			sleep(ctx, 100*time.Millisecond)
		}
		next := time.Now().Add(rand.N(r.cfg.Interval))
		for k := 0; k < r.cfg.Reports && ctx.Err() == nil; k++ {
			if !sleep(ctx, time.Until(next)) {
				return
			}
			next = next.Add(r.cfg.Interval)
			r.checkIn(ctx, secret)
			r.report(ctx, uuid, secret, k)
		}
		select {
		case disable <- uuid:
		default:
		}
	}
}

func (r *run) checkIn(ctx context.Context, secret string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.next().addr+clientapi.Base+"/config", nil)
	req.Header.Set("X-API-KEY", secret)
	resp, err := r.http.Do(req)
	if ctx.Err() != nil {
		return
	}
	status := 0
	if err == nil {
		status = resp.StatusCode
		resp.Body.Close()
	}
	r.count("client API check-in", status)
}

// report sends Batch measurements until a process answers 200 with every
// one accepted, each time to the next process that is up, with the same
// body (ids and times): a report is retried as a probe retries it.
func (r *run) report(ctx context.Context, uuid, secret string, k int) {
	var body bytes.Buffer
	ids := make([]string, r.cfg.Batch)
	at := time.Now().UTC()
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d-%d", uuid, k, i)
		subject, typ := "youtube", "VideoMeasurement"
		if i%3 == 2 {
			subject, typ = "website", "WebMeasurement"
		}
		fmt.Fprintf(&body, `{"id":%q,"type":%q,"client_uuid":%q,"created_at":%q,"study":{"subject":%q},`+
			`"statistic_values":{"initial_loading_time":%d,"throughput_mbps":%.1f}}`+"\n",
			ids[i], typ, uuid, at.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), subject,
			300+rand.IntN(900), 20+rand.Float64()*500)
	}
	// A report started goes on past the load's end until it is answered.
	rctx := context.WithoutCancel(ctx)
	for attempt := 0; attempt < 20; attempt++ {
		p := r.next()
		status, answer, err := r.do(rctx, http.MethodPost, "http://"+p.addr+clientapi.Base+"/measurements", secret, body.Bytes())
		r.count("client API report", status)
		var out struct {
			Accepted int `json:"accepted"`
		}
		if err == nil && status == http.StatusOK && json.Unmarshal(answer, &out) == nil && out.Accepted == len(ids) {
			r.mu.Lock()
			r.res.acked = append(r.res.acked, ids...)
			r.res.Reports.Acked++
			if attempt > 0 {
				r.res.Reports.Retried++
			}
			r.mu.Unlock()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.mu.Lock()
	r.res.Reports.GaveUp++
	r.mu.Unlock()
}

// adminLoad is an integrator on the admin REST API and GraphQL: lists
// clients, makes and deletes ISPs, disables the probes that finished.
func (r *run) adminLoad(ctx context.Context, disable <-chan string) {
	const admin = "/client_admin_api/v1"
	for i := 0; sleep(ctx, 100*time.Millisecond); i++ {
		p := r.next()
		base := "http://" + p.addr
		switch i % 4 {
		case 0:
			status, _, _ := r.do(ctx, http.MethodGet, base+admin+"/clients?per_page=25", r.admin, nil)
			r.countUnlessOver(ctx, "admin GET /clients", status)
		case 1:
			var isp struct {
				Isp struct {
					ID json.Number `json:"id"`
				} `json:"isp"`
			}
			status, body, _ := r.do(ctx, http.MethodPost, base+admin+"/isps", r.admin,
				map[string]any{"name": fmt.Sprintf("isp %d", time.Now().UnixNano()), "country": "DE", "type": "fixed"})
			r.countUnlessOver(ctx, "admin POST /isps", status)
			if status == http.StatusCreated && json.Unmarshal(body, &isp) == nil {
				status, _, _ := r.do(ctx, http.MethodDelete, base+admin+"/isps/"+isp.Isp.ID.String(), r.admin, nil)
				r.countUnlessOver(ctx, "admin DELETE /isps/{id}", status)
			}
		case 2:
			status, _, _ := r.do(ctx, http.MethodPost, base+"/graphql", r.admin,
				map[string]any{"query": `{ clientsConnection(first: 5) { totalCount } }`})
			r.countUnlessOver(ctx, "GraphQL clientsConnection", status)
		case 3:
			select {
			case uuid := <-disable:
				status, _, _ := r.do(ctx, http.MethodPost, base+admin+"/clients/"+uuid+"/disable", r.admin,
					map[string]any{"reason": "procs"})
				r.countUnlessOver(ctx, "admin POST /clients/{id}/disable", status)
				if status == http.StatusOK {
					r.mu.Lock()
					r.res.writtenVia[eventKey{"client.disabled", uuid}] = p.n
					r.mu.Unlock()
				}
			default:
			}
		}
	}
}

// exportLoad is a data pipeline on the export REST API.
func (r *run) exportLoad(ctx context.Context) {
	search := map[string]any{"body": map[string]any{"query": map[string]any{"term": map[string]any{"study.subject": "youtube"}}}, "size": 20}
	for i := 0; sleep(ctx, 100*time.Millisecond); i++ {
		base := "http://" + r.next().addr + "/export_api/v1"
		if i%2 == 0 {
			status, _, _ := r.do(ctx, http.MethodGet, base+"/measurements?per_page=25", r.export, nil)
			r.countUnlessOver(ctx, "export GET /measurements", status)
		} else {
			status, _, _ := r.do(ctx, http.MethodPost, base+"/search", r.export, search)
			r.countUnlessOver(ctx, "export POST /search", status)
		}
	}
}

// countUnlessOver counts a request unless the load ended under it.
func (r *run) countUnlessOver(ctx context.Context, kind string, status int) {
	if ctx.Err() == nil {
		r.count(kind, status)
	}
}

// fault kills the River leader at KillAt of the load and, with
// RestartAfter, starts it again and subscribes on it anew.
func (r *run) fault(ctx context.Context) {
	if !sleep(ctx, time.Duration(r.cfg.KillAt*float64(r.cfg.Duration))) {
		return
	}
	var leader string
	if err := r.db.QueryRow(ctx, `SELECT leader_id FROM river_leader`).Scan(&leader); err != nil {
		r.logf("no River leader to kill (%v): killing process 1", err)
	}
	victim := r.procOf(jobs.PIDOf(leader))
	if victim == nil {
		victim = r.procs[0]
	}
	r.mu.Lock()
	r.killed, r.killedAt = victim, time.Now()
	r.mu.Unlock()
	victim.signalKill()
	r.logf("kill -9 of process %d (pid %d), the River leader", victim.n, victim.pid())
	sleep(ctx, r.cfg.NoticeAfter) // its requests meanwhile fail and go to another process
	victim.up.Store(false)
	if r.cfg.RestartAfter <= 0 || !sleep(ctx, r.cfg.RestartAfter) {
		return
	}
	if err := r.startProcess(context.WithoutCancel(ctx), victim); err != nil {
		r.logf("restart: %v", err)
		return
	}
	r.mu.Lock()
	r.res.Restarted = true
	r.mu.Unlock()
	r.logf("process %d started again (pid %d)", victim.n, victim.pid())
	if err := r.subs.open(ctx, victim, r.admin); err != nil {
		r.logf("subscription on the restarted process: %v", err)
		return
	}
	for deadline := time.Now().Add(20 * time.Second); !r.subs.allHaveOne() && time.Now().Before(deadline); {
		sleep(ctx, 20*time.Millisecond)
	}
	if err := r.settleSubscriptions(context.WithoutCancel(ctx)); err != nil {
		r.logf("%v", err)
	}
}

// procOf is the process that had pid (nil: none).
func (r *run) procOf(pid int) *process {
	for _, p := range r.procs {
		p.mu.Lock()
		pids := p.pids
		p.mu.Unlock()
		for _, q := range pids {
			if q == pid {
				return p
			}
		}
	}
	return nil
}

// leaderTerm is a River leader seen by watch.
type leaderTerm struct {
	proc, pid int
	since     time.Time
}

// watch samples the River leader and the database connections every
// 250 ms until ctx ends.
func (r *run) watch(ctx context.Context) {
	for sleep(ctx, 250*time.Millisecond) {
		var leader string
		var conns int
		err := r.db.QueryRow(ctx, `SELECT coalesce((SELECT leader_id FROM river_leader), ''),
			(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'fleetgraph%')`).Scan(&leader, &conns)
		if err != nil {
			continue
		}
		pid, n := jobs.PIDOf(leader), 0
		if p := r.procOf(pid); p != nil {
			n = p.n
		}
		r.mu.Lock()
		r.res.PeakConns = max(r.res.PeakConns, conns)
		if k := len(r.leaders); pid != 0 && (k == 0 || r.leaders[k-1].pid != pid) {
			r.leaders = append(r.leaders, leaderTerm{proc: n, pid: pid, since: time.Now()})
			r.mu.Unlock()
			r.logf("River leader: process %d (pid %d)", n, pid)
			continue
		}
		r.mu.Unlock()
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
