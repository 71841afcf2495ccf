package importer

import (
	"fmt"
	"sync"
	"time"
)

// reportBad counts a bad line and writes it to Out, clearing the progress
// line first.
func (im *importer) reportBad(line int, err error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.sum.Bad++
	im.clearProgressLocked()
	fmt.Fprintf(im.Out, "line %d: %v\n", line, err)
}

// showProgress redraws a progress line twice a second when Progress is set.
func (im *importer) showProgress() (stop func()) {
	if !im.Progress {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				im.drawProgress()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// drawProgress writes the progress line: lines read, their rate, the share
// of the input read (when its size is known), loaded and bad so far.
func (im *importer) drawProgress() {
	lines := im.lines.Load()
	rate := float64(lines) / max(time.Since(im.startedAt).Seconds(), 1e-9)
	msg := fmt.Sprintf("%d lines  %.0f lines/s", lines, rate)
	if im.Size > 0 {
		msg += fmt.Sprintf("  %.1f%%", 100*float64(im.read.Load())/float64(im.Size))
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	fmt.Fprintf(im.Out, "\r\033[K%s  (loaded %d, bad %d)", msg, im.sum.Loaded(), im.sum.Bad)
	im.progress = true
}

func (im *importer) clearProgress() {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.clearProgressLocked()
}

func (im *importer) clearProgressLocked() {
	if im.progress {
		fmt.Fprint(im.Out, "\r\033[K")
		im.progress = false
	}
}
