package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A heap floor lets the heap grow to floor bytes before the collector
// runs, while what is live is small; above that the collector runs as
// Go's default (GOGC=100) has it, when the heap has grown to twice what
// was live. Go has no such setting: its next collection is due when the
// heap has grown by GOGC % of what the last one left live, whatever that
// was. A server answering small requests keeps about 12 MB live, so it
// collected every 12 MB of allocation: 21 times a second under 4,500
// lookups by id a second, its marking a tenth of the server's CPU
// (docs/benchmarks.md, "A heap floor"). After each collection the floor
// sets GOGC to what puts the next one at the floor (at most
// maxFloorPercent), or back to 100 once twice what is live is past it. So
// the heap's peak stays within an eighth of max(floor, twice what is
// live) — what GOGC=100 alone gives where a large heap is live, as under
// the lists of 2,000 clients — and the memory limit still bounds it.
type heapFloor struct {
	floor   uint64
	mu      sync.Mutex // over what follows: adjust runs on the runtime's cleanup goroutine
	percent int        // the GOGC set last
	stopped bool
	samples []metrics.Sample
}

// maxFloorPercent bounds the GOGC the floor sets: with a live heap of a
// few hundred KB (a server that has only started) the floor would ask
// for tens of thousands of percent, which says the same as this.
const maxFloorPercent = 10000

// startHeapFloor keeps a heap floor of floor bytes until stop is called,
// which puts GOGC back to 100. It is not for use with the GOGC
// environment variable (serve then leaves the collector to it).
func startHeapFloor(floor uint64) (stop func()) {
	h := &heapFloor{floor: floor, percent: 100,
		samples: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	h.adjust()
	h.arm()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.stopped = true
		h.percent = 100
		debug.SetGCPercent(100)
	}
}

// arm makes adjust run once the next collection is over: the collection
// finds the sentinel unreachable, and its cleanup runs after it.
func (h *heapFloor) arm() {
	runtime.AddCleanup(new([16]byte), func(h *heapFloor) {
		if h.adjust() {
			h.arm()
		}
	}, h)
}

// adjust sets GOGC for the live heap the last collection left; false
// once stopped.
func (h *heapFloor) adjust() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	metrics.Read(h.samples)
	p := floorPercent(h.floor, h.samples[0].Value.Uint64(), h.samples[1].Value.Uint64()+h.samples[2].Value.Uint64())
	// Small changes are not worth the runtime's lock (and the percent
	// moves with every collection's live heap).
	if p != h.percent && (p == 100 || p > h.percent*9/8 || p < h.percent*7/8) {
		debug.SetGCPercent(p)
		h.percent = p
	}
	return true
}

// floorPercent is the GOGC that puts the next collection at floor bytes
// for a live heap of live bytes and roots (the goroutines' stacks and the
// globals) of roots bytes, at least 100 and at most maxFloorPercent: the
// runtime lets the heap grow by GOGC % of live and roots together.
func floorPercent(floor, live, roots uint64) int {
	if live == 0 || 2*live+roots >= floor {
		return 100
	}
	p := (floor - live) * 100 / (live + roots)
	return int(min(max(p, 100), maxFloorPercent))
}
