// Package check judges a merged draft with the lexicon: it finds what the model may have
// misread (a value no patient can have, a range of another unit, HDL above total cholesterol, a
// printed ↑ beside a normal value) and tells the person confirming exactly where to look.
//
// It never reads a reply (package draft does) and never changes a value, with two exceptions,
// both about the bounds of the range: a range printed in another unit than the value has them
// set to null; a range printed per sex or per condition (which the reader leaves undecided, its
// reading kept with the row) gets the bounds of the span that applies to the patient, or null
// when none does or the caller did not say which. refText is kept as printed, and each change is
// said in one warning (see Rules).
//
// Every check is one row of Rules, with its warning code and its own test cases; a new check is
// one row and one test case. Thresholds are chosen so that false alarms stay rare (a false
// alarm costs the person's trust as much as a miss) and are documented on each row's func.
package check

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Context is what the caller knows about the patient and the draft. It is used only by code,
// to pick the printed range that applies; it never reaches the prompt, the model or a log.
type Context struct {
	// Sex is "male", "female" or "" (unknown).
	Sex Sex
	// Confirmed marks a draft a person has confirmed (/v1/validate): the checks warn as for a
	// fresh draft but change nothing, because the bounds the person kept are theirs.
	Confirmed bool
}

// Sex is the patient's sex as the caller states it.
type Sex = schema.Sex

// The sexes a caller can state; "" is unknown.
const (
	Male   = schema.SexMale
	Female = schema.SexFemale
)

// ParseSex reads a caller's sex: male, female or empty (case and spaces ignored); ok is false
// for anything else, which the caller should reject rather than guess.
func ParseSex(s string) (Sex, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return "", true
	case "male":
		return Male, true
	case "female":
		return Female, true
	}
	return "", false
}

// Rule is one check: the code it warns with and the function that looks.
type Rule struct {
	Code  schema.WarningCode
	Check func(*state)
}

// Rules is the one table of checks, in the order they run. The rows that may set or null a range
// run first, so that the rows after them judge values against the bounds that apply.
var Rules = []Rule{
	{schema.RangeSexSpecific, rangeApplies},
	{schema.RangeConditionSpecific, rangeApplies},
	{schema.RangeImplausible, rangeImplausible},
	{schema.UnitUnexpected, unitUnexpected},
	{schema.ValueImplausible, valueImplausible},
	{schema.FlagMismatch, flagMismatch},
	{schema.DuplicateRow, duplicateRow},
	{schema.InconsistentValues, inconsistentValues},
	{schema.NameUnknown, nameUnknown},
}

// Run checks d with lex and returns the warnings for the person confirming it, in the order of
// Rules and, within a rule, of the indicators. Paths index d.Indicators. It changes d only as
// the package doc says, and not at all when who.Confirmed.
//
// Its work is linear in the rows (each rule looks at a row a bounded number of times: see
// state.work), and a rule lists at most maxListed warnings, the rest counted in one more.
func Run(lex *lexicon.Lexicon, d *schema.OcrDraft, who Context) []schema.Warning {
	ws, _, _ := run(nil, lex, d, who)
	return ws
}

// RunContext is Run, stopping when ctx ends: then it returns ctx's error and no warnings, and
// d may have had bounds nulled already, so the caller must not answer with d (the request
// fails with the deadline's problem: a draft checked in part would look checked in full). It
// looks at ctx every stopEvery units of work, so a short draft is checked to its end.
func RunContext(ctx context.Context, lex *lexicon.Lexicon, d *schema.OcrDraft, who Context) ([]schema.Warning, error) {
	ws, _, err := run(ctx, lex, d, who)
	return ws, err
}

// run is Run; work is what it counted (state.work), for the tests that hold it linear.
func run(ctx context.Context, lex *lexicon.Lexicon, d *schema.OcrDraft, who Context) (ws []schema.Warning, work int, err error) {
	return runTraced(ctx, lex, d, who, nil)
}

// runTraced is run, appending to judged (when not nil) the key of each relation that
// inconsistent_values evaluated: all its rows printed and its conditions met.
func runTraced(ctx context.Context, lex *lexicon.Lexicon, d *schema.OcrDraft, who Context, judged *[]string) (ws []schema.Warning, work int, err error) {
	if d == nil || len(d.Indicators) == 0 {
		return nil, 0, nil
	}
	s := states.Get().(*state)
	defer s.release()
	s.d, s.ctx, s.stopAt, s.lex, s.look, s.judged = d, who, ctx, lex, stopEvery, judged
	s.spans = s.spanBuf[:0]
	if n := len(d.Indicators); n <= cap(s.buf) {
		s.rows = s.buf[:n]
	} else {
		s.rows = make([]row, n)
		if n <= keepRows {
			s.buf = s.rows[:0]
		}
	}
	for i := range d.Indicators {
		if s.stop() {
			return nil, s.work, s.err
		}
		r := &s.rows[i]
		r.load(s.lex, &d.Indicators[i])
		r.reading(s)
		r.choice = decide(r.rd, who.Sex)
		if r.a != nil {
			s.seen |= bit(r.a)
		}
	}
	for _, r := range Rules {
		s.code, s.listed, s.over = r.Code, 0, 0
		r.Check(s)
		if s.err != nil {
			return nil, s.work, s.err
		}
		if s.over > 0 {
			s.out = append(s.out, msg.New(r.Code, "more", nil, nil, map[string]string{"count": strconv.Itoa(s.over)}))
		}
	}
	return s.out, s.work, nil
}

// maxListed bounds the warnings one rule lists for a draft: a looping model's 7,000 rows of one
// item must not cost 7,000 formatted messages (nor megabytes of answer) that say one thing.
// The rest are counted in one warning of the rule's code, as the reader does (draft.maxWarnings).
const maxListed = 100

// stopEvery is how many units of work (state.work) pass between two looks at the deadline.
const stopEvery = 1024

// stop counts one unit of work and reports whether the run is to stop: its context has ended
// (looked at every stopEvery units, so that the look costs nothing per row).
func (s *state) stop() bool {
	s.work++
	if s.work >= s.look && s.stopAt != nil && s.err == nil {
		s.look = s.work + stopEvery // work also grows elsewhere, by more than one
		s.err = s.stopAt.Err()
	}
	return s.err != nil
}

// states reuses the per-Run state (the rows of the last draft of at most keepRows, and room for
// the spans of 64 ranges): a Run then allocates only its warnings.
var states = sync.Pool{New: func() any { return new(state) }}

// keepRows is the most rows whose buffer a state keeps for the next Run (a report's page is a
// few dozen; 256 rows are about 50 KB).
const keepRows = 256

// release clears s of the draft's pointers and puts it back: the rows and spans it used (the
// rest is clear already), its small tables emptied, and its fields.
func (s *state) release() {
	if len(s.rows) <= cap(s.buf) {
		clear(s.buf[:len(s.rows)])
	}
	clear(s.spans)
	units := s.units
	if len(units) > keepRows {
		units = nil // a long draft's table is not kept
	}
	clear(units)
	s.d, s.ctx, s.stopAt, s.err, s.lex, s.rows, s.code, s.out, s.seen, s.spans = nil, Context{}, nil, nil, nil, nil, "", nil, 0, nil
	s.listed, s.over, s.work, s.look, s.units, s.judged = 0, 0, 0, 0, units, nil
	states.Put(s)
}

// state is one Run: the draft, each indicator as the checks see it, and the warnings so far.
type state struct {
	d      *schema.OcrDraft
	ctx    Context
	stopAt context.Context // nil: never stops
	err    error           // stopAt's error, once it ended
	lex    *lexicon.Lexicon
	rows   []row
	code   schema.WarningCode // the rule running
	out    []schema.Warning
	seen   uint64 // bit(a) of every analyte in rows: most relations are ruled out by it
	// listed and over count the running rule's warnings: those listed, and those past maxListed.
	listed, over int
	// work counts what the rules do: a row looked at, a table slot probed, a lexicon analyte
	// walked. The tests hold it to a constant times the rows, whatever the draft.
	work int
	look int // the work at which stop looks at stopAt next
	// judged, when not nil, collects the keys of the relations evaluated (runTraced).
	judged *[]string
	// units remembers, per printed unit, whether the lexicon knows it (knownUnit).
	units map[string]bool
	// buf holds the rows of a draft of at most keepRows, kept for the next Run (empty at first).
	buf []row
	// spans holds the readings of rows whose draft did not bring one (not built by package
	// draft), in spanBuf while it lasts.
	spans   []schema.RefSpan
	spanBuf [64]schema.RefSpan
}

// bit is an analyte's bit in state.seen.
func bit(a *lexicon.Analyte) uint64 {
	h := uint64(uintptr(unsafe.Pointer(a)))
	h ^= h >> 7
	return 1 << ((h * 0x9E3779B97F4A7C15) >> 58)
}

// row is one indicator looked up once: its analyte and unit, and its numbers as floats.
type row struct {
	ind  *schema.OcrIndicator
	name string           // ItemName without surrounding space
	a    *lexicon.Analyte // nil: not a known analyte
	u    *lexicon.Unit    // nil: no unit printed that the analyte knows
	v    float64
	hasV bool
	half float64 // half a unit of the value's last printed digit (half)
	// rangeBad: range_implausible found the bounds wrong; later rules do not judge by them.
	rangeBad bool
	// judged: value_implausible warned about the value; flag_mismatch does not say it again.
	judged bool
	// The bounds as floats, read once (loadBounds again after a rule changes them).
	lo, hi       float64
	hasLo, hasHi bool
	// rd is the reading of refText (the draft's, else own), and choice what it gives this
	// patient: decided once, before any rule runs.
	rd     *schema.RefReading
	own    schema.RefReading
	choice choice
}

// reading finds the row's reading of its range: the one the draft brings, else refText read here
// by the same reader (a draft not built by package draft: a test's, a hand-made one).
func (r *row) reading(s *state) {
	if r.rd = r.ind.Range; r.rd != nil || r.ind.RefText == nil {
		return
	}
	room := s.spans[len(s.spans):cap(s.spans)]
	rd, ok := s.lex.ReadRangeInto(room, *r.ind.RefText)
	if !ok || len(rd.Spans) == 0 {
		return
	}
	if len(rd.Spans) <= cap(room) { // else the reader allocated them
		s.spans = s.spans[:len(s.spans)+len(rd.Spans)]
	}
	r.own = rd
	r.rd = &r.own
}

func (r *row) load(l *lexicon.Lexicon, ind *schema.OcrIndicator) {
	r.ind = ind
	r.name = trimName(ind.ItemName)
	if ind.ValueNum != nil {
		r.v, r.hasV, r.half = numHalf(ind.ValueNum)
	}
	r.loadBounds()
	unit := str(ind.Unit)
	if ind.Analyte != nil {
		if a, ok := l.Analyte(*ind.Analyte); ok {
			r.a = a
			r.u, _ = a.Unit(unit)
		}
	}
	if r.a == nil {
		a, u, ok := l.Find(str(ind.ItemGroup), ind.ItemName, unit)
		if !ok {
			return
		}
		r.a, r.u = a, u
	}
	if r.u != nil && !isUnit(unit) && len(r.a.Units) > 1 {
		// No unit printed, and the analyte has several (a ratio or a %, HCT in % or L/L): which
		// one the number is in cannot be told, so nothing converts it.
		r.u = nil
	}
	if r.u == nil && isUnit(unit) {
		// The name may mean another section's item that is measured in this unit (T in ℃ is
		// a temperature, P in 次/分 a pulse): then the row is that item.
		for _, sec := range l.Sections() {
			if b, bu, ok := l.Find(sec.Name, ind.ItemName, unit); ok && bu != nil {
				r.a, r.u = b, bu
				return
			}
		}
	}
}

// bounds returns the row's reference bounds as floats.
func (r *row) bounds() (lo, hi float64, hasLo, hasHi bool) { return r.lo, r.hi, r.hasLo, r.hasHi }

// setBounds changes the indicator's bounds (the two exceptions to "never change a value").
func (r *row) setBounds(lo, hi *schema.Decimal) {
	r.ind.RefLow, r.ind.RefHigh = lo, hi
	r.loadBounds()
}

func (r *row) loadBounds() {
	r.lo, r.hi, r.hasLo, r.hasHi = 0, 0, false, false
	if r.ind.RefLow != nil {
		r.lo, r.hasLo = num(r.ind.RefLow)
	}
	if r.ind.RefHigh != nil {
		r.hi, r.hasHi = num(r.ind.RefHigh)
	}
}

// unlisted counts a warning of the running rule past maxListed and reports true, or reports
// false when it is to be listed: a rule asks before it builds a warning's params, which for a
// draft of thousands of rows costs more than the check.
func (s *state) unlisted() bool {
	if s.listed >= maxListed {
		s.over++
		return true
	}
	return false
}

// warn adds a warning of the running rule about field of indicator i, its message from the
// row of the one table (internal/msg) for reason, filled from params.
func (s *state) warn(i int, field, reason string, params map[string]string) {
	if s.listed >= maxListed {
		s.over++
		return
	}
	s.listed++
	ind := &s.d.Indicators[i]
	path := "indicators[" + strconv.Itoa(i) + "]"
	if field != "" {
		path += "." + field
	}
	if params == nil {
		params = map[string]string{}
	}
	params["itemName"] = ind.ItemName
	s.out = append(s.out, msg.New(s.code, reason, &path, ind.Page, params))
}

// facts returns the params every message about a row may speak of: its value, unit and range
// as printed, those that are present.
func facts(ind *schema.OcrIndicator) map[string]string {
	p := make(map[string]string, 8)
	if ind.ValueNum != nil {
		p["value"] = ind.ValueNum.String()
	} else if ind.ValueText != nil {
		p["value"] = *ind.ValueText
	}
	if ind.Unit != nil {
		p["unit"] = *ind.Unit
	}
	if ind.RefLow != nil {
		p["refLow"] = ind.RefLow.String()
	}
	if ind.RefHigh != nil {
		p["refHigh"] = ind.RefHigh.String()
	}
	if ind.RefText != nil {
		p["refText"] = *ind.RefText
	}
	return p
}

// pow10 holds the powers of ten a float64 represents exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// num is d as a float, without allocating. A canonical literal of at most 15 digits is an exact
// integer divided by an exact power of ten, which is correctly rounded; others go to strconv.
func num(d *schema.Decimal) (float64, bool) {
	f, ok, _ := numHalf(d)
	return f, ok
}

// numHalf is num, and half(d) read in the same pass.
func numHalf(d *schema.Decimal) (float64, bool, float64) {
	lit := d.String()
	neg := lit[0] == '-'
	s := lit
	if neg {
		s = s[1:]
	}
	var m uint64
	digits, scale, dot, dots := 0, 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dot = true
			dots++
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if dot {
				scale++
			}
		default:
			digits = 99
		}
	}
	if digits > 15 || scale >= len(pow10) {
		f, err := strconv.ParseFloat(lit, 64)
		return f, err == nil, half(d)
	}
	f := float64(m) / pow10[scale]
	if neg {
		f = -f
	}
	if dots > 1 { // not a canonical literal: half counts from the first dot
		return f, true, half(d)
	}
	return f, true, halves[scale] // the digits after the one dot, as half counts them
}

// trimName is s without the spaces a name may carry around it (ASCII, ideographic, no-break),
// cheaply: strings.TrimSpace decodes every rune of a Chinese name.
func trimName(s string) string {
	for {
		switch {
		case strings.HasPrefix(s, " "), strings.HasPrefix(s, "\t"), strings.HasPrefix(s, "\n"):
			s = s[1:]
		case strings.HasPrefix(s, "\u3000"):
			s = s[3:]
		case strings.HasPrefix(s, "\u00a0"):
			s = s[2:]
		case strings.HasSuffix(s, " "), strings.HasSuffix(s, "\t"), strings.HasSuffix(s, "\n"):
			s = s[:len(s)-1]
		case strings.HasSuffix(s, "\u3000"):
			s = s[:len(s)-3]
		case strings.HasSuffix(s, "\u00a0"):
			s = s[:len(s)-2]
		default:
			return s
		}
	}
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// format writes a computed figure (a limit, a sum) for a message: at most 4 significant
// digits, never in exponent form (1e+05 means nothing to the person confirming).
func format(f float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 4, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
