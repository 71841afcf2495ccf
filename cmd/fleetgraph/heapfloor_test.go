package main

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestFloorPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		floor, live, roots uint64
		want               int
	}{
		{64 * mib, 4 * mib, 0, 1500},         // 4 + 4×15 = 64
		{64 * mib, 4 * mib, 4 * mib, 750},    // 4 + 8×7.5 = 64
		{64 * mib, 16 * mib, 0, 300},         // 16 + 16×3 = 64
		{64 * mib, 30 * mib, 0, 113},         // just under the floor at twice live
		{64 * mib, 32 * mib, 0, 100},         // twice live reaches the floor
		{64 * mib, 200 * mib, 0, 100},        // a large live heap: Go's default
		{64 * mib, 1024, 0, maxFloorPercent}, // a tiny one: the bound
		{64 * mib, 0, 0, 100},                // nothing measured yet
		{64 * mib, 31 * mib, 2 * mib, 100},   // roots count
	} {
		if got := floorPercent(c.floor, c.live, c.roots); got != c.want {
			t.Errorf("floorPercent(%d MiB, %d, %d) = %d, want %d", c.floor/mib, c.live, c.roots, got, c.want)
		}
	}
}

// gogc is the GOGC in force.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// collectUntil runs collections until GOGC satisfies ok (the floor adjusts
// on the runtime's cleanup goroutine, after a collection), or fails.
func collectUntil(t *testing.T, what string, ok func(uint64) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(gogc()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOGC is %d", what, gogc())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHeapFloorTunesTheCollector: with little live the floor raises GOGC
// so that the next collection comes at the floor; with twice the live
// heap past the floor GOGC is Go's default again; stopping puts the
// default back for good.
func TestHeapFloorTunesTheCollector(t *testing.T) {
	if gogc() != 100 {
		t.Fatalf("GOGC is %d before the floor, want 100 (is the GOGC variable set?)", gogc())
	}
	const floor = 256 << 20
	stop := startHeapFloor(floor)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	collectUntil(t, "little live under a 256 MiB floor", func(p uint64) bool { return p > 400 })

	ballast := make([]byte, 160<<20) // live: twice it passes the floor
	for i := range ballast {
		ballast[i] = byte(i)
	}
	collectUntil(t, "160 MiB live", func(p uint64) bool { return p == 100 })
	runtime.KeepAlive(ballast)
	ballast = nil
	collectUntil(t, "the 160 MiB gone", func(p uint64) bool { return p > 400 })

	stop()
	stopped = true
	if p := gogc(); p != 100 {
		t.Fatalf("stopped: GOGC is %d, want 100", p)
	}
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p := gogc(); p != 100 {
		t.Fatalf("collections after the stop set GOGC to %d", p)
	}
}
