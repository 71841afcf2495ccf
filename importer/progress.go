package importer

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// reportBad counts a bad line. The first line of each reason is written
// to Out at once (the progress line cleared first); the lines of a reason
// met again are written together at the end (reportGroups).
func (im *importer) reportBad(line int, err error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.sum.Bad++
	msg := err.Error()
	g := im.groups[msg]
	if g != nil {
		g.add(line)
		return
	}
	if len(im.groups) < maxGroups {
		if im.groups == nil {
			im.groups = map[string]*badGroup{}
		}
		g = &badGroup{}
		g.add(line)
		im.groups[msg], im.order = g, append(im.order, msg)
	}
	im.clearProgressLocked()
	fmt.Fprintf(im.Out, "line %d: %s\n", line, msg)
}

// maxGroups bounds the reasons held for reportGroups; the lines of further
// reasons are each written at once.
const maxGroups = 1000

// badGroup is the lines of one reason, as ranges of line numbers.
type badGroup struct {
	n      int
	ranges [][2]int // first and last line; in the order met, merged when adjacent
}

func (g *badGroup) add(line int) {
	g.n++
	if k := len(g.ranges) - 1; k >= 0 && g.ranges[k][1]+1 == line {
		g.ranges[k][1] = line
		return
	}
	g.ranges = append(g.ranges, [2]int{line, line})
}

// lines is "1–30, 35, 40–41": the ranges sorted and merged.
func (g *badGroup) lines() string {
	rs := slices.Clone(g.ranges)
	slices.SortFunc(rs, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	for i := 0; i < len(rs); {
		from, to := rs[i][0], rs[i][1]
		for i++; i < len(rs) && rs[i][0] <= to+1; i++ {
			to = max(to, rs[i][1])
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if from == to {
			fmt.Fprintf(&b, "%d", from)
		} else {
			fmt.Fprintf(&b, "%d–%d", from, to)
		}
	}
	return b.String()
}

// reportGroups writes, for each reason met on more than one line, how many
// lines and which: "30 lines: client belongs to another data owner: lines
// 1–30"; then the hint about the input's shape, if any.
func (im *importer) reportGroups() {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.clearProgressLocked()
	for _, msg := range im.order {
		if g := im.groups[msg]; g.n > 1 {
			fmt.Fprintf(im.Out, "%d lines: %s: lines %s\n", g.n, msg, g.lines())
		}
	}
	if im.hint != "" {
		fmt.Fprintln(im.Out, im.hint)
	}
}

// noteShape remembers a hint when bad line n (its text) shows that the
// input is not NDJSON but a JSON array or a pretty-printed document.
func (im *importer) noteShape(n int, text []byte) {
	t := bytes.TrimSpace(text)
	switch {
	case len(text) > 200: // not a line of a pretty-printed document
	case n == 1 && bytes.HasPrefix(t, []byte("[")):
		im.setHint("the input is a JSON array: import takes one JSON object per line (NDJSON); " +
			"convert the file with: jq -c '.[]' FILE > FILE.ndjson")
	case slices.Contains([]string{"{", "[", "}", "]", "},", "],"}, string(t)),
		bytes.HasPrefix(t, []byte(`"`)) && (bytes.HasSuffix(t, []byte(": {")) || bytes.HasSuffix(t, []byte(": ["))):
		im.setHint("the input looks pretty-printed (one document over several lines): import takes one JSON object " +
			"per line (NDJSON); convert the file with: jq -c . FILE > FILE.ndjson (jq -c '.[]' for an array)")
	}
}

func (im *importer) setHint(h string) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.hint == "" {
		im.hint = h
	}
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

func (im *importer) clearProgressLocked() {
	if im.progress {
		fmt.Fprint(im.Out, "\r\033[K")
		im.progress = false
	}
}
