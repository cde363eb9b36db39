package check

import (
	"math"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/lexicon"
)

// Tolerances of inconsistentValues, beyond the rounding of the printed numbers (half a unit of
// each one's last digit): definitions computed by the lab (IBIL = TBIL − DBIL, MCH = HGB/RBC)
// hold within rounding, analyser counts (WBC and its parts) within a few per cent.
const (
	partTol    = 0.02 // a part may exceed its whole by 2 %
	sumTol     = 0.05 // a sum may differ from its whole by 5 %
	ratioTol   = 0.10 // a ratio may differ from its parts' by 10 %
	percentTol = 5.0  // a differential may add up to 100 ± 5 (immature cells, bands)
)

// skipRelation are lexicon relations that real assays break: CK-MB activity by immuno-
// inhibition exceeds total CK when macro-CK is present.
var skipRelation = map[string]bool{"ck_mb": true}

// inconsistentValues (inconsistent_values) holds values against lexicon.Relations, in
// canonical units: a part above its whole (HDL-C above TC, DBIL above TBIL, ALB above TP), a
// sum (TP = ALB + GLB) or a ratio (A/G = ALB/GLB, MCH = HGB/RBC) off beyond the tolerances
// above, a five-part differential adding up to 100 ± more than 5. An analyte printed twice with
// different values is left out: which one is meant cannot be told.
func inconsistentValues(s *state) {
	for _, rel := range s.lex.Relations() {
		if s.stop() {
			return
		}
		if len(rel.Parts) == 1 && skipRelation[rel.Parts[0].Key] || !s.mayHave(rel) {
			continue
		}
		w := -1
		if rel.Whole != nil {
			if w = s.find(rel.Whole); w < 0 {
				continue
			}
		}
		var parts [8]int
		if len(rel.Parts) > len(parts) {
			continue
		}
		missing := false
		for k, a := range rel.Parts {
			if parts[k] = s.find(a); parts[k] < 0 {
				missing = true
				break
			}
		}
		if missing {
			continue
		}
		ps := parts[:len(rel.Parts)]
		switch rel.Kind {
		case lexicon.Part:
			pv, wv := s.canon(ps[0]), s.canon(w)
			if pv > wv*(1+partTol)+s.ulp(ps[0])+s.ulp(w) {
				p := facts(s.rows[ps[0]].ind)
				p["wholeName"] = s.rows[w].ind.ItemName
				p["wholeValue"] = s.rows[w].ind.ValueNum.String()
				p["wholePath"] = "indicators[" + strconv.Itoa(w) + "]"
				s.warn(ps[0], "valueNum", "part", p)
			}
		case lexicon.Sum:
			sum, tol := 0.0, s.ulp(w)
			for _, k := range ps {
				sum += s.canon(k)
				tol += s.ulp(k)
			}
			wv := s.canon(w)
			if math.Abs(wv-sum) > sumTol*math.Abs(wv)+tol {
				s.related(w, ps, "sum", sum)
			}
		case lexicon.Ratio:
			a, b := s.canon(ps[0]), s.canon(ps[1])
			if b <= 0 || a < 0 {
				continue
			}
			want := rel.Scale * a / b
			rt := s.ulp(ps[0])/math.Max(a, 1e-12) + s.ulp(ps[1])/b
			if math.Abs(s.canon(w)-want) > want*(ratioTol+rt)+s.ulp(w) {
				s.related(w, ps, "ratio", want)
			}
		case lexicon.Percent:
			sum, tol := 0.0, 0.0
			for _, k := range ps {
				sum += s.canon(k)
				tol += s.ulp(k)
			}
			if math.Abs(sum-100) > percentTol+tol {
				p := map[string]string{"sum": format(sum), "partNames": names(s, ps)}
				s.warn(ps[0], "valueNum", "percent", p)
			}
		}
	}
}

// mayHave reports whether every analyte of rel may be in the draft (state.seen).
func (s *state) mayHave(rel lexicon.Relation) bool {
	if rel.Whole != nil && s.seen&bit(rel.Whole) == 0 {
		return false
	}
	for _, a := range rel.Parts {
		if s.seen&bit(a) == 0 {
			return false
		}
	}
	return true
}

// related warns on whole w that it is not what its parts ps make (want, canonical).
func (s *state) related(w int, ps []int, reason string, want float64) {
	r := &s.rows[w]
	p := facts(r.ind)
	if v, ok := r.u.FromCanonical(want); ok {
		p["expected"] = format(v)
	}
	p["partNames"] = names(s, ps)
	s.warn(w, "valueNum", reason, p)
}

func names(s *state, ps []int) string {
	var b strings.Builder
	for n, k := range ps {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.rows[k].ind.ItemName)
		b.WriteByte(' ')
		b.WriteString(s.rows[k].ind.ValueNum.String())
	}
	return b.String()
}

// find returns the one row of analyte a with a number in a convertible unit, or -1 when there
// is none or several with different values. The relations look up about 80 analytes: in a
// draft of more than walkUpTo rows, where a walk of the rows for each made 80 passes, the rows
// are indexed by analyte on the first look-up, in one pass (findIndexed).
func (s *state) find(a *lexicon.Analyte) int {
	if len(s.rows) > walkUpTo {
		return s.findIndexed(a)
	}
	at := -1
	s.work += len(s.rows)
	for i := range s.rows {
		r := &s.rows[i]
		if r.a != a || !r.hasV || r.u == nil || r.u.Factor == 0 {
			continue
		}
		if at >= 0 && s.canon(at) != s.canon(i) {
			return -1
		}
		if at < 0 {
			at = i
		}
	}
	return at
}

// findIndexed is find by an index of the rows by analyte.
func (s *state) findIndexed(a *lexicon.Analyte) int {
	if s.byA == nil {
		s.byA = make(map[*lexicon.Analyte]int)
		for i := range s.rows {
			if s.stop() {
				return -1
			}
			r := &s.rows[i]
			if r.a == nil || !r.hasV || r.u == nil || r.u.Factor == 0 {
				continue
			}
			switch at, ok := s.byA[r.a]; {
			case !ok:
				s.byA[r.a] = i
			case at >= 0 && s.canon(at) != s.canon(i):
				s.byA[r.a] = -1
			}
		}
	}
	if at, ok := s.byA[a]; ok {
		return at
	}
	return -1
}

// canon is row i's value in its analyte's canonical unit.
func (s *state) canon(i int) float64 {
	v, _ := s.rows[i].u.ToCanonical(s.rows[i].v)
	return v
}

// ulp is half a unit of the last printed digit of row i's value, in canonical units: what
// rounding may have moved it.
func (s *state) ulp(i int) float64 {
	lit := s.rows[i].ind.ValueNum.String()
	h := 0.5
	if _, frac, ok := strings.Cut(lit, "."); ok {
		h = 0.5 * math.Pow10(-len(frac))
	}
	v, _ := s.rows[i].u.ToCanonical(h)
	return v
}
