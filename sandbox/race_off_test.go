//go:build !race

package sandbox

// raceEnabled: the race detector is off.
const raceEnabled = false
