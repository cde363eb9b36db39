package schema

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

// Decimal is a lab value with the digits the report shows: 1.020 stays 1.020 and 5.60 stays 5.60
// on the way out, because trailing zeros state a measurement's precision. It marshals as a JSON
// number, never as a quoted string and never through float64.
//
// It wraps shopspring/decimal, whose exponent keeps the given scale; Marshal renders that scale
// explicitly, so no package-level decimal switch is needed.
type Decimal struct{ d decimal.Decimal }

// Bounds that keep a hostile number from costing memory when rendered ("1e999999" would print a
// million zeros) while allowing anything a lab report prints.
const (
	maxDecimalLen = 40
	maxExponent   = 20
)

var errNotNumber = errors.New("not a number")

// ParseDecimal reads a plain decimal literal: an optional sign, digits and at most one dot, or a
// JSON number with an exponent. It rejects anything else rather than guess.
func ParseDecimal(s string) (Decimal, error) {
	if s == "" || len(s) > maxDecimalLen {
		return Decimal{}, errNotNumber
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		default:
			return Decimal{}, errNotNumber
		}
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Decimal{}, errNotNumber
	}
	if e := d.Exponent(); e > maxExponent || e < -maxExponent {
		return Decimal{}, errNotNumber
	}
	return Decimal{d}, nil
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
	if e := d.d.Exponent(); e < 0 {
		return d.d.StringFixed(-e)
	}
	return d.d.String()
}

// Cmp compares numerically: -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int { return d.d.Cmp(o.d) }

// Equal reports numeric equality (5.6 equals 5.60).
func (d Decimal) Equal(o Decimal) bool { return d.d.Equal(o.d) }

// Decimal returns the underlying shopspring decimal for arithmetic.
func (d Decimal) Decimal() decimal.Decimal { return d.d }

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
