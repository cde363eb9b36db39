package check

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

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
	Run(&schema.OcrDraft{Indicators: rows}, Context{}) // the lexicon loads once, outside the loop
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, rows)
		d.Indicators = buf
		if ws := Run(d, Context{}); len(ws) != 0 {
			b.Fatal(ws)
		}
	}
}

// BenchmarkRun40 checks a 40-indicator draft with nothing to warn about (the blood count,
// urine and stool draft and the first rows of the liver, kidney and lipid one): issue 20's
// report of 40 rows. go test ./check -run '^$' -bench Run40 -benchmem -cpu 1
func BenchmarkRun40(b *testing.B) {
	var rows []schema.OcrIndicator
	for _, f := range []string{"testdata/ck-clean-cbc-urine-stool.json", "testdata/ck-clean-liver-kidney-lipid.json"} {
		var td testDraft
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(raw, &td); err != nil {
			b.Fatal(err)
		}
		rows = append(rows, td.Draft.Indicators...)
	}
	rows = rows[:40]
	buf := make([]schema.OcrIndicator, len(rows))
	d := &schema.OcrDraft{}
	if ws := Run(&schema.OcrDraft{Indicators: slices.Clone(rows)}, Context{}); len(ws) != 0 {
		b.Fatal(ws)
	}
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, rows)
		d.Indicators = buf
		if ws := Run(d, Context{}); len(ws) != 0 {
			b.Fatal(ws)
		}
	}
}
