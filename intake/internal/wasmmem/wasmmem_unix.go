//go:build unix

package wasmmem

import "golang.org/x/sys/unix"

// reserve maps max bytes of address space for a WebAssembly memory without committing them:
// the pages are the kernel's until touched, and growing never copies. nil when the mapping fails.
func reserve(max uint64) []byte {
	b, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return b[:0]
}

// drop hands b's pages back to the system at once; the mapping stays valid (reads see zeros),
// so a call still writing into it (a killed instance's) cannot fault.
func drop(b []byte) { unix.Madvise(b[:cap(b)], unix.MADV_DONTNEED) }

// release unmaps b, once nothing can reach it.
func release(b []byte) { unix.Munmap(b[:cap(b)]) }
