//go:build !race

package sandboxcli

// raceEnabled: the race detector is off.
const raceEnabled = false
