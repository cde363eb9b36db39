package check

import (
	"image"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/shopspring/decimal"
)

// Evidence is where a number of the draft is printed on its page, for a confirm screen to
// highlight it.
type Evidence struct {
	Path string `json:"path" desc:"The field whose number was found, as in a warning's path: indicators[3].valueNum, refLow or refHigh."`
	Page int    `json:"page" desc:"The 1-based page it is printed on."`
	Box  Box    `json:"box" desc:"Where it is printed, in the pixels of that page's image as sent to the model."`
}

// Box is a rectangle in an image's pixels, x to the right and y down from its top left corner.
type Box struct {
	X int `json:"x" desc:"The left edge, in pixels from the image's left."`
	Y int `json:"y" desc:"The top edge, in pixels from the image's top."`
	W int `json:"w" desc:"The width in pixels."`
	H int `json:"h" desc:"The height in pixels."`
}

// OnPage looks for every valueNum, refLow and refHigh of d among the numbers printed on its
// row's page, text[page-1] (a PDF's text layer; nil for a page that has none, which is not
// checked): a number that is not printed there is a value_not_on_page warning, never a change,
// unless none of the page's numbers is (see unreadableAt).
// A number found is evidence, with its box when its place is certain (printed once on the page,
// or once on its row's line). Paths index d.Indicators.
//
// It is not a row of Rules: it judges the draft against the page rather than the lexicon, and
// only extract has the page.
//
// Numbers compare as decimals (5.2 is the printed 5.20), and every form a report prints a
// number in counts: inside a word (5.86↑, <0.5, 3.5-9.5 gives both bounds), signed (-2.1, −2.1,
// or a minus printed apart), with thousands commas (1,020 is 1020, and 1.020 read with a decimal
// comma: which one is meant is value_implausible's to say), full-width, or in exponent form
// (1.2e3, 6.5×10^9 and 6.5×10⁹ also give 1200 and 6500000000). Being found is lenient on
// purpose: a false alarm costs the person's trust, and a misread digit is still a miss.
func OnPage(d *schema.OcrDraft, text [][]intake.Word) ([]schema.Warning, []Evidence) {
	if d == nil {
		return nil, nil
	}
	var out []schema.Warning
	var ev []Evidence
	pages := make([]*printed, len(text))
	for i := range d.Indicators {
		ind := &d.Indicators[i]
		if ind.Page == nil || *ind.Page < 1 || *ind.Page > len(text) || text[*ind.Page-1] == nil {
			continue
		}
		p := pages[*ind.Page-1]
		if p == nil {
			p = read(text[*ind.Page-1])
			pages[*ind.Page-1] = p
		}
		for _, f := range [...]struct {
			name string
			v    *schema.Decimal
		}{{"valueNum", ind.ValueNum}, {"refLow", ind.RefLow}, {"refHigh", ind.RefHigh}} {
			if f.v == nil {
				continue
			}
			path := "indicators[" + strconv.Itoa(i) + "]." + f.name
			p.looked++
			name := trimName(ind.ItemName)
			at, found := p.find(*f.v, name)
			reason := "missing"
			if found && f.name == "valueNum" && p.offRow(*f.v, name) {
				found, reason = false, "offRow"
			}
			if !found {
				params := map[string]string{"itemName": ind.ItemName, "value": f.v.String(), "page": strconv.Itoa(*ind.Page)}
				out = append(out, schema.Warning{Code: schema.ValueNotOnPage, Path: &path, Page: ind.Page,
					Message: Message(schema.ValueNotOnPage, reason, params), Params: params, Reason: reason})
				if reason == "offRow" {
					p.found++ // printed, so the page's text layer does hold its digits
				}
				continue
			}
			p.found++
			if !at.Empty() {
				ev = append(ev, Evidence{Path: path, Page: *ind.Page,
					Box: Box{X: at.Min.X, Y: at.Min.Y, W: at.Dx(), H: at.Dy()}})
			}
		}
	}
	// A page whose text layer prints no number, or none of at least three of the draft's, does
	// not hold its digits as text (a font without a Unicode map, an OCR layer of another scan):
	// its warnings would all be false alarms, so it is not judged.
	kept := out[:0]
	for _, w := range out {
		if p := pages[*w.Page-1]; len(p.seen) > 0 && (p.found > 0 || p.looked < unreadableAt) {
			kept = append(kept, w)
		}
	}
	return kept, ev
}

// unreadableAt is how many numbers of a page must all be missing from its text layer for the
// layer to be taken as not holding the page's digits.
const unreadableAt = 3

// printed is the numbers of one page, by value.
type printed struct {
	words []intake.Word
	at    map[numKey]int // value → first of its places
	seen  []place
	// looked and found count the draft's numbers on this page, and those printed on it.
	looked, found int
	across        bool // the page's lines run across it (else down: a turned page)
}

// numKey is a number as compared: its canonical digits without trailing fractional zeros, and
// whether it is negative.
type numKey struct {
	neg bool
	lit string
}

// place is one place a number is printed: its box, and the next place of the same number (-1).
type place struct {
	box  image.Rectangle
	next int
}

func keyOf(d schema.Decimal) numKey {
	s := d.String()
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return numKey{neg, s}
}

func (p *printed) add(d schema.Decimal, neg bool, box image.Rectangle) {
	k := keyOf(d)
	if neg {
		if k.neg || k.lit == "0" {
			return
		}
		k.neg = true
	}
	p.seen = append(p.seen, place{box: box, next: -1})
	n := len(p.seen) - 1
	if first, ok := p.at[k]; ok {
		for p.seen[first].next >= 0 {
			first = p.seen[first].next
		}
		p.seen[first].next = n
		return
	}
	p.at[k] = n
}

// addLit adds the number literal s (digits and at most one dot), and its negative when it is
// printed with a sign.
func (p *printed) addLit(s string, signed bool, box image.Rectangle) {
	d, err := schema.ParseDecimal(s)
	if err != nil {
		return
	}
	p.add(d, false, box)
	if signed {
		p.add(d, true, box)
	}
}

// read finds the numbers of a text layer.
func read(words []intake.Word) *printed {
	p := &printed{words: words, at: make(map[numKey]int, 2*len(words)), seen: make([]place, 0, 2*len(words))}
	wide, tall := 0, 0
	for _, w := range words {
		if utf8.RuneCountInString(w.Text) >= 3 {
			if w.Box.Dx() >= w.Box.Dy() {
				wide++
			} else {
				tall++
			}
		}
	}
	p.across = wide >= tall
	for wi, w := range words {
		s := halfWidth(w.Text)
		// A minus printed as a word of its own signs the number that starts the next word.
		signNext := wi > 0 && isMinusWord(halfWidth(words[wi-1].Text))
		for i := 0; i < len(s); {
			c := s[i]
			// A number starts at a digit, or at a point before one that no digit precedes (.5).
			if !digit(c) && !(c == '.' && i+1 < len(s) && digit(s[i+1]) && (i == 0 || !digit(s[i-1]))) {
				i++
				continue
			}
			signed := i == 0 && signNext || i > 0 && minusBefore(s, i)
			j := digits(s, i+1)
			if c != '.' {
				// Thousands groups or a decimal comma (1,020; 12,345.6), then a fraction.
				for j+1 < len(s) && s[j] == ',' && digit(s[j+1]) {
					j = digits(s, j+1)
				}
				if j+1 < len(s) && s[j] == '.' && digit(s[j+1]) {
					j = digits(s, j+1)
				}
			}
			run := s[i:j]
			if commas := strings.Count(run, ","); commas == 0 {
				p.addLit(run, signed, w.Box)
			} else {
				p.addLit(strings.ReplaceAll(run, ",", ""), signed, w.Box)
				if commas == 1 && strings.IndexByte(run, '.') < 0 {
					p.addLit(strings.Replace(run, ",", ".", 1), signed, w.Box)
				}
				for _, piece := range strings.Split(run, ",") {
					p.addLit(piece, signed, w.Box)
				}
			}
			if e, n, ok := exponent(s[j:]); ok {
				if m, err := decimal.NewFromString(strings.ReplaceAll(run, ",", "")); err == nil {
					if d, err := schema.ParseDecimal(m.Shift(int32(e)).String()); err == nil {
						p.add(d, false, w.Box)
						if signed {
							p.add(d, true, w.Box)
						}
					}
				}
				j += n
			}
			i = j
		}
	}
	return p
}

// find reports whether v is printed on the page and, when its place is certain, where: the one
// place it is printed, or the one place on the line of the row's name (to its right or left).
func (p *printed) find(v schema.Decimal, name string) (image.Rectangle, bool) {
	first, ok := p.at[keyOf(v)]
	if !ok {
		return image.Rectangle{}, false
	}
	if p.seen[first].next < 0 {
		return p.seen[first].box, true
	}
	line, ok := p.nameBox(name)
	if !ok {
		return image.Rectangle{}, true
	}
	var at image.Rectangle
	n := 0
	for i := first; i >= 0; i = p.seen[i].next {
		if b := p.seen[i].box; p.sameLine(line, b) && b != at {
			at, n = b, n+1
		}
	}
	if n != 1 {
		return image.Rectangle{}, true
	}
	return at, true
}

// offRow reports whether a row's value v, printed on the page, is printed only off the row's
// line although the line holds numbers: the row's name is printed once, numbers are printed on
// its line (words that are numbers, not a unit's digits nor an age), and v is not one of them.
// A model that reads the row below's value (a shifted row), or a number of the header (an age,
// a date), is then caught; a layout that puts values on a line of their own is not judged.
// Only valueNum is held to it: a range is often printed on the line below its row.
func (p *printed) offRow(v schema.Decimal, name string) bool {
	line, ok := p.nameBox(name)
	if !ok || p.onLine(keyOf(v), line) {
		return false
	}
	for _, w := range p.words {
		if !w.Box.Overlaps(line) && p.sameLine(line, w.Box) && plainNumber(w.Text) {
			return true
		}
	}
	return false
}

// onLine reports whether the number k is printed on the line of at (in its word too:
// 白细胞计数:6.12).
func (p *printed) onLine(k numKey, at image.Rectangle) bool {
	first, ok := p.at[k]
	if !ok {
		return false
	}
	for i := first; i >= 0; i = p.seen[i].next {
		if p.sameLine(at, p.seen[i].box) {
			return true
		}
	}
	return false
}

// plainNumber reports whether a word is a number as a result or a range is printed (6.12↑,
// 3.50-9.50, <5.2), not a word with letters or a unit's (10^9/L, 45岁, HbA1c).
func plainNumber(s string) bool {
	digit := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || r == '/' || r == '^':
			return false
		case unicode.IsDigit(r):
			digit = true
		}
	}
	return digit
}

// nameBox is the box of the one word that is the row's name, or else of the one that holds it
// (白细胞计数(WBC)).
func (p *printed) nameBox(name string) (image.Rectangle, bool) {
	if name == "" {
		return image.Rectangle{}, false
	}
	var is, holds image.Rectangle
	nIs, nHolds := 0, 0
	for _, w := range p.words {
		switch {
		case w.Text == name:
			is, nIs = w.Box, nIs+1
		case strings.Contains(w.Text, name):
			holds, nHolds = w.Box, nHolds+1
		}
	}
	if nIs > 0 {
		return is, nIs == 1
	}
	return holds, nHolds == 1
}

// sameLine reports whether b is on the line of the name at: across the page when the page's
// text runs across (most of its longer words are wider than tall), down it on a turned page.
// The page decides, not the name: a short name (K, Cr) is taller than wide either way.
func (p *printed) sameLine(at, b image.Rectangle) bool {
	if p.across {
		return min(at.Max.Y, b.Max.Y) > max(at.Min.Y, b.Min.Y)
	}
	return min(at.Max.X, b.Max.X) > max(at.Min.X, b.Min.X)
}

// exponent reads the power of ten printed after a number: e3, E+03, ×10^9, x10^-3, *10⁹. It
// returns the exponent and the bytes it took.
func exponent(s string) (int, int, bool) {
	i := 0
	switch {
	case strings.HasPrefix(s, "e"), strings.HasPrefix(s, "E"):
		i = 1
	default:
		for _, times := range [...]string{"×", "x", "X", "*", "·", "✕"} {
			if strings.HasPrefix(s, times) {
				i = len(times)
				break
			}
		}
		if i == 0 || !strings.HasPrefix(s[i:], "10") {
			return 0, 0, false
		}
		i += 2
		if strings.HasPrefix(s[i:], "^") {
			i++
		} else if strings.HasPrefix(s[i:], "**") {
			i += 2
		}
	}
	neg := false
	switch {
	case strings.HasPrefix(s[i:], "-"), strings.HasPrefix(s[i:], "⁻"), strings.HasPrefix(s[i:], "−"):
		neg = true
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	case strings.HasPrefix(s[i:], "+"), strings.HasPrefix(s[i:], "⁺"):
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	e, digits := 0, 0
	for i < len(s) && digits < 2 {
		r, size := utf8.DecodeRuneInString(s[i:])
		d := superDigit(r)
		if d < 0 {
			break
		}
		e, digits, i = e*10+d, digits+1, i+size
	}
	if digits == 0 || i < len(s) && digit(s[i]) {
		return 0, 0, false
	}
	if neg {
		e = -e
	}
	return e, i, true
}

// superDigit is the value of an ASCII or superscript digit, or -1.
func superDigit(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r == '¹':
		return 1
	case r == '²':
		return 2
	case r == '³':
		return 3
	case r == '⁰' || r >= '⁴' && r <= '⁹':
		return int(r - '⁰')
	}
	return -1
}

// digits returns the end of the digits of s from i.
func digits(s string, i int) int {
	for i < len(s) && digit(s[i]) {
		i++
	}
	return i
}

func digit(c byte) bool { return c >= '0' && c <= '9' }

// minusBefore reports whether the number at s[i] is printed with a minus sign: a minus that is
// not a dash between two numbers (3.5-9.5) or a date's (2024-01-05).
func minusBefore(s string, i int) bool {
	for _, m := range [...]string{"-", "−"} {
		if strings.HasSuffix(s[:i], m) {
			k := i - len(m)
			return k == 0 || !digit(s[k-1]) && s[k-1] != '.'
		}
	}
	return false
}

func isMinusWord(s string) bool { return s == "-" || s == "−" }

// halfWidth is s with full-width digits, point and minus as ASCII, copied only when it
// has some.
func halfWidth(s string) string {
	if !strings.Contains(s, "\xef\xbc") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= '０' && r <= '９':
			b.WriteByte(byte('0' + r - '０'))
		case r == '．':
			b.WriteByte('.')
		case r == '－':
			b.WriteByte('-')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
