// Package gate bounds how many of something run at once, with a bounded wait for a turn: the
// service's backpressure, for /v1/extract requests and for model calls alike. One more than the
// bound waits at most the gate's wait and is then turned away as overloaded, so a queue never
// grows without bound and nothing past the bound ever starts.
package gate

import (
	"context"

	"fmt"
	"time"

	"github.com/ocrdraft/ocrdraft/problem"
)

// The defaults of both gates (OCR_MAX_INFLIGHT, OCR_QUEUE_WAIT): one place for both points.
const (
	DefaultLimit = 32
	DefaultWait  = time.Second
)

// Gate admits at most n at once. It is safe for concurrent use.
type Gate struct {
	sem  chan struct{}
	wait time.Duration
	what string // "requests", "model calls": for the overloaded detail
}

// New returns a gate for n at once, waiting at most wait for a turn.
func New(n int, wait time.Duration, what string) *Gate {
	return &Gate{sem: make(chan struct{}, n), wait: wait, what: what}
}

// Enter takes a turn; Leave gives it back. When none is free, queued (if not nil) is told a wait
// began and returns the func to call when it ends. Errors: overloaded, with Retry-After, when no
// turn came free within the wait; when ctx ended first, Abandoned's.
func (g *Gate) Enter(ctx context.Context, queued func() func(wait time.Duration, rejected bool)) error {
	select {
	case g.sem <- struct{}{}: // a free turn: no queueing, nothing to observe
		return nil
	default:
	}
	start := time.Now()
	done := func(time.Duration, bool) {}
	if queued != nil {
		done = queued()
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.sem <- struct{}{}:
		done(time.Since(start), false)
		return nil
	case <-t.C:
		done(time.Since(start), true)
		return Refused(fmt.Sprintf("the service is at its limit of %s in flight and none finished within %v", g.what, g.wait), g.wait)
	case <-ctx.Done():
		done(time.Since(start), false)
		return Abandoned(ctx, "a turn")
	}
}

// Refused is the error for a wait for a turn that ran out after wait: 503 overloaded, with
// detail saying why and a Retry-After of the wait (at least a second). Every wait for a turn
// (here, and for upload memory in the server) ends in it.
func Refused(detail string, wait time.Duration) *problem.Error {
	return &problem.Error{
		Code:       problem.Overloaded,
		Detail:     detail + "; retry after the Retry-After delay",
		RetryAfter: max(wait, time.Second),
	}
}

// Abandoned is the error for a wait for what (such as "a turn") that ctx ended, as
// problem.FromContext maps it: model_timeout when its deadline passed, canceled when the caller
// went away.
func Abandoned(ctx context.Context, what string) error {
	return problem.FromContext(ctx, "while waiting for "+what)
}

// Leave gives back a turn taken by Enter.
func (g *Gate) Leave() { <-g.sem }
