//go:build !race

package intake

// raceEnabled: see race_test.go.
const raceEnabled = false
