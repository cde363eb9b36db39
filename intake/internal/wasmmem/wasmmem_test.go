package wasmmem

import (
	"sync"
	"testing"
)

// TestFreeWhileGrowing: an instance killed from another goroutine frees its memory while its
// call may still grow it: the two do not race (go test -race), and nothing grows after Free.
func TestFreeWhileGrowing(t *testing.T) {
	c := New(1<<16, 64<<20)
	var wg sync.WaitGroup
	wg.Go(func() {
		for size := uint64(1 << 16); size <= 64<<20; size += 1 << 16 {
			if c.Reallocate(size) == nil {
				return
			}
		}
	})
	wg.Go(c.Free)
	wg.Wait()
	if c.Reallocate(1<<16) != nil {
		t.Error("grew after Free")
	}
	if c.Grown() > c.Max {
		t.Errorf("grew to %d past its cap %d", c.Grown(), c.Max)
	}
}
