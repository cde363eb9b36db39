// Package lexicon knows the analytes of Chinese health-check reports and lab slips: the names
// each is printed under, its units and the factors between them, the values no living patient's
// sample can show, and the arithmetic that binds some of them (HDL-C is part of total
// cholesterol). The checks use it to judge a draft; it never changes a value.
//
// The data is one embedded table, analytes.tsv, one row per analyte, with the source of its
// figures noted per section; its header says the format. Names match tolerantly (case, width,
// spaces, brackets, leading qualifiers such as 血清, Traditional or Simplified characters);
// units too (μ/u/µ, ×10^9/L or 10*9/l, HPF or HP). A name that is the same word in two panels —
// 红细胞 in 血常规 and 尿常规 — is told apart by the group the row is printed under, and a name two
// analytes share (PCT) by the unit.
//
// A check asks Default().Find(group, name, unit) for the analyte and its unit as printed, then
// Unit.Limits, Unit.Ref and Unit.ToCanonical for what to compare; Relations lists the parts,
// sums, ratios and formulas (Friedewald, INR, eGFR, Henderson–Hasselbalch …) to hold values
// against each other, each with its source. Lookups do not allocate, and answers are
// remembered in a bounded memo.
package lexicon

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

//go:embed analytes.tsv
var data []byte

// Kind says how a result is reported.
type Kind uint8

const (
	// Quant results are numbers in a unit (5.86 mmol/L).
	Quant Kind = iota
	// Semi results are grades or numbers against a cut-off (阴性, 1+, 25 Leu/μL, 0.02 COI).
	Semi
	// Qual results are words only (阴性, 阳性).
	Qual
)

func (k Kind) String() string {
	switch k {
	case Quant:
		return "quant"
	case Semi:
		return "semi"
	}
	return "qual"
}

// Analyte is one row of the lexicon.
type Analyte struct {
	// Key is the stable canonical name, such as total_cholesterol.
	Key string
	// Section is the key of the panel it belongs to, such as lipid.
	Section string
	// Kind says how the result is reported; Quantitative is Kind == Quant.
	Kind         Kind
	Quantitative bool
	// Names are the printed names matched anywhere; SectionNames only under this section's group.
	Names        []string
	SectionNames []string
	// Units lists the units known for it; Units[0] is the canonical one.
	Units []Unit

	low, high       float64 // physiologically possible, canonical unit
	refLow, refHigh float64 // typical adult reference range, canonical unit
	hasRef          bool
	rel             int16 // RelIndex + 1; 0: in no relation
}

// Unit is a unit known for an analyte.
type Unit struct {
	// Name is the unit as the lexicon writes it ("" for a ratio or a dimensionless number).
	Name string
	// Factor converts from the canonical unit: value here = canonical value × Factor. Zero means
	// the unit is known but has no fixed factor (COI beside IU/mL), so nothing converts to it.
	Factor float64

	norm      string
	bare      string  // Name without its leading × before a power of ten, or ""
	low, high float64 // own limits of a unit with no factor
	hasLimits bool
	a         *Analyte
}

// Analyte returns the analyte the unit belongs to.
func (u *Unit) Analyte() *Analyte { return u.a }

// Limits is Analyte.Limits in this unit, without matching the unit again.
func (u *Unit) Limits() (low, high float64, ok bool) {
	a := u.a
	switch {
	case u.Factor == 0:
		return u.low, u.high, u.hasLimits
	case a.low == 0 && a.high == 0:
		return 0, 0, false
	}
	return a.low * u.Factor, a.high * u.Factor, true
}

// Ref is Analyte.Ref in this unit, without matching the unit again.
func (u *Unit) Ref() (low, high float64, ok bool) {
	if !u.a.hasRef || u.Factor == 0 {
		return 0, 0, false
	}
	return u.a.refLow * u.Factor, u.a.refHigh * u.Factor, true
}

// ToCanonical converts a value in this unit to the canonical unit; ok is false when the unit has
// no fixed factor.
func (u *Unit) ToCanonical(v float64) (float64, bool) {
	if u.Factor == 0 {
		return 0, false
	}
	return v / u.Factor, true
}

// FromCanonical converts a value in the canonical unit to this unit.
func (u *Unit) FromCanonical(v float64) (float64, bool) {
	if u.Factor == 0 {
		return 0, false
	}
	return v * u.Factor, true
}

// Section is a panel of the report, such as 血常规.
type Section struct {
	Key, Name string
	// Groups are the group names (itemGroup) that mean this section.
	Groups []string
	// Source names where the section's figures come from.
	Source string

	hint bool // a specimen (尿, 粪): a bracketed part naming it picks the section
}

// Lexicon is the loaded table. It is read-only and safe for concurrent use.
type Lexicon struct {
	analytes  []*Analyte
	relations []Relation
	relCount  int             // analytes the relations name (RelAnalytes)
	memo      *memo           // nil: every Match computes
	arena     strings.Builder // interned normalised names and units
	sections  []Section
	byKey     map[string]*Analyte
	global    names
	local     []names        // per section index
	secOf     map[string]int // normalised group name → section index
	secRaw    map[string]int // group name as written in the table → section index
	secIdx    map[string]int // section key → index
	withLocal []int          // sections that have names of their own
	nearIndex                // Near's, built on its first call
}

var (
	once sync.Once
	def  *Lexicon
)

// Default returns the embedded lexicon, parsed once. The embedded table is checked by the
// package's tests, so a parse failure is a build mistake and panics.
func Default() *Lexicon {
	once.Do(func() {
		l, err := Parse(data)
		if err != nil {
			panic(fmt.Sprintf("lexicon: embedded analytes.tsv: %v", err))
		}
		l.memo = newMemo()
		def = l
	})
	return def
}

// Analytes returns every analyte in table order. The slice is shared: do not modify it.
func (l *Lexicon) Analytes() []*Analyte { return l.analytes }

// Sections returns every section in table order. The slice is shared: do not modify it.
func (l *Lexicon) Sections() []Section { return l.sections }

// Analyte returns the analyte with the canonical key.
func (l *Lexicon) Analyte(key string) (*Analyte, bool) {
	a, ok := l.byKey[key]
	return a, ok
}

// Unit returns the analyte's unit printed as u, in any of its tolerated spellings.
func (a *Analyte) Unit(u string) (*Unit, bool) {
	for i := range a.Units {
		// As printed, or as a report prints ×10^9/L most often: no need to normalise u. Units
		// of one analyte differ after normalising (Parse), so the one that matches is the one.
		if a.Units[i].Name == u || a.Units[i].bare == u && u != "" {
			return &a.Units[i], true
		}
	}
	var k key
	normUnit(&k, u)
	if k.over {
		return nil, false
	}
	for i := range a.Units {
		if a.Units[i].norm == string(k.bytes()) {
			return &a.Units[i], true
		}
	}
	return nil, false
}

// Canonical returns the unit the analyte's limits and reference range are written in, or nil
// for a qualitative analyte that has none.
func (a *Analyte) Canonical() *Unit {
	if len(a.Units) == 0 {
		return nil
	}
	return &a.Units[0]
}

// Convert converts v from one printed unit to another; ok is false when either unit is not
// known for the analyte or has no fixed factor.
func (a *Analyte) Convert(v float64, from, to string) (float64, bool) {
	f, ok := a.Unit(from)
	if !ok || f.Factor == 0 {
		return 0, false
	}
	t, ok := a.Unit(to)
	if !ok || t.Factor == 0 {
		return 0, false
	}
	if f == t {
		return v, true
	}
	return v / f.Factor * t.Factor, true
}

// Limits returns what is physiologically possible in the printed unit: a value outside
// [low, high] was misread (or is not this analyte). ok is false for an unknown or
// non-convertible unit, and for analytes that are not quantitative.
func (a *Analyte) Limits(unit string) (low, high float64, ok bool) {
	u, ok := a.Unit(unit)
	if !ok {
		return 0, 0, false
	}
	return u.Limits()
}

// Ref returns the typical adult reference range in the printed unit (both sexes' bounds
// joined), when the lexicon has one. Reports print their own ranges; this one is for tests
// and for telling which unit system a printed range belongs to.
func (a *Analyte) Ref(unit string) (low, high float64, ok bool) {
	u, ok := a.Unit(unit)
	if !ok {
		return 0, 0, false
	}
	return u.Ref()
}

// Section returns the section a group name (itemGroup, such as 血常规 or 尿液分析) means.
func (l *Lexicon) Section(group string) (Section, bool) {
	if i := l.sectionIndex(group); i >= 0 {
		return l.sections[i], true
	}
	return Section{}, false
}
