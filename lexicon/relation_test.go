package lexicon

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/schema"
)

func relation(t *testing.T, key string) *Relation {
	t.Helper()
	for i, r := range Default().Relations() {
		if r.Key == key {
			return &Default().Relations()[i]
		}
	}
	t.Fatalf("no relation %s", key)
	return nil
}

// TestEGFREquations holds CKD-EPI 2021 to values worked by hand from its published coefficients
// (142 × (1.0/0.7)^−1.200 × 0.9938^50 × 1.012 = 68.6 for a woman of 50 with creatinine 1.0 mg/dL;
// 142 × (1.2/0.9)^−1.200 × 0.9938^60 = 69.2 for a man of 60 with 1.2), so that a coefficient
// mistyped in the code fails.
func TestEGFREquations(t *testing.T) {
	ckd2021 := egfrEquations[0]
	for _, c := range []struct {
		scr, age float64
		female   bool
		want     float64
	}{{1.0, 50, true, 68.6}, {1.2, 60, false, 69.2}} {
		if got := ckd2021.f(c.scr, ckd2021.age(c.age), c.female, false); math.Abs(got-c.want) > 0.05 {
			t.Errorf("CKD-EPI 2021 (%g mg/dL, %g y, female %v) = %.1f, want %g", c.scr, c.age, c.female, got, c.want)
		}
	}
}

// TestFormulaBands: what each formula gives over the report's unprinted constants, for values a
// report prints, holds the true result and excludes the misreads the issue names.
func TestFormulaBands(t *testing.T) {
	for _, c := range []struct {
		key    string
		in     []Band
		sex    schema.Sex
		holds  []float64
		breaks []float64
	}{
		// Creatinine 315 μmol/L: an eGFR of 79 cannot be, at any adult age or sex; 15–25 can.
		{"egfr", []Band{Of(315, 0.5)}, "", []float64{15, 20, 25}, []float64{79, 50}},
		{"egfr", []Band{Of(70, 0.5)}, schema.SexMale, []float64{90, 110, 120}, []float64{30, 200}},
		// Warfarin: PT 32.5 s, INR 3.2; a normal PT of 12 s beside it cannot be.
		{"inr", []Band{Of(32.5, 0.05)}, "", []float64{2.6, 3.2, 4}, []float64{1.0, 1.2}},
		{"inr", []Band{Of(12.0, 0.05)}, "", []float64{0.9, 1.0, 1.2}, []float64{3.2, 0.5}},
		// Diabetic ketoacidosis: HCO3 4.8, pCO2 18 mmHg, pH 7.05.
		{"henderson_hasselbalch", []Band{Of(4.8, 0.05), Of(18, 0.5)}, "", []float64{7.03, 7.05}, []float64{7.40, 6.9}},
		{"henderson_hasselbalch", []Band{Of(24.0, 0.05), Of(40, 0.5)}, "", []float64{7.39, 7.40}, []float64{7.30, 7.50}},
	} {
		r := relation(t, c.key)
		got, ok := r.Eval(c.in, c.sex)
		if !ok {
			t.Errorf("%s %v: no band", c.key, c.in)
			continue
		}
		for _, v := range c.holds {
			if v < got.Lo || v > got.Hi {
				t.Errorf("%s %v: band %v excludes %g", c.key, c.in, got, v)
			}
		}
		for _, v := range c.breaks {
			if v >= got.Lo && v <= got.Hi {
				t.Errorf("%s %v: band %v holds %g", c.key, c.in, got, v)
			}
		}
	}
}

// TestLinearParse: the Friedewald row reads as TC − HDL-C − TG × 1/5.20..1/1.35, and the
// anion gap's potassium is optional with a coefficient of 0..1.
func TestLinearParse(t *testing.T) {
	f := relation(t, "friedewald")
	if len(f.Terms) != 3 || f.Terms[1].Coef != (Band{-1, -1}) || math.Abs(f.Terms[2].Coef.Lo+1/1.35) > 1e-9 || math.Abs(f.Terms[2].Coef.Hi+1/5.2) > 1e-9 {
		t.Errorf("friedewald: %+v", f.Terms)
	}
	ag := relation(t, "anion_gap")
	if len(ag.Terms) != 4 || len(ag.Terms[2].Analytes) != 2 || !ag.Terms[3].Optional || ag.Terms[3].Coef != (Band{0, 1}) {
		t.Errorf("anion_gap: %+v", ag.Terms)
	}
	h := relation(t, "hba1c_units")
	if h.Const != (Band{2.152, 2.152}) || h.Terms[0].Unit != "mmol/mol" || h.Whole.Unit != "%" {
		t.Errorf("hba1c_units: %+v", h)
	}
	// 48 mmol/mol is 6.5 %.
	if got, _ := h.Eval([]Band{{48, 48}}, ""); math.Abs(got.Mid()-6.54) > 0.01 {
		t.Errorf("48 mmol/mol = %v %%", got)
	}
}

// TestRelIndex: every analyte a relation names has a distinct index below RelAnalytes.
func TestRelIndex(t *testing.T) {
	l := Default()
	seen := map[int]string{}
	for _, r := range l.Relations() {
		for _, a := range r.Analytes() {
			i := a.RelIndex()
			if i < 0 || i >= l.RelAnalytes() {
				t.Fatalf("%s: index %d of %d", a.Key, i, l.RelAnalytes())
			}
			if k, ok := seen[i]; ok && k != a.Key {
				t.Errorf("%s and %s share index %d", k, a.Key, i)
			}
			seen[i] = a.Key
		}
	}
	if a, _ := l.Analyte("alt"); a.RelIndex() < 0 {
		t.Error("alt is in the De Ritis ratio")
	}
	if a, _ := l.Analyte("tsh"); a.RelIndex() != -1 {
		t.Error("tsh is in no relation")
	}
}

// TestRelationsDocumented: docs/errors.md lists every relation with its formula.
func TestRelationsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Default().Relations() {
		if !strings.Contains(string(b), "| `"+r.Key+"` | "+r.Formula+" |") {
			t.Errorf("docs/errors.md does not list relation %s (%s)", r.Key, r.Formula)
		}
	}
}
