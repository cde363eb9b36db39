package extract

import (
	"context"
	"sync"
)

// WithProgress returns a context under which Extract tells fn how far it is: once with done 0
// when the report's pages are prepared and counted (total), then once as each page's reading
// ends, read or failed. The calls come one at a time, done rising to total; fn must be quick
// (it holds up the page that ended) and gets counts only. It rides on the context so that
// Extract's signature, and the server's Extractor interface, stay as they are: a caller that
// does not ask pays nothing.
func WithProgress(ctx context.Context, fn func(done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

type progressKey struct{}

// progress counts a report's pages as they end; a nil *progress counts nothing.
type progress struct {
	mu          sync.Mutex
	done, total int
	fn          func(done, total int)
}

// startProgress is ctx's progress for a report of total pages, having told it of them; nil
// when ctx asks for none.
func startProgress(ctx context.Context, total int) *progress {
	fn, _ := ctx.Value(progressKey{}).(func(done, total int))
	if fn == nil {
		return nil
	}
	p := &progress{total: total, fn: fn}
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(0, total)
	return p
}

// page tells of one more page ended.
func (p *progress) page() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.fn(p.done, p.total)
}
