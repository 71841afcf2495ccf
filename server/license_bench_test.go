package server_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// The license usage benchmark: 1,000,000 measurements of 2,000 clients
// (5 registration keys, every 10th client without one; each client
// measuring 1 to 4 of 8 subjects) over the 12 months December 2025 to
// November 2026, generated in SQL into the test binary's throw-away
// database, then the extended 12-month report through the real server:
//
//	go test ./server -run '^$' -bench LicenseUsage -benchtime 7x
//
// ms/report-median is the median of the timed requests. "pairs" is the
// steady state (the refresher has merged the new pairs); "dirty" reads every
// month from the documents (as right after the migration, before the first
// refresh); refresh-s is one rebuild of the 12 dirty months.

// licenseBenchMeasurements is the number of measurements; LICENSE_BENCH_N
// sets another (a quick check of the harness).
var licenseBenchMeasurements = func() int {
	if n, err := strconv.Atoi(os.Getenv("LICENSE_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}()

var licenseBench struct {
	once  sync.Once
	owner *apitest.Owner
	load  time.Duration
}

// licenseBenchSeed makes the data owner's keys and clients ($1 the data
// owner) and the measurements ($2 of them), with documents shaped like
// testdata/measurements.ndjson.
var licenseBenchSeed = []string{`
WITH cap AS (INSERT INTO capabilities (data_owner_id, name) VALUES ($1, 'bench') RETURNING id)
INSERT INTO registration_keys (data_owner_id, capability_id, registration_key, comment)
SELECT $1, cap.id, 'licbench-' || $1::bigint::text || '-' || g, 'bench key ' || g FROM cap, generate_series(1, 5) g`, `
INSERT INTO clients (data_owner_id, uuid, type, label, registration_key_id)
SELECT $1, md5($1::bigint::text || '-client-' || g)::uuid, 'automator', 'probe-' || g,
       CASE WHEN g % 10 <> 0 THEN (SELECT min(id) FROM registration_keys WHERE data_owner_id = $1) + g % 5 END
FROM generate_series(0, 1999) g`, `
INSERT INTO documents (data_owner_id, kind, doc_id, client_uuid, type, subject, created_at, doc)
SELECT $1, 'measurement', m.id, m.client_uuid, 'VideoMeasurement', m.subject, m.created_at,
       jsonb_build_object('id', m.id, 'type', 'VideoMeasurement', 'client_uuid', m.client_uuid,
           'created_at', to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'client_type', 'automator', 'client_version', '3.4.0',
           'study', jsonb_build_object('subject', m.subject, 'study_id', m.subject || '-default',
               'study_name', m.subject || ' default', 'target', 'https://example.com/' || m.subject),
           'statistic_values', jsonb_build_object('initial_loading_time', 800 + j % 300, 'stalling_number', j % 3,
               'total_stalling_time', (j % 3) * 320, 'average_video_bitrate', 3000 + j % 1500,
               'average_video_height', 1080, 'played_duration', 60000, 'dropped_frames', j % 7),
           'success', true, 'network', jsonb_build_object('isp', 'isp-' || j % 10, 'connection_type', 'fixed'))
FROM generate_series(0, $2::int - 1) j,
     LATERAL (SELECT 'm-' || j AS id, md5($1::bigint::text || '-client-' || (j % 2000))::uuid AS client_uuid,
                     'subject-' || ((j % 2000) % 5 + (j / 2000) % ((j % 2000) % 4 + 1)) AS subject,
                     timestamptz '2025-12-01 00:00:00Z' + (j * (365.0 * 86400 / $2::int)) * interval '1 second' AS created_at) m`}

func licenseBenchOwner(b *testing.B) *apitest.Owner {
	e := apitest.Get(b)
	licenseBench.once.Do(func() {
		o := e.NewOwner(b, "licbench")
		start := time.Now()
		ctx := context.Background()
		conn, err := e.Store.Pool().Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Release()
		for i, q := range licenseBenchSeed {
			args := []any{o.ID}
			if i == len(licenseBenchSeed)-1 {
				args = append(args, licenseBenchMeasurements)
			}
			if _, err := conn.Exec(ctx, q, args...); err != nil {
				b.Fatalf("seed: %v\n%s", err, q)
			}
		}
		if _, err := e.Store.RefreshLicensePairs(ctx); err != nil {
			b.Fatal(err)
		}
		// As autovacuum leaves a server's tables once the load has settled.
		if _, err := conn.Exec(ctx, `VACUUM ANALYZE documents, clients, registration_keys, license_pairs, license_clients, license_pair_log`); err != nil {
			b.Fatal(err)
		}
		licenseBench.owner, licenseBench.load = o, time.Since(start)
	})
	if licenseBench.owner == nil {
		b.Fatal("seeding failed")
	}
	return licenseBench.owner
}

func BenchmarkLicenseUsage(b *testing.B) {
	e := apitest.Get(b)
	o := licenseBenchOwner(b)
	b.Logf("%d measurements loaded and refreshed in %s", licenseBenchMeasurements, licenseBench.load.Round(time.Millisecond))
	if avg, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.Logf("load average before the timed requests: %s", avg) // the machine is shared: say how busy it was
	}
	path := "/license_usage?extended=true&start_time=2025-12-01&end_time=2026-11-30"
	report := func(b *testing.B) {
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			r := e.Admin(b, http.MethodGet, path, o.Key, nil)
			took = append(took, time.Since(start))
			if r.Status != http.StatusOK {
				b.Fatalf("status %d: %.300s", r.Status, r.Raw)
			}
			if units := apitest.Int(b, r.Obj(b)["total_units"]); units == 0 {
				b.Fatalf("no units: %.300s", r.Raw)
			}
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms/report-median")
		b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "ms/report-max")
	}
	b.Run("pairs", report)
	b.Run("pairs-store-only", func(b *testing.B) { // the same without HTTP and GraphQL
		months := store.LicenseMonths(time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, _, err := e.Store.LicenseUsage(context.Background(), o.ID, months, nil); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms/report-median")
	})
	b.Run("dirty", func(b *testing.B) {
		ctx := context.Background()
		const dirty = `INSERT INTO license_dirty (data_owner_id, month)
			SELECT $1, m::date FROM generate_series(date '2025-12-01', date '2026-11-01', interval '1 month') m`
		if _, err := e.Store.Pool().Exec(ctx, dirty, o.ID); err != nil {
			b.Fatal(err)
		}
		report(b)
		start := time.Now()
		months, err := e.Store.RefreshLicensePairs(ctx)
		if err != nil || months < 12 {
			b.Fatalf("refresh: %d months, %v", months, err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "refresh-s")
	})
}
