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

// Process returns the CPU time (user and system, all its threads) that process pid has used so
// far, read from /proc/<pid>/stat, in steps of the kernel's clock tick (10 ms); false where it
// cannot be read (systems without /proc, a process that is gone).
func Process(pid int) (time.Duration, bool) { return process(pid) }
