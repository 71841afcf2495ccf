//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pglocal

import (
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// configureProc puts a server binary in its own process group (so a Ctrl-C
// aimed at fleetgraph does not reach pg_ctl) and, when we are root, runs it
// as the unprivileged server account with no supplementary groups.
func configureProc(cmd *exec.Cmd, acct *account) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if acct != nil {
		attr.Credential = &syscall.Credential{Uid: acct.uid, Gid: acct.gid}
	}
	cmd.SysProcAttr = attr
}

// fileOwner returns the owning uid and gid of a file.
func fileOwner(fi fs.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}

// lockFile takes an exclusive advisory lock on path, waiting for it, and
// returns the function that releases it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
