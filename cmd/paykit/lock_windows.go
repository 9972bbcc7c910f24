//go:build windows

package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile waits for an exclusive LockFileEx lock on f's first byte, held
// until f is closed.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}
