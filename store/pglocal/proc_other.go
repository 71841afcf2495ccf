//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pglocal

import (
	"io/fs"
	"os/exec"
)

// configureProc does nothing here: there is no portable way to switch
// accounts, and serverAccount only asks for one when os.Geteuid() is 0.
func configureProc(*exec.Cmd, *account) {}

// fileOwner is not available on this platform.
func fileOwner(fs.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }

// lockFile is a no-op here: concurrent starts on one data directory are not
// serialised on this platform.
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
