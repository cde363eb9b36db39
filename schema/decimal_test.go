package schema

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"
)

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in, want string // want "" means rejected
	}{
		// Digits as written.
		{"1.020", "1.020"},
		{"5.60", "5.60"},
		{"6.0", "6.0"},
		{"0", "0"},
		{"137", "137"},
		{"-3", "-3"},
		// Sign and zero noise.
		{"+5", "5"},
		{".5", "0.5"},
		{"5.", "5"},
		{"007.50", "7.50"},
		{"-0.0", "0.0"},
		{"-.5", "-0.5"},
		// Exponents, as shopspring renders them.
		{"1e3", "1000"},
		{"1.2E-2", "0.012"},
		{"5.60e1", "56.0"},
		// Rejected.
		{"", ""},
		{".", ""},
		{"-", ""},
		{"1.2.3", ""},
		{"1,024", ""},
		{"0x10", ""},
		{" 5", ""},
		{"5 ", ""},
		{"1e999", ""},
		{"1e-21", ""},
		{"0.000000000000000000001", ""}, // scale 21
		{"12345678901234567890123456789012345678901", ""},
	}
	for _, tt := range tests {
		d, err := ParseDecimal(tt.in)
		got := ""
		if err == nil {
			got = d.String()
		}
		if got != tt.want {
			t.Errorf("ParseDecimal(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestDecimalJSON(t *testing.T) {
	var v struct{ N *Decimal }
	if err := json.Unmarshal([]byte(`{"N": 1.020}`), &v); err != nil || v.N.String() != "1.020" {
		t.Fatalf("unmarshal 1.020 = %v, %v", v.N, err)
	}
	b, _ := json.Marshal(v)
	if string(b) != `{"N":1.020}` {
		t.Errorf("marshal = %s", b)
	}
	if err := json.Unmarshal([]byte(`{"N": "5.6"}`), &v); err == nil {
		t.Errorf("a quoted number was accepted")
	}
}

// FuzzDecimal checks the literal-based comparison and rendering against shopspring/decimal.
func FuzzDecimal(f *testing.F) {
	for _, s := range [][2]string{{"5.6", "5.60"}, {"-3", "3"}, {"0.0", "-0"}, {"10", "9.99"}, {".5", "0.49"}, {"1e3", "999.9"}, {"-1.5", "-1.50"}, {"007", "7"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		da, errA := ParseDecimal(a)
		db, errB := ParseDecimal(b)
		if errA != nil || errB != nil {
			return
		}
		sa, sb := decimal.RequireFromString(da.String()), decimal.RequireFromString(db.String())
		if want, _ := decimal.NewFromString(a); !want.Equal(sa) {
			t.Fatalf("ParseDecimal(%q) = %s, which is not %s", a, da, want)
		}
		if got, want := da.Cmp(db), sa.Cmp(sb); got != want {
			t.Fatalf("Cmp(%s, %s) = %d, want %d", da, db, got, want)
		}
		if !json.Valid([]byte(da.String())) {
			t.Fatalf("%q renders as %q, not a JSON number", a, da)
		}
	})
}
