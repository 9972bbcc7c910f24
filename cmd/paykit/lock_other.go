//go:build !unix && !windows

package main

import "os"

// lockFile takes no lock where the system has neither flock nor
// LockFileEx (Plan 9, js/wasm): two config set at once may lose one of
// the changes there.
func lockFile(*os.File) error { return nil }
