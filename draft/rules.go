package draft

import (
	"cmp"
	"slices"
	"strings"
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
	numFields
)

// aliases lists, per field, the keys that mean it; the first is the contract's own name. Keys
// match after normKey, so item_name, ItemName, item-name and "item name" are all itemName. When
// an object has several keys for one field, the one listed first here wins.
var aliases = []struct {
	field field
	keys  []string
}{
	{fTitle, []string{"title", "标题", "报告名称", "reportTitle", "报告标题", "reportName", "报告类型"}},
	{fHospital, []string{"hospital", "医院", "医院名称", "institution", "hospitalName", "机构", "医疗机构", "检验机构", "送检医院", "institutionName", "facility"}},
	{fCheckupDate, []string{"checkupDate", "date", "reportDate", "检查日期", "报告日期", "采样日期", "体检日期", "检验日期", "送检日期", "采集日期", "日期", "sampleDate", "collectionDate", "testDate", "examDate", "dateOfReport", "dateOfTest", "dateOfCollection", "reportTime", "检验时间", "报告时间", "采样时间"}},
	{fReportYear, []string{"reportYear", "year", "年份"}},
	{fIndicators, []string{"indicators", "items", "results", "指标", "检验项目列表", "项目列表", "检验结果列表", "indicatorList", "检验结果", "检查结果", "结果列表", "labResults", "testResults", "tests"}},
	{fItemName, []string{"itemName", "name", "item", "indicator", "项目", "项目名称", "检验项目", "指标名称", "indicatorName", "testName", "test", "检查项目", "检测项目", "化验项目", "项目名", "名称", "中文名称"}},
	{fItemGroup, []string{"itemGroup", "group", "category", "分组", "类别", "groupName", "panel", "组别", "分类", "检查类别"}},
	{fValueNum, []string{"valueNum", "numericValue", "valueNumber"}},
	{fValueText, []string{"valueText", "textValue"}},
	{fValue, []string{"value", "result", "结果", "检验结果", "测定值", "检测值", "数值", "测定结果", "检测结果", "检查结果", "结果值", "resultValue"}},
	{fUnit, []string{"unit", "单位", "units", "计量单位"}},
	{fRefLow, []string{"refLow", "referenceLow", "low", "lower", "min", "参考下限", "下限"}},
	{fRefHigh, []string{"refHigh", "referenceHigh", "high", "upper", "max", "参考上限", "上限"}},
	{fRefRange, []string{"refText", "refRange", "referenceRange", "range", "reference", "参考范围", "参考值", "参考区间", "ref", "normalRange", "referenceInterval", "正常范围", "正常值", "参考范围值", "参考标准", "referenceValue"}},
	{fPrintedFlag, []string{"printedFlag", "flag", "abnormalFlag", "提示", "标志", "异常标志", "异常提示", "结果提示", "abnormal", "h/l", "状态", "flags", "高低"}},
}

// draftFields and itemFields say which fields each level reads; the same key can mean different
// things at each level ("指标" is the list at the top and a name inside an item).
var (
	draftFields = map[field]bool{fTitle: true, fHospital: true, fCheckupDate: true, fReportYear: true, fIndicators: true}
	itemFields  = map[field]bool{fItemName: true, fItemGroup: true, fValueNum: true, fValueText: true, fValue: true, fUnit: true, fRefLow: true, fRefHigh: true, fRefRange: true, fIndicators: true, fPrintedFlag: true}
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

// normKey folds case and drops separators: "Item_Name", "item-name" and "item name" → "itemname".
func normKey(k string) string {
	k = strings.TrimSpace(k)
	if i := strings.IndexAny(k, "(（"); i > 0 { // itemName(项目名称): the annotation is not the key
		k = strings.TrimSpace(k[:i])
	}
	simple := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == ' ' {
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
		case r == '_' || r == '-' || r == ' ':
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

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

// narrow maps full-width forms (Ｕ+FF01–FF5E: １２．５, ｍｍｏｌ／Ｌ, ＜, ～) and the ideographic
// space to ASCII, for numbers, units, dates and ranges; text that is not a number keeps its own
// spelling.
func narrow(s string) string {
	wide := false
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E || r == 0x3000 || r == '∼' || r == '−' || r == '﹣' {
			wide = true
			break
		}
	}
	if !wide {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			return r - 0xFEE0
		case r == 0x3000:
			return ' '
		case r == '∼':
			return '~'
		case r == '−' || r == '﹣': // the minus sign and the small hyphen-minus
			return '-'
		}
		return r
	}, s)
}

// rangeSeparators stand between the bounds of a two-sided reference range: 3.9-6.1, 3.9~6.1,
// 3.9—6.1, 3.9至6.1.
// "--" is tried only when "-" would read the upper bound as negative (3.5--5.5), so that -3--1
// stays -3 to -1.
var rangeSeparators = []string{"-", "--", "~", "—", "–", "―", "至", "到"}

// rangeBrackets may enclose a range: (2.11-2.52), [3.5-5.5], （3.5-5.5）.
var rangeBrackets = [][2]string{{"(", ")"}, {"[", "]"}, {"（", "）"}, {"【", "】"}}

// pageKeys name a list of whole pages in one reply: {"pages": [{…}, {…}]}.
var pageKeys = []string{"pages", "page", "页面", "页"}

// rangeLabels may stand before a range: 参考值：40-55.
var rangeLabels = []string{"参考值", "参考范围", "参考区间", "正常值", "正常范围", "Ref", "ref", "Reference", "reference"}

// wrapQuotes are quotes a model sometimes wraps a whole value in: '5.6', "6.2", “阴性”.
var wrapQuotes = [][2]string{{"'", "'"}, {`"`, `"`}, {"“", "”"}, {"‘", "’"}, {"「", "」"}}

// timeOfDay words may stand for the time part of a date: 2026年3月5日 上午.
var timeOfDay = []string{"上午", "下午", "中午", "晚上", "早上", "凌晨", "AM", "PM", "am", "pm"}

// placeholderNames are what a format example puts where an item's name goes. A model that echoes
// the example before its answer must not have the example's rows read as results.
var placeholderNames = []string{
	"string", "str", "text", "name", "itemname", "item", "indicator", "example", "sample", "xxx", "...", "…", "todo",
	"项目", "项目名称", "指标名称", "名称", "示例", "样例", "检验项目名称",
}

// isPlaceholder reports whether an item name is a placeholder: one of placeholderNames, bare or
// in brackets (<itemName>, [名称]).
func isPlaceholder(name string) bool {
	if len(name) > 24 { // longer than any placeholder, brackets included: most real names
		return false
	}
	n := strings.Trim(strings.TrimSpace(name), "<>[]{}()'\"`") // an ASCII set: the fast Trim
	for _, b := range [][2]string{{"「", "」"}, {"【", "】"}, {"《", "》"}} {
		if inner, ok := strings.CutPrefix(n, b[0]); ok {
			n, _ = strings.CutSuffix(inner, b[1])
		}
	}
	return placeholderSet[n] || placeholderSet[strings.ToLower(n)]
}

var placeholderSet = func() map[string]bool {
	m := make(map[string]bool, len(placeholderNames))
	for _, p := range placeholderNames {
		m[p] = true
	}
	return m
}()

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

// rangeBounds are the one-sided notations: <5.2 gives refHigh only, ≥1.04 refLow only.
var rangeBounds = []struct {
	prefix string
	high   bool // the number is the upper bound
}{
	{"<=", true}, {"≤", true}, {"≦", true}, {"<", true}, {"小于等于", true}, {"小于", true}, {"低于", true},
	{">=", false}, {"≥", false}, {"≧", false}, {">", false}, {"大于等于", false}, {"大于", false}, {"高于", false},
}

// unitStarts are the characters a unit may start with besides ASCII letters: 45.2%, 6.5×10^9/L,
// 5 个/HP, 12.3 秒. A number followed by anything else (1+, 1:320, 5.6偏高) is text as written.
const unitStarts = "%‰×*μµ个秒次分倍克毫微纳皮升滴岁"

// unitChars are the characters a unit may contain besides ASCII letters and digits.
const unitChars = "%‰×*·^/.-()μµ⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻个秒次分倍克毫微纳皮升滴岁天小时钟"
