package check

import (
	"strings"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/schema"
)

// bound is a number in refText as printed; ok is false when absent.
type bound struct {
	d  schema.Decimal
	ok bool
}

func (b bound) ptr() *schema.Decimal {
	if !b.ok {
		return nil
	}
	d := b.d
	return &d
}

func (b bound) eq(o *schema.Decimal) bool {
	if !b.ok || o == nil {
		return !b.ok && o == nil
	}
	return b.d.Equal(*o)
}

// span is one range printed in refText, with where it sits.
type span struct {
	lo, hi     bound
	start, end int
}

func (a span) equal(b span) bool {
	return a.lo.ok == b.lo.ok && a.hi.ok == b.hi.ok &&
		(!a.lo.ok || a.lo.d.Equal(b.lo.d)) && (!a.hi.ok || a.hi.d.Equal(b.hi.d))
}

// is reports whether ind's bounds are this span's.
func (a span) is(ind *schema.OcrIndicator) bool { return a.lo.eq(ind.RefLow) && a.hi.eq(ind.RefHigh) }

// sexMarks are the words that say whose range follows (or precedes) in refText. ASCII marks
// match as whole words only (M, F, Male, Female …).
var sexMarks = []struct {
	word string
	sex  Sex
}{
	{"男性", Male}, {"女性", Female}, {"男", Male}, {"女", Female},
	{"female", Female}, {"women", Female}, {"woman", Female}, {"male", Male}, {"men", Male}, {"man", Male},
	{"f", Female}, {"m", Male},
}

type mark struct {
	sex Sex
	at  int
}

// maxSpans bounds what one refText is read for; more than this is no sex-specific range.
const maxSpans = 6

// sexRanges reads the men's and the women's range out of refText: each mark takes the range
// after it, up to the next mark ("男：40-50；女：35-45"), or, when the text starts with a
// range, the range before it ("4.3-5.8(男) 3.8-5.1(女)"). ok is false unless each sex has
// exactly one range. Ages ("男(20-79岁)") are not ranges.
func sexRanges(text string) (male, female span, ok bool) {
	if len(text) > 200 || !hasSexMark(text) {
		return span{}, span{}, false
	}
	var marks [maxSpans]mark
	var spans [maxSpans]span
	nm, ns := 0, 0
	for i := 0; i < len(text); {
		if sp, n := readSpan(text, i); n > 0 {
			if !isAge(text[i+n:]) {
				if ns == maxSpans {
					return span{}, span{}, false
				}
				sp.start, sp.end = i, i+n
				spans[ns] = sp
				ns++
			}
			i += n
			continue
		}
		if sx, n := readMark(text, i); n > 0 {
			if nm == maxSpans {
				return span{}, span{}, false
			}
			marks[nm] = mark{sx, i}
			nm++
			i += n
			continue
		}
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
	}
	if nm < 2 || ns < 2 {
		return span{}, span{}, false
	}
	var got [2][]span // male, female
	var bufs [2][maxSpans]span
	got[0], got[1] = bufs[0][:0], bufs[1][:0]
	markFirst := marks[0].at < spans[0].start
	for k := 0; k < nm; k++ {
		from, to := marks[k].at, len(text)
		if markFirst {
			if k+1 < nm {
				to = marks[k+1].at
			}
		} else {
			to = marks[k].at
			from = 0
			if k > 0 {
				from = marks[k-1].at
			}
		}
		var pick *span
		for j := 0; j < ns; j++ {
			if spans[j].start >= from && spans[j].end <= to {
				if pick == nil || !markFirst {
					pick = &spans[j] // after a mark, the first; before one, the last
				}
				if markFirst {
					break
				}
			}
		}
		if pick == nil {
			return span{}, span{}, false
		}
		x := 0
		if marks[k].sex == Female {
			x = 1
		}
		got[x] = append(got[x], *pick)
	}
	if len(got[0]) != 1 || len(got[1]) != 1 {
		return span{}, span{}, false
	}
	return got[0][0], got[1][0], true
}

func hasSexMark(s string) bool {
	if strings.Contains(s, "男") || strings.Contains(s, "女") {
		return true
	}
	for i := 0; i < len(s); i++ {
		if isASCIILetter(s[i]) {
			if _, n := readMark(s, i); n > 0 {
				return true
			}
		}
	}
	return false
}

// readMark reads a sex mark at s[i:], returning its length or 0.
func readMark(s string, i int) (Sex, int) {
	c := s[i]
	if c >= utf8.RuneSelf {
		for _, m := range sexMarks[:4] {
			if strings.HasPrefix(s[i:], m.word) {
				return m.sex, len(m.word)
			}
		}
		return "", 0
	}
	if !isASCIILetter(c) || (i > 0 && !markBefore(s[i-1])) {
		return "", 0
	}
	for _, m := range sexMarks[4:] {
		n := len(m.word)
		if i+n <= len(s) && strings.EqualFold(s[i:i+n], m.word) && (i+n == len(s) || !isASCIILetter(s[i+n])) {
			return m.sex, n
		}
	}
	return "", 0
}

// markBefore: what may precede an ASCII mark (not a slash: kg/m2 is no man).
func markBefore(c byte) bool {
	return c == ' ' || c == '(' || c == '[' || c == ';' || c == ',' || c == ':' || c == '\t' || c >= utf8.RuneSelf
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// comparators open a one-sided range; the bool says it bounds from above.
var comparators = []struct {
	s    string
	high bool
}{
	{"<=", true}, {"≤", true}, {"＜", true}, {"<", true}, {"小于", true}, {"低于", true},
	{">=", false}, {"≥", false}, {"＞", false}, {">", false}, {"大于", false}, {"高于", false},
}

// separators join the two bounds of a range.
var separators = []string{"--", "-", "~", "～", "—", "–", "至", "到", "－"}

// readSpan reads a range at s[i:] ("40-50", "<=50", "≥1.04", "3.5 ~ 5.5"), returning it and its
// length, or 0.
func readSpan(s string, i int) (span, int) {
	start := i
	var sp span
	for _, c := range comparators {
		if strings.HasPrefix(s[i:], c.s) {
			j := skipSpace(s, i+len(c.s))
			d, n := readNum(s, j)
			if n == 0 {
				return span{}, 0
			}
			if c.high {
				sp.hi = bound{d, true}
			} else {
				sp.lo = bound{d, true}
			}
			return sp, j + n - start
		}
	}
	d, n := readNum(s, i)
	if n == 0 {
		return span{}, 0
	}
	sp.lo = bound{d, true}
	i += n
	j := skipSpace(s, i)
	for _, sep := range separators {
		if strings.HasPrefix(s[j:], sep) {
			k := skipSpace(s, j+len(sep))
			if hi, m := readNum(s, k); m > 0 {
				sp.hi = bound{hi, true}
				return sp, k + m - start
			}
		}
	}
	return span{}, 0 // a lone number is no range
}

// readNum reads an unsigned decimal at s[i:].
func readNum(s string, i int) (schema.Decimal, int) {
	j := i
	dot := false
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' && !dot) {
		if s[j] == '.' {
			dot = true
		}
		j++
	}
	if j == i || (j == i+1 && s[i] == '.') {
		return schema.Decimal{}, 0
	}
	if s[j-1] == '.' {
		j--
	}
	d, err := schema.ParseDecimal(s[i:j])
	if err != nil {
		return schema.Decimal{}, 0
	}
	return d, j - i
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isAge: a range followed by 岁 or years is an age band.
func isAge(rest string) bool {
	rest = strings.TrimLeft(rest, " ")
	for _, w := range []string{"岁", "歲", "周岁", "y", "Y", "years", "yrs"} {
		if strings.HasPrefix(rest, w) {
			return true
		}
	}
	return false
}

// unitTail is the unit printed after the last range of refText ("70-110 mg/dL" → mg/dL,
// "3.5-9.5 ×10^9/L" → ×10^9/L), or "" when none follows it.
func unitTail(text string) string {
	t := strings.TrimRight(text, " )）]】;；,，。")
	if len(text) > 200 || t == "" || t[len(t)-1] >= '0' && t[len(t)-1] <= '9' {
		return "" // most ranges end in their last number
	}
	end := -1
	for i := 0; i < len(text); {
		if _, n := readSpan(text, i); n > 0 {
			i += n
			end = i
			continue
		}
		i++
	}
	if end < 0 {
		return ""
	}
	t = strings.Trim(text[end:], " )）]】;；,，。")
	if !isUnit(t) {
		return ""
	}
	return t
}
