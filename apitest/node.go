package apitest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// toolsDir is the repository's tools/ directory, where each Node check
// lives in a folder of its own with pinned package.json and
// package-lock.json (see tools/npm-install.sh).
func toolsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "tools")
}

var npmInstall sync.Mutex // one npm ci at a time in this process

// NodeTool answers the directory of the Node check tools/<name>, with its
// pinned packages installed: when node_modules is missing or older than the
// manifest it runs `npm ci` there (the only step needing the network;
// .ci/run does it up front). It fails the test when node or npm is missing
// or the install fails: a Node check is part of the suite, never skipped.
func NodeTool(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(toolsDir(), name)
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the Node check tools/%s needs %s (install Node.js and npm)", name, tool)
		}
	}
	npmInstall.Lock()
	defer npmInstall.Unlock()
	if stale(dir) {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in tools/%s: %v\n%s\n(offline? run bash tools/npm-install.sh with the network first)", name, err, out)
		}
	}
	return dir
}

func stale(dir string) bool {
	hidden, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return true
	}
	for _, m := range []string{"package.json", "package-lock.json"} {
		if fi, err := os.Stat(filepath.Join(dir, m)); err == nil && fi.ModTime().After(hidden.ModTime()) {
			return true
		}
	}
	return false
}

// RunNode runs `node script args...` in the Node check tools/<name> (its
// packages installed by NodeTool) with extra environment entries
// ("KEY=value"), and answers its standard output; a non-zero exit or a run
// past timeout fails the test with everything the script printed.
func RunNode(t testing.TB, name string, timeout time.Duration, env []string, script string, args ...string) []byte {
	t.Helper()
	dir := NodeTool(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s in tools/%s: %v (timeout %s)\nstdout:\n%s\nstderr:\n%s", script, name, err, timeout, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}
