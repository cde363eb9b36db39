package check

import (
	"image"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestOnPageForms: each form a report prints a number in is found (or not) as the value the
// model read; words are one line of a page, each 10 px wide, in order.
func TestOnPageForms(t *testing.T) {
	for _, tt := range []struct {
		name  string
		words string // space-separated words of the page
		value string
		found bool
	}{
		{"plain", "WBC 6.12 10^9/L", "6.12", true},
		{"trailing zero printed", "TC 5.20 mmol/L", "5.2", true},
		{"trailing zero read", "TC 5.2 mmol/L", "5.20", true},
		{"integer as decimal", "HGB 148 g/L", "148.0", true},
		{"a digit changed", "HGB 148 g/L", "146", false},
		{"a point lost", "WBC 6.12", "612", false},
		{"a point moved", "WBC 6.12", "61.2", false},
		{"with a flag", "ALT 86.3↑ U/L", "86.3", true},
		{"less than", "CRP <0.5", "0.5", true},
		{"range low", "3.50-9.50", "3.5", true},
		{"range high", "3.50-9.50", "9.5", true},
		{"range tilde", "3.5～9.5", "9.5", true},
		{"not the range's dash", "1.0-2.1", "-2.1", false},
		{"negative", "BE -2.1 mmol/L", "-2.1", true},
		{"unicode minus", "BE −2.1 mmol/L", "-2.1", true},
		{"minus apart", "BE - 2.1", "-2.1", true},
		{"negative range", "-3.0~3.0", "-3", true},
		{"sign dropped is lenient", "BE -2.1", "2.1", true},
		{"sign added", "BE 2.1", "-2.1", false},
		{"thousands", "PLT 1,020", "1020", true},
		{"decimal comma", "SG 1,020", "1.02", true},
		{"thousands with fraction", "12,345.6", "12345.6", true},
		{"full width", "ＴＣ ５．６２", "5.62", true},
		{"leading point", "TSH .45", "0.45", true},
		{"exponent", "1.2E+03 copies/mL", "1200", true},
		{"mantissa of exponent", "1.2E+03 copies/mL", "1.2", true},
		{"times ten", "6.5×10^9/L", "6500000000", true},
		{"times ten superscript", "3.2×10⁴", "32000", true},
		{"times ten negative", "5x10^-3", "0.005", true},
		{"date is not a negative", "2024-01-05", "-1", false},
		{"percent", "NEUT% 58.3%", "58.3", true},
		{"zero range", "0.00-5.20", "0", true},
		{"in a name", "Page 1 of 2", "2", true},
		{"nothing", "阴性", "1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var words []intake.Word
			for i, w := range strings.Fields(tt.words) {
				words = append(words, intake.Word{Text: w, Box: image.Rect(20*i, 0, 20*i+10, 10)})
			}
			_, ok := read(words).find(schema.MustDecimal(tt.value), "")
			if ok != tt.found {
				t.Errorf("%q in %q: found %v, want %v", tt.value, tt.words, ok, tt.found)
			}
		})
	}
}

// TestOnPage: a value not printed on its page is value_not_on_page with its path, page and
// params; a page without a text layer is not checked; evidence is the one place a number is
// printed, or the one on its row's line.
func TestOnPage(t *testing.T) {
	dec := func(s string) *schema.Decimal { d := schema.MustDecimal(s); return &d }
	one, two := 1, 2
	w := func(s string, x, y int) intake.Word {
		return intake.Word{Text: s, Box: image.Rect(x, y, x+40, y+12)}
	}
	page1 := []intake.Word{
		w("白细胞计数", 10, 100), w("6.12", 200, 100), w("3.50-9.50", 300, 100),
		w("血小板计数", 10, 130), w("231", 200, 130), w("125-350", 300, 130),
		w("红细胞计数", 10, 160), w("3.50", 200, 160), w("3.50-5.80", 300, 160),
	}
	d := schema.OcrDraft{Indicators: []schema.OcrIndicator{
		{ItemName: "白细胞计数", ValueNum: dec("6.12"), RefLow: dec("3.5"), RefHigh: dec("9.50"), Page: &one},
		{ItemName: "血小板计数", ValueNum: dec("281"), RefLow: dec("125"), RefHigh: dec("350"), Page: &one},
		{ItemName: "红细胞计数", ValueNum: dec("3.50"), Page: &one},
		{ItemName: "总胆固醇", ValueNum: dec("9.99"), Page: &two}, // page 2 has no text layer
	}}
	ws, ev := OnPage(&d, [][]intake.Word{page1, nil})
	if len(ws) != 1 || *ws[0].Path != "indicators[1].valueNum" || ws[0].Code != schema.ValueNotOnPage || *ws[0].Page != 1 ||
		ws[0].Params["itemName"] != "血小板计数" || ws[0].Params["value"] != "281" {
		t.Fatalf("warnings %+v", ws)
	}
	if want := "血小板计数: 281, as the model read it, is not printed on page 1 of the PDF. Check it against the page."; ws[0].Message != want {
		t.Errorf("message %q, want %q", ws[0].Message, want)
	}
	got := map[string]schema.Box{}
	for _, e := range ev {
		got[e.Path] = e.Box
	}
	want := map[string]schema.Box{
		"indicators[0].valueNum": {X: 200, Y: 100, W: 40, H: 12},
		"indicators[0].refLow":   {X: 300, Y: 100, W: 40, H: 12}, // 3.50 is printed thrice: the one on its line
		"indicators[0].refHigh":  {X: 300, Y: 100, W: 40, H: 12},
		"indicators[1].refLow":   {X: 300, Y: 130, W: 40, H: 12},
		"indicators[1].refHigh":  {X: 300, Y: 130, W: 40, H: 12},
		// indicators[2].valueNum: 3.50 is printed twice on its line (value and range): no box.
	}
	if len(got) != len(want) {
		t.Errorf("evidence %v, want %v", got, want)
	}
	for p, b := range want {
		if got[p] != b {
			t.Errorf("evidence %s: %v, want %v", p, got[p], b)
		}
	}
	if ws, ev := OnPage(&d, [][]intake.Word{nil, nil}); ws != nil || ev != nil {
		t.Errorf("no text layer: %v %v", ws, ev)
	}
	// A text layer that holds none of the page's digits (glyphs without a Unicode map) is not
	// judged; nor is one without numbers; a layer that holds some is.
	for _, tt := range []struct {
		name  string
		words string
		want  int
	}{
		{"garbled digits", "白细胞计数 \ue011.\ue012 血小板计数 Page 1 of 2", 0},
		{"no numbers", "白细胞计数 血小板计数 红细胞计数", 0},
		{"one found", "白细胞计数 6.12", 6},
	} {
		var words []intake.Word
		for i, s := range strings.Fields(tt.words) {
			words = append(words, intake.Word{Text: s, Box: image.Rect(60*i, 0, 60*i+40, 12)})
		}
		if ws, _ := OnPage(&d, [][]intake.Word{words, nil}); len(ws) != tt.want {
			t.Errorf("%s: %d warnings, want %d", tt.name, len(ws), tt.want)
		}
	}
}

// TestOnPageRow: a row's value printed on the page but only off its row's line, while the line
// holds numbers, is value_not_on_page (offRow): the row below's value read for this row, an
// age read as a value. A layout whose values are on a line of their own, or a name printed
// twice, is not held to its line; nor are a row's bounds (a range is often on the next line).
func TestOnPageRow(t *testing.T) {
	dec := func(s string) *schema.Decimal { d := schema.MustDecimal(s); return &d }
	one := 1
	w := func(s string, x, y int) intake.Word { return intake.Word{Text: s, Box: image.Rect(x, y, x+40, y+12)} }
	table := []intake.Word{
		w("姓名", 10, 40), w("张三", 60, 40), w("年龄", 200, 40), w("45岁", 250, 40),
		w("白细胞计数", 10, 100), w("6.12", 200, 100), w("3.50-9.50", 300, 100),
		w("红细胞计数", 10, 130), w("4.85", 200, 130), w("4.30-5.80", 300, 130),
		w("中性粒细胞百分比", 10, 160), w("58.3", 200, 160), w("40.0-75.0", 300, 160),
	}
	stacked := []intake.Word{ // each name on a line of its own, its value and range below
		w("白细胞计数", 10, 100), w("6.12", 10, 115), w("3.50-9.50", 100, 115),
		w("红细胞计数", 10, 140), w("4.85", 10, 155), w("4.30-5.80", 100, 155),
	}
	unitOnName := []intake.Word{ // the name's line holds only its unit's digits
		w("白细胞计数(10^9/L)", 10, 100), w("6.12", 10, 115), w("3.50-9.50", 100, 115),
		w("红细胞计数(10^12/L)", 10, 140), w("4.85", 10, 155), w("4.30-5.80", 100, 155),
	}
	short := []intake.Word{ // names of a letter or two, taller than wide, under a date
		w("2026-03-05", 10, 40), {Text: "K", Box: image.Rect(10, 100, 18, 116)}, w("4.1", 60, 102), w("3.5-5.3", 120, 102),
		{Text: "Cr", Box: image.Rect(10, 130, 24, 146)}, w("71", 60, 132), w("57-111", 120, 132),
	}
	oneWord := []intake.Word{w("白细胞计数:6.12", 10, 100), w("3.50-9.50", 200, 100), w("红细胞计数:4.85", 10, 130), w("4.30-5.80", 200, 130)}
	for _, tt := range []struct {
		name string
		text []intake.Word
		row  schema.OcrIndicator
		want string // the warning's reason, "" for none
	}{
		{"on its line", table, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("6.12")}, ""},
		{"the row below's value", table, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("4.85")}, "offRow"},
		{"the age read as a value", table, schema.OcrIndicator{ItemName: "中性粒细胞百分比", ValueNum: dec("45")}, "offRow"},
		{"a bound from another row", table, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("6.12"), RefLow: dec("4.30")}, ""},
		{"not printed at all", table, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("6.21")}, "missing"},
		{"values on lines of their own", stacked, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("4.85")}, ""},
		{"a name not printed", table, schema.OcrIndicator{ItemName: "血小板计数", ValueNum: dec("4.85")}, ""},
		{"only a unit's digits on the name's line", unitOnName, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("6.12")}, ""},
		{"a short name, taller than wide", short, schema.OcrIndicator{ItemName: "K", ValueNum: dec("4.1")}, ""},
		{"another short name", short, schema.OcrIndicator{ItemName: "Cr", ValueNum: dec("71")}, ""},
		{"a short name's shifted value", short, schema.OcrIndicator{ItemName: "K", ValueNum: dec("71")}, "offRow"},
		{"name and value one word", oneWord, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("6.12")}, ""},
		{"name and value one word, shifted", oneWord, schema.OcrIndicator{ItemName: "白细胞计数", ValueNum: dec("4.85")}, "offRow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			row := tt.row
			row.Page = &one
			// The page as it is, walked, and below words enough to be indexed (walkWords).
			padded := slices.Clone(tt.text)
			for i := range walkWords {
				padded = append(padded, intake.Word{Text: "·", Box: image.Rect(10*(i%40), 5000+20*(i/40), 10*(i%40)+8, 5012+20*(i/40))})
			}
			for _, text := range [][]intake.Word{tt.text, padded} {
				ws, _ := OnPage(&schema.OcrDraft{Indicators: []schema.OcrIndicator{row}}, [][]intake.Word{text})
				got := ""
				for _, w := range ws {
					if *w.Path == "indicators[0].valueNum" {
						got = w.Reason
					}
				}
				if got != tt.want || len(ws) > 1 {
					t.Errorf("%d words: reason %q, want %q (warnings %+v)", len(text), got, tt.want, ws)
				}
			}
		})
	}
}

// BenchmarkOnPage: a page of 20 rows (name, value with a flag, unit, range) and its draft.
func BenchmarkOnPage(b *testing.B) {
	var words []intake.Word
	d := schema.OcrDraft{}
	one := 1
	for i := range 20 {
		y := 30 * i
		v, lo, hi := strconv.Itoa(100+i)+".5", strconv.Itoa(90+i), strconv.Itoa(120+i)+".0"
		for j, s := range []string{"项目" + strconv.Itoa(i), v + "↑", "mmol/L", lo + "-" + hi} {
			words = append(words, intake.Word{Text: s, Box: image.Rect(100*j, y, 100*j+80, y+20)})
		}
		dv, dl, dh := schema.MustDecimal(v), schema.MustDecimal(lo), schema.MustDecimal(hi)
		d.Indicators = append(d.Indicators, schema.OcrIndicator{ItemName: "项目" + strconv.Itoa(i), ValueNum: &dv, RefLow: &dl, RefHigh: &dh, Page: &one})
	}
	text := [][]intake.Word{words}
	b.ReportAllocs()
	for b.Loop() {
		if ws, _ := OnPage(&d, text); len(ws) != 0 {
			b.Fatal(ws)
		}
	}
}

// FuzzOnPage: any text layer is read without a panic and in work linear in it, and a number
// printed as a word of its own beside it is found.
func FuzzOnPage(f *testing.F) {
	for _, s := range []string{"6.12", "3.50-9.50", "-2.1", "1,020", "1.2E+03", "6.5×10^9/L", "3.2×10⁴", "５．６２", ".5", "1e\xff", "×10^", "5.6.7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := read([]intake.Word{{Text: s, Box: image.Rect(0, 0, 10, 10)}, {Text: "-"}, {Text: s}, {Text: "7.25"}})
		if _, ok := p.find(schema.MustDecimal("7.250"), ""); !ok {
			t.Errorf("7.25 not found beside %q", s)
		}
		// The places read are linear in the text (a run with commas adds a few per piece): a
		// reading that grows faster fails like a crash.
		if limit := 16*len(s) + 64; p.work > limit {
			t.Errorf("%d bytes: %d places, over %d", len(s), p.work, limit)
		}
	})
}
