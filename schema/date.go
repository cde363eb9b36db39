package schema

import (
	"fmt"
	"time"
)

// Date is a calendar date without a time zone, rendered as "YYYY-MM-DD".
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// NewDate returns the date, or an error when it is not on the calendar (2026-02-30) or outside the
// years a report can have.
func NewDate(year int, month time.Month, day int) (Date, error) {
	if year < 1900 || year > 2100 {
		return Date{}, fmt.Errorf("year %d is out of range", year)
	}
	t := time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
	if t.Year() != year || t.Month() != month || t.Day() != day {
		return Date{}, fmt.Errorf("%04d-%02d-%02d is not a calendar date", year, int(month), day)
	}
	return Date{year, month, day}, nil
}

// ParseDate reads exactly "YYYY-MM-DD". Lenient forms are package draft's business.
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, fmt.Errorf("want YYYY-MM-DD, got %q", s)
	}
	var y, m, d int
	for i, c := range []byte(s) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return Date{}, fmt.Errorf("want YYYY-MM-DD, got %q", s)
		}
		n := int(c - '0')
		switch {
		case i < 4:
			y = y*10 + n
		case i < 7:
			m = m*10 + n
		default:
			d = d*10 + n
		}
	}
	return NewDate(y, time.Month(m), d)
}

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// MarshalJSON writes "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// UnmarshalJSON accepts only "YYYY-MM-DD" naming a real date.
func (d *Date) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("want a \"YYYY-MM-DD\" string, got %.20s", b)
	}
	v, err := ParseDate(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
