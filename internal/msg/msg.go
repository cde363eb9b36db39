// Package msg writes warnings' messages in the language of the person confirming the draft.
// Warnings are made in English where they are found (draft/, check/, extract/); the answer is
// localised once, at render time, from each warning's code, params and English message, so that
// a new language is one more table here and no producer changes.
package msg

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/internal/wording"
	"github.com/ocrdraft/ocrdraft/schema"
)

// The languages messages are written in.
const (
	En = "en"
	Zh = "zh"
)

// Default is the language when neither the caller nor the deployment chooses one (OCR_LANG).
const Default = "zh-CN"

// Parse validates a configured language tag (OCR_LANG, -lang) and returns the language it
// selects: zh, zh-CN, zh-Hans … → zh; en, en-US … → en.
func Parse(tag string) (string, error) {
	if l := base(tag); l != "" {
		return l, nil
	}
	return "", fmt.Errorf("language %q: want zh-CN, zh, zh-TW or en", tag)
}

// base is the language of one tag, or "" when it is not one messages are written in.
func base(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	prim, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	switch prim {
	case "zh":
		return Zh
	case "en":
		return En
	}
	return ""
}

// FromAcceptLanguage picks the language of an Accept-Language header: the supported language
// with the highest q (the first listed on a tie; q=0 refuses), else def. "*" stands for def.
func FromAcceptLanguage(header, def string) string {
	best, bestQ := "", 0.0
	for part := range strings.SplitSeq(header, ",") {
		tag, params, _ := strings.Cut(part, ";")
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0
				}
				q = f
			}
		}
		l := base(tag)
		if strings.TrimSpace(tag) == "*" {
			l = def
		}
		if l != "" && q > bestQ {
			best, bestQ = l, q
		}
	}
	if best == "" {
		return def
	}
	return best
}

// Localize returns ws with their messages in lang (En leaves them as they are). d is the draft
// the warnings are about: a path that starts with indicators[ names its row, whose item name the
// message then speaks of. Params are never changed; a template whose params are missing gives
// way to a shorter one of the same code, and the last one of each code needs none.
func Localize(ws []schema.Warning, d *schema.OcrDraft, lang string) []schema.Warning {
	if lang != Zh || len(ws) == 0 {
		return ws
	}
	out := make([]schema.Warning, len(ws))
	for i, w := range ws {
		if m, ok := wording.Localized(w, lang); ok {
			w.Message = m
		} else {
			w.Message = zh(w, d)
		}
		out[i] = w
	}
	return out
}

// row is one Chinese message of a code not made by check/: its English message matches re (nil:
// any), whose named groups are params too; any code when code is "".
type row struct {
	code schema.WarningCode
	re   *regexp.Regexp
	zh   string
}

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// rows is the one table of Chinese messages for the warnings of draft/ and extract/, tried in
// order: the first whose code, pattern and params all fit is used.
var rows = []row{
	{"", re(`^(?P<count>\d+) more warnings of this kind are not listed`), "另有 {count} 条同类提示未逐条列出。"},

	{schema.IndicatorDropped, re(`^(?P<count>\d+) values or items in the model's reply were not read`), "模型回复中有 {count} 个数值或项目超出单次回复的处理量，未能读取。请对照原报告检查是否漏项。"},
	{schema.IndicatorDropped, re(`another draft with rows not in the one read \((?P<count>\d+): (?P<names>.*)\);`), "模型回复中还有另一份结果，其中 {count} 项（{names}）不在已读取的结果中，未予读取。请对照原报告检查这些项目。"},
	{schema.IndicatorDropped, re(`^no indicator list was found; values under (?P<keys>.*) were not read`), "未找到检验项目列表，{keys} 下的内容未作为检验结果读取。请对照原报告检查。"},
	{schema.IndicatorDropped, re(`^indicators is (text, )?not a list`), "模型回复中的检验项目不是列表，未能读取任何项目。请对照原报告录入。"},
	{schema.IndicatorDropped, re(`^item has no name`), "模型回复中有一项没有项目名称，已略去（{place}）。请对照原报告检查是否漏项。"},
	{schema.IndicatorDropped, nil, "模型回复中有一项无法使用，已略去（{place}）。请对照原报告检查是否漏项。"},
	{schema.IndicatorDropped, nil, "模型回复中有内容无法使用，已略去。请对照原报告检查是否漏项。"},

	{schema.OutputTruncated, nil, "模型的回复被截断：截断时正在写的一项及其后的项目均缺失。请对照原报告补全。"},

	{schema.ReferenceRangeSwapped, nil, "{itemName}：参考范围 {refLow}–{refHigh} 的上下限顺序颠倒，已对调。请核对原报告上的参考范围。"},
	{schema.ReferenceRangeSwapped, nil, "参考范围 {refLow}–{refHigh} 的上下限顺序颠倒，已对调。请核对原报告上的参考范围。"},
	{schema.ReferenceRangeSwapped, nil, "参考范围的上下限顺序颠倒，已对调。请核对原报告上的参考范围。"},

	{schema.InvalidDate, re(`has no day`), "{subject}“{value}”没有写明日，只保留了年份，日期已置空。请核对原报告上的日期。"},
	{schema.InvalidDate, re(`is ambiguous`), "{subject}“{value}”可以有不止一种读法（日、月顺序或两位年份不确定），已置空。请核对原报告上的日期。"},
	{schema.InvalidDate, nil, "{subject}“{value}”不是有效的日期，已置空。请核对原报告上的日期。"},
	{schema.InvalidDate, nil, "有一个日期不是有效的日期，已置空。请核对原报告上的日期。"},

	{schema.InvalidValue, re(`^"(?P<value>.*)" is a placeholder`), "{subject}“{value}”是格式模板中的占位符，不是报告内容，已置空。请对照原报告填写。"},
	{schema.InvalidValue, re(`^reference range .* could not be read`), "{itemName}：参考范围“{refText}”无法识别，上下限已置空。请核对原报告上的参考范围。"},
	{schema.InvalidValue, re(`is not a year`), "报告年份“{value}”不是有效的年份，已置空。请核对原报告。"},
	{schema.InvalidValue, re(`is not a number`), "{itemName}：结果“{value}”不是数字，已置空。请核对原报告上的结果。"},
	{schema.InvalidValue, re(`is not a result`), "{itemName}：“{value}”不是检验结果，已置空。请核对原报告上的结果。"},
	{schema.InvalidValue, re(`is not an abnormality mark`), "{itemName}：“{value}”不是异常标记（↑、↓ 等），已置空。请核对原报告上的标记。"},
	{schema.InvalidValue, re(`is not a bound`), "{subject}“{value}”无法识别，已置空。请核对原报告上的参考范围。"},
	{schema.InvalidValue, re(`is not text`), "{subject}“{value}”不是文字，已置空。请核对原报告。"},
	{schema.InvalidValue, re(`is not text`), "{subject}不是文字，已置空。请对照原报告核对。"},
	{schema.InvalidValue, re(`is not a (result|number)`), "{itemName}：结果无法读取，已置空。请对照原报告核对结果。"},
	{schema.InvalidValue, re(`is longer than (?P<max>\d+) characters`), "{subject}超过 {max} 个字，已置空。请对照原报告填写。"},
	{schema.InvalidValue, re(`is (less|greater) than`), "{subject}超出允许的范围，已置空。请核对原报告。"},
	{schema.InvalidValue, nil, "{subject}无法确定，已置空。请对照原报告核对。"},
	{schema.InvalidValue, nil, "有一项内容无法确定，已置空。请对照原报告核对。"},

	{schema.PageConflict, nil, "第 {page} 页的{fieldName}为“{value}”，与前面页面的“{kept}”不同，已保留前面页面的内容。请核对原报告。"},
	{schema.PageConflict, nil, "后面某页的报告信息与前面页面不同，已保留前面页面的内容。请核对原报告。"},

	{schema.DuplicateIndicator, nil, "{itemName}：第 {page} 页的这一项与第 {firstPage} 页的一项完全相同，已作为重复项去除。"},
	{schema.DuplicateIndicator, nil, "有一项与前面页面的一项完全相同，已作为重复项去除。"},

	{schema.PageFailed, nil, "第 {page} 页未能读取（{code}），该页的项目缺失。请重新拍摄该页，或对照原报告录入。"},
	{schema.PageFailed, nil, "有一页未能读取，该页的项目缺失。请重新拍摄该页，或对照原报告录入。"},

	{schema.UnitConflict, nil, "{itemName}：结果“{value}”带有单位 {valueUnit}，而项目的单位是 {unit}，已保留 {unit}。请核对哪个单位正确。"},
	{schema.UnitConflict, nil, "有一项结果所带的单位与项目的单位不同，已保留项目的单位。请核对哪个单位正确。"},

	{schema.OutputInterrupted, re(`finish reason (?P<finishReason>\S+),`), "模型未正常结束回复（结束原因：{finishReason}），已保留它写出的内容，但可能缺少项目。请对照原报告检查。"},
	{schema.OutputInterrupted, nil, "模型未正常结束回复，已保留它写出的内容，但可能缺少项目。请对照原报告检查。"},

	{schema.ReplyTooLong, re(`longer than the (?P<kb>\d+) KB`), "模型的回复超过服务读取的上限（{kb} KB），只读取了开头部分，其后的项目缺失。请对照原报告补全。"},
	{schema.ReplyTooLong, nil, "模型的回复超过服务读取的上限，只读取了开头部分，其后的项目缺失。请对照原报告补全。"},

	// The review checks have their texts in internal/wording; these stand in for one whose
	// params were changed on the way (wording.Localized then does not recognise it).
	{schema.FlagMismatch, nil, "{itemName}：报告印的异常标记与结果和参考范围不符。请核对原报告上的数值、参考范围和标记。"},
	{schema.ValueImplausible, nil, "{itemName}：结果 {value} 对该项目不可能成立，可能漏读或多读了小数点。请核对原报告上的数值和单位。"},
	{schema.RangeImplausible, nil, "{itemName}：参考范围与结果的单位不符或超出可能的范围。请核对原报告上的参考范围和单位。"},
	{schema.UnitUnexpected, nil, "{itemName}：该项目不使用单位 {unit}。请核对单位，以及项目名称是否读对。"},
	{schema.DuplicateRow, nil, "{itemName} 在同一栏目中出现两次且结果不同。请核对哪一行正确。"},
	{schema.InconsistentValues, nil, "{itemName} 与相关项目的数值不可能同时成立。请核对这几项的数值。"},
	{schema.RangeSexSpecific, nil, "{itemName}：参考范围按性别给出。请确认受检者性别和所用的参考范围。"},
	{schema.RangeConditionSpecific, nil, "{itemName}：参考范围按年龄、孕期或生理周期等情况给出，上下限已留空。请确认适用于受检者的参考范围。"},
	{schema.ValueNotOnPage, nil, "{itemName}：模型读出的数值在 PDF 该页上找不到。请对照该页核对。"},
	{schema.FlagMismatch, nil, "报告印的异常标记与结果和参考范围不符。请核对原报告上的数值、参考范围和标记。"},
	{schema.ValueImplausible, nil, "有一项结果对该项目不可能成立，可能漏读或多读了小数点。请核对原报告上的数值和单位。"},
	{schema.RangeImplausible, nil, "有一项参考范围与结果的单位不符或超出可能的范围。请核对原报告上的参考范围和单位。"},
	{schema.UnitUnexpected, nil, "有一项的单位不是该项目使用的单位。请核对单位，以及项目名称是否读对。"},
	{schema.DuplicateRow, nil, "有一个项目在同一栏目中出现两次且结果不同。请核对哪一行正确。"},
	{schema.InconsistentValues, nil, "几项相关的数值不可能同时成立。请核对这几项的数值。"},
	{schema.RangeSexSpecific, nil, "有一项参考范围按性别给出。请确认受检者性别和所用的参考范围。"},
	{schema.RangeConditionSpecific, nil, "有一项参考范围按年龄、孕期或生理周期等情况给出，上下限已留空。请确认适用于受检者的参考范围。"},
	{schema.ValueNotOnPage, nil, "有一个模型读出的数值在 PDF 该页上找不到。请对照该页核对。"},
}

// fieldNames names the draft's fields for the person confirming.
var fieldNames = map[string]string{
	"title": "报告标题", "hospital": "医院", "checkupDate": "体检日期", "reportYear": "报告年份",
	"indicators": "检验项目", "itemName": "项目名称", "itemGroup": "分组", "valueNum": "结果",
	"valueText": "结果", "unit": "单位", "refLow": "参考范围下限", "refHigh": "参考范围上限",
	"refText": "参考范围", "printedFlag": "异常标记",
}

// place reads a dropped item's place in the reply, [pages[k].]list[i]: the list's name ("" for
// indicators) and i.
func place(path string) (list string, i int, ok bool) {
	if rest, cut := strings.CutPrefix(path, "pages["); cut {
		if _, after, found := strings.Cut(rest, "]."); found {
			path = after
		}
	}
	lb := strings.LastIndexByte(path, '[')
	if lb <= 0 || !strings.HasSuffix(path, "]") {
		return "", 0, false
	}
	i, err := strconv.Atoi(path[lb+1 : len(path)-1])
	if err != nil || i < 0 {
		return "", 0, false
	}
	if list = path[:lb]; list == "indicators" {
		list = ""
	}
	return list, i, true
}

// zh is w's message in Chinese from rows; w's English message when no row fits.
func zh(w schema.Warning, d *schema.OcrDraft) string {
	p := facts(w, d)
	for _, r := range rows {
		if r.code != "" && r.code != w.Code {
			continue
		}
		var got map[string]string
		if r.re != nil {
			m := r.re.FindStringSubmatch(w.Message)
			if m == nil {
				continue
			}
			for i, name := range r.re.SubexpNames() {
				if name != "" {
					if got == nil {
						got = map[string]string{}
					}
					got[name] = m[i]
				}
			}
		}
		if s, ok := fill(r.zh, got, p); ok {
			return s
		}
	}
	return w.Message
}

// facts are w's params with what its page and path say: page, path, field (the field's name),
// itemName of the row a path indicators[i] names, and subject (the item's field, as spoken of).
func facts(w schema.Warning, d *schema.OcrDraft) map[string]string {
	p := make(map[string]string, len(w.Params)+6)
	for k, v := range w.Params {
		if v != "" {
			p[k] = v
		}
	}
	if w.Page != nil && p["page"] == "" {
		p["page"] = strconv.Itoa(*w.Page)
	}
	if w.Path == nil {
		return p
	}
	path := *w.Path
	p["path"] = path
	p["place"] = "位置 " + path
	if list, i, ok := place(path); ok {
		p["place"] = list + "第 " + strconv.Itoa(i+1) + " 项"
	}
	field := path[strings.LastIndexByte(path, '.')+1:]
	if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i]
	}
	if f := p["field"]; f != "" {
		field = f
	}
	name := fieldNames[field]
	if name != "" {
		p["fieldName"] = name
	}
	if rest, ok := strings.CutPrefix(path, "indicators["); ok && d != nil && p["itemName"] == "" {
		n, _, _ := strings.Cut(rest, "]")
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(d.Indicators) {
			p["itemName"] = d.Indicators[i].ItemName
		}
	}
	switch {
	case name == "":
	case p["itemName"] != "" && strings.Contains(path, "indicators["):
		p["subject"] = p["itemName"] + "的" + name
	case !strings.Contains(path, "indicators["):
		p["subject"] = name
	}
	return p
}

// fill fills tmpl's {name}s from got, then p; false when one is missing.
func fill(tmpl string, got, p map[string]string) (string, bool) {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String(), true
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String(), true
		}
		k := tmpl[i+1 : i+j]
		v := got[k]
		if v == "" {
			v = p[k]
		}
		if v == "" {
			return "", false
		}
		b.WriteString(tmpl[:i])
		b.WriteString(v)
		tmpl = tmpl[i+j+1:]
	}
}
