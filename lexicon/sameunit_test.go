package lexicon

import "testing"

// TestSameUnit: one unit written two ways is one unit; different units, and a power of ten
// with a tilde (a misread), are not.
func TestSameUnit(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"×10^9/L", "10*9/L", true},
		{"10E9/L", "×10⁹/L", true},
		{"10e12/L", "x10^12/L", true},
		{"10**9/L", "10^9/L", true},
		{"μmol/L", "umol/l", true},
		{"mmol/L", "mmol/L", true},
		{"×10^9/L", "×10^12/L", false},
		{"10~9/L", "10^9/L", false},
		{"mg/dL", "mmol/L", false},
	} {
		if got := SameUnit(tt.a, tt.b); got != tt.want {
			t.Errorf("SameUnit(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
