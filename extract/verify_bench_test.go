package extract

import (
	"context"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/vision"
)

// constModel answers every call with one reply, in process: what a page costs the service
// itself, without a transport.
type constModel struct{ text string }

func (m constModel) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	req.Close()
	return vision.Reply{Text: m.text, FinishReason: "stop", Model: "m", PromptTokens: 1000, CompletionTokens: 100}, nil
}

// BenchmarkPageVerify is one page's whole extract with verification off (its allocations are
// the page path's, which OCR_VERIFY=off must leave as they were), and with each mode on, the
// second read answering the same rows. Compare allocs/op of off with the commit before
// verification (docs/performance.md).
func BenchmarkPageVerify(b *testing.B) {
	for _, mode := range []VerifyMode{VerifyOff, VerifyFlagged, VerifyAll} {
		b.Run(string(mode), func(b *testing.B) {
			s := New(Config{Model: constModel{lipids}, Prep: fakePrep{}, Verify: Verify{Mode: mode}})
			img := []byte("page")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Extract(b.Context(), []*budget.Bytes{budget.NewBytes(img, nil, 0)}, check.Context{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
