package schema

// Sex is whom a printed range applies to, or the patient's sex as a caller states it: "male",
// "female", or "" (both, or unknown).
type Sex string

// The sexes.
const (
	SexMale   Sex = "male"
	SexFemale Sex = "female"
)

// RefSpan is one range a printed reference range gives ("男 130-175" is one, "<5.2" another):
// its bounds with the digits printed, which comparator bounded it, whom it applies to and the
// unit printed after it. A bound that is absent has HasLow or HasHigh false.
type RefSpan struct {
	Low, High       Decimal
	HasLow, HasHigh bool
	// LowOpen and HighOpen say the bound was printed with a strict comparator (>3, <5.2): the
	// bound itself lies outside. "3.9-6.1", ≥ and ≤ include it.
	LowOpen, HighOpen bool
	// Sex is the sex the span is printed for; "" when it names none.
	Sex Sex
	// Cond is the condition printed with the span, as printed (成人, 孕早期, 卵泡期, 空腹; several
	// words joined by a space); "" when none.
	Cond string
	// Age is the age band printed with the span (20-79岁, <14 years), or "".
	Age string
	// Unit is the unit printed right after the span ("70-110 mg/dL"), or "".
	Unit string
}

// Same reports whether a and b give the same bounds.
func (a RefSpan) Same(b RefSpan) bool {
	return a.HasLow == b.HasLow && a.HasHigh == b.HasHigh &&
		(!a.HasLow || a.Low.Equal(b.Low)) && (!a.HasHigh || a.High.Equal(b.High))
}

// RefReading is what a printed reference range says, as code read it (lexicon's ReadRange): every
// span in printed order. It travels with the row from the reader (package draft) to the judge
// (package check), which alone decides which span applies to the patient; it is not part of the
// JSON contract.
type RefReading struct {
	Spans []RefSpan
	// Unit is the unit printed after the last span, or "".
	Unit string
}

// Distinct is how many different bounds the spans give, counting at most 3.
func (r *RefReading) Distinct() int {
	n := 0
	for i := range r.Spans {
		seen := false
		for j := range i {
			if r.Spans[j].Same(r.Spans[i]) {
				seen = true
				break
			}
		}
		if !seen {
			n++
			if n == 3 {
				break
			}
		}
	}
	return n
}

// Plain reports whether the reading gives one range for everyone: one distinct bound that
// names no sex or names both, and no condition (成人 3.9-6.1 is the adults' range, and whether
// the patient is one is not known). An age band (57-111 (20-79岁)) does not stop it: with one
// bound there is nothing for the age to choose. Only a plain reading's bounds are the row's
// without a decision.
func (r *RefReading) Plain() bool {
	if r == nil || len(r.Spans) == 0 || r.Distinct() != 1 {
		return false
	}
	var male, female bool
	for _, s := range r.Spans {
		if s.Cond != "" {
			return false
		}
		male = male || s.Sex == SexMale
		female = female || s.Sex == SexFemale
	}
	return male == female
}
