package lexicon

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/schema"
)

// RelKind is how the analytes of a Relation are bound.
type RelKind uint8

const (
	// Part: Terms[0] cannot exceed Whole (HDL-C and total cholesterol).
	Part RelKind = iota
	// Linear: Whole = Const + Σ Coef × term (TBIL = DBIL + IBIL; LDL-C = TC − HDL-C − TG/2.2).
	Linear
	// Product: Whole = Const × Π term^±1 (MCH = HGB / RBC; A/G = ALB / GLB).
	Product
	// Percent: the terms add up to 100 % (the five-part differential); there is no Whole.
	Percent
	// Formula: Whole is a named function of the terms (formulas: INR, eGFR, blood-gas pH).
	Formula
)

func (k RelKind) String() string {
	return [...]string{"part", "linear", "product", "percent", "formula"}[k]
}

// Band is a closed interval: what a printed value may have been before it was rounded, or what a
// formula gives over the constants a report leaves unprinted (an INR's ISI).
type Band struct{ Lo, Hi float64 }

// Of is the band of a value v printed to within ±half.
func Of(v, half float64) Band { return Band{v - half, v + half} }

// Overlaps reports whether b and c share a value.
func (b Band) Overlaps(c Band) bool { return b.Lo <= c.Hi && c.Lo <= b.Hi }

// Mid is the middle of the band.
func (b Band) Mid() float64 { return (b.Lo + b.Hi) / 2 }

func (b Band) add(c Band) Band { return Band{b.Lo + c.Lo, b.Hi + c.Hi} }

func (b Band) mul(c Band) Band {
	p := [4]float64{b.Lo * c.Lo, b.Lo * c.Hi, b.Hi * c.Lo, b.Hi * c.Hi}
	return Band{min(p[0], p[1], p[2], p[3]), max(p[0], p[1], p[2], p[3])}
}

func (b Band) union(c Band) Band { return Band{min(b.Lo, c.Lo), max(b.Hi, c.Hi)} }

// positive reports whether every value of the band is above zero (a product's term must be).
func (b Band) positive() bool { return b.Lo > 0 }

// inv is 1/b for a positive band.
func (b Band) inv() Band { return Band{1 / b.Hi, 1 / b.Lo} }

// Term is one analyte of a relation, as a formula uses it.
type Term struct {
	// Analytes are the alternatives, in order: the first one the draft prints is used (the
	// anion gap takes the chemistry panel's total CO2, else the blood gas's HCO3⁻).
	Analytes []*Analyte
	// Unit, when set, is the unit the value is taken in instead of the canonical one
	// (hba1c@mmol/mol: HbA1c in IFCC units, which no factor converts to %).
	Unit string
	// Coef is a Linear term's coefficient (a band when the report leaves it open: the
	// Martin–Hopkins factor); Exp is a Product term's exponent, +1 or -1.
	Coef Band
	Exp  int8
	// Optional: a Linear term left out when not printed (potassium in the anion gap).
	Optional bool
}

// CondKind is what a relation's condition looks at.
type CondKind uint8

const (
	// NameHas: the whole's printed name holds one of Words (LDL-C "calculated", 计算).
	NameHas CondKind = iota
	// NameLacks: the whole's printed name holds none of Words (eGFR not from cystatin C).
	NameLacks
	// Below: term Term's value (canonical) is below Limit (Friedewald: TG < 4.5 mmol/L).
	Below
	// Without: the relation applies only when Analyte is not printed (TSAT from transferrin
	// when no TIBC is printed, from which a lab would compute it instead).
	Without
)

// Cond is a condition a relation applies under.
type Cond struct {
	Kind    CondKind
	Words   []string // NameHas, NameLacks: lower case
	Term    int      // Below
	Limit   float64  // Below
	Analyte *Analyte // Without
}

// Relation binds analytes whose values cannot all be right at once when it does not hold. Values
// are compared in each analyte's canonical unit (Unit.ToCanonical) unless a term names its unit;
// a value stands for the band its printed digits allow (half a unit of the last digit), and the
// relation holds when what the terms give, widened by Tol, meets the whole's band.
type Relation struct {
	// Key names the relation in the table (friedewald, mch); Formula is how a message writes
	// it (LDL-C = TC − HDL-C − TG/2.2); Source is where it comes from.
	Key, Formula, Source string
	Kind                 RelKind
	Whole                Term // no analytes for Percent
	Terms                []Term
	// Const is a Linear relation's constant term or a Product's factor.
	Const Band
	// Tol is what the relation allows beyond the rounding of the printed values: a fraction of
	// what the terms give (Rel), or an amount in the whole's canonical unit (Abs).
	Tol  Tolerance
	When []Cond

	fn     *formula
	params []Band
	ages   []float64 // an eGFR row's age factors (egfrAges), read with the row
}

// Tolerance is a relation's allowance beyond rounding.
type Tolerance struct{ Rel, Abs float64 }

// Widen is b widened by the tolerance.
func (t Tolerance) Widen(b Band) Band {
	m := max(math.Abs(b.Lo), math.Abs(b.Hi))
	d := t.Rel*m + t.Abs
	return Band{b.Lo - d, b.Hi + d}
}

// Relations returns every relation in table order. The slice is shared: do not modify it.
func (l *Lexicon) Relations() []Relation { return l.relations }

// Analytes returns every analyte the relation names, the whole's first.
func (r *Relation) Analytes() []*Analyte {
	var out []*Analyte
	out = append(out, r.Whole.Analytes...)
	for _, t := range r.Terms {
		out = append(out, t.Analytes...)
	}
	return out
}

// RelIndex is the analyte's index among the analytes relations name (0 ≤ i < RelAnalytes), or
// -1 when no relation names it: a check indexes a draft's rows by it without a map.
func (a *Analyte) RelIndex() int { return int(a.rel) - 1 }

// RelAnalytes is how many analytes the relations name.
func (l *Lexicon) RelAnalytes() int { return l.relCount }

// Eval is what the terms give for the whole, in.[i] being term i's band (NaN bounds: an optional
// term not printed). ok is false when the terms are outside the formula's domain (a ratio of a
// band that holds zero). sex narrows a formula that depends on it ("": both).
func (r *Relation) Eval(in []Band, sex schema.Sex) (b Band, ok bool) {
	switch r.Kind {
	case Part:
		return in[0], true
	case Linear, Percent:
		b = r.Const
		for i, t := range r.Terms {
			if math.IsNaN(in[i].Lo) {
				continue
			}
			b = b.add(t.Coef.mul(in[i]))
		}
		return b, true
	case Product:
		b = r.Const
		for i, t := range r.Terms {
			if !in[i].positive() {
				return Band{}, false
			}
			if t.Exp < 0 {
				b = b.mul(in[i].inv())
			} else {
				b = b.mul(in[i])
			}
		}
		return b, true
	case Formula:
		// Called by name, not through a func value, so that in does not escape: a check's
		// bands stay on its stack.
		switch r.fn.id {
		case fINR:
			return inr(in, r.params)
		case fEGFR:
			return egfr(in, r.params, r.ages, sex)
		case fPH:
			return ph(in, r.params)
		}
	}
	return Band{}, false
}

// formula is a named function a relation row may use: its inputs and its parameters (bands the
// row gives); its evaluation over bands is the function of its id below, its source beside it.
type formula struct {
	id     int
	inputs int
	params []string
}

const (
	fINR = iota
	fEGFR
	fPH
)

var formulas = map[string]*formula{
	"inr":  {id: fINR, inputs: 1, params: []string{"isi", "mnpt"}},
	"egfr": {id: fEGFR, inputs: 1, params: []string{"age"}},
	"ph":   {id: fPH, inputs: 2, params: []string{"pka", "s"}},
}

// INR = (PT / MNPT)^ISI: WHO Expert Committee on Biological Standardization, Guidelines for
// thromboplastins and plasma used to control oral anticoagulant therapy (WHO TRS 889, 1999,
// Annex 3). The report rarely prints the reagent's ISI and the lab's mean normal PT (MNPT):
// the row gives the bands they span. (PT/MNPT)^ISI is monotone in each on r > 0, so its
// band is at the corners.
func inr(in, p []Band) (Band, bool) {
	pt, isi, mnpt := in[0], p[0], p[1]
	if !pt.positive() || !mnpt.positive() {
		return Band{}, false
	}
	r := Band{pt.Lo / mnpt.Hi, pt.Hi / mnpt.Lo}
	b := Band{math.Inf(1), math.Inf(-1)}
	for _, x := range [2]float64{r.Lo, r.Hi} {
		for _, e := range [2]float64{isi.Lo, isi.Hi} {
			v := math.Pow(x, e)
			b = Band{min(b.Lo, v), max(b.Hi, v)}
		}
	}
	return b, true
}

// eGFR from serum creatinine (μmol/L here, mg/dL in the equations: ÷ 88.4) over the adult
// ages of p[0] and the sexes (the caller's, else both), as a lab may print it: CKD-EPI 2021
// (race-free; Inker LA et al., N Engl J Med 2021;385:1737–49), CKD-EPI 2009 with its race
// coefficient (Levey AS et al., Ann Intern Med 2009;150:604–12), the IDMS-traceable MDRD
// study equation (Levey AS et al., Clin Chem 2007;53:766–72) and its Chinese modification
// (Ma YC et al., J Am Soc Nephrol 2006;17:2937–44). Each falls with creatinine and age, so
// the band is each at its corners, joined.
// ages are the equations' age factors at p[0]'s ends (egfrAges), read once with the row; nil:
// computed here.
func egfr(in, p []Band, ages []float64, sex schema.Sex) (Band, bool) {
	scr, age := Band{in[0].Lo / 88.4, in[0].Hi / 88.4}, p[0]
	if !scr.positive() || !age.positive() {
		return Band{}, false
	}
	if ages == nil {
		ages = egfrAges(age)
	}
	b := Band{math.Inf(1), math.Inf(-1)}
	for _, female := range [2]bool{false, true} {
		if sex == schema.SexMale && female || sex == schema.SexFemale && !female {
			continue
		}
		for k, eq := range egfrEquations {
			lo, hi := eq.f(scr.Hi, ages[2*k+1], female, false), eq.f(scr.Lo, ages[2*k], female, true)
			b = Band{min(b.Lo, lo), max(b.Hi, hi)}
		}
	}
	return b, true
}

// egfrAges are each equation's age factor at the ages' low and high end, in egfrEquations' order.
func egfrAges(age Band) []float64 {
	out := make([]float64, 0, 2*len(egfrEquations))
	for _, eq := range egfrEquations {
		out = append(out, eq.age(age.Lo), eq.age(age.Hi))
	}
	return out
}

// Blood-gas pH = pKa + log10(HCO3⁻ / (S × pCO2)) (Henderson–Hasselbalch; pKa 6.1 and CO2
// solubility S 0.0307 mmol/L per mmHg at 37 °C: CLSI C46-A2, Blood Gas and pH Analysis,
// 2009, which analysers use to compute HCO3⁻ from the measured pH and pCO2, with pKa 6.095).
// pCO2 in mmHg (kPa converts). Rises with HCO3⁻, falls with pCO2.
func ph(in, p []Band) (Band, bool) {
	hco3, pco2, pka, s := in[0], in[1], p[0], p[1]
	if !hco3.positive() || !pco2.positive() || !s.positive() {
		return Band{}, false
	}
	return Band{pka.Lo + math.Log10(hco3.Lo/(s.Hi*pco2.Hi)), pka.Hi + math.Log10(hco3.Hi/(s.Lo*pco2.Lo))}, true
}

// egfrEquations are the creatinine equations of formulas["egfr"]: eGFR in mL/min/1.73 m² from
// creatinine in mg/dL, age in years and sex; high takes the race coefficients of the equations
// that have one (the highest a lab may have printed), else none.
var egfrEquations = []struct {
	// f is the equation at creatinine scr with age factor ageF (age's, its value at the age).
	f   func(scr, ageF float64, female, high bool) float64
	age func(age float64) float64
}{
	// CKD-EPI 2021: 142 × min(Scr/κ, 1)^α × max(Scr/κ, 1)^−1.200 × 0.9938^age × 1.012 [female];
	// κ 0.7 (F) / 0.9 (M), α −0.241 (F) / −0.302 (M).
	{func(scr, ageF float64, female, _ bool) float64 {
		k, a, f := 0.9, -0.302, 1.0
		if female {
			k, a, f = 0.7, -0.241, 1.012
		}
		return 142 * math.Pow(min(scr/k, 1), a) * math.Pow(max(scr/k, 1), -1.2) * ageF * f
	}, func(age float64) float64 { return math.Pow(0.9938, age) }},
	// CKD-EPI 2009: 141 × min(Scr/κ, 1)^α × max(Scr/κ, 1)^−1.209 × 0.993^age × 1.018 [female]
	// × 1.159 [Black]; κ 0.7 / 0.9, α −0.329 / −0.411.
	{func(scr, ageF float64, female, high bool) float64 {
		k, a, f := 0.9, -0.411, 1.0
		if female {
			k, a, f = 0.7, -0.329, 1.018
		}
		if high {
			f *= 1.159
		}
		return 141 * math.Pow(min(scr/k, 1), a) * math.Pow(max(scr/k, 1), -1.209) * ageF * f
	}, func(age float64) float64 { return math.Pow(0.993, age) }},
	// MDRD (IDMS-traceable): 175 × Scr^−1.154 × age^−0.203 × 0.742 [female] × 1.212 [Black].
	{func(scr, ageF float64, female, high bool) float64 {
		f := 1.0
		if female {
			f = 0.742
		}
		if high {
			f *= 1.212
		}
		return 175 * math.Pow(scr, -1.154) * ageF * f
	}, func(age float64) float64 { return math.Pow(age, -0.203) }},
	// Chinese-modified MDRD: 175 × Scr^−1.234 × age^−0.179 × 0.79 [female].
	{func(scr, ageF float64, female, _ bool) float64 {
		f := 1.0
		if female {
			f = 0.79
		}
		return 175 * math.Pow(scr, -1.234) * ageF * f
	}, func(age float64) float64 { return math.Pow(age, -0.179) }},
}

// relation	key	kind	whole	terms	when	tol	formula	source (the format is at the top of
// analytes.tsv)
func (l *Lexicon) addRelation(f []string) error {
	if len(f) != 9 {
		return fmt.Errorf("relation row has %d fields, want 9", len(f))
	}
	r := Relation{Key: f[1], Formula: f[7], Source: f[8], Const: Band{0, 0}}
	if r.Key == "" || r.Formula == "" || r.Source == "" {
		return fmt.Errorf("relation %q: a key, a formula and a source are needed", f[1])
	}
	for _, o := range l.relations {
		if o.Key == r.Key {
			return fmt.Errorf("relation %s twice", r.Key)
		}
	}
	var err error
	switch f[2] {
	case "part":
		r.Kind = Part
		var t Term
		if t, err = l.term(f[4]); err == nil {
			r.Terms = []Term{t}
		}
	case "linear", "percent":
		r.Kind = Linear
		if f[2] == "percent" {
			r.Kind = Percent
		}
		err = l.linear(&r, f[4])
	case "product":
		r.Kind = Product
		err = l.product(&r, f[4])
	default:
		fn, ok := formulas[f[2]]
		if !ok {
			return fmt.Errorf("relation %s: kind %q", r.Key, f[2])
		}
		r.Kind, r.fn = Formula, fn
		err = l.formula(&r, fn, f[4])
	}
	if err != nil {
		return fmt.Errorf("relation %s: %w", r.Key, err)
	}
	if (r.Kind == Percent) != (f[3] == "") {
		return fmt.Errorf("relation %s: only percent has no whole", r.Key)
	}
	if f[3] != "" {
		if r.Whole, err = l.term(f[3]); err != nil {
			return fmt.Errorf("relation %s: %w", r.Key, err)
		}
		if len(r.Whole.Analytes) != 1 {
			return fmt.Errorf("relation %s: a whole is one analyte", r.Key)
		}
	}
	if r.Kind == Percent {
		r.Const = Band{0, 0}
	}
	if len(r.Terms) < 1 || (r.Kind == Linear || r.Kind == Percent) && len(r.Terms) < 2 && r.Const == (Band{}) {
		return fmt.Errorf("relation %s: too few analytes", r.Key)
	}
	if len(r.Terms) > maxTerms {
		return fmt.Errorf("relation %s: more than %d terms", r.Key, maxTerms)
	}
	if r.Tol, err = tolerance(f[6]); err != nil {
		return fmt.Errorf("relation %s: %w", r.Key, err)
	}
	if r.When, err = l.conds(&r, f[5]); err != nil {
		return fmt.Errorf("relation %s: %w", r.Key, err)
	}
	for _, a := range r.Analytes() {
		if a.rel == 0 {
			l.relCount++
			a.rel = int16(l.relCount)
		}
	}
	l.relations = append(l.relations, r)
	return nil
}

// maxTerms bounds a relation's terms, so that a check holds their rows in an array.
const maxTerms = 8

// term reads "key", "key@unit" or "a|b" (alternatives).
func (l *Lexicon) term(s string) (Term, error) {
	var t Term
	s, t.Unit, _ = strings.Cut(s, "@")
	for _, k := range strings.Split(s, "|") {
		a, ok := l.byKey[k]
		if !ok {
			return t, fmt.Errorf("unknown analyte %q", k)
		}
		if t.Unit != "" {
			if _, ok := a.Unit(t.Unit); !ok {
				return t, fmt.Errorf("%s has no unit %q", k, t.Unit)
			}
		}
		t.Analytes = append(t.Analytes, a)
	}
	if t.Unit != "" && len(t.Analytes) > 1 {
		return t, fmt.Errorf("a term in a unit has no alternatives")
	}
	t.Coef, t.Exp = Band{1, 1}, 1
	return t, nil
}

// linear reads "a+b", "a-b-c/1.35..5.20", "0.09148*a@mmol/mol+2.152", "?0..1*k": terms and
// numbers joined by + and -, each term with an optional coefficient (N* or lo..hi*), divisor
// (/N or /lo..hi; not after a unit, which may hold a /) and ? (optional).
func (l *Lexicon) linear(r *Relation, s string) error {
	for _, part := range splitSigned(s) {
		sign, body := 1.0, part
		switch body[0] {
		case '-':
			sign, body = -1, body[1:]
		case '+':
			body = body[1:]
		}
		opt := strings.HasPrefix(body, "?")
		body = strings.TrimPrefix(body, "?")
		coef := Band{1, 1}
		if c, rest, ok := strings.Cut(body, "*"); ok {
			b, err := band(c)
			if err != nil {
				return err
			}
			coef, body = b, rest
		}
		if rest, d, ok := strings.Cut(body, "/"); ok && !strings.Contains(body, "@") { // a unit holds /
			b, err := band(d)
			if err != nil || !b.positive() {
				return fmt.Errorf("bad divisor %q", d)
			}
			coef, body = coef.mul(b.inv()), rest
		}
		if b, err := band(body); err == nil {
			if opt {
				return fmt.Errorf("a number is not optional")
			}
			r.Const = r.Const.add(b.mul(Band{sign, sign}).mul(coef))
			continue
		}
		t, err := l.term(body)
		if err != nil {
			return err
		}
		t.Coef, t.Optional = coef.mul(Band{sign, sign}), opt
		r.Terms = append(r.Terms, t)
	}
	return nil
}

// splitSigned splits "a-b+c" before each + or - that follows a term (not the - of 1e-3).
func splitSigned(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		exp := s[i-1] == 'e' && i >= 2 && '0' <= s[i-2] && s[i-2] <= '9'
		if (s[i] == '+' || s[i] == '-') && !exp && s[i-1] != '*' && s[i-1] != '/' {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

// product reads "N*a/b", "a/b*N", "N/lo..hi*a/b": analytes and numbers joined by * and /.
func (l *Lexicon) product(r *Relation, s string) error {
	r.Const = Band{1, 1}
	exp := int8(1)
	for s != "" {
		i := strings.IndexAny(s, "*/")
		tok := s
		next := int8(0)
		if i >= 0 {
			tok = s[:i]
			next = 1
			if s[i] == '/' {
				next = -1
			}
			s = s[i+1:]
		} else {
			s = ""
		}
		if b, err := band(tok); err == nil {
			if !b.positive() {
				return fmt.Errorf("factor %q is not above zero", tok)
			}
			if exp < 0 {
				b = b.inv()
			}
			r.Const = r.Const.mul(b)
		} else {
			t, err := l.term(tok)
			if err != nil {
				return err
			}
			t.Exp = exp
			r.Terms = append(r.Terms, t)
		}
		exp = next
	}
	return nil
}

// formula reads "a,b;name=lo..hi;…": the inputs, then the formula's parameters, each once.
func (l *Lexicon) formula(r *Relation, fn *formula, s string) error {
	parts := strings.Split(s, ";")
	for _, k := range strings.Split(parts[0], ",") {
		t, err := l.term(k)
		if err != nil {
			return err
		}
		r.Terms = append(r.Terms, t)
	}
	if len(r.Terms) != fn.inputs {
		return fmt.Errorf("%d inputs, want %d", len(r.Terms), fn.inputs)
	}
	r.params = make([]Band, len(fn.params))
	seen := make([]bool, len(fn.params))
	for _, p := range parts[1:] {
		name, v, _ := strings.Cut(p, "=")
		i := -1
		for k, n := range fn.params {
			if n == name {
				i = k
			}
		}
		if i < 0 || seen[i] {
			return fmt.Errorf("parameter %q unknown or twice", name)
		}
		b, err := band(v)
		if err != nil {
			return err
		}
		r.params[i], seen[i] = b, true
	}
	for i, ok := range seen {
		if !ok {
			return fmt.Errorf("parameter %s missing", fn.params[i])
		}
	}
	if fn.id == fEGFR {
		r.ages = egfrAges(r.params[0])
	}
	return nil
}

// conds reads "name:calculated|计算; below:triglycerides<4.5; without:tibc; notname:cys".
func (l *Lexicon) conds(r *Relation, s string) ([]Cond, error) {
	if s == "" || s == "-" {
		return nil, nil
	}
	var out []Cond
	for _, c := range strings.Split(s, ";") {
		kind, arg, ok := strings.Cut(strings.TrimSpace(c), ":")
		if !ok {
			return nil, fmt.Errorf("condition %q", c)
		}
		switch kind {
		case "name", "notname":
			k := NameHas
			if kind == "notname" {
				k = NameLacks
			}
			out = append(out, Cond{Kind: k, Words: splitNames(strings.ToLower(arg))})
		case "below":
			key, lim, ok := strings.Cut(arg, "<")
			v, err := strconv.ParseFloat(lim, 64)
			if !ok || err != nil {
				return nil, fmt.Errorf("condition %q", c)
			}
			i := -1
			for k, t := range r.Terms {
				if len(t.Analytes) == 1 && t.Analytes[0].Key == key {
					i = k
				}
			}
			if i < 0 {
				return nil, fmt.Errorf("condition %q: not a term", c)
			}
			out = append(out, Cond{Kind: Below, Term: i, Limit: v})
		case "without":
			a, ok := l.byKey[arg]
			if !ok {
				return nil, fmt.Errorf("condition %q: unknown analyte", c)
			}
			out = append(out, Cond{Kind: Without, Analyte: a})
		default:
			return nil, fmt.Errorf("condition %q", c)
		}
	}
	return out, nil
}

// tolerance reads "0", "5" (an amount) or "2%" (a fraction).
func tolerance(s string) (Tolerance, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 {
			return Tolerance{}, fmt.Errorf("tolerance %q", s)
		}
		return Tolerance{Rel: v / 100}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return Tolerance{}, fmt.Errorf("tolerance %q", s)
	}
	return Tolerance{Abs: v}, nil
}

// band reads "N" or "lo..hi".
func band(s string) (Band, error) {
	if strings.Contains(s, "..") {
		lo, hi, err := parseRange(s)
		return Band{lo, hi}, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return Band{}, fmt.Errorf("%q is not a number", s)
	}
	return Band{v, v}, nil
}
