package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Decimal is a lab value with the digits the report shows: 1.020 stays 1.020 and 5.60 stays 5.60
// on the way out, because trailing zeros state a measurement's precision. It marshals as a JSON
// number, never as a quoted string and never through float64.
//
// It holds the number's canonical literal (no plus sign, no leading zeros, no exponent, the scale
// as written) and gives arithmetic to shopspring/decimal through Decimal(). Keeping the literal
// rather than a decimal.Decimal makes reading a reply cost no big.Int per number; comparison works
// on the digits directly, and FuzzDecimal checks it against shopspring's.
type Decimal struct{ lit string }

// Bounds that keep a hostile number from costing memory when rendered ("1e999999" would print a
// million zeros) while allowing anything a lab report prints.
const (
	maxDecimalLen = 40
	maxScale      = 20
)

var errNotNumber = errors.New("not a number")

// ParseDecimal reads a plain decimal literal — an optional sign, digits and at most one dot
// (5, 5.60, .5, 5.) — or a JSON number with an exponent. It rejects anything else rather than
// guess.
func ParseDecimal(s string) (Decimal, error) {
	if s == "" || len(s) > maxDecimalLen {
		return Decimal{}, errNotNumber
	}
	i := 0
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[intStart:i]
	fracPart := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fracPart = s[fs:i]
	}
	if intPart == "" && fracPart == "" {
		return Decimal{}, errNotNumber
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return Decimal{}, errNotNumber
		}
		return parseExponent(s)
	}
	if len(fracPart) > maxScale {
		return Decimal{}, errNotNumber
	}
	return Decimal{canonical(s, neg, intPart, fracPart)}, nil
}

// canonical returns the literal without sign noise or leading zeros, reusing s when it already is.
func canonical(s string, neg bool, intPart, fracPart string) string {
	trimmed := strings.TrimLeft(intPart, "0")
	if trimmed == "" {
		trimmed = "0"
	}
	if strings.Trim(intPart, "0") == "" && strings.Trim(fracPart, "0") == "" {
		neg = false // -0.0 is 0.0
	}
	var want int
	if neg {
		want++
	}
	want += len(trimmed)
	if fracPart != "" {
		want += 1 + len(fracPart)
	}
	if want == len(s) && (neg || s[0] != '+') && trimmed == intPart {
		return s
	}
	var b strings.Builder
	b.Grow(want)
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(trimmed)
	if fracPart != "" {
		b.WriteByte('.')
		b.WriteString(fracPart)
	}
	return b.String()
}

// parseExponent handles 1.2e3 through shopspring, rendering the scale it implies.
func parseExponent(s string) (Decimal, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Decimal{}, errNotNumber
	}
	if e := d.Exponent(); e > maxScale || e < -maxScale {
		return Decimal{}, errNotNumber
	}
	if e := d.Exponent(); e < 0 {
		return Decimal{d.StringFixed(-e)}, nil
	}
	return Decimal{d.String()}, nil
}

// MustDecimal is ParseDecimal for literals in tests and tables.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(fmt.Sprintf("schema.MustDecimal(%q): %v", s, err))
	}
	return d
}

// String renders the number with the scale it was read with.
func (d Decimal) String() string {
	if d.lit == "" {
		return "0"
	}
	return d.lit
}

// Decimal returns the number as a shopspring decimal, for arithmetic.
func (d Decimal) Decimal() decimal.Decimal { return decimal.RequireFromString(d.String()) }

// Cmp compares numerically: -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int {
	a, b := d.String(), o.String()
	an, bn := a[0] == '-', b[0] == '-'
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	case an && bn:
		return cmpAbs(b[1:], a[1:])
	}
	return cmpAbs(a, b)
}

// cmpAbs compares two canonical unsigned literals.
func cmpAbs(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	if len(ai) != len(bi) {
		if len(ai) < len(bi) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	for i := 0; i < max(len(af), len(bf)); i++ {
		x, y := byte('0'), byte('0')
		if i < len(af) {
			x = af[i]
		}
		if i < len(bf) {
			y = bf[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Equal reports numeric equality (5.6 equals 5.60).
func (d Decimal) Equal(o Decimal) bool { return d.Cmp(o) == 0 }

// MarshalJSON writes a JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalJSON accepts a JSON number only: a quoted number is a contract violation, so that a
// confirmed draft with "5.6" in valueNum is reported rather than silently accepted.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '"' {
		return fmt.Errorf("want a JSON number, got %.20s", b)
	}
	v, err := ParseDecimal(string(b))
	if err != nil {
		return fmt.Errorf("want a JSON number, got %.20s", b)
	}
	*d = v
	return nil
}
