// Package draft turns a JSON value from a model's reply into an OcrDraft and warnings, item by
// item: one bad indicator is dropped with a warning and never costs the others, and a value that
// cannot be read with certainty is null with a warning, never a guess.
//
// Warning paths: a warning about a kept indicator names its place in the draft
// (indicators[3].refLow); a warning about a dropped item names its place in the reply
// (indicators[2], or indicators[1].items[4] inside a group), since it has none in the draft.
package draft

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Builder builds drafts. It is safe for concurrent use.
type Builder struct {
	validate *validator.Validate
}

// New returns a Builder.
func New() *Builder {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		return name
	})
	return &Builder{validate: v}
}

// Limits on a reply's shape, so that hostile nesting costs nothing.
const (
	maxUnwrap     = 4 // wrapper objects around the draft
	maxGroupDepth = 3 // groups inside groups
)

// Build reads a draft out of a decoded JSON value. It never fails: what it cannot read is null or
// left out, with a warning.
func (b *Builder) Build(v parse.Value) schema.Result {
	bd := build{b: b}
	bd.draft.Indicators = []schema.OcrIndicator{}
	bd.root(v, 0)
	bd.check()
	return bd.result()
}

// maxWarnings bounds the warnings one draft lists: a reply of 100 000 junk items must not cost
// 100 000 formatted messages. The rest are counted, per code, in one warning each.
const maxWarnings = 100

// result is the draft and its warnings, those over maxWarnings summed up by code.
func (bd *build) result() schema.Result {
	ws := bd.warnings
	if len(bd.over) > 0 {
		ws = slices.Clip(ws)
		counts := map[schema.WarningCode]int{}
		var order []schema.WarningCode
		for _, c := range bd.over {
			if counts[c] == 0 {
				order = append(order, c)
			}
			counts[c]++
		}
		for _, c := range order {
			ws = append(ws, schema.WarnDraft(c, fmt.Sprintf("%d more warnings of this kind are not listed", counts[c])))
		}
	}
	return schema.Result{Draft: bd.draft, Warnings: ws}
}

// build is the state of one Build call.
type build struct {
	b        *Builder
	a        arena
	draft    schema.OcrDraft
	warnings []schema.Warning
	over     []schema.WarningCode // warnings past maxWarnings, counted, not written
}

func (bd *build) warn(code schema.WarningCode, path, format string, args ...any) {
	if len(bd.warnings) >= maxWarnings {
		bd.over = append(bd.over, code)
		return
	}
	bd.warnings = append(bd.warnings, schema.Warn(code, path, fmt.Sprintf(format, args...)))
}

// dropped warns that item i of the list at path was left out; past maxWarnings it only counts,
// without building the path.
func (bd *build) dropped(path string, i int, format string, args ...any) {
	if len(bd.warnings) >= maxWarnings {
		bd.over = append(bd.over, schema.IndicatorDropped)
		return
	}
	bd.warn(schema.IndicatorDropped, itemPath(path, i), format, args...)
}

// root finds the draft in v: a list is the indicators; an object with draft keys is the draft; an
// object with an item name is one indicator; any other object with exactly one object or list
// among its values is a wrapper ({"data": …}, {"code": 0, "result": …}) and is unwrapped.
func (bd *build) root(v parse.Value, depth int) {
	switch v.Kind {
	case parse.Array:
		bd.items(tableRows(v.Elems), "indicators", nil, 0)
	case parse.Object:
		var f fields
		if f.pick(v.Members, 0) {
			bd.fields(&f, v.Members)
			return
		}
		var item fields
		if item.pick(v.Members, 1) && item[fItemName].key != "" && hasResult(&item) {
			bd.items([]parse.Value{v}, "indicators", nil, 0)
			return
		}
		if lists := otherLists(v.Members, 0); len(lists) >= 2 {
			bd.groups(lists) // {"血常规": [...], "尿常规": [...]}
			return
		}
		if depth >= maxUnwrap {
			return
		}
		// A wrapper: {"data": …}, {"code": 0, "result": …}, or {"patient": {…}, "report": {…}}.
		// Each object or list inside is read on its own, and the one that yields the most
		// indicators (then any data at all) is the draft.
		if bd.pages(v.Members, depth) {
			return
		}
		var best *build
		for _, m := range v.Members {
			val := m.Value
			if val.Kind == parse.String { // {"response": "{\"title\": …}"}: JSON inside a string
				if inner, err := parse.Decode(strings.TrimSpace(val.Text)); err == nil && inner.IsContainer() {
					val = inner
				}
			}
			if !val.IsContainer() {
				continue
			}
			sub := &build{b: bd.b}
			sub.draft.Indicators = []schema.OcrIndicator{}
			sub.root(val, depth+1)
			if best == nil || len(sub.draft.Indicators) > len(best.draft.Indicators) ||
				len(sub.draft.Indicators) == len(best.draft.Indicators) && empty(best.draft) && !empty(sub.draft) {
				best = sub
			}
		}
		if best != nil {
			bd.draft, bd.warnings, bd.over = best.draft, best.warnings, best.over
		}
	}
}

// hasResult reports whether an item's fields hold a result or a range, so that a lone object
// with only a name (a patient: {"name": "张三", "age": 45}) is not taken for an indicator.
func hasResult(f *fields) bool {
	for _, k := range []field{fValueNum, fValueText, fValue, fUnit, fRefLow, fRefHigh, fRefRange} {
		if f[k].key != "" {
			return true
		}
	}
	return false
}

// keyedItems reads indicators written as an object keyed by name — {"总胆固醇": "5.86 mmol/L"},
// {"总胆固醇": {"value": 5.86, …}}, or groups {"血常规": [...]} — as the list they mean.
func keyedItems(members []parse.Member) []parse.Value {
	out := make([]parse.Value, len(members))
	name := func(k string) parse.Member {
		return parse.Member{Key: "itemName", Value: parse.Value{Kind: parse.String, Text: k}}
	}
	for i, m := range members {
		switch m.Value.Kind {
		case parse.Array:
			out[i] = parse.Value{Kind: parse.Object, Members: []parse.Member{
				{Key: "itemGroup", Value: parse.Value{Kind: parse.String, Text: m.Key}}, {Key: "items", Value: m.Value}}}
		case parse.Object:
			var f fields
			f.pick(m.Value.Members, 1)
			if f[fItemName].key != "" {
				out[i] = m.Value
				continue
			}
			out[i] = parse.Value{Kind: parse.Object, Members: append([]parse.Member{name(m.Key)}, m.Value.Members...)}
		default:
			out[i] = parse.Value{Kind: parse.Object, Members: []parse.Member{name(m.Key), {Key: "value", Value: m.Value}}}
		}
	}
	return out
}

// slot is the key and value chosen for a field; key is "" when the object has none.
type slot struct {
	key  string
	rank int
	val  parse.Value
}

// fields holds an object's value for each field, chosen through the alias table.
type fields [numFields]slot

// pick maps an object's keys to fields at a level (0 draft, 1 item) and reports whether any key
// matched. When several keys mean one field, the alias listed first wins; the same key twice,
// the last, as encoding/json would.
func (f *fields) pick(members []parse.Member, level int) bool {
	found := false
	for _, m := range members {
		a := lookup(m.Key)[level]
		if a.field == noField {
			continue
		}
		if cur := &f[a.field]; cur.key != "" && cur.rank < a.rank {
			continue
		}
		f[a.field] = slot{key: m.Key, rank: a.rank, val: m.Value}
		found = true
	}
	return found
}

// fields reads the draft's own fields.
func (bd *build) fields(f *fields, members []parse.Member) {
	d := &bd.draft
	// The report's own fields may sit in an object beside the list ({"report": {"title": …},
	// "results": [...]}); the patient's object is never read for them.
	for _, m := range members {
		if m.Value.Kind != parse.Object || known(m.Key, 0) || isPersonKey(m.Key) {
			continue
		}
		var g fields
		g.pick(m.Value.Members, 0)
		for _, k := range []field{fTitle, fHospital, fCheckupDate, fReportYear} {
			if f[k].key == "" && g[k].key != "" {
				f[k] = g[k]
			}
		}
	}
	d.Title = bd.text(f[fTitle], "title")
	d.Hospital = bd.text(f[fHospital], "hospital")
	if s := f[fCheckupDate]; s.key != "" {
		date, ok := readDate(s.val)
		if !ok {
			bd.warn(schema.InvalidDate, "checkupDate", "%s %s; set to null", quote(s.val), dateTrouble(s.val))
		}
		d.CheckupDate = date
	}
	if s := f[fReportYear]; s.key != "" {
		y, ok := readYear(s.val)
		if !ok {
			bd.warn(schema.InvalidValue, "reportYear", "%s is not a year; set to null", quote(s.val))
		}
		d.ReportYear = y
	}
	switch {
	case d.ReportYear != nil:
	case d.CheckupDate != nil:
		y := d.CheckupDate.Year
		d.ReportYear = &y
	default: // a date without its day (2026年3月) still says its year
		if y, ok := yearOf(f[fCheckupDate].val); ok {
			d.ReportYear = &y
		}
	}

	if f[fIndicators].key == "" {
		// No list key we know: lists of objects under other keys are the indicators, one list
		// as it is, several as groups named by their keys.
		switch lists := otherLists(members, 0); len(lists) {
		case 0:
		case 1:
			bd.items(tableRows(lists[0].Value.Elems), lists[0].Key, nil, 0)
		default:
			bd.groups(lists)
		}
		bd.unplaced(members)
		return
	}
	// Every key that names the list counts, in order: a model that writes "indicators" twice
	// means both lists, not the last.
	for _, m := range members {
		if !known(m.Key, 0) || fieldOf(m.Key, 0) != fIndicators {
			continue
		}
		switch m.Value.Kind {
		case parse.Array:
			bd.items(tableRows(m.Value.Elems), "indicators", nil, 0)
		case parse.Object:
			bd.items(keyedItems(m.Value.Members), "indicators", nil, 0)
		case parse.Null:
		case parse.String:
			if !isNullWord(strings.TrimSpace(m.Value.Text)) {
				bd.warn(schema.IndicatorDropped, "indicators", "indicators is text, not a list; nothing was read from it")
			}
		default:
			bd.warn(schema.IndicatorDropped, "indicators", "indicators is not a list; nothing was read from it")
		}
	}
}

// pages reads {"pages": [page, page]} or {"page1": page, "page2": page}, one reply holding several
// pages' drafts, by merging them
// as separate pages would be (first page's fields, page_conflict, duplicate_indicator), and
// reports whether it did.
func (bd *build) pages(members []parse.Member, depth int) bool {
	for _, m := range members {
		if !slices.Contains(pageKeys, normKey(m.Key)) || m.Value.Kind != parse.Array || len(m.Value.Elems) < 2 {
			continue
		}
		var pages []Page
		for _, p := range m.Value.Elems {
			if p.Kind != parse.Object {
				return false
			}
			sub := &build{b: bd.b}
			sub.draft.Indicators = []schema.OcrIndicator{}
			sub.root(p, depth+1)
			res := sub.result()
			pages = append(pages, Page{Result: &res})
		}
		merged, err := Merge(pages)
		if err != nil {
			return false
		}
		bd.draft, bd.warnings = merged.Draft, merged.Warnings
		return true
	}
	// {"page1": {…}, "第2页": {…}}: pages keyed by their number.
	var pages []Page
	for _, m := range members {
		if m.Value.Kind != parse.Object || !isPageKey(m.Key) {
			continue
		}
		sub := &build{b: bd.b}
		sub.draft.Indicators = []schema.OcrIndicator{}
		sub.root(m.Value, depth+1)
		res := sub.result()
		pages = append(pages, Page{Result: &res})
	}
	if len(pages) < 2 {
		return false
	}
	merged, err := Merge(pages)
	if err != nil {
		return false
	}
	bd.draft, bd.warnings = merged.Draft, merged.Warnings
	return true
}

// unplaced warns when a draft has no indicators but its object has values under keys that mean
// nothing ({"title": "血脂", "总胆固醇": "5.86 mmol/L"}): they may be results, and reading them as
// such would be a guess, so the person is told instead of shown an empty draft in silence.
func (bd *build) unplaced(members []parse.Member) {
	if len(bd.draft.Indicators) > 0 {
		return
	}
	var keys []string
	for _, m := range members {
		if (m.Value.Kind == parse.String || m.Value.Kind == parse.Number) && !known(m.Key, 0) && !isPersonKey(m.Key) {
			keys = append(keys, strconv.Quote(m.Key))
		}
	}
	if len(keys) > 0 {
		bd.warnings = append(bd.warnings, schema.WarnDraft(schema.IndicatorDropped,
			"no indicator list was found; values under "+strings.Join(keys, ", ")+" were not read as results: check the report"))
	}
}

// groups reads lists keyed by their group's name.
func (bd *build) groups(lists []parse.Member) {
	for _, l := range lists {
		var g *string
		if k := strings.TrimSpace(l.Key); !isNullWord(k) {
			g = &k
		}
		bd.items(tableRows(l.Value.Elems), l.Key, g, 1)
	}
}

// otherLists returns the members whose value is a list of objects (or of table rows) and whose
// key means nothing at the level.
func otherLists(members []parse.Member, level int) []parse.Member {
	var out []parse.Member
	for _, m := range members {
		if m.Value.Kind != parse.Array || len(m.Value.Elems) == 0 || known(m.Key, level) || isPersonKey(m.Key) {
			continue
		}
		objects := 0
		for _, e := range m.Value.Elems {
			if e.Kind == parse.Object || e.Kind == parse.Array {
				objects++
			}
		}
		if objects*2 > len(m.Value.Elems) {
			out = append(out, m)
		}
	}
	return out
}

// fieldOf is the field a key means at a level, or noField.
func fieldOf(key string, level int) field { return lookup(key)[level].field }

// lookup finds a key in the alias table, as written first (the table holds the aliases as
// written too, sparing normKey on the common keys), then normalised.
func lookup(key string) [2]aliasRank {
	if e, ok := keyTable[key]; ok {
		return e
	}
	return keyTable[normKey(key)]
}

func known(key string, level int) bool { return fieldOf(key, level) != noField }

// tableRows reads a list written as a table: a header row of field names, then one row per item
// ([["项目","结果","单位","参考范围"], ["钠","141","mmol/L","137-147"]]). Rows are read only under
// a header that names at least an item and a result; without one, a row's meaning would be a
// guess, and it is dropped as not an object.
func tableRows(list []parse.Value) []parse.Value {
	if len(list) < 2 || list[0].Kind != parse.Array {
		return list
	}
	header := list[0].Elems
	var names, results int
	for _, h := range header {
		if h.Kind != parse.String {
			return list
		}
		switch fieldOf(h.Text, 1) {
		case fItemName:
			names++
		case fValue, fValueNum, fValueText:
			results++
		}
	}
	if names != 1 || results == 0 {
		return list
	}
	out := make([]parse.Value, 0, len(list)-1)
	for _, row := range list[1:] {
		if row.Kind != parse.Array {
			out = append(out, row)
			continue
		}
		obj := parse.Value{Kind: parse.Object}
		for i, cell := range row.Elems {
			if i < len(header) {
				obj.Members = append(obj.Members, parse.Member{Key: header[i].Text, Value: cell})
			}
		}
		out = append(out, obj)
	}
	return out
}

// text reads a text field of the draft.
func (bd *build) text(s slot, path string) *string {
	if s.key == "" {
		return nil
	}
	t, ok := readText(s.val, &bd.a)
	if !ok {
		bd.warn(schema.InvalidValue, path, "%s is not text; set to null", quote(s.val))
	}
	return t
}

// items reads a list of indicators, flattening groups: {"group": G, "items": [...]} gives each of
// its items the group G unless the item names its own.
func (bd *build) items(list []parse.Value, path string, group *string, depth int) {
	for i, raw := range list {
		if raw.Kind == parse.String && raw.Text == parse.Unreadable {
			bd.dropped(path, i, "item is not JSON, even after repair")
			continue
		}
		if raw.Kind != parse.Object {
			bd.dropped(path, i, "item is %s, not an object", kind(raw))
			continue
		}
		var f fields
		f.pick(raw.Members, 1)
		for _, k := range [...]field{fValue, fItemName} {
			if v := f[k]; f[fIndicators].key == "" && v.val.Kind == parse.Array && len(otherLists([]parse.Member{{Key: "_", Value: v.val}}, 1)) == 1 {
				f[fIndicators] = v // {"类别": "血常规", "检验结果": [...]} or {"組別": …, "項目": [...]}: the group's list
				f[k] = slot{}
			}
		}
		if sub := f[fIndicators].val; sub.Kind == parse.Array || sub.Kind == parse.Object && !hasResult(&f) {
			if sub.Kind == parse.Object {
				sub = parse.Value{Kind: parse.Array, Elems: keyedItems(sub.Members)}
			}
			if depth >= maxGroupDepth {
				bd.dropped(path, i, "groups nested too deep")
				continue
			}
			g := group
			if t, _ := readText(f[fItemGroup].val, &bd.a); t != nil {
				g = t
			} else if t, _ := readText(f[fItemName].val, &bd.a); t != nil {
				g = t
			}
			bd.items(tableRows(sub.Elems), itemPath(path, i)+"."+f[fIndicators].key, g, depth+1)
			continue
		}
		if ind, ok := bd.item(&f, path, i, group); ok {
			bd.draft.Indicators = append(bd.draft.Indicators, ind)
		}
	}
}

func itemPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// item reads one indicator. Warnings about it name its place in the draft; if it is dropped,
// they are taken back and the one warning names its place in the reply.
func (bd *build) item(f *fields, path string, i int, group *string) (schema.OcrIndicator, bool) {
	var ind schema.OcrIndicator
	name, _ := readText(f[fItemName].val, &bd.a)
	if name == nil || *name == "" {
		bd.dropped(path, i, "item has no name")
		return ind, false
	}
	if isPlaceholder(*name) {
		bd.dropped(path, i, "item is a placeholder from a format example (%q), not a result", *name)
		return ind, false
	}
	ind.ItemName = *name
	mark, markOver := len(bd.warnings), len(bd.over)
	idx := len(bd.draft.Indicators)
	warn := func(code schema.WarningCode, field, format string, args ...any) {
		bd.warn(code, itemPath("indicators", idx)+"."+field, format, args...)
	}

	if g, ok := readText(f[fItemGroup].val, &bd.a); ok && g != nil {
		ind.ItemGroup = g
	} else {
		ind.ItemGroup = group
	}
	if u, ok := readText(f[fUnit].val, &bd.a); ok {
		ind.Unit = u
	} else {
		warn(schema.InvalidValue, "unit", "%s is not text; set to null", quote(f[fUnit].val))
	}
	setUnit := func(u string) {
		if ind.Unit == nil && u != "" {
			ind.Unit = bd.a.str(u)
		}
	}

	// The result: valueNum, then valueText, then a generic value key.
	num := readValue(f[fValueNum].val, &bd.a)
	txt := readValue(f[fValueText].val, &bd.a)
	gen := readValue(f[fValue].val, &bd.a)
	// A number's own unit that differs from the unit given: a power-of-ten multiplier
	// ("1.2×10^3" beside IU/mL) belongs in front of the unit, as the report prints it; any other
	// ("98 mg/dL" beside mmol/L) leaves the given unit, as the rule says, with a warning to check.
	// Only the value that gives the number is checked: valueNum, else valueText, else value.
	for _, v := range []struct {
		v     *value
		field string
	}{{&num, "valueNum"}, {&txt, "valueText"}, {&gen, "valueNum"}} {
		if v.v.num == nil {
			continue
		}
		if v.v.unit == "" || ind.Unit == nil || sameUnit(v.v.unit, *ind.Unit) {
			break
		}
		if isMultiplier(v.v.unit) && !isMultiplier(leadingMultiplier(*ind.Unit)) {
			ind.Unit = bd.a.str(v.v.unit + " " + *ind.Unit)
			break
		}
		warn(schema.UnitConflict, v.field, "%q carries the unit %s but the unit given is %s; kept %s", v.v.src, v.v.unit, *ind.Unit, *ind.Unit)
		break
	}
	if num.bad {
		warn(schema.InvalidValue, "valueNum", "%s is not a number; set to null", quote(f[fValueNum].val))
	}
	if txt.bad {
		warn(schema.InvalidValue, "valueText", "%s is not text; set to null", quote(f[fValueText].val))
	}
	ind.ValueNum = num.num
	setUnit(num.unit)
	if num.text != nil { // valueNum held text such as "阴性": it is the result as text
		if txt.text == nil && txt.num == nil {
			ind.ValueText = num.text
		} else if txt.text == nil || *txt.text != *num.text {
			warn(schema.InvalidValue, "valueNum", "%q is not a number; set to null", *num.text)
		}
	}
	switch {
	case txt.num != nil && ind.ValueNum == nil: // a plain number in valueText is the number
		ind.ValueNum = txt.num
		setUnit(txt.unit)
	case txt.num != nil && ind.ValueNum.Equal(*txt.num): // said twice
		setUnit(txt.unit)
	case txt.num != nil:
		s := strings.TrimSpace(f[fValueText].val.Text)
		ind.ValueText = &s
	case txt.text != nil:
		ind.ValueText = txt.text
	}
	if ind.ValueNum != nil && ind.ValueText != nil && censors(*ind.ValueText, *ind.ValueNum) {
		ind.ValueNum = nil // valueNum 0.5 beside valueText "<0.5": the result is below 0.5, not 0.5
	}
	if ind.ValueNum == nil && ind.ValueText == nil {
		if gen.bad {
			warn(schema.InvalidValue, "valueNum", "%s is not a result; set to null", quote(f[fValue].val))
		}
		ind.ValueNum, ind.ValueText = gen.num, gen.text
		setUnit(gen.unit)
	}
	for _, k := range [...]field{fValueNum, fValueText, fValue, fRefRange, fRefLow, fRefHigh} {
		setUnit(keyUnit(f[k].key)) // value(mmol/L): a unit printed only in the key
	}

	// The reference range: refLow and refHigh, each a number or a range string, then a range key.
	lowRange, low, lowOK := readRange(f[fRefLow].val, &bd.a)
	highRange, high, highOK := readRange(f[fRefHigh].val, &bd.a)
	rng, lone, rngOK := readRange(f[fRefRange].val, &bd.a)
	if !lowOK {
		warn(schema.InvalidValue, "refLow", "%s is not a bound; set to null", quote(f[fRefLow].val))
	}
	if !highOK {
		warn(schema.InvalidValue, "refHigh", "%s is not a bound; set to null", quote(f[fRefHigh].val))
	}
	if !rngOK || lone != nil {
		warn(schema.InvalidValue, "refLow", "reference range %s could not be read; bounds set to null", quote(f[fRefRange].val))
	}
	ind.RefLow = first(low, lowRange.low, highRange.low, rng.low)
	ind.RefHigh = first(high, highRange.high, lowRange.high, rng.high)
	setUnit(lowRange.unit)
	setUnit(highRange.unit)
	setUnit(rng.unit)
	if ind.RefLow != nil && ind.RefHigh != nil && ind.RefLow.Cmp(*ind.RefHigh) > 0 {
		ind.RefLow, ind.RefHigh = ind.RefHigh, ind.RefLow
		warn(schema.ReferenceRangeSwapped, "refLow", "reference range %s–%s was reversed; swapped", ind.RefHigh, ind.RefLow)
	}

	// Validation, field by field: a broken optional field is nulled, a broken name drops the item.
	if err := bd.b.validate.Struct(ind); err != nil {
		for _, fe := range asFieldErrors(err) {
			if fe.StructField() == "ItemName" {
				bd.warnings, bd.over = bd.warnings[:mark], bd.over[:markOver]
				bd.dropped(path, i, "item name %s", describe(fe))
				return ind, false
			}
			reflect.ValueOf(&ind).Elem().FieldByName(fe.StructField()).SetZero()
			warn(schema.InvalidValue, fe.Field(), "%s; set to null", describe(fe))
		}
	}
	return ind, true
}

// check validates the draft's own fields, nulling any that break a rule.
func (bd *build) check() {
	d := bd.draft
	d.Indicators = nil // validated one by one in item
	err := bd.b.validate.Struct(d)
	for _, fe := range asFieldErrors(err) {
		reflect.ValueOf(&bd.draft).Elem().FieldByName(fe.StructField()).SetZero()
		bd.warn(schema.InvalidValue, fe.Field(), "%s; set to null", describe(fe))
	}
}

func asFieldErrors(err error) validator.ValidationErrors {
	ves, _ := err.(validator.ValidationErrors)
	return ves
}

// describe says what rule a field broke, without echoing a long value.
func describe(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is missing"
	case "max":
		return "is longer than " + fe.Param() + " characters"
	case "gte":
		return "is less than " + fe.Param()
	case "lte":
		return "is greater than " + fe.Param()
	}
	return "breaks rule " + fe.Tag()
}

func first(ds ...*schema.Decimal) *schema.Decimal {
	for _, d := range ds {
		if d != nil {
			return d
		}
	}
	return nil
}

// kind names a JSON value's type for a warning.
func kind(v parse.Value) string {
	switch v.Kind {
	case parse.Null:
		return "null"
	case parse.String:
		return "a string"
	case parse.Bool:
		return "a boolean"
	case parse.Array:
		return "a list"
	case parse.Object:
		return "an object"
	}
	return "a number"
}

// quote renders a value for a warning, short.
func quote(v parse.Value) string {
	switch v.Kind {
	case parse.String:
		r := []rune(v.Text)
		if len(r) > 40 {
			return strconv.Quote(string(r[:40]) + "…")
		}
		return strconv.Quote(v.Text)
	case parse.Null:
		return "null"
	case parse.Array, parse.Object:
		return kind(v)
	}
	return v.Text
}
