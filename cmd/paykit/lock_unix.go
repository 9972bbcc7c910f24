//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile waits for an exclusive flock on f, held until f is closed.
// flock, not fcntl's record locks: those belong to the process and are
// released when it closes any descriptor of the file.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}
