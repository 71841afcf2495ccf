// Package admission shares the database among data owners. Searches, ES|QL
// queries, export listings and streams can each hold a PostgreSQL
// connection for seconds; a Gate lets at most Slots of them run at once in
// all, so that the rest of the pool stays free for short requests (reading
// an ISP, a client), and at most PerOwner for one data owner, so that one
// tenant's flood of slow searches leaves room for the others'. Work over
// its share waits up to Wait for a place, then is refused with a 429 whose
// Retry-After says when to try again (the server's Wait is
// limits.AdmissionWait).
package admission

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
)

// Gate admits heavy work. The zero Gate and a nil *Gate admit everything.
type Gate struct {
	slots    chan struct{}
	perOwner int
	wait     time.Duration

	mu     sync.Mutex
	owners map[int64]chan struct{}
}

// New makes a gate of slots places in all and perOwner per data owner.
func New(slots, perOwner int, wait time.Duration) *Gate {
	return &Gate{slots: make(chan struct{}, slots), perOwner: perOwner, wait: wait, owners: map[int64]chan struct{}{}}
}

// Busy is the 429 of heavy work that found no place in time.
type Busy struct {
	PerOwner   int
	RetryAfter time.Duration
}

func (e *Busy) Error() string {
	return fmt.Sprintf("too many searches and exports at once: at most %d of one data owner run at the same time "+
		"(and a share of the server's connections in all); try again in %d seconds", e.PerOwner, int(e.RetryAfter.Seconds()))
}
func (e *Busy) Unwrap() error         { return apierr.ErrTooManyRequests }
func (e *Busy) PublicMessage() string { return e.Error() }

// retryAfter is what a refused caller is told to wait: about as long as it
// waited already.
const retryAfter = limits.BusyRetryAfterSeconds * time.Second

// Enter waits for a place for owner's heavy work; leave gives it back.
func (g *Gate) Enter(ctx context.Context, owner int64) (leave func(), err error) {
	if g == nil || g.slots == nil {
		return func() {}, nil
	}
	own := g.ownerSlots(owner)
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	take := func(c chan struct{}) error {
		select {
		case c <- struct{}{}:
			return nil
		default:
		}
		select {
		case c <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return &Busy{PerOwner: g.perOwner, RetryAfter: retryAfter}
		}
	}
	if err := take(own); err != nil {
		return nil, err
	}
	if err := take(g.slots); err != nil {
		<-own
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { <-g.slots; <-own }) }, nil
}

func (g *Gate) ownerSlots(owner int64) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.owners[owner]
	if !ok {
		c = make(chan struct{}, g.perOwner)
		g.owners[owner] = c
	}
	return c
}
