package check

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// in builds an indicator: name, unit, value, refLow, refHigh ("" is null; a value that is not a
// number is valueText), then options.
func in(name, unit, value, lo, hi string, opts ...func(*schema.OcrIndicator)) schema.OcrIndicator {
	ind := schema.OcrIndicator{ItemName: name}
	dec := func(s string) *schema.Decimal {
		if s == "" {
			return nil
		}
		d := schema.MustDecimal(s)
		return &d
	}
	if unit != "" {
		ind.Unit = &unit
	}
	if _, err := schema.ParseDecimal(value); err == nil {
		ind.ValueNum = dec(value)
	} else if value != "" {
		ind.ValueText = &value
	}
	ind.RefLow, ind.RefHigh = dec(lo), dec(hi)
	for _, o := range opts {
		o(&ind)
	}
	return ind
}

func flag(f schema.Flag) func(*schema.OcrIndicator) {
	return func(ind *schema.OcrIndicator) { ind.PrintedFlag = &f }
}
func ref(t string) func(*schema.OcrIndicator) {
	return func(ind *schema.OcrIndicator) { ind.RefText = &t }
}
func group(g string) func(*schema.OcrIndicator) {
	return func(ind *schema.OcrIndicator) { ind.ItemGroup = &g }
}
func page(n int) func(*schema.OcrIndicator) {
	return func(ind *schema.OcrIndicator) { ind.Page = &n }
}
func analyte(k string) func(*schema.OcrIndicator) {
	return func(ind *schema.OcrIndicator) { ind.Analyte = &k }
}

// testCase is one draft and the warnings it must get, each "code path".
type testCase struct {
	name string
	ctx  Context
	rows []schema.OcrIndicator
	want []string
	// after, when set, checks the draft after Run (a range nulled or chosen).
	after func(t *testing.T, d *schema.OcrDraft)
}

// cases are each rule's table, by code: misreads it must catch and near misses it must not.
var cases = map[schema.WarningCode][]testCase{
	schema.FlagMismatch: {
		{name: "↑ beside a value inside the range", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "4.20", "3.1", "5.2", flag(schema.FlagHigh))}, want: []string{"flag_mismatch indicators[0].valueNum"}},
		{name: "↓ beside a value inside the range", rows: []schema.OcrIndicator{in("血红蛋白", "g/L", "145", "130", "175", flag(schema.FlagLow))}, want: []string{"flag_mismatch indicators[0].valueNum"}},
		{name: "↓ beside a value above the range", rows: []schema.OcrIndicator{in("PLT", "10^9/L", "420", "125", "350", flag(schema.FlagLow))}, want: []string{"flag_mismatch indicators[0].valueNum"}},
		{name: "↑ beside a value below the range (the neighbour's mark)", rows: []schema.OcrIndicator{in("ALT", "U/L", "6", "9", "50", flag(schema.FlagHigh))}, want: []string{"flag_mismatch indicators[0].valueNum"}},
		{name: "↑ with only a lower bound, value below it", rows: []schema.OcrIndicator{in("HDL-C", "mmol/L", "0.86", "1.04", "", flag(schema.FlagHigh))}, want: []string{"flag_mismatch indicators[0].valueNum"}},
		{name: "↓ with only an upper bound, value above it", rows: []schema.OcrIndicator{in("LDL-C", "mmol/L", "4.1", "", "3.4", flag(schema.FlagLow))}, want: []string{"flag_mismatch indicators[0].valueNum"}},
		{name: "an unknown item is judged by its own range", rows: []schema.OcrIndicator{in("某某指数", "", "12", "20", "40", flag(schema.FlagLow)), in("某某指数2", "", "30", "20", "40", flag(schema.FlagHigh))}, want: []string{"flag_mismatch indicators[1].valueNum"}},
		{name: "TG 142 beside 0.56–1.70 with no mark, on a report that marks", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "6.20", "3.1", "5.2", flag(schema.FlagHigh)), in("甘油三酯", "mmol/L", "142", "0.56", "1.70")}, want: []string{"flag_mismatch indicators[1].valueNum"}},
		{name: "Hb 13.8 g/L with no mark, 9.4× below its range", rows: []schema.OcrIndicator{in("WBC", "10^9/L", "11.2", "3.5", "9.5", flag(schema.FlagHigh)), in("HGB", "g/L", "13.8", "130", "175")}, want: []string{"flag_mismatch indicators[1].valueNum"}},
		{name: "glucose 31 with no mark, the ↓ of another row", rows: []schema.OcrIndicator{in("HDL-C", "mmol/L", "0.86", "1.04", "", flag(schema.FlagLow)), in("GLU", "mmol/L", "31.0", "3.9", "6.1")}, want: []string{"flag_mismatch indicators[1].valueNum"}},
		// Near misses.
		{name: "unmarked extremes on a report that marks nothing", rows: []schema.OcrIndicator{in("甘油三酯", "mmol/L", "142", "0.56", "1.70"), in("HGB", "g/L", "13.8", "130", "175")}},
		{name: "a marked true extreme beside an unmarked one not far out", rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "412", "57", "111", flag(schema.FlagHigh)), in("尿素", "mmol/L", "16.2", "3.1", "9.5"), in("ALT", "U/L", "300", "9", "50")}},
		{name: "an unmarked extreme on another page than the marks", rows: []schema.OcrIndicator{in("TC", "mmol/L", "6.2", "3.1", "5.2", flag(schema.FlagHigh), page(1)), in("TG", "mmol/L", "14.2", "0.56", "1.70", page(2))}},
		{name: "marks that disagree with their values do not show a marking report", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.2", "3.1", "5.2", flag(schema.FlagHigh)), in("TG", "mmol/L", "14.2", "0.56", "1.70")}, want: []string{"flag_mismatch indicators[0].valueNum"}},
		{name: "a semi-quantitative result against its cut-off", rows: []schema.OcrIndicator{in("ALT", "U/L", "80", "9", "50", flag(schema.FlagHigh)), in("HBsAg", "IU/mL", "250", "0", "0.05")}},
		{name: "↑ beside a value that rounds to the bound", rows: []schema.OcrIndicator{in("TC", "mmol/L", "5.20", "3.1", "5.2", flag(schema.FlagHigh))}},
		{name: "↑ above, ↓ below", rows: []schema.OcrIndicator{in("TG", "mmol/L", "2.35", "0", "1.7", flag(schema.FlagHigh)), in("HGB", "g/L", "102", "130", "175", flag(schema.FlagLow))}},
		{name: "a mark with no direction is not judged", rows: []schema.OcrIndicator{in("尿酸", "μmol/L", "300", "208", "428", flag(schema.FlagAbnormal))}},
		{name: "no bounds, nothing to judge by", rows: []schema.OcrIndicator{in("CEA", "ng/mL", "1.2", "", "", flag(schema.FlagHigh))}},
		{name: "a word value", rows: []schema.OcrIndicator{in("尿蛋白", "", "阳性(+)", "", "", flag(schema.FlagHigh))}},
	},
	schema.ValueImplausible: {
		{name: "cholesterol 586 mmol/L: a lost decimal point", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "586", "3.1", "5.2")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "586 beside 3.1–5.2 with no unit: tenfold its range", rows: []schema.OcrIndicator{in("TC", "", "586", "3.1", "5.2")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "urine specific gravity 1,020 read as 1020", rows: []schema.OcrIndicator{in("比重", "", "1020", "1.003", "1.030", group("尿常规"))}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "SG 1015 without a group", rows: []schema.OcrIndicator{in("尿比重(SG)", "", "1015", "", "")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "potassium 42 (4.2)", rows: []schema.OcrIndicator{in("钾", "mmol/L", "42", "3.5", "5.3")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "sodium 14.1 (141)", rows: []schema.OcrIndicator{in("Na", "mmol/L", "14.1", "137", "147")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "calcium 23.5 (2.35)", rows: []schema.OcrIndicator{in("血清钙", "mmol/L", "23.5", "2.11", "2.52")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "urine pH 65 (6.5)", rows: []schema.OcrIndicator{in("pH", "", "65", "4.5", "8.0", group("尿液分析"))}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "body temperature 365 ℃", rows: []schema.OcrIndicator{in("体温", "℃", "365", "", "")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "HbA1c 58 % (5.8)", rows: []schema.OcrIndicator{in("糖化血红蛋白", "%", "58", "4", "6")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "haemoglobin 1.42 g/L", rows: []schema.OcrIndicator{in("Hb", "g/L", "1.42", "", "")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "urea 0.05 with no unit: beyond its limits in every unit", rows: []schema.OcrIndicator{in("尿素", "", "0.05", "2.6", "9.5")}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "the analyte key set by the reader is used", rows: []schema.OcrIndicator{in("Chol (total)", "mmol/L", "612", "", "", analyte("total_cholesterol"))}, want: []string{"value_implausible indicators[0].valueNum"}},
		{name: "MCH 304 beside a misread unit (PE for pg): outside its limits in every unit", rows: []schema.OcrIndicator{in("MCH", "PE", "304", "27", "34")}, want: []string{"unit_unexpected indicators[0].unit", "value_implausible indicators[0].valueNum"}},
		{name: "MCV 917 beside 任 for fL", rows: []schema.OcrIndicator{in("平均红细胞体积", "任", "917", "82", "100", group("血常规"))}, want: []string{"unit_unexpected indicators[0].unit", "value_implausible indicators[0].valueNum"}},
		{name: "RBC 45 beside 10~12/L", rows: []schema.OcrIndicator{in("RBC", "10~12/L", "45", "4.3", "5.8")}, want: []string{"unit_unexpected indicators[0].unit", "value_implausible indicators[0].valueNum"}},
		{name: "MCH 304 in a unit of another analyte (g/L)", rows: []schema.OcrIndicator{in("MCH", "g/L", "304", "27", "34")}, want: []string{"unit_unexpected indicators[0].unit", "value_implausible indicators[0].valueNum"}},
		{name: "creatinine 78 beside mmol/L: it fits μmol/L", rows: []schema.OcrIndicator{in("CREA", "mmol/L", "78", "", "")}, want: []string{"value_implausible indicators[0].valueNum"}},
		// Near misses: a misread unit beside a value some unit of the item allows.
		{name: "MCH 30.4 beside PE", rows: []schema.OcrIndicator{in("MCH", "PE", "30.4", "27", "34")}},
		{name: "a scale the lexicon lacks, value and range alike", rows: []schema.OcrIndicator{in("Neutrophils#", "/L", "7800000000", "2000000000", "7500000000", flag(schema.FlagHigh))}},
		// Real patients.
		{name: "ALT 2000 in acute hepatitis", rows: []schema.OcrIndicator{in("ALT", "U/L", "2000", "9", "50", flag(schema.FlagHigh))}},
		{name: "CRP 180 in sepsis", rows: []schema.OcrIndicator{in("CRP", "mg/L", "180", "0", "10", flag(schema.FlagHigh))}},
		{name: "TSH 150 and 0.005", rows: []schema.OcrIndicator{in("TSH", "mIU/L", "150", "0.27", "4.2"), in("TSH", "μIU/mL", "0.005", "0.27", "4.2", page(2))}},
		{name: "WBC 0.8, PLT 12, Hb 45", rows: []schema.OcrIndicator{in("WBC", "10^9/L", "0.8", "3.5", "9.5"), in("PLT", "10^9/L", "12", "125", "350"), in("HGB", "g/L", "45", "130", "175")}},
		{name: "creatinine 1200 on dialysis", rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "1200", "57", "111", flag(schema.FlagHigh))}},
		{name: "glucose 28 mmol/L", rows: []schema.OcrIndicator{in("葡萄糖", "mmol/L", "28.0", "3.9", "6.1", flag(schema.FlagHigh))}},
		{name: "HbA1c 58 mmol/mol", rows: []schema.OcrIndicator{in("HbA1c", "mmol/mol", "58", "", "")}},
		{name: "cholesterol 230 mg/dL", rows: []schema.OcrIndicator{in("Cholesterol", "mg/dL", "230", "", "200", flag(schema.FlagHigh))}},
		{name: "SG 1.020", rows: []schema.OcrIndicator{in("比重", "", "1.020", "1.003", "1.030", group("尿常规"))}},
		{name: "f/t PSA 23 with its % not printed", rows: []schema.OcrIndicator{in("fPSA/tPSA", "", "23", "25", ""), in("HCT", "", "44", "", ""), in("tPSA", "ng/mL", "1.82", "", ""), in("fPSA", "ng/mL", "0.41", "", "")}},
		{name: "HCT 0.44 with no unit", rows: []schema.OcrIndicator{in("HCT", "", "0.44", "", "")}},
	},
	schema.RangeImplausible: {
		{name: "glucose 70–110 beside mmol/L: bounds null", rows: []schema.OcrIndicator{in("空腹血糖", "mmol/L", "5.6", "70", "110")}, want: []string{"range_implausible indicators[0].refLow"},
			after: func(t *testing.T, d *schema.OcrDraft) {
				if ind := d.Indicators[0]; ind.RefLow != nil || ind.RefHigh != nil {
					t.Errorf("bounds %v %v: want null: they are not the value's", ind.RefLow, ind.RefHigh)
				}
			}},
		{name: "refText in mg/dL beside mmol/L: bounds null", rows: []schema.OcrIndicator{in("GLU", "mmol/L", "5.6", "70", "110", ref("70-110 mg/dL"))}, want: []string{"range_implausible indicators[0].refText"},
			after: func(t *testing.T, d *schema.OcrDraft) {
				if ind := d.Indicators[0]; ind.RefLow != nil || ind.RefHigh != nil || *ind.RefText != "70-110 mg/dL" {
					t.Errorf("bounds %v %v, refText %v: want null, null, kept", ind.RefLow, ind.RefHigh, *ind.RefText)
				}
			}},
		{name: "refText in mmol/L beside mg/dL", rows: []schema.OcrIndicator{in("Glucose", "mg/dL", "98", "3.9", "6.1", ref("3.9–6.1 mmol/L"))}, want: []string{"range_implausible indicators[0].refText"}},
		{name: "creatinine 0.6–1.2 beside μmol/L", rows: []schema.OcrIndicator{in("Cr", "μmol/L", "88", "0.6", "1.2")}, want: []string{"range_implausible indicators[0].refLow"}},
		{name: "haemoglobin 13–17.5 beside g/L", rows: []schema.OcrIndicator{in("血红蛋白", "g/L", "140", "13", "17.5")}, want: []string{"range_implausible indicators[0].refLow"}},
		{name: "bilirubin 0.2–1.2 beside μmol/L", rows: []schema.OcrIndicator{in("总胆红素", "μmol/L", "12.0", "0.2", "1.2")}, want: []string{"range_implausible indicators[0].refLow"}},
		{name: "HDL 40–60 beside mmol/L: beyond the limits", rows: []schema.OcrIndicator{in("高密度脂蛋白胆固醇", "mmol/L", "1.3", "40", "60")}, want: []string{"range_implausible indicators[0].refLow"}},
		{name: "a confirmed draft keeps its bounds", ctx: Context{Confirmed: true}, rows: []schema.OcrIndicator{in("GLU", "mmol/L", "5.6", "70", "110", ref("70-110mg/dl"))}, want: []string{"range_implausible indicators[0].refText"},
			after: func(t *testing.T, d *schema.OcrDraft) {
				if d.Indicators[0].RefLow == nil {
					t.Error("a confirmed draft's bounds were nulled")
				}
			}},
		{name: "a range of another unit is not also a flag mismatch nor tenfold", rows: []schema.OcrIndicator{in("葡萄糖", "mmol/L", "5.6", "70", "110", flag(schema.FlagLow))}, want: []string{"range_implausible indicators[0].refLow"}},
		// Near misses.
		{name: "one lab's ranges", rows: []schema.OcrIndicator{in("TSH", "mIU/L", "2.1", "0.35", "5.5"), in("ALT", "U/L", "20", "0", "40"), in("尿酸", "μmol/L", "300", "150", "420"), in("ALP", "U/L", "200", "0", "500"), in("LDH", "U/L", "300", "313", "618")}},
		{name: "U/L beside IU/L", rows: []schema.OcrIndicator{in("AST", "U/L", "22", "0", "40", ref("0-40 IU/L"))}},
		{name: "refText in the value's own unit, spelt otherwise", rows: []schema.OcrIndicator{in("GLU", "mmol/l", "5.1", "3.9", "6.1", ref("3.9-6.1 mmol/L"))}},
		{name: "no unit printed", rows: []schema.OcrIndicator{in("葡萄糖", "", "95", "70", "110")}},
	},
	schema.UnitUnexpected: {
		{name: "cholesterol in g/L", rows: []schema.OcrIndicator{in("TC", "g/L", "5.2", "", "")}, want: []string{"unit_unexpected indicators[0].unit"}},
		{name: "ALT in mmol/L", rows: []schema.OcrIndicator{in("谷丙转氨酶", "mmol/L", "30", "", "")}, want: []string{"unit_unexpected indicators[0].unit"}},
		{name: "WBC in ×10^12/L (the RBC's unit)", rows: []schema.OcrIndicator{in("白细胞", "×10^12/L", "6.2", "", "")}, want: []string{"unit_unexpected indicators[0].unit"}},
		// Near misses.
		{name: "T in ℃ is a temperature", rows: []schema.OcrIndicator{in("T", "℃", "36.5", "", "")}},
		{name: "P in 次/分 is a pulse", rows: []schema.OcrIndicator{in("P", "次/分", "72", "", "")}},
		{name: "spellings", rows: []schema.OcrIndicator{in("GLU", "mmol/l", "5.1", "", ""), in("Cr", "umol/L", "80", "", ""), in("WBC", "10*9/L", "6", "", ""), in("MCV", "fl", "90", "", "")}},
		{name: "no unit, a dash", rows: []schema.OcrIndicator{in("INR", "-", "1.0", "", "")}},
		{name: "a word value", rows: []schema.OcrIndicator{in("HBsAg", "mmol/L", "阴性", "", "")}},
		{name: "a spelling no analyte has", rows: []schema.OcrIndicator{in("PT", "sec", "12.1", "", ""), in("心率", "次/分钟", "72", "", ""), in("ALT", "units per litre", "30", "", "")}},
	},
	schema.DuplicateRow: {
		{name: "the same item twice with different values", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "5.2", "", "", group("血脂")), in("甘油三酯", "mmol/L", "1.2", "", "", group("血脂")), in("总胆固醇", "mmol/L", "4.8", "", "", group("血脂"))}, want: []string{"duplicate_row indicators[2].valueNum"}},
		{name: "a looping model", rows: []schema.OcrIndicator{in("ALT", "U/L", "25", "", ""), in("ALT", "U/L", "52", "", ""), in("ALT", "U/L", "25", "", "")}, want: []string{"duplicate_row indicators[1].valueNum", "duplicate_row indicators[2].valueNum"}},
		// Near misses.
		{name: "% and absolute of one cell", rows: []schema.OcrIndicator{in("中性粒细胞", "%", "65", "", ""), in("中性粒细胞", "10^9/L", "3.9", "", "")}},
		{name: "an exact repeat (dropped by the reader, not here)", rows: []schema.OcrIndicator{in("ALT", "U/L", "25", "", ""), in("ALT", "U/L", "25.0", "", "")}},
		{name: "other pages, other groups", rows: []schema.OcrIndicator{in("葡萄糖", "mmol/L", "5.1", "", "", page(1)), in("葡萄糖", "mmol/L", "6.3", "", "", page(2)), in("葡萄糖", "mmol/L", "5.5", "", "", group("生化")), in("葡萄糖", "mmol/L", "0", "", "", group("尿常规"))}},
		{name: "a glucose tolerance test", rows: []schema.OcrIndicator{in("葡萄糖", "mmol/L", "5.1", "", "", group("口服葡萄糖耐量试验")), in("葡萄糖", "mmol/L", "9.8", "", "", group("口服葡萄糖耐量试验")), in("葡萄糖", "mmol/L", "7.2", "", "", group("口服葡萄糖耐量试验"))}},
		{name: "words", rows: []schema.OcrIndicator{in("白细胞", "", "阴性", "", "", group("尿常规")), in("白细胞", "", "2", "", "", group("尿常规"))}},
	},
	schema.InconsistentValues: {
		{name: "HDL-C above total cholesterol", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.8", "", ""), in("HDL-C", "mmol/L", "6.1", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum"}},
		{name: "LDL-C above total cholesterol", rows: []schema.OcrIndicator{in("总胆固醇", "mmol/L", "4.50", "", ""), in("低密度脂蛋白胆固醇", "mmol/L", "5.90", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum"}},
		{name: "HDL in mmol/L above TC in mg/dL", rows: []schema.OcrIndicator{in("Cholesterol", "mg/dL", "193", "", ""), in("HDL", "mmol/L", "5.5", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum"}},
		{name: "DBIL above TBIL, and the sum", rows: []schema.OcrIndicator{in("总胆红素", "μmol/L", "12.0", "", ""), in("直接胆红素", "μmol/L", "18.0", "", ""), in("间接胆红素", "μmol/L", "8.0", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum", "inconsistent_values indicators[2].valueNum"}},
		{name: "ALB above TP", rows: []schema.OcrIndicator{in("TP", "g/L", "68", "", ""), in("ALB", "g/L", "72", "", "")}, want: []string{"inconsistent_values indicators[1].valueNum"}},
		{name: "TP not ALB + GLB (27.3 read for 72.3)", rows: []schema.OcrIndicator{in("总蛋白", "g/L", "27.3", "", ""), in("白蛋白", "g/L", "45.1", "", ""), in("球蛋白", "g/L", "27.2", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum", "inconsistent_values indicators[2].valueNum"}},
		{name: "A/G far from ALB/GLB", rows: []schema.OcrIndicator{in("白蛋白", "g/L", "45", "", ""), in("球蛋白", "g/L", "20", "", ""), in("白球比", "", "1.5", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum", "inconsistent_values indicators[2].valueNum"}},
		{name: "a differential far from 100", rows: []schema.OcrIndicator{in("NEUT%", "%", "75.0", "", ""), in("LYMPH%", "%", "30.0", "", ""), in("MONO%", "%", "8.0", "", ""), in("EO%", "%", "3.0", "", ""), in("BASO%", "%", "1.0", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum", "inconsistent_values indicators[2].valueNum", "inconsistent_values indicators[3].valueNum", "inconsistent_values indicators[4].valueNum"}},
		{name: "MCH far from HGB/RBC", rows: []schema.OcrIndicator{in("HGB", "g/L", "150", "", ""), in("RBC", "10^12/L", "5.00", "", ""), in("MCH", "pg", "20.0", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum", "inconsistent_values indicators[2].valueNum"}},
		{name: "CK-MB activity above CK", rows: []schema.OcrIndicator{in("CK", "U/L", "40", "", ""), in("CK-MB", "U/L", "45", "", "")}, want: []string{"inconsistent_values indicators[0].valueNum", "inconsistent_values indicators[1].valueNum"}},
		// Near misses.
		{name: "a clean panel", rows: []schema.OcrIndicator{
			in("TC", "mmol/L", "5.01", "", ""), in("HDL-C", "mmol/L", "1.32", "", ""), in("LDL-C", "mmol/L", "3.12", "", ""),
			in("TBIL", "μmol/L", "15.2", "", ""), in("DBIL", "μmol/L", "4.1", "", ""), in("IBIL", "μmol/L", "11.1", "", ""),
			in("TP", "g/L", "72.3", "", ""), in("ALB", "g/L", "45.1", "", ""), in("GLB", "g/L", "27.2", "", ""), in("A/G", "", "1.66", "", ""),
			in("NEUT%", "%", "58.3", "", ""), in("LYMPH%", "%", "32.1", "", ""), in("MONO%", "%", "6.4", "", ""), in("EO%", "%", "2.6", "", ""), in("BASO%", "%", "0.6", "", ""),
			in("WBC", "10^9/L", "6.52", "", ""), in("NEUT#", "10^9/L", "3.80", "", ""), in("LYMPH#", "10^9/L", "2.09", "", ""), in("MONO#", "10^9/L", "0.42", "", ""), in("EO#", "10^9/L", "0.17", "", ""), in("BASO#", "10^9/L", "0.04", "", ""),
			in("HGB", "g/L", "148", "", ""), in("RBC", "10^12/L", "4.92", "", ""), in("HCT", "%", "44.1", "", ""), in("MCV", "fL", "89.6", "", ""), in("MCH", "pg", "30.1", "", ""), in("MCHC", "g/L", "336", "", ""),
		}},
		{name: "A/G rounded to one place", rows: []schema.OcrIndicator{in("ALB", "g/L", "45.2", "", ""), in("GLB", "g/L", "27.1", "", ""), in("A/G", "", "1.7", "", "")}},
		{name: "CK-MB mass in ng/mL above CK in U/L: not compared", rows: []schema.OcrIndicator{in("CK", "U/L", "40", "", ""), in("CK-MB", "ng/mL", "45", "", "")}},
		{name: "HDL printed twice: which is meant cannot be told", rows: []schema.OcrIndicator{in("TC", "mmol/L", "4.8", "", ""), in("HDL-C", "mmol/L", "6.1", "", ""), in("HDL-C", "mmol/L", "1.1", "", "", page(2))}},
	},
	schema.NameUnknown: {
		{name: "a garbled name with an abbreviation one letter off", rows: []schema.OcrIndicator{in("(白CEP）=26", "mg/L", "26", "0", "10")}, want: []string{"name_unknown indicators[0].itemName"}},
		{name: "a known abbreviation inside a garbled name", rows: []schema.OcrIndicator{in("CRP=26", "mg/L", "26", "", "")}, want: []string{"name_unknown indicators[0].itemName"}},
		{name: "a Chinese name one character off", rows: []schema.OcrIndicator{in("谷丙转氨梅", "U/L", "32", "9", "50")}, want: []string{"name_unknown indicators[0].itemName"}},
		// Near misses.
		{name: "an item the lexicon lacks, near nothing", rows: []schema.OcrIndicator{in("某某指数", "", "12", "", ""), in("Osmolality", "mOsm/kg", "290", "275", "295")}},
		{name: "a subclass", rows: []schema.OcrIndicator{in("IgG4", "g/L", "1.2", "0.03", "2.0"), in("IgG1", "g/L", "6.1", "", "")}},
		{name: "a unit none of the near items has", rows: []schema.OcrIndicator{in("CEP", "s", "26", "", "")}},
		{name: "a word result", rows: []schema.OcrIndicator{in("Apo E", "", "E3/E3", "", "")}},
	},
	schema.RangeConditionSpecific: {
		{name: "a range per phase", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("FSH", "IU/L", "6.2", "", "", ref("卵泡期 3.5-12.5 黄体期 1.7-7.7"))}, want: []string{"range_condition_specific indicators[0].refText"},
			after: wantBounds("", "")},
		{name: "one labelled range: not the patient's at a guess", rows: []schema.OcrIndicator{in("GLU", "mmol/L", "5.1", "", "", ref("空腹 3.9-6.1"))}, want: []string{"range_condition_specific indicators[0].refText"}},
		{name: "per age, the sex given", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("ESR", "mm/h", "12", "", "", ref("男<50岁 0-15，男≥50岁 0-20，女 0-20"))}, want: []string{"range_condition_specific indicators[0].refText"},
			after: wantBounds("", "")},
		{name: "pregnancy", rows: []schema.OcrIndicator{in("HCG", "mIU/mL", "3", "", "", ref("非孕期 <5; 孕早期 5-50"))}, want: []string{"range_condition_specific indicators[0].refText"}},
		{name: "an age group and a sex per age group", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("HGB", "g/L", "120", "", "", ref("成人：男 130-175 女 115-150；儿童：110-160"))}, want: []string{"range_condition_specific indicators[0].refText"}},
		{name: "confirmed with bounds that are none", ctx: Context{Confirmed: true}, rows: []schema.OcrIndicator{in("ALP", "U/L", "80", "100", "200", ref("成人：45-125；儿童：<500"))}, want: []string{"range_condition_specific indicators[0].refLow"}},
		// Near misses.
		{name: "an age group over a range per sex", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("HGB", "g/L", "120", "", "", ref("成人：男 130-175 女 115-150"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("115", "150")},
		{name: "adult male, adult female", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("RBC", "10^12/L", "5.0", "", "", ref("Adult male 4.5-5.9; adult female 4.1-5.1"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("4.5", "5.9")},
		{name: "an age band every range shares", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "70", "", "", ref("男(20-79岁) 57-111；女(20-79岁) 41-81"))}, want: []string{"range_sex_specific indicators[0].refLow"}},
		{name: "the same range at every age", rows: []schema.OcrIndicator{in("K", "mmol/L", "4.0", "3.5", "5.5", ref("<14岁 3.5-5.5；≥14岁 3.5-5.5"))},
			after: wantBounds("3.5", "5.5")},
		{name: "confirmed with one of them", ctx: Context{Confirmed: true}, rows: []schema.OcrIndicator{in("ALP", "U/L", "80", "45", "125", ref("成人：45-125；儿童：<500"))}},
	},
	schema.RangeSexSpecific: {
		{name: "no sex: bounds null, refText kept", rows: []schema.OcrIndicator{in("血红蛋白", "g/L", "140", "130", "175", ref("男：130-175；女：115-150"))}, want: []string{"range_sex_specific indicators[0].refText"},
			after: func(t *testing.T, d *schema.OcrDraft) {
				if ind := d.Indicators[0]; ind.RefLow != nil || ind.RefHigh != nil || ind.RefText == nil {
					t.Errorf("bounds %v %v: want null, refText kept", ind.RefLow, ind.RefHigh)
				}
			}},
		{name: "male: the men's bounds", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("血红蛋白", "g/L", "140", "", "", ref("男：130-175；女：115-150"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("130", "175")},
		{name: "female, marks after the ranges", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("RBC", "10^12/L", "4.1", "4.3", "5.8", ref("4.3-5.8(男) 3.8-5.1(女)"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("3.8", "5.1")},
		{name: "English marks", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("Hemoglobin", "g/dL", "12.8", "", "", ref("M 13.0-17.0; F 12.0-15.5 g/dL"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("12.0", "15.5")},
		{name: "upper limits only", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("GGT", "U/L", "45", "", "", ref("Male: <=60, Female: <=45"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("", "60")},
		{name: "an age band is not a range", rows: []schema.OcrIndicator{in("肌酐", "μmol/L", "70", "57", "111", ref("男(20-79岁) 57-111；女(20-79岁) 41-81"))}, want: []string{"range_sex_specific indicators[0].refText"}},
		{name: "the women's range decides a ↓", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("HGB", "g/L", "128", "130", "175", ref("男：130-175；女：115-150"), flag(schema.FlagLow))}, want: []string{"range_sex_specific indicators[0].refLow", "flag_mismatch indicators[0].valueNum"}},
		{name: "without a sex, a ↓ is not judged by the men's range", rows: []schema.OcrIndicator{in("HGB", "g/L", "128", "130", "175", ref("男：130-175；女：115-150"), flag(schema.FlagLow))}, want: []string{"range_sex_specific indicators[0].refText"}},
		{name: "confirmed with bounds that are neither", ctx: Context{Confirmed: true}, rows: []schema.OcrIndicator{in("HGB", "g/L", "140", "100", "200", ref("男：130-175；女：115-150"))}, want: []string{"range_sex_specific indicators[0].refLow"}},
		// Near misses.
		{name: "confirmed with the men's bounds, or none", ctx: Context{Confirmed: true}, rows: []schema.OcrIndicator{in("HGB", "g/L", "140", "130", "175", ref("男：130-175；女：115-150")), in("RBC", "10^12/L", "4.5", "", "", ref("男：4.3-5.8；女：3.8-5.1"))}},
		{name: "the same for both", rows: []schema.OcrIndicator{in("ALT", "U/L", "20", "0", "40", ref("男/女：0-40")), in("AST", "U/L", "20", "0", "40", ref("男 0-40 女 0-40"))}},
		{name: "one sex only, the patient's", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("血红蛋白", "g/L", "140", "", "", ref("男性 130-175"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("130", "175")},
		{name: "one sex only, the other's", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("血红蛋白", "g/L", "140", "130", "175", ref("男性 130-175"))}, want: []string{"range_sex_specific indicators[0].refText"},
			after: wantBounds("", "")},
		{name: "one sex only, no sex given", rows: []schema.OcrIndicator{in("血红蛋白", "g/L", "140", "", "", ref("男性 130-175"))}, want: []string{"range_sex_specific indicators[0].refText"},
			after: wantBounds("", "")},
		{name: "words for both sexes", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("CK", "U/L", "100", "", "", ref("Males 30-500; Females 15-200"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("15", "200")},
		{name: "the sex in brackets after each range", ctx: Context{Sex: Male}, rows: []schema.OcrIndicator{in("HGB", "g/L", "140", "", "", ref("130-175(M) 115-150(F)"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("130", "175")},
		{name: "full-width separators", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("HGB", "g/L", "140", "", "", ref("男130～175/女115－150"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("115", "150")},
		{name: "age bands for one sex, no sex given", rows: []schema.OcrIndicator{in("ESR", "mm/h", "12", "", "", ref("男<50岁 0-15，男≥50岁 0-20，女 0-20"))}, want: []string{"range_sex_specific indicators[0].refText"}},
		{name: "age bands for one sex, the other sex", ctx: Context{Sex: Female}, rows: []schema.OcrIndicator{in("ESR", "mm/h", "12", "", "", ref("男<50岁 0-15，男≥50岁 0-20，女 0-20"))}, want: []string{"range_sex_specific indicators[0].refLow"},
			after: wantBounds("0", "20")},
		{name: "units and words that hold m or f", rows: []schema.OcrIndicator{in("BMI", "kg/m2", "22", "18.5", "24", ref("18.5-24 kg/m2")), in("MCV", "fL", "90", "82", "100", ref("82-100 fL"))}},
	},
}

func wantBounds(lo, hi string) func(t *testing.T, d *schema.OcrDraft) {
	return func(t *testing.T, d *schema.OcrDraft) {
		ind := d.Indicators[0]
		if got := fmt.Sprint(lit(ind.RefLow), "–", lit(ind.RefHigh)); got != lo+"–"+hi {
			t.Errorf("bounds %s, want %s–%s", got, lo, hi)
		}
	}
}

func lit(d *schema.Decimal) string {
	if d == nil {
		return ""
	}
	return d.String()
}

func TestRules(t *testing.T) {
	for _, r := range Rules {
		if len(cases[r.Code]) == 0 {
			t.Errorf("rule %s has no test cases", r.Code)
		}
	}
	for code, cs := range cases {
		for _, c := range cs {
			t.Run(string(code)+"/"+c.name, func(t *testing.T) {
				d := &schema.OcrDraft{Indicators: slices.Clone(c.rows)}
				ws := Run(lexicon.Default(), d, c.ctx)
				var got []string
				for _, w := range ws {
					got = append(got, string(w.Code)+" "+*w.Path)
					if w.Message == "" || strings.Contains(w.Message, "?") || strings.Contains(w.Message, "{") {
						t.Errorf("%s: message %q is incomplete", w.Code, w.Message)
					}
					if w.Params["itemName"] == "" {
						t.Errorf("%s: no itemName in params", w.Code)
					}
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("warnings (-want +got):\n%s\n%v", diff, messages(ws))
				}
				if c.after != nil {
					c.after(t, d)
				}
			})
		}
	}
}

func messages(ws []schema.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Message+fmt.Sprint(w.Params))
	}
	return out
}

// TestNeverChanges: only the two range rules change a draft, only its bounds, and a confirmed
// draft not at all.
func TestNeverChanges(t *testing.T) {
	for code, cs := range cases {
		for _, c := range cs {
			d := &schema.OcrDraft{Indicators: slices.Clone(c.rows)}
			Run(lexicon.Default(), d, c.ctx)
			for i := range d.Indicators {
				got, want := d.Indicators[i], c.rows[i]
				if c.ctx.Confirmed && !cmp.Equal(got, want) {
					t.Errorf("%s/%s: a confirmed draft changed: %s", code, c.name, cmp.Diff(want, got))
				}
				got.RefLow, got.RefHigh, want.RefLow, want.RefHigh = nil, nil, nil, nil
				if !cmp.Equal(got, want) {
					t.Errorf("%s/%s: indicator %d changed beyond its bounds: %s", code, c.name, i, cmp.Diff(want, got))
				}
			}
		}
	}
}

func TestMessagesComplete(t *testing.T) {
	seen := map[schema.WarningCode]bool{}
	for _, tx := range msg.Rows {
		if !slices.ContainsFunc(Rules, func(r Rule) bool { return r.Code == tx.Code }) || tx.Reason == "more" {
			continue
		}
		seen[tx.Code] = true
		if tx.En == "" || !strings.HasPrefix(tx.En, "{itemName}") && tx.Code != schema.InconsistentValues && tx.Code != schema.DuplicateRow {
			t.Errorf("%s/%s: a message starts with the item it is about", tx.Code, tx.Reason)
		}
	}
	for _, r := range Rules {
		if !seen[r.Code] {
			t.Errorf("%s has no message", r.Code)
		}
		if !slices.ContainsFunc(schema.WarningCodes, func(w struct {
			Code    schema.WarningCode
			Meaning string
		}) bool {
			return w.Code == r.Code
		}) {
			t.Errorf("%s is not in schema.WarningCodes", r.Code)
		}
	}
}

func TestParseSex(t *testing.T) {
	for in, want := range map[string]Sex{"": "", "male": Male, " Female ": Female, "MALE": Male} {
		if got, ok := ParseSex(in); !ok || got != want {
			t.Errorf("ParseSex(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"m", "男", "other", "unknown"} {
		if _, ok := ParseSex(in); ok {
			t.Errorf("ParseSex(%q) accepted", in)
		}
	}
}

// TestReleaseClears: a state back in the pool holds nothing of the draft it checked (release
// clears only what a Run used, for speed; a field it forgets would keep a patient's data).
func TestReleaseClears(t *testing.T) {
	d := &schema.OcrDraft{Indicators: []schema.OcrIndicator{in("HGB", "g/L", "128", "", "", ref("男：130-175；女：115-150")), in("GLU", "mmol/L", "5.1", "", "", ref("3.9-6.1"))}}
	Run(lexicon.Default(), d, Context{Sex: Female})
	s := states.Get().(*state)
	defer states.Put(s)
	if len(s.units) != 0 {
		t.Errorf("a released state keeps %d units", len(s.units))
	}
	for i, r := range s.buf[:cap(s.buf)] {
		if !reflect.ValueOf(r).IsZero() {
			t.Errorf("a released state keeps row %d", i)
		}
	}
	kept := *s
	kept.units = nil // the one table kept, emptied, for the next run
	kept.buf = nil   // and the rows' buffer, cleared
	if !reflect.ValueOf(&kept).Elem().IsZero() {
		t.Error("a released state is not zero")
	}
}

// TestNumHalf: the value and its precision read in one pass are strconv's value and half's
// precision, for literals of the fast path and of strconv's.
func TestNumHalf(t *testing.T) {
	for _, lit := range []string{"0", "5", "5.2", "5.20", "-0.05", "142", "0.000001", "123456789012345", "1234567890123456.5", "12345.6789012345678"} {
		d, err := schema.ParseDecimal(lit)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strconv.ParseFloat(lit, 64)
		v, ok, h := numHalf(&d)
		if !ok || v != want || h != half(&d) {
			t.Errorf("numHalf(%s) = %v, %v, %v; want %v, true, %v", lit, v, ok, h, want, half(&d))
		}
	}
}

func TestTrimUnit(t *testing.T) {
	for _, u := range []string{"", " ", "g/L", " g/L", "g/L ", "\tmmol/L\n", "μmol/L", "μmol/L ", "\u3000g/L\u3000", "g/L\u00a0", "\x7f", "%",
		"mL/min/1.73m²", "\u2003μ\u2003", "\x85g\x85", "\u0085g", "g\u0085", "\xffg", "g\xff", "\x01g"} {
		if got, want := trimUnit(u), strings.TrimSpace(u); got != want {
			t.Errorf("trimUnit(%q) = %q, want %q", u, got, want)
		}
	}
}

// TestDuplicateRowFoldedUnit: two rows whose units are one to strings.EqualFold but of different
// lengths (k and the Kelvin sign, 1 and 3 bytes) are one key, whatever the length of their name.
func TestDuplicateRowFoldedUnit(t *testing.T) {
	for n := 150; n <= 180; n++ {
		name := strings.Repeat("x", n)
		d := &schema.OcrDraft{Indicators: []schema.OcrIndicator{in(name, "k/uL", "5", "", ""), in(name, "\u212a/uL", "6", "", "")}}
		var got []string
		for _, w := range Run(lexicon.Default(), d, Context{}) {
			if w.Code == schema.DuplicateRow {
				got = append(got, *w.Path)
			}
		}
		if len(got) != 1 || got[0] != "indicators[1].valueNum" {
			t.Errorf("name of %d bytes: duplicate_row at %v, want indicators[1].valueNum", n, got)
		}
	}
}
