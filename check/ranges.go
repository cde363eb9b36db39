package check

import (
	"strings"

	"github.com/ocrdraft/ocrdraft/schema"
)

// choice is what a row's printed range gives this patient, decided once (decide) from the
// reading of the range and the caller's context: the code and reason of the one warning that
// says so, and the span whose bounds apply (nil: none does, and the bounds are null).
type choice struct {
	code   schema.WarningCode // "": nothing to decide, nothing to say
	reason string
	span   *schema.RefSpan
	sex    schema.Sex // the one sex the range is printed for (one_sex, other_sex)
	cond   string     // the conditions printed (condition)
}

// decide picks the span of rd that applies to a patient of sex ("" unknown). A plain reading
// (one range for everyone) needs no choice. Sex first: a span printed for the patient's sex, else
// one printed for no sex; a range printed only for the other sex, or printed by sex when the sex
// is not known, gives none. Then conditions: a span printed for a condition (成人, 孕早期,
// 空腹) gives none, since the caller cannot say the condition holds, unless the range is per sex
// and every span shares it; spans that still differ (by age, or by nothing printed) give none
// either.
func decide(rd *schema.RefReading, sex Sex) choice {
	if rd == nil || len(rd.Spans) == 0 {
		return choice{}
	}
	if sp := &rd.Spans[0]; len(rd.Spans) == 1 && sp.Cond == "" && sp.Sex == "" || rd.Plain() {
		return choice{} // one span for everyone (Plain, without its walk), the most common
	}
	var male, female bool
	for _, sp := range rd.Spans {
		male = male || sp.Sex == schema.SexMale
		female = female || sp.Sex == schema.SexFemale
	}
	sexed := male || female
	var buf [8]*schema.RefSpan
	cands := buf[:0]
	ownSex := false // cands are printed for the patient's sex, not for no sex
	switch {
	case sexed && sex == "" && male && female:
		return choice{code: schema.RangeSexSpecific, reason: "unknown"}
	case sexed && sex == "":
		return choice{code: schema.RangeSexSpecific, reason: "one_sex", sex: printedSex(male)}
	case sexed:
		cands = spansOf(rd, schema.Sex(sex), cands)
		ownSex = len(cands) > 0
		if len(cands) == 0 {
			cands = spansOf(rd, "", cands)
		}
		if len(cands) == 0 {
			return choice{code: schema.RangeSexSpecific, reason: "other_sex", sex: printedSex(male)}
		}
	default:
		for i := range rd.Spans {
			cands = append(cands, &rd.Spans[i])
		}
	}
	if c := conditions(cands); c != "" && !(sexed && shared(rd)) {
		return choice{code: schema.RangeConditionSpecific, reason: "condition", cond: c}
	}
	for _, sp := range cands[1:] {
		if !sp.Same(*cands[0]) {
			if sp.Age != cands[0].Age {
				return choice{code: schema.RangeConditionSpecific, reason: "age"}
			}
			return choice{code: schema.RangeConditionSpecific, reason: "several"}
		}
	}
	// Sexed: a reading without sexes, conditions or different spans is plain.
	if ownSex && male != female { // printed for the patient's sex only
		return choice{code: schema.RangeSexSpecific, reason: "one_sex_used", span: cands[0], sex: printedSex(male)}
	}
	return choice{code: schema.RangeSexSpecific, reason: "chosen", span: cands[0]}
}

// spansOf appends the spans of rd printed for sex (for no sex, with "").
func spansOf(rd *schema.RefReading, sex schema.Sex, to []*schema.RefSpan) []*schema.RefSpan {
	for i := range rd.Spans {
		if rd.Spans[i].Sex == sex && len(to) < cap(to) {
			to = append(to, &rd.Spans[i])
		}
	}
	return to
}

func printedSex(male bool) schema.Sex {
	if male {
		return schema.SexMale
	}
	return schema.SexFemale
}

// shared reports whether every span of rd is printed for the same condition: in a range per sex,
// a condition over the whole of it ("成人：男 40-50 女 35-45", "Adult male … adult female …")
// qualifies the table, and the sex decides.
func shared(rd *schema.RefReading) bool {
	for _, sp := range rd.Spans[1:] {
		if !strings.EqualFold(sp.Cond, rd.Spans[0].Cond) {
			return false
		}
	}
	return true
}

// conditions joins the conditions printed with spans, each once, or "".
func conditions(spans []*schema.RefSpan) string {
	var out []string
	for _, sp := range spans {
		if sp.Cond != "" && !containsString(out, sp.Cond) {
			out = append(out, sp.Cond)
		}
	}
	return strings.Join(out, ", ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isSpan reports whether the indicator's bounds are sp's.
func isSpan(sp *schema.RefSpan, ind *schema.OcrIndicator) bool {
	return eqBound(sp.HasLow, sp.Low, ind.RefLow) && eqBound(sp.HasHigh, sp.High, ind.RefHigh)
}

func eqBound(has bool, d schema.Decimal, o *schema.Decimal) bool {
	if !has || o == nil {
		return !has && o == nil
	}
	return d.Equal(*o)
}

// bounds of a span, as the indicator holds them.
func spanBounds(sp *schema.RefSpan) (lo, hi *schema.Decimal) {
	if sp.HasLow {
		d := sp.Low
		lo = &d
	}
	if sp.HasHigh {
		d := sp.High
		hi = &d
	}
	return lo, hi
}
