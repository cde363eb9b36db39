package lexicon

import (
	"bytes"
	"unicode/utf8"
)

//go:generate go run ./internal/gent2s

// maxKey bounds the bytes a normalised name or unit may take; longer input never matches, and
// keeping the key in a fixed array lets a lookup run without allocating.
const maxKey = 192

// key is a normalised name or unit in a stack buffer.
type key struct {
	b [maxKey]byte
	n int
	// over is set when the input did not fit; such a key matches nothing.
	over bool
}

func (k *key) bytes() []byte { return k.b[:k.n] }

func (k *key) add(r rune) {
	if r < utf8.RuneSelf && k.n < maxKey {
		k.b[k.n] = byte(r)
		k.n++
		return
	}
	if k.n+utf8.UTFMax > maxKey {
		k.over = true
		return
	}
	k.n += utf8.EncodeRune(k.b[k.n:], r)
}

// isTrad has a bit set for each BMP rune the table converts, so that Simplified text (nearly
// all of it) skips the search.
var isTrad = func() (m [0x10000 / 64]uint64) {
	for _, p := range t2sTable {
		if p[0] < 0x10000 {
			m[p[0]>>6] |= 1 << (p[0] & 63)
		}
	}
	return m
}()

func (k *key) addRaw(s string) {
	if k.n+len(s) > maxKey {
		k.over = true
		return
	}
	k.n += copy(k.b[k.n:], s)
}

func (k *key) addBytes(b []byte) {
	if k.n+len(b) > maxKey {
		k.over = true
		return
	}
	k.n += copy(k.b[k.n:], b)
}

// t2s folds a Traditional character to Simplified, by binary search in the OpenCC table.
func t2s(r rune) rune {
	if r < 0x3400 || (r < 0x10000 && isTrad[r>>6]&(1<<(r&63)) == 0) {
		return r
	}
	lo, hi := 0, len(t2sTable)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t2sTable[m][0] < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t2sTable) && t2sTable[lo][0] == r {
		return t2sTable[lo][1]
	}
	return r
}

// fold maps one rune of a printed name to its matching form: full-width to half-width, ASCII
// to lower case, Traditional to Simplified, look-alike letters to one. It returns -1 for runes
// that carry no meaning in a name (spaces, dashes, dots, marks).
func fold(r rune) rune {
	if r < utf8.RuneSelf {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		}
	}
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
		r -= 0xFEE0
	case r == 0x3000:
		r = ' '
	}
	switch r {
	case ' ', '\t', '\n', '\r', 0xA0, '-', '_', '.', ',', ':', ';', '\'', '"', '`', '~',
		'·', '・', '•', '‐', '‑', '‒', '–', '—', '―', '−', '，', '、', '：', '；', '。',
		'*', '★', '☆', '▲', '△', '▼', '▽', '↑', '↓', '◆', '●', '○', '※', '?', '!':
		return -1
	case 'µ', 'μ': // micro sign and Greek mu
		return 'u'
	case 'ß': // OCR reads β as German ß
		return 'β'
	case '＃':
		return '#'
	case '％':
		return '%'
	case '\u00B2', '\u2082':
		return '2'
	case '\u00B3', '\u2083':
		return '3'
	case '\u00B9', '\u2081':
		return '1'
	case '\u2074', '\u2084':
		return '4'
	}
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	if r >= 'Α' && r <= 'Ω' && r != 0x3A2 { // Greek capitals: Α-羟丁酸 is α-羟丁酸
		return r + 'α' - 'Α'
	}
	return t2s(r)
}

// isOpen and isClose recognise the brackets a name may hold a second name or a qualifier in.
func isOpen(r rune) bool {
	switch r {
	case '(', '（', '[', '【', '〔', '［', '{', '<', '《', '〈':
		return true
	}
	return false
}

func isClose(r rune) bool {
	switch r {
	case ')', '）', ']', '】', '〕', '］', '}', '>', '》', '〉':
		return true
	}
	return false
}

// normName writes s folded, with brackets dropped but their content kept, into k.
func normName(k *key, s string) {
	k.n, k.over = 0, false
	for _, r := range s {
		if isOpen(r) || isClose(r) {
			continue
		}
		if f := fold(r); f >= 0 {
			k.add(f)
		}
	}
}

// normUnit writes a printed unit in its matching form: ×10^9/L, x10*9/l, 10⁹/L and 10E9/L all
// become 10^9/l; μ, µ and u become u; 个, cells, spaces and case do not matter; HPF is HP.
func normUnit(k *key, s string) {
	k.n, k.over = 0, false
	// Fold first into a small rune buffer so the exponent forms can be read with look-ahead.
	var rs [64]rune
	n := 0
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		switch r {
		case ' ', '\t', 0xA0, 0x3000:
			continue
		case 'µ', 'μ':
			r = 'u'
		case '×', '✕', '⨯':
			r = 'x'
		case '秒':
			r = 's'
		case '‐', '‑', '–', '—', '−':
			r = '-'
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		if n == len(rs) {
			k.over = true
			return
		}
		rs[n] = r
		n++
	}
	u := rs[:n]
	// A leading multiplication sign before a power of ten says nothing.
	if len(u) >= 3 && (u[0] == 'x' || u[0] == '*') && u[1] == '1' && u[2] == '0' {
		u = u[1:]
	}
	if hasPrefix(u, "cells") {
		u = u[5:]
	}
	for i := 0; i < len(u); i++ {
		r := u[i]
		if r == '1' && i+1 < len(u) && u[i+1] == '0' && (i == 0 || !isDigit(u[i-1])) {
			// 10^9, 10*9, 10**9, 10e9, 10⁹
			j := i + 2
			switch {
			case j < len(u) && u[j] == '^':
				j++
			case j+1 < len(u) && u[j] == '*' && u[j+1] == '*':
				j += 2
			case j < len(u) && (u[j] == '*' || u[j] == 'e'):
				j++
			}
			if j < len(u) && (isDigit(u[j]) || superDigit(u[j]) >= 0) {
				k.add('1')
				k.add('0')
				k.add('^')
				for j < len(u) && (isDigit(u[j]) || superDigit(u[j]) >= 0) {
					if d := superDigit(u[j]); d >= 0 {
						k.add('0' + d)
					} else {
						k.add(u[j])
					}
					j++
				}
				i = j - 1
				continue
			}
		}
		if d := superDigit(r); d >= 0 {
			r = '0' + d
		}
		if r == '^' { // m^2 is m²; 10^9 was read above
			continue
		}
		k.add(r)
	}
	// 个/HP is /HP; 个/μL stays itself (urine analysers print it, blood counts do not).
	if bytes.HasPrefix(k.bytes(), []byte("个/hp")) || bytes.HasPrefix(k.bytes(), []byte("个/lp")) ||
		bytes.HasPrefix(k.bytes(), []byte("個/hp")) || bytes.HasPrefix(k.bytes(), []byte("個/lp")) {
		k.n = copy(k.b[:], k.b[len("个"):k.n])
	}
	b := k.bytes()
	// hpf → hp, lpf → lp (high and low power field)
	if n := len(b); n >= 3 && b[n-1] == 'f' && b[n-2] == 'p' && (b[n-3] == 'h' || b[n-3] == 'l') {
		k.n--
	}
	switch string(k.bytes()) {
	case "", "-", "/", "无", "1", "ratio", "比值":
		k.n = copy(k.b[:], "1")
	}
}

// SameUnit reports whether two printed units are one unit written two ways, as the lexicon
// matches units: ×10^9/L, 10*9/L, 10E9/L and 10⁹/L are one; μmol/L and umol/l are one. A unit too
// long to normalise is the same only as itself.
func SameUnit(a, b string) bool {
	if a == b {
		return true
	}
	var ka, kb key
	normUnit(&ka, a)
	normUnit(&kb, b)
	return !ka.over && !kb.over && bytes.Equal(ka.bytes(), kb.bytes())
}

// UnitKey is a printed unit as SameUnit compares it: two units are the same exactly when their
// keys are equal. A unit too long to normalise is its own key, as written.
func UnitKey(u string) string {
	var k key
	normUnit(&k, u)
	if k.over {
		return "\x00" + u
	}
	return string(k.bytes())
}

func hasPrefix(u []rune, p string) bool {
	i := 0
	for _, r := range p {
		if i >= len(u) || u[i] != r {
			return false
		}
		i++
	}
	return true
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func superDigit(r rune) rune {
	switch r {
	case '⁰':
		return 0
	case '¹':
		return 1
	case '²':
		return 2
	case '³':
		return 3
	case '⁴', '⁵', '⁶', '⁷', '⁸', '⁹':
		return r - '⁴' + 4
	}
	return -1
}
