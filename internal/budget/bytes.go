package budget

import "sync"

// Bytes is a page image with one owner at a time, as an http.Request's Body is: whoever has it
// either hands it on, keeping no reference, or closes it. While it is held, its memory counts in
// a Hold; Close gives that back and lets go of the bytes, exactly once, so the memory follows
// the owner from the upload to the model request with no callback saying when it moved. A
// second Close, or two racing each other, do nothing more. A nil *Bytes is empty and closed.
type Bytes struct {
	mu   sync.Mutex
	data []byte
	hold *Hold // what data counts in (nil: not counted)
	n    int64 // of hold
	shut bool
}

// NewBytes returns data counted as n bytes of h, which may be nil (not counted) and may be shared
// with other Bytes: closing b gives back n of it, no more. The caller hands data over with it.
func NewBytes(data []byte, h *Hold, n int64) *Bytes {
	return &Bytes{data: data, hold: h, n: max(n, 0)}
}

// Bytes is the image, nil once b is closed. It is for reading while b is owned: a reference
// kept past Close is memory that no budget counts any more.
func (b *Bytes) Bytes() []byte {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.data
}

// Len is len(b.Bytes()).
func (b *Bytes) Len() int { return len(b.Bytes()) }

// Move counts b in h from now on and gives back what it counted in before (the upload memory,
// say, when the retry memory takes a page over): the bytes stay, their accounting moves. All of
// h is b's and is closed with it; when b is already closed, h is closed at once.
func (b *Bytes) Move(h *Hold) {
	if b == nil {
		h.Close()
		return
	}
	b.mu.Lock()
	if b.shut {
		b.mu.Unlock()
		h.Close()
		return
	}
	old, n := b.hold, b.n
	b.hold, b.n = h, h.Held()
	b.mu.Unlock()
	old.Give(n)
}

// Carve returns data as a Bytes of its own that takes over n bytes of b's share (what is left of
// it, if that is less): the hold stays the same, the accounting moves from b to the new Bytes,
// which gives it back when closed. It is how an upload hands its memory to the pages prepared
// from it, before it is closed and gives back what no page took. b keeps its bytes. When b is
// closed (or nil), the new Bytes counts in nothing.
func (b *Bytes) Carve(data []byte, n int64) *Bytes {
	if b == nil {
		return NewBytes(data, nil, 0)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		return NewBytes(data, nil, 0)
	}
	n = min(max(n, 0), b.n)
	b.n -= n
	return NewBytes(data, b.hold, n)
}

// Close lets go of the bytes and gives their share of the hold back. It may be called more than
// once, from any goroutine; only the first does anything. The error is always nil (io.Closer).
func (b *Bytes) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	if b.shut {
		b.mu.Unlock()
		return nil
	}
	h, n := b.hold, b.n
	b.data, b.hold, b.n, b.shut = nil, nil, 0, true
	b.mu.Unlock()
	h.Give(n)
	return nil
}
