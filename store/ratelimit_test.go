package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// perMinute makes two new buckets refilled one a minute, of roomy and
// tight requests at most.
func perMinute(prefix string, roomy, tight int) (store.Bucket, store.Bucket) {
	name := apitest.Unique(prefix)
	return store.Bucket{Name: name + ":roomy", Emission: time.Minute, Burst: time.Duration(roomy) * time.Minute},
		store.Bucket{Name: name + ":tight", Emission: time.Minute, Burst: time.Duration(tight) * time.Minute}
}

// TestTakeRateAllOrNothing: a charge moves every bucket or none; the
// first charge of a new bucket makes it full; a statement that finds a
// bucket without room changes nothing.
func TestTakeRateAllOrNothing(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	roomy, tight := perMinute("rt", 10, 2)
	for i := range 2 {
		c, err := e.Store.TakeRate(ctx, []store.Bucket{roomy, tight}, store.Take{})
		if err != nil || !c.Allowed {
			t.Fatalf("charge %d: %+v, %v", i, c, err)
		}
		if ahead := c.Buckets[1].TAT.Sub(c.Now); ahead <= time.Duration(i)*time.Minute || ahead > time.Duration(i+1)*time.Minute {
			t.Errorf("charge %d: tight bucket %s ahead, want %d minutes", i, ahead, i+1)
		}
	}
	c, err := e.Store.TakeRate(ctx, []store.Bucket{roomy, tight}, store.Take{})
	if err != nil || c.Allowed {
		t.Fatalf("third charge: %+v, %v; want refused", c, err)
	}
	// Refused: the roomy bucket was not charged (two minutes ahead, not three).
	if ahead := c.Buckets[0].TAT.Sub(c.Now); ahead > 2*time.Minute || ahead < 2*time.Minute-10*time.Second {
		t.Errorf("roomy bucket %s ahead after a refused charge, want 2 minutes", ahead)
	}
	c, err = e.Store.TakeRate(ctx, []store.Bucket{roomy}, store.Take{})
	if err != nil || !c.Allowed {
		t.Fatalf("the roomy bucket alone: %+v, %v", c, err)
	}
}

// TestTakeRateLease: a charge takes as many requests as asked when every
// bucket has room for them, else as many as the fullest bucket has room
// for; a refund gives back requests taken before, before taking, so that
// they can be taken again.
func TestTakeRateLease(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	roomy, tight := perMinute("lease", 100, 10)
	ahead := func(c store.Charge, i int) int {
		return int((c.Buckets[i].TAT.Sub(c.Now) + 30*time.Second) / time.Minute)
	}

	c, err := e.Store.TakeRate(ctx, []store.Bucket{roomy, tight}, store.Take{Want: 4})
	if err != nil || !c.Allowed || c.Taken != 4 || ahead(c, 0) != 4 || ahead(c, 1) != 4 {
		t.Fatalf("want 4: %+v, %v", c, err)
	}
	// 6 left in the tight bucket: asking for 8 takes 6.
	c, err = e.Store.TakeRate(ctx, []store.Bucket{roomy, tight}, store.Take{Want: 8})
	if err != nil || c.Taken != 6 || ahead(c, 0) != 10 || ahead(c, 1) != 10 {
		t.Fatalf("want 8 of 6 left: %+v, %v", c, err)
	}
	c, err = e.Store.TakeRate(ctx, []store.Bucket{roomy, tight}, store.Take{Want: 1})
	if err != nil || c.Allowed || c.Taken != 0 || ahead(c, 1) != 10 {
		t.Fatalf("full: %+v, %v; want refused", c, err)
	}
	// Giving 3 back makes room for 3 (and the roomy bucket gets them back too).
	c, err = e.Store.TakeRate(ctx, []store.Bucket{roomy, tight}, store.Take{Want: 5, Refund: 3})
	if err != nil || c.Taken != 3 || ahead(c, 0) != 10 || ahead(c, 1) != 10 {
		t.Fatalf("refund 3, want 5: %+v, %v", c, err)
	}
	c, err = e.Store.TakeRate(ctx, []store.Bucket{roomy}, store.Take{Want: 1, Refund: 2})
	if err != nil || c.Taken != 1 || ahead(c, 0) != 9 {
		t.Fatalf("refund 2 of the roomy bucket alone, take 1: %+v, %v", c, err)
	}
	c, err = e.Store.TakeRate(ctx, []store.Bucket{tight}, store.Take{Want: 1, Refund: 1})
	if err != nil || c.Taken != 1 || ahead(c, 0) != 10 {
		t.Fatalf("refund 1 and take 1 of the full tight bucket: %+v, %v", c, err)
	}
}

// BenchmarkTakeRate is the limiter's cost per request: one statement
// charging a key's and its data owner's buckets (sub-benchmark charge),
// beside the cheapest round trip on the same pool (select1), which is
// most of it.
func BenchmarkTakeRate(b *testing.B) {
	b.Run("charge", benchmarkCharge)
	b.Run("select1", func(b *testing.B) {
		pool := apitest.Get(b).Store.Pool()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := pool.Exec(context.Background(), "SELECT 1"); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func benchmarkCharge(b *testing.B) {
	e := apitest.Get(b)
	ctx := context.Background()
	buckets := []store.Bucket{
		{Name: fmt.Sprintf("bench-key:%d", time.Now().UnixNano()), Emission: time.Microsecond, Burst: time.Hour},
		{Name: fmt.Sprintf("bench-owner:%d", time.Now().UnixNano()), Emission: time.Microsecond, Burst: time.Hour},
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Store.TakeRate(ctx, buckets, store.Take{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestChargeRateGoesIntoDebt: a charge after the fact moves the bucket on
// by its cost whatever room is left, from now for a new or full bucket.
func TestChargeRateGoesIntoDebt(t *testing.T) {
	e := apitest.Get(t)
	name := apitest.Unique("debt")
	for i, want := range []time.Duration{10 * time.Minute, 70 * time.Minute} {
		tats, now, err := e.Store.ChargeRates(context.Background(), map[string]time.Duration{name: []time.Duration{10 * time.Minute, time.Hour}[i]})
		if err != nil {
			t.Fatal(err)
		}
		if ahead := tats[name].Sub(now); ahead < want-time.Second || ahead > want {
			t.Errorf("charge %d: TAT %s ahead, want %s", i, ahead, want)
		}
	}
}
