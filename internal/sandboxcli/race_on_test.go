//go:build race

package sandboxcli

// raceEnabled: the race detector is on, slowing the test's own side of the
// kill test several times over (the binary itself is built without it).
const raceEnabled = true
