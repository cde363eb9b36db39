package msg

import (
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/doctable"
	"github.com/ocrdraft/ocrdraft/schema"
)

func TestFromAcceptLanguage(t *testing.T) {
	for _, c := range []struct{ header, def, want string }{
		{"", Zh, Zh},
		{"", En, En},
		{"zh", En, Zh},
		{"zh-CN", En, Zh},
		{"zh-TW", En, Zh},
		{"zh-HK,zh;q=0.9", En, Zh},
		{"zh_Hans_CN", En, Zh},
		{"ZH-cn", En, Zh},
		{"en", Zh, En},
		{"en-US,en;q=0.9", Zh, En},
		{"en-GB;q=0.8, zh-CN;q=0.9", Zh, Zh},
		{"zh-CN;q=0.5, en;q=0.9", Zh, En},
		{"en;q=0.9, zh;q=0.9", Zh, En}, // a tie: the first listed
		{"fr-FR", Zh, Zh},
		{"fr-FR", En, En},
		{"fr, en;q=0.5", Zh, En},
		{"ja, *;q=0.5", En, En},
		{"*", Zh, Zh},
		{"en;q=0, zh;q=0.1", Zh, Zh},
		{"en;q=0", Zh, Zh},
		{"en;q=abc", Zh, Zh},
		{" en-us ; q=1.0 ", Zh, En},
		{",,;", Zh, Zh},
	} {
		if got := FromAcceptLanguage(c.header, c.def); got != c.want {
			t.Errorf("FromAcceptLanguage(%q, %q) = %q, want %q", c.header, c.def, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct{ tag, want string }{
		{"zh-CN", Zh}, {"zh", Zh}, {"zh-TW", Zh}, {"zh-Hans", Zh}, {"en", En}, {"en-US", En}, {" EN ", En},
		{"", ""}, {"fr", ""}, {"chinese", ""},
	} {
		got, err := Parse(c.tag)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.tag, got, err, c.want)
		}
	}
}

var han = regexp.MustCompile(`\p{Han}`)

// TestRowsSpeakOfTheSameParams: each row's sentences, in every language, speak of the same
// params, and say something.
func TestRowsSpeakOfTheSameParams(t *testing.T) {
	ph := regexp.MustCompile(`\{\w+\}`)
	names := func(s string) []string {
		n := ph.FindAllString(s, -1)
		slices.Sort(n)
		return slices.Compact(n)
	}
	for _, r := range Rows {
		if r.Reason == "" || r.En == "" || !han.MatchString(r.Zh) || !slices.Equal(names(r.En), names(r.Zh)) {
			t.Errorf("%s/%s: zh %q speaks of %v, en of %v", r.Code, r.Reason, r.Zh, names(r.Zh), names(r.En))
		}
		if strings.Count(r.En, "[") != strings.Count(r.En, "]") || strings.Count(r.Zh, "[") != strings.Count(r.Zh, "]") {
			t.Errorf("%s/%s: an optional part is not closed", r.Code, r.Reason)
		}
	}
}

func TestRender(t *testing.T) {
	path, page := "indicators[0].unit", 2
	for _, c := range []struct {
		w      schema.Warning
		en, zh string
	}{
		{schema.Warning{Code: schema.InvalidValue, Reason: "not_text", Path: &path, Params: map[string]string{"itemName": "葡萄糖", "value": "5"}},
			`葡萄糖: the unit "5" is not text and was set to null. Check the report.`, "葡萄糖的单位“5”不是文字，已置空。请核对原报告。"},
		// a value that is a list is not given: its optional part goes, and nothing says "?"
		{schema.Warning{Code: schema.InvalidValue, Reason: "not_text", Path: &path, Params: map[string]string{"itemName": "葡萄糖"}},
			`葡萄糖: the unit is not text and was set to null. Check the report.`, "葡萄糖的单位不是文字，已置空。请核对原报告。"},
		{schema.Warning{Code: schema.ValueImplausible, Reason: "limits", Params: map[string]string{"itemName": "X", "value": "9", "limitLow": "1", "limitHigh": "2"}},
			"X: 9 is outside anything a patient's sample can show (1–2). Check the value (a decimal point lost or added) and the unit.",
			"X：数值 9 超出该单位下可能的范围（1–2），可能漏读或多读了小数点。请核对原报告上的数值和单位。"},
		{schema.Warning{Code: schema.RangeSexSpecific, Reason: "chosen", Page: &page, Params: map[string]string{"itemName": "HGB", "refText": "男 130-175", "sex": "female", "refHigh": "150"}},
			"HGB: the range 男 130-175 differs for men and women; the female range ≤ 150 was used. Check that the patient's sex is right.",
			"HGB：参考范围 男 130-175 男女不同，已采用女性范围 ≤ 150。请确认受检者性别无误。"},
		{schema.Warning{Code: schema.PageConflict, Reason: "differs", Page: &page, Params: map[string]string{"field": "hospital", "value": "B", "kept": "A"}},
			`Page 2 shows the hospital "B", unlike "A" on an earlier page; the earlier page's is kept. Check the report.`,
			"第 2 页的医院为“B”，与前面页面的“A”不同，已保留前面页面的内容。请核对原报告。"},
		{schema.Warning{Code: schema.InvalidValue, Reason: "more", Params: map[string]string{"count": "12"}},
			"12 more warnings of this kind are not listed.", "另有 12 条同类提示未逐条列出。"},
		// a param the producer did not give says "?", never less than the sentence means
		{schema.Warning{Code: schema.FlagMismatch, Reason: "high", Params: map[string]string{"value": "9"}},
			"?: the report marks 9 as high, but it is not above the range ?. Check the value, the range and the mark.",
			"?：报告在 9 旁标为偏高，但它并未高于参考范围 ?。请核对原报告上的数值、参考范围和箭头标记。"},
	} {
		if got := Text(c.w, En); got != c.en {
			t.Errorf("%s/%s en:\n got %q\nwant %q", c.w.Code, c.w.Reason, got, c.en)
		}
		if got := Text(c.w, Zh); got != c.zh {
			t.Errorf("%s/%s zh:\n got %q\nwant %q", c.w.Code, c.w.Reason, got, c.zh)
		}
	}
}

func TestLocalizeKeepsInput(t *testing.T) {
	path := "indicators[0].refLow"
	ws := []schema.Warning{New(schema.ReferenceRangeSwapped, "swapped", &path, nil, map[string]string{"itemName": "葡萄糖", "refLow": "6.1", "refHigh": "3.9"})}
	en := ws[0].Message
	got := Localize(ws, Zh)
	if want := "葡萄糖：参考范围 6.1–3.9 的上下限顺序颠倒，已对调。请核对原报告上的参考范围。"; got[0].Message != want {
		t.Errorf("got %q, want %q", got[0].Message, want)
	}
	if ws[0].Message != en || len(ws[0].Params) != 3 {
		t.Error("Localize changed its input")
	}
	if back := Localize(got, En); back[0].Message != en {
		t.Errorf("back in English %q, want %q", back[0].Message, en)
	}
}

// BenchmarkLocalize: five warnings of a draft, three of them the checks'.
func BenchmarkLocalize(b *testing.B) {
	p := func(s string) *string { return &s }
	ws := []schema.Warning{
		New(schema.ReferenceRangeSwapped, "swapped", p("indicators[1].refLow"), nil, map[string]string{"itemName": "甘油三酯", "refLow": "1.7", "refHigh": "0.4"}),
		New(schema.IndicatorDropped, "no_name", p("reply.indicators[4]"), nil, nil),
		New(schema.ValueImplausible, "limits", p("indicators[0].valueNum"), nil, map[string]string{"itemName": "总胆固醇", "value": "586", "unit": "mmol/L", "limitLow": "0.5", "limitHigh": "30"}),
		New(schema.RangeImplausible, "fits_other_unit", p("indicators[3].refLow"), nil, map[string]string{"itemName": "空腹血糖", "refLow": "70", "refHigh": "110", "unit": "mmol/L", "expectedUnit": "mg/dL"}),
		New(schema.FlagMismatch, "high", p("indicators[2].printedFlag"), nil, map[string]string{"itemName": "高密度脂蛋白胆固醇", "value": "6.9", "refLow": "1.0", "refHigh": "1.5"}),
	}
	b.ReportAllocs()
	for b.Loop() {
		Localize(ws, Zh)
	}
}

func TestPlace(t *testing.T) {
	for _, c := range []struct {
		path, list string
		i          int
		ok         bool
	}{
		{"indicators[3]", "", 3, true},
		{"pages[1].indicators[0]", "", 0, true},
		{"reply.indicators[4]", "", 4, true},
		{"pages[0].reply.血常规[1]", "血常规", 1, true},
		{"血常规[2]", "血常规", 2, true},
		{"indicators", "", 0, false},
		{"[2]", "", 0, false},
		{"indicators[x]", "", 0, false},
		{"indicators[2].unit", "", 0, false},
	} {
		list, i, ok := place(c.path)
		if list != c.list || i != c.i || ok != c.ok {
			t.Errorf("place(%q) = %q, %d, %v", c.path, list, i, ok)
		}
	}
}

var update = flag.Bool("update", false, "rewrite docs/errors.md's table of messages")

// TestDocs: docs/errors.md's table of messages is generated from Rows.
func TestDocs(t *testing.T) {
	var b strings.Builder
	b.WriteString(doctable.Row("warning", "reason", "English message (a part in [ ] is left out without its param)"))
	b.WriteString("|---|---|---|\n")
	for _, r := range Rows {
		code := "any"
		if r.Code != "" {
			code = "`" + string(r.Code) + "`"
		}
		b.WriteString(doctable.Row(code, "`"+r.Reason+"`", r.En))
	}
	doctable.Check(t, "../../docs/errors.md", "messages", b.String(), *update)
}

func TestPlaceText(t *testing.T) {
	for _, c := range []struct{ path, en, zh string }{
		{"reply.indicators[2]", "item 3", "第 3 项"},
		{"pages[1].reply.血常规[0]", "item 1 of 血常规", "血常规第 1 项"},
		{"reply.indicators[0].items[0].items[4]", "item 5 of the group in item 1", "第 1 项所含分组的第 5 项"},
		{"reply.血常规[1].items[2]", "item 3 of the group in item 2 of 血常规", "血常规第 2 项所含分组的第 3 项"},
		{"reply.indicators", "at reply.indicators", "位置 reply.indicators"},
	} {
		if got := placeText(c.path, En); got != c.en {
			t.Errorf("placeText(%q, en) = %q, want %q", c.path, got, c.en)
		}
		if got := placeText(c.path, Zh); got != c.zh {
			t.Errorf("placeText(%q, zh) = %q, want %q", c.path, got, c.zh)
		}
	}
}
