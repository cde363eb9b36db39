package lexicon

import (
	"fmt"
	"strconv"
	"strings"
)

// RelKind is how the analytes of a Relation are bound.
type RelKind uint8

const (
	// Part: Parts[0] cannot exceed Whole (HDL-C and total cholesterol).
	Part RelKind = iota
	// Sum: Whole is the sum of Parts (TBIL = DBIL + IBIL).
	Sum
	// Ratio: Whole is Scale × Parts[0] / Parts[1] (A/G = ALB / GLB; MCV = HCT / RBC × 10).
	Ratio
	// Percent: Parts add up to 100 % (the five-part differential); Whole is nil.
	Percent
)

func (k RelKind) String() string {
	return [...]string{"part", "sum", "ratio", "percent"}[k]
}

// Relation binds analytes whose values cannot all be right at once when it does not hold. The
// values are compared in each analyte's canonical unit (Unit.ToCanonical); how far off is too far
// is the check's to say, since printed values are rounded.
type Relation struct {
	Kind  RelKind
	Whole *Analyte
	Parts []*Analyte
	Scale float64 // Ratio only
}

// Relations returns every relation in table order. The slice is shared: do not modify it.
func (l *Lexicon) Relations() []Relation { return l.relations }

// relation	kind	whole	parts: "a" (part), "a+b" (sum, percent), "a/b*10" (ratio)
func (l *Lexicon) addRelation(f []string) error {
	if len(f) != 4 {
		return fmt.Errorf("relation row has %d fields, want 4", len(f))
	}
	var r Relation
	switch f[1] {
	case "part":
		r.Kind = Part
	case "sum":
		r.Kind = Sum
	case "ratio":
		r.Kind = Ratio
	case "percent":
		r.Kind = Percent
	default:
		return fmt.Errorf("relation kind %q", f[1])
	}
	if (r.Kind == Percent) != (f[2] == "") {
		return fmt.Errorf("relation %s %q: only percent has no whole", f[1], f[3])
	}
	if f[2] != "" {
		a, ok := l.byKey[f[2]]
		if !ok {
			return fmt.Errorf("relation: unknown analyte %q", f[2])
		}
		r.Whole = a
	}
	expr := f[3]
	sep := "+"
	switch r.Kind {
	case Ratio:
		r.Scale = 1
		if e, s, ok := strings.Cut(expr, "*"); ok {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("relation %q: bad scale", expr)
			}
			expr, r.Scale = e, v
		}
		sep = "/"
	case Part:
		sep = "\x00"
	}
	for _, k := range strings.Split(expr, sep) {
		a, ok := l.byKey[k]
		if !ok {
			return fmt.Errorf("relation: unknown analyte %q", k)
		}
		r.Parts = append(r.Parts, a)
	}
	if want := map[RelKind]int{Part: 1, Ratio: 2}[r.Kind]; want > 0 && len(r.Parts) != want {
		return fmt.Errorf("relation %s %q: %d analytes, want %d", f[1], f[3], len(r.Parts), want)
	}
	if len(r.Parts) < 1 || (r.Kind == Sum || r.Kind == Percent) && len(r.Parts) < 2 {
		return fmt.Errorf("relation %s %q: too few analytes", f[1], f[3])
	}
	l.relations = append(l.relations, r)
	return nil
}
