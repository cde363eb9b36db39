// Package draft turns a JSON value from a model's reply into an OcrDraft and warnings, item by
// item: one bad indicator is dropped with a warning and never costs the others, and a value that
// cannot be read with certainty is null with a warning, never a guess.
//
// Warning paths: a warning about a kept indicator names its place in the draft
// (indicators[3].refLow); a warning about a dropped item names its place in the reply
// (indicators[2], or indicators[1].items[4] inside a group), since it has none in the draft.
// Every warning of a build has page 1 (Merge gives page i+1) and params: the item's name and the
// values its message speaks of, as written in the reply.
//
// Evidence: the reader keeps what the report printed beside a value, so that the checks can hold
// the value against it, and judges nothing itself. printedFlag is the mark beside the number
// (↑, H, (高), *) or a flag column's; refText is the range as written, and refLow and refHigh are
// split from it by code (the model's own split only when refText gives no bounds); a range by sex
// or by condition keeps its text and has no bounds here, and the lexicon's reading of it goes
// with the row (OcrIndicator.Range) for the checks to pick the span that applies. page is the
// page the row came from; analyte is the lexicon's key for the row's name, group and unit.
package draft

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Builder builds drafts. It is safe for concurrent use.
type Builder struct {
	validate *validator.Validate
	lex      *lexicon.Lexicon // names each row's analyte
}

// New returns a Builder that reads names and ranges with lex.
func New(lex *lexicon.Lexicon) *Builder {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		return name
	})
	return &Builder{validate: v, lex: lex}
}

// Lexicon is the lexicon b reads with: the checks of its drafts should judge with the same.
func (b *Builder) Lexicon() *lexicon.Lexicon {
	return b.lex
}

// Limits on a reply's shape, so that hostile nesting costs nothing.
const (
	maxUnwrap     = 4 // wrapper objects around the draft
	maxGroupDepth = 3 // groups inside groups
)

// Build reads a draft out of a decoded JSON value. It never fails: what it cannot read is null or
// left out, with a warning.
func (b *Builder) Build(v parse.Value) schema.Result { return b.build(v, modelRows{}, false) }

// build reads a draft whose rows come from source: a model's reply, or a draft a person
// confirmed (Validate), whose bounds and pages are the person's. clean says that v's text is
// known to hold no invisible character (see cleanText), sparing the walk that removes them.
func (b *Builder) build(v parse.Value, source rowSource, clean bool) schema.Result {
	bd := build{b: b, page: 1, source: source}
	bd.a.lex = b.lex
	bd.draft.Indicators = []schema.OcrIndicator{}
	if !clean {
		v = visible(v)
	}
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
			ws = append(ws, msg.New(c, "more", nil, bd.pageNum(), map[string]string{"count": strconv.Itoa(counts[c])}))
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
	page     int                  // the page the reply is of, 1-based
	pagePtr  *int                 // page, shared by every indicator and warning of the build
	source   rowSource            // where the rows come from, which settles their reading
}

// sub starts the build of a part of the reply, read on its own.
func (bd *build) sub() *build {
	sub := &build{b: bd.b, page: bd.page, source: bd.source}
	sub.a.lex = bd.b.lex
	sub.draft.Indicators = []schema.OcrIndicator{}
	return sub
}

// pageNum is the build's page for an indicator or a warning. The pointer is shared: a page is
// replaced (Merge), never written through.
func (bd *build) pageNum() *int {
	if bd.pagePtr == nil || *bd.pagePtr != bd.page {
		p := bd.page
		bd.pagePtr = &p
	}
	return bd.pagePtr
}

// warn warns of code for reason (its row in internal/msg) about path, with params: the facts
// the message speaks of.
func (bd *build) warn(code schema.WarningCode, reason, path string, params map[string]string) {
	if len(bd.warnings) >= maxWarnings {
		bd.over = append(bd.over, code)
		return
	}
	bd.warnings = append(bd.warnings, msg.New(code, reason, &path, bd.pageNum(), params))
}

// dropped warns that item i of the list at path was left out, for reason; past maxWarnings it
// only counts, without building the path.
func (bd *build) dropped(path string, i int, reason string, params map[string]string) {
	if len(bd.warnings) >= maxWarnings {
		bd.over = append(bd.over, schema.IndicatorDropped)
		return
	}
	bd.warn(schema.IndicatorDropped, reason, ReplyPrefix+itemPath(path, i), params)
}

// ReplyPrefix starts the path of a dropped item: its place in the model's reply
// (reply.indicators[2]), never a path into the draft, where indicators[2] is a kept row.
const ReplyPrefix = "reply."

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
		if list, at, ok := asTable(v); ok { // {"headers": [...], "rows": [[...], ...]}
			bd.items(list, at, nil, 0)
			return
		}
		var item fields
		if item.pick(v.Members, 1) && item[fItemName].key != "" && hasResult(&item) {
			bd.items([]parse.Value{v}, "indicators", nil, 0)
			return
		}
		switch lists := otherLists(v.Members, 0); {
		case len(lists) > 0 && reportBeside(v.Members):
			// {"report": {"title": …, "date": …}, "table": {"headers": …, "rows": …}}: the
			// report's fields in an object beside rows under a key no list alias names. Read as
			// the draft it is, the fields from that object, the rows from beside it; unwrapped,
			// one of the two would be lost.
			bd.fields(&f, v.Members)
			return
		case len(lists) >= 2:
			bd.groups(lists) // {"血常规": [...], "尿常规": [...]}
			return
		case len(lists) == 1 && (lists[0].table || bd.section(lists[0].key) != nil):
			// {"血脂": [...]}, {"table": {"headers": …, "rows": …}}: one list that no wrapper holds
			bd.items(lists[0].elems, lists[0].path, bd.section(lists[0].key), 0)
			return
		}
		if isKeyedRows(v.Members) { // {"WBC": {"result": "6.5"}, "HGB": {"result": "135"}}
			bd.items(keyedItems(v.Members), "indicators", nil, 0)
			return
		}
		if depth >= maxUnwrap {
			return
		}
		// A wrapper: {"data": …}, {"code": 0, "result": …}, or {"patient": {…}, "report": {…}}.
		// Each object or list inside is read on its own, and the one that yields the most
		// indicators (then any data at all) is the draft. The finder has most often unwrapped it
		// already; this stays for what it leaves here: a tie, which the reply's own value wins
		// ({"data": [rows]} fits as well as its list), and values past its walk bound. JSON held
		// in a wrapper's strings is the finder's alone: parse reads it within its work bound.
		if bd.pages(v.Members, depth) {
			return
		}
		var best *build
		for _, m := range v.Members {
			val := m.Value
			if !val.IsContainer() {
				continue
			}
			sub := bd.sub()
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

// besideList reports whether m is an object beside the list that may hold the report's own
// fields ({"report": {"title": …}, "results": [...]}): not a key the draft knows, and never the
// patient's object.
func besideList(m parse.Member) bool {
	return m.Value.Kind == parse.Object && !known(m.Key, 0) && !isPersonKey(m.Key)
}

// reportBeside reports whether one of members is an object of the report's own fields (a title,
// hospital or date, not a patient's) that holds no rows of its own: what fields reads beside a list.
func reportBeside(members []parse.Member) bool {
	for _, m := range members {
		if !besideList(m) {
			continue
		}
		var g fields
		g.pick(m.Value.Members, 0)
		if g[fIndicators].key == "" && (g[fTitle].key != "" || g[fHospital].key != "" || g[fCheckupDate].key != "") {
			return true
		}
	}
	return false
}

// hasResult reports whether an item's fields hold a result or a range, so that a lone object
// with only a name (a patient: {"name": "张三", "age": 45}) is not taken for an indicator.
func hasResult(f *fields) bool {
	for _, k := range []field{fValueNum, fValueText, fValue, fUnit, fRefLow, fRefHigh, fRefRange, fInRange, fOutRange} {
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
			out[i] = group(m.Key, m.Value)
		case parse.Object:
			var f fields
			f.pick(m.Value.Members, 1)
			if f[fItemName].key != "" {
				out[i] = m.Value
				continue
			}
			if list, _, ok := asTable(m.Value); ok { // a group's table: {"血常规": {"headers": …, "rows": …}}
				out[i] = group(m.Key, parse.Value{Kind: parse.Array, Elems: list})
				continue
			}
			if !hasResult(&f) && isKeyedRows(m.Value.Members) { // a group's rows by name: {"血常规": {"WBC": {…}}}
				out[i] = group(m.Key, m.Value)
				continue
			}
			out[i] = parse.Value{Kind: parse.Object, Members: append([]parse.Member{name(m.Key)}, m.Value.Members...)}
		default:
			out[i] = parse.Value{Kind: parse.Object, Members: []parse.Member{name(m.Key), {Key: "value", Value: m.Value}}}
		}
	}
	return out
}

// group is a group of rows under a name, as items reads one.
func group(name string, rows parse.Value) parse.Value {
	return parse.Value{Kind: parse.Object, Members: []parse.Member{
		{Key: "itemGroup", Value: parse.Value{Kind: parse.String, Text: name}}, {Key: "items", Value: rows}}}
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
// matched. When several keys mean one field, the alias listed first wins, unless it is null and
// another is not; the same key twice, the last, as encoding/json would.
func (f *fields) pick(members []parse.Member, level int) bool {
	found := false
	for _, m := range members {
		a := lookup(m.Key)[level]
		if a.field == noField {
			continue
		}
		if cur := &f[a.field]; cur.key != "" {
			// A null says nothing: a key with a value wins over it whatever their ranks
			// ({"refText": null, "refRange": "3.9-6.1"}), and never loses to one.
			curNull, newNull := cur.val.Kind == parse.Null, m.Value.Kind == parse.Null
			if curNull != newNull && newNull || curNull == newNull && cur.rank < a.rank {
				continue
			}
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
		if !besideList(m) {
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
	for _, t := range textKeys {
		if f[t.field].key != "" {
			continue
		}
		for _, m := range members {
			if m.Value.Kind == parse.String && slices.Contains(t.keys, normKey(m.Key)) {
				f[t.field] = slot{key: m.Key, val: m.Value}
				break
			}
		}
	}
	d.Title = bd.text(f[fTitle], "title")
	d.Hospital = bd.text(f[fHospital], "hospital")
	if s := f[fCheckupDate]; s.key != "" {
		date, ok := readDate(s.val)
		if !ok {
			bd.warn(schema.InvalidDate, dateTrouble(s.val), "checkupDate", kv("value", param(s.val), "year", minguoYear(s.val)))
		}
		d.CheckupDate = date
		if date != nil {
			bd.datesAgree(s, *date, members)
		}
	}
	if s := f[fReportYear]; s.key != "" {
		y, ok := readYear(s.val)
		if !ok {
			bd.warn(schema.InvalidValue, "not_year", "reportYear", kv("value", param(s.val)))
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
		// No list key we know: a table beside the fields ({"title": …, "columns": [...], "data":
		// [[...]]}) is the indicators; else lists of rows under other keys are, one list as it is
		// (its group named by its key when that is a section's name: {"血脂": [...]}), several
		// as groups named by their keys.
		if list, at, ok := asTable(parse.Value{Kind: parse.Object, Members: members}); ok {
			bd.items(list, at, nil, 0)
			return
		}
		switch lists := otherLists(members, 0); len(lists) {
		case 0:
		case 1:
			bd.items(lists[0].elems, lists[0].path, bd.section(lists[0].key), 0)
		default:
			bd.groups(lists)
		}
		bd.unplaced(members)
		return
	}
	// Every key that names the list counts, in order: a model that writes "indicators" twice
	// means both lists, not the last.
	for _, m := range members {
		if known(m.Key, 0) && fieldOf(m.Key, 0) == fIndicators {
			bd.list(m.Value, true)
		}
	}
}

// list reads the value under a key that names the list: a list, a table, indicators keyed by
// name, or (when inString) a list or object written as a JSON string ("indicators": "[{…}]"),
// decoded once: JSON in that string's strings is not decoded again.
func (bd *build) list(v parse.Value, inString bool) {
	switch v.Kind {
	case parse.Array:
		bd.items(tableRows(v.Elems), "indicators", nil, 0)
	case parse.Object:
		if list, at, ok := asTable(v); ok { // {"results": {"columns": [...], "rows": [[...]]}}
			bd.items(list, "indicators."+at, nil, 0)
			return
		}
		bd.items(keyedItems(v.Members), "indicators", nil, 0)
	case parse.Null:
	case parse.String:
		t := strings.TrimSpace(v.Text)
		if isNullWord(t) {
			return
		}
		if inString && (strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{")) {
			if inner, err := parse.Decode(t); err == nil && inner.IsContainer() {
				bd.list(visible(inner), false)
				return
			}
		}
		bd.warn(schema.IndicatorDropped, "not_list", ReplyPrefix+"indicators", nil)
	default:
		bd.warn(schema.IndicatorDropped, "not_list", ReplyPrefix+"indicators", nil)
	}
}

// datesAgree warns when the report's other dates (dateKeys: a receipt or report date beside the
// sampling date chosen) disagree with the date chosen: a later step dated before an earlier one,
// or dates further apart than maxTurnaround. One of them may be misread; the chosen date is kept,
// as the best-ranked, and the warning says which other date disagrees. Only the first
// disagreement is said.
func (bd *build) datesAgree(chosen slot, date schema.Date, members []parse.Member) {
	from, _ := stageOf(chosen.key)
	at := time.Date(date.Year, date.Month, date.Day, 0, 0, 0, 0, time.UTC)
	check := func(m parse.Member) bool {
		if fieldOf(m.Key, 0) != fCheckupDate || m.Key == chosen.key && param(m.Value) == param(chosen.val) {
			return false
		}
		other, ok := readDate(m.Value)
		if !ok || other == nil {
			return false
		}
		days := int(time.Date(other.Year, other.Month, other.Day, 0, 0, 0, 0, time.UTC).Sub(at).Hours() / 24)
		to, _ := stageOf(m.Key)
		ordered := (from == stageSampling || from == stageCheckup || from == stageContract) && to >= stageReceipt || from == stageReceipt && to == stageReport
		if days >= -maxTurnaround && days <= maxTurnaround && !(ordered && days < 0) {
			return false
		}
		if days < 0 {
			days = -days
		}
		bd.warn(schema.InvalidDate, "dates_disagree", "checkupDate", kv("value", param(chosen.val), "key", strings.TrimSpace(m.Key), "other", param(m.Value), "days", strconv.Itoa(days)))
		return true
	}
	for _, m := range members {
		if check(m) {
			return
		}
	}
	for _, m := range members { // the report's fields in an object beside the list
		if !besideList(m) {
			continue
		}
		for _, n := range m.Value.Members {
			if check(n) {
				return
			}
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
			sub := bd.sub()
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
		sub := &build{b: bd.b, source: bd.source}
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
		bd.warnings = append(bd.warnings, msg.New(schema.IndicatorDropped, "unplaced", nil, nil,
			map[string]string{"keys": strings.Join(keys, ", ")}))
	}
}

// groups reads lists keyed by their group's name.
func (bd *build) groups(lists []rowList) {
	for _, l := range lists {
		var g *string
		if k := strings.TrimSpace(l.key); !isNullWord(k) {
			g = &k
		}
		bd.items(l.elems, l.path, g, 1)
	}
}

// section is a list's key as its group when it names a section of the report the lexicon knows
// ({"血脂": [...]}, "Lipid Panel"), or nil: a word such as rows or 数据 names no group.
func (bd *build) section(key string) *string {
	k := strings.TrimSpace(key)
	if _, ok := bd.b.lex.Section(k); !ok {
		return nil
	}
	return &k
}

// otherLists returns the lists of rows (rowsOf) under keys that mean nothing at the level.
func otherLists(members []parse.Member, level int) []rowList {
	var out []rowList
	for _, m := range members {
		if !m.Value.IsContainer() || known(m.Key, level) || isPersonKey(m.Key) {
			continue
		}
		if l, ok := rowsOf(m); ok {
			out = append(out, l)
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
	if e, ok := keyTable[normKey(key)]; ok {
		return e
	}
	return bilingual(key)
}

// bilingual reads a key printed in two languages, as bilingual reports label their columns
// ("Test 项目", "Result 结果", "Unit/单位", "项目 Item"): it means a field when both of its halves,
// the Latin and the Chinese, mean that field; halves that mean different things, or one that
// means nothing ("Test 检测方法"), make a key that means nothing.
func bilingual(key string) [2]aliasRank {
	k := trimLabel(key)
	if i := strings.IndexAny(k, "(（["); i > 0 {
		k = trimLabel(k[:i])
	}
	latin, han, ok := splitScripts(k)
	if !ok {
		return [2]aliasRank{}
	}
	a, b := keyTable[normKey(latin)], keyTable[normKey(han)]
	var out [2]aliasRank
	for l := range out {
		if a[l].field != noField && a[l].field == b[l].field {
			out[l] = aliasRank{a[l].field, max(a[l].rank, b[l].rank, 1)} // never the contract's own key
		}
	}
	return out
}

// splitScripts splits a key into its Latin half and its Chinese half, in either order, with the
// spaces or a slash between them; ok is false unless it is exactly one of each.
func splitScripts(k string) (latin, han string, ok bool) {
	i := strings.IndexFunc(k, func(r rune) bool { return r >= 0x2E80 })
	if i < 0 {
		return "", "", false
	}
	if i == 0 { // 项目 Item
		j := strings.IndexFunc(k, func(r rune) bool { return r < 0x80 && r != ' ' && r != '/' && r != '|' })
		if j < 0 {
			return "", "", false
		}
		han, latin = k[:j], k[j:]
	} else { // Test 项目
		latin, han = k[:i], k[i:]
	}
	latin = strings.Trim(latin, " /|")
	han = strings.Trim(han, " /|")
	for _, r := range latin {
		if r >= 0x80 {
			return "", "", false
		}
	}
	for _, r := range han {
		if r < 0x80 && r != ' ' {
			return "", "", false
		}
	}
	return latin, han, latin != "" && han != ""
}

func known(key string, level int) bool { return fieldOf(key, level) != noField }

// text reads a text field of the draft.
func (bd *build) text(s slot, path string) *string {
	if s.key == "" {
		return nil
	}
	t, ok := readText(s.val, &bd.a)
	if !ok {
		bd.warn(schema.InvalidValue, "not_text", path, kv("value", param(s.val)))
	}
	return t
}

// items reads a list of indicators, flattening groups: {"group": G, "items": [...]} gives each of
// its items the group G unless the item names its own.
func (bd *build) items(list []parse.Value, path string, group *string, depth int) {
	for i, raw := range list {
		if raw.Kind == parse.String && raw.Text == parse.Unreadable {
			bd.dropped(path, i, "broken", nil)
			continue
		}
		if raw.Kind != parse.Object {
			bd.dropped(path, i, "not_item", nil)
			continue
		}
		var f fields
		f.pick(raw.Members, 1)
		if f[fIndicators].key == "" {
			if list, at, ok := asTable(raw); ok { // a group's table: {"name": "血常规", "headers": …, "rows": …}
				f[fIndicators] = slot{key: at, val: parse.Value{Kind: parse.Array, Elems: list}}
			}
		}
		for _, k := range [...]field{fValue, fItemName} {
			if v := f[k]; f[fIndicators].key == "" && v.val.Kind == parse.Array && len(otherLists([]parse.Member{{Key: "_", Value: v.val}}, 1)) == 1 {
				f[fIndicators] = v // {"类别": "血常规", "检验结果": [...]} or {"組別": …, "項目": [...]}: the group's list
				f[k] = slot{}
			}
		}
		if sub := f[fIndicators].val; sub.Kind == parse.Array || sub.Kind == parse.Object && !hasResult(&f) {
			if list, _, ok := asTable(sub); ok {
				sub = parse.Value{Kind: parse.Array, Elems: list}
			} else if sub.Kind == parse.Object {
				sub = parse.Value{Kind: parse.Array, Elems: keyedItems(sub.Members)}
			}
			if depth >= maxGroupDepth {
				bd.dropped(path, i, "too_deep", nil)
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
		var r rowReading
		readRow(&r, &f, group, &bd.a)
		if ind, ok := bd.settle(&r, raw, path, i); ok {
			ind.Box = boxOf(raw.Members)
			bd.draft.Indicators = append(bd.draft.Indicators, ind)
		}
	}
}

func itemPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// nestedFields are what a result object may hold besides its value:
// {"value": 5.86, "unit": "mmol/L", "flag": "H", "range": {"low": 3.1, "high": 5.2}}.
var nestedFields = []field{fValueNum, fValueText, fValue, fUnit, fRefLow, fRefHigh, fRefRange, fPrintedFlag}

// nested reads a result written as an object under a value key: its fields count as the item's
// own, where the item does not give them itself.
func nested(f *fields) {
	for _, k := range []field{fValueNum, fValue, fValueText} {
		v := f[k].val
		if v.Kind != parse.Object {
			continue
		}
		var sub fields
		sub.pick(v.Members, 1)
		if sub[fValueNum].key == "" && sub[fValueText].key == "" && sub[fValue].key == "" {
			continue // {"v": 5.6}: not a result object; it is warned about as it is
		}
		f[k] = slot{}
		for _, j := range nestedFields {
			if f[j].key == "" && sub[j].key != "" {
				f[j] = sub[j]
			}
		}
	}
}

// kv makes a warning's params from pairs of strings, leaving out empty values.
func kv(pairs ...string) map[string]string {
	m := make(map[string]string, len(pairs)/2+1)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			m[pairs[i]] = pairs[i+1]
		}
	}
	return m
}

// param renders a value of the reply for a warning's params: strings as written (at most 200
// characters), numbers as printed; a list or an object is left out.
func param(v parse.Value) string {
	switch v.Kind {
	case parse.String:
		if r := []rune(v.Text); len(r) > 200 {
			return string(r[:200]) + "…"
		}
		return v.Text
	case parse.Number, parse.Bool:
		return v.Text
	case parse.Null:
		return "null"
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// check validates the draft's own fields, nulling any that break a rule.
func (bd *build) check() {
	d := bd.draft
	d.Indicators = nil // validated one by one in item
	err := bd.b.validate.Struct(d)
	for _, fe := range asFieldErrors(err) {
		bd.draft = nulledDraft(bd.draft, fe.StructField())
		reason, p := broken(fe)
		bd.warn(schema.InvalidValue, reason, fe.Field(), p)
	}
}

func asFieldErrors(err error) validator.ValidationErrors {
	ves, _ := err.(validator.ValidationErrors)
	return ves
}

// describe says what rule a field broke, without echoing a long value (for a problem's field).
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

// broken names the rule a field broke, as a warning's reason and params, without echoing a long
// value. The schema's tags are max, gte and lte (and required, on itemName, which item reads
// first); a tag added there needs its row here and in internal/msg.
func broken(fe validator.FieldError) (string, map[string]string) {
	switch fe.Tag() {
	case "gte":
		return "too_small", kv("limit", fe.Param())
	case "lte":
		return "too_large", kv("limit", fe.Param())
	}
	return "too_long", kv("max", fe.Param())
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
