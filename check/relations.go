package check

import (
	"math"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// inconsistentValues (inconsistent_values) holds the draft's values against the lexicon's one
// table of relations (lexicon.Relations, analytes.tsv): a part above its whole (HDL-C above TC),
// a sum or a difference (TP = ALB + GLB, IBIL = TBIL − DBIL, the anion gap, Friedewald's LDL-C),
// a ratio (MCH = HGB/RBC, ACR), a formula (INR from PT, eGFR from creatinine, blood-gas pH from
// HCO3⁻ and pCO2), a differential adding up to 100. Each printed value stands for the band its
// digits allow (5.2 is 5.15–5.25), so the only tolerance beyond rounding is the table's own.
// An analyte printed twice with different values is left out: which one is meant cannot be told.
//
// A relation that does not hold warns on the row the printed data says is misread (relRun.culprit:
// the one row whose value ×10 or ÷10 makes it hold, or whose printed mark or range contradicts
// its value), else on each of its rows.
func inconsistentValues(s *state) {
	rels := s.lex.Relations()
	if len(rels) == 0 {
		return
	}
	var buf [128]int32
	at := buf[:0]
	if n := s.lex.RelAnalytes(); n <= len(buf) {
		at = buf[:n]
	} else {
		at = make([]int32, n)
	}
	if !s.index(at) {
		return
	}
	run := relRun{s: s, at: at}
	for k := range rels {
		if s.stop() {
			return
		}
		run.check(&rels[k])
	}
}

// index fills at with each relation analyte's row: a row with a number in a unit with a factor,
// -1 when there is none, -2 when there are several with different values. One pass over the
// rows, whatever their number; false when the run is to stop.
func (s *state) index(at []int32) bool {
	for i := range at {
		at[i] = -1
	}
	for i := range s.rows {
		if s.stop() {
			return false
		}
		r := &s.rows[i]
		if r.a == nil || !r.hasV || r.u == nil || r.u.Factor == 0 {
			continue
		}
		k := r.a.RelIndex()
		if k < 0 {
			continue
		}
		switch j := at[k]; {
		case j == -1:
			at[k] = int32(i)
		case j >= 0 && s.canon(int(j)) != s.canon(i):
			at[k] = -2
		}
	}
	return true
}

// find returns the one row of analyte a with a number in a unit with a factor, or -1 when there
// is none or several with different values (as index says).
func (s *state) find(a *lexicon.Analyte) int {
	var buf [128]int32
	at := buf[:s.lex.RelAnalytes()]
	if k := a.RelIndex(); k >= 0 && s.index(at) && at[k] >= 0 {
		return int(at[k])
	}
	return -1
}

// relRun is one run of inconsistentValues: the rows of the relations' analytes, and whether the
// report prints marks (asked once, when a relation fails).
type relRun struct {
	s     *state
	at    []int32
	marks int8 // 0: not yet asked; 1: the report marks some row high or low; -1: none
	// warned are the rows a relation has warned about: a row gets one such warning, from the
	// first relation that finds it wrong (a TP misread fails ALB ≤ TP and TP = ALB + GLB alike).
	warned []bool
}

// maxMembers is the most rows a relation binds: its whole and lexicon's maxTerms terms.
const maxMembers = 9

// members are a relation's rows as one check sees them: row[0] the whole's (-1 for a percent),
// then each term's (-1: an optional term not printed), and the band of each value.
type members struct {
	n    int
	row  [maxMembers]int
	band [maxMembers]lexicon.Band
}

func (m *members) terms() []lexicon.Band { return m.band[1:m.n] }

// check holds one relation against the rows, and warns when it does not hold.
func (run *relRun) check(rel *lexicon.Relation) {
	var m members
	m.n = 1 + len(rel.Terms)
	m.row[0] = -1
	if len(rel.Whole.Analytes) > 0 {
		if m.row[0] = run.rowOf(&rel.Whole); m.row[0] < 0 {
			return
		}
		m.band[0] = run.band(m.row[0], &rel.Whole)
	}
	for k := range rel.Terms {
		t := &rel.Terms[k]
		i := run.rowOf(t)
		if i < 0 && !t.Optional {
			return
		}
		m.row[k+1] = i
		m.band[k+1] = lexicon.Band{Lo: math.NaN(), Hi: math.NaN()}
		if i >= 0 {
			m.band[k+1] = run.band(i, t)
		}
	}
	if !run.applies(rel, &m) {
		return
	}
	want, holds, judged := run.holds(rel, &m)
	if judged && run.s.judged != nil {
		*run.s.judged = append(*run.s.judged, rel.Key)
	}
	if !judged || holds {
		return
	}
	c, factor := run.culprit(rel, &m)
	run.warn(rel, &m, want, c, factor)
}

// rowOf is the row of the first of t's alternatives that is printed, or -1 (none, or the first
// printed is printed twice with different values).
func (run *relRun) rowOf(t *lexicon.Term) int {
	s := run.s
	for _, a := range t.Analytes {
		if s.seen&bit(a) == 0 {
			continue
		}
		if t.Unit != "" {
			if u, _ := a.Unit(t.Unit); u != nil && u.Factor == 0 {
				return run.rowIn(a, u)
			}
		}
		switch j := run.at[a.RelIndex()]; {
		case j >= 0:
			return int(j)
		case j == -2:
			return -1
		}
	}
	return -1
}

// rowIn is the one row of a in unit u (one with no factor, which index leaves out), or -1.
func (run *relRun) rowIn(a *lexicon.Analyte, u *lexicon.Unit) int {
	s := run.s
	at := -1
	s.work += len(s.rows)
	for i := range s.rows {
		r := &s.rows[i]
		if r.a != a || r.u != u || !r.hasV {
			continue
		}
		if at >= 0 && r.v != s.rows[at].v {
			return -1
		}
		if at < 0 {
			at = i
		}
	}
	return at
}

// band is row i's value as t takes it (canonical, or in t's unit), widened by the rounding of
// its printed digits.
func (run *relRun) band(i int, t *lexicon.Term) lexicon.Band {
	return run.bandAt(i, t, run.s.rows[i].v)
}

// bandAt is band with v in place of the row's value.
func (run *relRun) bandAt(i int, t *lexicon.Term, v float64) lexicon.Band {
	r := &run.s.rows[i]
	h := r.half
	if r.u.Factor == 0 {
		return lexicon.Of(v, h)
	}
	b := lexicon.Band{Lo: (v - h) / r.u.Factor, Hi: (v + h) / r.u.Factor}
	if t.Unit != "" {
		if u, _ := r.a.Unit(t.Unit); u != nil && u.Factor != 0 {
			b = lexicon.Band{Lo: b.Lo * u.Factor, Hi: b.Hi * u.Factor}
		}
	}
	return b
}

// half is half a unit of the last printed digit of d: what rounding may have moved it.
func half(d *schema.Decimal) float64 {
	lit := d.String()
	if i := strings.IndexByte(lit, '.'); i >= 0 {
		if n := len(lit) - i - 1; n < len(halves) {
			return halves[n]
		}
		return 0.5 * math.Pow10(-(len(lit) - i - 1))
	}
	return 0.5
}

// halves are half's answers for 0 to 15 decimals, 0.5 × math.Pow10(-n) each.
var halves = func() (h [16]float64) {
	for n := range h {
		h[n] = 0.5 * math.Pow10(-n)
	}
	return h
}()

// applies reports whether the relation's conditions hold for these rows.
func (run *relRun) applies(rel *lexicon.Relation, m *members) bool {
	s := run.s
	for _, c := range rel.When {
		switch c.Kind {
		case lexicon.NameHas, lexicon.NameLacks:
			name := s.rows[m.row[0]].ind.ItemName
			has := false
			for _, w := range c.Words {
				has = has || hasFold(name, w)
			}
			if has != (c.Kind == lexicon.NameHas) {
				return false
			}
		case lexicon.Below:
			if m.row[c.Term+1] < 0 || m.band[c.Term+1].Mid() >= c.Limit {
				return false
			}
		case lexicon.Without:
			if s.seen&bit(c.Analyte) != 0 {
				s.work += len(s.rows)
				for i := range s.rows {
					if s.rows[i].a == c.Analyte && s.rows[i].hasV {
						return false
					}
				}
			}
		}
	}
	return true
}

// hasFold reports whether name holds w (lower case), ASCII letters folded.
func hasFold(name, w string) bool {
	for i := 0; i+len(w) <= len(name); i++ {
		j := 0
		for ; j < len(w); j++ {
			c := name[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[j] {
				break
			}
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// holds evaluates the relation on m's bands: want is what the terms give for the whole (the
// part's band, for a Part), judged false when the terms are outside the formula's domain.
func (run *relRun) holds(rel *lexicon.Relation, m *members) (want lexicon.Band, holds, judged bool) {
	whole := m.band[0]
	if rel.Kind == lexicon.Percent {
		whole = lexicon.Band{Lo: 100, Hi: 100}
	}
	if rel.Kind == lexicon.Part {
		p := m.band[1]
		return p, p.Lo <= whole.Hi*(1+rel.Tol.Rel)+rel.Tol.Abs, true
	}
	got, ok := rel.Eval(m.terms(), run.s.ctx.Sex)
	if !ok {
		return got, false, false
	}
	return got, rel.Tol.Widen(got).Overlaps(whole), true
}

// culprit is the member the printed data says is misread, or -1, from three kinds of evidence:
// a printed mark or range that contradicts the value (contradicts: strong), a value ×10 or ÷10
// that makes the relation hold, within the analyte's limits, not contradicting the row's mark
// and not taking a value within its printed range out of it (a fix), and a value outside its
// printed range with no mark beside it (weak: a mark bears the value out). The culprit is the one
// row of strong evidence (of those, the one with a fix); else the one row with a fix (of
// several, the one outside its range); else, when no row has a fix, the one row outside its
// range. factor is the fix's ×10 or ÷10 when the value fixed lies within its printed range (or
// none is printed), so that the message can say it; else 0.
func (run *relRun) culprit(rel *lexicon.Relation, m *members) (c int, factor float64) {
	s := run.s
	var strong, fix, out [maxMembers]bool
	var fixBy [maxMembers]float64
	nStrong, nFix := 0, 0
	for k := 0; k < m.n; k++ {
		i := m.row[k]
		if i < 0 {
			continue
		}
		r := &s.rows[i]
		if run.contradicts(i, r.v) {
			strong[k] = true
			nStrong++
		}
		in := !outside(r, r.v)
		out[k] = !in && r.ind.PrintedFlag == nil // a mark beside it bears the value out
		t := &rel.Whole
		if k > 0 {
			t = &rel.Terms[k-1]
		}
		for _, f := range [2]float64{10, 0.1} {
			v := r.v * f
			if lo, hi, ok := r.u.Limits(); ok && (v < lo || v > hi) || run.contradicts(i, v) || in && outside(r, v) {
				continue // beyond the limits, against its mark, or out of a range it was in
			}
			keep := m.band[k]
			m.band[k] = run.bandAt(i, t, v)
			_, ok, judged := run.holds(rel, m)
			m.band[k] = keep
			if ok && judged {
				fix[k], fixBy[k] = true, f
				nFix++
				break
			}
		}
	}
	one := func(set, and *[maxMembers]bool) int {
		c := -1
		for k := 0; k < m.n; k++ {
			if set[k] && (and == nil || and[k]) {
				if c >= 0 {
					return -1
				}
				c = k
			}
		}
		return c
	}
	switch {
	case nStrong == 1:
		c = one(&strong, nil)
	case nStrong > 1:
		c = one(&strong, &fix)
	case nFix == 1:
		c = one(&fix, nil)
	case nFix > 1:
		c = one(&fix, &out)
	default:
		c = one(&out, nil)
	}
	if c >= 0 && fix[c] && !outside(&s.rows[m.row[c]], s.rows[m.row[c]].v*fixBy[c]) {
		return c, fixBy[c]
	}
	return c, 0
}

// outside reports whether v lies outside the row's printed range (not when range_implausible
// found the range wrong).
func outside(r *row, v float64) bool {
	lo, hi, hasLo, hasHi := r.bounds()
	return !r.rangeBad && (hasLo && v < lo || hasHi && v > hi)
}

// contradicts reports whether row i's printed data speaks against value v: a printed ↑ or ↓ that
// v does not bear out, or, on a report that marks its values (some row's ↑ or ↓), v outside its
// printed range with no mark.
func (run *relRun) contradicts(i int, v float64) bool {
	r := &run.s.rows[i]
	if r.rangeBad {
		return false
	}
	if f := r.ind.PrintedFlag; f != nil {
		lo, hi, hasLo, hasHi := r.bounds()
		switch *f {
		case schema.FlagHigh:
			return (hasHi && v < hi) || (!hasHi && hasLo && v < lo)
		case schema.FlagLow:
			return (hasLo && v > lo) || (!hasLo && hasHi && v > hi)
		}
		return false
	}
	if !outside(r, v) {
		return false
	}
	if run.marks == 0 {
		run.marks = -1
		for k := range run.s.rows {
			if f := run.s.rows[k].ind.PrintedFlag; f != nil && (*f == schema.FlagHigh || *f == schema.FlagLow) {
				run.marks = 1
				break
			}
		}
		run.s.work += len(run.s.rows)
	}
	return run.marks > 0
}

// warn says that rel does not hold: on member c (its value ×factor would make it hold, when
// factor is not 0), or on each member when c is -1, in the order of the rows; not on a row an
// earlier relation warned about.
func (run *relRun) warn(rel *lexicon.Relation, m *members, want lexicon.Band, c int, factor float64) {
	s := run.s
	var order [maxMembers]int
	n := 0
	for k := 0; k < m.n; k++ {
		if m.row[k] >= 0 && (c < 0 || k == c) {
			order[n] = k
			n++
		}
	}
	for a := 1; a < n; a++ { // a few members: insertion sort by row
		for b := a; b > 0 && m.row[order[b]] < m.row[order[b-1]]; b-- {
			order[b], order[b-1] = order[b-1], order[b]
		}
	}
	if run.warned == nil {
		run.warned = make([]bool, len(s.rows))
	}
	for _, k := range order[:n] {
		i := m.row[k]
		if run.warned[i] {
			continue
		}
		run.warned[i] = true
		if s.unlisted() {
			continue
		}
		p := facts(s.rows[i].ind)
		p["relation"] = rel.Formula
		p["partNames"] = run.others(m, k)
		reason := "member"
		switch {
		case factor != 0:
			reason = "decimal"
			p["suggested"] = format(s.rows[i].v * factor)
		case rel.Kind == lexicon.Percent:
			reason = "percent"
			p["sum"] = format(want.Mid())
			p["partNames"] = run.others(m, -1)
		case rel.Kind == lexicon.Part && k == 0:
			reason = "whole"
		case rel.Kind == lexicon.Part:
			reason = "part"
			w := s.rows[m.row[0]].ind
			p["wholeName"], p["wholeValue"] = w.ItemName, w.ValueNum.String()
			p["wholePath"] = "indicators[" + strconv.Itoa(m.row[0]) + "]"
		case k == 0:
			reason = "formula"
			p["expected"] = run.expected(rel, m.row[0], want)
		}
		s.warn(i, "valueNum", reason, p)
	}
}

// expected writes what the terms give for the whole, in the whole's printed unit: one figure, or
// lo–hi when the band is wider than a tenth of its middle (a formula over unprinted constants).
func (run *relRun) expected(rel *lexicon.Relation, w int, b lexicon.Band) string {
	r := &run.s.rows[w]
	conv := func(v float64) float64 {
		if rel.Whole.Unit != "" || r.u.Factor == 0 {
			return v
		}
		out, _ := r.u.FromCanonical(v)
		return out
	}
	lo, hi := conv(b.Lo), conv(b.Hi)
	if mid := (lo + hi) / 2; hi-lo <= 0.1*math.Abs(mid) {
		return format(mid)
	}
	three := func(v float64) string { // a band's ends: three digits say it
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return three(lo) + "–" + three(hi)
}

// others writes the members other than skip as "name value, …".
func (run *relRun) others(m *members, skip int) string {
	var b strings.Builder
	for k := 0; k < m.n; k++ {
		i := m.row[k]
		if k == skip || i < 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(run.s.rows[i].ind.ItemName)
		b.WriteByte(' ')
		b.WriteString(run.s.rows[i].ind.ValueNum.String())
	}
	return b.String()
}

// canon is row i's value in its analyte's canonical unit.
func (s *state) canon(i int) float64 {
	v, _ := s.rows[i].u.ToCanonical(s.rows[i].v)
	return v
}
