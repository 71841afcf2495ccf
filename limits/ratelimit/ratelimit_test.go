package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/store"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]Rate{
		"1200/1m": {1200, time.Minute}, " 5 / 1s ": {5, time.Second}, "off": {}, "OFF": {},
		"100/1h30m": {100, 90 * time.Minute},
	} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "0/1m", "-1/1m", "10/0s", "10/500ms", "10/48h", "x/1m", "10/m", "2000000/1m"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
		}
	}
	if s := (Rate{1200, time.Minute}).String(); s != "1200/1m" {
		t.Errorf("String = %q", s)
	}
	if s := (Rate{5, 90 * time.Minute}).String(); s != "5/1h30m" {
		t.Errorf("String = %q", s)
	}
}

// TestVerdict: what the headers say follows from the buckets' TATs: the
// binding bucket is the one with the fewest requests left, and a refused
// request is told to wait until its most distant bucket has room.
func TestVerdict(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	key := limit{name: "key:1", what: "this API key", rate: Rate{10, time.Minute}}      // one per 6 s
	owner := limit{name: "owner:1", what: "the data owner", rate: Rate{4, time.Minute}} // one per 15 s
	charge := func(allowed bool, keyTAT, ownerTAT time.Duration) store.Charge {
		return store.Charge{Allowed: allowed, Now: now, Buckets: []store.BucketState{
			{Name: "key:1", TAT: now.Add(keyTAT)}, {Name: "owner:1", TAT: now.Add(ownerTAT)}}}
	}
	// Allowed: the key has 10-1 left, the owner 4-3: the owner binds.
	a := verdict([]limit{key, owner}, charge(true, 6*time.Second, 45*time.Second))
	if a.limit != 4 || a.remaining != 1 || a.reset != now.Add(45*time.Second).Unix() {
		t.Errorf("allowed: %+v", a)
	}
	// Refused by the owner (full: TAT a minute ahead): the next place
	// frees in 15 s, not a minute.
	a = verdict([]limit{key, owner}, charge(false, 6*time.Second, 60*time.Second))
	if a.limit != 4 || a.remaining != 0 || a.retryAfter != 15 || a.what != "the data owner" {
		t.Errorf("refused: %+v", a)
	}
	// A wait of 2.1 s is told as 3 s.
	a = verdict([]limit{key}, store.Charge{Allowed: false, Now: now,
		Buckets: []store.BucketState{{Name: "key:1", TAT: now.Add(time.Minute - 3900*time.Millisecond)}}})
	if a.retryAfter != 3 {
		t.Errorf("retry after %d, want 3 (2.1 s rounded up)", a.retryAfter)
	}
}

// TestHoldRefusal: a refusal is held only when the key's last 429 told it
// to come back later than now, for at most RepeatHold, never past that
// time, not at all when the setting is off or limits.MaxHeld are held
// already, and not after the client went away.
func TestHoldRefusal(t *testing.T) {
	key := []limit{{name: "key:7", what: "this API key", rate: Rate{2, time.Hour}}}
	l := &Limiter{RepeatHold: 200 * time.Millisecond}
	ctx := t.Context()
	if d := l.holdRefusal(ctx, key, time.Now().Add(time.Hour)); d != 0 {
		t.Errorf("first refusal held %s", d)
	}
	if d := l.holdRefusal(ctx, key, time.Now().Add(time.Hour)); d < 200*time.Millisecond {
		t.Errorf("repeated refusal held %s, want the 200ms hold", d)
	}
	// Told to come back in 50 ms: held until then, not for the whole hold.
	other := []limit{{name: "key:8", rate: Rate{2, time.Hour}}}
	l.holdRefusal(ctx, other, time.Now().Add(50*time.Millisecond))
	if d := l.holdRefusal(ctx, other, time.Now().Add(time.Hour)); d < 40*time.Millisecond || d >= 200*time.Millisecond {
		t.Errorf("held %s, want until the Retry-After given (50 ms)", d)
	}
	// Back after the time it was given: refused at once.
	late := []limit{{name: "key:9", rate: Rate{2, time.Hour}}}
	l.holdRefusal(ctx, late, time.Now().Add(-time.Millisecond))
	if d := l.holdRefusal(ctx, late, time.Now().Add(time.Hour)); d != 0 {
		t.Errorf("a key back after its Retry-After held %s", d)
	}
	// Full: limits.MaxHeld are held already.
	l.held.Store(limits.MaxHeld)
	if d := l.holdRefusal(ctx, key, time.Now().Add(time.Hour)); d != 0 {
		t.Errorf("held %s with %d held already", d, limits.MaxHeld)
	}
	l.held.Store(0)
	// The client goes away: the hold ends, and the count with it.
	l.RepeatHold = time.Hour
	gone, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if d := l.holdRefusal(gone, key, time.Now().Add(time.Hour)); d > 10*time.Second {
		t.Errorf("held %s after the client went away", d)
	}
	if n := l.Held(); n != 0 {
		t.Errorf("Held = %d after the holds ended", n)
	}
	// Off: never held.
	off := &Limiter{}
	off.holdRefusal(ctx, key, time.Now().Add(time.Hour))
	if d := off.holdRefusal(ctx, key, time.Now().Add(time.Hour)); d != 0 {
		t.Errorf("held %s with the hold off", d)
	}
}
