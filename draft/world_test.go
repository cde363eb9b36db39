package draft

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Rules for replies from the wider world (issue 12): Traditional Chinese and English keys, keys
// that carry a label's punctuation or a unit, dates that cannot be misread, and placeholders.
// The cases run through the same checks as draftTests, indicatorTests and replyTests.

// worldDraftTests are draft-level rules; in is the decoded reply.
var worldDraftTests = []struct {
	name string
	in   string
	want string
	warn []string
}{
	// Traditional Chinese keys, at every level; names and text stay as printed.
	{name: "Traditional keys, a Hong Kong report", in: `{"標題":"血脂檢驗報告","醫院":"瑪麗醫院","檢驗日期":"2026-03-05","檢驗結果":[{"項目名稱":"總膽固醇","結果":"5.86","單位":"mmol/L","參考範圍":"<5.2"}]}`,
		want: `{"title":"血脂檢驗報告","hospital":"瑪麗醫院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"總膽固醇","valueNum":5.86,"unit":"mmol/L","refHigh":5.2}]}`},
	{name: "Traditional keys, a Taiwan report with groups", in: `{"報告名稱":"生化檢查","醫療機構":"臺大醫院","報告日期":"2026/03/05","項目":[{"類別":"肝功能","檢驗項目":"GPT(ALT)","檢驗結果":"23","單位":"U/L","參考值":"0-40"},{"類別":"尿液","項目":"尿蛋白","結果":"陰性","參考區間":"陰性"}]}`,
		want: `{"title":"生化檢查","hospital":"臺大醫院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"GPT(ALT)","itemGroup":"肝功能","valueNum":23,"unit":"U/L","refLow":0,"refHigh":40},{"itemName":"尿蛋白","itemGroup":"尿液","valueText":"陰性"}]}`},
	{name: "Traditional patient key is never read", in: `{"患者資訊":{"醫院":"假的"},"醫院":"長庚紀念醫院","檢驗結果":[{"項目":"WBC","結果":6.1}]}`,
		want: `{"hospital":"長庚紀念醫院","indicators":[{"itemName":"WBC","valueNum":6.1}]}`},
	{name: "Traditional table header row", in: `{"標題":"血常規","檢驗結果":[["項目","結果","單位","參考範圍"],["白血球","6.5","10^9/L","3.5-9.5"]]}`,
		want: `{"title":"血常規","indicators":[{"itemName":"白血球","valueNum":6.5,"unit":"10^9/L","refLow":3.5,"refHigh":9.5}]}`},

	// "report" and "lab" as text are the title and the hospital; as objects they wrap fields.
	{name: "report and lab as text", in: `{"report":"Lipid Panel","lab":"Quest Diagnostics","results":[{"test":"LDL","value":"131","unit":"mg/dL"}]}`,
		want: `{"title":"Lipid Panel","hospital":"Quest Diagnostics","indicators":[{"itemName":"LDL","valueNum":131,"unit":"mg/dL"}]}`},
	{name: "report as text in Chinese, title key wins", in: `{"报告":"血常规","标题":"血常规检验报告","检验科":"协和医院检验科","结果":[{"项目":"WBC","结果":6.1}]}`,
		want: `{"title":"血常规检验报告","hospital":"协和医院检验科","indicators":[{"itemName":"WBC","valueNum":6.1}]}`},
	{name: "report and lab as objects wrap", in: `{"report":{"title":"CBC","hospital":"St Mary's"},"lab":{"name":"Core Lab"},"results":[{"test":"HGB","value":13.2}]}`,
		want: `{"title":"CBC","hospital":"St Mary's","indicators":[{"itemName":"HGB","valueNum":13.2}]}`},

	// English report keys.
	{name: "English lab keys", in: `{"reportTitle":"Comprehensive Metabolic Panel","laboratory":"Quest Diagnostics","collectionDate":"March 5, 2026","analytes":[{"analyte":"Glucose","result_value":"98","units":"mg/dL","reference_interval":"70-99"},{"test_name":"Sodium","value":141,"unit_of_measure":"mmol/L","normal_range":"136-145"}]}`,
		want: `{"title":"Comprehensive Metabolic Panel","hospital":"Quest Diagnostics","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"Glucose","valueNum":98,"unit":"mg/dL","refLow":70,"refHigh":99},{"itemName":"Sodium","valueNum":141,"unit":"mmol/L","refLow":136,"refHigh":145}]}`},
	{name: "English panels and sections", in: `{"facility":"St Mary's Hospital","sections":[{"panel":"CBC","tests":[{"parameter":"Hemoglobin","result":"13.2","units":"g/dL","ref_range":"12.0-15.5"}]},{"section":"Urinalysis","observations":[{"observation":"Protein","result":"Negative"}]}]}`,
		want: `{"hospital":"St Mary's Hospital","indicators":[{"itemName":"Hemoglobin","itemGroup":"CBC","valueNum":13.2,"unit":"g/dL","refLow":12.0,"refHigh":15.5},{"itemName":"Protein","itemGroup":"Urinalysis","valueText":"Negative"}]}`},
	{name: "English code and description", in: `{"labName":"Quest","specimenCollected":"2026-03-05","tests":[{"testCode":"GLU","testDescription":"Glucose","result":"98","units":"mg/dL","referenceRange":"65-99"}]}`,
		want: `{"hospital":"Quest","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"Glucose","valueNum":98,"unit":"mg/dL","refLow":65,"refHigh":99}]}`},
	{name: "English specimen, component and bounds", in: `{"results":[{"specimen":"Serum","component":"Creatinine","measuredValue":0.9,"uom":"mg/dL","lowerLimit":0.6,"upperLimit":1.2},{"specimenType":"Urine","measurement":"pH","reading":"6.0"}]}`,
		want: `{"indicators":[{"itemName":"Creatinine","itemGroup":"Serum","valueNum":0.9,"unit":"mg/dL","refLow":0.6,"refHigh":1.2},{"itemName":"pH","itemGroup":"Urine","valueNum":6.0}]}`},

	{name: "a panel at the top is the title", in: `{"panel":"Lipid Panel","collected":"2026-03-05","results":[{"test":"LDL","result":"131 mg/dL"}]}`,
		want: `{"title":"Lipid Panel","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"LDL","valueNum":131,"unit":"mg/dL"}]}`},
	{name: "Traditional range label", in: `{"indicators":[{"項目":"鈉","結果":"141","單位":"mmol/L","參考值":"參考值：137-147"}]}`,
		want: `{"indicators":[{"itemName":"鈉","valueNum":141,"unit":"mmol/L","refLow":137,"refHigh":147}]}`},

	// Keys with a label's punctuation, padding or brackets.
	{name: "label colons and padding", in: `{"标题：":"血脂","医院: ":"协和医院","indicators":[{"项目名称：":"TC","结果: ":"5.6"," unit ":"mmol/L","参考范围:":"<5.2"}]}`,
		want: `{"title":"血脂","hospital":"协和医院","indicators":[{"itemName":"TC","valueNum":5.6,"unit":"mmol/L","refHigh":5.2}]}`},
	{name: "keys in brackets", in: `{"【标题】":"肝功能","indicators":[{"【项目】":"ALT","【结果】":"41","[单位]":"U/L","「参考值」":"9-50"}]}`,
		want: `{"title":"肝功能","indicators":[{"itemName":"ALT","valueNum":41,"unit":"U/L","refLow":9,"refHigh":50}]}`},

	// Dates that cannot be misread.
	{name: "Chinese numerals with 〇", in: `{"checkupDate":"二〇二六年三月五日"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese numerals with 零", in: `{"checkupDate":"二零二六年三月五日"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese numerals with tens", in: `{"checkupDate":"二〇二五年十二月三十一日"}`, want: `{"checkupDate":"2025-12-31","reportYear":2025}`},
	{name: "Chinese numerals for month and day only", in: `{"checkupDate":"2026年三月十五日"}`, want: `{"checkupDate":"2026-03-15","reportYear":2026}`},
	{name: "Chinese numerals, 二十 and a time", in: `{"checkupDate":"二〇二六年二月二十日 上午"}`, want: `{"checkupDate":"2026-02-20","reportYear":2026}`},
	{name: "weekday after the date", in: `{"checkupDate":"2026年3月5日 星期四"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "English weekday after a numeric date", in: `{"checkupDate":"2026-03-05 (Thu) 08:30"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Traditional 號", in: `{"checkupDate":"2026年3月5號"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Minguo year", in: `{"checkupDate":"民國115年3月5日"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese numerals without a day keep the year", in: `{"title":"x","checkupDate":"二〇二六年三月"}`, want: `{"title":"x","reportYear":2026}`, warn: []string{"invalid_date"}},
	{name: "a month in words without its day keeps the year", in: `{"title":"x","checkupDate":"March 2026"}`, want: `{"title":"x","reportYear":2026}`, warn: []string{"invalid_date"}},
	{name: "day, month word, year", in: `{"checkupDate":"05-Mar-2026"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "upper-case month word", in: `{"checkupDate":"05-MAR-2026"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "day month year in words", in: `{"checkupDate":"5 March 2026"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "month day, year", in: `{"checkupDate":"March 5, 2026"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "abbreviated with a dot", in: `{"checkupDate":"Mar. 5 2026"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Sept and an ordinal", in: `{"checkupDate":"Sept 21st, 2025"}`, want: `{"checkupDate":"2025-09-21","reportYear":2025}`},
	{name: "weekday and time", in: `{"checkupDate":"Thu, 5 Mar 2026 08:30 AM"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "year first with a month word", in: `{"checkupDate":"2026-Mar-05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "month word, impossible day", in: `{"title":"x","checkupDate":"30 Feb 2026"}`, want: `{"title":"x"}`, warn: []string{"invalid_date"}},

	// Dates that can be misread stay null.
	{name: "day-first slashes", in: `{"title":"x","checkupDate":"05/03/2026"}`, want: `{"title":"x"}`, warn: []string{"invalid_date"}},
	{name: "two-digit year first", in: `{"title":"x","checkupDate":"26-03-05"}`, want: `{"title":"x"}`, warn: []string{"invalid_date"}},
	{name: "month word, two-digit year", in: `{"title":"x","checkupDate":"05-Mar-26"}`, want: `{"title":"x"}`, warn: []string{"invalid_date"}},

	// Placeholders are never data.
	{name: "placeholders in the draft's fields", in: `{"title":"<报告标题>","hospital":"[医院名称]","checkupDate":"YYYY-MM-DD","indicators":[{"itemName":"WBC","valueNum":6.5,"unit":"<单位>"}]}`,
		want: `{"indicators":[{"itemName":"WBC","valueNum":6.5}]}`, warn: []string{"invalid_value@title", "invalid_value@hospital", "invalid_date@checkupDate", "invalid_value@indicators[0].unit"}},
	{name: "XX hospital and a 请填写 title", in: `{"title":"请填写报告名称","hospital":"XX市人民医院","indicators":[{"itemName":"ALT","valueNum":20,"itemGroup":"{group}"}]}`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":20}]}`, warn: []string{"invalid_value@title", "invalid_value@hospital", "invalid_value@indicators[0].itemGroup"}},
	{name: "bracketed data is kept", in: `{"title":"【血常规】","hospital":"《协和医院》","indicators":[{"itemName":"Max","valueText":"(阴性)","unit":"x10^9/L"}]}`,
		want: `{"title":"【血常规】","hospital":"《协和医院》","indicators":[{"itemName":"Max","valueText":"(阴性)","unit":"x10^9/L"}]}`},
}

func TestRuleWorldDraft(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range worldDraftTests {
		t.Run(tt.name, func(t *testing.T) {
			// Through FromReply: placeholders are set to null there, after Build.
			out, err := b.FromReply(tt.in, false)
			if err != nil {
				t.Fatalf("FromReply(%s): %v", tt.in, err)
			}
			checkResult(t, tt.in, out.Result, tt.want, tt.warn)
		})
	}
}

// worldIndicatorTests are rules about one indicator: in is one item of the indicators list.
var worldIndicatorTests = []struct {
	name string
	in   string
	want string
	warn []string
}{
	{name: "unit in the value's key", in: `{"itemName":"TC","value(mmol/L)":5.86}`, want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L"}`},
	{name: "unit in a Chinese key, full-width brackets", in: `{"项目":"肌酐","结果（μmol/L）":"78"}`, want: `{"itemName":"肌酐","valueNum":78,"unit":"μmol/L"}`},
	{name: "unit in square brackets", in: `{"test":"Glucose","result [mg/dL]":"98"}`, want: `{"itemName":"Glucose","valueNum":98,"unit":"mg/dL"}`},
	{name: "unit in the range's key", in: `{"itemName":"TSH","valueNum":2.1,"参考范围(mIU/L)":"0.27-4.2"}`, want: `{"itemName":"TSH","valueNum":2.1,"unit":"mIU/L","refLow":0.27,"refHigh":4.2}`},
	{name: "a bare unit word in the key", in: `{"itemName":"ALT","result(U)":"41"}`, want: `{"itemName":"ALT","valueNum":41,"unit":"U"}`},
	{name: "the row's own unit wins over the key's", in: `{"itemName":"GLU","value(mmol/L)":5.6,"unit":"mmol/l"}`, want: `{"itemName":"GLU","valueNum":5.6,"unit":"mmol/l"}`},
	{name: "a type in the key is no unit", in: `{"itemName":"GLU","value(number)":5.6,"结果(数值)":5.6}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "a placeholder name drops the row", in: `{"itemName":"<项目名称>","valueNum":"<数值>","unit":"<单位>"}`, want: "", warn: []string{"indicator_dropped"}},
	{name: "a bracketed field name drops the row", in: `{"itemName":"[检验项目]","valueNum":0}`, want: "", warn: []string{"indicator_dropped"}},
	{name: "a placeholder text result", in: `{"itemName":"尿蛋白","valueText":"<结果>"}`, want: `{"itemName":"尿蛋白"}`, warn: []string{"invalid_value@indicators[0].valueText"}},
}

func TestRuleWorldIndicator(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range worldIndicatorTests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"title":"t","indicators":[` + tt.in + `]}`
			out, err := b.FromReply(in, false)
			if err != nil {
				t.Fatalf("FromReply(%s): %v", in, err)
			}
			want := `{"title":"t","indicators":[]}`
			if tt.want != "" {
				want = `{"title":"t","indicators":[` + tt.want + `]}`
			}
			checkResult(t, in, out.Result, want, tt.warn)
		})
	}
}

// worldReplyTests go through FromReply; a want of "" means model_output_unparseable, and why
// is then a word its detail must hold.
var worldReplyTests = []struct {
	name  string
	reply string
	cut   bool
	want  string
	warn  []string
	why   string
}{
	// A refusal that offers a template to fill in.
	{name: "template after a refusal", reply: "图片分辨率过低，无法准确识别。您可以按以下格式手动填写：\n" + fence + "json\n" +
		`{"title":"<报告标题>","hospital":"<医院名称>","checkupDate":"YYYY-MM-DD","reportYear":"YYYY","indicators":[{"itemName":"<项目名称>","valueNum":"<数值>","unit":"<单位>","refLow":"<参考下限>","refHigh":"<参考上限>"}]}` + "\n" + fence,
		why: "template"},
	{name: "template with a sample year", reply: `抱歉无法识别，格式如下：{"title":"[报告名称]","hospital":"XX医院","checkupDate":"YYYY/MM/DD","reportYear":2026,"indicators":[{"itemName":"xxx","valueNum":0.0,"unit":"xxx"}]}`,
		why: "template"},
	{name: "English template", reply: "I'm unable to read the values in this image. Here is the format you can fill in:\n" +
		`{"title": "<report title>", "hospital": "<hospital name>", "checkupDate": "YYYY-MM-DD", "indicators": [{"itemName": "<test name>", "valueNum": "<number>", "unit": "<unit>"}]}`,
		why: "template"},

	// A reasoning model that stops inside its reasoning.
	{name: "unclosed think", reply: "<think>这是一张血常规。草稿：{\"title\":\"血常规\",\"indicators\":[{\"itemName\":\"尿蛋白\",\"valueText\":\"±\"}]} 是 ± 还是 +？再看一下", why: "reasoning"},
	{name: "cut inside think", reply: "<think>\n{\"title\":\"肝功能\",\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":41}", cut: true, why: "reasoning"},
	{name: "Kimi-style unclosed think", reply: "◁think▷{\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":41}]}", why: "reasoning"},
	{name: "closed think and nothing after", reply: "<think>{\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":41}]}</think>\n抱歉，我无法确定。"},
	{name: "closed think then the answer", reply: "<think>{\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":40}]} 不对</think>{\"title\":\"肝功能\",\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":41}]}",
		want: `{"title":"肝功能","indicators":[{"itemName":"ALT","valueNum":41}]}`},
	{name: "answer without an opening tag", reply: "让我看看。{\"itemName\":\"x\"} 嗯</think>\n{\"title\":\"肝功能\",\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":41}]}",
		want: `{"title":"肝功能","indicators":[{"itemName":"ALT","valueNum":41}]}`},

	{name: "template of field names", reply: "无法看清图片。请参考以下格式：\n" + `{"title":"报告名称","hospital":"Hospital Name","checkupDate":"检验日期","indicators":[{"itemName":"检验项目","valueNum":"结果","unit":"单位","refLow":"参考下限","refHigh":"参考上限"}]}`,
		why: "template"},

	// Two complete drafts, one per page.
	{name: "one object per page merges as pages", reply: "第1页：\n" + `{"title":"血常规","hospital":"协和医院","checkupDate":"2026-03-05","indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"RBC","valueNum":4.5}]}` +
		"\n第2页：\n" + `{"title":"尿常规","hospital":"协和医院","checkupDate":"2026-03-05","indicators":[{"itemName":"尿蛋白","valueText":"阴性"}]}`,
		want: `{"title":"血常规","hospital":"协和医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"RBC","valueNum":4.5},{"itemName":"尿蛋白","valueText":"阴性","page":2}]}`,
		warn: []string{"page_conflict@pages[1].title"}},
	{name: "two drafts sharing rows: the winner, and a warning", reply: `{"title":"血常规","checkupDate":"2026-03-05","indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"RBC","valueNum":4.5}]}` +
		"\n" + `{"title":"血常规","checkupDate":"2026-03-05","indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"PLT","valueNum":210}]}`,
		want: `{"title":"血常规","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"PLT","valueNum":210}]}`,
		warn: []string{"indicator_dropped"}},
	{name: "pages keyed by number", reply: `{"第1页":{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5}]},"第2页":{"title":"血常规","indicators":[{"itemName":"ALT","valueNum":20}]}}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"ALT","valueNum":20,"page":2}]}`},
	{name: "a correction repeating the rows says nothing", reply: `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5}]}` + "\n更正：\n" + `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":5.6}]}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":5.6}]}`},
}

func TestRuleWorldReply(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range worldReplyTests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := b.FromReply(tt.reply, tt.cut)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("FromReply(%q) = %s, want model_output_unparseable", tt.reply, mustJSON(out.Result))
				}
				if !strings.Contains(err.Error(), tt.why) {
					t.Errorf("FromReply(%q) error %q does not say %q", tt.reply, err, tt.why)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromReply(%q): %v", tt.reply, err)
			}
			checkResult(t, tt.reply, out.Result, tt.want, tt.warn)
		})
	}
}

// TestDateTrouble: an invalid_date warning's reason says why the date was not read, truthfully.
func TestDateTrouble(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"05/03/2026", "ambiguous"},
		{"3/5/26", "ambiguous"},
		{"26-03-05", "ambiguous"},
		{"05-Mar-26", "ambiguous"},
		{"115/03/05", "minguo"},
		{"115年03月05日", "minguo"},
		{"115.3.5 08:30", "minguo"},
		{"1150305", "not_date"},
		{"2026-02-30", "not_date"},
		{"YYYY-MM-DD", "placeholder"},
		{"2026年3月", "no_day"},
		{"明天", "not_date"},
	} {
		v := parse.Value{Kind: parse.String, Text: tt.in}
		if d, ok := readDate(v); ok {
			t.Errorf("readDate(%q) = %v, want not read", tt.in, d)
			continue
		}
		if got := dateTrouble(v); got != tt.want {
			t.Errorf("dateTrouble(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestIsPlaceholder: placeholders in any field, and data that only looks like one.
func TestIsPlaceholder(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"<报告标题>", true}, {"<医院名称>", true}, {"[医院名称]", true}, {"（报告日期）", true}, {"{hospital}", true},
		{"<hospital name>", true}, {"YYYY-MM-DD", true}, {"yyyy/mm/dd", true}, {"DD/MM/YYYY", true}, {"请填写", true},
		{"示例医院", true}, {"XX医院", true}, {"xxx", true}, {"20XX", true}, {"项目名称", true}, {"string", true},
		{"Number", true}, {"某某医院", true}, {"請填寫醫院名稱", true}, {"___", true}, {"...", true}, {"<数值>", true},
		{"mmol/L", false}, {"x10^9/L", false}, {"Max", false}, {"协和医院", false}, {"【血常规】", false},
		{"(阴性)", false}, {"<5.0>", false}, {"<0.5", false}, {"阴性(-)", false}, {"Mayo Clinic", false},
		{"Hemoglobin A1c", false}, {"Daddy", false}, {"MM", false}, {"", false},
		{"医院名称", true}, {"Report Title", true}, {"test_name", true}, {"檢驗日期", true}, {"Collection Date", true},
		{"High", false}, {"low", false}, {"Negative", false}, {"U/L", false}, {"阴性", false},
	} {
		if got := isPlaceholder(tt.in); got != tt.want {
			t.Errorf("isPlaceholder(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestNormKey: a key's punctuation, brackets, annotation and script do not change its meaning.
func TestNormKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"项目名称：", "项目名称"}, {"结果: ", "结果"}, {" unit ", "unit"}, {"【结果】", "结果"}, {"[单位]", "单位"},
		{"項目名稱", "项目名称"}, {"參考範圍", "参考范围"}, {"value(mmol/L)", "value"}, {"result [mg/dL]", "result"},
		{"Item_Name", "itemname"}, {"reference_interval", "referenceinterval"},
	} {
		if got := normKey(tt.in); got != tt.want {
			t.Errorf("normKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var _ = schema.InvalidDate
}

// TestRowsSplitOverValues: rows a model spread over several JSON values are all kept, joined in
// order when that is safe, else counted in a warning; never dropped in silence.
func TestRowsSplitOverValues(t *testing.T) {
	fence := func(v string) string { return "```json\n" + v + "\n```\n" }
	var many strings.Builder
	for i := range 40 {
		fmt.Fprintf(&many, "```json\n{\"indicators\":[{\"itemName\":\"项目%d\",\"valueNum\":%d,\"unit\":\"U/L\"}]}\n```\n", i, i+1)
	}
	tests := []struct {
		name  string
		reply string
		rows  int
		warn  bool // an indicator_dropped counting the rows not kept
	}{
		{"a fence per row, each a little draft", many.String(), 40, false},
		{"two lists in two fences", fence(`{"indicators":[{"itemName":"钾","valueNum":4.1},{"itemName":"钠","valueNum":140}]}`) +
			fence(`{"indicators":[{"itemName":"ALT","valueNum":20},{"itemName":"AST","valueNum":22}]}`), 4, false},
		{"a draft, then the rest as a list", `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.1}]}` + "\n其余项目：\n" +
			`[{"itemName":"RBC","valueNum":4.5},{"itemName":"PLT","valueNum":210}]`, 3, false},
		{"an answer after an echoed example is never joined", fence(`{"title":null,"hospital":null,"indicators":[{"itemName":"总胆固醇","valueNum":5.2}]}`) +
			fence(`{"title":"肝功能","hospital":"华西医院","indicators":[{"itemName":"ALT","valueNum":19},{"itemName":"AST","valueNum":22}]}`), 2, true},
		{"the same row twice is a correction, not two rows", fence(`{"indicators":[{"itemName":"钾","valueNum":4.1}]}`) +
			"更正：\n" + fence(`{"indicators":[{"itemName":"钾","valueNum":4.4},{"itemName":"钠","valueNum":140}]}`), 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := New(lexicon.Default()).FromReply(tt.reply, false)
			if err != nil {
				t.Fatal(err)
			}
			dropped := false
			for _, w := range out.Warnings {
				dropped = dropped || w.Code == schema.IndicatorDropped
			}
			if len(out.Draft.Indicators) != tt.rows || dropped != tt.warn {
				t.Errorf("%d rows, dropped warning %v; want %d, %v: %s", len(out.Draft.Indicators), dropped, tt.rows, tt.warn, warningDump(out.Warnings))
			}
		})
	}
}

// TestHeldOutMisses: shapes a held-out evaluation found read wrong: a unit glued to its range
// with no space, and a label key with a dot.
func TestHeldOutMisses(t *testing.T) {
	out, err := New(lexicon.Default()).FromReply(`{"indicators":[{"项目":"甘油三酯","结果":"1.33mmol/L（0.56-1.70）"},
		{"test":"Creatinine","result":"88","units":"umol/L","Ref. Range:":"59-104"}]}`, false)
	if err != nil {
		t.Fatal(err)
	}
	got := func(i int) string {
		ind := out.Draft.Indicators[i]
		return fmt.Sprintf("%v %s %v-%v %s", ind.ValueNum, str(ind.Unit), ind.RefLow, ind.RefHigh, str(ind.RefText))
	}
	for i, want := range []string{"1.33 mmol/L 0.56-1.70 0.56-1.70", "88 umol/L 59-104 59-104"} {
		if g := got(i); g != want {
			t.Errorf("row %d: %s, want %s", i, g, want)
		}
	}
}

func str(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
