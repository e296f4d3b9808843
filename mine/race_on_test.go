//go:build race

package mine

// raceEnabled: the race detector is on, and sync.Pool drops what it is
// given at random, so tests of pooled allocations do not hold.
const raceEnabled = true
