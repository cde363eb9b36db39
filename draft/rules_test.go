package draft

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// fence is a Markdown code fence; raw strings cannot hold one.
const fence = "```"

// Expected drafts are JSON literals that name only the fields that are not null: every other
// field of the draft and of each indicator is filled in as null before comparing. Numbers are
// compared as the digits written (json.Number), so 1.020 in a want does not match 1.02.
//
// Evidence filled by code is compared only where the want names it: analyte (the lexicon's, tested
// there) and refText (the range as printed, named by every test about it); page defaults to 1.
//
// Expected warnings are "code@path", or just "code" when the spec leaves the path open; a bare
// code matches a warning with that code whatever its path.

// indicatorKeys are every key of an indicator, from the contract type itself.
var indicatorKeys = func() []string {
	var keys []string
	for f := range reflect.TypeFor[schema.OcrIndicator]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}()

var draftKeys = []string{"title", "hospital", "checkupDate", "reportYear"}

// decodeJSON decodes a want literal for comparison: numbers as json.Number.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON in test table: %v\n%s", err, s)
	}
	return v
}

// decodeValue decodes an input like the parser does: numbers as written.
func decodeValue(t *testing.T, s string) parse.Value {
	t.Helper()
	v, err := parse.Decode(s)
	if err != nil {
		t.Fatalf("bad JSON in test table: %v\n%s", err, s)
	}
	return v
}

// roundTrip marshals v (a draft, an indicator) and decodes it again with json.Number.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return decodeJSON(t, string(b))
}

func fillIndicator(t *testing.T, v any) any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("want indicator is %T, not an object", v)
	}
	for _, k := range indicatorKeys {
		if _, ok := m[k]; !ok {
			m[k] = nil
			if k == "page" {
				m[k] = json.Number("1")
			}
		}
	}
	return m
}

// optionalKeys are compared only when the want names them.
var optionalKeys = []string{"analyte", "refText"}

// dropUnnamed removes from got's indicators the optional keys the want's do not name.
func dropUnnamed(t *testing.T, wantLit string, got any) {
	t.Helper()
	wm, _ := decodeJSON(t, wantLit).(map[string]any)
	gm, _ := got.(map[string]any)
	wi, _ := wm["indicators"].([]any)
	gi, _ := gm["indicators"].([]any)
	for i := range gi {
		g, _ := gi[i].(map[string]any)
		var w map[string]any
		if i < len(wi) {
			w, _ = wi[i].(map[string]any)
		}
		for _, k := range optionalKeys {
			if _, named := w[k]; !named {
				delete(g, k)
			}
		}
	}
}

// wantIndicator is an indicator literal with its missing fields null.
func wantIndicator(t *testing.T, s string) any {
	t.Helper()
	return fillIndicator(t, decodeJSON(t, s))
}

// wantDraft is a draft literal with its missing fields null and indicators [].
func wantDraft(t *testing.T, s string) any {
	t.Helper()
	m, ok := decodeJSON(t, s).(map[string]any)
	if !ok {
		t.Fatalf("want draft is not an object: %s", s)
	}
	for _, k := range draftKeys {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
	if _, ok := m["indicators"]; !ok {
		m["indicators"] = []any{}
	}
	for _, ind := range m["indicators"].([]any) {
		fillIndicator(t, ind)
		for _, k := range optionalKeys {
			if ind.(map[string]any)[k] == nil && !strings.Contains(s, `"`+k+`"`) {
				delete(ind.(map[string]any), k)
			}
		}
	}
	return m
}

// warningList renders warnings for comparison with want (see above), sorted.
func warningList(ws []schema.Warning, want []string) []string {
	got := []string{}
	for _, w := range ws {
		s := string(w.Code)
		if w.Path != nil {
			s += "@" + *w.Path
		}
		if !slices.Contains(want, s) && slices.Contains(want, string(w.Code)) {
			s = string(w.Code)
		}
		got = append(got, s)
	}
	slices.Sort(got)
	return got
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}

// checkResult compares a result's draft JSON and warnings with the wants, and checks that the
// result marshals with "warnings" a list, never null.
func checkResult(t *testing.T, in string, res schema.Result, want string, warn []string) {
	t.Helper()
	got, ok := roundTrip(t, res).(map[string]any)
	if !ok {
		t.Fatalf("result does not marshal as an object")
	}
	dropUnnamed(t, want, got["draft"])
	if diff := cmp.Diff(wantDraft(t, want), got["draft"]); diff != "" {
		t.Errorf("%s\ndraft (-want +got):\n%s", in, diff)
	}
	if _, ok := got["warnings"].([]any); !ok {
		t.Errorf("%s\nwarnings marshal as %v, want a list", in, got["warnings"])
	}
	for _, w := range res.Warnings {
		if strings.TrimSpace(w.Message) == "" {
			t.Errorf("%s\nwarning %s has no message", in, w.Code)
		}
	}
	if diff := cmp.Diff(sorted(warn), warningList(res.Warnings, warn)); diff != "" {
		t.Errorf("%s\nwarnings (-want +got):\n%s\nall: %s", in, diff, warningDump(res.Warnings))
	}
}

func warningDump(ws []schema.Warning) string {
	var b strings.Builder
	for _, w := range ws {
		p := "null"
		if w.Path != nil {
			p = *w.Path
		}
		fmt.Fprintf(&b, "\n  %s %s: %s", w.Code, p, w.Message)
	}
	return b.String()
}

// indicatorTests are rules about one indicator. in is one item of the reply's indicators list;
// want is the indicator it becomes, or "" when it is dropped.
var indicatorTests = []struct {
	name string
	in   string
	want string
	warn []string
}{
	// Marks in brackets and a lone asterisk are abnormality flags; *10^9/L stays a unit.
	{name: "mark (H)", in: `{"itemName":"ALT","value":"56 (H)","unit":"U/L"}`, want: `{"itemName":"ALT","valueNum":56,"unit":"U/L","printedFlag":"high"}`},
	{name: "mark （↑）", in: `{"itemName":"ALT","value":"56（↑）"}`, want: `{"itemName":"ALT","valueNum":56,"printedFlag":"high"}`},
	{name: "mark *", in: `{"itemName":"ALT","value":"56*","unit":"U/L"}`, want: `{"itemName":"ALT","valueNum":56,"unit":"U/L","printedFlag":"abnormal"}`},
	{name: "unit *10^9/L", in: `{"itemName":"WBC","value":"6.5*10^9/L"}`, want: `{"itemName":"WBC","valueNum":6.5,"unit":"*10^9/L"}`},
	{name: "more Chinese keys", in: `{"检查项目":"尿酸","检测结果":"420","计量单位":"μmol/L","正常范围":"208-428"}`,
		want: `{"itemName":"尿酸","valueNum":420,"unit":"μmol/L","refLow":208,"refHigh":428}`},

	// A format example's rows are not results.
	{name: "placeholder name", in: `{"itemName":"string","valueNum":"number","unit":"string"}`, want: ``, warn: []string{"indicator_dropped@reply.indicators[0]"}},
	{name: "placeholder name in brackets", in: `{"项目":"<项目名称>","结果":"<结果>"}`, want: ``, warn: []string{"indicator_dropped@reply.indicators[0]"}},

	// Keys: case and separators.
	{name: "snake_case", in: `{"item_name":"总胆固醇","item_group":"血脂","value_num":5.6,"value_text":"偏高","unit":"mmol/L","ref_low":3.1,"ref_high":5.2}`,
		want: `{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.6,"printedFlag":"high","unit":"mmol/L","refLow":3.1,"refHigh":5.2}`},
	{name: "PascalCase", in: `{"ItemName":"总胆固醇","ValueNum":5.6,"Unit":"mmol/L","RefLow":3.1,"RefHigh":5.2}`,
		want: `{"itemName":"总胆固醇","valueNum":5.6,"unit":"mmol/L","refLow":3.1,"refHigh":5.2}`},
	{name: "kebab-case", in: `{"item-name":"总胆固醇","item-group":"血脂","value-num":5.6,"ref-low":3.1,"ref-high":5.2}`,
		want: `{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.6,"refLow":3.1,"refHigh":5.2}`},
	{name: "spaces", in: `{"Item Name":"尿蛋白","Item Group":"尿常规","Value Text":"阴性","Ref Range":"阴性"}`,
		want: `{"itemName":"尿蛋白","itemGroup":"尿常规","valueText":"阴性"}`},
	{name: "upper snake", in: `{"ITEM_NAME":"ALT","VALUE_NUM":41,"REF_HIGH":40}`,
		want: `{"itemName":"ALT","valueNum":41,"refHigh":40}`},
	{name: "lower case", in: `{"itemname":"ALT","valuenum":41,"refhigh":40}`,
		want: `{"itemName":"ALT","valueNum":41,"refHigh":40}`},
	{name: "unknown keys ignored", in: `{"itemName":"ALT","valueNum":41,"remark":"x","extra":{"a":[1]},"note":true}`,
		want: `{"itemName":"ALT","valueNum":41}`},
	{name: "contract key beats alias", in: `{"itemName":"ALT","name":"谷丙转氨酶"}`,
		want: `{"itemName":"ALT"}`},

	// Aliases of itemName.
	{name: "name", in: `{"name":"ALT"}`, want: `{"itemName":"ALT"}`},
	{name: "item", in: `{"item":"ALT"}`, want: `{"itemName":"ALT"}`},
	{name: "indicator", in: `{"indicator":"ALT"}`, want: `{"itemName":"ALT"}`},
	{name: "项目", in: `{"项目":"ALT"}`, want: `{"itemName":"ALT"}`},
	{name: "项目名称", in: `{"项目名称":"ALT"}`, want: `{"itemName":"ALT"}`},
	{name: "检验项目", in: `{"检验项目":"ALT"}`, want: `{"itemName":"ALT"}`},
	{name: "指标名称", in: `{"指标名称":"ALT"}`, want: `{"itemName":"ALT"}`},
	{name: "Item_Name alias spelled", in: `{"Name":"ALT","Group":"肝功能"}`, want: `{"itemName":"ALT","itemGroup":"肝功能"}`},

	// Aliases of itemGroup.
	{name: "group", in: `{"itemName":"ALT","group":"肝功能"}`, want: `{"itemName":"ALT","itemGroup":"肝功能"}`},
	{name: "category", in: `{"itemName":"ALT","category":"肝功能"}`, want: `{"itemName":"ALT","itemGroup":"肝功能"}`},
	{name: "分组", in: `{"itemName":"ALT","分组":"肝功能"}`, want: `{"itemName":"ALT","itemGroup":"肝功能"}`},
	{name: "类别", in: `{"itemName":"ALT","类别":"肝功能"}`, want: `{"itemName":"ALT","itemGroup":"肝功能"}`},

	// Aliases of the value to split, and of unit.
	{name: "value number", in: `{"itemName":"ALT","value":41}`, want: `{"itemName":"ALT","valueNum":41}`},
	{name: "value text", in: `{"itemName":"尿蛋白","value":"阴性"}`, want: `{"itemName":"尿蛋白","valueText":"阴性"}`},
	{name: "result", in: `{"itemName":"ALT","result":"41"}`, want: `{"itemName":"ALT","valueNum":41}`},
	{name: "结果", in: `{"itemName":"ALT","结果":"41.0"}`, want: `{"itemName":"ALT","valueNum":41.0}`},
	{name: "检验结果", in: `{"itemName":"尿蛋白","检验结果":"阴性(-)"}`, want: `{"itemName":"尿蛋白","valueText":"阴性(-)"}`},
	{name: "单位", in: `{"项目名称":"ALT","结果":41,"单位":"U/L"}`, want: `{"itemName":"ALT","valueNum":41,"unit":"U/L"}`},
	{name: "valueNum beats value", in: `{"itemName":"ALT","valueNum":41,"value":"40"}`, want: `{"itemName":"ALT","valueNum":41}`},

	// Aliases of the reference range string.
	{name: "refRange", in: `{"itemName":"GLU","refRange":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "referenceRange", in: `{"itemName":"GLU","referenceRange":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "reference_range", in: `{"itemName":"GLU","reference_range":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "range", in: `{"itemName":"GLU","range":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "reference", in: `{"itemName":"GLU","reference":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "参考范围", in: `{"itemName":"GLU","参考范围":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "参考值", in: `{"itemName":"GLU","参考值":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "参考区间", in: `{"itemName":"GLU","参考区间":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},

	// Null words, in every field; strings trimmed.
	{name: "null words in every field", in: `{"itemName":"GLU","itemGroup":"N/A","valueNum":"NaN","valueText":"None","unit":"null","refLow":"","refHigh":"n/a"}`,
		want: `{"itemName":"GLU"}`},
	{name: "null words in generic value and range", in: `{"itemName":"GLU","value":"N/A","refRange":"NaN"}`,
		want: `{"itemName":"GLU"}`},
	{name: "null word in value with a unit given", in: `{"itemName":"GLU","result":"None","单位":"mmol/L","参考范围":""}`,
		want: `{"itemName":"GLU","unit":"mmol/L"}`},
	{name: "null words in upper case", in: `{"itemName":"GLU","valueText":"NULL","unit":"NONE","itemGroup":"NAN"}`,
		want: `{"itemName":"GLU"}`},
	{name: "null words with white space", in: `{"itemName":"GLU","valueText":"  N/A ","unit":" null "}`,
		want: `{"itemName":"GLU"}`},
	{name: "JSON nulls", in: `{"itemName":"GLU","itemGroup":null,"valueNum":null,"valueText":null,"unit":null,"refLow":null,"refHigh":null,"refRange":null}`,
		want: `{"itemName":"GLU"}`},
	{name: "strings trimmed", in: `{"itemName":"  总胆固醇 ","itemGroup":"\t血脂 ","valueText":" 阴性 ","unit":" mmol/L\n"}`,
		want: `{"itemName":"总胆固醇","itemGroup":"血脂","valueText":"阴性","unit":"mmol/L"}`},
	{name: "name null word dropped", in: `{"itemName":"N/A","valueNum":5.6}`, want: "",
		warn: []string{"indicator_dropped@reply.indicators[0]"}},
	{name: "name NaN dropped", in: `{"name":"NaN","valueNum":5.6}`, want: "",
		warn: []string{"indicator_dropped@reply.indicators[0]"}},
	{name: "name blank dropped", in: `{"itemName":"   ","valueNum":5.6}`, want: "",
		warn: []string{"indicator_dropped@reply.indicators[0]"}},
	{name: "name missing dropped", in: `{"valueNum":5.6,"unit":"mmol/L"}`, want: "",
		warn: []string{"indicator_dropped@reply.indicators[0]"}},
	{name: "name null dropped", in: `{"itemName":null,"valueNum":5.6}`, want: "",
		warn: []string{"indicator_dropped@reply.indicators[0]"}},

	// Values: numbers as JSON numbers or strings, digits kept.
	{name: "JSON number", in: `{"itemName":"GLU","valueNum":5.6}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "JSON 6.0 keeps its zero", in: `{"itemName":"GLU","valueNum":6.0}`, want: `{"itemName":"GLU","valueNum":6.0}`},
	{name: "JSON 1.020 keeps its zero", in: `{"itemName":"尿比重","valueNum":1.020}`, want: `{"itemName":"尿比重","valueNum":1.020}`},
	{name: "string 1.020 keeps its zero", in: `{"itemName":"尿比重","valueNum":"1.020"}`, want: `{"itemName":"尿比重","valueNum":1.020}`},
	{name: "string 5.60 keeps its zero", in: `{"itemName":"GLU","value":"5.60"}`, want: `{"itemName":"GLU","valueNum":5.60}`},
	{name: "JSON integer", in: `{"itemName":"PLT","valueNum":250}`, want: `{"itemName":"PLT","valueNum":250}`},
	{name: "zero", in: `{"itemName":"嗜碱","value":"0"}`, want: `{"itemName":"嗜碱","valueNum":0}`},
	{name: "0.50 keeps its zero", in: `{"itemName":"x","value":0.50}`, want: `{"itemName":"x","valueNum":0.50}`},
	{name: "negative", in: `{"itemName":"BE","value":"-1.5"}`, want: `{"itemName":"BE","valueNum":-1.5}`},
	{name: "JSON negative", in: `{"itemName":"BE","valueNum":-1.50}`, want: `{"itemName":"BE","valueNum":-1.50}`},
	{name: "string with white space", in: `{"itemName":"GLU","valueNum":"  5.6 "}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "full-width digits and dot", in: `{"itemName":"GLU","value":"５．６"}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "full-width minus", in: `{"itemName":"BE","value":"－１．５"}`, want: `{"itemName":"BE","valueNum":-1.5}`},
	{name: "full-width digits keep zeros", in: `{"itemName":"尿比重","value":"１．０２０"}`, want: `{"itemName":"尿比重","valueNum":1.020}`},
	{name: "thousands comma", in: `{"itemName":"CK","value":"1,024.5"}`, want: `{"itemName":"CK","valueNum":1024.5}`},
	{name: "thousands commas", in: `{"itemName":"AFP","value":"12,345,678"}`, want: `{"itemName":"AFP","valueNum":12345678}`},
	{name: "full-width thousands comma", in: `{"itemName":"CK","value":"１，０２４．５"}`, want: `{"itemName":"CK","valueNum":1024.5}`},
	{name: "thousands comma in valueNum", in: `{"itemName":"CK","valueNum":"1,024"}`, want: `{"itemName":"CK","valueNum":1024}`},
	{name: "decimal comma is text", in: `{"itemName":"x","value":"1,5"}`, want: `{"itemName":"x","valueText":"1,5"}`},
	{name: "two dots is text", in: `{"itemName":"x","value":"1.2.3"}`, want: `{"itemName":"x","valueText":"1.2.3"}`},

	// Values: a number with a unit.
	{name: "140mmHg", in: `{"itemName":"收缩压","value":"140mmHg"}`, want: `{"itemName":"收缩压","valueNum":140,"unit":"mmHg"}`},
	{name: "5.6 mmol/L", in: `{"itemName":"GLU","value":"5.6 mmol/L"}`, want: `{"itemName":"GLU","valueNum":5.6,"unit":"mmol/L"}`},
	{name: "45.2%", in: `{"itemName":"NEUT%","value":"45.2%"}`, want: `{"itemName":"NEUT%","valueNum":45.2,"unit":"%"}`},
	{name: "6.5×10^9/L", in: `{"itemName":"WBC","value":"6.5×10^9/L"}`, want: `{"itemName":"WBC","valueNum":6.5,"unit":"×10^9/L"}`},
	{name: "number and unit in valueNum", in: `{"itemName":"GLU","valueNum":"5.60 mmol/L"}`, want: `{"itemName":"GLU","valueNum":5.60,"unit":"mmol/L"}`},
	{name: "number and unit in valueText", in: `{"itemName":"GLU","valueText":"5.6mmol/L"}`, want: `{"itemName":"GLU","valueNum":5.6,"unit":"mmol/L"}`},
	{name: "unit given is kept, and a different unit in the value is warned about", in: `{"itemName":"GLU","value":"5.6 mmol/L","unit":"mg/dL"}`,
		want: `{"itemName":"GLU","valueNum":5.6,"unit":"mg/dL"}`, warn: []string{"unit_conflict@indicators[0].valueNum"}},
	{name: "the same unit spelt otherwise is no conflict", in: `{"itemName":"WBC","value":"6.5 ×10⁹/L","unit":"10^9/L"}`,
		want: `{"itemName":"WBC","valueNum":6.5,"unit":"10^9/L"}`},
	{name: "a power of ten in the value goes before the unit", in: `{"itemName":"HBV-DNA","valueNum":"1.2×10^3","unit":"IU/mL"}`,
		want: `{"itemName":"HBV-DNA","valueNum":1.2,"unit":"×10^3 IU/mL"}`},
	{name: "a two-digit superscript power", in: `{"itemName":"RBC","valueNum":"4.85×10¹²/L"}`, want: `{"itemName":"RBC","valueNum":4.85,"unit":"×10¹²/L"}`},
	{name: "a censored result is not an exact number", in: `{"itemName":"CRP","valueNum":0.5,"valueText":"<0.5","unit":"mg/L"}`,
		want: `{"itemName":"CRP","valueText":"<0.5","unit":"mg/L"}`},
	{name: "scientific notation is a number", in: `{"itemName":"HBV-DNA","valueNum":"1.2e3","unit":"IU/mL"}`,
		want: `{"itemName":"HBV-DNA","valueNum":1200,"unit":"IU/mL"}`},
	{name: "unicode minus", in: `{"itemName":"BE","value":"−2.1","refRange":"−3~3"}`, want: `{"itemName":"BE","valueNum":-2.1,"refLow":-3,"refHigh":3}`},
	{name: "per high-power field", in: `{"itemName":"红细胞","value":"0-2","refRange":"0-3/HP"}`, want: `{"itemName":"红细胞","valueText":"0-2","unit":"/HP","refLow":0,"refHigh":3}`},
	{name: "a label before the range", in: `{"itemName":"ALB","value":42,"refRange":"参考值：40-55"}`, want: `{"itemName":"ALB","valueNum":42,"refLow":40,"refHigh":55}`},
	{name: "HTML entities and wrapped quotes", in: `{"itemName":"CEA","value":"&lt;0.5","refRange":"'&lt;5.0'"}`, want: `{"itemName":"CEA","valueText":"<0.5","refHigh":5.0}`},
	{name: "an annotated key", in: `{"itemName(项目名称)":"TSH","valueNum(数值)":2.1}`, want: `{"itemName":"TSH","valueNum":2.1}`},
	{name: "unit null word is filled", in: `{"itemName":"收缩压","value":"140mmHg","unit":"N/A"}`, want: `{"itemName":"收缩压","valueNum":140,"unit":"mmHg"}`},
	{name: "full-width number and unit", in: `{"itemName":"GLU","value":"５．６ mmol/L"}`, want: `{"itemName":"GLU","valueNum":5.6,"unit":"mmol/L"}`},
	{name: "full-width percent", in: `{"itemName":"NEUT%","value":"４５．２％"}`, want: `{"itemName":"NEUT%","valueNum":45.2,"unit":"%"}`},
	{name: "percent after a space", in: `{"itemName":"NEUT%","value":"45.2 %"}`, want: `{"itemName":"NEUT%","valueNum":45.2,"unit":"%"}`},
	{name: "superscript unit", in: `{"itemName":"WBC","value":"6.5×10⁹/L"}`, want: `{"itemName":"WBC","valueNum":6.5,"unit":"×10⁹/L"}`},

	// Values: abnormality marks after a number are dropped.
	{name: "up arrow", in: `{"itemName":"TC","value":"5.86↑"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "down arrow", in: `{"itemName":"HDL","value":"0.90↓"}`, want: `{"itemName":"HDL","valueNum":0.90,"printedFlag":"low"}`},
	{name: "arrow after a space", in: `{"itemName":"TC","value":"5.86 ↑"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "H", in: `{"itemName":"TC","value":"7.1 H"}`, want: `{"itemName":"TC","valueNum":7.1,"printedFlag":"high"}`},
	{name: "H without space", in: `{"itemName":"TC","value":"7.1H"}`, want: `{"itemName":"TC","valueNum":7.1,"printedFlag":"high"}`},
	{name: "L", in: `{"itemName":"HDL","value":"0.8 L"}`, want: `{"itemName":"HDL","valueNum":0.8,"printedFlag":"low"}`},
	{name: "高", in: `{"itemName":"TC","value":"7.1高"}`, want: `{"itemName":"TC","valueNum":7.1,"printedFlag":"high"}`},
	{name: "低", in: `{"itemName":"HDL","value":"0.8 低"}`, want: `{"itemName":"HDL","valueNum":0.8,"printedFlag":"low"}`},
	{name: "mark in valueNum", in: `{"itemName":"TC","valueNum":"5.86↑"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "mark after a unit", in: `{"itemName":"TC","value":"5.86mmol/L↑"}`, want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","printedFlag":"high"}`},
	{name: "H after a unit", in: `{"itemName":"TC","value":"5.86 mmol/L H"}`, want: `{"itemName":"TC","valueNum":5.86,"unit":"mmol/L","printedFlag":"high"}`},
	{name: "unit ending in L is not a mark", in: `{"itemName":"GLU","value":"5.6mmol/L"}`, want: `{"itemName":"GLU","valueNum":5.6,"unit":"mmol/L"}`},
	{name: "full-width digits and a mark", in: `{"itemName":"TC","value":"５．８６↑"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},

	// Values: anything not a plain number is text as written, never a guessed number.
	{name: "阴性", in: `{"itemName":"尿蛋白","value":"阴性"}`, want: `{"itemName":"尿蛋白","valueText":"阴性"}`},
	{name: "阴性(-)", in: `{"itemName":"尿蛋白","value":"阴性(-)"}`, want: `{"itemName":"尿蛋白","valueText":"阴性(-)"}`},
	{name: "plus", in: `{"itemName":"尿糖","value":"+"}`, want: `{"itemName":"尿糖","valueText":"+"}`},
	{name: "plus-minus", in: `{"itemName":"尿糖","value":"±"}`, want: `{"itemName":"尿糖","valueText":"±"}`},
	{name: "<0.5", in: `{"itemName":"CRP","value":"<0.5"}`, want: `{"itemName":"CRP","valueText":"<0.5"}`},
	{name: ">1000", in: `{"itemName":"AFP","value":">1000"}`, want: `{"itemName":"AFP","valueText":">1000"}`},
	{name: "full-width <0.5 as written", in: `{"itemName":"CRP","value":"＜0.5"}`, want: `{"itemName":"CRP","valueText":"＜0.5"}`},
	{name: "<0.5 with a unit given", in: `{"itemName":"CRP","value":"<0.5","unit":"mg/L"}`, want: `{"itemName":"CRP","valueText":"<0.5","unit":"mg/L"}`},
	{name: "1+", in: `{"itemName":"尿蛋白","value":"1+"}`, want: `{"itemName":"尿蛋白","valueText":"1+"}`},
	{name: "2+ in valueNum", in: `{"itemName":"尿蛋白","valueNum":"2+"}`, want: `{"itemName":"尿蛋白","valueText":"2+"}`},
	{name: "120/80", in: `{"itemName":"血压","value":"120/80"}`, want: `{"itemName":"血压","valueText":"120/80"}`},
	{name: "120/80 mmHg", in: `{"itemName":"血压","value":"120/80 mmHg"}`, want: `{"itemName":"血压","valueText":"120/80 mmHg"}`},
	{name: "1:320", in: `{"itemName":"ANA","value":"1:320"}`, want: `{"itemName":"ANA","valueText":"1:320"}`},
	{name: "<0.5 in valueNum", in: `{"itemName":"CRP","valueNum":"<0.5"}`, want: `{"itemName":"CRP","valueText":"<0.5"}`},
	{name: "阴性 in valueNum", in: `{"itemName":"尿蛋白","valueNum":"阴性"}`, want: `{"itemName":"尿蛋白","valueText":"阴性"}`},
	{name: "text in valueText", in: `{"itemName":"尿蛋白","valueText":"弱阳性(±)"}`, want: `{"itemName":"尿蛋白","valueText":"弱阳性(±)"}`},
	{name: "approximately", in: `{"itemName":"x","value":"约5.6"}`, want: `{"itemName":"x","valueText":"约5.6"}`},

	// Values: valueNum and valueText together.
	{name: "plain number in valueText moves", in: `{"itemName":"GLU","valueText":"5.6"}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "5.60 in valueText moves with its digits", in: `{"itemName":"GLU","valueText":"5.60","valueNum":null}`, want: `{"itemName":"GLU","valueNum":5.60}`},
	{name: "same number twice", in: `{"itemName":"GLU","valueNum":5.6,"valueText":"5.6"}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "same number twice, unit in the text", in: `{"itemName":"GLU","valueNum":5.6,"valueText":"5.6 mmol/L"}`, want: `{"itemName":"GLU","valueNum":5.6,"unit":"mmol/L"}`},
	{name: "same number twice, other digits", in: `{"itemName":"GLU","valueNum":5.6,"valueText":"5.60"}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "marked number in valueText moves", in: `{"itemName":"TC","valueText":"5.86↑"}`, want: `{"itemName":"TC","valueNum":5.86,"printedFlag":"high"}`},
	{name: "same number twice as strings", in: `{"itemName":"GLU","valueNum":"5.6","valueText":"5.6"}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "number and text both kept", in: `{"itemName":"HBsAg","valueNum":0.01,"valueText":"阴性"}`, want: `{"itemName":"HBsAg","valueNum":0.01,"valueText":"阴性"}`},
	{name: "valueNum and generic value", in: `{"itemName":"GLU","valueNum":null,"value":"5.6"}`, want: `{"itemName":"GLU","valueNum":5.6}`},
	{name: "boolean value", in: `{"itemName":"GLU","valueNum":true}`, want: `{"itemName":"GLU"}`,
		warn: []string{"invalid_value"}},
	{name: "huge exponent", in: `{"itemName":"GLU","valueNum":1e999999}`, want: `{"itemName":"GLU"}`,
		warn: []string{"invalid_value"}},
	{name: "object value", in: `{"itemName":"GLU","value":{"v":5.6}}`, want: `{"itemName":"GLU"}`,
		warn: []string{"invalid_value"}},

	// Reference ranges: bounds as numbers or numeric strings.
	{name: "numbers", in: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "numeric strings keep digits", in: `{"itemName":"GLU","refLow":"3.90","refHigh":"6.10"}`, want: `{"itemName":"GLU","refLow":3.90,"refHigh":6.10}`},
	{name: "full-width bounds", in: `{"itemName":"GLU","refLow":"３．９","refHigh":"６．１"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "low only", in: `{"itemName":"HDL","refLow":1.04}`, want: `{"itemName":"HDL","refLow":1.04}`},
	{name: "bound with a unit fills unit", in: `{"itemName":"GLU","refLow":"3.9 mmol/L","refHigh":"6.1 mmol/L"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1,"unit":"mmol/L"}`},

	// Reference ranges: range strings in a range key.
	{name: "hyphen", in: `{"itemName":"GLU","refRange":"3.9-6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "tilde", in: `{"itemName":"GLU","refRange":"3.9~6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "full-width tilde", in: `{"itemName":"GLU","refRange":"3.9～6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "spaced hyphen", in: `{"itemName":"GLU","refRange":"3.9 - 6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "em dash", in: `{"itemName":"GLU","refRange":"3.9—6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "en dash", in: `{"itemName":"GLU","refRange":"3.9–6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "full-width hyphen and digits", in: `{"itemName":"GLU","refRange":"３．９－６．１"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "digits kept", in: `{"itemName":"尿比重","refRange":"1.003-1.030"}`, want: `{"itemName":"尿比重","refLow":1.003,"refHigh":1.030}`},
	{name: "integers", in: `{"itemName":"ALT","refRange":"0-40"}`, want: `{"itemName":"ALT","refLow":0,"refHigh":40}`},
	{name: "negative low bound", in: `{"itemName":"BE","refRange":"-3~3"}`, want: `{"itemName":"BE","refLow":-3,"refHigh":3}`},
	{name: "negative bounds", in: `{"itemName":"BE","refRange":"-3--1"}`, want: `{"itemName":"BE","refLow":-3,"refHigh":-1}`},
	{name: "negative bounds with tilde", in: `{"itemName":"BE","refRange":"-3.0~-1.0"}`, want: `{"itemName":"BE","refLow":-3.0,"refHigh":-1.0}`},
	{name: "less than", in: `{"itemName":"TC","refRange":"<5.2"}`, want: `{"itemName":"TC","refHigh":5.2}`},
	{name: "less or equal", in: `{"itemName":"TC","refRange":"≤5.2"}`, want: `{"itemName":"TC","refHigh":5.2}`},
	{name: "full-width less than", in: `{"itemName":"TC","refRange":"＜5.2"}`, want: `{"itemName":"TC","refHigh":5.2}`},
	{name: "less than with a space", in: `{"itemName":"TC","refRange":"< 5.2"}`, want: `{"itemName":"TC","refHigh":5.2}`},
	{name: "greater than", in: `{"itemName":"HDL","refRange":">1.04"}`, want: `{"itemName":"HDL","refLow":1.04}`},
	{name: "greater or equal", in: `{"itemName":"HDL","refRange":"≥1.04"}`, want: `{"itemName":"HDL","refLow":1.04}`},
	{name: "full-width greater than", in: `{"itemName":"HDL","refRange":"＞1.04"}`, want: `{"itemName":"HDL","refLow":1.04}`},
	{name: "less or equal in ASCII", in: `{"itemName":"TC","refRange":"<=5.2"}`, want: `{"itemName":"TC","refHigh":5.2}`},
	{name: "greater or equal with a space", in: `{"itemName":"HDL","refRange":"≥ 1.04"}`, want: `{"itemName":"HDL","refLow":1.04}`},
	{name: "unit unspaced fills null unit", in: `{"itemName":"GLU","refRange":"3.9-6.1mmol/L"}`, want: `{"itemName":"GLU","unit":"mmol/L","refLow":3.9,"refHigh":6.1}`},
	{name: "full-width tilde with a unit", in: `{"itemName":"GLU","参考范围":"3.9～6.1 mmol/L"}`, want: `{"itemName":"GLU","unit":"mmol/L","refLow":3.9,"refHigh":6.1}`},
	{name: "unit fills null unit", in: `{"itemName":"Na","valueNum":140,"refRange":"137-147 mmol/L"}`, want: `{"itemName":"Na","valueNum":140,"unit":"mmol/L","refLow":137,"refHigh":147}`},
	{name: "unit given is kept over the range's", in: `{"itemName":"Na","unit":"mEq/L","refRange":"137-147 mmol/L"}`, want: `{"itemName":"Na","unit":"mEq/L","refLow":137,"refHigh":147}`},
	{name: "one-sided with a unit", in: `{"itemName":"TC","refRange":"<5.2 mmol/L"}`, want: `{"itemName":"TC","unit":"mmol/L","refHigh":5.2}`},
	{name: "qualitative range", in: `{"itemName":"尿蛋白","valueText":"阴性","refRange":"阴性"}`, want: `{"itemName":"尿蛋白","valueText":"阴性"}`},
	{name: "qualitative range with sign", in: `{"itemName":"尿蛋白","参考值":"阴性(-)"}`, want: `{"itemName":"尿蛋白"}`},

	// Reference ranges: range strings in refLow or refHigh themselves.
	{name: "range in refLow", in: `{"itemName":"GLU","refLow":"3.9-6.1","refHigh":null}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "range in refHigh", in: `{"itemName":"GLU","refLow":null,"refHigh":"3.9~6.1"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`},
	{name: "one-sided in refHigh", in: `{"itemName":"TC","refHigh":"<5.2"}`, want: `{"itemName":"TC","refHigh":5.2}`},
	{name: "one-sided in refLow", in: `{"itemName":"HDL","refLow":"≥1.04"}`, want: `{"itemName":"HDL","refLow":1.04}`},
	{name: "less than in refLow is an upper bound", in: `{"itemName":"TC","refLow":"<5.2"}`, want: `{"itemName":"TC","refHigh":5.2}`},

	// Reference ranges: swapped bounds.
	{name: "swapped numbers", in: `{"itemName":"GLU","refLow":6.1,"refHigh":3.9}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`,
		warn: []string{"reference_range_swapped"}},
	{name: "swapped string", in: `{"itemName":"GLU","refRange":"6.1-3.9"}`, want: `{"itemName":"GLU","refLow":3.9,"refHigh":6.1}`,
		warn: []string{"reference_range_swapped"}},
	{name: "swapped keeps digits", in: `{"itemName":"尿比重","refLow":"1.030","refHigh":"1.003"}`, want: `{"itemName":"尿比重","refLow":1.003,"refHigh":1.030}`,
		warn: []string{"reference_range_swapped"}},
	{name: "equal bounds not swapped", in: `{"itemName":"x","refLow":1,"refHigh":1.0}`, want: `{"itemName":"x","refLow":1,"refHigh":1.0}`},

	// Validation, field by field.
	{name: "long unit", in: `{"itemName":"GLU","valueNum":5.6,"unit":"` + strings.Repeat("m", 500) + `","refRange":"3.9-6.1"}`,
		want: `{"itemName":"GLU","valueNum":5.6,"refLow":3.9,"refHigh":6.1}`, warn: []string{"invalid_value@indicators[0].unit"}},
	{name: "long group", in: `{"itemName":"GLU","itemGroup":"` + strings.Repeat("组", 201) + `","valueNum":5.6}`,
		want: `{"itemName":"GLU","valueNum":5.6}`, warn: []string{"invalid_value@indicators[0].itemGroup"}},
	{name: "long text value", in: `{"itemName":"镜检","valueText":"` + strings.Repeat("见", 201) + `","unit":"个/HP"}`,
		want: `{"itemName":"镜检","unit":"个/HP"}`, warn: []string{"invalid_value@indicators[0].valueText"}},
	{name: "unit of 51 characters", in: `{"itemName":"GLU","unit":"` + strings.Repeat("u", 51) + `"}`,
		want: `{"itemName":"GLU"}`, warn: []string{"invalid_value@indicators[0].unit"}},
	{name: "long name dropped", in: `{"itemName":"` + strings.Repeat("名", 201) + `","valueNum":5.6}`,
		want: "", warn: []string{"indicator_dropped@reply.indicators[0]"}},
	{name: "200 characters are allowed", in: `{"itemName":"` + strings.Repeat("名", 200) + `","unit":"` + strings.Repeat("单", 50) + `"}`,
		want: `{"itemName":"` + strings.Repeat("名", 200) + `","unit":"` + strings.Repeat("单", 50) + `"}`},
}

func TestRuleIndicator(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range indicatorTests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"indicators":[` + tt.in + `]}`
			res := b.Build(decodeValue(t, in))
			want := `{"indicators":[]}`
			if tt.want != "" {
				want = `{"indicators":[` + tt.want + `]}`
			}
			checkResult(t, in, res, want, tt.warn)
		})
	}
}

// draftTests are rules about the draft's own fields and its shape. in is the decoded reply.
var draftTests = []struct {
	name string
	in   string
	want string
	warn []string
}{
	// Shape: where the draft is.
	{name: "draft object", in: `{"title":"血脂四项","indicators":[{"itemName":"TC","valueNum":5.6}]}`,
		want: `{"title":"血脂四项","indicators":[{"itemName":"TC","valueNum":5.6}]}`},
	{name: "top-level array is the indicators", in: `[{"itemName":"TC","valueNum":5.6},{"itemName":"TG","valueNum":1.2}]`,
		want: `{"indicators":[{"itemName":"TC","valueNum":5.6},{"itemName":"TG","valueNum":1.2}]}`},
	{name: "data wrapper", in: `{"data":{"title":"血脂四项","indicators":[{"itemName":"TC"}]}}`,
		want: `{"title":"血脂四项","indicators":[{"itemName":"TC"}]}`},
	{name: "result wrapper", in: `{"result":{"hospital":"协和医院","indicators":[{"itemName":"TC"}]}}`,
		want: `{"hospital":"协和医院","indicators":[{"itemName":"TC"}]}`},
	{name: "ocrDraft wrapper", in: `{"ocrDraft":{"checkupDate":"2026-03-05","indicators":[{"itemName":"TC"}]}}`,
		want: `{"checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"TC"}]}`},
	{name: "any wrapper key", in: `{"报告":{"title":"血常规","indicators":[{"itemName":"WBC"}]}}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC"}]}`},
	{name: "wrapper in a wrapper", in: `{"data":{"result":{"title":"血常规","indicators":[{"itemName":"WBC"}]}}}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC"}]}`},
	{name: "wrapper around a list", in: `{"data":[{"itemName":"WBC","valueNum":6.5}]}`,
		want: `{"indicators":[{"itemName":"WBC","valueNum":6.5}]}`},
	{name: "unknown draft keys ignored", in: `{"patient":{"name":"张三","age":45},"remark":"无","title":"血常规","indicators":[{"itemName":"WBC"}]}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC"}]}`},

	// Shape: groups inside indicators are flattened.
	{name: "group and items", in: `{"indicators":[{"group":"血常规","items":[{"itemName":"WBC","valueNum":6.5},{"itemName":"RBC","valueNum":4.5}]},{"itemName":"GLU","valueNum":5.6}]}`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5},{"itemName":"RBC","itemGroup":"血常规","valueNum":4.5},{"itemName":"GLU","valueNum":5.6}]}`},
	{name: "itemGroup and indicators", in: `{"indicators":[{"itemGroup":"肝功能","indicators":[{"itemName":"ALT"}]}]}`,
		want: `{"indicators":[{"itemName":"ALT","itemGroup":"肝功能"}]}`},
	{name: "name and items", in: `[{"name":"血脂","items":[{"itemName":"TC"},{"itemName":"TG"}]}]`,
		want: `{"indicators":[{"itemName":"TC","itemGroup":"血脂"},{"itemName":"TG","itemGroup":"血脂"}]}`},
	{name: "an item's own group wins", in: `[{"group":"血常规","items":[{"itemName":"WBC"},{"itemName":"CRP","itemGroup":"炎症"}]}]`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规"},{"itemName":"CRP","itemGroup":"炎症"}]}`},
	{name: "an item's null-word group takes the group's", in: `[{"group":"血常规","items":[{"itemName":"WBC","itemGroup":"N/A"}]}]`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规"}]}`},
	{name: "group keys spelled otherwise", in: `{"指标":[{"分组":"尿常规","项目列表":[{"项目名称":"尿蛋白","结果":"阴性"}]}]}`,
		want: `{"indicators":[{"itemName":"尿蛋白","itemGroup":"尿常规","valueText":"阴性"}]}`},
	{name: "groups in order", in: `[{"group":"A","items":[{"itemName":"a1"}]},{"group":"B","items":[{"itemName":"b1"},{"itemName":"b2"}]}]`,
		want: `{"indicators":[{"itemName":"a1","itemGroup":"A"},{"itemName":"b1","itemGroup":"B"},{"itemName":"b2","itemGroup":"B"}]}`},

	// Shape: items that cannot be used are dropped with a warning naming their place.
	{name: "non-object items", in: `{"indicators":[1,"WBC",null,[{"itemName":"x"}],true,{"itemName":"RBC"}]}`,
		want: `{"indicators":[{"itemName":"RBC"}]}`,
		warn: []string{"indicator_dropped@reply.indicators[0]", "indicator_dropped@reply.indicators[1]", "indicator_dropped@reply.indicators[2]", "indicator_dropped@reply.indicators[3]", "indicator_dropped@reply.indicators[4]"}},
	{name: "items without names", in: `[{"itemName":"WBC"},{"valueNum":5.6},{"itemName":""},{"itemName":"RBC"}]`,
		want: `{"indicators":[{"itemName":"WBC"},{"itemName":"RBC"}]}`,
		warn: []string{"indicator_dropped@reply.indicators[1]", "indicator_dropped@reply.indicators[2]"}},
	{name: "dropped item in a group", in: `[{"group":"血常规","items":[{"itemName":"WBC"},{"valueNum":1}]}]`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规"}]}`,
		warn: []string{"indicator_dropped"}},
	{name: "one bad item costs no other", in: `[{"itemName":"A","valueNum":true},{"itemName":"B","valueNum":2}]`,
		want: `{"indicators":[{"itemName":"A"},{"itemName":"B","valueNum":2}]}`,
		warn: []string{"invalid_value"}},

	// Keys of the draft: case, separators and aliases.
	{name: "PascalCase draft keys", in: `{"Title":"血常规","Hospital":"协和医院","CheckupDate":"2026-03-05","ReportYear":2026,"Indicators":[{"ItemName":"WBC"}]}`,
		want: `{"title":"血常规","hospital":"协和医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"WBC"}]}`},
	{name: "snake_case draft keys", in: `{"title":"血常规","checkup_date":"2026-03-05","report_year":"2026","indicators":[]}`,
		want: `{"title":"血常规","checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "kebab and spaced draft keys", in: `{"checkup-date":"2026-03-05","Report Year":2025,"hospital":"x"}`,
		want: `{"hospital":"x","checkupDate":"2026-03-05","reportYear":2025}`},
	{name: "标题", in: `{"标题":"血常规"}`, want: `{"title":"血常规"}`},
	{name: "报告名称", in: `{"报告名称":"血常规"}`, want: `{"title":"血常规"}`},
	{name: "医院", in: `{"医院":"协和医院"}`, want: `{"hospital":"协和医院"}`},
	{name: "医院名称", in: `{"医院名称":"协和医院"}`, want: `{"hospital":"协和医院"}`},
	{name: "institution", in: `{"institution":"协和医院"}`, want: `{"hospital":"协和医院"}`},
	{name: "date", in: `{"date":"2026-03-05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "reportDate", in: `{"reportDate":"2026-03-05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "检查日期", in: `{"检查日期":"2026-03-05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "报告日期", in: `{"报告日期":"2026-03-05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "采样日期", in: `{"采样日期":"2026-03-05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "items", in: `{"items":[{"itemName":"WBC"}]}`, want: `{"indicators":[{"itemName":"WBC"}]}`},
	{name: "results", in: `{"results":[{"itemName":"WBC"}]}`, want: `{"indicators":[{"itemName":"WBC"}]}`},
	{name: "指标", in: `{"指标":[{"itemName":"WBC"}]}`, want: `{"indicators":[{"itemName":"WBC"}]}`},
	{name: "检验项目列表", in: `{"检验项目列表":[{"检验项目":"WBC"}]}`, want: `{"indicators":[{"itemName":"WBC"}]}`},
	{name: "项目列表", in: `{"项目列表":[{"项目":"WBC"}]}`, want: `{"indicators":[{"itemName":"WBC"}]}`},
	{name: "all Chinese keys", in: `{"报告名称":"血脂四项","医院名称":"协和医院","采样日期":"2026年3月5日","检验项目列表":[{"项目名称":"总胆固醇","检验结果":"5.60","单位":"mmol/L","参考区间":"<5.2","类别":"血脂"}]}`,
		want: `{"title":"血脂四项","hospital":"协和医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.60,"unit":"mmol/L","refHigh":5.2}]}`},

	// Null words and trimming in the draft's fields.
	{name: "null words", in: `{"title":"N/A","hospital":"","checkupDate":"None","reportYear":"null","indicators":[{"itemName":"WBC"}]}`,
		want: `{"indicators":[{"itemName":"WBC"}]}`},
	{name: "NaN and n/a", in: `{"title":"NaN","hospital":"n/a","checkupDate":"N/A","reportYear":"NaN","indicators":[{"itemName":"WBC"}]}`,
		want: `{"indicators":[{"itemName":"WBC"}]}`},
	{name: "trimmed", in: `{"title":"  血常规\n","hospital":"\t协和医院 ","checkupDate":" 2026-03-05 ","reportYear":" 2026 "}`,
		want: `{"title":"血常规","hospital":"协和医院","checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "indicators null", in: `{"title":"血常规","indicators":null}`, want: `{"title":"血常规"}`},
	{name: "indicators null word", in: `{"title":"血常规","indicators":"N/A"}`, want: `{"title":"血常规"}`},
	// A list written as a JSON string inside the draft is the list, decoded once.
	{name: "indicators as a JSON string", in: `{"title":"血常规","indicators":"[{\"itemName\":\"WBC\",\"valueNum\":6.5},{\"itemName\":\"HGB\",\"valueNum\":135}]"}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"HGB","valueNum":135}]}`},
	{name: "indicators as a JSON string of a table", in: `{"title":"血常规","indicators":" [[\"项目\",\"结果\"],[\"WBC\",\"6.5\"]] "}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5}]}`},
	{name: "indicators as a JSON string, broken", in: `{"title":"血常规","indicators":"[{\"itemName\":\"WBC\""}`,
		want: `{"title":"血常规"}`, warn: []string{"indicator_dropped@reply.indicators"}},
	{name: "indicators as a string in a string", in: `{"title":"血常规","indicators":"\"[{\\\"itemName\\\":\\\"WBC\\\"}]\""}`,
		want: `{"title":"血常规"}`, warn: []string{"indicator_dropped@reply.indicators"}},
	{name: "group items null word", in: `{"title":"血常规","indicators":[{"itemName":"WBC"},{"group":"尿常规","items":"None"}]}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC"}]}`, warn: []string{"indicator_dropped@reply.indicators[1]"}},

	// Not a draft at all: nothing, and no panic.
	{name: "null", in: `null`, want: `{}`},
	{name: "string", in: `"血常规"`, want: `{}`},
	{name: "number", in: `42`, want: `{}`},
	{name: "list of lists", in: `[[1,2],[3]]`, want: `{}`, warn: []string{"indicator_dropped@reply.indicators[0]", "indicator_dropped@reply.indicators[1]"}},
	{name: "deep wrappers", in: `{"a":{"b":{"c":{"d":{"e":{"f":{"title":"x"}}}}}}}`, want: `{}`},

	// Dates.
	{name: "ISO date", in: `{"checkupDate":"2026-03-05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "slashes", in: `{"checkupDate":"2026/3/5"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "slashes padded", in: `{"checkupDate":"2026/03/05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "dots", in: `{"checkupDate":"2026.03.05"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese", in: `{"checkupDate":"2026年3月5日"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese padded", in: `{"checkupDate":"2026年03月05日"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "compact string", in: `{"checkupDate":"20260305"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "compact number", in: `{"checkupDate":20260305}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "full-width digits", in: `{"checkupDate":"２０２６－０３－０５"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "full-width Chinese", in: `{"checkupDate":"２０２６年３月５日"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "full-width slashes", in: `{"checkupDate":"2026／3／5"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "full-width dots", in: `{"checkupDate":"２０２６．０３．０５"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "time dropped", in: `{"checkupDate":"2026-03-05 08:30"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "time with seconds dropped", in: `{"checkupDate":"2026-03-05 08:30:15"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "ISO time dropped", in: `{"checkupDate":"2026-03-05T08:30:00"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "ISO time with zone dropped", in: `{"checkupDate":"2026-03-05T08:30:00+08:00"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "ISO time UTC dropped", in: `{"checkupDate":"2026-03-05T00:30:00Z"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "slashes with time", in: `{"checkupDate":"2026/3/5 8:30"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese with time", in: `{"checkupDate":"2026年3月5日 08:30"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "full-width time", in: `{"checkupDate":"２０２６－０３－０５　０８：３０"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "single digits with hyphens", in: `{"checkupDate":"2026-3-5"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "full-width slashes padded", in: `{"checkupDate":"２０２６／０３／０５"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "ISO time with milliseconds dropped", in: `{"checkupDate":"2026-03-05T08:30:00.000Z"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese with Chinese time", in: `{"checkupDate":"2026年3月5日 08时30分"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "Chinese with time unspaced", in: `{"checkupDate":"2026年3月5日08:30"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "compact with time", in: `{"checkupDate":"20260305 08:30"}`, want: `{"checkupDate":"2026-03-05","reportYear":2026}`},
	{name: "impossible date", in: `{"title":"血常规","checkupDate":"2026-02-30"}`, want: `{"title":"血常规"}`,
		warn: []string{"invalid_date"}},
	{name: "not a leap year", in: `{"title":"血常规","checkupDate":"2026/2/29"}`, want: `{"title":"血常规"}`,
		warn: []string{"invalid_date"}},
	{name: "leap day", in: `{"checkupDate":"2024年2月29日"}`, want: `{"checkupDate":"2024-02-29","reportYear":2024}`},
	{name: "month 13", in: `{"title":"血常规","checkupDate":"2026-13-01"}`, want: `{"title":"血常规"}`,
		warn: []string{"invalid_date"}},
	{name: "impossible compact date", in: `{"title":"血常规","checkupDate":"20260230"}`, want: `{"title":"血常规"}`,
		warn: []string{"invalid_date"}},
	{name: "invalid date keeps the year given", in: `{"checkupDate":"2026-02-30","reportYear":2026}`, want: `{"reportYear":2026}`,
		warn: []string{"invalid_date"}},

	// Report year.
	{name: "year number", in: `{"reportYear":2026}`, want: `{"reportYear":2026}`},
	{name: "year string", in: `{"reportYear":"2026"}`, want: `{"reportYear":2026}`},
	{name: "year with 年", in: `{"reportYear":"2026年"}`, want: `{"reportYear":2026}`},
	{name: "year full-width", in: `{"reportYear":"２０２６年"}`, want: `{"reportYear":2026}`},
	{name: "year from date", in: `{"checkupDate":"2025-12-31","reportYear":null}`, want: `{"checkupDate":"2025-12-31","reportYear":2025}`},
	{name: "year null word from date", in: `{"checkupDate":"2025/12/31","reportYear":"N/A"}`, want: `{"checkupDate":"2025-12-31","reportYear":2025}`},
	{name: "year given is kept", in: `{"checkupDate":"2026-01-02","reportYear":2025}`, want: `{"checkupDate":"2026-01-02","reportYear":2025}`},
	{name: "year out of range", in: `{"title":"x","reportYear":1800}`, want: `{"title":"x"}`,
		warn: []string{"invalid_value"}},

	// Validation of the draft's own fields.
	{name: "long title", in: `{"title":"` + strings.Repeat("题", 201) + `","hospital":"协和医院","indicators":[{"itemName":"WBC"}]}`,
		want: `{"hospital":"协和医院","indicators":[{"itemName":"WBC"}]}`, warn: []string{"invalid_value@title"}},
	{name: "long hospital", in: `{"title":"血常规","hospital":"` + strings.Repeat("院", 300) + `"}`,
		want: `{"title":"血常规"}`, warn: []string{"invalid_value@hospital"}},
	{name: "long name in a group", in: `[{"group":"G","items":[{"itemName":"A"},{"itemName":"` + strings.Repeat("n", 201) + `"}]}]`,
		want: `{"indicators":[{"itemName":"A","itemGroup":"G"}]}`, warn: []string{"indicator_dropped"}},
	{name: "year far out", in: `{"title":"x","checkupDate":"1800-01-01"}`, want: `{"title":"x"}`,
		warn: []string{"invalid_date"}},
	{name: "each indicator on its own", in: `[{"itemName":"A","unit":"` + strings.Repeat("u", 500) + `","valueNum":1},{"itemName":"` + strings.Repeat("n", 201) + `"},{"itemName":"C","unit":"g/L"}]`,
		want: `{"indicators":[{"itemName":"A","valueNum":1},{"itemName":"C","unit":"g/L"}]}`,
		warn: []string{"invalid_value@indicators[0].unit", "indicator_dropped@reply.indicators[1]"}},

	// Shapes seen from weaker models.
	{name: "indicators keyed by name", in: `{"title":"血脂","indicators":{"总胆固醇":"5.86 mmol/L","尿蛋白":"阴性(-)"}}`,
		want: `{"title":"血脂","indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L"},{"itemName":"尿蛋白","valueText":"阴性(-)"}]}`},
	{name: "indicators keyed by name, objects", in: `{"indicators":{"ALT":{"value":41,"unit":"U/L","range":"9-50"}}}`,
		want: `{"indicators":[{"itemName":"ALT","valueNum":41,"unit":"U/L","refLow":9,"refHigh":50}]}`},
	{name: "groups keyed by name", in: `{"indicators":{"血常规":[{"itemName":"WBC","valueNum":6.5}],"肝功能":[{"itemName":"ALT","valueNum":41}]}}`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5},{"itemName":"ALT","itemGroup":"肝功能","valueNum":41}]}`},
	{name: "a group keyed by name inside a list", in: `[{"group":"血常规","items":{"WBC":6.5}}]`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5}]}`},
	{name: "patient beside the report", in: `{"patient":{"name":"张三","age":45},"report":{"title":"血脂","indicators":[{"itemName":"TC","valueNum":5.6}]}}`,
		want: `{"title":"血脂","indicators":[{"itemName":"TC","valueNum":5.6}]}`},
	{name: "results outside any list are not guessed, but warned about", in: `{"title":"血脂","总胆固醇":"5.86 mmol/L"}`,
		want: `{"title":"血脂"}`, warn: []string{"indicator_dropped"}},
	{name: "pages in one reply merge as pages", in: `{"pages":[{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5}]},{"title":"血常规","indicators":[{"itemName":"ALT","valueNum":20}]}]}`,
		want: `{"title":"血常规","indicators":[{"itemName":"WBC","valueNum":6.5},{"itemName":"ALT","valueNum":20,"page":2}]}`},
	{name: "the list under 检验结果 at the top", in: `{"标题":"血脂","检验结果":[{"项目":"TC","结果":"5.6"}]}`,
		want: `{"title":"血脂","indicators":[{"itemName":"TC","valueNum":5.6}]}`},
}

func TestRuleDraft(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range draftTests {
		t.Run(tt.name, func(t *testing.T) {
			res := b.Build(decodeValue(t, tt.in))
			checkResult(t, tt.in, res, tt.want, tt.warn)
		})
	}
}

// Replies for the reply tests.
const (
	realAnswer = `{"title":"血脂四项","indicators":[` +
		`{"itemName":"总胆固醇","valueNum":5.60,"unit":"mmol/L","refHigh":5.2},` +
		`{"itemName":"甘油三酯","valueNum":1.20,"unit":"mmol/L","refHigh":1.7}]}`
	realDraft = `{"title":"血脂四项","indicators":[` +
		`{"itemName":"总胆固醇","valueNum":5.60,"unit":"mmol/L","refHigh":5.2},` +
		`{"itemName":"甘油三酯","valueNum":1.20,"unit":"mmol/L","refHigh":1.7}]}`
	formatExample = `{"title":"报告标题","indicators":[{"itemName":"项目名称","valueNum":0}]}`
)

// replyTests go through FromReply: choosing among candidates, truncation, and replies that are
// not a draft. A want of "" means an error with code model_output_unparseable.
var replyTests = []struct {
	name  string
	reply string
	cut   bool
	want  string
	warn  []string
	stage schema.ParseStage // "" means any
}{
	// Stages.
	{name: "strict", reply: realAnswer, want: realDraft, stage: parse.Strict},
	{name: "BOM and CRLF", reply: "\uFEFF" + strings.ReplaceAll(`{
  "title": "血脂四项",
  "indicators": [{"itemName": "总胆固醇", "valueNum": 5.60}]
}`, "\n", "\r\n") + "\r\n", want: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60}]}`, stage: parse.Strict},
	{name: "fenced with chatter", reply: "好的，以下是识别结果：\n" + fence + "json\n" + realAnswer + "\n" + fence + "\n如有疑问请告诉我。", want: realDraft, stage: parse.Fenced},
	{name: "tilde fence", reply: "~~~\n" + realAnswer + "\n~~~", want: realDraft, stage: parse.Fenced},
	{name: "chatter without fence", reply: "识别结果如下：\n" + realAnswer + "\n以上结果仅供参考。", want: realDraft, stage: parse.Extracted},
	// A draft as a JSON string inside a wrapper is found by the finder (parse reads the string),
	// not by a rule of Build's.
	{name: "a draft as a JSON string inside a wrapper", reply: `{"response":"{\"title\":\"甲功\",\"indicators\":[{\"itemName\":\"TSH\",\"valueNum\":2.1}]}"}`,
		want: `{"title":"甲功","indicators":[{"itemName":"TSH","valueNum":2.1}]}`},
	{name: "rows of names only as a JSON string inside a wrapper", reply: `{"response":"{\"indicators\":[{\"itemName\":\"TSH\"},{\"itemName\":\"FT4\"}]}"}`,
		want: `{"indicators":[{"itemName":"TSH"},{"itemName":"FT4"}]}`},
	{name: "a draft as a JSON string two wrappers deep", reply: `{"code":0,"data":{"text":"{\"indicators\":[{\"itemName\":\"TSH\",\"valueNum\":2.1}]}"}}`,
		want: `{"indicators":[{"itemName":"TSH","valueNum":2.1}]}`},
	{name: "braces in prose after the JSON", reply: realAnswer + "\n注意：{总胆固醇} 偏高，建议复查。", want: realDraft, stage: parse.Extracted},
	{name: "braces in prose after a fence", reply: fence + "json\n" + realAnswer + "\n" + fence + "\n注意：{总胆固醇} 偏高", want: realDraft, stage: parse.Fenced},
	{name: "repaired", reply: "{'title': '血脂四项', indicators: [{'itemName': '总胆固醇', 'valueNum': 5.60, 'refLow': None,},], // 完\n}",
		want: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60}]}`, stage: parse.Repaired},
	{name: "full-width punctuation and curly quotes", reply: `｛“title”：“血脂四项”，“indicators”：［｛“itemName”：“总胆固醇”，“valueNum”：5.60，“unit”：“mmol/L”｝］｝`,
		want: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60,"unit":"mmol/L"}]}`, stage: parse.Repaired},
	{name: "double-encoded", reply: `"{\"title\":\"血脂四项\",\"indicators\":[{\"itemName\":\"总胆固醇\",\"valueNum\":5.60}]}"`,
		want: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60}]}`},
	{name: "double-encoded title only in a fence", reply: "结果：\n" + fence + "json\n" + `"{\"title\":\"血脂四项\",\"indicators\":[]}"` + "\n" + fence,
		want: `{"title":"血脂四项"}`},
	{name: "Python NaN", reply: `{'indicators': [{'itemName': 'A', 'valueNum': NaN, 'refLow': None, 'refHigh': 5.2}]}`,
		want: `{"indicators":[{"itemName":"A","refHigh":5.2}]}`},
	{name: "double-encoded in chatter", reply: `识别结果："{\"title\":\"血脂四项\",\"indicators\":[{\"itemName\":\"总胆固醇\",\"valueNum\":5.60}]}"`,
		want: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60}]}`},
	{name: "title-only answer with a stray brace in prose", reply: `{"title":"血脂四项","hospital":"协和医院"}` + "\n提示：} 结束 {",
		want: `{"title":"血脂四项","hospital":"协和医院"}`},
	{name: "double-encoded in a fence", reply: "结果：\n" + fence + "json\n" + `"{\"title\":\"血脂四项\",\"indicators\":[{\"itemName\":\"总胆固醇\",\"valueNum\":5.60}]}"` + "\n" + fence,
		want: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60}]}`},

	// Several candidates: the one with the most indicators wins.
	{name: "echoed format example loses", reply: "格式示例：\n" + fence + "json\n" + formatExample + "\n" + fence + "\n识别结果：\n" + fence + "json\n" + realAnswer + "\n" + fence,
		want: realDraft, stage: parse.Fenced},
	{name: "echoed example without fences loses", reply: "请按此格式：" + formatExample + "\n结果：" + realAnswer, want: realDraft, stage: parse.Extracted},
	{name: "answer before a shorter afterthought", reply: realAnswer + "\n补充：" + `{"title":"补充","indicators":[{"itemName":"x"}]}`, want: realDraft},

	// Truncation.
	{name: "cut in a number", reply: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60},{"itemName":"甘油三酯","valueNum":4.`,
		want: `{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60}]}`, warn: []string{"output_truncated"}},
	{name: "cut in a string", reply: `[{"itemName":"总胆固醇","unit":"mmol/L"},{"itemName":"甘油三酯","unit":"mmo`,
		want: `{"indicators":[{"itemName":"总胆固醇","unit":"mmol/L"}]}`, warn: []string{"output_truncated"}},
	{name: "cut in a fence", reply: "好的：\n" + fence + "json\n" + `{"indicators":[{"itemName":"A","valueNum":1.5},{"itemName":"B","refRange":"3.9-6`,
		want: `{"indicators":[{"itemName":"A","valueNum":1.5}]}`, warn: []string{"output_truncated"}},
	{name: "cut in a group", reply: `{"indicators":[{"group":"血常规","items":[{"itemName":"WBC","valueNum":6.5},{"itemName":"RBC","valueNum":4.`,
		want: `{"indicators":[{"itemName":"WBC","itemGroup":"血常规","valueNum":6.5}]}`, warn: []string{"output_truncated"}},
	{name: "cut after a complete field of the open item", reply: `[{"itemName":"A","valueNum":1.5},{"itemName":"B","valueNum":4.5`,
		want: `{"indicators":[{"itemName":"A","valueNum":1.5}]}`, warn: []string{"output_truncated"}},
	{name: "cut in a draft field after the indicators", reply: `{"indicators":[{"itemName":"A"},{"itemName":"B"}],"hospital":"协和医`,
		want: `{"indicators":[{"itemName":"A"},{"itemName":"B"}]}`, warn: []string{"output_truncated"}},
	{name: "cut in a group's name", reply: `[{"itemName":"A"},{"group":"血常`,
		want: `{"indicators":[{"itemName":"A"}]}`, warn: []string{"output_truncated"}},
	{name: "cut flag with closed JSON", reply: realAnswer, cut: true, want: realDraft, warn: []string{"output_truncated"}},
	{name: "cut flag with unclosed JSON", reply: `[{"itemName":"A","valueNum":1.5},{"itemName":"B","valueNum":4.`, cut: true,
		want: `{"indicators":[{"itemName":"A","valueNum":1.5}]}`, warn: []string{"output_truncated"}},
	{name: "cut with other warnings", reply: `[{"itemName":"A","refLow":6.1,"refHigh":3.9},{"valueNum":1},{"itemName":"C","valueNum":7`,
		want: `{"indicators":[{"itemName":"A","refLow":3.9,"refHigh":6.1}]}`, warn: []string{"output_truncated", "reference_range_swapped", "indicator_dropped@reply.indicators[1]"}},
	{name: "cut before any item but after the title", reply: `{"title":"血脂四项","indicators":[{"itemName":"总胆`,
		want: `{"title":"血脂四项"}`, warn: []string{"output_truncated"}},
	{name: "cut before any item", reply: `{"indicators":[{"itemName":"总胆固醇","valueNum":5.`, want: ""},
	{name: "cut at the start", reply: "```json\n{", want: ""},

	// Replies that are not a draft.
	{name: "refusal", reply: "抱歉，图片太模糊，无法识别", want: ""},
	{name: "empty", reply: "", want: ""},
	{name: "white space", reply: "\n\n  ", want: ""},
	{name: "long refusal", reply: strings.Repeat("抱歉，图片太模糊，无法识别。", 30), want: ""},
	{name: "empty object", reply: `{}`, want: ""},
	{name: "empty list", reply: `[]`, want: ""},
	{name: "error object", reply: `{"error":"无法识别"}`, want: ""},
	{name: "message object", reply: `{"code":1,"message":"抱歉，图片太模糊，无法识别"}`, want: ""},
	{name: "empty indicators", reply: `{"indicators": []}`, want: ""},
	{name: "all fields null", reply: `{"title":null,"hospital":null,"checkupDate":null,"reportYear":null,"indicators":[]}`, want: ""},
	{name: "all fields null words", reply: `{"title":"N/A","hospital":"","checkupDate":"None","reportYear":"null","indicators":[]}`, want: ""},
	{name: "empty draft in a wrapper", reply: `{"data":{"indicators":[]}}`, want: ""},
	{name: "empty draft in a fence", reply: "识别失败：\n" + fence + "json\n{\"indicators\": []}\n" + fence, want: ""},
	{name: "only unusable items", reply: `{"indicators":[{"itemName":""},"WBC",null]}`, want: ""},
	{name: "refusal in a result key", reply: `{"result":"抱歉，图片太模糊，无法识别"}`, want: ""},
	{name: "status wrapper without data", reply: `{"status":"error","message":"图片模糊","data":null}`, want: ""},
	{name: "patient details only", reply: `{"name":"张三","age":45,"gender":"男"}`, want: ""},
	{name: "prose braces only", reply: "注意：{总胆固醇} 偏高", want: ""},
}

func TestRuleReply(t *testing.T) {
	b := New(lexicon.Default())
	for _, tt := range replyTests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := b.FromReply(tt.reply, tt.cut)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("FromReply(%q, %v) = %s, want error %s", tt.reply, tt.cut, mustJSON(out.Result), problem.ModelOutputUnparseable)
				}
				var pe *problem.Error
				if !errors.As(err, &pe) {
					t.Fatalf("FromReply(%q) error %T %v, want *problem.Error", tt.reply, err, err)
				}
				if pe.Code != problem.ModelOutputUnparseable {
					t.Errorf("FromReply(%q) code = %s, want %s", tt.reply, pe.Code, problem.ModelOutputUnparseable)
				}
				checkQuote(t, tt.reply, pe)
				if out.Stage != parse.Failed {
					t.Errorf("FromReply(%q) stage = %q, want %q", tt.reply, out.Stage, parse.Failed)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromReply(%q, %v): %v", tt.reply, tt.cut, err)
			}
			checkResult(t, tt.reply, out.Result, tt.want, tt.warn)
			if tt.stage != "" && out.Stage != tt.stage {
				t.Errorf("FromReply(%q) stage = %q, want %q", tt.reply, out.Stage, tt.stage)
			}
			truncated := slices.Contains(tt.warn, string(schema.OutputTruncated))
			if out.Truncated != truncated {
				t.Errorf("FromReply(%q) Truncated = %v, want %v", tt.reply, out.Truncated, truncated)
			}
		})
	}
}

// checkQuote checks that a detail quotes the start of the reply, at most 120 characters of it,
// either as written or Go-quoted (a newline shown as \n).
// checkQuote: the problem quotes the reply's start in its excerpt, at most 120 characters, and
// never in its detail, which must stay safe to log.
func checkQuote(t *testing.T, reply string, pe *problem.Error) {
	t.Helper()
	r := []rune(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(reply), "\uFEFF")))
	if len(r) == 0 {
		return
	}
	n := min(len(r), 120)
	head := string(r[:n])
	if !strings.HasPrefix(pe.Excerpt, head) {
		t.Errorf("excerpt %q does not hold the reply's first %d characters %q", pe.Excerpt, n, head)
	}
	if len(r) > 120 && strings.HasPrefix(pe.Excerpt, string(r[:121])) {
		t.Errorf("excerpt %q holds more than 120 characters of the reply", pe.Excerpt)
	}
	if n >= 6 && strings.Contains(pe.Detail, head) {
		t.Errorf("detail %q quotes the reply: it must stay safe to log", pe.Detail)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
