package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Bucket is one rate limit a request is charged to (package ratelimit): at
// most Burst requests at once, refilled by one every Emission.
type Bucket struct {
	Name     string
	Emission time.Duration // the period divided by the limit
	Burst    time.Duration // the period: Emission times the limit
}

// BucketState is a bucket as the charge left it (or found it, when the
// request was refused).
type BucketState struct {
	Name string
	// TAT is the bucket's theoretical arrival time: when it is full again.
	TAT time.Time
}

// Take is what TakeRate is asked: Want requests at most (at least one is
// taken, or none), after giving back Refund requests taken earlier by the
// same caller and not spent (a lease that ended), and after charging Owed
// requests the caller let through before charging them (on credit).
type Take struct {
	Want, Refund, Owed int
}

// Charge is the outcome of TakeRate.
type Charge struct {
	Allowed bool
	// Taken is how many requests were charged: from 1 to Want when
	// allowed, 0 when refused.
	Taken int
	// Now is PostgreSQL's clock at the charge; every time is on it.
	Now     time.Time
	Buckets []BucketState // in the order asked
}

// takeRate charges up to $4 requests to every bucket, as many as the
// fullest-charged bucket has room for, or none: it locks the buckets' rows
// (in name order, so that two charges never deadlock), gives back $5
// unspent requests of an earlier charge, charges $6 owed ones, and moves each one's TAT on by
// its emission times the count taken. It reports found = false, charging
// nothing, when a row is missing.
const takeRate = `
WITH want AS (
    SELECT w.bucket, w.emission, w.burst
    FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS w(bucket, emission, burst)
), clock AS (
    SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now
), cur AS (
    SELECT r.bucket, greatest(r.tat - $5::bigint * w.emission, clock.now) + $6::bigint * w.emission AS tat,
           w.emission, w.burst, clock.now
    FROM rate_buckets r JOIN want w USING (bucket) CROSS JOIN clock
    ORDER BY r.bucket
    FOR UPDATE OF r
), verdict AS (
    SELECT count(*) = cardinality($1::text[]) AS found,
           CASE WHEN count(*) = cardinality($1::text[])
                THEN greatest(0, least($4::bigint, coalesce(min((now + burst - tat) / emission), $4::bigint)))
                ELSE 0 END AS taken
    FROM cur
), moved AS (
    UPDATE rate_buckets r SET tat = cur.tat + verdict.taken * cur.emission
    FROM cur, verdict
    WHERE (verdict.taken > 0 OR $5::bigint > 0 OR $6::bigint > 0) AND r.bucket = cur.bucket
    RETURNING r.bucket, r.tat
)
SELECT verdict.found, verdict.taken, (SELECT now FROM clock),
       coalesce(array_agg(cur.bucket) FILTER (WHERE cur.bucket IS NOT NULL), '{}'),
       coalesce(array_agg(coalesce(moved.tat, cur.tat)) FILTER (WHERE cur.bucket IS NOT NULL), '{}')
FROM verdict LEFT JOIN cur ON true LEFT JOIN moved USING (bucket)
GROUP BY verdict.found, verdict.taken`

// addBuckets makes missing buckets, full.
const addBuckets = `
INSERT INTO rate_buckets (bucket, tat)
SELECT b, 0 FROM unnest($1::text[]) AS b
ON CONFLICT (bucket) DO NOTHING`

// TakeRate charges up to t.Want requests to every bucket if each has room
// for one at least (one statement; a second and a retry only the first time
// a bucket is seen).
func (s *Store) TakeRate(ctx context.Context, buckets []Bucket, t Take) (Charge, error) {
	var c Charge
	names := make([]string, len(buckets))
	emission := make([]int64, len(buckets))
	burst := make([]int64, len(buckets))
	for i, b := range buckets {
		names[i], emission[i], burst[i] = b.Name, b.Emission.Microseconds(), b.Burst.Microseconds()
	}
	want := max(1, t.Want)
	for attempt := 0; ; attempt++ {
		var found bool
		var taken, now int64
		var got []string
		var tats []int64
		err := s.pool.QueryRow(ctx, takeRate, names, emission, burst, want, max(0, t.Refund), max(0, t.Owed)).
			Scan(&found, &taken, &now, &got, &tats)
		if err != nil {
			return Charge{}, mapErr("charge rate buckets", err)
		}
		if !found && attempt == 0 {
			if _, err := s.pool.Exec(ctx, addBuckets, names); err != nil {
				return Charge{}, mapErr("add rate buckets", err)
			}
			continue
		}
		if !found {
			return Charge{}, fmt.Errorf("charge rate buckets: %v vanished", names)
		}
		c.Taken, c.Allowed = int(taken), taken > 0
		c.Now = time.UnixMicro(now)
		byName := make(map[string]int64, len(got))
		for i, n := range got {
			byName[n] = tats[i]
		}
		c.Buckets = make([]BucketState, len(names))
		for i, n := range names {
			c.Buckets[i] = BucketState{Name: n, TAT: time.UnixMicro(byName[n])}
		}
		return c, nil
	}
}

// chargeRates moves each bucket's TAT on by its cost in microseconds
// whatever room it has (it may go past now + burst: a debt), making missing
// buckets; the rows are written in name order, as takeRate locks them.
const chargeRates = `
WITH clock AS (
    SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now
), want AS (
    SELECT w.bucket, w.cost FROM unnest($1::text[], $2::bigint[]) AS w(bucket, cost) ORDER BY w.bucket
)
INSERT INTO rate_buckets AS r (bucket, tat)
SELECT want.bucket, clock.now + want.cost FROM want CROSS JOIN clock
ON CONFLICT (bucket) DO UPDATE SET tat = greatest(r.tat, (SELECT now FROM clock)) + excluded.tat - (SELECT now FROM clock)
RETURNING r.bucket, r.tat, (SELECT now FROM clock)`

// ChargeRates charges costs to the named buckets after the fact (what an
// answer cost, known once it is made; requests let through on credit),
// even past their room, in one statement, and answers each bucket's TAT
// and PostgreSQL's clock: a bucket has room again once the clock passes
// its TAT less its burst. Names must be distinct.
func (s *Store) ChargeRates(ctx context.Context, costs map[string]time.Duration) (tats map[string]time.Time, now time.Time, err error) {
	names := make([]string, 0, len(costs))
	micros := make([]int64, 0, len(costs))
	for n, c := range costs {
		names, micros = append(names, n), append(micros, c.Microseconds())
	}
	rows, _ := s.pool.Query(ctx, chargeRates, names, micros)
	tats = make(map[string]time.Time, len(costs))
	var name string
	var tat, clock int64
	_, err = pgx.ForEachRow(rows, []any{&name, &tat, &clock}, func() error {
		tats[name], now = time.UnixMicro(tat), time.UnixMicro(clock)
		return nil
	})
	return tats, now, mapErr("charge rate buckets", err)
}
