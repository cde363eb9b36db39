package draft

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
)

// BenchmarkCorpus reads every captured reply: ns/op, MB/s and allocs/op per reply shape.
func BenchmarkCorpus(b *testing.B) {
	bd := New(lexicon.Default())
	for _, file := range replies(b) {
		reply, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		cut := strings.HasSuffix(file, ".length.txt")
		b.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				bd.FromReply(string(reply), cut)
			}
		})
	}
}

// typical is a clean 20-indicator reply of about 4 KB, the common case.
func typical() string {
	var s strings.Builder
	s.WriteString(`{"title":"血常规+生化","hospital":"复旦大学附属中山医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[`)
	for i := range 20 {
		if i > 0 {
			s.WriteString(",")
		}
		fmt.Fprintf(&s, `{"itemName":"检验项目%02d","itemGroup":"血常规","valueNum":%d.%02d,"valueText":null,"unit":"×10^9/L","refLow":3.50,"refHigh":9.50}`, i, 4+i%5, i)
	}
	s.WriteString("]}")
	return s.String()
}

// typicalNamed is typical with the names, groups and units of a real report, each one the
// lexicon knows (analyte filled), and a mark and a printed range on some rows.
func typicalNamed() string {
	rows := [][3]string{
		{"血常规", "白细胞计数(WBC)", "×10^9/L"}, {"血常规", "红细胞计数(RBC)", "×10^12/L"}, {"血常规", "血红蛋白(HGB)", "g/L"},
		{"血常规", "红细胞压积(HCT)", "%"}, {"血常规", "平均红细胞体积(MCV)", "fL"}, {"血常规", "血小板计数(PLT)", "10^9/L"},
		{"血常规", "中性粒细胞百分比(NEUT%)", "%"}, {"血常规", "淋巴细胞百分比(LYMPH%)", "%"}, {"肝功能", "丙氨酸氨基转移酶(ALT)", "U/L"},
		{"肝功能", "天门冬氨酸氨基转移酶(AST)", "U/L"}, {"肝功能", "总胆红素(TBIL)", "μmol/L"}, {"肝功能", "白蛋白(ALB)", "g/L"},
		{"肾功能", "肌酐(Cr)", "umol/L"}, {"肾功能", "尿酸(UA)", "μmol/L"}, {"血脂", "总胆固醇(TC)", "mmol/L"},
		{"血脂", "甘油三酯(TG)", "mmol/l"}, {"血脂", "高密度脂蛋白胆固醇(HDL-C)", "mmol/L"}, {"血脂", "低密度脂蛋白胆固醇(LDL-C)", "mmol/L"},
		{"血糖", "空腹血糖(GLU)", "mmol/L"}, {"尿常规", "尿蛋白(PRO)", ""},
	}
	var s strings.Builder
	s.WriteString(`{"title":"血常规+生化","hospital":"复旦大学附属中山医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[`)
	for i, r := range rows {
		if i > 0 {
			s.WriteString(",")
		}
		flag, ref := "null", `null`
		if i%4 == 0 {
			flag, ref = `"high"`, `"3.50-9.50"`
		}
		fmt.Fprintf(&s, `{"itemName":%q,"itemGroup":%q,"valueNum":%d.%02d,"valueText":null,"unit":%q,"refLow":3.50,"refHigh":9.50,"printedFlag":%s,"refText":%s}`, r[1], r[0], 4+i%5, i, r[2], flag, ref)
	}
	s.WriteString("]}")
	return s.String()
}

// BenchmarkTypical is the target of the issue: a 4 KB, 20-indicator reply in under 50 µs and
// 300 allocations, on the strict path.
func BenchmarkTypical(b *testing.B) {
	bd := New(lexicon.Default())
	for _, tc := range []struct{ name, reply string }{
		{"strict", typical()},
		{"named", typicalNamed()},
		{"fenced", "以下是识别结果：\n```json\n" + typical() + "\n```\n请核对。"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.reply)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bd.FromReply(tc.reply, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hostile returns 64 KB replies of shapes that make a repairer work: the bound on the repairer's
// quadratic cost must hold for each.
func hostile() map[string]string {
	const size = 64 << 10
	item := `{item_name: '总胆固醇', 'value': '5.86↑', unit: "mmol/L", ref: '3.1-5.2',},` // unquoted, single quotes, trailing commas
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	return map[string]string{
		"repair-items":        "[" + fill(item) + "]",
		"repair-items-cut":    "[" + fill(item)[:size-17],
		"one-huge-string":     `{"title": "` + fill("血") + `, "indicators": [}`,
		"deep-nesting":        fill("[{"),
		"many-spans":          fill("{x} "),
		"braces-in-prose":     fill("注意：{总胆固醇} 偏高。"),
		"unclosed-strings":    fill(`{"a": "`),
		"python-literals":     "[" + fill(`{'itemName': 'x', 'valueNum': None, 'ok': True},`) + "]",
		"fullwidth-structure": "｛“indicators”：［" + fill("｛“itemName”：“总胆固醇”，“valueNum”：5.86｝，") + "］｝",
		// The repairer's cubic shapes (a quote not followed by a delimiter), whole and as items.
		"quote-heavy":       "{" + fill("'a") + "}",
		"quote-heavy-lines": fill("\n'a") + "}",
		"curly-quote-lines": "{" + fill("a\n“") + "}",
		"quote-heavy-items": "[" + fill("{"+strings.Repeat("'a", 31)+"'},") + "]",
		"worst-pieces":      "[" + fill("["+strings.Repeat("\n'a", 30)+"},") + "]", // the costliest pieces the repairer is given
		"unquoted-items":    "[" + fill(`{'itemName': 'x', 'valueNum': 5.86↑},`) + "]",
		"unbalanced-quotes": `{"k": "` + fill(`a" `) + `"}`,
		"escaped-quotes":    `{"k": "` + fill(`\"a`) + "}",
		"backslash-quotes":  "[" + fill(`\1'`) + "}",
		"backslash-items":   "[" + fill(`['\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'\1'],`) + "]",
		"nested-keys":       fill("{'a':"),
		"nested-items":      "[" + fill("[[[[[[[[[[[[[[{'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'a'}]]]]]]]]]]]]]],") + "]",
		// Many values: rows one per fence or line are joined, junk is counted, not built one by one.
		"rows-per-fence":  rows("```json\n{\"itemName\":\"项目%d\",\"valueNum\":1}\n```\n", size),
		"rows-per-line":   rows(`{"itemName":"项目%d","valueNum":1}`+"\n", size),
		"empty-objects":   fill("{} "),
		"junk-rows":       fill(`{"a":1} `),
		"junk-list":       "[" + fill("1,") + "1]",
		"string-literals": fill(`"{}` + "\n"),
	}
}

// rows writes numbered rows up to size bytes.
func rows(format string, size int) string {
	var s strings.Builder
	for i := 0; s.Len() < size-len(format)-8; i++ {
		fmt.Fprintf(&s, format, i)
	}
	return s.String()
}

// BenchmarkHostile: no 64 KB reply may take more than 20 ms, whatever its shape.
func BenchmarkHostile(b *testing.B) {
	bd := New(lexicon.Default())
	for name, reply := range hostile() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				bd.FromReply(reply, false)
			}
		})
	}
}
