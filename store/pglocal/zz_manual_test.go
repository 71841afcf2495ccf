package pglocal

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestManualRootHome(t *testing.T) {
	dir := os.Getenv("MANUAL_DIR")
	if dir == "" {
		t.Skip()
	}
	ctx := context.Background()
	u, stop, err := StartPrivate(ctx, testLogger(t), dir, "fg")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(u)
	// crash: SIGKILL the postmaster, then start again
	data, _ := os.ReadFile(filepath.Join(dir, "postgres", "data", "postmaster.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0]))
	syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	u2, stop2, err := StartPrivate(ctx, testLogger(t), dir, "fg")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(u2, time.Since(began))
	_ = stop
	if err := stop2(ctx); err != nil {
		t.Fatal(err)
	}
}
