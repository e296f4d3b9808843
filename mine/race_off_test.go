//go:build !race

package mine

const raceEnabled = false
