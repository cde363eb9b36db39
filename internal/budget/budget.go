// Package budget bounds the bytes of page images held at once across the process. The server
// takes a hold on the upload memory before it reads a request's body; the pages then give their
// share back as soon as the model request has carried them (or the retry memory has taken them
// over), so memory is bounded from the first byte read to the last byte sent, whatever the
// stage that is slow: reading the uploads, preparing them, or writing them to the model.
package budget

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Budget is a number of bytes that holds take from and give back. It is safe for concurrent use.
type Budget struct {
	sem  *semaphore.Weighted
	size int64
}

// New returns a budget of size bytes.
func New(size int64) *Budget {
	return &Budget{sem: semaphore.NewWeighted(size), size: size}
}

// Size is the budget's size in bytes.
func (b *Budget) Size() int64 { return b.size }

// Take waits, first come first served, until n bytes are free and holds them. n is clamped to
// 1..Size, so that no hold waits for more than the budget has. It fails only with ctx's error.
func (b *Budget) Take(ctx context.Context, n int64) (*Hold, error) {
	n = min(max(n, 1), b.size)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return &Hold{b: b, n: n}, nil
}

// TryTake holds n bytes if they are free now, and reports whether it did. n is not clamped: a
// hold larger than the budget is never granted.
func (b *Budget) TryTake(n int64) (*Hold, bool) {
	if n < 0 || !b.sem.TryAcquire(n) {
		return nil, false
	}
	return &Hold{b: b, n: n}, true
}

// Hold is bytes taken from a Budget. Its methods are safe for concurrent use, and on a nil Hold
// they do nothing, so code that may run without a budget need not check.
type Hold struct {
	b  *Budget
	mu sync.Mutex
	n  int64 // still held
}

// Give gives back n bytes of the hold, or what is left of it if that is less.
func (h *Hold) Give(n int64) {
	if h == nil || n <= 0 {
		return
	}
	h.mu.Lock()
	n = min(n, h.n)
	h.n -= n
	h.mu.Unlock()
	if n > 0 {
		h.b.sem.Release(n)
	}
}

// Close gives back all that is left of the hold. It may be called more than once.
func (h *Hold) Close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	n := h.n
	h.n = 0
	h.mu.Unlock()
	if n > 0 {
		h.b.sem.Release(n)
	}
}

// Held is what is left of the hold.
func (h *Hold) Held() int64 {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
