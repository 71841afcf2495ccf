package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// openPty opens a pseudo-terminal: the master end (what a terminal would
// show is read from it) and the slave end (a real terminal for isTerminal).
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		m.Close()
		t.Skipf("ptsname: %v", errno)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the pty's slave: %v", err)
	}
	return m, s
}

// syncBuffer collects what a reader yields, safe to look at meanwhile.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

func (b *syncBuffer) drain(r io.Reader) {
	p := make([]byte, 4096)
	for {
		n, err := r.Read(p)
		b.mu.Lock()
		b.buf.Write(p[:n])
		b.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// slowImport runs an import of stdin into a new data owner, feeding it two
// good lines and a bad one, then holding the input open for hold before
// closing it; it answers the import's stdout and error.
func slowImport(t *testing.T, stderr *os.File, hold func()) (string, error) {
	t.Helper()
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-progress")
	c := uuid.NewString()
	pr, pw := io.Pipe()
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		args := []string{"--database-url", e.DatabaseURL, "--data-dir", t.TempDir(), "--data-owner", o.Slug, "--kind", "measurement", "-"}
		done <- importDocs(context.Background(), args, pr, &stdout, stderr)
	}()
	for i := range 2 {
		fmt.Fprintf(pw, `{"id":"p-%d","type":"WebMeasurement","client_uuid":%q,"created_at":"2026-11-02T10:00:00Z"}`+"\n", i, c)
	}
	fmt.Fprintln(pw, `{"id":"broken"`)
	hold()
	pw.Close()
	select {
	case err := <-done:
		return stdout.String(), err
	case <-time.After(time.Minute):
		t.Fatal("import did not end")
		return "", nil
	}
}

// On a terminal, import redraws a progress line on stderr while it reads
// (lines, rate, loaded and bad so far), clears it before each bad line it
// reports and at the end; stdout (not a terminal) gets only the summary.
func TestImportShowsProgressOnATerminal(t *testing.T) {
	master, slave := openPty(t)
	var screen syncBuffer
	go screen.drain(master)
	t.Cleanup(func() { slave.Close(); master.Close() })

	out, err := slowImport(t, slave, func() {
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(screen.String(), "(loaded 0, bad 1)") {
			if time.Now().After(deadline) {
				t.Errorf("no progress line on the terminal after 20 s: %q", screen.String())
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	if exitCode(err) != exitPartial {
		t.Fatalf("err = %v, want exit status %d", err, exitPartial)
	}
	time.Sleep(200 * time.Millisecond) // let the last bytes through the pty
	got := screen.String()
	if !strings.Contains(got, "\r\x1b[K3 lines  ") || !strings.Contains(got, " lines/s  (loaded 0, bad 1)") {
		t.Errorf("terminal shows %q, want a progress line of 3 lines, 0 loaded, 1 bad", got)
	}
	if !strings.Contains(got, "line 3: invalid JSON") {
		t.Errorf("terminal shows %q, want the bad line 3", got)
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("terminal ends with %q, want the progress line cleared", got[max(0, len(got)-40):])
	}
	if s := summaryOf(t, out); s != "loaded=2 new=2 updated=0 unchanged=0 bad=1 clients=1" || strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("stdout %q", out)
	}
}

// Not on a terminal (a file, as when stderr is redirected), the same slow
// import writes the bad line only: no progress line, no escape sequences.
func TestImportShowsNoProgressOffATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := slowImport(t, f, func() { time.Sleep(1500 * time.Millisecond) }) // three progress ticks
	if exitCode(err) != exitPartial {
		t.Fatalf("err = %v, want exit status %d", err, exitPartial)
	}
	got, _ := os.ReadFile(f.Name())
	if !strings.HasPrefix(string(got), "line 3: invalid JSON") || strings.Count(string(got), "\n") != 1 || strings.ContainsAny(string(got), "\r\x1b") {
		t.Errorf("stderr %q, want the bad line 3 only", got)
	}
	if s := summaryOf(t, out); s != "loaded=2 new=2 updated=0 unchanged=0 bad=1 clients=1" {
		t.Errorf("summary %s", s)
	}
}
