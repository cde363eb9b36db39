//go:build unix

package intake

import "golang.org/x/sys/unix"

// reserve maps max bytes of address space for a WebAssembly memory without committing them:
// the pages are the kernel's until touched, growing never copies, and Free hands them all back
// to the system at once (the Go heap would keep them). nil when the mapping fails.
func reserve(max uint64) []byte {
	b, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return b[:0]
}

func release(b []byte) { unix.Munmap(b[:cap(b)]) }
