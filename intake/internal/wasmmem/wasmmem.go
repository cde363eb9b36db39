// Package wasmmem is the memory intake gives each WebAssembly instance it runs (libheif's,
// PDFium's): capped at what the instance's decode is charged, so that no file can make it hold
// more, and given back to the system as soon as the instance ends.
package wasmmem

import (
	"runtime"
	"sync"
)

// Capped is a WebAssembly memory (wazero's experimental.LinearMemory) that cannot grow past
// Max bytes: past it, the module's malloc fails and the decode with it. It is the hard bound on
// what one decode holds, whatever its headers said (an HEVC stream may declare a larger picture
// than its container). Where it can, it reserves Max bytes of address space once (reserve), so
// that growing never copies and freeing returns the pages to the system at once; else it grows
// a slice. Free may come from another goroutine than the running instance's (a kill, while
// the instance grows), so the two hold mu; Refused and Peak are the calling goroutine's to read
// once its call has returned, or anyone's through Grown.
type Capped struct {
	mu      sync.Mutex
	buf     []byte
	Max     uint64 // the cap
	mapped  bool
	freed   bool
	Refused bool   // a growth past Max was asked for
	Peak    uint64 // the largest size it grew to
}

// New is a memory of initial bytes that may grow to max.
func New(initial, max uint64) *Capped {
	c := &Capped{Max: max}
	if b := reserve(max); b != nil {
		c.buf, c.mapped = b, true
		// Unmapped only once unreachable: wazero's memory holds c while any call may touch it.
		runtime.AddCleanup(c, release, b)
	} else {
		c.buf = make([]byte, 0, min(initial, max))
	}
	return c
}

// Reallocate grows the memory to size bytes, or refuses (nil) past Max.
func (c *Capped) Reallocate(size uint64) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.freed { // a killed instance still running to its next check: it gets nothing more
		return nil
	}
	if size > c.Max {
		c.Refused = true
		return nil
	}
	c.Peak = max(c.Peak, size)
	if size <= uint64(cap(c.buf)) {
		c.buf = c.buf[:size]
		return c.buf
	}
	next := make([]byte, size, min(c.Max, max(size, uint64(cap(c.buf))*3/2)))
	copy(next, c.buf)
	c.buf = next
	return c.buf
}

// Free gives the pages back to the system at once, and refuses any growth after it; the mapping
// goes with c (see New).
func (c *Capped) Free() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.freed = true
	if c.mapped {
		drop(c.buf)
		c.buf = c.buf[:0]
		return
	}
	c.buf = nil
}

// Grown is Peak, read from any goroutine.
func (c *Capped) Grown() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Peak
}
