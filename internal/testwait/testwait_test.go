package testwait

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestUntil: a condition that turns true ends the wait; one that never does ends it at the
// deadline with what was waited for. Time is synctest's, so the deadline costs no real time.
func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		go func() {
			time.Sleep(time.Second)
			n.Store(1)
		}()
		start := time.Now()
		if err := Until("n to be 1", func() bool { return n.Load() == 1 }); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < time.Second || took > time.Second+every {
			t.Errorf("returned after %v, want within one poll of 1s", took)
		}

		start = time.Now()
		err := Until("the sky to fall", func() bool { return false })
		if err == nil || !strings.Contains(err.Error(), "the sky to fall") {
			t.Fatalf("got %v, want an error naming what was waited for", err)
		}
		if took := time.Since(start); took != Timeout {
			t.Errorf("gave up after %v, want %v", took, Timeout)
		}
	})
}
