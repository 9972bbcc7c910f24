//go:build race

package paykit

// raceEnabled: the race detector is on. sync.Pool then drops a share of
// what it is given on purpose, so allocation counts are not meaningful.
const raceEnabled = true
