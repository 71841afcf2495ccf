package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func TestReadLine(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     []string // each line's text; "<long>" for a line not kept
		lengths  []int64
	}{
		{"lines and their ends", "ab\ncd\n", 10, []string{"ab", "cd", ""}, []int64{3, 3, 0}},
		{"no final line end", "ab\ncd", 10, []string{"ab", "cd"}, []int64{3, 2}},
		{"CRLF trimmed, counted", "ab\r\ncd\r\n", 10, []string{"ab", "cd", ""}, []int64{4, 4, 0}},
		{"exactly max bytes", "abcd\r\n", 4, []string{"abcd", ""}, []int64{6, 0}},
		{"one byte over max", "abcde\nab\n", 4, []string{"<long>", "ab", ""}, []int64{6, 3, 0}},
		{"over max, last line", "ab\nabcdefgh", 4, []string{"ab", "<long>"}, []int64{3, 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tc.in), 16) // lines span buffer fills
			var got []string
			var lengths []int64
			for {
				line, n, err := readLine(r, tc.max)
				if line == nil && n > 0 {
					got = append(got, "<long>")
				} else {
					got = append(got, string(line))
				}
				lengths = append(lengths, n)
				if err != nil {
					if err != io.EOF {
						t.Fatal(err)
					}
					break
				}
			}
			if fmt.Sprint(got, lengths) != fmt.Sprint(tc.want, tc.lengths) {
				t.Errorf("lines %q lengths %v, want %q %v", got, lengths, tc.want, tc.lengths)
			}
		})
	}
}

func TestWriterOfIsStableAndInRange(t *testing.T) {
	seen := map[int]bool{}
	for i := range 100 {
		id := fmt.Sprintf("doc-%d", i)
		w := writerOf(id, 3)
		if w < 0 || w >= 3 || writerOf(id, 3) != w {
			t.Fatalf("writerOf(%q, 3) = %d", id, w)
		}
		seen[w] = true
	}
	if len(seen) != 3 {
		t.Errorf("100 ids went to writers %v, want all 3", seen)
	}
}

// measurement is one NDJSON line of a measurement of client c.
func measurement(id, c string) string {
	return fmt.Sprintf(`{"id":%q,"type":"WebMeasurement","client_uuid":%q,"created_at":"2026-11-02T10:00:00Z"}`, id, c)
}

func TestRunStoresTheDocumentsAndReportsBadLines(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "importer-run")
	c := uuid.NewString()
	in := strings.Join([]string{
		measurement("a", c),
		`{"id":"broken",`,
		measurement("b", c),
		measurement("a", c)[:60] + strings.Repeat(" ", 200) + "}", // over MaxLineBytes
		measurement("a", c) + ` `,                                 // the same document again: unchanged
	}, "\n")
	var out bytes.Buffer
	s, err := Run(context.Background(), e.Store, strings.NewReader(in), Options{
		OwnerID: o.ID, Kind: store.KindMeasurement, Batch: 1, Workers: 3, MaxLineBytes: 200, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{InsertResult: store.InsertResult{Inserted: 2, Unchanged: 1, ClientsCreated: 1}, Bad: 2}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	if got := out.String(); !strings.HasPrefix(got, "line 2: invalid JSON") ||
		!strings.Contains(got, "\nline 4: longer than 200 bytes (the --max-line-bytes limit): ") || strings.Count(got, "\n") != 2 {
		t.Errorf("bad lines reported as %q", got)
	}
}

// syncBuffer is a bytes.Buffer safe to read while the importer writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

// With Progress set, Run redraws a progress line (lines, rate, share of
// Size read, loaded and bad) while the input stays open and clears it at
// the end.
func TestRunDrawsAndClearsTheProgressLine(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "importer-progress")
	line := measurement("p", uuid.NewString()) + "\n"
	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), e.Store, pr, Options{OwnerID: o.ID, Kind: store.KindMeasurement,
			Out: &out, Progress: true, Size: int64(2 * len(line))})
		done <- err
	}()
	fmt.Fprint(pw, line)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "1 lines  "); {
		if time.Now().After(deadline) {
			t.Fatalf("no progress line after 20 s: %q", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "\r\x1b[K1 lines  ") || !strings.Contains(got, " lines/s  50.0%  (loaded ") ||
		!strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress output %q", got)
	}
}

// An import whose context has ended stores nothing and says why.
func TestRunStopsWhenTheContextHasEnded(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "importer-cancel")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := Run(ctx, e.Store, strings.NewReader(measurement("x", uuid.NewString())), Options{OwnerID: o.ID, Kind: store.KindMeasurement})
	if !errors.Is(err, context.Canceled) || s.Loaded() != 0 {
		t.Errorf("err = %v, %d loaded; want context.Canceled, 0", err, s.Loaded())
	}
}
