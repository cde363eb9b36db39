package check

import (
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/schema"
)

// readRow is a row as the reader gives it; "" leaves a field out, a value that does not read as a
// number is valueText.
func readRow(name, analyte, value, unit, ref string) schema.OcrIndicator {
	ind := schema.OcrIndicator{ItemName: name}
	if analyte != "" {
		ind.Analyte = &analyte
	}
	if value != "" {
		if d, err := schema.ParseDecimal(value); err == nil {
			ind.ValueNum = &d
		} else {
			ind.ValueText = &value
		}
	}
	if unit != "" {
		ind.Unit = &unit
	}
	if ref != "" {
		ind.RefText = &ref
	}
	return ind
}

// bounds is ind with the bounds a reader split from its range.
func bounds(ind schema.OcrIndicator, lo, hi string) schema.OcrIndicator {
	l, h := schema.MustDecimal(lo), schema.MustDecimal(hi)
	ind.RefLow, ind.RefHigh = &l, &h
	return ind
}

// TestAgree: one case per way two reads meet; each warning as code@path first/second.
func TestAgree(t *testing.T) {
	tc := readRow("总胆固醇", "total_cholesterol", "5.86", "mmol/L", "3.1-5.2")
	tg := readRow("甘油三酯", "triglycerides", "1.42", "mmol/L", "0.56-1.70")
	for _, tt := range []struct {
		name          string
		first, second []schema.OcrIndicator
		want          []string
	}{
		{"the same", []schema.OcrIndicator{tc, tg}, []schema.OcrIndicator{tc, tg}, nil},
		{"5.36 for 5.86", []schema.OcrIndicator{tc}, []schema.OcrIndicator{readRow("总胆固醇", "total_cholesterol", "5.36", "mmol/L", "3.1-5.2")},
			[]string{"reads_disagree@indicators[0].valueNum 5.86/5.36"}},
		{"5.0 and 5.00 are one number", []schema.OcrIndicator{readRow("血糖", "glucose", "5.0", "mmol/L", "")}, []schema.OcrIndicator{readRow("血糖", "glucose", "5.00", "mmol/L", "")}, nil},
		{"case, width, spaces and dashes are no difference",
			[]schema.OcrIndicator{readRow("尿酸", "uric_acid", "300", "μmol/L", "150 - 420")},
			[]schema.OcrIndicator{readRow("尿酸", "uric_acid", "300", "umol/l", "150～420")}, nil},
		{"one unit written three ways", []schema.OcrIndicator{readRow("白细胞计数", "wbc", "6.5", "10^9/L", ""), readRow("红细胞计数", "rbc", "4.80", "10^12/L", ""), readRow("血小板计数", "plt", "230", "×10⁹/L", "")},
			[]schema.OcrIndicator{readRow("白细胞计数", "wbc", "6.5", "×10^9/L", ""), readRow("红细胞计数", "rbc", "4.80", "10*12/L", ""), readRow("血小板计数", "plt", "230", "10E9/L", "")}, nil},
		{"a power that differs is two units", []schema.OcrIndicator{readRow("白细胞计数", "wbc", "6.5", "10^9/L", "")}, []schema.OcrIndicator{readRow("白细胞计数", "wbc", "6.5", "10^12/L", "")},
			[]string{"reads_disagree@indicators[0].unit 10^9/L/10^12/L"}},
		{"unit and range", []schema.OcrIndicator{tc}, []schema.OcrIndicator{readRow("总胆固醇", "total_cholesterol", "5.86", "mg/dL", "3.1-5.7")},
			[]string{"reads_disagree@indicators[0].unit mmol/L/mg/dL", "reads_disagree@indicators[0].refText 3.1-5.2/3.1-5.7"}},
		{"a unit one read lost", []schema.OcrIndicator{tc}, []schema.OcrIndicator{readRow("总胆固醇", "total_cholesterol", "5.86", "", "3.1-5.2")},
			[]string{"reads_disagree@indicators[0].unit mmol/L/null"}},
		{"a number and a text", []schema.OcrIndicator{readRow("尿蛋白", "urine_protein", "阴性", "", "")}, []schema.OcrIndicator{readRow("尿蛋白", "urine_protein", "1", "", "")},
			[]string{"reads_disagree@indicators[0].valueText 阴性/1"}},
		{"texts", []schema.OcrIndicator{readRow("尿蛋白", "urine_protein", "阴性", "", "")}, []schema.OcrIndicator{readRow("尿蛋白", "urine_protein", "阳性", "", "")},
			[]string{"reads_disagree@indicators[0].valueText 阴性/阳性"}},
		{"in another order, by analyte", []schema.OcrIndicator{tc, tg}, []schema.OcrIndicator{tg, tc}, nil},
		{"by name when the lexicon knows neither", []schema.OcrIndicator{readRow("某项 A", "", "1", "", ""), readRow("某项B", "", "2", "", "")},
			[]schema.OcrIndicator{readRow("某项b", "", "2", "", ""), readRow("某项a", "", "1", "", "")}, nil},
		{"a name misread meets its row by position", []schema.OcrIndicator{tc, readRow("高密度脂蛋白", "hdl_cholesterol", "1.2", "mmol/L", "")},
			[]schema.OcrIndicator{tc, readRow("高密度脂蛋自", "", "1.3", "mmol/L", "")},
			[]string{"reads_disagree@indicators[1].valueNum 1.2/1.3"}},
		{"two known items at one place are two rows", []schema.OcrIndicator{tc, tg}, []schema.OcrIndicator{tc, readRow("尿酸", "uric_acid", "300", "μmol/L", "")},
			[]string{"read_once@indicators[1] first:甘油三酯", "read_once@null second:尿酸"}},
		{"one analyte in two units is two rows", []schema.OcrIndicator{tc, readRow("总胆固醇", "total_cholesterol", "226", "mg/dL", "")},
			[]schema.OcrIndicator{readRow("总胆固醇", "total_cholesterol", "226", "mg/dL", ""), tc}, nil},
		{"bounds without the range's text agree with the range they split from",
			[]schema.OcrIndicator{bounds(readRow("总胆固醇", "total_cholesterol", "5.86", "mmol/L", ""), "3.1", "5.20")},
			[]schema.OcrIndicator{bounds(readRow("总胆固醇", "total_cholesterol", "5.86", "mmol/L", "3.1-5.2"), "3.1", "5.2")}, nil},
		{"bounds that differ", []schema.OcrIndicator{bounds(readRow("总胆固醇", "total_cholesterol", "5.86", "mmol/L", ""), "3.1", "5.7")},
			[]schema.OcrIndicator{bounds(readRow("总胆固醇", "total_cholesterol", "5.86", "mmol/L", "3.1-5.2"), "3.1", "5.2")},
			[]string{"reads_disagree@indicators[0].refText null/3.1-5.2"}},
		{"nothing read again", []schema.OcrIndicator{tc}, nil, []string{"read_once@indicators[0] first:总胆固醇"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, w := range Agree(tt.first, tt.second, 1) {
				p := "null"
				if w.Path != nil {
					p = *w.Path
				}
				s := string(w.Code) + "@" + p
				switch w.Code {
				case schema.ReadsDisagree:
					s += " " + w.Params["first"] + "/" + w.Params["second"]
				case schema.ReadOnce:
					s += " " + w.Params["read"] + ":" + w.Params["itemName"]
				}
				if w.Page == nil || *w.Page != 1 {
					t.Errorf("%s: page %v", s, w.Page)
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestAgreeLinear: matching thousands of rows that share a name costs no more than a map
// look-up each (a looping reply), not a comparison of every pair.
func TestAgreeLinear(t *testing.T) {
	var a, b []schema.OcrIndicator
	for range 5000 {
		a = append(a, readRow("钾", "", "4.1", "mmol/L", ""))
		b = append(b, readRow("钾", "", "4.1", "mmol/L", ""))
	}
	if ws := Agree(a, b, 1); len(ws) != 0 {
		t.Errorf("%d warnings for two equal reads", len(ws))
	}
}
