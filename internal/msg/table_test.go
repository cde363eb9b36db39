package msg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"image"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

var han = regexp.MustCompile(`\p{Han}`)

// TestEveryReason runs the producers — draft/ on every captured reply and on replies written to
// give each of its reasons, draft.Merge, check/ on those drafts and its testdata, check.OnPage,
// extract/ — and takes every warning they give. Each must have its row, whose sentences in every
// language are filled from what the warning gives (no "?"), and its English message must be its
// row's; every row must be given by some producer here, and every code. So a reason added to a
// producer without its row fails here, and so does a row speaking of a param its producer
// does not give, or a row no producer uses.
func TestEveryReason(t *testing.T) {
	var all []schema.Warning
	lex := lexicon.Default()
	b := draft.New(lex)
	read := func(name, reply string, cut bool) *schema.OcrDraft {
		out, err := b.FromReply(reply, cut)
		if err != nil {
			return nil
		}
		all = append(all, out.Warnings...)
		d := out.Draft
		for _, sex := range []check.Sex{"", check.Male, check.Female} {
			d := d
			all = append(all, check.Run(lex, &d, check.Context{Sex: sex})...)
		}
		return &d
	}
	replies, _ := filepath.Glob("../../testdata/replies/*.txt")
	for _, f := range replies {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		read(f, string(raw), strings.HasSuffix(f, ".length.txt"))
	}
	long := strings.Repeat("名", 201)
	row := func(i int) string { return fmt.Sprintf(`{"itemName":"项目%d","valueNum":%d,"unit":"g/L"}`, i, i) }
	rows := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = row(i)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	for name, reply := range map[string]string{
		"unplaced":         `{"title":"血脂","总胆固醇":"5.86 mmol/L"}`,
		"not_list text":    `{"title":"血脂","indicators":"见下页","items":[` + row(1) + `]}`,
		"not_list":         `{"title":"血脂","indicators":5,"items":[` + row(1) + `]}`,
		"out of range":     `{"checkupDate":"1850-03-05","indicators":` + rows(1) + `}`,
		"no_name":          `{"indicators":[{"valueNum":3},` + row(1) + `]}`,
		"placeholder_name": `{"indicators":[{"itemName":"<项目名称>","valueNum":3},` + row(1) + `]}`,
		"name_too_long":    `{"indicators":[{"itemName":"` + long + `","valueNum":3},` + row(1) + `]}`,
		"not_item":         `{"indicators":[1,` + row(1) + `]}`,
		"too_deep":         `{"indicators":[{"itemGroup":"a","items":[{"itemGroup":"b","items":[{"itemGroup":"c","items":[{"itemGroup":"d","items":[` + row(1) + `]}]}]}]},` + row(2) + `]}`,
		"broken":           "[" + row(1) + ",\n{\"itemName\": \"B\" \"valueNum\" ::: 2 {{{ ]]] }\n," + row(2) + "]",
		"swapped":          `[{"itemName":"葡萄糖","valueNum":5.1,"unit":"mmol/L","refLow":6.1,"refHigh":3.9}]`,
		"not_date":         `{"checkupDate":"2026-02-30","indicators":` + rows(1) + `}`,
		"date placeholder": `{"checkupDate":"YYYY-MM-DD","indicators":` + rows(1) + `}`,
		"no_day":           `{"checkupDate":"2026年3月","indicators":` + rows(1) + `}`,
		"ambiguous":        `{"checkupDate":"03/05/2026","indicators":` + rows(1) + `}`,
		"date list":        `{"checkupDate":[1],"indicators":` + rows(1) + `}`,
		"placeholder":      `{"title":"<报告标题>","hospital":"[医院名称]","indicators":[{"itemName":"血糖","valueNum":5,"unit":"<单位>"}]}`,
		"not_year":         `{"reportYear":"去年","indicators":` + rows(1) + `}`,
		"too_large":        `{"reportYear":2300,"indicators":` + rows(1) + `}`,
		"too_small":        `{"reportYear":1300,"indicators":` + rows(1) + `}`,
		"too_long":         `{"title":"` + long + `","indicators":[{"itemName":"血糖","valueNum":5,"unit":"` + long + `"}]}`,
		"values":           `[{"itemName":"血糖","valueNum":"阴性","valueText":"阳性"},{"itemName":"尿酸","valueNum":[1]},{"itemName":"钾","value":{"a":[1]}},{"itemName":"钠","valueText":[1]}]`,
		"flag":             `[{"itemName":"血糖","valueNum":5.1,"printedFlag":"很好"},{"itemName":"钾","valueNum":4,"refLow":"abc","refHigh":[1]},{"itemName":"钠","valueNum":140,"refText":"5.2"},{"itemName":"氯","valueNum":100,"unit":[1]}]`,
		"unit conflict":    `[{"itemName":"葡萄糖","valueNum":"98 mg/dL","unit":"mmol/L"}]`,
		"more":             "[" + row(0) + strings.Repeat(",1", 150) + "]",
		"other_draft":      "```json\n{\"title\":\"血脂\",\"indicators\":[" + row(1) + "," + row(2) + "]}\n```\n更正：\n```json\n{\"title\":\"血脂\",\"indicators\":[" + row(3) + "]}\n```",
		"unread":           "[" + strings.Repeat(`{'itemName': 'x', 'valueNum': 5.86↑},`, 3000) + "]",
		"too_long reply":   rows(12000),
	} {
		read(name, reply, false)
	}
	read("cut_off", `{"indicators":[`+row(1)+`,{"itemName":"血`, true)

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
		for _, who := range []check.Context{{Sex: td.Context.Sex, Confirmed: td.Context.Confirmed}, {Sex: check.Male}, {Sex: check.Female}} {
			d := td.Draft
			all = append(all, check.Run(lex, &d, who)...)
		}
	}
	// The checks' reasons that need a row written for them: a sum, a range beyond its unit's
	// limits, ranges per sex, age or condition, with and without the caller's context, confirmed.
	for _, c := range []struct {
		rows []schema.OcrIndicator
		who  check.Context
	}{
		{rows: []schema.OcrIndicator{ck("总胆红素", "μmol/L", "12.0", "", "", ""), ck("直接胆红素", "μmol/L", "18.0", "", "", ""), ck("间接胆红素", "μmol/L", "8.0", "", "", "")}},
		{rows: []schema.OcrIndicator{ck("高密度脂蛋白胆固醇", "mmol/L", "1.3", "40", "60", "")}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "男：130-175；女：115-150")}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "男：130-175；女：115-150")}, who: check.Context{Sex: check.Female}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "100", "200", "男：130-175；女：115-150")}, who: check.Context{Confirmed: true}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "男性 130-175")}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "男性 130-175")}, who: check.Context{Sex: check.Female}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "男性 130-175")}, who: check.Context{Sex: check.Male}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "空腹 3.9-6.1")}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "<50岁 0-15；≥50岁 0-20")}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "", "", "0-15；0-20")}},
		{rows: []schema.OcrIndicator{ck("某项目", "U/L", "10", "1", "2", "成人 0-15；儿童 0-20")}, who: check.Context{Confirmed: true}},
	} {
		d := schema.OcrDraft{Indicators: c.rows}
		all = append(all, check.Run(lex, &d, c.who)...)
	}
	// More rows failing one check than are listed.
	var many schema.OcrDraft
	for range 120 {
		many.Indicators = append(many.Indicators, schema.OcrIndicator{ItemName: "钾", ValueNum: dec("4.1"), Unit: new("mg/L")})
	}
	all = append(all, check.Run(lex, &many, check.Context{})...)

	// Merge: a failed page, a page that disagrees, items repeated exactly, a page of too many rows.
	ind := schema.OcrIndicator{ItemName: "总胆固醇", ValueNum: dec("5.86"), Unit: new("mmol/L")}
	var big []schema.OcrIndicator
	for i := range draft.MaxPageRows + 120 {
		big = append(big, schema.OcrIndicator{ItemName: fmt.Sprint("项目", i), ValueNum: dec("1")})
	}
	p1 := schema.Result{Draft: schema.OcrDraft{Hospital: new("协和医院"), Indicators: big}}
	p2 := schema.Result{Draft: schema.OcrDraft{Hospital: new("协和医院体检中心"), Indicators: append([]schema.OcrIndicator{ind}, big[:draft.MaxPageRows-1]...)}}
	merged, err := draft.Merge([]draft.Page{{Result: &p1}, {Result: &p2}, {Err: problem.Errorf(problem.ModelTimeout, "the model did not answer")}})
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, merged.Warnings...)

	// OnPage: a value the page's text layer does not print, and one printed off its row.
	od := schema.OcrDraft{Indicators: []schema.OcrIndicator{
		{ItemName: "血小板计数", ValueNum: dec("281"), Page: new(1)},
		{ItemName: "白细胞计数", ValueNum: dec("6.2"), RefLow: dec("3.5"), RefHigh: dec("9.5"), Page: new(1)},
	}}
	ows, _ := check.OnPage(&od, [][]intake.Word{{
		{Text: "血小板计数", Box: image.Rect(0, 0, 40, 12)}, {Text: "231", Box: image.Rect(100, 0, 140, 12)},
		{Text: "白细胞计数", Box: image.Rect(0, 20, 40, 32)}, {Text: "3.5-9.5", Box: image.Rect(160, 20, 200, 32)},
		{Text: "6.2", Box: image.Rect(100, 60, 140, 72)},
	}})
	all = append(all, ows...)

	// extract/: a reply the endpoint's filter stopped.
	s := extract.New(extract.Config{Model: stopped{}, Prep: anyPage{}})
	res, err := s.Extract(context.Background(), []*budget.Bytes{budget.NewBytes([]byte("p"), nil, 0)}, check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, res.Warnings...)

	// The second read: two reads that differ in a value, a unit and a range, a row each has
	// alone, and second reads that fail, come back unreadable, or find no image kept.
	first := []schema.OcrIndicator{
		{ItemName: "总胆固醇", ValueNum: dec("5.86"), Unit: new("mmol/L"), RefText: new("3.1-5.2")},
		{ItemName: "尿酸", ValueNum: dec("300"), Unit: new("μmol/L"), Analyte: new("uric_acid")},
	}
	again := []schema.OcrIndicator{
		{ItemName: "总胆固醇", ValueNum: dec("5.36"), Unit: new("mmol/l"), RefText: new("3.1-5.7")},
		{ItemName: "甘油三酯", ValueNum: dec("1.42"), Analyte: new("triglycerides")},
	}
	all = append(all, check.Agree(first, again, 1)...)
	for _, second := range []extract.Model{failing{}, garbled{}} {
		s := extract.New(extract.Config{Model: stopped{}, Prep: anyPage{}, Verify: extract.Verify{Mode: extract.VerifyAll, Model: second}})
		res, err := s.Extract(context.Background(), []*budget.Bytes{budget.NewBytes([]byte("p"), nil, 0)}, check.Context{})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Warnings...)
	}
	s = extract.New(extract.Config{Model: implausible{}, Prep: anyPage{}, RetryMemory: 1, Verify: extract.Verify{Mode: extract.VerifyFlagged}})
	res, err = s.Extract(context.Background(), []*budget.Bytes{budget.NewBytes([]byte("pp"), nil, 0)}, check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, res.Warnings...)

	logged := map[[2]string]bool{}
	for _, w := range all {
		if k := [2]string{string(w.Code), w.Reason}; testing.Verbose() && !logged[k] {
			logged[k] = true
			t.Logf("%s/%s\n\t%s\n\t%s", w.Code, w.Reason, msg.Text(w, msg.En), msg.Text(w, msg.Zh))
		}
	}
	given := map[[2]string]bool{}
	codes := map[schema.WarningCode]bool{}
	for _, w := range all {
		given[[2]string{string(w.Code), w.Reason}] = true
		given[[2]string{"", w.Reason}] = true
		codes[w.Code] = true
		for _, lang := range []string{msg.En, msg.Zh} {
			ok, missing := msg.Missing(w, lang)
			if !ok {
				t.Errorf("%s/%q has no row (%q)", w.Code, w.Reason, w.Message)
				break
			}
			if len(missing) > 0 {
				t.Errorf("%s/%s in %s speaks of %v, which its producer does not give (params %v)", w.Code, w.Reason, lang, missing, w.Params)
			}
		}
		if en := msg.Text(w, msg.En); en != w.Message {
			t.Errorf("%s/%s: message %q is not its row's %q", w.Code, w.Reason, w.Message, en)
		}
		// The message is rendered from the row, never read: rewording it changes nothing.
		reworded := w
		reworded.Message = "reworded"
		if zh, want := msg.Localize([]schema.Warning{reworded}, msg.Zh)[0].Message, msg.Text(w, msg.Zh); zh != want {
			t.Errorf("%s/%s: a reworded message gave %q, not %q", w.Code, w.Reason, zh, want)
		}
		if zh := msg.Text(w, msg.Zh); !han.MatchString(zh) {
			t.Errorf("%s/%s: zh %q", w.Code, w.Reason, zh)
		}
	}
	for _, r := range msg.Rows {
		if !given[[2]string{string(r.Code), r.Reason}] && !elsewhere[[2]string{string(r.Code), r.Reason}] {
			t.Errorf("no producer here gave %s/%s: give it, or drop its row", r.Code, r.Reason)
		}
	}
	for _, c := range schema.WarningCodes {
		if !codes[c.Code] {
			t.Errorf("no producer here gave %s", c.Code)
		}
	}
}

// ck is a row as a draft gives it to the checks; "" leaves a field out.
func ck(name, unit, value, lo, hi, ref string) schema.OcrIndicator {
	ind := schema.OcrIndicator{ItemName: name}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	num := func(s string) *schema.Decimal {
		if s == "" {
			return nil
		}
		return dec(s)
	}
	ind.Unit, ind.RefText, ind.ValueNum, ind.RefLow, ind.RefHigh = opt(unit), opt(ref), num(value), num(lo), num(hi)
	return ind
}

// elsewhere are the reasons a reply cannot reach, given by their producer's own test: a report
// year beyond its contract's bounds (draft's TestBrokenRule; readYear refuses one first).
var elsewhere = map[[2]string]bool{
	{string(schema.InvalidValue), "too_small"}: true,
	{string(schema.InvalidValue), "too_large"}: true,
}

func dec(s string) *schema.Decimal { d := schema.MustDecimal(s); return &d }

type anyPage struct{}

func (anyPage) Prepare(ctx context.Context, data []byte) (intake.Page, error) {
	return intake.Page{MIME: "image/png", Data: data, BytesIn: len(data), BytesOut: len(data)}, nil
}

// stopped answers a usable draft, stopped by the endpoint's content filter.
type stopped struct{}

func (stopped) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	return vision.Reply{Text: `[{"itemName":"血糖","valueNum":5.1,"unit":"mmol/L"}]`, FinishReason: "content_filter", Model: "fake-vl"}, nil
}

// failing is a model whose every call fails.
type failing struct{}

func (failing) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	req.Close()
	return vision.Reply{}, problem.Errorf(problem.ModelUnavailable, "the model is down")
}

// garbled is a model that answers no JSON.
type garbled struct{}

func (garbled) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	req.Close()
	return vision.Reply{Text: "sorry", FinishReason: "stop"}, nil
}

// implausible answers a value no patient has, which flags its page.
type implausible struct{}

func (implausible) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	req.Close()
	return vision.Reply{Text: `[{"itemName":"血糖","valueNum":5100,"unit":"mmol/L"}]`, FinishReason: "stop"}, nil
}

// TestNoFreeText: no code outside this package writes a warning's message itself (a
// schema.Warning literal with a Message), and this package reads no message with a regular
// expression: every message comes from Rows.
func TestNoFreeText(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if n := e.Name(); path != "../.." && (n == "testdata" || strings.HasPrefix(n, ".")) || path == "../../internal/apiclient" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		here := filepath.ToSlash(filepath.Dir(path)) == "../../internal/msg"
		for _, im := range f.Imports {
			if here && im.Path.Value == `"regexp"` {
				t.Errorf("%s imports regexp", path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || here {
				return true
			}
			typ, ok := lit.Type.(*ast.SelectorExpr)
			if !ok || typ.Sel.Name != "Warning" {
				return true
			}
			if x, ok := typ.X.(*ast.Ident); !ok || x.Name != "schema" {
				return true
			}
			for _, el := range lit.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Message" {
						t.Errorf("%s: a warning's message written by hand; use msg.New", fset.Position(kv.Pos()))
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
