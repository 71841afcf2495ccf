package ratelimit

import (
	"context"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
)

// Holding a refusal: a client that comes back before the Retry-After it
// was given, and is refused again, gets its 429 only after a pause (the
// Limiter's RepeatHold, at most until that Retry-After). A client that
// honours Retry-After never waits; one that loops on its 429s, as a flood
// does, makes a few requests a second per connection instead of thousands,
// and its refusals stop taking the CPU the other tenants' requests need.
// The first refusal of a key is answered at once, and no more than
// limits.MaxHeld requests of a server are held at a time: past that,
// refusals are answered at once (a held request costs a goroutine and a
// connection). The default hold and its bound are limits.RepeatHold and
// limits.MaxRepeatHold.

// Held is how many refused requests this server is holding now (a metric).
func (l *Limiter) Held() int64 {
	if l == nil {
		return 0
	}
	return l.held.Load()
}

// holdRefusal pauses a refused request when its key was already refused
// and told to come back later than now, and answers how long it paused.
// retryAt is when this refusal tells the client to come back.
func (l *Limiter) holdRefusal(ctx context.Context, set []limit, retryAt time.Time) time.Duration {
	now := time.Now()
	le := l.leases.get(setKey(set), now)
	le.mu.Lock()
	announced := le.announced
	le.announced = later(le.announced, retryAt)
	le.mu.Unlock()
	if l.RepeatHold <= 0 || !now.Before(announced) {
		return 0
	}
	if l.held.Add(1) > limits.MaxHeld {
		l.held.Add(-1)
		return 0
	}
	defer l.held.Add(-1)
	t := time.NewTimer(min(l.RepeatHold, announced.Sub(now)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return time.Since(now)
}

// setKey names the lease of limits' buckets.
func setKey(limits []limit) string {
	if len(limits) == 1 {
		return limits[0].name
	}
	var k strings.Builder
	n := len(limits) - 1
	for _, lim := range limits {
		n += len(lim.name)
	}
	k.Grow(n)
	for i, lim := range limits {
		if i > 0 {
			k.WriteByte(' ')
		}
		k.WriteString(lim.name)
	}
	return k.String()
}
