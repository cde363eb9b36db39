package gate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/problem"
)

func TestGate(t *testing.T) {
	g := New(1, 20*time.Millisecond, "things")
	if err := g.Enter(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	queued, rejected := 0, false
	err := g.Enter(t.Context(), func() func(time.Duration, bool) {
		queued++
		return func(_ time.Duration, r bool) { rejected = r }
	})
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.Overloaded || pe.RetryAfter < time.Second || queued != 1 || !rejected {
		t.Errorf("full gate: err %v, queued %d, rejected %v", err, queued, rejected)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := g.Enter(ctx, nil); !errors.Is(err, context.Canceled) || problem.CodeOf(err) != problem.Canceled {
		t.Errorf("caller gone: %v", err)
	}
	ctx, cancel = context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	if err := New(1, time.Hour, "x").Enter(ctx, nil); err != nil {
		t.Errorf("a free turn is taken even past the deadline: %v", err)
	}
	if err := g.Enter(ctx, nil); problem.CodeOf(err) != problem.ModelTimeout {
		t.Errorf("deadline while waiting: %v", err)
	}

	g.Leave()
	if err := g.Enter(t.Context(), nil); err != nil {
		t.Errorf("after Leave: %v", err)
	}
}
