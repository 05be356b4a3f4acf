//go:build chaos && race

package chaos

// raceEnabled is true in a test binary built with -race.
const raceEnabled = true
