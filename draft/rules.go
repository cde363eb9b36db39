package draft

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// This file holds the rules as tables, one per kind, so that a new spelling seen in the field is
// one line here and one test case, not a change to the code that applies it.

// field is a draft or indicator field, or a key that feeds one.
type field int

const (
	noField field = iota
	fTitle
	fHospital
	fCheckupDate
	fReportYear
	fIndicators // the indicators list, or a group's items
	fItemName
	fItemGroup
	fValueNum
	fValueText
	fValue // a result to split into valueNum or valueText
	fUnit
	fRefLow
	fRefHigh
	fRefRange // a reference range written as one string
	fPrintedFlag
	fInRange  // a result printed in an in-range column (US labs: In Range | Out of Range)
	fOutRange // a result printed in an out-of-range column, its H or L after it
	numFields
)

// aliases lists, per field, the keys that mean it; the first is the contract's own name. Keys
// match after normKey, so item_name, ItemName, item-name and "item name" are all itemName. When
// textKeys name a draft field only when their value is text: {"report": "血常规"} is the
// title, {"lab": "XX检验中心"} the hospital, but {"report": {…}} and {"lab": {…}} wrap the
// report's fields, and are read as wrappers. They never win over a key of aliases.
var textKeys = []struct {
	field field
	keys  []string
}{
	{fTitle, []string{"report", "报告"}},
	{fHospital, []string{"lab", "检验科"}},
}

// an object has several keys for one field, the one listed first here wins.
var aliases = []struct {
	field field
	keys  []string
}{
	{fTitle, []string{"title", "标题", "报告名称", "reportTitle", "报告标题", "reportName", "报告类型", "reportType", "检验名称", "检查名称", "documentTitle", "labReportTitle", "titleOfReport", "panel", "panelName", "testPanel"}},
	{fHospital, []string{"hospital", "医院", "医院名称", "institution", "hospitalName", "机构", "医疗机构", "检验机构", "送检医院", "institutionName", "facility",
		"facilityName", "laboratory", "laboratoryName", "labName", "clinic", "clinicName", "medicalCenter", "medicalInstitution", "healthcareFacility",
		"organization", "organizationName", "performingLab", "performingLaboratory", "医事机构", "院所名称", "检验单位", "检测机构", "单位名称"}},
	{fCheckupDate, dateAliases()},
	{fReportYear, []string{"reportYear", "year", "年份", "年度"}},
	{fIndicators, []string{"indicators", "items", "results", "指标", "检验项目列表", "项目列表", "检验结果列表", "indicatorList", "检验结果", "检查结果", "结果列表", "labResults", "testResults", "tests",
		"analytes", "parameters", "components", "measurements", "observations", "labTests", "labValues", "testItems", "resultList", "检测结果", "检验项目", "检测项目"}},
	{fItemName, []string{"itemName", "name", "item", "indicator", "项目", "项目名称", "检验项目", "指标名称", "indicatorName", "testName", "test", "检查项目", "检测项目", "化验项目", "项目名", "名称", "中文名称",
		"analyte", "analyteName", "parameter", "parameterName", "component", "componentName", "measurement", "measurementName", "observation", "observationName",
		"testItem", "labTest", "assay", "biomarker", "marker", "metric", "testDescription", "testDesc", "description", "testCode", "检验指标", "检测指标"}},
	{fItemGroup, []string{"itemGroup", "group", "category", "分组", "类别", "groupName", "panel", "组别", "分类", "检查类别",
		"panelName", "section", "sectionName", "categoryName", "specimen", "specimenType", "sampleType", "profile", "testPanel", "testGroup",
		"标本", "标本类型", "样本类型", "检体", "组合", "套餐"}},
	{fValueNum, []string{"valueNum", "numericValue", "valueNumber", "numericResult", "resultNumeric", "valueNumeric"}},
	{fValueText, []string{"valueText", "textValue", "resultText", "textResult", "valueString", "qualitativeResult", "定性结果"}},
	{fValue, []string{"value", "result", "结果", "检验结果", "测定值", "检测值", "数值", "测定结果", "检测结果", "检查结果", "结果值", "resultValue",
		"testResult", "measuredValue", "observedValue", "reading", "level", "concentration", "检验值", "检查值", "实测值", "测量值"}},
	{fUnit, []string{"unit", "单位", "units", "计量单位", "unitOfMeasure", "unitOfMeasurement", "uom", "measurementUnit", "resultUnit", "valueUnit"}},
	{fRefLow, []string{"refLow", "referenceLow", "low", "lower", "min", "参考下限", "下限",
		"refMin", "referenceMin", "refLower", "referenceLower", "lowerLimit", "lowerBound", "lowLimit", "normalLow", "rangeLow", "minimum", "参考值下限", "正常下限"}},
	{fRefHigh, []string{"refHigh", "referenceHigh", "high", "upper", "max", "参考上限", "上限",
		"refMax", "referenceMax", "refUpper", "referenceUpper", "upperLimit", "upperBound", "highLimit", "normalHigh", "rangeHigh", "maximum", "参考值上限", "正常上限"}},
	{fRefRange, []string{"refText", "refRange", "referenceRange", "range", "reference", "参考范围", "参考值", "参考区间", "ref", "normalRange", "referenceInterval", "正常范围", "正常值", "参考范围值", "参考标准", "referenceValue",
		"refInterval", "referenceValues", "refValue", "normalValues", "normalValue", "expectedRange", "biologicalReferenceInterval",
		"参考值范围", "正常参考值", "正常参考范围", "生物参考区间", "参考"}},
	{fPrintedFlag, []string{"printedFlag", "flag", "abnormalFlag", "提示", "标志", "异常标志", "异常提示", "结果提示", "abnormal", "h/l", "状态", "flags", "高低"}},
	// Result columns by status: the one cell that is filled is the value (see statusValue).
	{fInRange, []string{"inRange", "withinRange", "resultInRange", "inRangeResult", "normal", "normalResult", "withinNormalRange", "范围内", "正常结果", "参考范围内"}},
	{fOutRange, []string{"outOfRange", "outsideRange", "resultOutOfRange", "outOfRangeResult", "abnormalResult", "outsideNormalRange", "范围外", "异常结果", "超出范围", "参考范围外"}},
}

// dateStage is the step of a sample's way through the lab a date key names.
type dateStage int

const (
	stageContract dateStage = iota // checkupDate, the contract's own key: the checkup or sampling date
	stageSampling                  // the sample was taken
	stageCheckup                   // the checkup or the test, without saying which step
	stageAny                       // a date that says nothing of what it dates
	stageReceipt                   // the lab received the sample
	stageReport                    // the report was written, checked or printed
)

// dateKeys name the report's dates, by the step they date, best first: checkupDate is the
// checkup or sampling date, the one a trend needs, so when a report prints several the sampling
// date wins over the receipt date, which wins over the report's; the report's date is the
// checkupDate only when nothing else is printed. Traditional keys (採樣時間, 報告日期) match
// through normKey's fold. When the date chosen and another disagree by more than a lab's
// turnaround (maxTurnaround), or a later step is dated before an earlier one, invalid_date says so.
var dateKeys = []struct {
	stage dateStage
	keys  []string
}{
	{stageContract, []string{"checkupDate"}},
	{stageSampling, []string{"采样时间", "采样日期", "采集时间", "采集日期", "标本采集时间", "标本采集日期", "标本采集", "采样", "采检日期", "采血时间", "采血日期", "抽血时间", "抽血日期", "取样时间", "取样日期", "留样时间",
		"collectionDate", "collectionTime", "collectionDateTime", "collected", "collectedDate", "collectedAt", "collectedOn", "dateCollected", "dateTimeCollected", "dateOfCollection",
		"specimenCollected", "specimenCollectionDate", "specimenCollectionTime", "specimenDate", "sampleDate", "sampleCollectionDate", "sampleTime", "samplingDate", "samplingTime",
		"drawn", "drawDate", "drawnDate", "dateDrawn", "drawnAt", "drawnOn", "bloodDrawDate"}},
	{stageCheckup, []string{"体检日期", "检查日期", "检验日期", "检测日期", "检验时间", "检测时间", "送检日期", "送检时间",
		"examDate", "examinationDate", "testDate", "dateOfTest", "visitDate", "checkDate", "serviceDate", "dateOfService"}},
	{stageAny, []string{"date", "日期", "dateTime"}},
	{stageReceipt, []string{"接收时间", "接收日期", "收样时间", "收样日期", "签收时间", "签收日期", "核收时间", "标本接收时间", "标本接收日期",
		"received", "receivedDate", "receivedAt", "receivedOn", "receivedTime", "dateReceived", "receiptDate", "specimenReceived"}},
	{stageReport, []string{"报告时间", "报告日期", "审核时间", "审核日期", "签发时间", "签发日期", "发布日期", "出报告时间", "检验报告日期", "打印时间", "打印日期",
		"reportDate", "reportTime", "reported", "reportedDate", "reportedAt", "reportedOn", "dateReported", "dateOfReport", "resultDate", "finalDate",
		"verifiedDate", "approvedDate", "printDate", "printedDate", "issueDate", "dateIssued"}},
}

// maxTurnaround is the most days a sample's dates may lie apart before they disagree: routine
// chemistry and blood counts report the same day or the next, cultures within a week or two,
// send-out tests (genetics) within a month; a month or a year misread puts dates further apart.
const maxTurnaround = 31

// dateAliases are dateKeys' keys in order: the aliases of checkupDate, best first.
func dateAliases() []string {
	var out []string
	for _, d := range dateKeys {
		out = append(out, d.keys...)
	}
	return out
}

// stageOf is the step a date key names (after normKey), and whether it names one.
func stageOf(key string) (dateStage, bool) {
	if s, ok := dateStageTable[normKey(key)]; ok {
		return s, true
	}
	if latin, han, ok := splitScripts(trimLabel(key)); ok { // Report Date 报告日期
		if s, ok := dateStageTable[normKey(han)]; ok {
			return s, true
		}
		s, ok := dateStageTable[normKey(latin)]
		return s, ok
	}
	return stageAny, false
}

var dateStageTable = func() map[string]dateStage {
	m := map[string]dateStage{}
	for _, d := range dateKeys {
		for _, k := range d.keys {
			m[normKey(k)] = d.stage
		}
	}
	return m
}()

// draftFields and itemFields say which fields each level reads; the same key can mean different
// things at each level ("指标" is the list at the top and a name inside an item).
var (
	draftFields = map[field]bool{fTitle: true, fHospital: true, fCheckupDate: true, fReportYear: true, fIndicators: true}
	itemFields  = map[field]bool{fItemName: true, fItemGroup: true, fValueNum: true, fValueText: true, fValue: true, fUnit: true, fRefLow: true, fRefHigh: true, fRefRange: true, fIndicators: true, fPrintedFlag: true, fInRange: true, fOutRange: true}
)

type aliasRank struct {
	field field
	rank  int
}

// keyTable maps a normalised key to its field at the draft level and at the item level.
var keyTable = func() map[string][2]aliasRank {
	m := make(map[string][2]aliasRank)
	// Inside an item, a key that also names the list ("检验结果" is a result there, the list at
	// the top) means the item's own field: the list field is registered last.
	ordered := slices.Clone(aliases)
	slices.SortStableFunc(ordered, func(x, y struct {
		field field
		keys  []string
	}) int {
		return cmp.Compare(boolInt(x.field == fIndicators), boolInt(y.field == fIndicators))
	})
	for _, a := range ordered {
		for rank, k := range a.keys {
			for _, nk := range []string{normKey(k), k} {
				e := m[nk]
				if draftFields[a.field] && e[0].field == noField {
					e[0] = aliasRank{a.field, rank}
				}
				if itemFields[a.field] && e[1].field == noField {
					e[1] = aliasRank{a.field, rank}
				}
				m[nk] = e
			}
		}
	}
	return m
}()

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// normKey folds what a key may carry besides its name: padding and a label's colon ("结果: ",
// "项目名称："), brackets around it (【结果】), an annotation after it (itemName(项目名称), value
// (mmol/L), result [mg/dL]), Traditional characters (項目名稱 is 项目名称, by OpenCC's table), case
// and separators ("Item_Name", "item-name" and "item name" → "itemname").
func normKey(k string) string {
	k = trimLabel(k)
	if i := strings.IndexAny(k, "(（["); i > 0 { // the annotation is not the key
		k = trimLabel(k[:i])
	}
	k = lexicon.Simplify(k)
	simple := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == ' ' || c == '.' {
			simple = false
			break
		}
	}
	if simple {
		return k
	}
	var b strings.Builder
	b.Grow(len(k))
	for _, r := range k {
		switch {
		case r == '_' || r == '-' || r == ' ' || r == '.':
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// keyBrackets may enclose a whole key, the way a form prints its labels: 【结果】, [单位], 「项目」.
var keyBrackets = [][2]string{{"【", "】"}, {"[", "]"}, {"「", "」"}, {"<", ">"}, {"《", "》"}, {"〔", "〕"}}

// trimLabel drops a key's padding, a label's trailing colon and brackets around the whole key.
func trimLabel(k string) string {
	k = strings.TrimSpace(k)
	if k == "" {
		return k
	}
	if c := k[len(k)-1]; c == ':' || c == ' ' || strings.HasSuffix(k, "：") {
		k = strings.TrimRight(k, ":： \t")
	}
	if k == "" {
		return k
	}
	if c := k[0]; c == '[' || c == '<' || c >= 0x80 {
		for _, br := range keyBrackets {
			if inner, ok := strings.CutPrefix(k, br[0]); ok {
				if inner, ok = strings.CutSuffix(inner, br[1]); ok {
					return strings.TrimSpace(inner)
				}
			}
		}
	}
	return k
}

// keyUnitWords are units with no digit, slash or sign, which a key's annotation may hold alone
// (result(U), 时间(秒)); any other annotation must look like a unit by its characters, so that
// value(number) or 结果(数值) give no unit.
var keyUnitWords = []string{"U", "IU", "mIU", "KU", "g", "mg", "ug", "μg", "ng", "pg", "fL", "fl", "pL", "mmHg", "kPa", "s", "sec", "秒", "mEq", "mOsm", "个", "倍", "cm", "mm", "kg"}

// keyUnit is the unit a key prints in brackets after its name ("value(mmol/L)", "结果（μmol/L）",
// "result [mg/dL]"), or "". The caller uses it only for the keys of a result or a range, and only
// when the row gives no unit of its own.
func keyUnit(key string) string {
	i := strings.IndexAny(key, "(（[")
	if i <= 0 {
		return ""
	}
	_, size := utf8.DecodeRuneInString(key[i:])
	inner := key[i+size:]
	j := strings.IndexAny(inner, ")）]")
	if j < 0 {
		return ""
	}
	u := strings.TrimSpace(lexicon.Narrow(inner[:j]))
	if !isUnit(u) || !strings.ContainsAny(u, "/%‰^×*μµ0123456789⁰¹²³⁴⁵⁶⁷⁸⁹") && !slices.Contains(keyUnitWords, u) {
		return ""
	}
	return u
}

// statusFlagWords are the flags a status column prints after its value, apart from it (105 H,
// 3.2 Low, 250 (High)), compared case-insensitively; marks (↑, *) are read as anywhere else.
var statusFlagWords = []struct {
	word string
	flag schema.Flag
}{
	{"H", schema.FlagHigh}, {"HH", schema.FlagHigh}, {"High", schema.FlagHigh}, {"L", schema.FlagLow}, {"LL", schema.FlagLow}, {"Low", schema.FlagLow},
	{"A", schema.FlagAbnormal}, {"Abn", schema.FlagAbnormal}, {"Abnormal", schema.FlagAbnormal},
}

// A table written as an object: its header under one of tableHeaderKeys, its rows under one of
// tableRowKeys ({"headers": [...], "rows": [[...]]}, {"columns": …, "data": …}, {"header": …,
// "body": …}); a header cell that is an object names its column under one of columnNameKeys.
// Compared after normKey.
var (
	tableHeaderKeys = []string{"headers", "header", "columns", "cols", "columnnames", "columnheaders", "headerrow", "head", "表头", "列名", "列", "标题行", "表头行"}
	tableRowKeys    = []string{"rows", "body", "data", "records", "values", "tablerows", "datarows", "行", "数据", "表体", "数据行"}
	columnNameKeys  = []string{"name", "title", "label", "header", "text", "key", "field", "名称", "列名"}
)

// nullWords are strings that mean "no value" in any field (compared case-insensitively, trimmed).
var nullWords = []string{"", "null", "none", "n/a", "nan", "nil", "undefined"}

func isNullWord(s string) bool {
	// Every null word is short and starts with n or u (or is empty): most text is neither.
	if s == "" {
		return true
	}
	if len(s) > 9 || s[0]|0x20 != 'n' && s[0]|0x20 != 'u' {
		return false
	}
	for _, w := range nullWords {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// rangeBrackets may enclose a range: (2.11-2.52), [3.5-5.5], （3.5-5.5）.
var rangeBrackets = [][2]string{{"(", ")"}, {"[", "]"}, {"（", "）"}, {"【", "】"}}

// pageKeys name a list of whole pages in one reply: {"pages": [{…}, {…}]}.
var pageKeys = []string{"pages", "page", "页面", "页"}

// isPageKey reports a key that names one page by its number: page1, "Page 2", page_3, 第1页,
// 第二页, 第2頁 (as the page's draft, beside the others).
func isPageKey(k string) bool {
	k = normKey(k)
	if rest, ok := strings.CutPrefix(k, "page"); ok {
		return rest != "" && strings.Trim(rest, "0123456789") == ""
	}
	if rest, ok := strings.CutPrefix(k, "第"); ok {
		if n, ok := strings.CutSuffix(rest, "页"); ok && n != "" {
			return strings.Trim(n, "0123456789一二三四五六七八九十") == ""
		}
	}
	return false
}

// wrapQuotes are quotes a model sometimes wraps a whole value in: '5.6', "6.2", “阴性”.
var wrapQuotes = [][2]string{{"'", "'"}, {`"`, `"`}, {"“", "”"}, {"‘", "’"}, {"「", "」"}}

// timeOfDay words may stand for the time part of a date: 2026年3月5日 上午.
var timeOfDay = []string{"上午", "下午", "中午", "晚上", "早上", "凌晨", "AM", "PM", "am", "pm"}

// placeholderWords are what a format template puts where a value goes: a field's own name or
// its type. A model that declines and prints the format for the person to fill in ("您可以按以下格式
// 手动填写"), or echoes the format before its answer, writes them; they are never data, in any
// field. Compared whole, case-insensitively, bare or in brackets (<itemName>, [名称]).
var placeholderWords = []string{
	"string", "str", "text", "name", "itemname", "item", "indicator", "example", "sample", "xxx", "...", "…", "……", "todo", "tbd",
	"number", "num", "float", "int", "integer", "decimal", "value", "unit", "title", "hospital", "date", "group", "result",
	"项目", "项目名称", "指标名称", "名称", "示例", "样例", "检验项目名称", "检验项目", "指标",
	"标题", "报告标题", "报告名称", "医院", "医院名称", "日期", "检验日期", "报告日期", "数值", "结果", "检验结果", "单位", "分组", "类别", "文本", "内容", "参考范围",
}

// placeholderMarks make a value a template's placeholder wherever they stand in it: a date's
// pattern (YYYY-MM-DD), a request to fill it in, a blank to write on, 某某 (so-and-so).
var placeholderMarks = []string{"YYYY", "yyyy", "MM-DD", "MM/DD", "DD/MM", "DD-MM", "mm-dd", "mm/dd", "dd/mm", "dd-mm", "请填写", "填写", "待填", "示例", "样例", "例如", "占位", "某某", "placeholder", "Placeholder", "PLACEHOLDER", "___", "＿＿"}

// placeholderFieldWords, inside square or round brackets, make the bracketed text a placeholder:
// [医院名称], (报告日期), [hospital name]; a bracketed word that names no field (【血常规】) is data.
var placeholderFieldWords = []string{"名称", "标题", "日期", "数值", "单位", "结果", "医院", "项目", "填", "name", "Name", "title", "Title", "date", "Date", "value", "Value", "unit", "Unit", "hospital", "Hospital"}

// isPlaceholder reports whether a value — an item's name, a title, a hospital, a unit, a text
// result — is a template's placeholder rather than data: one of placeholderWords, text in angle
// or curly brackets without a digit (<报告标题>, {hospital}), a field's name in square or round
// brackets ([医院名称]), a placeholderMarks, or a run of x standing for letters (XX医院, xxx).
func isPlaceholder(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 96 {
		return false
	}
	if first, last := s[0], s[len(s)-1]; first == '<' && last == '>' || first == '{' && last == '}' {
		return len(s) > 2 && !strings.ContainsAny(s, "0123456789")
	}
	n := s
	if c := s[0]; c == '[' || c == '(' || c == 0xE3 || c == 0xEF { // [ ( or the first byte of 【「《（
		for _, b := range [][2]string{{"[", "]"}, {"(", ")"}, {"（", "）"}, {"【", "】"}, {"「", "」"}, {"《", "》"}} {
			if inner, ok := strings.CutPrefix(n, b[0]); ok {
				if inner, ok = strings.CutSuffix(inner, b[1]); ok {
					n = strings.TrimSpace(inner)
					if b[0] != "《" && containsAny(lexicon.Simplify(n), placeholderFieldWords) {
						return true
					}
				}
				break
			}
		}
	}
	return isPlaceholderWord(n) || hasXRun(n) || mayHoldMark(s) && containsAny(lexicon.Simplify(s), placeholderMarks)
}

// mayHoldMark is a cheap test before placeholderMarks are searched: s holds a character that
// starts one of them (yy, mm/, dd-, _, the placeholder word, or one of 请填待示样例占位某).
func mayHoldMark(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch r {
			case '请', '請', '填', '待', '示', '样', '樣', '例', '占', '位', '某', '＿':
				return true
			}
			i += size - 1
			continue
		}
		l := c | 0x20
		switch {
		case c == '_':
			return true
		case l == 'y' && i+1 < len(s) && s[i+1]|0x20 == 'y':
			return true
		case (l == 'm' || l == 'd') && i+2 < len(s) && s[i+1]|0x20 == l && (s[i+2] == '-' || s[i+2] == '/'):
			return true
		case l == 'p' && strings.HasPrefix(s[i+1:], "laceholder") || c == 'P' && strings.HasPrefix(s[i+1:], "LACEHOLDER"):
			return true
		}
	}
	return false
}

// isPlaceholderWord looks a word up in placeholderTable, folding ASCII case and separators
// without allocating, and Traditional characters.
func isPlaceholderWord(s string) bool {
	if len(s) > placeholderMax {
		return false
	}
	var buf [64]byte
	n, folded, ascii := 0, false, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c == '/' || c == '%':
			return false // no placeholder word holds a digit: units and numbers end here
		case c == ' ' || c == '_' || c == '-':
			folded = true
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
			folded = true
		case c >= utf8.RuneSelf:
			ascii = false
		}
		buf[n] = c
		n++
	}
	if placeholderTable[s] || folded && placeholderTable[string(buf[:n])] {
		return true
	}
	if ascii {
		return false
	}
	t := lexicon.Simplify(s)
	return t != s && placeholderTable[t]
}

// placeholderTable holds placeholderWords and the name of every field as a template writes it —
// the alias table's keys ("医院名称", "Report Title", "test_name", "检验日期"), folded as normKey
// does — except the bounds' and a text result's (low, high, max may be printed as a result) and
// the list's.
var placeholderTable, placeholderMax = func() (map[string]bool, int) {
	m := make(map[string]bool)
	for _, p := range placeholderWords {
		m[p] = true
	}
	for _, a := range aliases {
		switch a.field {
		case fIndicators, fRefLow, fRefHigh, fValueText, fValueNum, fPrintedFlag, fInRange, fOutRange: // a flag or status word (abnormal, 提示, normal) is a result or a mark, not a template
			continue
		}
		for _, k := range a.keys {
			m[k], m[normKey(k)] = true, true
		}
	}
	longest := 0
	for k := range m {
		longest = max(longest, len(k))
	}
	return m, min(longest+8, 64) // room for the separators folding drops
}()

// hasXRun reports a run of two or more x (or X) standing apart from other Latin letters: XX医院,
// xxx, 20XX; never the x of a multiplier (x10^9/L) or a word (Max).
func hasXRun(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i]|0x20 != 'x' || s[i+1]|0x20 != 'x' {
			continue
		}
		j := i
		for j < len(s) && s[j]|0x20 == 'x' {
			j++
		}
		if (i == 0 || !isLatinLetter(rune(s[i-1]))) && (j == len(s) || !isLatinLetter(rune(s[j]))) {
			return true
		}
		i = j
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// personKeys hold the patient's own data: never read for the report's fields.
var personKeys = []string{"patient", "patientInfo", "患者", "患者信息", "病人", "受检者", "个人信息", "person", "体检者"}

// isPersonKey reports whether a key holds the patient's own data.
func isPersonKey(key string) bool { return personKeySet[normKey(key)] }

var personKeySet = func() map[string]bool {
	m := make(map[string]bool, len(personKeys))
	for _, p := range personKeys {
		m[normKey(p)] = true
	}
	return m
}()

// unitStarts are the characters a unit may start with besides ASCII letters: 45.2%, 6.5×10^9/L,
// 5 个/HP, 12.3 秒. A number followed by anything else (1+, 1:320, 5.6偏高) is text as written.
const unitStarts = "%‰×*μµ个秒次分倍克毫微纳皮升滴岁"

// unitChars are the characters a unit may contain besides ASCII letters and digits.
const unitChars = "%‰×*·^/.-()μµ⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻个秒次分倍克毫微纳皮升滴岁天小时钟"
