package draft

import (
	"testing"
	"unicode/utf8"
)

// TestHasInvisible holds the two-byte prefilter to isInvisible itself, for every character,
// alone and between the visible text of a Chinese report (full-width punctuation and arrows
// share first bytes with invisible characters).
func TestHasInvisible(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		want := isInvisible(r)
		if got := hasInvisible(c); got != want {
			t.Fatalf("hasInvisible(%U) = %v, want %v", r, got, want)
		}
		if got := hasInvisible("总胆固醇，" + c + "↑（"); got != want {
			t.Fatalf("hasInvisible(text with %U) = %v, want %v", r, got, want)
		}
	}
	if hasInvisible("\xe2") || hasInvisible("5.86\xef\xbb") {
		t.Error("a cut encoding is not an invisible character")
	}
}
