package lexicon

import "testing"

// BenchmarkLoad parses the embedded table, as Default does once at start.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// typical20 is a 20-indicator reply as models copy it: brackets, groups, units in their forms.
var typical20 = []struct{ group, name, unit string }{
	{"血常规", "白细胞计数(WBC)", "×10^9/L"},
	{"血常规", "红细胞计数(RBC)", "×10^12/L"},
	{"血常规", "血红蛋白(HGB)", "g/L"},
	{"血常规", "红细胞压积(HCT)", "%"},
	{"血常规", "平均红细胞体积(MCV)", "fL"},
	{"血常规", "血小板计数(PLT)", "10^9/L"},
	{"血常规", "中性粒细胞百分比(NEUT%)", "%"},
	{"血常规", "淋巴细胞百分比(LYMPH%)", "%"},
	{"肝功能", "丙氨酸氨基转移酶(ALT)", "U/L"},
	{"肝功能", "天门冬氨酸氨基转移酶(AST)", "U/L"},
	{"肝功能", "总胆红素(TBIL)", "μmol/L"},
	{"肝功能", "白蛋白(ALB)", "g/L"},
	{"肾功能", "肌酐(Cr)", "umol/L"},
	{"肾功能", "尿酸(UA)", "μmol/L"},
	{"血脂", "总胆固醇(TC)", "mmol/L"},
	{"血脂", "甘油三酯(TG)", "mmol/l"},
	{"血脂", "高密度脂蛋白胆固醇(HDL-C)", "mmol/L"},
	{"血脂", "低密度脂蛋白胆固醇(LDL-C)", "mmol/L"},
	{"血糖", "空腹血糖(GLU)", "mmol/L"},
	{"尿常规", "尿蛋白(PRO)", ""},
}

// BenchmarkLookup20 is what the checks spend on the lexicon for a typical draft: for each row,
// the analyte, its unit, its limits and its range — answers the memo remembers, as in a server
// that has seen these names before. BenchmarkLookup20Cold computes every answer.
func BenchmarkLookup20(b *testing.B)     { benchRows(b, Default(), typical20) }
func BenchmarkLookup20Cold(b *testing.B) { benchRows(b, noMemo(b), typical20) }

func noMemo(b *testing.B) *Lexicon {
	l, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func benchRows(b *testing.B, l *Lexicon, rows []struct{ group, name, unit string }) {
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rows {
			_, u, ok := l.Find(r.group, r.name, r.unit)
			if !ok {
				b.Fatalf("%s not found", r.name)
			}
			if u != nil {
				u.Limits()
				u.Ref()
			}
		}
	}
}

// awkward20 misses the fast path: Traditional, full-width, qualifiers, spaces, English.
var awkward20 = []struct{ group, name, unit string }{
	{"血常規", "白血球計數", "×10⁹/L"},
	{"", "紅血球 RBC", "10*12/L"},
	{"", "血色素（ＨＧＢ）", "ｇ／Ｌ"},
	{"", "血小板計數 (PLT)", "x10^9/l"},
	{"", "Neutrophils %", "％"},
	{"肝功能", "★丙氨酸氨基转移酶 (ALT)", "u/l"},
	{"", "AST 谷草转氨酶", "IU/L"},
	{"", "Total Bilirubin 总胆红素", "umol/l"},
	{"", "血清白蛋白测定", "g/l"},
	{"", "γ-穀氨醯轉移酶", "U/L"},
	{"", "血清肌酐(酶法)", "µmol/L"},
	{"", "尿酸 UA", "umol/L"},
	{"", "總膽固醇", "mmol/l"},
	{"", "三酸甘油酯 TG", "mg/dl"},
	{"", "高密度脂蛋白膽固醇", "mmol/L"},
	{"", "低密度脂蛋白-胆固醇", "mmol/L"},
	{"", "1.空腹血糖", "mmol/L"},
	{"尿液分析", "红细胞(镜检)", "/HPF"},
	{"", "潜血（尿）", ""},
	{"", "HBsAg定量", "IU/ml"},
}

// BenchmarkLookup20Awkward is BenchmarkLookup20 for names that miss the fast path.
func BenchmarkLookup20Awkward(b *testing.B)     { benchRows(b, Default(), awkward20) }
func BenchmarkLookup20AwkwardCold(b *testing.B) { benchRows(b, noMemo(b), awkward20) }
