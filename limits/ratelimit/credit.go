package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Credit (see lease.go): requests of a key far from its limit pass at once
// and are charged afterwards, many in one statement.

// credit reports whether one more request may pass on credit at local
// time now: this server heard of the buckets at most creditTTL ago (or
// has just seen them first), they
// allow leases (limits of 40 a period and more), and after this request
// and the ones owed each would still have more than half its limit left.
func (le *lease) credit(limits []limit, now time.Time) bool {
	if le.buckets == nil || now.Sub(le.seen) > creditTTL || leaseCap(limits) < 2 {
		return false
	}
	c := le.view(now)
	for i, b := range le.buckets {
		tat := later(c.Buckets[i].TAT, c.Now).Add(b.Emission)
		if left := c.Now.Add(b.Burst).Sub(tat) / b.Emission; int(left) < limits[i].rate.Limit/2 {
			return false
		}
	}
	return true
}

// flusher sends the charges of the requests passed on credit.
type flusher struct {
	mu sync.Mutex
	// owing are the leases with requests owed.
	owing   map[*lease]struct{}
	running bool
}

// owe has le's owed requests charged within flushEvery: a flush loop
// runs while requests are owed.
func (l *Limiter) owe(le *lease) {
	f := &l.flusher
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.owing == nil {
		f.owing = map[*lease]struct{}{}
	}
	f.owing[le] = struct{}{}
	if !f.running {
		f.running = true
		go l.flushLoop()
	}
}

// flushLoop charges what is owed every flushEvery, and ends when nothing is.
func (l *Limiter) flushLoop() {
	f := &l.flusher
	for {
		time.Sleep(flushEvery)
		f.mu.Lock()
		owing := f.owing
		f.owing = nil
		if len(owing) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		l.flush(owing)
	}
}

// flush charges the requests the leases owe in one statement, and tells
// each lease what PostgreSQL answered of its buckets. A lease charging
// at the moment keeps what it owes for the next flush (its charge and a
// flush never cross; see lease.fetching). A charge that fails
// is logged and dropped (as a charge that times out lets its request go
// unlimited).
func (l *Limiter) flush(owing map[*lease]struct{}) {
	costs := map[string]time.Duration{}
	sent := make(map[*lease]int, len(owing))
	var later []*lease // charging now: flushed next time
	for le := range owing {
		le.mu.Lock()
		switch n := le.owed; {
		case n == 0: // a charge of the lease took them
		case le.fetching != nil:
			later = append(later, le)
		default:
			le.owed, le.flushing = 0, le.flushing+n
			le.flushed = make(chan struct{})
			sent[le] = n
			for _, b := range le.buckets {
				costs[b.Name] += time.Duration(n) * b.Emission
			}
		}
		le.mu.Unlock()
	}
	for _, le := range later {
		l.owe(le)
	}
	if len(costs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), chargeTimeout)
	tats, now, err := l.Store.ChargeRates(ctx, costs)
	cancel()
	seen := time.Now()
	if err != nil && l.Logger != nil {
		l.Logger.Warn("rate limit: requests let through on credit not charged", "requests", len(sent), "err", err)
	}
	for le, n := range sent {
		le.mu.Lock()
		le.flushing -= n
		close(le.flushed)
		le.flushed = nil
		if err == nil {
			for i, b := range le.buckets {
				le.charge.Buckets[i].TAT = tats[b.Name]
			}
			le.charge.Now, le.seen = now, seen
		}
		le.mu.Unlock()
	}
}
