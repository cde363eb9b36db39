// Package budget bounds the bytes of page images held at once across the process. The server
// takes a hold on the upload memory before it reads a request's body; the pages then give their
// share back as soon as the model request has carried them (or the retry memory has taken them
// over), so memory is bounded from the first byte read to the last byte sent, whatever the
// stage that is slow: reading the uploads, preparing them, or writing them to the model.
package budget

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Budget is a number of bytes that holds take from and give back. It is safe for concurrent use.
type Budget struct {
	sem  *semaphore.Weighted
	size int64
	used atomic.Int64 // what the holds hold, for InUse

	mu    sync.Mutex
	moved chan struct{} // closed, and replaced, whenever bytes are given back
}

// New returns a budget of size bytes.
func New(size int64) *Budget {
	return &Budget{sem: semaphore.NewWeighted(size), size: size, moved: make(chan struct{})}
}

// ErrStalled is TakeMoving's error when nothing was given back for its stall time.
var ErrStalled = errors.New("budget: no bytes were given back while waiting")

// TakeMoving waits, first come first served, until n bytes are free and holds them. n is
// clamped to 1..Size, so that no hold waits for more than the budget has. It waits as long as
// the holds ahead of it are moving, but not behind one that is stuck (an upload trickling in,
// say): when stall passes without any bytes being given back it gives up with ErrStalled, and
// when ctx ends, with ctx's error. When it has to wait, queued (if not nil) is told, and returns
// the func to call when the wait ends, as for gate.Gate.Enter.
func (b *Budget) TakeMoving(ctx context.Context, n int64, stall time.Duration, queued func() func(wait time.Duration, stalled bool)) (h *Hold, err error) {
	n = min(max(n, 1), b.size)
	if err := b.acquire(ctx, n, stall, queued); err != nil {
		return nil, err
	}
	return &Hold{b: b, n: n}, nil
}

// Grow adds up to n bytes to h, waiting for them as TakeMoving does, and returns how many it
// added: fewer than n when h would otherwise hold more than the budget's size (0 once it holds
// all of it), so that a hold that grows as its upload arrives never waits for more than the
// budget has. On an error h is as it was.
func (h *Hold) Grow(ctx context.Context, n int64, stall time.Duration, queued func() func(wait time.Duration, stalled bool)) (int64, error) {
	if h == nil || n <= 0 {
		return 0, nil
	}
	h.mu.Lock()
	n = min(n, h.b.size-h.n)
	h.mu.Unlock()
	if n <= 0 {
		return 0, nil
	}
	if err := h.b.acquire(ctx, n, stall, queued); err != nil {
		return 0, err
	}
	h.mu.Lock()
	h.n += n
	h.mu.Unlock()
	return n, nil
}

// acquire takes n bytes (1..size) from the semaphore, waiting as TakeMoving says.
func (b *Budget) acquire(ctx context.Context, n int64, stall time.Duration, queued func() func(wait time.Duration, stalled bool)) (err error) {
	if b.sem.TryAcquire(n) {
		b.used.Add(n)
		return nil
	}
	if queued != nil {
		done, start := queued(), time.Now()
		defer func() { done(time.Since(start), errors.Is(err, ErrStalled)) }()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		t := time.NewTimer(stall)
		defer t.Stop()
		for {
			b.mu.Lock()
			moved := b.moved
			b.mu.Unlock()
			select {
			case <-moved:
				t.Reset(stall)
			case <-t.C:
				cancel(ErrStalled)
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	if err := b.sem.Acquire(ctx, n); err != nil {
		return context.Cause(ctx)
	}
	b.used.Add(n)
	return nil
}

// release gives n bytes back to the semaphore and tells the waiters that the budget moved.
func (b *Budget) release(n int64) {
	b.used.Add(-n)
	b.sem.Release(n)
	b.mu.Lock()
	close(b.moved)
	b.moved = make(chan struct{})
	b.mu.Unlock()
}

// Size is the budget's size in bytes.
func (b *Budget) Size() int64 { return b.size }

// InUse is the bytes its holds hold now: 0 once every hold has been closed, which is what tests
// of the code that takes them assert after each request.
func (b *Budget) InUse() int64 { return b.used.Load() }

// TryTake holds n bytes if they are free now, and reports whether it did. n is not clamped: a
// hold larger than the budget is never granted.
func (b *Budget) TryTake(n int64) (*Hold, bool) {
	if n < 0 || !b.sem.TryAcquire(n) {
		return nil, false
	}
	b.used.Add(n)
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
		h.b.release(n)
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
		h.b.release(n)
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
