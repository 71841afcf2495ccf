package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestTakeRateAllOrNothing: a charge moves every bucket or none; the
// first charge of a new bucket makes it full; a statement that finds a
// bucket without room changes nothing.
func TestTakeRateAllOrNothing(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	name := apitest.Unique("rt")
	roomy := store.Bucket{Name: name + ":roomy", Emission: time.Minute, Burst: 10 * time.Minute}
	tight := store.Bucket{Name: name + ":tight", Emission: time.Minute, Burst: 2 * time.Minute}
	for i := range 2 {
		c, err := e.Store.TakeRate(ctx, []store.Bucket{roomy, tight})
		if err != nil || !c.Allowed {
			t.Fatalf("charge %d: %+v, %v", i, c, err)
		}
		if ahead := c.Buckets[1].TAT.Sub(c.Now); ahead <= time.Duration(i)*time.Minute || ahead > time.Duration(i+1)*time.Minute {
			t.Errorf("charge %d: tight bucket %s ahead, want %d minutes", i, ahead, i+1)
		}
	}
	c, err := e.Store.TakeRate(ctx, []store.Bucket{roomy, tight})
	if err != nil || c.Allowed {
		t.Fatalf("third charge: %+v, %v; want refused", c, err)
	}
	// Refused: the roomy bucket was not charged (two minutes ahead, not three).
	if ahead := c.Buckets[0].TAT.Sub(c.Now); ahead > 2*time.Minute || ahead < 2*time.Minute-10*time.Second {
		t.Errorf("roomy bucket %s ahead after a refused charge, want 2 minutes", ahead)
	}
	c, err = e.Store.TakeRate(ctx, []store.Bucket{roomy})
	if err != nil || !c.Allowed {
		t.Fatalf("the roomy bucket alone: %+v, %v", c, err)
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
			if _, err := e.Store.TakeRate(ctx, buckets); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
