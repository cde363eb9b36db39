package draft

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// A row is read, then settled. readRow reads a row's fields into a rowReading: the indicator as
// its fields say it, the bounds as given and as split from the printed range, and its findings
// (the warnings it may get, in the order they were found), deciding nothing that depends on where
// the row came from and writing no warning. settle then decides, once, what is kept and what is
// said: which bounds stand (a model's reply or a draft a person confirmed, rowSource), whether the
// row is dropped (then only the drop is said), which fields break the contract's rules (nulled
// from nullIndicator, a table). No warning is written and then taken back.

// finding is a warning a row's reading found, about one of its fields.
type finding struct {
	code          schema.WarningCode
	reason, field string
	params        map[string]string
}

// rowReading is what a row's fields say.
type rowReading struct {
	ind      schema.OcrIndicator
	drop     string            // why the row cannot be kept (no_name, placeholder_name), or ""
	dropArgs map[string]string // the drop's params
	findings []finding

	bounds   rowBounds
	rangeArg string // the range printed, for a warning that it was not split
}

// rowBounds are a row's reference bounds as read: those given (refLow and refHigh, numbers or
// ranges written in them), those code split from the printed range, and how that range read.
type rowBounds struct {
	givenLow, givenHigh     *schema.Decimal
	printedLow, printedHigh *schema.Decimal
	plain                   bool // the printed range applies to everyone (not per sex or condition)
	unread                  bool // a range was printed that code could not split
}

func (r *rowReading) find(code schema.WarningCode, reason, field string, params map[string]string) {
	r.findings = append(r.findings, finding{code, reason, field, params})
}

// readRow reads one row's fields, f, into r. It consumes f (a result object's fields become the
// row's own), writes no warning and changes nothing else: what it finds is in the reading, and
// its values are kept in the build's arena a.
func readRow(r *rowReading, f *fields, group *string, a *arena) {
	name, _ := readText(f[fItemName].val, a)
	switch {
	case name == nil || *name == "":
		r.drop = "no_name"
		return
	case isPlaceholder(*name):
		r.drop, r.dropArgs = "placeholder_name", kv("itemName", *name)
		return
	}
	ind := &r.ind
	ind.ItemName = *name
	if g, ok := readText(f[fItemGroup].val, a); ok && g != nil {
		ind.ItemGroup = g
	} else {
		ind.ItemGroup = group
	}
	nested(f)
	if u, ok := readText(f[fUnit].val, a); ok {
		ind.Unit = u
	} else {
		r.find(schema.InvalidValue, "not_text", "unit", kv("value", param(f[fUnit].val)))
	}
	setUnit := func(u string) {
		if ind.Unit == nil && u != "" {
			ind.Unit = a.str(u)
		}
	}
	rngText, flag, inFlagColumn := r.result(f, a, setUnit)
	for _, k := range [...]field{fValueNum, fValueText, fValue, fRefRange, fRefLow, fRefHigh} {
		setUnit(keyUnit(f[k].key)) // value(mmol/L): a unit printed only in the key
	}

	// The printed mark: a flag column says it; else the mark beside the number.
	// A report's own flag column may hold a remark (提示: 正常，无需复查): only the contract's
	// key, which the model was told takes a mark, warns about a value that is not one.
	if s := f[fPrintedFlag]; s.key != "" && !inFlagColumn {
		fl, ok := readFlag(s.val)
		if !ok && lookup(s.key)[1].rank == 0 {
			r.find(schema.InvalidValue, "not_flag", "printedFlag", kv("value", param(s.val)))
		}
		if fl != "" {
			flag = fl
		}
	}
	if flag != "" {
		ind.PrintedFlag = a.flag(flag)
	}
	r.ranges(f, rngText, a, setUnit)
}

// result reads the result: valueNum, then valueText, then a generic value key, then columns by
// status. It returns the range written in the result string, the mark beside the number, and
// whether the flag column held the result itself ("Flag": "105 H").
func (r *rowReading) result(f *fields, a *arena, setUnit func(string)) (rngText string, flag schema.Flag, inFlagColumn bool) {
	ind := &r.ind
	statusRange(f, a)
	num := readValue(f[fValueNum].val, a)
	txt := readValue(f[fValueText].val, a)
	gen := readValue(f[fValue].val, a)
	r.ownUnit([3]value{num, txt, gen}, a)
	// A value that is only a mark ("↑", "偏高") is the mark of the number given beside it; with no
	// number anywhere, it is the result as printed, and not a mark.
	hasNumber := num.num != nil || txt.num != nil || gen.num != nil
	for _, v := range []*value{&num, &txt, &gen} {
		if v.num == nil && v.text != nil && v.flag != "" {
			if hasNumber {
				v.text = nil
			} else {
				v.flag = ""
			}
		}
	}
	if num.bad {
		r.find(schema.InvalidValue, "not_number", "valueNum", kv("value", param(f[fValueNum].val)))
	}
	if txt.bad {
		r.find(schema.InvalidValue, "not_text", "valueText", kv("value", param(f[fValueText].val)))
	}
	ind.ValueNum = num.num
	setUnit(num.unit)
	if num.text != nil { // valueNum held text such as "阴性": it is the result as text
		if txt.text == nil && txt.num == nil {
			ind.ValueText = num.text
		} else if txt.text == nil || *txt.text != *num.text {
			r.find(schema.InvalidValue, "not_number", "valueNum", kv("value", *num.text))
		}
	}
	switch {
	case txt.num != nil && ind.ValueNum == nil: // a plain number in valueText is the number
		ind.ValueNum = txt.num
		setUnit(txt.unit)
	case txt.num != nil && ind.ValueNum.Equal(*txt.num): // said twice
		setUnit(txt.unit)
	case txt.num != nil: // another number: the text as printed, its mark left in it
		s := strings.TrimSpace(f[fValueText].val.Text)
		ind.ValueText = &s
		txt.flag = ""
	case txt.text != nil:
		ind.ValueText = txt.text
	}
	if ind.ValueNum != nil && ind.ValueText != nil && censors(*ind.ValueText, *ind.ValueNum, a) {
		ind.ValueNum = nil // valueNum 0.5 beside valueText "<0.5": the result is below 0.5, not 0.5
	}
	rngText = cmp.Or(num.rng, txt.rng)
	flag = joinFlags(num.flag, txt.flag)
	if ind.ValueNum == nil && ind.ValueText == nil {
		if gen.bad {
			r.find(schema.InvalidValue, "not_result", "valueNum", kv("value", param(f[fValue].val)))
		}
		ind.ValueNum, ind.ValueText = gen.num, gen.text
		setUnit(gen.unit)
		rngText = cmp.Or(rngText, gen.rng)
		flag = joinFlags(flag, gen.flag)
	}
	if ind.ValueNum == nil && ind.ValueText == nil {
		st := readStatus(f, a)
		if st.conflict {
			r.find(schema.InvalidValue, "status_both", "valueNum", kv("inRange", st.in, "outOfRange", st.out))
		}
		ind.ValueNum, ind.ValueText = st.v.num, st.v.text
		setUnit(st.v.unit)
		rngText = cmp.Or(rngText, st.v.rng)
		flag = joinFlags(flag, st.flag)
		inFlagColumn = st.fromFlag
	}
	return rngText, flag, inFlagColumn
}

// ownUnit holds a number's own unit against the unit given, when they differ: a power-of-ten
// multiplier ("1.2×10^3" beside IU/mL) belongs in front of the unit, as the report prints it; any
// other ("98 mg/dL" beside mmol/L) leaves the given unit, as the rule says, with a warning to
// check. Only the value that gives the number is held: valueNum, else valueText, else value.
func (r *rowReading) ownUnit(vals [3]value, a *arena) {
	ind := &r.ind
	for i, field := range [3]string{"valueNum", "valueText", "valueNum"} {
		v := vals[i]
		if v.num == nil {
			continue
		}
		if v.unit == "" || ind.Unit == nil || sameUnit(v.unit, *ind.Unit) {
			return
		}
		if isMultiplier(v.unit) && !isMultiplier(leadingMultiplier(*ind.Unit)) {
			ind.Unit = a.str(v.unit + " " + *ind.Unit)
			return
		}
		r.find(schema.UnitConflict, "differs", field, kv("value", v.src, "valueUnit", v.unit, "unit", *ind.Unit))
		return
	}
}

// ranges reads the reference range: the range as printed (a range key, or the range written
// in the result string), and refLow and refHigh, each a number or a range string. It keeps both
// the bounds given and those code splits from the printed range: which stand is settle's to
// decide (rowSource). A range whose reading is not plain (per sex, per condition) goes with the
// row (OcrIndicator.Range): which span applies is the checks' to decide, with the caller's context.
func (r *rowReading) ranges(f *fields, rngText string, a *arena, setUnit func(string)) {
	ind := &r.ind
	lowRange, low, lowOK := readRange(f[fRefLow].val, a)
	highRange, high, highOK := readRange(f[fRefHigh].val, a)
	rv := f[fRefRange].val
	if f[fRefRange].key == "" && rngText != "" {
		rv = parse.Value{Kind: parse.String, Text: rngText}
	}
	rng, lone, rngOK := readRange(rv, a)
	if !lowOK {
		r.find(schema.InvalidValue, "not_bound", "refLow", kv("value", param(f[fRefLow].val)))
	}
	if !highOK {
		r.find(schema.InvalidValue, "not_bound", "refHigh", kv("value", param(f[fRefHigh].val)))
	}
	ind.RefText, ind.Range = rng.text, rng.reading
	if lone != nil && rv.Kind == parse.String { // "5.2" in a range key: printed, if not a range
		ind.RefText = a.str(clean(rv.Text))
	}
	for _, b := range []*bounds{&lowRange, &highRange} {
		if ind.RefText == nil && b.text != nil {
			ind.RefText, ind.Range = b.text, b.reading
		}
	}
	r.bounds = rowBounds{
		givenLow:   first(low, lowRange.low, highRange.low),
		givenHigh:  first(high, highRange.high, lowRange.high),
		printedLow: rng.low, printedHigh: rng.high,
		plain:  ind.Range == nil || ind.Range.Plain(),
		unread: !rngOK || lone != nil,
	}
	r.rangeArg = param(rv)
	setUnit(lowRange.unit)
	setUnit(highRange.unit)
	setUnit(rng.unit)
}

// rowSource is where rows come from, which decides what of their reading stands: a model's reply
// (Build) or a draft a person confirmed (Validate).
type rowSource interface {
	// bounds are the reference bounds that stand, and whether a range printed but not split is
	// said (range_unread).
	bounds(b rowBounds) (low, high *schema.Decimal, sayUnread bool)
	// page is the row's page: the build's, or the one the row, raw, gives.
	page(raw parse.Value, build *int) *int
}

// modelRows are the rows of a model's reply. The bounds are the printed range's when it gives
// any: code splits a range, the model's own split is only a fallback; a range that is not plain
// gives none here (the checks decide, and say so). The page is the reply's.
type modelRows struct{}

func (modelRows) bounds(b rowBounds) (low, high *schema.Decimal, sayUnread bool) {
	switch {
	case !b.plain:
	case b.printedLow != nil || b.printedHigh != nil:
		low, high = b.printedLow, b.printedHigh
	default:
		low, high = b.givenLow, b.givenHigh
	}
	return low, high, b.unread && low == nil && high == nil
}

func (modelRows) page(_ parse.Value, build *int) *int { return build }

// confirmedRows are the rows of a draft a person confirmed: bounds given beside a refText are the
// person's and win (they may have corrected them), and a range without bounds is theirs to leave;
// the page is the one the row gives (code cannot know it).
type confirmedRows struct{}

func (confirmedRows) bounds(b rowBounds) (low, high *schema.Decimal, sayUnread bool) {
	if b.givenLow != nil || b.givenHigh != nil {
		return b.givenLow, b.givenHigh, false
	}
	low, high, _ = modelRows{}.bounds(b)
	return low, high, false
}

func (confirmedRows) page(raw parse.Value, build *int) *int {
	if p, ok := raw.Get("page"); ok && p.Kind == parse.Number {
		if n, err := strconv.Atoi(p.Text); err == nil && n >= 1 {
			return &n
		}
	}
	return build
}

// settle decides what of a row's reading is kept and says it: a row that cannot be kept is one
// warning naming its place in the reply (item i of the list at path), and nothing else; a kept
// row's warnings name its place in the draft.
func (bd *build) settle(r *rowReading, raw parse.Value, path string, i int) (schema.OcrIndicator, bool) {
	if r.drop != "" {
		bd.dropped(path, i, r.drop, r.dropArgs)
		return schema.OcrIndicator{}, false
	}
	ind := r.ind
	var sayUnread bool
	ind.RefLow, ind.RefHigh, sayUnread = bd.source.bounds(r.bounds)
	if sayUnread {
		r.find(schema.InvalidValue, "range_unread", "refLow", kv("refText", r.rangeArg))
	}
	if ind.RefLow != nil && ind.RefHigh != nil && ind.RefLow.Cmp(*ind.RefHigh) > 0 {
		ind.RefLow, ind.RefHigh = ind.RefHigh, ind.RefLow
		r.find(schema.ReferenceRangeSwapped, "swapped", "refLow", kv("refLow", ind.RefHigh.String(), "refHigh", ind.RefLow.String(), "refText", deref(ind.RefText)))
	}
	// Validation, field by field: a broken optional field is nulled, a broken name drops the item.
	if err := bd.b.validRow(&ind); err != nil {
		for _, fe := range asFieldErrors(err) {
			if fe.StructField() == "ItemName" {
				bd.dropped(path, i, "name_too_long", kv("max", fe.Param()))
				return ind, false
			}
			ind = nulled(ind, fe.StructField())
			reason, p := broken(fe)
			r.find(schema.InvalidValue, reason, fe.Field(), p)
		}
	}
	var at string // the row's path, written only for a row with something to say
	if len(r.findings) > 0 {
		at = itemPath("indicators", len(bd.draft.Indicators)) + "."
	}
	for _, fd := range r.findings {
		if fd.params == nil {
			fd.params = map[string]string{}
		}
		fd.params["itemName"] = ind.ItemName
		bd.warn(fd.code, fd.reason, at+fd.field, fd.params)
	}
	// Evidence filled by code: the page, and the analyte the row's name, group and unit name.
	ind.Page = bd.source.page(raw, bd.pageNum())
	if a, _, ok := bd.b.lex.Find(deref(ind.ItemGroup), ind.ItemName, deref(ind.Unit)); ok {
		ind.Analyte = bd.a.str(a.Key)
	}
	return ind, true
}

// nullIndicator and nullDraft null a field that breaks a rule of the contract (its validate tag),
// by the field's Go name: every field with a rule but itemName (which drops its row) has a row
// here (TestNullTables).
var (
	nullIndicator = map[string]func(*schema.OcrIndicator){
		"ItemGroup": func(i *schema.OcrIndicator) { i.ItemGroup = nil },
		"ValueText": func(i *schema.OcrIndicator) { i.ValueText = nil },
		"Unit":      func(i *schema.OcrIndicator) { i.Unit = nil },
		"RefText":   func(i *schema.OcrIndicator) { i.RefText = nil },
	}
	nullDraft = map[string]func(*schema.OcrDraft){
		"Title":      func(d *schema.OcrDraft) { d.Title = nil },
		"Hospital":   func(d *schema.OcrDraft) { d.Hospital = nil },
		"ReportYear": func(d *schema.OcrDraft) { d.ReportYear = nil },
	}
)

// nulled is ind with its field named field nulled (nullIndicator). A copy, so that the row being
// settled stays on the stack (not inlined, for the same reason).
//
//go:noinline
func nulled(ind schema.OcrIndicator, field string) schema.OcrIndicator {
	nullIndicator[field](&ind)
	return ind
}

// nulledDraft is d with its field named field nulled (nullDraft), as nulled.
//
//go:noinline
func nulledDraft(d schema.OcrDraft, field string) schema.OcrDraft {
	nullDraft[field](&d)
	return d
}
