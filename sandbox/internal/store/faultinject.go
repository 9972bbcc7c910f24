//go:build paykit_faultinject

package store

import (
	"errors"
	"os"
	"strconv"
	"sync/atomic"
)

// A test-only fault: built only with -tags paykit_faultinject (the fault
// oracle builds cmd/paykit-sandbox so), never in a shipped binary.
// PAYKIT_FAULT_SYNC_FAIL=N makes the Nth sync of the -wal file since the
// process started fail (the sync at start is the first), as an fsync
// failing with EIO would; every other sync runs as usual.
func init() {
	n, err := strconv.Atoi(os.Getenv("PAYKIT_FAULT_SYNC_FAIL"))
	if err != nil || n <= 0 {
		return
	}
	var count atomic.Int64
	syncFault = func() error {
		if count.Add(1) == int64(n) {
			return errors.New("input/output error (injected by PAYKIT_FAULT_SYNC_FAIL)")
		}
		return nil
	}
}
