package budget

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSettleCountsEachByteOnce: pieces of work of one operation that spend
// and settle at once, in any order, settle every byte spent exactly once.
func TestSettleCountsEachByteOnce(t *testing.T) {
	ctx := With(context.Background(), 1<<40)
	var settled atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				_ = Spend(ctx, 3)
				settled.Add(Settle(ctx))
			}
		})
	}
	wg.Wait()
	settled.Add(Settle(ctx))
	if got := settled.Load(); got != 8*1000*3 {
		t.Errorf("settled %d bytes, want %d", got, 8*1000*3)
	}
	if Settle(context.Background()) != 0 {
		t.Error("a context without a budget settled bytes")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"384MiB": 384 << 20, "2GiB": 2 << 30, "64KiB": 64 << 10, "4096": 4096, "4096B": 4096, " 1 GiB ": 1 << 30} {
		if got, ok := ParseSize(in); !ok || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "0", "-1GiB", "1.5GiB", "12TB", "lots", "2000000GiB"} {
		if _, ok := ParseSize(in); ok {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}
