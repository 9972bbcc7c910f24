//go:build race

package sandbox

// raceEnabled: the race detector is on. It slows every request some
// twentyfold and keeps its own bookkeeping beside the heap, so heap figures
// are neither cheap nor meaningful.
const raceEnabled = true
