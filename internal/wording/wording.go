// Package wording holds the messages of warnings in one table, by code and reason, in each
// language: the producers write the English from it, and the server's translation the others.
// It sits below them all (the review checks, internal/msg), so that neither imports the other.
package wording

import (
	"maps"
	"strings"

	"github.com/ocrdraft/ocrdraft/schema"
)

// Text is the message of one code for one reason, written for the person confirming the draft:
// which item, what looks wrong, what to check. {name} is replaced by the warning's params[name].
// A language is one more column; the params stay the same.
type Text struct {
	Code   schema.WarningCode
	Reason string
	En, Zh string
}

// Texts is the one table of messages, by code and reason.
var Texts = []Text{
	{schema.FlagMismatch, "high",
		"{itemName}: the report marks {value} as high, but it is not above the range {range}. Check the value, the range and the mark.",
		"{itemName}：报告在 {value} 旁标为偏高，但它并未高于参考范围 {range}。请核对原报告上的数值、参考范围和箭头标记。"},
	{schema.FlagMismatch, "low",
		"{itemName}: the report marks {value} as low, but it is not below the range {range}. Check the value, the range and the mark.",
		"{itemName}：报告在 {value} 旁标为偏低，但它并未低于参考范围 {range}。请核对原报告上的数值、参考范围和箭头标记。"},

	{schema.ValueImplausible, "limits",
		"{itemName}: {value} {unit} is outside anything a patient's sample can show ({limitLow}–{limitHigh} {unit}). Check the value (a decimal point lost or added) and the unit.",
		"{itemName}：数值 {value} {unit} 超出该单位下可能的范围（{limitLow}–{limitHigh} {unit}），可能漏读或多读了小数点。请核对原报告上的数值和单位。"},
	{schema.ValueImplausible, "decimal_comma",
		"{itemName}: {value} cannot be a specific gravity (it lies between {limitLow} and {limitHigh}); it was probably printed as {suggested} with a decimal comma. Check the value.",
		"{itemName}：{value} 不可能是比重（比重在 {limitLow} 到 {limitHigh} 之间），原报告可能印的是 {suggested}（以逗号作小数点）。请核对数值。"},
	{schema.ValueImplausible, "tenfold",
		"{itemName}: {value} is {times} times beyond its range {range}, more than this item ever varies. Check the value (a decimal point lost or added) and the range.",
		"{itemName}：数值 {value} 偏离参考范围 {range} 达 {times} 倍，超出该项目可能的变化，可能漏读或多读了小数点。请核对原报告上的数值和参考范围。"},

	{schema.RangeImplausible, "other_unit",
		"{itemName}: the range {refText} is printed in {refUnit}, but the value is in {unit}; its bounds do not apply to the value and were left empty. Check the value's unit and the range.",
		"{itemName}：参考范围 {refText} 的单位是 {refUnit}，而结果的单位是 {unit}，两者不适用，参考范围上下限已留空。请核对结果的单位和参考范围。"},
	{schema.RangeImplausible, "fits_other_unit",
		"{itemName}: the range {range} does not fit {unit}; it looks like a range in {expectedUnit}, so its bounds were left empty. Check the unit and the range.",
		"{itemName}：参考范围 {range} 与单位 {unit} 不符，更像是 {expectedUnit} 下的范围，参考范围上下限已留空。请核对单位和参考范围。"},
	{schema.RangeImplausible, "limits",
		"{itemName}: the range {range} is outside anything possible in {unit} ({limitLow}–{limitHigh}). Check the range and the unit.",
		"{itemName}：参考范围 {range} 超出 {unit} 下可能的范围（{limitLow}–{limitHigh}）。请核对参考范围和单位。"},

	{schema.UnitUnexpected, "unknown",
		"{itemName}: {unit} is not a unit this item is measured in (expected {expectedUnit}). Check the unit, and that the item's name was read right.",
		"{itemName}：该项目不使用单位 {unit}（应为 {expectedUnit}）。请核对单位，以及项目名称是否读对。"},

	{schema.DuplicateRow, "values",
		"{itemName} appears twice in the same section with different values ({otherValue} at {otherPath}, and {value} here). Check which is right, or whether a neighbouring row was read twice.",
		"{itemName} 在同一栏目中出现两次且结果不同（{otherPath} 为 {otherValue}，此处为 {value}）。请核对哪一行正确，或是否把相邻的一行读了两次。"},

	{schema.InconsistentValues, "part",
		"{itemName} ({value}) is higher than {wholeName} ({wholeValue}), of which it is a part. Check both values.",
		"{itemName}（{value}）高于包含它的 {wholeName}（{wholeValue}）。请核对这两项的数值。"},
	{schema.InconsistentValues, "sum",
		"{itemName} ({value}) should be the sum of {partNames} ({expected}). Check these values.",
		"{itemName}（{value}）应等于 {partNames} 之和（{expected}）。请核对这几项的数值。"},
	{schema.InconsistentValues, "ratio",
		"{itemName} ({value}) should be about {expected} from {partNames}. Check these values.",
		"{itemName}（{value}）按 {partNames} 计算应约为 {expected}。请核对这几项的数值。"},
	{schema.InconsistentValues, "percent",
		"The percentages of {partNames} add up to {sum}, not 100. Check these values.",
		"{partNames} 的百分比合计为 {sum}，而不是 100。请核对这几项的数值。"},

	{schema.RangeSexSpecific, "unknown",
		"{itemName}: the range {refText} differs for men and women, and the patient's sex was not given, so its bounds were left empty. Check which range applies.",
		"{itemName}：参考范围 {refText} 男女不同，而未提供受检者性别，参考范围上下限已留空。请确认适用哪一个范围。"},
	{schema.RangeSexSpecific, "chosen",
		"{itemName}: the range {refText} differs for men and women; the {sex} range {range} was used. Check that the patient's sex is right.",
		"{itemName}：参考范围 {refText} 男女不同，已采用{sex}范围 {range}。请确认受检者性别无误。"},
	{schema.RangeSexSpecific, "confirmed",
		"{itemName}: the range {refText} differs for men and women, and the bounds {range} are neither. Check the bounds.",
		"{itemName}：参考范围 {refText} 男女不同，而上下限 {range} 与两者都不符。请核对上下限。"},
	{schema.RangeSexSpecific, "one_sex",
		"{itemName}: the range {refText} is printed for {printedSex} patients only, and the patient's sex was not given, so its bounds were left empty. Check the patient's sex and which range applies.",
		"{itemName}：参考范围 {refText} 只适用于{printedSex}，而未提供受检者性别，参考范围上下限已留空。请确认受检者性别及适用的范围。"},
	{schema.RangeSexSpecific, "one_sex_used",
		"{itemName}: the range {refText} is printed for {printedSex} patients only; the patient is {sex}, so its bounds {range} were used. Check that the patient's sex is right.",
		"{itemName}：参考范围 {refText} 只适用于{printedSex}；受检者为{sex}，已采用该范围 {range}。请确认受检者性别无误。"},
	{schema.RangeSexSpecific, "other_sex",
		"{itemName}: the range {refText} is printed for {printedSex} patients only, and the patient is {sex}, so its bounds were left empty. Check the patient's sex, and the range on the report.",
		"{itemName}：参考范围 {refText} 只适用于{printedSex}，而受检者为{sex}，参考范围上下限已留空。请确认受检者性别，并核对原报告上的参考范围。"},

	{schema.RangeConditionSpecific, "condition",
		"{itemName}: the range {refText} is printed for {condition}, which the patient may not be, so its bounds were left empty. Check which range applies to the patient.",
		"{itemName}：参考范围 {refText} 适用于“{condition}”，不一定适用于本受检者，参考范围上下限已留空。请确认适用于受检者的范围。"},
	{schema.RangeConditionSpecific, "age",
		"{itemName}: the range {refText} differs by age, and the patient's age is not known here, so its bounds were left empty. Check which range applies to the patient's age.",
		"{itemName}：参考范围 {refText} 随年龄不同，而此处不知受检者年龄，参考范围上下限已留空。请确认适用于受检者年龄的范围。"},
	{schema.RangeConditionSpecific, "several",
		"{itemName}: the range {refText} gives several different ranges and does not say which is the patient's, so its bounds were left empty. Check which range applies.",
		"{itemName}：参考范围 {refText} 给出了几个不同的范围，未说明哪一个适用于受检者，参考范围上下限已留空。请确认适用的范围。"},
	{schema.RangeConditionSpecific, "confirmed",
		"{itemName}: the range {refText} gives different ranges by condition or age, and the bounds {range} are none of them. Check the bounds.",
		"{itemName}：参考范围 {refText} 按不同情况给出不同范围，而上下限 {range} 与其中任何一个都不符。请核对上下限。"},

	{schema.ValueNotOnPage, "missing",
		"{itemName}: {value}, as the model read it, is not printed on page {page} of the PDF. Check it against the page.",
		"{itemName}：模型读出的 {value} 在 PDF 第 {page} 页上找不到。请对照该页核对。"},
	{schema.ValueNotOnPage, "offRow",
		"{itemName}: {value}, as the model read it, is printed on page {page} of the PDF, but not on the line of {itemName}, whose other numbers are there: it may be another row's value. Check it against the page.",
		"{itemName}：模型读出的 {value} 在 PDF 第 {page} 页上出现，但不在“{itemName}”这一行（该行的其他数字都在那一行），可能是别的项目的结果。请对照该页核对。"},
}

// Message is the English message of code for reason, filled from params. {range} is refLow–
// refHigh (≤ refHigh, ≥ refLow with one bound); a missing unit is left out, any other missing
// param renders as "?", so a message never silently says less than it means.
func Message(code schema.WarningCode, reason string, params map[string]string) string {
	for _, t := range Texts {
		if t.Code == code && t.Reason == reason {
			return fill(t.En, params)
		}
	}
	return string(code)
}

// Localized is w's message in lang ("zh"; any other is English, w's own), for a warning of
// the table: its code and Reason name the row of Texts. false when w is not one of them.
func Localized(w schema.Warning, lang string) (string, bool) {
	if lang != "zh" || w.Reason == "" {
		return w.Message, false
	}
	for _, t := range Texts {
		if t.Code == w.Code && t.Reason == w.Reason {
			return fillZh(t.Zh, w.Params), true
		}
	}
	return w.Message, false
}

// sexZh names a check.Sex (check.Male, check.Female) in Chinese, for {sex}.
var sexZh = map[string]string{"male": "男性", "female": "女性"}

func fillZh(tmpl string, params map[string]string) string {
	for _, k := range [...]string{"sex", "printedSex"} {
		if s, ok := sexZh[params[k]]; ok {
			p := maps.Clone(params)
			p[k] = s
			params = p
		}
	}
	s := fill(tmpl, params)
	for _, r := range [][2]string{{" ）", "）"}, {" ，", "，"}, {" 。", "。"}, {"（ ", "（"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

func fill(tmpl string, params map[string]string) string {
	var b strings.Builder
	b.Grow(len(tmpl) + 32)
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			break
		}
		b.WriteString(tmpl[:i])
		b.WriteString(param(params, tmpl[i+1:i+j]))
		tmpl = tmpl[i+j+1:]
	}
	s := b.String()
	for _, r := range [][2]string{{"  ", " "}, {" )", ")"}, {" .", "."}, {" ;", ";"}, {" ,", ","}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return strings.TrimSpace(s)
}

func param(params map[string]string, k string) string {
	if k == "range" {
		lo, hi := params["refLow"], params["refHigh"]
		switch {
		case lo != "" && hi != "":
			return lo + "–" + hi
		case hi != "":
			return "≤ " + hi
		case lo != "":
			return "≥ " + lo
		}
		return "?"
	}
	if v := params[k]; v != "" {
		return v
	}
	if k == "unit" || k == "refUnit" {
		return ""
	}
	return "?"
}
