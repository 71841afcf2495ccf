package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// Leases spare a busy key the round trip to PostgreSQL on every request.
// A charge may take several requests at once (store.TakeRate's Want): the
// server spends them on the key's next requests without asking again,
// for leaseTTL at most, and gives back what is left with its next charge.
// What a lease holds is spent in PostgreSQL, so servers sharing a bucket
// never let more requests through than the limit together; a server's
// unspent lease is, for at most leaseTTL, room the others do not see.
//
// A lease starts at one request (a charge per request, as without leases)
// and doubles while each one is spent within growWithin of being taken,
// up to a twentieth of the smallest limit it charges (leaseShare) and
// maxLease; it halves when one ends unspent. So a key making a few
// requests a second is charged request by request, and the small limits
// of tests stay exact, while a key making thousands pays one statement
// for up to maxLease of them. The headers stay exact for one server: the
// bucket's TAT minus what the lease still holds is the TAT as if each
// request had been charged alone.
//
// A refused charge is remembered too: until the time it names, the key's
// requests are refused here without a statement (a flood of requests over
// the limit costs PostgreSQL nothing).
//
// And a key far from its limit is not made to wait for a charge at all:
// while what this server last heard of its buckets (at most creditTTL ago;
// a key it has not seen yet counts as full) leaves more than half of each
// limit after the request, the request passes on credit and its charge is
// sent with the others' within flushEvery, in one statement (credit.go).
// Each request is still charged once in PostgreSQL; with several servers,
// the requests a server passed on credit are not seen by the others until
// its next flush, so a key that sends to N servers at once may pass up to
// half a limit more per other server while its bucket is less than half
// used, and a server that starts may pass up to half a limit of a key
// that had spent it all before its first flush. Like leases, credit is for
// limits of 40 a period and more.
const (
	leaseTTL   = time.Second
	growWithin = 100 * time.Millisecond
	leaseShare = 20
	maxLease   = 128
	creditTTL  = 10 * time.Second
	flushEvery = 100 * time.Millisecond
	// maxLeases bounds the leases kept; past it, the ones that ended go.
	maxLeases = 10000
)

// leases are the limiter's leases by bucket set.
type leases struct {
	mu  sync.Mutex
	all map[string]*lease
}

// lease is what this server holds of one set of buckets.
type lease struct {
	mu sync.Mutex
	// buckets are the set's buckets (for the flusher).
	buckets []store.Bucket
	// charge is the last answer of PostgreSQL about the buckets, heard at
	// local time seen (a charge or a flush).
	charge store.Charge
	seen   time.Time
	// at is when the last lease was taken.
	at time.Time
	// owed requests passed on credit and are not charged yet; flushing of
	// them are on their way to PostgreSQL.
	owed, flushing int
	// left requests of the charge are not spent yet; they may be until.
	left  int
	until time.Time
	// size is how many the next charge asks for.
	size int
	// refusedUntil: the last charge was refused, and no request passes
	// before then.
	refusedUntil time.Time
	// announced is the latest time a 429 of the set told its client to
	// come back (hold.go).
	announced time.Time
	// fetching is open while a request charges for the set; the others
	// wait for its answer. flushed is open while a flush of its owed
	// requests is on its way (exactly while flushing > 0). At most one of
	// them is: a charge and a flush of the same set never cross, so that
	// what a charge answers holds every flush before it and none after it,
	// and no request is counted twice (once in PostgreSQL's answer, once
	// as flushing).
	fetching, flushed chan struct{}
}

// get answers the lease of the bucket set named key.
func (ls *leases) get(key string, now time.Time) *lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if le, ok := ls.all[key]; ok {
		return le
	}
	if ls.all == nil {
		ls.all = map[string]*lease{}
	}
	if len(ls.all) >= maxLeases {
		for k, le := range ls.all {
			if le.ended(now) {
				delete(ls.all, k)
			}
		}
		if len(ls.all) >= maxLeases {
			return &lease{} // kept by nobody: a charge per request
		}
	}
	// A new lease takes its buckets as full, on our clock, until its first
	// charge or flush tells better.
	le := &lease{seen: now, charge: store.Charge{Allowed: true, Now: now}}
	ls.all[key] = le
	return le
}

// ended reports whether le holds nothing a request could use at now.
func (le *lease) ended(now time.Time) bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.fetching == nil && le.owed+le.flushing == 0 && !now.Before(le.until) && !now.Before(le.refusedUntil) &&
		!now.Before(le.announced)
}

// take charges one request to the buckets of limits: from the lease when
// it holds one, else with a charge to PostgreSQL that takes the next
// lease. The Charge answered describes the buckets as if this request had
// been charged alone (for the headers). Waiting for PostgreSQL (its own
// charge, another request's that takes the lease, or a flush) is bounded by
// chargeTimeout; a request the lease serves makes no timer.
func (l *Limiter) take(ctx context.Context, limits []limit) (store.Charge, error) {
	var cancel context.CancelFunc // ctx within chargeTimeout once take waits for PostgreSQL
	le := l.leases.get(setKey(limits), time.Now())
	le.mu.Lock()
	if le.buckets == nil && !le.seen.IsZero() { // new: its buckets are taken as full
		le.buckets = buckets(limits)
		le.charge.Buckets = make([]store.BucketState, len(limits))
		for i, b := range le.buckets {
			le.charge.Buckets[i].Name = b.Name
		}
	}
	for {
		now := time.Now()
		switch {
		case le.left > 0 && now.Before(le.until):
			le.left--
			c := le.view(now)
			le.mu.Unlock()
			return c, nil
		case now.Before(le.refusedUntil):
			c := le.view(now)
			le.mu.Unlock()
			return c, nil
		case le.credit(limits, now):
			le.owed++
			c := le.view(now)
			le.mu.Unlock()
			l.owe(le)
			return c, nil
		case le.fetching != nil || le.flushed != nil:
			wait := le.fetching
			if wait == nil {
				wait = le.flushed
			}
			le.mu.Unlock()
			if cancel == nil {
				ctx, cancel = context.WithTimeout(ctx, chargeTimeout)
				defer cancel()
			}
			select {
			case <-wait:
			case <-ctx.Done():
				return store.Charge{}, ctx.Err()
			}
			le.mu.Lock()
			continue
		}
		break
	}
	refund := 0
	if le.left > 0 { // ended unspent
		refund, le.left = le.left, 0
	}
	want := le.nextSize(time.Now(), refund > 0, leaseCap(limits))
	owed := le.owed // charged with this statement, not by the flusher
	le.owed = 0
	fetched := make(chan struct{})
	le.fetching = fetched
	bs := buckets(limits)
	le.buckets = bs
	le.mu.Unlock()

	if cancel == nil {
		ctx, cancel = context.WithTimeout(ctx, chargeTimeout)
		defer cancel()
	}
	c, err := l.Store.TakeRate(ctx, bs, store.Take{Want: want, Refund: refund, Owed: owed})

	le.mu.Lock()
	defer le.mu.Unlock()
	le.fetching = nil
	close(fetched)
	if err != nil {
		return c, err
	}
	le.charge, le.at, le.size = c, time.Now(), want
	le.seen = le.at
	if !c.Allowed {
		le.refusedUntil = le.at.Add(refusedFor(limits, c))
		return c, nil
	}
	le.left, le.until = c.Taken-1, le.at.Add(leaseTTL)
	return le.view(le.at), nil
}

// nextSize is how many requests the next charge asks for.
func (le *lease) nextSize(now time.Time, unspent bool, limit int) int {
	switch {
	case le.size == 0:
		return 1
	case unspent:
		return max(1, le.size/2)
	case now.Sub(le.at) < growWithin:
		return min(le.size*2, limit)
	}
	return min(le.size, limit)
}

// leaseCap is the largest lease of limits' buckets.
func leaseCap(limits []limit) int {
	n := maxLease
	for _, lim := range limits {
		n = min(n, lim.rate.Limit/leaseShare)
	}
	return max(1, n)
}

// refusedFor is how long after a refused charge c no request passes: until
// every bucket has room for one.
func refusedFor(limits []limit, c store.Charge) time.Duration {
	var wait time.Duration
	for i, b := range buckets(limits) {
		wait = max(wait, c.Buckets[i].TAT.Add(b.Emission).Sub(c.Now.Add(b.Burst)))
	}
	return wait
}

// view is the lease's last charge seen at local time now (le.mu held, its
// buckets known): PostgreSQL's
// clock moved on as much as ours, and each bucket's TAT is what it would
// be had only the spent requests been charged, those on credit included.
func (le *lease) view(now time.Time) store.Charge {
	c := store.Charge{Allowed: !now.Before(le.refusedUntil), Now: le.charge.Now.Add(now.Sub(le.seen)),
		Buckets: make([]store.BucketState, len(le.charge.Buckets))}
	if c.Allowed {
		c.Taken = 1
	}
	for i, b := range le.buckets {
		c.Buckets[i] = le.charge.Buckets[i]
		tat := c.Buckets[i].TAT
		if owed := le.owed + le.flushing; owed > 0 {
			tat = later(tat, c.Now).Add(time.Duration(owed) * b.Emission)
		}
		c.Buckets[i].TAT = tat.Add(-time.Duration(le.left) * b.Emission)
	}
	return c
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
