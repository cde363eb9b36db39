package msg

import (
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/wording"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
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

// TestEveryCode renders in Chinese every warning the producers give: draft/ on every captured
// reply, check/ on them and on its testdata drafts, Merge, OnPage, and the few that only a
// running service gives, written as their producers write them. Every code must be among them,
// and each must come out Chinese, with every template filled.
func TestEveryCode(t *testing.T) {
	type item struct {
		w schema.Warning
		d *schema.OcrDraft
	}
	var all []item
	add := func(d *schema.OcrDraft, ws ...schema.Warning) {
		for _, w := range ws {
			all = append(all, item{w, d})
		}
	}
	b := draft.New(lexicon.Default())
	replies, _ := filepath.Glob("../../testdata/replies/*.txt")
	for _, f := range replies {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.FromReply(string(raw), strings.HasSuffix(f, ".length.txt"))
		if err != nil {
			continue
		}
		d := out.Draft
		add(&d, out.Warnings...)
		add(&d, check.Run(lexicon.Default(), &d, check.Context{})...)
	}
	drafts, _ := filepath.Glob("../../check/testdata/ck-*.json")
	for _, f := range drafts {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var td struct {
			Context struct {
				Sex       check.Sex `json:"sex"`
				Confirmed bool      `json:"confirmed"`
			} `json:"context"`
			Draft schema.OcrDraft `json:"draft"`
		}
		if err := json.Unmarshal(raw, &td); err != nil {
			t.Fatal(f, err)
		}
		d := td.Draft
		add(&d, check.Run(lexicon.Default(), &d, check.Context{Sex: td.Context.Sex, Confirmed: td.Context.Confirmed})...)
		for _, sex := range []check.Sex{check.Male, check.Female} {
			d := td.Draft
			add(&d, check.Run(lexicon.Default(), &d, check.Context{Sex: sex})...)
		}
	}
	// Merge: a failed page, a page that disagrees, an item repeated exactly.
	dec := func(s string) *schema.Decimal { d := schema.MustDecimal(s); return &d }
	str := func(s string) *string { return &s }
	ind := schema.OcrIndicator{ItemName: "总胆固醇", ValueNum: dec("5.86"), Unit: str("mmol/L")}
	p1 := schema.Result{Draft: schema.OcrDraft{Hospital: str("协和医院"), Indicators: []schema.OcrIndicator{ind}}}
	p2 := schema.Result{Draft: schema.OcrDraft{Hospital: str("协和医院体检中心"), Indicators: []schema.OcrIndicator{ind}}}
	merged, err := draft.Merge([]draft.Page{{Result: &p1}, {Result: &p2}, {Err: problem.Errorf(problem.ModelTimeout, "the model did not answer")}})
	if err != nil {
		t.Fatal(err)
	}
	add(&merged.Draft, merged.Warnings...)
	// OnPage: a value the page's text layer does not print.
	od := schema.OcrDraft{Indicators: []schema.OcrIndicator{{ItemName: "血小板计数", ValueNum: dec("281"), Page: new(1)}}}
	ows, _ := check.OnPage(&od, [][]intake.Word{{{Text: "血小板计数", Box: image.Rect(0, 0, 40, 12)}, {Text: "231", Box: image.Rect(100, 0, 140, 12)}}})
	add(&od, ows...)
	// Only a running service gives these (extract/, draft's overflow past maxWarnings).
	add(nil,
		schema.WarnDraft(schema.OutputInterrupted, "the model stopped with finish reason content_filter, not at the end of its answer; items may be missing"),
		schema.WarnDraft(schema.ReplyTooLong, "the model's reply is longer than the 256 KB the service reads; items after that point are missing"),
		schema.Warning{Code: schema.InvalidValue, Message: "12 more warnings of this kind are not listed", Params: map[string]string{"count": "12"}},
	)

	seen := map[schema.WarningCode]bool{}
	for _, it := range all {
		seen[it.w.Code] = true
		got := Localize([]schema.Warning{it.w}, it.d, Zh)[0].Message
		if !han.MatchString(got) || strings.ContainsAny(got, "{}") || (strings.Contains(got, "?") && !strings.Contains(it.w.Message, "?")) {
			t.Errorf("%s %q: zh %q", it.w.Code, it.w.Message, got)
		}
		if _, ok := wording.Localized(it.w, Zh); !ok && isCheck(it.w.Code) {
			t.Errorf("%s %q: wording.Localized does not know it", it.w.Code, it.w.Message)
		}
		if en := Localize([]schema.Warning{it.w}, it.d, En)[0].Message; en != it.w.Message {
			t.Errorf("en changed %q to %q", it.w.Message, en)
		}
		if testing.Verbose() {
			t.Logf("%s\n\t%s\n\t%s", it.w.Code, it.w.Message, got)
		}
	}
	for _, c := range schema.WarningCodes {
		if !seen[c.Code] {
			t.Errorf("no producer gave %s here: add one", c.Code)
		}
	}
}

func isCheck(c schema.WarningCode) bool {
	if c == schema.ValueNotOnPage { // check.OnPage's, beside the rule table
		return true
	}
	for _, r := range check.Rules {
		if r.Code == c {
			return true
		}
	}
	return false
}

// TestLastRowNeedsNothing: every code's last row needs no param, so no warning stays English.
func TestLastRowNeedsNothing(t *testing.T) {
	for _, c := range schema.WarningCodes {
		w := schema.Warning{Code: c.Code, Message: "?"}
		if got := zh(w, nil); !han.MatchString(got) {
			t.Errorf("%s: no row without params (%q)", c.Code, got)
		}
	}
}

func TestLocalizeKeepsInput(t *testing.T) {
	path := "indicators[0].refLow"
	ws := []schema.Warning{{Code: schema.ReferenceRangeSwapped, Path: &path, Message: "reference range 6.1–3.9 was reversed; swapped",
		Params: map[string]string{"refLow": "6.1", "refHigh": "3.9"}}}
	d := &schema.OcrDraft{Indicators: []schema.OcrIndicator{{ItemName: "葡萄糖"}}}
	got := Localize(ws, d, Zh)
	if want := "葡萄糖：参考范围 6.1–3.9 的上下限顺序颠倒，已对调。请核对原报告上的参考范围。"; got[0].Message != want {
		t.Errorf("got %q, want %q", got[0].Message, want)
	}
	if ws[0].Message != "reference range 6.1–3.9 was reversed; swapped" || len(ws[0].Params) != 2 {
		t.Error("Localize changed its input")
	}
}

// BenchmarkLocalize: five warnings of a draft, three of them the checks'.
func BenchmarkLocalize(b *testing.B) {
	out, err := draft.New(lexicon.Default()).FromReply(langBench, false)
	if err != nil {
		b.Fatal(err)
	}
	ws := append(out.Warnings, check.Run(lexicon.Default(), &out.Draft, check.Context{})...)
	if len(ws) < 3 {
		b.Fatalf("%d warnings", len(ws))
	}
	b.ReportAllocs()
	for b.Loop() {
		Localize(ws, &out.Draft, Zh)
	}
}

const langBench = `{"title":"血脂","indicators":[
 {"itemName":"总胆固醇","valueNum":586,"unit":"mmol/L","refText":"3.1-5.2"},
 {"itemName":"甘油三酯","valueNum":1.2,"unit":"mmol/L","refLow":1.7,"refHigh":0.4},
 {"itemName":"高密度脂蛋白胆固醇","valueNum":6.9,"unit":"mmol/L","refText":"1.0-1.5"},
 {"itemName":"空腹血糖","valueNum":5.1,"unit":"mmol/L","refText":"70-110 mg/dL"},
 {"valueNum":3}]}`

func TestPlace(t *testing.T) {
	for _, c := range []struct {
		path, list string
		i          int
		ok         bool
	}{
		{"indicators[3]", "", 3, true},
		{"pages[1].indicators[0]", "", 0, true},
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
