package check

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// BenchmarkRun checks a typical 20-indicator draft (a lipid and liver panel with a blood count)
// with nothing to warn about: the cost every extract pays. The draft is copied each time, as
// Run may null bounds. go test ./check -run '^$' -bench Run -benchmem -cpu 1
func BenchmarkRun(b *testing.B) {
	var td testDraft
	raw, err := os.ReadFile("testdata/ck-clean-cbc-urine-stool.json")
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, &td); err != nil {
		b.Fatal(err)
	}
	rows := td.Draft.Indicators[:20]
	buf := make([]schema.OcrIndicator, len(rows))
	d := &schema.OcrDraft{}
	Run(lexicon.Default(), &schema.OcrDraft{Indicators: rows}, Context{}) // the lexicon loads once, outside the loop
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, rows)
		d.Indicators = buf
		if ws := Run(lexicon.Default(), d, Context{}); len(ws) != 0 {
			b.Fatal(ws)
		}
	}
}
