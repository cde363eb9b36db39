package server

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/budget"
)

// TestUploadTrim: a share is trimmed, every tick, to the bytes read, what the body's rate brings
// in horizon and a chunk; a body that reads its share takes more; and once ended nothing moves.
// Time is synctest's, so the rates are exact.
func TestUploadTrim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := budget.New(64 << 20)
		h, _ := b.TryTake(32 << 20) // a body declaring 32 MiB
		grow := func(n int64) (int64, error) { return h.Grow(t.Context(), n, time.Second, nil) }
		u := newUpload(h, 32<<20, grow, 250*time.Millisecond)
		defer u.end()

		// Nothing arrives: at the first tick the share is one chunk.
		time.Sleep(300 * time.Millisecond)
		if got := h.Held(); got != uploadChunk {
			t.Fatalf("after a tick with nothing read: %d held, want %d", got, uploadChunk)
		}
		// The body reads its chunk: the next read takes more.
		p := make([]byte, 1<<20)
		q, _, err := u.room(p, uploadChunk)
		if err != nil || len(q) == 0 || h.Held() <= uploadChunk {
			t.Fatalf("room after the share was read: %d bytes, %v; %d held", len(q), err, h.Held())
		}
		if len(q) > uploadChunk {
			t.Errorf("a read of %d bytes, more than a chunk", len(q))
		}
		// 24 KiB a second, as a trickle: it keeps what came and 2 s of it, or a chunk.
		read := int64(uploadChunk)
		for range 8 {
			time.Sleep(250 * time.Millisecond)
			read += 6 << 10
			if _, _, err := u.room(p, read); err != nil {
				t.Fatal(err)
			}
		}
		if got, most := h.Held(), read+2*uploadChunk; got > most {
			t.Errorf("a trickle holds %d, want at most %d", got, most)
		}
		u.end()
		before := h.Held()
		time.Sleep(time.Second)
		if h.Held() != before {
			t.Errorf("trimmed after end: %d, then %d", before, h.Held())
		}
	})
}
