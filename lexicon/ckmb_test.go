package lexicon

import "testing"

// TestCKMBByUnit: CK-MB is printed as its activity (U/L) or its mass (ng/mL, μg/L) under the same
// names; the unit chooses, and the unit is then one the analyte knows (no unit_unexpected). A
// name that says which it is keeps it whatever the unit: activity in ng/mL is a misread to flag.
func TestCKMBByUnit(t *testing.T) {
	l := Default()
	for _, tt := range []struct {
		name, unit, want string
		known            bool // the unit is the analyte's
	}{
		{"CK-MB", "ng/mL", "ck_mb_mass", true},
		{"CK-MB", "U/L", "ck_mb", true},
		{"肌酸激酶同工酶", "ng/mL", "ck_mb_mass", true},
		{"肌酸激酶MB同工酶", "ng/mL", "ck_mb_mass", true},
		{"肌酸激酶MB同工酶", "U/L", "ck_mb", true},
		{"肌酸激酶同工酶MB", "μg/L", "ck_mb_mass", true},
		{"肌酸激酶-MB", "ng/ml", "ck_mb_mass", true},
		{"肌酸激酶同工酶(CK-MB)", "ng/mL", "ck_mb_mass", true},
		{"Creatine kinase MB", "ng/mL", "ck_mb_mass", true},
		{"CK-MB活性", "ng/mL", "ck_mb", false},
		{"CK-MB质量", "U/L", "ck_mb_mass", false},
	} {
		a, u, ok := l.Find("心肌酶", tt.name, tt.unit)
		if !ok || a.Key != tt.want || (u != nil) != tt.known {
			t.Errorf("Find(心肌酶, %q, %q) = %v, unit known %v; want %s, %v", tt.name, tt.unit, keyOf(a), u != nil, tt.want, tt.known)
		}
	}
}
