package metrics

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ocrdraft/ocrdraft/internal/version"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestPageCounts: counts that reach Page from the upstream — negative, or as large as an int
// goes — neither panic (a Counter panics on a negative Add) nor make a counter go down.
func TestPageCounts(t *testing.T) {
	tests := []struct {
		name  string
		usage schema.Usage
		want  float64 // completion tokens counted
	}{
		{"sane", schema.Usage{PromptTokens: 10, CompletionTokens: 5}, 5},
		{"negative", schema.Usage{PromptTokens: -1, CompletionTokens: math.MinInt}, 0},
		{"huge", schema.Usage{PromptTokens: math.MaxInt, CompletionTokens: math.MaxInt}, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			m.Page(schema.PageMeta{Attempts: 1, Usage: tt.usage, Indicators: -3, Dropped: -1, BytesIn: -1, BytesSent: -1,
				Verify: &schema.PageVerify{Status: schema.VerifyAgreed, Attempts: 1, Usage: tt.usage}})
			if got := testutil.ToFloat64(m.completionTokens); got != tt.want {
				t.Errorf("completion tokens = %v, want %v", got, tt.want)
			}
			if got := testutil.ToFloat64(m.verifyCompletionTokens); got != tt.want {
				t.Errorf("second reads' completion tokens = %v, want %v", got, tt.want)
			}
			if got := testutil.ToFloat64(m.verifyPages.WithLabelValues("agreed")); got != 1 {
				t.Errorf("verified pages = %v, want 1", got)
			}
			if got := testutil.ToFloat64(m.indicators); got != 0 {
				t.Errorf("indicators = %v, want 0", got)
			}
		})
	}
}

// TestBuildInfo: ocrdraft_build_info is 1, labelled with the build that version.Read reports.
func TestBuildInfo(t *testing.T) {
	v := version.Read()
	want := fmt.Sprintf(`# HELP ocrdraft_build_info Always 1; the labels name the running build: its version, commit and Go toolchain.
# TYPE ocrdraft_build_info gauge
ocrdraft_build_info{goversion=%q,revision=%q,version=%q} 1
`, v.GoVersion, v.Revision, v.Version)
	if err := testutil.GatherAndCompare(New().Registry(), strings.NewReader(want), "ocrdraft_build_info"); err != nil {
		t.Error(err)
	}
}
