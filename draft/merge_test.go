package draft

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

func TestMerge(t *testing.T) {
	b := New(lexicon.Default())
	page := func(s string) Page {
		res := b.Build(decodeValue(t, s))
		return Page{Result: &res}
	}
	failed := func(code problem.Code) Page { return Page{Err: problem.Errorf(code, "it broke")} }
	tests := []struct {
		name  string
		pages []Page
		want  string   // the merged draft, missing fields null
		warn  []string // code@path, in order
		err   problem.Code
	}{
		{name: "one page is returned as it is",
			pages: []Page{page(`{"title":"血脂","indicators":[{"itemName":"TC","valueNum":5.6,"refLow":5.2,"refHigh":3.1}]}`)},
			want:  `{"title":"血脂","indicators":[{"itemName":"TC","valueNum":5.6,"refLow":3.1,"refHigh":5.2}]}`,
			warn:  []string{"reference_range_swapped@indicators[0].refLow#1"}},
		{name: "fields from the first page that has them",
			pages: []Page{
				page(`{"title":null,"indicators":[{"itemName":"A","valueNum":1}]}`),
				page(`{"title":"血常规","hospital":"协和","checkupDate":"2026-03-05","indicators":[{"itemName":"B","valueNum":2}]}`),
			},
			want: `{"title":"血常规","hospital":"协和","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"A","valueNum":1},{"itemName":"B","valueNum":2,"page":2}]}`},
		{name: "a later page that differs is a conflict; the first value stays",
			pages: []Page{
				page(`{"title":"血常规","checkupDate":"2026-03-05","indicators":[{"itemName":"A","valueNum":1}]}`),
				page(`{"title":"肝功能","checkupDate":"2026-03-06","indicators":[{"itemName":"B","valueNum":2}]}`),
				page(`{"title":"血常规","indicators":[{"itemName":"C","valueNum":3}]}`),
			},
			want: `{"title":"血常规","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"A","valueNum":1},{"itemName":"B","valueNum":2,"page":2},{"itemName":"C","valueNum":3,"page":3}]}`,
			warn: []string{"page_conflict@pages[1].title#2", "page_conflict@pages[1].checkupDate#2"}},
		{name: "an exact repeat on a later page is dropped; a different value is not",
			pages: []Page{
				page(`[{"itemName":"TC","valueNum":5.6,"unit":"mmol/L"},{"itemName":"TG","valueNum":1.2}]`),
				page(`[{"itemName":"TC","valueNum":5.60,"unit":"mmol/L"},{"itemName":"TG","valueNum":1.3},{"itemName":"HDL","valueNum":1.1}]`),
			},
			want: `{"indicators":[{"itemName":"TC","valueNum":5.6,"unit":"mmol/L"},{"itemName":"TG","valueNum":1.2},{"itemName":"TG","valueNum":1.3,"page":2},{"itemName":"HDL","valueNum":1.1,"page":2}]}`,
			warn: []string{"duplicate_indicator@pages[1].indicators[0]#2"}},
		{name: "a repeat on the same page is kept",
			pages: []Page{page(`[{"itemName":"TC","valueNum":5.6},{"itemName":"TC","valueNum":5.6}]`), page(`[{"itemName":"X","valueNum":1}]`)},
			want:  `{"indicators":[{"itemName":"TC","valueNum":5.6},{"itemName":"TC","valueNum":5.6},{"itemName":"X","valueNum":1,"page":2}]}`},
		{name: "a kept row's path points into the merged draft, a dropped one into its page's reply",
			pages: []Page{page(`[{"itemName":"A","valueNum":1}]`), page(`[{"itemName":"B","refLow":9,"refHigh":1},"junk"]`)},
			want:  `{"indicators":[{"itemName":"A","valueNum":1},{"itemName":"B","refLow":1,"refHigh":9,"page":2}]}`,
			warn:  []string{"reference_range_swapped@indicators[1].refLow#2", "indicator_dropped@pages[1].reply.indicators[1]#2"}},
		{name: "a failed page is a warning when another succeeds",
			pages: []Page{failed(problem.ModelTimeout), page(`[{"itemName":"B","valueNum":2}]`)},
			want:  `{"indicators":[{"itemName":"B","valueNum":2,"page":2}]}`,
			warn:  []string{"page_failed@pages[0]#1"}},
		{name: "all pages failed: the first page's error",
			pages: []Page{failed(problem.ModelUnavailable), failed(problem.ModelTimeout)},
			err:   problem.ModelUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Merge(tt.pages)
			if tt.err != "" {
				if problem.CodeOf(err) != tt.err {
					t.Fatalf("err = %v, want code %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var gotWarn []string
			for _, w := range res.Warnings {
				s := string(w.Code)
				if w.Path != nil {
					s += "@" + *w.Path
				}
				if w.Page != nil {
					s += "#" + strconv.Itoa(*w.Page)
				}
				gotWarn = append(gotWarn, s)
			}
			if diff := cmp.Diff(tt.warn, gotWarn); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			checkDraft(t, tt.want, res.Draft)
		})
	}
}

// checkDraft compares a draft with a JSON literal whose missing fields are null.
func checkDraft(t *testing.T, want string, got schema.OcrDraft) {
	t.Helper()
	g := roundTrip(t, got)
	dropUnnamed(t, want, g)
	if diff := cmp.Diff(wantDraft(t, want), g); diff != "" {
		t.Errorf("draft (-want +got):\n%s", diff)
	}
}

// TestMergeCut: a page keeps MaxPageRows rows, the rest are counted in one indicator_dropped
// warning, and a warning about a row left out no longer points into the draft.
func TestMergeCut(t *testing.T) {
	// n rows of ALT valued from, with warnings on rows 3, MaxPageRows-1, MaxPageRows and n-1.
	rows := func(n, from int) *schema.Result {
		res := &schema.Result{}
		for i := range n {
			v := schema.MustDecimal(strconv.Itoa(from + i))
			res.Draft.Indicators = append(res.Draft.Indicators, schema.OcrIndicator{ItemName: "ALT", ValueNum: &v})
		}
		for _, j := range []int{3, MaxPageRows - 1, MaxPageRows, n - 1} {
			path := "indicators[" + strconv.Itoa(j) + "].refLow"
			res.Warnings = append(res.Warnings, msg.New(schema.ReferenceRangeSwapped, "swapped", &path, nil, map[string]string{"itemName": "ALT", "refLow": "40", "refHigh": "7"}))
		}
		return res
	}
	paths := func(ws []schema.Warning) []string {
		var out []string
		for _, w := range ws {
			out = append(out, string(w.Code)+"@"+*w.Path+"#"+strconv.Itoa(*w.Page)+" "+w.Params["count"])
		}
		return out
	}
	one, err := Merge([]Page{{Result: rows(7000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(one.Draft.Indicators); got != MaxPageRows {
		t.Errorf("one page: %d rows kept, want %d", got, MaxPageRows)
	}
	if diff := cmp.Diff([]string{
		"reference_range_swapped@indicators[3].refLow#1 ", "reference_range_swapped@indicators[499].refLow#1 ",
		"reference_range_swapped@pages[0].indicators[500].refLow#1 ", "reference_range_swapped@pages[0].indicators[6999].refLow#1 ",
		"indicator_dropped@pages[0].indicators[500]#1 6500",
	}, paths(one.Warnings)); diff != "" {
		t.Errorf("one page (-want +got):\n%s", diff)
	}
	// The second page's rows from the 500th on repeat rows the first page left out, which
	// being left out are no row to repeat.
	two, err := Merge([]Page{{Result: rows(600, 0)}, {Result: rows(600, 500)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(two.Draft.Indicators); got != 2*MaxPageRows {
		t.Errorf("two pages: %d rows kept, want %d", got, 2*MaxPageRows)
	}
	if diff := cmp.Diff([]string{
		"reference_range_swapped@indicators[3].refLow#1 ", "reference_range_swapped@indicators[499].refLow#1 ",
		"reference_range_swapped@pages[0].indicators[500].refLow#1 ", "reference_range_swapped@pages[0].indicators[599].refLow#1 ",
		"indicator_dropped@pages[0].indicators[500]#1 100",
		"reference_range_swapped@indicators[503].refLow#2 ", "reference_range_swapped@indicators[999].refLow#2 ",
		"reference_range_swapped@pages[1].indicators[500].refLow#2 ", "reference_range_swapped@pages[1].indicators[599].refLow#2 ",
		"indicator_dropped@pages[1].indicators[500]#2 100",
	}, paths(two.Warnings)); diff != "" {
		t.Errorf("two pages (-want +got):\n%s", diff)
	}
	// Three pages of one reply: 200 repeats, 100 listed and the rest counted.
	three, err := Merge([]Page{{Result: rows(100, 0)}, {Result: rows(100, 0)}, {Result: rows(100, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	n, last := 0, schema.Warning{}
	for _, w := range three.Warnings {
		if w.Code == schema.DuplicateIndicator {
			n, last = n+1, w
		}
	}
	if len(three.Draft.Indicators) != 100 || n != maxRepeats+1 || last.Path != nil || last.Params["count"] != "100" {
		t.Errorf("three pages: %d rows, %d duplicate_indicator warnings, the last %v: want 100, %d listed and one counting 100", len(three.Draft.Indicators), n, last.Params, maxRepeats)
	}
}
