package modelcall_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/reqid"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/vision"
	"github.com/ocrdraft/ocrdraft/vision/modelcall"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// model is a fake extract.Model that answers after delay (or when its context ends) and records
// how many calls it had at once.
type model struct {
	delay   time.Duration
	err     error
	now     atomic.Int32
	peak    atomic.Int32
	calls   atomic.Int32
	started chan struct{} // receives once per call, if not nil
}

func (m *model) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	m.calls.Add(1)
	n := m.now.Add(1)
	defer m.now.Add(-1)
	for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
	}
	if m.started != nil {
		m.started <- struct{}{}
	}
	select {
	case <-time.After(m.delay):
	case <-ctx.Done():
		return vision.Reply{}, fmt.Errorf("fake: %w", ctx.Err())
	}
	if m.err != nil {
		return vision.Reply{}, m.err
	}
	return vision.Reply{Text: `{"indicators":[]}`, FinishReason: "stop", Model: "m", Tries: 1}, nil
}

// observer records what the limiter reports.
type observer struct {
	mu       sync.Mutex
	outcomes []string
	rejected int
	waits    int
}

func (o *observer) Queued() func(time.Duration, bool) {
	return func(_ time.Duration, rejected bool) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.waits++
		if rejected {
			o.rejected++
		}
	}
}

func (o *observer) CallStarted() func(string, time.Duration) {
	return func(outcome string, _ time.Duration) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.outcomes = append(o.outcomes, outcome)
	}
}

// TestLimit: 20 calls through a limit of 3, with room to wait: all succeed, never more than 3 at
// the model.
func TestLimit(t *testing.T) {
	m := &model{delay: 20 * time.Millisecond}
	l := modelcall.New(m, modelcall.Options{MaxInFlight: 3, QueueWait: 5 * time.Second})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			_, err := l.Complete(context.Background(), vision.Request{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if p := m.peak.Load(); p != 3 {
		t.Errorf("peak calls at the model = %d, want 3", p)
	}
}

// TestOverloaded: with the slots taken, a call waits QueueWait and fails with overloaded and a
// Retry-After, never reaching the model. Time is synctest's: the wait is exact on a loaded
// machine too.
func TestOverloaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &model{delay: time.Hour, started: make(chan struct{}, 2)}
		obs := &observer{}
		l := modelcall.New(m, modelcall.Options{MaxInFlight: 2, QueueWait: 50 * time.Millisecond, Observer: obs})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { l.Complete(ctx, vision.Request{}) })
		}
		<-m.started
		<-m.started

		// The refused call's image was handed over with it: it is let go of, as the model would.
		mem := budget.New(10)
		held, _ := mem.TryTake(4)
		img := budget.NewBytes([]byte("page"), held, 4)
		start := time.Now()
		_, err := l.Complete(context.Background(), vision.Request{Images: []vision.Image{{MIME: "image/png", Body: img}}})
		took := time.Since(start)
		var pe *problem.Error
		if !errors.As(err, &pe) || pe.Code != problem.Overloaded || pe.RetryAfter != time.Second {
			t.Fatalf("err = %v, want overloaded with a 1s Retry-After", err)
		}
		if mem.InUse() != 0 || img.Bytes() != nil {
			t.Errorf("the refused call's image is still held: %d bytes", mem.InUse())
		}
		if took != 50*time.Millisecond {
			t.Errorf("refused after %v, want after the 50ms queue wait", took)
		}
		if got := m.calls.Load(); got != 2 {
			t.Errorf("model calls = %d, want 2", got)
		}
		cancel()
		wg.Wait()
		obs.mu.Lock()
		defer obs.mu.Unlock()
		if obs.rejected != 1 || obs.waits != 1 {
			t.Errorf("observer: %d waits, %d rejected; want 1, 1", obs.waits, obs.rejected)
		}
		if strings.Join(obs.outcomes, ",") != "canceled,canceled" {
			t.Errorf("outcomes = %v, want two canceled", obs.outcomes)
		}
	})
}

// TestWaitEndsWithTheRequest: a call waiting for a slot gives up with its request: a deadline is
// model_timeout, a cancellation the wrapped context error.
func TestWaitEndsWithTheRequest(t *testing.T) {
	m := &model{delay: time.Hour, started: make(chan struct{}, 1)}
	l := modelcall.New(m, modelcall.Options{MaxInFlight: 1, QueueWait: time.Hour})
	hold, release := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Complete(hold, vision.Request{}); close(done) }()
	<-m.started

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Complete(ctx, vision.Request{}); problem.CodeOf(err) != problem.ModelTimeout {
		t.Errorf("deadline while waiting: %v, want model_timeout", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := l.Complete(ctx, vision.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel while waiting: %v, want context.Canceled", err)
	}
	release()
	<-done
}

func TestOutcome(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{problem.Errorf(problem.ModelRateLimited, "x"), "model_rate_limited"},
		{fmt.Errorf("vision: %w", context.Canceled), "canceled"},
		{context.DeadlineExceeded, "model_timeout"},
		{errors.New("what"), "internal_error"},
	} {
		if got := modelcall.Outcome(tt.err); got != tt.want {
			t.Errorf("Outcome(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestLogReplies: only with LogReplies does a reply reach the log, at debug level, with its
// request id.
func TestLogReplies(t *testing.T) {
	for _, on := range []bool{false, true} {
		var buf bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		l := modelcall.New(&model{}, modelcall.Options{LogReplies: on, Log: log})
		if _, err := l.Complete(reqid.With(context.Background(), "req-7"), vision.Request{}); err != nil {
			t.Fatal(err)
		}
		got := buf.String()
		logged := strings.Contains(got, `"reply":"{\"indicators\":[]}"`) && strings.Contains(got, `"requestId":"req-7"`) &&
			strings.Contains(got, `"level":"DEBUG"`)
		if logged != on {
			t.Errorf("LogReplies %v: log = %s", on, got)
		}
	}
}

type panicky struct{}

func (panicky) Complete(context.Context, vision.Request) (vision.Reply, error) { panic("boom") }

// TestPanicEndsTheCall: a model call that panics still leaves its slot and is counted, as
// internal_error, on its way up to the recover in extract.
func TestPanicEndsTheCall(t *testing.T) {
	obs := &observer{}
	l := modelcall.New(panicky{}, modelcall.Options{MaxInFlight: 1, Observer: obs})
	for range 2 { // the second call gets the slot only if the first gave it back
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic did not go on up")
				}
			}()
			l.Complete(t.Context(), vision.Request{})
		}()
	}
	if got := fmt.Sprint(obs.outcomes); got != "[internal_error internal_error]" {
		t.Errorf("outcomes = %s", got)
	}
}
