package extract

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/vision"
)

// TestProgress: under WithProgress, Extract says 0 of 3 once the pages are counted, then one
// more as each page ends, a failed one too, one call at a time.
func TestProgress(t *testing.T) {
	m := &fakeModel{answer: func(ctx context.Context, page string, call int) (vision.Reply, error) {
		if page == "p2" {
			return vision.Reply{}, errors.New("upstream gone")
		}
		return reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":5.6}]}`), nil
	}}
	var got [][2]int
	busy := false
	ctx := WithProgress(t.Context(), func(done, total int) {
		if busy {
			t.Error("two progress calls at once")
		}
		busy = true
		got = append(got, [2]int{done, total})
		busy = false
	})
	s := New(Config{Model: m, Prep: fakePrep{}, Concurrency: 3})
	if _, err := s.Extract(ctx, owned([][]byte{[]byte("p1"), []byte("p2"), []byte("p3")}), check.Context{}); err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{0, 3}, {1, 3}, {2, 3}, {3, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("progress = %v, want %v", got, want)
	}
	// Without it, nothing is asked of the context and nothing told.
	if _, err := s.Extract(t.Context(), owned([][]byte{[]byte("p1")}), check.Context{}); err != nil {
		t.Fatal(err)
	}
}
