package budget

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestBudget(t *testing.T) {
	b := New(10)
	h, err := b.TakeMoving(t.Context(), 6, time.Hour, nil)
	if err != nil || h.Held() != 6 {
		t.Fatalf("Take(6) = %v, %v", h.Held(), err)
	}
	if _, ok := b.TryTake(5); ok {
		t.Fatal("TryTake(5) with 4 free succeeded")
	}
	if _, ok := b.TryTake(11); ok {
		t.Fatal("TryTake(11) of a budget of 10 succeeded")
	}

	// A Take that does not fit waits until enough is given back.
	got := make(chan *Hold)
	go func() {
		h2, err := b.TakeMoving(context.Background(), 7, time.Hour, nil)
		if err != nil {
			t.Error(err)
		}
		got <- h2
	}()
	h.Give(2) // 6 free: still not enough
	select {
	case <-got:
		t.Fatal("Take(7) went through with 6 free")
	case <-time.After(20 * time.Millisecond):
	}
	h.Give(100) // gives back only the 4 left
	h2 := <-got
	if h.Held() != 0 || h2.Held() != 7 {
		t.Fatalf("held %d and %d, want 0 and 7", h.Held(), h2.Held())
	}
	h.Close() // nothing left: no double release
	if _, ok := b.TryTake(4); ok {
		t.Fatal("a hold gave back more than it had")
	}
	h2.Close()
	h2.Close()
	if b.InUse() != 0 {
		t.Fatalf("in use %d after every hold closed", b.InUse())
	}
	if h3, ok := b.TryTake(10); !ok || h3.Held() != 10 || b.InUse() != 10 {
		t.Fatal("the whole budget is not free after every hold closed")
	}

	// Take clamps to the budget, so a huge body still gets its turn.
	big := New(10)
	if h, err := big.TakeMoving(t.Context(), 1<<40, time.Hour, nil); err != nil || h.Held() != 10 {
		t.Fatalf("Take(huge) = %v, %v", h.Held(), err)
	}

	// A waiting Take gives up with its context.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := big.TakeMoving(ctx, 1, time.Hour, nil); err == nil {
		t.Fatal("Take on a spent budget returned without waiting for its context")
	}

	var nilHold *Hold
	nilHold.Give(1)
	nilHold.Close()
	if nilHold.Held() != 0 {
		t.Fatal("a nil hold holds something")
	}
}

// TestTakeMoving: a wait goes on past the stall time while bytes keep being given back, and
// gives up once they stop. Time is synctest's, so the test is exact and instant.
func TestTakeMoving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(20)
		h, _ := b.TryTake(20)
		go func() { // gives back a byte every 30 ms, 10 in all, then stops
			for range 10 {
				time.Sleep(30 * time.Millisecond)
				h.Give(1)
			}
		}()
		// queued records each wait as the metrics would: its length, and whether it stalled.
		var waits []time.Duration
		var stalls []bool
		queued := func() func(time.Duration, bool) {
			return func(d time.Duration, stalled bool) { waits, stalls = append(waits, d), append(stalls, stalled) }
		}
		start := time.Now()
		h5, err := b.TakeMoving(t.Context(), 5, 100*time.Millisecond, queued)
		if err != nil || time.Since(start) != 150*time.Millisecond {
			t.Fatalf("TakeMoving(5) = %v after %v, want a hold after 150ms", err, time.Since(start))
		}
		// 5 bytes given back and taken; the other 5 come by 300 ms, then nothing moves.
		start = time.Now()
		_, err = b.TakeMoving(t.Context(), 6, 100*time.Millisecond, queued)
		if !errors.Is(err, ErrStalled) || time.Since(start) != 250*time.Millisecond {
			t.Fatalf("TakeMoving(6) = %v after %v, want ErrStalled after 250ms (the last give at 300ms, then 100ms)", err, time.Since(start))
		}
		if len(waits) != 2 || waits[0] != 150*time.Millisecond || waits[1] != 250*time.Millisecond || stalls[0] || !stalls[1] {
			t.Fatalf("queued saw waits %v, stalled %v; want [150ms 250ms], [false true]", waits, stalls)
		}
		h5.Close()
		// The caller's context still rules.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if _, err := b.TakeMoving(ctx, 20, time.Hour, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("TakeMoving past its context's deadline = %v", err)
		}
		h.Close()
		if h, err := b.TakeMoving(t.Context(), 20, time.Millisecond, queued); err != nil || h.Held() != 20 {
			t.Fatalf("TakeMoving on a free budget = %v", err)
		}
		if len(waits) != 2 {
			t.Fatalf("a free budget was counted as a wait: %v", waits)
		}
	})
}

// TestGrow: a hold grows as its upload arrives, waiting for room as TakeMoving does, and never
// past the budget's size; what it grew is given back with the rest.
func TestGrow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(10)
		h, _ := b.TakeMoving(t.Context(), 2, time.Hour, nil)
		other, _ := b.TryTake(5)
		if n, err := h.Grow(t.Context(), 3, time.Hour, nil); n != 3 || err != nil || h.Held() != 5 {
			t.Fatalf("Grow(3) with 3 free = %d, %v; held %d", n, err, h.Held())
		}
		// Nothing free: it waits for the other hold to give back.
		go func() { time.Sleep(50 * time.Millisecond); other.Give(4) }()
		start := time.Now()
		if n, err := h.Grow(t.Context(), 4, time.Hour, nil); n != 4 || err != nil || time.Since(start) != 50*time.Millisecond {
			t.Fatalf("Grow(4) = %d, %v after %v", n, err, time.Since(start))
		}
		// Nothing moves: it stalls, and the hold is as it was.
		if n, err := h.Grow(t.Context(), 1, 100*time.Millisecond, nil); n != 0 || !errors.Is(err, ErrStalled) || h.Held() != 9 {
			t.Fatalf("Grow on a stuck budget = %d, %v; held %d", n, err, h.Held())
		}
		other.Close()
		// Never past the size: 1 is left to grow, then nothing.
		if n, err := h.Grow(t.Context(), 1<<40, time.Hour, nil); n != 1 || err != nil || h.Held() != 10 {
			t.Fatalf("Grow(huge) = %d, %v; held %d", n, err, h.Held())
		}
		if n, err := h.Grow(t.Context(), 1, time.Hour, nil); n != 0 || err != nil {
			t.Fatalf("Grow on a hold of the whole budget = %d, %v", n, err)
		}
		h.Close()
		if all, ok := b.TryTake(10); !ok {
			t.Fatal("the grown bytes were not given back")
		} else {
			all.Close()
		}
		var nilHold *Hold
		if n, err := nilHold.Grow(t.Context(), 1, time.Hour, nil); n != 0 || err != nil {
			t.Fatal("a nil hold grew")
		}
	})
}
