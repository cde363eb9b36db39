// Package msg writes warnings' messages in the language of the person confirming the draft.
// A producer (draft/, check/, extract/) makes a warning with New: a code, a reason and params,
// its English message from the one table (Rows). The answer is rendered again at the end, in the
// caller's language, from the same row (Localize): a message is never read back, so rewording one
// sentence changes only that sentence, and a new language is one more column of Rows.
//
// msg imports nothing but schema, so that every producer and the server can import it.
package msg

import (
	"fmt"
	"strconv"
	"strings"

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

// New is a warning of code for reason, about path (nil: the whole draft) on page (nil: unknown),
// with its params; its message is the English one of its row in Rows.
func New(code schema.WarningCode, reason string, path *string, page *int, params map[string]string) schema.Warning {
	w := schema.Warning{Code: code, Reason: reason, Path: path, Page: page, Params: params}
	w.Message = Text(w, En)
	return w
}

// Localize returns ws with their messages rendered in lang from their rows; ws is not changed.
// A warning without a row (none is made so: see the table test) keeps its message.
func Localize(ws []schema.Warning, lang string) []schema.Warning {
	if len(ws) == 0 {
		return ws
	}
	out := make([]schema.Warning, len(ws))
	for i, w := range ws {
		if r := rowOf(w.Code, w.Reason); r != nil {
			w.Message, _ = render(r, w, lang)
		}
		out[i] = w
	}
	return out
}

// Text is w's message in lang (Zh, else English) from its row; its code when it has none.
func Text(w schema.Warning, lang string) string {
	r := rowOf(w.Code, w.Reason)
	if r == nil {
		return string(w.Code)
	}
	s, _ := render(r, w, lang)
	return s
}

type key struct {
	code   schema.WarningCode
	reason string
}

// index finds a row by code and reason; a row of code "" stands for every code.
var index = func() map[key]*Row {
	m := make(map[key]*Row, len(Rows))
	for i := range Rows {
		r := &Rows[i]
		k := key{r.Code, r.Reason}
		if m[k] != nil {
			panic("msg: two rows for " + string(r.Code) + "/" + r.Reason)
		}
		m[k] = r
	}
	return m
}()

func rowOf(code schema.WarningCode, reason string) *Row {
	if r := index[key{code, reason}]; r != nil {
		return r
	}
	return index[key{"", reason}]
}

// render fills r's template in lang from w, and says which params it needed and did not have.
func render(r *Row, w schema.Warning, lang string) (string, []string) {
	tmpl := r.En
	if lang == Zh {
		tmpl = r.Zh
	}
	var missing []string
	var b strings.Builder
	b.Grow(len(tmpl) + 64)
	// opt is where an optional part [ … ] began in b, -1 outside one; optMissing whether a param
	// in it is missing.
	opt, optMissing := -1, false
	for i := 0; i < len(tmpl); {
		switch c := tmpl[i]; {
		case c == '[':
			opt, optMissing = b.Len(), false
			i++
		case c == ']' && opt >= 0:
			if optMissing {
				s := b.String()[:opt]
				b.Reset()
				b.WriteString(s)
			}
			opt = -1
			i++
		case c == '{':
			j := strings.IndexByte(tmpl[i:], '}')
			if j < 0 {
				b.WriteString(tmpl[i:])
				i = len(tmpl)
				continue
			}
			name := tmpl[i+1 : i+j]
			v, ok := fact(w, name, lang)
			switch {
			case ok:
				b.WriteString(v)
			case opt >= 0:
				optMissing = true
			default:
				missing = append(missing, name)
				b.WriteString("?")
			}
			i += j + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	s := b.String()
	tidy := tidyEn
	if lang == Zh {
		tidy = tidyZh
	}
	for _, r := range tidy {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return strings.TrimSpace(s), missing
}

var (
	tidyEn = [][2]string{{"  ", " "}, {" )", ")"}, {" .", "."}, {" ;", ";"}, {" ,", ","}}
	tidyZh = [][2]string{{" ）", "）"}, {" ，", "，"}, {" 。", "。"}, {"（ ", "（"}}
)

// fact is the value of {name} for w in lang: its params[name], with the sexes named in lang;
// else what every warning's page, path and bounds say — page, range (refLow–refHigh, ≤ refHigh,
// ≥ refLow), fieldName (of params.field or the path's last field), subject (the field as spoken
// of: the item's, on a row) and place (a dropped item's place in the reply).
func fact(w schema.Warning, name, lang string) (string, bool) {
	if v := w.Params[name]; v != "" {
		if name == "sex" || name == "printedSex" {
			if s, ok := sexes[lang][v]; ok {
				return s, true
			}
		}
		return v, true
	}
	switch name {
	case "page":
		if w.Page != nil {
			return strconv.Itoa(*w.Page), true
		}
	case "range":
		lo, hi := w.Params["refLow"], w.Params["refHigh"]
		switch {
		case lo != "" && hi != "":
			return lo + "–" + hi, true
		case hi != "":
			return "≤ " + hi, true
		case lo != "":
			return "≥ " + lo, true
		}
	case "fieldName":
		f := fieldName(w, lang)
		return f, f != ""
	case "subject":
		f := fieldName(w, lang)
		if f == "" {
			return "", false
		}
		onRow := w.Path != nil && strings.Contains(*w.Path, "indicators[")
		item := w.Params["itemName"]
		switch {
		case onRow && item == "":
			return "", false
		case onRow && lang == Zh:
			return item + "的" + f, true
		case onRow:
			return item + ": the " + f, true
		case lang == Zh:
			return f, true
		}
		return "The " + f, true
	case "place":
		if w.Path == nil {
			return "", false
		}
		return placeText(*w.Path, lang), true
	}
	return "", false
}

// sexes names a schema.Sex in each language, for {sex} and {printedSex}.
var sexes = map[string]map[string]string{
	Zh: {string(schema.SexMale): "男性", string(schema.SexFemale): "女性"},
}

// fieldNames names the draft's fields for the person confirming, in each language.
var fieldNames = map[string]map[string]string{
	En: {
		"title": "report title", "hospital": "hospital", "checkupDate": "checkup date", "reportYear": "report year",
		"indicators": "results", "itemName": "item name", "itemGroup": "group", "valueNum": "result",
		"valueText": "result", "unit": "unit", "refLow": "lower reference bound", "refHigh": "upper reference bound",
		"refText": "reference range", "printedFlag": "abnormality mark",
	},
	Zh: {
		"title": "报告标题", "hospital": "医院", "checkupDate": "体检日期", "reportYear": "报告年份",
		"indicators": "检验项目", "itemName": "项目名称", "itemGroup": "分组", "valueNum": "结果",
		"valueText": "结果", "unit": "单位", "refLow": "参考范围下限", "refHigh": "参考范围上限",
		"refText": "参考范围", "printedFlag": "异常标记",
	},
}

// fieldName names the field w is about in lang: params.field, else its path's last field.
func fieldName(w schema.Warning, lang string) string {
	field := w.Params["field"]
	if field == "" && w.Path != nil {
		path := *w.Path
		field = path[strings.LastIndexByte(path, '.')+1:]
		if i := strings.IndexByte(field, '['); i >= 0 {
			field = field[:i]
		}
	}
	names := fieldNames[lang]
	if names == nil {
		names = fieldNames[En]
	}
	return names[field]
}

// placeText says where in the reply a dropped item was: its list and number (in a group, the
// top item the group is in), else its path.
func placeText(path string, lang string) string {
	list, i, ok := place(path)
	if lb := strings.IndexByte(list, '['); ok && lb >= 0 { // a group's list: indicators[0].items
		outer, o, top := place(list[:strings.IndexByte(list[lb:], ']')+lb+1])
		if top {
			n, m := strconv.Itoa(i+1), strconv.Itoa(o+1)
			if lang == Zh {
				return outer + "第 " + m + " 项所含分组的第 " + n + " 项"
			}
			if outer != "" {
				return "item " + n + " of the group in item " + m + " of " + outer
			}
			return "item " + n + " of the group in item " + m
		}
	}
	switch {
	case !ok && lang == Zh:
		return "位置 " + path
	case !ok:
		return "at " + path
	case lang == Zh:
		return list + "第 " + strconv.Itoa(i+1) + " 项"
	case list != "":
		return "item " + strconv.Itoa(i+1) + " of " + list
	}
	return "item " + strconv.Itoa(i+1)
}

// place reads a dropped item's place in the reply, [pages[k].]list[i]: the list's name ("" for
// indicators) and i.
func place(path string) (list string, i int, ok bool) {
	path = strings.TrimPrefix(path, "reply.")
	if rest, cut := strings.CutPrefix(path, "pages["); cut {
		if _, after, found := strings.Cut(rest, "]."); found {
			path = strings.TrimPrefix(after, "reply.")
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
