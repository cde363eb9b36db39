package check

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/draft"
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
	benchRun(b, rows)
}

// BenchmarkRun40 is issue 20's target: the checks for a 40-row report with every relation
// present that 40 rows can hold (relations40: lipids with a calculated LDL-C and non-HDL-C, liver
// proteins and bilirubins, a blood count's indices and both differentials, electrolytes with the
// anion gap, creatinine with eGFR, HbA1c in both units, PT with INR; 27 relations judged, none
// failing, TestRelations40), the draft as package draft gives it (each row with the reading of
// its range), as the service checks it. At most 15 µs.
// go test ./check -run '^$' -bench Run40 -benchmem -cpu 1
func BenchmarkRun40(b *testing.B) { benchRun(b, builtRows(b, relations40)) }

// BenchmarkRun40Read is BenchmarkRun40 on the rows decoded from JSON, without their readings:
// the checks read the 40 ranges themselves (a hand-made draft's cost, not the service's).
func BenchmarkRun40Read(b *testing.B) { benchRun(b, decodedRows(b, relations40)) }

// relations40 is the 40-row report of BenchmarkRun40.
const relations40 = "testdata/ck-clean-relations-40.json"

// relations40Judged are the relations its rows take part in: every relation of the table whose
// analytes it prints. The table's other relations need analytes a 40-row report of these panels
// has no room for (VLDL-C, AST/ALT ratio, PSA, apolipoproteins, iron, ionised calcium, blood gas,
// urine ACR, CK-MB), or exclude each other (TSAT from transferrin only without TIBC).
var relations40Judged = []string{
	"hdl_in_tc", "ldl_in_tc", "non_hdl_in_tc", "non_hdl", "friedewald",
	"dbil_in_tbil", "ibil_in_tbil", "ibil", "alb_in_tp", "glb_in_tp", "globulin", "ag_ratio",
	"neut_in_wbc", "lymph_in_wbc", "mono_in_wbc", "eo_in_wbc", "baso_in_wbc", "wbc_sum", "differential",
	"mcv", "mch", "mchc", "mchc_indices", "anion_gap", "hba1c_units", "egfr", "inr",
}

// TestRelations40 holds BenchmarkRun40's report to what its doc says: 40 rows, no warning, and
// every relation of relations40Judged evaluated.
func TestRelations40(t *testing.T) {
	for _, rows := range [][]schema.OcrIndicator{builtRows(t, relations40), decodedRows(t, relations40)} {
		if len(rows) != 40 {
			t.Fatalf("%d rows", len(rows))
		}
		var judged []string
		ws, _, _ := runTraced(nil, lexicon.Default(), &schema.OcrDraft{Indicators: rows}, Context{}, &judged)
		if len(ws) != 0 {
			t.Errorf("warnings: %v", ws)
		}
		if !slices.Equal(judged, relations40Judged) {
			t.Errorf("relations judged:\n got %q\nwant %q", judged, relations40Judged)
		}
	}
}

// decodedRows are the indicators of the ck- file f decoded from JSON: no reading with them.
func decodedRows(tb testing.TB, f string) []schema.OcrIndicator {
	var td testDraft
	raw, err := os.ReadFile(f)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(raw, &td); err != nil {
		tb.Fatal(err)
	}
	return td.Draft.Indicators
}

// builtRows are the indicators of the ck- file f as package draft gives them (through Validate,
// the reader of /v1/validate): each with the reading of its range.
func builtRows(tb testing.TB, f string) []schema.OcrIndicator {
	raw, err := os.ReadFile(f)
	if err != nil {
		tb.Fatal(err)
	}
	var td struct {
		Draft json.RawMessage `json:"draft"`
	}
	if err := json.Unmarshal(raw, &td); err != nil {
		tb.Fatal(err)
	}
	res, err := draft.New(lexicon.Default()).Validate(td.Draft)
	if err != nil {
		tb.Fatal(err)
	}
	if res.Draft.Indicators[0].Range == nil {
		tb.Fatal("no reading with the rows")
	}
	return res.Draft.Indicators
}

// BenchmarkRunBuilt is BenchmarkRun on the draft as package draft gives it (here through
// Validate, the same reader): each row brings the reading of its range, as in the service, so
// that the checks read no range themselves. BenchmarkRun's rows, decoded from JSON, bring none.
func BenchmarkRunBuilt(b *testing.B) {
	raw, err := os.ReadFile("testdata/ck-clean-cbc-urine-stool.json")
	if err != nil {
		b.Fatal(err)
	}
	var td struct {
		Draft json.RawMessage `json:"draft"`
	}
	if err := json.Unmarshal(raw, &td); err != nil {
		b.Fatal(err)
	}
	res, err := draft.New(lexicon.Default()).Validate(td.Draft)
	if err != nil {
		b.Fatal(err)
	}
	rows := res.Draft.Indicators[:20]
	if rows[0].Range == nil {
		b.Fatal("no reading with the rows")
	}
	benchRun(b, rows)
}

// benchRun checks rows, which must give no warning, once outside the loop (the lexicon loads
// then) and then on a fresh copy each time, as Run may null bounds.
func benchRun(b *testing.B, rows []schema.OcrIndicator) {
	if ws := Run(lexicon.Default(), &schema.OcrDraft{Indicators: slices.Clone(rows)}, Context{}); len(ws) != 0 {
		b.Fatal(ws)
	}
	buf := make([]schema.OcrIndicator, len(rows))
	d := &schema.OcrDraft{}
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, rows)
		d.Indicators = buf
		if ws := Run(lexicon.Default(), d, Context{}); len(ws) != 0 {
			b.Fatal(ws)
		}
	}
}

// BenchmarkParseCheck is what a /v1/parse of the typical reply costs in the packages that read
// and judge it: draft reads the 20 rows of a real report (names the lexicon knows, a mark and a
// printed range on some rows, one range per sex) and the checks judge the draft it gives, its
// readings of the ranges with it. go test ./check -run '^$' -bench ParseCheck -benchmem -cpu 1
func BenchmarkParseCheck(b *testing.B) {
	reply := parseCheckReply()
	bd := draft.New(lexicon.Default())
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := bd.FromReply(reply, false)
		if err != nil {
			b.Fatal(err)
		}
		Run(bd.Lexicon(), &out.Draft, Context{Sex: Female})
	}
}

// parseCheckReply is a 20-row reply of a blood count, liver, kidney and lipid panel as a model
// writes it, ranges as printed.
func parseCheckReply() string {
	rows := [][5]string{
		{"血常规", "白细胞计数(WBC)", "6.52", "×10^9/L", "3.5-9.5"}, {"血常规", "红细胞计数(RBC)", "4.21", "×10^12/L", "男：4.3-5.8；女：3.8-5.1"},
		{"血常规", "血红蛋白(HGB)", "128", "g/L", "130-175(男) 115-150(女)"}, {"血常规", "红细胞压积(HCT)", "38.5", "%", "35-45"},
		{"血常规", "平均红细胞体积(MCV)", "90.1", "fL", "82-100"}, {"血常规", "血小板计数(PLT)", "231", "10^9/L", "125-350"},
		{"血常规", "中性粒细胞百分比(NEUT%)", "58.2", "%", "40-75"}, {"血常规", "淋巴细胞百分比(LYMPH%)", "31.5", "%", "20-50"},
		{"肝功能", "丙氨酸氨基转移酶(ALT)", "22", "U/L", "7-40"}, {"肝功能", "天门冬氨酸氨基转移酶(AST)", "25", "U/L", "13-35"},
		{"肝功能", "总胆红素(TBIL)", "12.3", "μmol/L", "0-21"}, {"肝功能", "白蛋白(ALB)", "45.2", "g/L", "40-55"},
		{"肾功能", "肌酐(Cr)", "62", "umol/L", "41-73"}, {"肾功能", "尿酸(UA)", "310", "μmol/L", "155-357"},
		{"血脂", "总胆固醇(TC)", "5.86", "mmol/L", "<5.2"}, {"血脂", "甘油三酯(TG)", "1.21", "mmol/l", "<1.7"},
		{"血脂", "高密度脂蛋白胆固醇(HDL-C)", "1.32", "mmol/L", ">1.04"}, {"血脂", "低密度脂蛋白胆固醇(LDL-C)", "3.11", "mmol/L", "<3.4"},
		{"血糖", "空腹血糖(GLU)", "5.1", "mmol/L", "3.9-6.1"}, {"尿常规", "尿蛋白(PRO)", "阴性", "", "阴性"},
	}
	var s strings.Builder
	s.WriteString(`{"title":"血常规+生化","hospital":"复旦大学附属中山医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[`)
	for i, r := range rows {
		if i > 0 {
			s.WriteString(",")
		}
		value := r[2]
		if value[0] < '0' || value[0] > '9' {
			value = strconv.Quote(value)
		}
		fmt.Fprintf(&s, `{"itemName":%q,"itemGroup":%q,"valueNum":%s,"valueText":null,"unit":%q,"refLow":null,"refHigh":null,"printedFlag":null,"refText":%q}`, r[1], r[0], value, r[3], r[4])
	}
	s.WriteString("]}")
	return s.String()
}

// BenchmarkRunRelations checks another 40-row draft with nothing to warn about: every formula
// relation (calculated LDL-C, anion gap, INR, eGFR, blood-gas pH, HbA1c in both units, TSAT from
// transferrin, ACR) and the protein sums and ratios of a report of true extreme results
// (ck-clean-true-extremes, most rows marked), and a blood count's white cell sum and red cell
// indices; decoded from JSON, so the checks read its ranges. BenchmarkRun40 is issue 20's target.
// go test ./check -run '^$' -bench RunRelations -benchmem -cpu 1
func BenchmarkRunRelations(b *testing.B) {
	var td testDraft
	raw, err := os.ReadFile("testdata/ck-clean-true-extremes.json")
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, &td); err != nil {
		b.Fatal(err)
	}
	rows := td.Draft.Indicators
	cbc := group("血常规")
	rows = append(rows, in("WBC", "10^9/L", "6.52", "", "", cbc), in("NEUT#", "10^9/L", "3.80", "", "", cbc), in("LYMPH#", "10^9/L", "2.09", "", "", cbc),
		in("MONO#", "10^9/L", "0.42", "", "", cbc), in("EO#", "10^9/L", "0.17", "", "", cbc), in("BASO#", "10^9/L", "0.04", "", "", cbc),
		in("HGB", "g/L", "148", "", "", cbc), in("RBC", "10^12/L", "4.92", "", "", cbc), in("HCT", "%", "44.1", "", "", cbc),
		in("MCV", "fL", "89.6", "", "", cbc))
	if len(rows) != 40 {
		b.Fatalf("%d rows", len(rows))
	}
	benchRun(b, rows)
}
