package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/budget"
)

// upload is a request body's share of the upload memory while it is read. The share starts as
// the body's declared length (at most the budget), taken first come first served, so that
// bodies that arrive at speed are read one after another, each sure of its room, as before.
// But a share is kept only for what has arrived and what is coming soon: every trimEvery, the
// part of it beyond the bytes read plus what the body's own rate brings in horizon is given
// back. A caller that declares 32 MiB and trickles it in at 24 KiB/s therefore holds what has
// come of it and 48 KiB more, not the memory every other caller needs; a fast body keeps what it
// will fill. When the bytes read reach the share, it takes more, as much as horizon at its rate
// brings (at least uploadChunk), waiting for room as readTurn does.
type upload struct {
	hold *budget.Hold
	most int64 // what the share may grow to: the declared length, at most the budget
	grow func(n int64) (int64, error)

	read  atomic.Int64 // bytes read, for trim, which runs on a timer's goroutine
	since atomic.Int64 // the rate's start (unix ns), moved on by any wait for room

	mu    sync.Mutex
	timer *time.Timer
	ended bool
}

const (
	// uploadChunk is the least a share is trimmed to beyond the bytes read, and the least it
	// grows by: no read is larger (see room), so a trim never leaves a read uncharged.
	uploadChunk = 64 << 10
	// horizon is how far ahead a share covers a body at its own rate.
	horizon = 2 * time.Second
)

// newUpload starts charging a body read from now in h (which holds its first share), growing
// it up to most with grow; every trimEvery the share is trimmed (see upload), so that those who
// wait for room behind a slow body see it move before QueueWait passes.
func newUpload(h *budget.Hold, most int64, grow func(int64) (int64, error), trimEvery time.Duration) *upload {
	u := &upload{hold: h, most: most, grow: grow}
	u.since.Store(time.Now().UnixNano())
	u.mu.Lock()
	u.timer = time.AfterFunc(trimEvery, func() {
		u.trim()
		u.mu.Lock()
		defer u.mu.Unlock()
		if !u.ended {
			u.timer.Reset(trimEvery)
		}
	})
	u.mu.Unlock()
	return u
}

// ahead is what the body's rate so far brings in horizon.
func (u *upload) ahead() int64 {
	el := time.Since(time.Unix(0, u.since.Load()))
	if el <= 0 {
		return 0
	}
	return int64(float64(u.read.Load()) / el.Seconds() * horizon.Seconds())
}

// trim gives back the share beyond the bytes read, what the body's rate brings in horizon, and
// uploadChunk.
func (u *upload) trim() {
	keep := u.read.Load() + max(uploadChunk, u.ahead())
	if held := u.hold.Held(); held > keep {
		u.hold.Give(held - keep)
	}
}

// room returns p cut to the share left for the next read (read is the bytes read so far),
// taking more first when none is left. A wait for room is not the caller's slowness: waited
// says how long it was, to move the rate's start on. When no room comes, the error is
// readTurn's (503 overloaded, or the request's end), and the body charges no more.
func (u *upload) room(p []byte, read int64) (_ []byte, waited time.Duration, err error) {
	u.read.Store(read)
	held := u.hold.Held()
	if held >= u.most {
		return p, 0, nil // all it may hold: the rest of the body, or the whole budget
	}
	left := held - read
	if left <= 0 {
		t := time.Now()
		got, err := u.grow(min(u.most-held, max(uploadChunk, u.ahead())))
		waited = time.Since(t)
		u.since.Add(int64(waited))
		if err != nil {
			u.end()
			return nil, waited, err
		}
		left += got
		if left <= 0 { // the hold is the whole budget: read on, as a body as large always could
			return p, waited, nil
		}
	}
	return p[:min(int64(len(p)), left, uploadChunk)], waited, nil
}

// end stops trimming: the body is read (or failed), and its share is the handler's from here.
func (u *upload) end() {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ended = true
	u.timer.Stop()
}
