package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// seedFleet gives owner n clients, each in two of ten groups, with a
// registration key (of one capability) and two ISP contracts of which one is
// current, in a few statements.
func seedFleet(t testing.TB, e *apitest.Env, ownerID int64, n int) {
	t.Helper()
	const q = `
WITH cap AS (INSERT INTO capabilities (data_owner_id, name) VALUES ($1, 'bench') RETURNING id),
key AS (INSERT INTO registration_keys (data_owner_id, capability_id, registration_key)
	SELECT $1, id, 'bench-' || $1 || '-' || md5(random()::text) FROM cap RETURNING id),
isp AS (INSERT INTO isps (data_owner_id, name, type, country)
	SELECT $1, 'ISP ' || i, 'fixed', 'DE' FROM generate_series(1, 5) i RETURNING id),
grp AS (INSERT INTO client_groups (data_owner_id, name)
	SELECT $1, 'group ' || i FROM generate_series(1, 10) i RETURNING id),
cli AS (INSERT INTO clients (data_owner_id, uuid, type, label, tags, registration_key_id, last_seen_at)
	SELECT $1, gen_random_uuid(), 'probe', 'client ' || i, ARRAY['bench', 'site' || (i % 7)], (SELECT id FROM key), now()
	FROM generate_series(1, $2::int) i RETURNING id),
mem AS (INSERT INTO client_group_members (client_group_id, client_id)
	SELECT g.id, c.id FROM cli c JOIN LATERAL (SELECT id FROM grp ORDER BY (id + c.id) % 10 LIMIT 2) g ON true),
con AS (INSERT INTO isp_contracts (data_owner_id, isp_id, client_id, name, download_speed, valid_from, valid_until)
	SELECT $1, (SELECT id FROM isp ORDER BY id LIMIT 1 OFFSET (c.id % 5)), c.id, v.name, 100, v.from_, v.until
	FROM cli c, (VALUES ('old', now() - interval '2 years', now() - interval '1 year'),
	                    ('current', now() - interval '1 year', NULL::timestamptz)) v(name, from_, until))
SELECT count(*) FROM cli`
	if _, err := e.Store.Pool().Exec(context.Background(), q, ownerID, n); err != nil {
		t.Fatalf("seed fleet: %v", err)
	}
}

// fleetClientFields are the dashboard's fields of a client: groups,
// registration key and current contract with its ISP's name.
const fleetClientFields = `id uuid label tags lastSeenAt offline
	clientGroups { id name }
	registrationKey { id registrationKey capability { id name } }
	currentIspContract { id name downloadSpeed validFrom ispName }`

// fleetQuery is the dashboard's fleet list.
const fleetQuery = `{ clients { ` + fleetClientFields + ` } }`

// reportStatements reports the statements and round trips per request of
// the benchmark b from now until the function it answers is called, and
// the CPU time per request of the test process (server and client) and of
// the PostgreSQL backends serving its database (when they run on this
// machine): on a shared machine they vary less than the time per request.
func reportStatements(b *testing.B, e *apitest.Env) func() {
	n, trips, cpu, pgCPU := e.Counter.Count(), e.Counter.RoundTrips(), processCPU(), backendCPU(b, e)
	return func() {
		b.ReportMetric(float64(e.Counter.Count()-n)/float64(b.N), "stmts/op")
		b.ReportMetric(float64(e.Counter.RoundTrips()-trips)/float64(b.N), "trips/op")
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64((backendCPU(b, e)-pgCPU).Microseconds())/float64(b.N), "pg-cpu-µs/op")
	}
}

// backendCPU is the CPU time the PostgreSQL backends connected to e's
// database have used (from /proc: 0 when PostgreSQL runs elsewhere).
func backendCPU(b *testing.B, e *apitest.Env) time.Duration {
	rows, err := e.Store.Pool().Query(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields 14 and 15, after the command in parentheses: utime, stime in ticks of 10 ms.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return total
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// benchParallel sends req from 20 concurrent connections until b.N are done.
func benchParallel(b *testing.B, do func(c *http.Client) (int, error)) {
	b.SetParallelism(10) // × GOMAXPROCS 2 = 20 goroutines
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	c := &http.Client{Transport: tr}
	var once sync.Once
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			status, err := do(c)
			if err != nil || status != http.StatusOK {
				once.Do(func() { b.Errorf("status %d: %v", status, err) })
				return
			}
		}
	})
}

func benchFleet(b *testing.B, n int) (*apitest.Env, string) {
	e := apitest.Get(b)
	o := e.NewOwner(b, "bench")
	seedFleet(b, e, o.ID, n)
	analyze(b, e)
	return e, o.Key
}

// analyze gives the planner the seeded tables' statistics, as a server's
// statistics job (store.KeepStatistics) and bench/api.sh do: on the empty
// tables' statistics the lookups by id take generic plans that read every
// contract of an ISP, and their PostgreSQL column measures that plan.
func analyze(b *testing.B, e *apitest.Env) {
	if _, err := e.Store.Pool().Exec(context.Background(), "ANALYZE"); err != nil {
		b.Fatal(err)
	}
}

// firstClientID is the id of one client of key's data owner.
func firstClientID(b *testing.B, e *apitest.Env, key string) int64 {
	var id int64
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT c.id FROM clients c JOIN api_keys k ON k.data_owner_id = c.data_owner_id
		WHERE k.digest = sha256($1::bytea) LIMIT 1`, []byte(key)).Scan(&id); err != nil {
		b.Fatal(err)
	}
	return id
}

func drain(resp *http.Response, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

func BenchmarkFleet(b *testing.B) {
	for _, n := range []int{1, 50, 500, 2000} {
		e, key := benchFleet(b, n)
		b.Run(fmt.Sprintf("graphql/%d", n), func(b *testing.B) {
			body := fmt.Sprintf(`{"query": %q}`, fleetQuery)
			benchParallel(b, func(c *http.Client) (int, error) {
				req, _ := http.NewRequest(http.MethodPost, e.URL+"/graphql", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				return drain(c.Do(req))
			})
		})
		b.Run(fmt.Sprintf("rest-get/%d", n), func(b *testing.B) {
			id := firstClientID(b, e, key)
			url := fmt.Sprintf("%s/client_admin_api/v1/clients/%d", e.URL, id)
			defer reportStatements(b, e)()
			benchParallel(b, func(c *http.Client) (int, error) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("X-API-KEY", key)
				return drain(c.Do(req))
			})
		})
		b.Run(fmt.Sprintf("graphql-get/%d", n), func(b *testing.B) {
			id := firstClientID(b, e, key)
			body := fmt.Sprintf(`{"query": %q}`, fmt.Sprintf(`{ client(id: "%d") { %s } }`, id, fleetClientFields))
			defer reportStatements(b, e)()
			benchParallel(b, func(c *http.Client) (int, error) {
				req, _ := http.NewRequest(http.MethodPost, e.URL+"/graphql", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				return drain(c.Do(req))
			})
		})
		b.Run(fmt.Sprintf("rest/%d", n), func(b *testing.B) {
			benchParallel(b, func(c *http.Client) (int, error) {
				req, _ := http.NewRequest(http.MethodGet, e.URL+"/client_admin_api/v1/clients", nil)
				req.Header.Set("X-API-KEY", key)
				return drain(c.Do(req))
			})
		})
	}
}

// BenchmarkClientAPI: check-ins (If-None-Match, so 304s) and reports of
// 50 measurements by 20 probes at once, over the real HTTP server and
// PostgreSQL (bench/probes.sh is the fleet-sized load test).
func BenchmarkClientAPI(b *testing.B) {
	e := apitest.Get(b)
	o := e.NewOwner(b, "bench-probes")
	key := o.NewRegistrationKey(b, store.RegistrationKeyInput{}).RegistrationKey
	probes := make(chan apitest.Probe, 64)
	for range cap(probes) {
		probes <- o.NewProbe(b, key)
	}
	b.Run("check-in", func(b *testing.B) {
		b.ReportAllocs()
		p := <-probes
		defer func() { probes <- p }()
		r := e.Probe(b, http.MethodGet, "/config", p.Secret, nil)
		etag := r.Header.Get("ETag")
		benchParallel(b, func(c *http.Client) (int, error) {
			req, _ := http.NewRequest(http.MethodGet, e.URL+"/client_api/v1/config", nil)
			req.Header.Set("X-API-KEY", p.Secret)
			req.Header.Set("If-None-Match", etag)
			status, err := drain(c.Do(req))
			if status == http.StatusNotModified {
				status = http.StatusOK
			}
			return status, err
		})
	})
	b.Run("report-50", func(b *testing.B) {
		b.ReportAllocs()
		var seq atomic.Int64
		benchParallel(b, func(c *http.Client) (int, error) {
			p := <-probes
			defer func() { probes <- p }()
			var body strings.Builder
			for range 50 {
				fmt.Fprintf(&body, `{"id":"%s-%d","type":"VideoMeasurement","client_uuid":"%s","created_at":"2026-11-20T10:00:00Z",`+
					`"study":{"subject":"youtube"},"statistic_values":{"rtt_avg":12.5}}`+"\n", p.UUID, seq.Add(1), p.UUID)
			}
			req, _ := http.NewRequest(http.MethodPost, e.URL+"/client_api/v1/measurements", strings.NewReader(body.String()))
			req.Header.Set("X-API-KEY", p.Secret)
			return drain(c.Do(req))
		})
		b.ReportMetric(float64(50*b.N)/b.Elapsed().Seconds(), "docs/s")
	})
}
