package metrics

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ocrdraft/ocrdraft/extract"
)

// TestPageCounts: counts that reach Page from the upstream — negative, or as large as an int
// goes — neither panic (a Counter panics on a negative Add) nor make a counter go down.
func TestPageCounts(t *testing.T) {
	tests := []struct {
		name  string
		usage extract.Usage
		want  float64 // completion tokens counted
	}{
		{"sane", extract.Usage{PromptTokens: 10, CompletionTokens: 5}, 5},
		{"negative", extract.Usage{PromptTokens: -1, CompletionTokens: math.MinInt}, 0},
		{"huge", extract.Usage{PromptTokens: math.MaxInt, CompletionTokens: math.MaxInt}, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			m.Page(extract.PageMeta{Attempts: 1, Usage: tt.usage, Indicators: -3, Dropped: -1, BytesIn: -1, BytesSent: -1})
			if got := testutil.ToFloat64(m.completionTokens); got != tt.want {
				t.Errorf("completion tokens = %v, want %v", got, tt.want)
			}
			if got := testutil.ToFloat64(m.indicators); got != 0 {
				t.Errorf("indicators = %v, want 0", got)
			}
		})
	}
}
