package lexicon

import (
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/longbridgeapp/opencc"
)

func TestDefaultLoads(t *testing.T) {
	l := Default()
	names := 0
	for _, a := range l.Analytes() {
		names += len(a.Names) + len(a.SectionNames)
	}
	if len(l.Analytes()) < 150 {
		t.Errorf("%d analytes, want at least 150", len(l.Analytes()))
	}
	t.Logf("%d analytes, %d names, %d sections", len(l.Analytes()), names, len(l.Sections()))
	for _, s := range l.Sections() {
		if s.Source == "" {
			t.Errorf("section %s names no source", s.Key)
		}
	}
}

// Every section of the issue has its analytes.
func TestCoverage(t *testing.T) {
	want := []string{
		"wbc", "rbc", "hgb", "hct", "mcv", "mch", "mchc", "plt", "rdw_cv", "mpv", "plateletcrit", "pdw",
		"neut_abs", "neut_pct", "lymph_abs", "lymph_pct", "mono_abs", "mono_pct", "eo_abs", "eo_pct", "baso_abs", "baso_pct",
		"urine_ph", "urine_sg", "urine_protein", "urine_glucose", "urine_ketone", "urine_bilirubin", "urine_urobilinogen",
		"urine_nitrite", "urine_leu", "urine_bld", "urine_rbc", "urine_wbc",
		"alt", "ast", "ggt", "alp", "tbil", "dbil", "ibil", "tp", "alb", "glb", "ag_ratio", "tba", "che",
		"creatinine", "urea", "bun", "uric_acid", "cysc", "egfr", "b2mg",
		"total_cholesterol", "triglycerides", "hdl_c", "ldl_c", "vldl_c", "apoa1", "apob", "lpa",
		"glucose", "hba1c", "potassium", "sodium", "chloride", "calcium", "magnesium", "phosphorus", "co2",
		"tsh", "ft3", "ft4", "t3", "t4", "tgab", "tpoab",
		"afp", "cea", "ca125", "ca199", "ca153", "ca724", "tpsa", "fpsa", "cyfra211", "nse", "scc",
		"pt", "inr", "aptt", "tt", "fib", "d_dimer",
		"ck", "ck_mb", "ldh", "ctni", "ctnt", "myoglobin", "bnp", "nt_probnp", "hbdh",
		"hbsag", "hbsab", "hbeag", "hbeab", "hbcab", "homocysteine", "b12", "folate", "vitd25",
		"cortisol", "testosterone", "estradiol", "progesterone", "prolactin", "lh", "fsh", "insulin", "c_peptide",
		"crp", "hscrp", "esr", "procalcitonin", "ferritin", "serum_iron", "tibc", "transferrin",
	}
	l := Default()
	for _, k := range want {
		if _, ok := l.Analyte(k); !ok {
			t.Errorf("no analyte %s", k)
		}
	}
}

// Parse refuses a table in which one name or unit would mean two things.
func TestParseRejects(t *testing.T) {
	const sec = "section\tx\tX\t\tsome source\n"
	for _, tc := range []struct{ name, table, want string }{
		{"same name twice", sec + "a\tx\tquant\tmmol/L\t0..1\t\tFoo\t\nb\tx\tquant\tg/L\t0..1\t\tFOO\t\n", "means both"},
		{"same after width and brackets", sec + "a\tx\tquant\tmmol/L\t0..1\t\tAB-C\t\nb\tx\tquant\tg/L\t0..1\t\t（ＡＢＣ）\t\n", "means both"},
		{"traditional spelling", sec + "a\tx\tquant\tmmol/L\t0..1\t\t总胆固醇\t\nb\tx\tquant\tg/L\t0..1\t\t總膽固醇\t\n", "means both"},
		{"shared name with a shared unit", sec + "a\tx\tquant\tmmol/L\t0..1\t\tFoo\t\nb\tx\tquant\tmmol/l\t0..1\t\t~Foo\t\n", "share unit"},
		{"unit twice", sec + "a\tx\tquant\tumol/L,μmol/L=1\t0..1\t\tFoo\t\n", "same after normalising"},
		{"unknown section", "a\ty\tquant\tmmol/L\t0..1\t\tFoo\t\n", "unknown section"},
		{"quant without limits", sec + "a\tx\tquant\tmmol/L\t\t\tFoo\t\n", "needs limits"},
		{"bad factor", sec + "a\tx\tquant\tmmol/L,mg/dL=x\t0..1\t\tFoo\t\n", "bad factor"},
		{"limits reversed", sec + "a\tx\tquant\tmmol/L\t5..1\t\tFoo\t\n", "not lo..hi"},
		{"short row", sec + "a\tx\tquant\n", "fields"},
		{"relation to nothing", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tr\tpart\ta\tb\t-\t0\ta ≥ b\tsome source\n", "unknown analyte"},
		{"relation of the old format", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tpart\ta\ta\n", "want 9"},
		{"percent with a whole", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tr\tpercent\ta\ta+a\t-\t5\ta+a\tsome source\n", "no whole"},
		{"relation without a source", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tr\tproduct\ta\ta/a\t-\t0\ta = a/a\t\n", "source"},
		{"a formula's parameter missing", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tr\tinr\ta\ta;isi=1..2\t-\t0\tinr\tsome source\n", "mnpt missing"},
		{"a unit the analyte lacks", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tr\tlinear\ta\t2*a@mmol/L+1\t-\t0\ta\tsome source\n", "no unit"},
		{"a bad tolerance", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tr\tpart\ta\ta\t-\tsome\ta\tsome source\n", "tolerance"},
		{"a condition on no term", sec + "a\tx\tquant\tg/L\t0..1\t\tFoo\t\nrelation\tr\tpart\ta\ta\tbelow:b<3\t0\ta\tsome source\n", "not a term"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.table))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// Factors are consistent both ways: a→b→a returns the value, and 1 canonical unit is Factor.
func TestFactorsRoundTrip(t *testing.T) {
	for _, a := range Default().Analytes() {
		for i, from := range a.Units {
			if from.Factor == 0 {
				continue
			}
			if got, _ := a.Convert(1, a.Units[0].Name, from.Name); math.Abs(got-from.Factor) > 1e-12*from.Factor {
				t.Errorf("%s: 1 %s = %g %s, want the factor %g", a.Key, a.Units[0].Name, got, from.Name, from.Factor)
			}
			for j, to := range a.Units {
				if to.Factor == 0 || i == j {
					continue
				}
				for _, v := range []float64{0.013, 1, 5.86, 123.4, 98765} {
					if !roundTrip(a, v, from.Name, to.Name) {
						t.Errorf("%s: %g %s → %s → back is not %g", a.Key, v, from.Name, to.Name, v)
					}
				}
			}
		}
	}
}

// Published factors, as sources state them (value in one unit × factor = value in the other).
func TestFactorsPublished(t *testing.T) {
	for _, tc := range []struct {
		key      string
		v        float64
		from, to string
		want     float64
	}{
		{"glucose", 1, "mmol/L", "mg/dL", 18.016},
		{"glucose", 100, "mg/dl", "mmol/l", 5.5506},
		{"total_cholesterol", 1, "mmol/L", "mg/dL", 38.67},
		{"hdl_c", 1, "mmol/L", "mg/dL", 38.67},
		{"triglycerides", 1, "mmol/L", "mg/dL", 88.57},
		{"creatinine", 1, "mg/dL", "μmol/L", 88.4},
		{"uric_acid", 1, "mg/dL", "umol/L", 59.48},
		{"tbil", 1, "mg/dL", "µmol/L", 17.1},
		{"hgb", 13.5, "g/dL", "g/L", 135},
		{"alb", 40, "g/L", "g/dL", 4},
		{"calcium", 1, "mmol/L", "mg/dL", 4.008},
		{"ft4", 1, "ng/dL", "pmol/L", 12.87},
		{"ft3", 1, "pg/mL", "pmol/L", 1.536},
		{"vitd25", 1, "ng/mL", "nmol/L", 2.496},
		{"wbc", 6500, "/μL", "×10^9/L", 6.5},
		{"plt", 250, "10*9/L", "G/L", 250},
		{"rbc", 4.5, "10^12/L", "×10⁶/μL", 4.5},
		{"serum_iron", 100, "μg/dL", "μmol/L", 17.905},
		{"urea", 1, "mmol/L", "mg/dL", 6.006},
		{"bun", 1, "mmol/L", "mg/dL", 2.801},
	} {
		a, _ := Default().Analyte(tc.key)
		got, ok := a.Convert(tc.v, tc.from, tc.to)
		if !ok || math.Abs(got-tc.want) > 1e-3*math.Abs(tc.want) {
			t.Errorf("%s: %g %s = %g %s (ok %v), want %g", tc.key, tc.v, tc.from, got, tc.to, ok, tc.want)
		}
	}
}

// Every row's plausible limits contain its typical reference range, in every unit it converts to.
func TestLimitsContainRef(t *testing.T) {
	for _, a := range Default().Analytes() {
		if a.Kind == Quant && len(a.Units) == 0 {
			t.Errorf("%s: quantitative without a unit", a.Key)
		}
		for _, u := range a.Units {
			lo, hi, ok := a.Limits(u.Name)
			if u.Factor == 0 {
				if ok && lo > hi {
					t.Errorf("%s %s: own limits %g..%g", a.Key, u.Name, lo, hi)
				}
				continue
			}
			if !ok {
				if a.Kind == Quant {
					t.Errorf("%s %s: no limits", a.Key, u.Name)
				}
				continue
			}
			rlo, rhi, hasRef := a.Ref(u.Name)
			if !hasRef {
				continue
			}
			if rhi > hi*(1+1e-12) || (rlo != 0 && rlo < lo*(1-1e-12)) || rlo > rhi {
				t.Errorf("%s %s: ref %g..%g not inside limits %g..%g", a.Key, u.Name, rlo, rhi, lo, hi)
			}
		}
	}
}

// The generated table agrees with the OpenCC library it was made from: each character converts
// as OpenCC's t2s, tw2s or hk2s converts it.
func TestT2SAgreesWithOpenCC(t *testing.T) {
	var ccs []*opencc.OpenCC
	for _, c := range []string{"t2s", "tw2s", "hk2s"} {
		cc, err := opencc.New(c)
		if err != nil {
			t.Fatal(err)
		}
		ccs = append(ccs, cc)
	}
	for _, p := range t2sTable {
		var says []string
		for _, cc := range ccs {
			got, err := cc.Convert(string(p[0]))
			if err != nil {
				t.Fatal(err)
			}
			says = append(says, got)
		}
		if !slices.Contains(says, string(p[1])) {
			t.Errorf("table says %c → %c, OpenCC t2s, tw2s, hk2s say %v", p[0], p[1], says)
		}
	}
}

// Every name written in Traditional characters converts (OpenCC t2s) to a name of the same
// analyte, and every Simplified name converted to Traditional (s2t, s2tw, s2hk) still matches it.
func TestTraditionalNames(t *testing.T) {
	t2s, err := opencc.New("t2s")
	if err != nil {
		t.Fatal(err)
	}
	var s2x []*opencc.OpenCC
	for _, c := range []string{"s2t", "s2tw", "s2hk"} {
		cc, err := opencc.New(c)
		if err != nil {
			t.Fatal(err)
		}
		s2x = append(s2x, cc)
	}
	l := Default()
	traditional := 0
	for _, a := range l.Analytes() {
		group := ""
		for _, s := range l.Sections() {
			if s.Key == a.Section {
				group = s.Name
			}
		}
		check := func(n string) {
			if !hasHan(n) {
				return
			}
			n = strings.TrimPrefix(n, "~")
			unit := ""
			if len(a.Units) > 0 {
				unit = a.Units[0].Name
			}
			simp, _ := t2s.Convert(n)
			if simp != n {
				traditional++
				if b, ok := l.Match(group, simp, unit); !ok || b != a {
					t.Errorf("%s: Traditional %q converts to %q, which matches %v", a.Key, n, simp, keyOf(b))
				}
			}
			for _, cc := range s2x {
				trad, _ := cc.Convert(n)
				if b, ok := l.Match(group, trad, unit); !ok || b != a {
					t.Errorf("%s: %q written %q matches %v", a.Key, n, trad, keyOf(b))
				}
			}
		}
		for _, n := range a.Names {
			check(n)
		}
		for _, n := range a.SectionNames {
			check(n)
		}
	}
	if traditional < 100 {
		t.Errorf("%d Traditional names, want at least 100", traditional)
	}
	t.Logf("%d names in Traditional characters", traditional)
}

func keyOf(a *Analyte) string {
	if a == nil {
		return "nothing"
	}
	return a.Key
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// Every relation holds, within a factor of 1.6, for the middles of the typical ranges: a wrong
// scale or a swapped part would not.
func TestRelationsHoldForTypicalValues(t *testing.T) {
	mid := func(tm Term) (float64, bool) {
		if tm.Unit != "" && tm.Unit != tm.Analytes[0].Units[0].Name {
			return 0, false
		}
		lo, hi, ok := tm.Analytes[0].Ref(tm.Analytes[0].Units[0].Name)
		return (lo + hi) / 2, ok
	}
	near := func(got, want float64) bool { return got <= want*1.6 && got >= want/1.6 }
	l := Default()
	checked := 0
	for _, r := range l.Relations() {
		var in []Band
		ok := true
		for _, tm := range r.Terms {
			v, has := mid(tm)
			ok = ok && has
			in = append(in, Band{v, v})
		}
		whole := 100.0
		if r.Kind != Percent {
			var has bool
			whole, has = mid(r.Whole)
			ok = ok && has
		}
		if !ok {
			continue
		}
		checked++
		got, ok := r.Eval(in, "")
		switch {
		case !ok:
			t.Errorf("%s: no value for typical ones", r.Key)
		case r.Kind == Part && got.Hi > whole:
			t.Errorf("%s: %g > %g", r.Key, got.Hi, whole)
		case r.Kind != Part && !near(got.Mid(), whole):
			t.Errorf("%s: %g, want about %g", r.Key, got.Mid(), whole)
		}
	}
	if checked < 8 {
		t.Errorf("only %d relations could be checked", checked)
	}
	t.Logf("%d relations, %d checked against typical ranges", len(l.Relations()), checked)
}

// Every name of the table finds its own analyte: anywhere for names, under the section's group
// for section names, with one of the analyte's units for shared names.
func TestEveryNameFindsItsAnalyte(t *testing.T) {
	l := Default()
	for _, a := range l.Analytes() {
		unit := ""
		if c := a.Canonical(); c != nil {
			unit = c.Name
		}
		sec, _ := l.Analyte(a.Key)
		group := ""
		for _, s := range l.Sections() {
			if s.Key == sec.Section {
				group = s.Name
			}
		}
		for _, n := range a.Names {
			if b, ok := l.Match("", n, unit); !ok || b != a {
				t.Errorf("Match(%q, %q) = %s, want %s", n, unit, keyOf(b), a.Key)
			}
		}
		for _, n := range a.SectionNames {
			if b, ok := l.Match(group, n, unit); !ok || b != a {
				t.Errorf("Match(%q, %q, %q) = %s, want %s", group, n, unit, keyOf(b), a.Key)
			}
		}
	}
}

// roundTrip reports whether a→b→a returns v within floating-point noise; used by tests.
func roundTrip(a *Analyte, v float64, from, to string) bool {
	w, ok := a.Convert(v, from, to)
	if !ok {
		return false
	}
	back, ok := a.Convert(w, to, from)
	return ok && math.Abs(back-v) <= 1e-9*math.Max(1, math.Abs(v))
}

func TestSimplify(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"itemName", "itemName"},
		{"标题", "标题"},
		{"標題", "标题"},
		{"參考範圍", "参考范围"},
		{"檢驗結果 (mmol/L)", "检验结果 (mmol/L)"},
		{"陰性", "阴性"},
	} {
		if got := Simplify(tc.in); got != tc.want {
			t.Errorf("Simplify(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(10, func() { Simplify("项目名称") }); n != 0 {
		t.Errorf("Simplify of Simplified text allocates %v times", n)
	}
}

// TestUnitBare: a unit printed without the leading × of the lexicon's ×10^9/L is the unit that
// normalising finds (Analyte.Unit takes it without normalising).
func TestUnitBare(t *testing.T) {
	n := 0
	for _, a := range Default().Analytes() {
		for i := range a.Units {
			u := &a.Units[i]
			if u.bare == "" {
				continue
			}
			n++
			var k key
			normUnit(&k, u.bare)
			if string(k.bytes()) != u.norm {
				t.Errorf("%s: %q normalises to %q, %q to %q", a.Key, u.bare, k.bytes(), u.Name, u.norm)
			}
			if got, ok := a.Unit(u.bare); !ok || got != u {
				t.Errorf("%s: Unit(%q) = %v, want %q", a.Key, u.bare, got, u.Name)
			}
		}
	}
	if n == 0 {
		t.Error("no unit of the lexicon is written ×10…")
	}
}
