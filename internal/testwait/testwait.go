// Package testwait is for tests only: it waits for a condition that another goroutine makes
// true, and gives up at a deadline, so that a regression fails the test, saying what it waited
// for, instead of hanging it until go test's own timeout kills the binary without a word.
//
// Inside a testing/synctest bubble the clock is the bubble's: the polls cost no real time, and
// the deadline passes only once every other goroutine of the bubble is durably blocked.
package testwait

import (
	"fmt"
	"testing"
	"time"
)

// Timeout is how long For and Until wait: far longer than any condition takes on a loaded
// machine, far shorter than go test's default 10 minutes.
const Timeout = 10 * time.Second

// every is the time between two looks at the condition.
const every = 5 * time.Millisecond

// Until returns nil once cond is true, or an error naming what it waited for once Timeout has
// passed. For a goroutine other than the test's, which must not call t.Fatal.
func Until(what string, cond func() bool) error {
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if !time.Now().Before(deadline) {
			return fmt.Errorf("waited %v for %s", Timeout, what)
		}
		time.Sleep(every)
	}
	return nil
}

// For waits until cond is true, and fails the test, saying what it waited for, once Timeout has
// passed.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if err := Until(what, cond); err != nil {
		t.Fatal(err)
	}
}
