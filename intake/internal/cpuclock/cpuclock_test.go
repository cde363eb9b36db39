package cpuclock

import (
	"runtime"
	"testing"
	"time"
)

// TestThread: a thread's clock counts its own work, read from another thread, and not the
// time it sleeps.
func TestThread(t *testing.T) {
	done, read := make(chan Clock), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c, ok := Thread()
		if !ok {
			close(done)
			return
		}
		done <- c
		start := time.Now()
		for n := 0; time.Since(start) < 200*time.Millisecond; n++ { // spin
		}
		time.Sleep(200 * time.Millisecond)
		done <- c
		<-read // the thread lives, and does nothing, while it is read
	}()
	c, ok := <-done
	if !ok {
		t.Skip("no thread CPU clock on " + runtime.GOOS)
	}
	before := c.Used()
	<-done
	used := c.Used() - before
	close(read)
	// it spun about 200 ms (less if it waited for a core) and slept 200 ms
	if used <= 0 || used > 300*time.Millisecond {
		t.Fatalf("the thread used %v; want its spin (up to 200ms), not its sleep", used)
	}
}
