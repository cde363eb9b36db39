// Package modelcall wraps the model client with what production needs around every call: a
// process-wide bound on calls in flight with a bounded wait for a slot, a hook for metrics, and
// opt-in debug logging of raw replies. It is a decorator on the model client (a Model, as
// extract.Model is), so neither the client nor the pipeline knows of it.
package modelcall

import (
	"context"
	"log/slog"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/gate"
	"github.com/ocrdraft/ocrdraft/internal/reqid"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/vision"
)

// Defaults for Options' zero fields: the gates' own.
const (
	DefaultMaxInFlight = gate.DefaultLimit
	DefaultQueueWait   = gate.DefaultWait
)

// Observer hears about the queue and the calls, for metrics. Each method is called when
// something starts and returns the func to call when it ends.
type Observer interface {
	// Queued: a call starts waiting for a slot. rejected means it waited QueueWait in vain.
	Queued() (done func(wait time.Duration, rejected bool))
	// CallStarted: a call got its slot and goes to the model. outcome is "ok", "canceled" or the
	// problem code.
	CallStarted() (done func(outcome string, d time.Duration))
}

// Options configures a Limiter.
type Options struct {
	MaxInFlight int           // model calls at once across the process; 0 means DefaultMaxInFlight
	QueueWait   time.Duration // longest wait for a slot; 0 means DefaultQueueWait
	Observer    Observer      // may be nil

	// LogReplies logs every raw reply (and every failed call's code) to Log at debug level.
	// Replies are health data: this is for local debugging against test images only.
	LogReplies bool
	Log        *slog.Logger
}

// Model is the model client the Limiter wraps, and what the Limiter is: extract.Model.
type Model interface {
	Complete(ctx context.Context, req vision.Request) (vision.Reply, error)
}

// Limiter is a Model that lets at most MaxInFlight calls reach the model at once. A call
// waits at most QueueWait for a slot and then fails with overloaded, so the queue is bounded in
// time and the model never sees more than the limit. It is safe for concurrent use.
type Limiter struct {
	next       Model
	gate       *gate.Gate
	obs        Observer
	log        *slog.Logger
	logReplies bool
}

// New wraps next.
func New(next Model, o Options) *Limiter {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.QueueWait <= 0 {
		o.QueueWait = DefaultQueueWait
	}
	if o.Observer == nil {
		o.Observer = nop{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Limiter{
		next: next, gate: gate.New(o.MaxInFlight, o.QueueWait, "model calls"),
		obs: o.Observer, log: o.Log, logReplies: o.LogReplies,
	}
}

// With is a Limiter for another model client (a second read's, OCR_VERIFY) that shares l's
// limit, queue, observer and log: the process's calls in flight are bounded together, whichever
// model they go to.
func (l *Limiter) With(next Model) *Limiter {
	cp := *l
	cp.next = next
	return &cp
}

// Complete waits for a slot, then asks the model. A call refused a slot closes the images
// handed over with it, as the model's Complete would have (see vision.Image).
func (l *Limiter) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	if err := l.gate.Enter(ctx, l.obs.Queued); err != nil {
		req.Close()
		return vision.Reply{}, err
	}
	defer l.gate.Leave()

	start := time.Now()
	done := l.obs.CallStarted()
	outcome := string(problem.Internal) // if next panics: the call still ends, as a bug
	defer func() { done(outcome, time.Since(start)) }()
	reply, err := l.next.Complete(ctx, req)
	outcome = Outcome(err)
	if l.logReplies {
		l.logReply(ctx, reply, err, time.Since(start))
	}
	return reply, err
}

// logReply writes the raw reply at debug level. Only with LogReplies: the reply is health data.
func (l *Limiter) logReply(ctx context.Context, reply vision.Reply, err error, d time.Duration) {
	attrs := []slog.Attr{
		slog.String("requestId", reqid.From(ctx)),
		slog.Float64("durationMs", float64(d.Microseconds())/1000),
	}
	if err != nil {
		l.log.LogAttrs(ctx, slog.LevelDebug, "model call failed", append(attrs, slog.String("code", Outcome(err)))...)
		return
	}
	l.log.LogAttrs(ctx, slog.LevelDebug, "model reply", append(attrs,
		slog.String("model", reply.Model),
		slog.String("finishReason", reply.FinishReason),
		slog.Int("tries", reply.Tries),
		slog.Int("promptTokens", reply.PromptTokens),
		slog.Int("completionTokens", reply.CompletionTokens),
		slog.String("reply", reply.Text))...)
}

// Outcome names how a model call ended, for a metric label: "ok", "canceled" (the caller went
// away) or the problem code. The set is bounded by the code table.
func Outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return string(problem.CodeOf(problem.Ended(err, "during a model call")))
}

type nop struct{}

func (nop) Queued() func(time.Duration, bool)        { return func(time.Duration, bool) {} }
func (nop) CallStarted() func(string, time.Duration) { return func(string, time.Duration) {} }
