// Package cpuclock reads one OS thread's CPU time from any thread, without cgo: what a call
// into WebAssembly has cost, which the wall clock on a loaded machine does not tell (it also
// counts the time the thread waited for a core).
package cpuclock

import "time"

// Clock is one thread's CPU clock; the zero Clock reads 0.
type Clock struct {
	id int32
	ok bool
}

// Thread returns the calling thread's CPU clock, and false where there is none to read (on
// systems other than Linux). The caller must hold its goroutine on the thread
// (runtime.LockOSThread) for as long as the clock is to count its work.
func Thread() (Clock, bool) { return thread() }

// Used is the CPU time the thread has used so far (user and system); 0 once it has ended.
func (c Clock) Used() time.Duration { return c.used() }
