package draft

import (
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
)

// rowsTests are rows written in other clothes than a list of objects (issue 19): tables of
// headers and rows, a header repeated for a two-column page, groups of rows keyed by name,
// bilingual keys, a section's list beside the report's fields, results split into columns by
// status. in is the decoded reply.
var rowsTests = []struct {
	name string
	in   string
	want string
	warn []string
}{
	// Tables of headers and rows.
	{name: "table of headers and rows beside the fields", in: `{"title":"血常规","hospital":"协和医院","table":{"headers":["项目","结果","单位","参考范围"],"rows":[["白细胞计数","6.5","10^9/L","3.5-9.5"],["血红蛋白","135","g/L","130-175"]]}}`,
		want: `{"title":"血常规","hospital":"协和医院","indicators":[{"itemName":"白细胞计数","valueNum":6.5,"unit":"10^9/L","refLow":3.5,"refHigh":9.5},{"itemName":"血红蛋白","valueNum":135,"unit":"g/L","refLow":130,"refHigh":175}]}`},
	{name: "table alone", in: `{"headers":["Test","Result","Units"],"rows":[["Glucose","98","mg/dL"]]}`,
		want: `{"indicators":[{"itemName":"Glucose","valueNum":98,"unit":"mg/dL"}]}`},
	{name: "a table beside an object of the report's fields", in: `{"report":{"title":"LIPID PANEL","collection_date":"2026-02-11"},"table":{"headers":["Test","Result","Units"],"rows":[["Triglycerides","140","mg/dL"]]}}`,
		want: `{"title":"LIPID PANEL","checkupDate":"2026-02-11","reportYear":2026,"indicators":[{"itemName":"Triglycerides","valueNum":140,"unit":"mg/dL"}]}`},
	{name: "a list of rows under another key beside an object of the report's fields", in: `{"lab_report":{"title":"血脂","hospital":"协和医院"},"血脂":[{"项目":"甘油三酯","结果":"1.2"}]}`,
		want: `{"title":"血脂","hospital":"协和医院","indicators":[{"itemName":"甘油三酯","itemGroup":"血脂","valueNum":1.2}]}`},
	{name: "a patient's object beside a table gives no field", in: `{"patient":{"name":"张三","date":"2026-02-11"},"table":{"headers":["Test","Result"],"rows":[["ALT","45"]]}}`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45}]}`},
	{name: "table in a wrapper key alone", in: `{"table":{"headers":["Test","Result","Units"],"rows":[["Glucose","98","mg/dL"]]}}`,
		want: `{"indicators":[{"itemName":"Glucose","valueNum":98,"unit":"mg/dL"}]}`},
	{name: "columns and data", in: `{"reportTitle":"BMP","columns":["Test","Result","Units","Reference Range"],"data":[["Sodium","141","mmol/L","136-145"],["Potassium","4.2","mmol/L","3.5-5.1"]]}`,
		want: `{"title":"BMP","indicators":[{"itemName":"Sodium","valueNum":141,"unit":"mmol/L","refLow":136,"refHigh":145},{"itemName":"Potassium","valueNum":4.2,"unit":"mmol/L","refLow":3.5,"refHigh":5.1}]}`},
	{name: "header and body", in: `{"标题":"肝功能","表格":{"header":["项目","结果","单位"],"body":[["ALT","45","U/L"]]}}`,
		want: `{"title":"肝功能","indicators":[{"itemName":"ALT","valueNum":45,"unit":"U/L"}]}`},
	{name: "a table under the list's key", in: `{"title":"肝功能","indicators":{"columns":["项目","结果"],"rows":[["ALT","45"],["AST","30"]]}}`,
		want: `{"title":"肝功能","indicators":[{"itemName":"ALT","valueNum":45},{"itemName":"AST","valueNum":30}]}`},
	{name: "columns named by objects", in: `{"table":{"columns":[{"name":"项目"},{"name":"结果"}],"rows":[["ALT","45"]]}}`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45}]}`},
	{name: "a table whose rows are objects", in: `{"title":"肝功能","table":{"columns":["项目","结果"],"rows":[{"项目":"ALT","结果":"45"}]}}`,
		want: `{"title":"肝功能","indicators":[{"itemName":"ALT","valueNum":45}]}`},
	{name: "tables of groups", in: `{"title":"体检","tables":[{"name":"血常规","headers":["项目","结果"],"rows":[["WBC","6.5"]]},{"name":"肝功能","headers":["项目","结果"],"rows":[["ALT","45"]]}]}`,
		want: `{"title":"体检","indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5},{"itemName":"ALT","itemGroup":"肝功能","valueNum":45}]}`},
	{name: "a table without a header is not guessed", in: `{"title":"肝功能","table":{"rows":[["ALT","45","U/L"],["AST","30","U/L"]]}}`,
		want: `{"title":"肝功能"}`, warn: []string{"indicator_dropped@reply.table.rows[0]", "indicator_dropped@reply.table.rows[1]"}},
	{name: "a header that names no result is not guessed", in: `{"table":{"headers":["A","B"],"rows":[["ALT","45"]]}}`,
		want: `{}`, warn: []string{"indicator_dropped@reply.table.rows[0]"}},

	// A header that repeats its columns: two rows a line, the left column's first.
	{name: "two-column table", in: `[["名称","结果","单位","参考","名称","结果","单位","参考"],["白细胞","6.5","10^9/L","3.5-9.5","红细胞","4.5","10^12/L","4.3-5.8"],["血红蛋白","135","g/L","130-175","","","",""]]`,
		want: `{"indicators":[{"itemName":"白细胞","valueNum":6.5,"unit":"10^9/L","refLow":3.5,"refHigh":9.5},{"itemName":"血红蛋白","valueNum":135,"unit":"g/L","refLow":130,"refHigh":175},{"itemName":"红细胞","valueNum":4.5,"unit":"10^12/L","refLow":4.3,"refHigh":5.8}]}`},
	{name: "two-column table in headers and rows", in: `{"table":{"headers":["项目","结果","项目","结果"],"rows":[["ALT","45","AST","30"],["GGT","20",null,null]]}}`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45},{"itemName":"GGT","valueNum":20},{"itemName":"AST","valueNum":30}]}`},
	{name: "a half without a name is warned about", in: `[["项目","结果","项目","结果"],["ALT","45","","30"]]`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45}]}`, warn: []string{"indicator_dropped"}},
	{name: "a header whose halves differ is one table", in: `[["项目","结果","项目","单位"],["ALT","45","x","U/L"]]`,
		want: `{}`, warn: []string{"indicator_dropped@reply.indicators[0]", "indicator_dropped@reply.indicators[1]"}},

	// Groups of rows keyed by name.
	{name: "groups of rows keyed by name", in: `{"title":"体检","血常规":{"WBC":{"结果":"6.5","单位":"10^9/L"},"HGB":{"结果":"135","单位":"g/L"}},"肝功能":{"ALT":{"value":45,"unit":"U/L"}}}`,
		want: `{"title":"体检","indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5,"unit":"10^9/L"},{"itemName":"HGB","itemGroup":"血常规","valueNum":135,"unit":"g/L"},{"itemName":"ALT","itemGroup":"肝功能","valueNum":45,"unit":"U/L"}]}`},
	{name: "groups of rows keyed by name alone", in: `{"血常规":{"WBC":{"result":"6.5"}},"肝功能":{"ALT":{"result":"45"}}}`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5},{"itemName":"ALT","itemGroup":"肝功能","valueNum":45}]}`},
	{name: "one group of rows keyed by name", in: `{"title":"血脂","血脂":{"总胆固醇":{"value":"5.86","unit":"mmol/L"},"甘油三酯":{"value":"1.2","unit":"mmol/L"}}}`,
		want: `{"title":"血脂","indicators":[{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.86,"unit":"mmol/L"},{"itemName":"甘油三酯","itemGroup":"血脂","valueNum":1.2,"unit":"mmol/L"}]}`},
	{name: "rows keyed by name alone", in: `{"WBC":{"result":"6.5","unit":"10^9/L"},"HGB":{"result":"135"}}`,
		want: `{"indicators":[{"itemName":"WBC","valueNum":6.5,"unit":"10^9/L"},{"itemName":"HGB","valueNum":135}]}`},
	{name: "a patient's details are no rows", in: `{"title":"血脂","info":{"姓名":"张三","性别":"男"},"血脂":[{"name":"TC","value":"5.2"}]}`,
		want: `{"title":"血脂","indicators":[{"itemName":"TC","itemGroup":"血脂","valueNum":5.2}]}`},
	{name: "groups keyed by name under the list's key", in: `{"indicators":{"血常规":{"WBC":{"result":"6.5"}},"肝功能":[{"itemName":"ALT","result":"45"}]}}`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5},{"itemName":"ALT","itemGroup":"肝功能","valueNum":45}]}`},
	{name: "a patient object is no group", in: `{"title":"血脂","patient":{"name":"张三","age":{"value":45}},"血脂":[{"name":"TC","value":"5.2"}]}`,
		want: `{"title":"血脂","indicators":[{"itemName":"TC","itemGroup":"血脂","valueNum":5.2}]}`},

	// Bilingual keys.
	{name: "bilingual keys", in: `[{"Test 项目":"Glucose 葡萄糖","Result 结果":"5.6","Unit/单位":"mmol/L","Reference Range 参考范围":"3.9-6.1","Flag 标志":"H"}]`,
		want: `{"indicators":[{"itemName":"Glucose 葡萄糖","valueNum":5.6,"unit":"mmol/L","refLow":3.9,"refHigh":6.1,"printedFlag":"high"}]}`},
	{name: "bilingual keys, Chinese first", in: `[{"项目 Item":"ALT","结果 Result":"45","单位 Unit":"U/L"}]`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45,"unit":"U/L"}]}`},
	{name: "bilingual header", in: `[["Test 项目","Result 结果","Unit/单位","Reference Range 参考范围"],["ALT","45","U/L","9-50"]]`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45,"unit":"U/L","refLow":9,"refHigh":50}]}`},
	{name: "bilingual keys that disagree mean nothing", in: `[{"itemName":"ALT","value":"45","Test 检测方法":"速率法"}]`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45}]}`},
	{name: "bilingual draft keys", in: `{"Hospital 医院":"协和医院","Report Date 报告日期":"2026-03-05","Results 结果":[{"Test 项目":"ALT","Result 结果":"45"}]}`,
		want: `{"hospital":"协和医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"ALT","valueNum":45}]}`},

	// A section's list beside the report's fields keeps its group.
	{name: "a section's list beside the fields", in: `{"title":"体检","hospital":"协和医院","血脂":[{"name":"总胆固醇","value":"5.2","unit":"mmol/L"}]}`,
		want: `{"title":"体检","hospital":"协和医院","indicators":[{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.2,"unit":"mmol/L"}]}`},
	{name: "an English section's list beside the fields", in: `{"title":"Report","Lipid Panel":[{"name":"Cholesterol","value":"182"}]}`,
		want: `{"title":"Report","indicators":[{"itemName":"Cholesterol","itemGroup":"Lipid Panel","valueNum":182}]}`},
	{name: "a list under a word that is no section has no group", in: `{"title":"体检","rows":[{"name":"总胆固醇","value":"5.2"}]}`,
		want: `{"title":"体检","indicators":[{"itemName":"总胆固醇","valueNum":5.2}]}`},
	{name: "a row's own group wins over its section's", in: `{"title":"体检","血脂":[{"name":"TC","group":"血脂四项","value":"5.2"}]}`,
		want: `{"title":"体检","indicators":[{"itemName":"TC","itemGroup":"血脂四项","valueNum":5.2}]}`},

	// Results in columns by status: the filled cell is the value, an H or L after it the flag.
	{name: "in range", in: `[{"test":"Sodium","in_range":"141","out_of_range":"","units":"mmol/L","reference_range":"136-145"}]`,
		want: `{"indicators":[{"itemName":"Sodium","valueNum":141,"unit":"mmol/L","refLow":136,"refHigh":145}]}`},
	{name: "out of range with H", in: `[{"test":"Glucose","in_range":"","out_of_range":"105 H","units":"mg/dL","reference_range":"65-99"}]`,
		want: `{"indicators":[{"itemName":"Glucose","valueNum":105,"unit":"mg/dL","refLow":65,"refHigh":99,"printedFlag":"high"}]}`},
	{name: "out of range with Low", in: `[{"Test":"Iron","In Range":null,"Out Of Range":"38 Low","Units":"ug/dL"}]`,
		want: `{"indicators":[{"itemName":"Iron","valueNum":38,"unit":"ug/dL","printedFlag":"low"}]}`},
	{name: "out of range with a glued L", in: `[{"test":"HDL","inRange":"","outOfRange":"38L"}]`,
		want: `{"indicators":[{"itemName":"HDL","valueNum":38,"printedFlag":"low"}]}`},
	{name: "out of range without a mark is abnormal", in: `[{"test":"HIV","in_range":"","out_of_range":"Reactive"}]`,
		want: `{"indicators":[{"itemName":"HIV","valueText":"Reactive","printedFlag":"abnormal"}]}`},
	{name: "in range text", in: `[{"test":"HBsAg","in_range":"Negative","out_of_range":""}]`,
		want: `{"indicators":[{"itemName":"HBsAg","valueText":"Negative"}]}`},
	{name: "normal and abnormal columns", in: `[{"Test":"LDL","Normal":"","Abnormal":"165 H","Units":"mg/dL"},{"Test":"HDL","Normal":"52","Abnormal":"","Units":"mg/dL"}]`,
		want: `{"indicators":[{"itemName":"LDL","valueNum":165,"unit":"mg/dL","printedFlag":"high"},{"itemName":"HDL","valueNum":52,"unit":"mg/dL"}]}`},
	{name: "a flag column holding the result", in: `[{"test":"TSH","Flag":"5.9 H","units":"mIU/L"}]`,
		want: `{"indicators":[{"itemName":"TSH","valueNum":5.9,"unit":"mIU/L","printedFlag":"high"}]}`},
	{name: "a normal column holding the range", in: `[{"test":"K","result":"4.1","normal":"3.5-5.1"},{"test":"Na","normal":"136-145","abnormal":"131 L"}]`,
		want: `{"indicators":[{"itemName":"K","valueNum":4.1,"refLow":3.5,"refHigh":5.1},{"itemName":"Na","valueNum":131,"refLow":136,"refHigh":145,"printedFlag":"low"}]}`},
	{name: "both status columns filled", in: `[{"test":"ALT","in_range":"30","out_of_range":"60 H"}]`,
		want: `{"indicators":[{"itemName":"ALT"}]}`, warn: []string{"invalid_value@indicators[0].valueNum"}},
	{name: "the same result in both columns", in: `[{"test":"ALT","in_range":"30","out_of_range":"30"}]`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":30,"printedFlag":"abnormal"}]}`},
	{name: "a result key wins over status columns", in: `[{"test":"ALT","result":"45","in_range":"","out_of_range":""}]`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":45}]}`},
	{name: "a status table", in: `{"table":{"headers":["Test","In Range","Out of Range","Units","Reference Range"],"rows":[["Glucose","","105 H","mg/dL","65-99"],["BUN","14","","mg/dL","6-20"]]}}`,
		want: `{"indicators":[{"itemName":"Glucose","valueNum":105,"unit":"mg/dL","refLow":65,"refHigh":99,"printedFlag":"high"},{"itemName":"BUN","valueNum":14,"unit":"mg/dL","refLow":6,"refHigh":20}]}`},

	// Dates by meaning: sampling over receipt over report.
	{name: "sampling over receipt over report", in: `{"报告时间":"2026-03-06 16:20","接收时间":"2026-03-05 09:10","采样时间":"2026-03-05 07:45","indicators":[]}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "collected over received over reported", in: `{"report_date":"2026-03-07","received":"2026-03-06","collection_date":"2026-03-05"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "receipt over report", in: `{"报告日期":"2026-03-07","收样时间":"2026-03-06"}`,
		want: `{"checkupDate":"2026-03-06","reportYear":2026}`},
	{name: "the report date when nothing else is printed", in: `{"报告日期":"2026-03-07","采样时间":null}`,
		want: `{"checkupDate":"2026-03-07","reportYear":2026}`},
	{name: "a date that says nothing over the report's", in: `{"reportDate":"2026-03-07","date":"2026-03-05"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Traditional keys", in: `{"報告日期":"2026-03-07","採樣時間":"2026-03-05"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "specimen collected and drawn", in: `{"Date Reported":"2026-03-07","Specimen Collected":"2026-03-05"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "dates in the report's object beside the list", in: `{"report":{"title":"血脂","报告时间":"2026-03-06","采样时间":"2026-03-05"},"indicators":[{"itemName":"TC","valueNum":5.2}]}`,
		want: `{"title":"血脂","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"TC","valueNum":5.2}]}`},
	{name: "a report dated before its sample disagrees", in: `{"采样时间":"2026-03-05","报告时间":"2026-02-05"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`, warn: []string{"invalid_date@checkupDate"}},
	{name: "a report a year after its sample disagrees", in: `{"collected":"2026-03-05","reported":"2027-03-06"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`, warn: []string{"invalid_date@checkupDate"}},
	{name: "a culture's two weeks agree", in: `{"采样时间":"2026-03-05","报告时间":"2026-03-19"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "the sampling date unreadable is not replaced by the report's", in: `{"采样时间":"05/03/2026","报告时间":"2026-03-06"}`,
		want: `{}`, warn: []string{"invalid_date@checkupDate"}},
	{name: "a Minguo year without 民國", in: `{"採樣時間":"115年03月05日","報告日期":"115/03/06"}`,
		want: `{}`, warn: []string{"invalid_date@checkupDate"}},
	{name: "a Minguo year with 民國", in: `{"採樣時間":"民國115年03月05日"}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026}`},

	// Invisible characters are removed everywhere before reading.
	{name: "zero-width characters in values, names, units, ranges, dates and keys", in: `{"check\u200bupDate":"2026-03-05\u2060","indicators":[` +
		`{"item\u200bName":"白细胞\u200c计数","value\u200dNum":"6.5\u200b","unit":"10^9\u00ad/L","refRange":"3.5\u200b-9.5"},` +
		`{"itemName":"\ufeff钠","valueNum":"\ufeff141","unit":"mmol/L"}]}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"白细胞计数","valueNum":6.5,"unit":"10^9/L","refLow":3.5,"refHigh":9.5},{"itemName":"钠","valueNum":141,"unit":"mmol/L"}]}`},
	{name: "bidi marks and a soft hyphen in a group's key and a text result", in: `{"\u200e血\u00ad常规":[{"项目":"尿蛋白","结果":"阴\u200b性"}],"尿常规":[{"项目":"pH","结果":"6.0"}]}`,
		want: `{"indicators":[{"itemName":"尿蛋白","itemGroup":"血常规","valueText":"阴性"},{"itemName":"pH","itemGroup":"尿常规","valueNum":6.0}]}`},
	{name: "a word that holds only invisible characters is null", in: `[{"itemName":"ALT","valueNum":"\u200b","unit":"U/L"}]`,
		want: `{"indicators":[{"itemName":"ALT","unit":"U/L"}]}`},

	// Units that start with their power of ten, dashes, leading-dot numbers.
	{name: "powers of ten as units", in: `[{"itemName":"WBC","value":"6.5 10E9/L"},{"itemName":"RBC","value":"4.5 10*12/L"},{"itemName":"PLT","value":"215 10^9/L"},{"itemName":"NEUT","value":"4.1 10⁹/L"}]`,
		want: `{"indicators":[{"itemName":"WBC","valueNum":6.5,"unit":"10E9/L"},{"itemName":"RBC","valueNum":4.5,"unit":"10*12/L"},{"itemName":"PLT","valueNum":215,"unit":"10^9/L"},{"itemName":"NEUT","valueNum":4.1,"unit":"10⁹/L"}]}`},
	{name: "a tilde is no power of ten", in: `[{"itemName":"WBC","value":"6.5 10~9/L"}]`,
		want: `{"indicators":[{"itemName":"WBC","valueText":"6.5 10~9/L"}]}`},
	{name: "109 is no power of ten", in: `[{"itemName":"X","value":"6.5 109/L"}]`,
		want: `{"indicators":[{"itemName":"X","valueText":"6.5 109/L"}]}`},
	{name: "one power of ten written two ways is one unit", in: `[{"itemName":"NEUT","value":"4.1×10^9/L","unit":"10*9/L"},{"itemName":"RBC","value":"4.5 10E12/L","unit":"×10^12/L"}]`,
		want: `{"indicators":[{"itemName":"NEUT","valueNum":4.1,"unit":"10*9/L"},{"itemName":"RBC","valueNum":4.5,"unit":"×10^12/L"}]}`},
	{name: "a power of ten before a unit given beside", in: `[{"itemName":"HBV-DNA","value":"1.2 10E3","unit":"IU/mL"}]`,
		want: `{"indicators":[{"itemName":"HBV-DNA","valueNum":1.2,"unit":"10E3 IU/mL"}]}`},
	{name: "leading-dot numbers", in: `[{"itemName":"Creatinine","value":".85 mg/dL","refRange":".57-1.11"},{"itemName":"BE","valueNum":"-.5","refRange":"-3‐3"},{"itemName":"CRP","value":"<.5"}]`,
		want: `{"indicators":[{"itemName":"Creatinine","valueNum":0.85,"unit":"mg/dL","refLow":0.57,"refHigh":1.11},{"itemName":"BE","valueNum":-0.5,"refLow":-3,"refHigh":3},{"itemName":"CRP","valueText":"<.5"}]}`},
	{name: "dashes between a range's bounds", in: `[{"itemName":"K","value":"4.1","refRange":"3.5‐5.3"},{"itemName":"PLT","value":"215","refRange":"125——350"},{"itemName":"Na","value":"141","refRange":"137﹣147"},{"itemName":"Cl","value":"101 mmol/L (99‑110)"}]`,
		want: `{"indicators":[{"itemName":"K","valueNum":4.1,"refLow":3.5,"refHigh":5.3},{"itemName":"PLT","valueNum":215,"refLow":125,"refHigh":350},{"itemName":"Na","valueNum":141,"refLow":137,"refHigh":147},{"itemName":"Cl","valueNum":101,"unit":"mmol/L","refLow":99,"refHigh":110}]}`},
}

func TestRuleRows(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range rowsTests {
		t.Run(tt.name, func(t *testing.T) {
			res := b.Build(decodeValue(t, tt.in))
			checkResult(t, tt.in, res, tt.want, tt.warn)
		})
	}
}

// TestVisibleShares: a reply without invisible characters is read as it is, without a copy;
// one with them is copied where they are, and the reply itself is left as it was.
func TestVisibleShares(t *testing.T) {
	clean := decodeValue(t, `{"title":"血常规","indicators":[{"itemName":"白细胞计数","valueNum":"6.5","unit":"×10^9/L","refRange":"3.5–9.5 ↑"}]}`)
	if n := testing.AllocsPerRun(100, func() { visible(clean) }); n != 0 {
		t.Errorf("visible of a clean reply allocates %v times, want 0", n)
	}
	dirty := decodeValue(t, `{"title":"血常规","indicators":[{"itemName":"白细胞\u200b计数"}]}`)
	before := mustJSON(dirty)
	got := visible(dirty)
	if mustJSON(dirty) != before {
		t.Errorf("visible wrote into the reply: %s", mustJSON(dirty))
	}
	if want := `{"title":"血常规","indicators":[{"itemName":"白细胞计数"}]}`; mustJSON(got) != want {
		t.Errorf("visible = %s, want %s", mustJSON(got), want)
	}
}

// TestCleanText: a reply read without the walk that removes invisible characters is one that
// cannot hold any, written out or as a \u escape; both kinds are still removed.
func TestCleanText(t *testing.T) {
	for _, c := range []struct {
		reply string
		clean bool
	}{
		{`{"indicators":[{"itemName":"ALT","valueNum":"45"}]}`, true},
		{`{"indicators":[{"itemName":"谷丙转氨酶","valueNum":"45"}]}`, true},
		{"{\"indicators\":[{\"itemName\":\"ALT\",\"valueNum\":\"45\u200b\"}]}", false},
		{`{"indicators":[{"itemName":"ALT","valueNum":"45\u200b"}]}`, false},
		{`{"indicators":[{"itemName":"ALT","valueNum":"45\u0035"}]}`, false}, // any escape: it is not decoded to see
	} {
		if got := cleanText(c.reply); got != c.clean {
			t.Errorf("cleanText(%q) = %v, want %v", c.reply, got, c.clean)
		}
	}
	b := New(lexicon.Default())
	for _, reply := range []string{
		"{\"indicators\":[{\"itemName\":\"AL\u200bT\",\"valueNum\":\"45\u200b\"}]}",
		`{"indicators":[{"itemName":"AL\u200bT","valueNum":"45\u200b"}]}`,
	} {
		out, err := b.FromReply(reply, false)
		if err != nil {
			t.Fatal(err)
		}
		ind := out.Draft.Indicators
		if len(ind) != 1 || ind[0].ItemName != "ALT" || ind[0].ValueNum == nil || ind[0].ValueNum.String() != "45" {
			t.Errorf("%q read as %s", reply, mustJSON(out.Draft))
		}
	}
}

// TestStatusWordsAreResults: the words that name a status column (normal, 范围内) are results
// when a reply prints them as one, never a template's placeholder (FromReply's scrub).
func TestStatusWordsAreResults(t *testing.T) {
	b := New(lexicon.Default())
	reply := `{"title":"尿常规","indicators":[{"itemName":"Color","valueText":"Normal"},{"itemName":"Clarity","value":"normal"},{"itemName":"外观","结果":"范围内"}]}`
	out, err := b.FromReply(reply, false)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, reply, out.Result, `{"title":"尿常规","indicators":[{"itemName":"Color","valueText":"Normal"},{"itemName":"Clarity","valueText":"normal"},{"itemName":"外观","valueText":"范围内"}]}`, nil)
}
