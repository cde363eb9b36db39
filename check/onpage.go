package check

import (
	"context"
	"image"
	"index/suffixarray"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/shopspring/decimal"
)

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
//
// Its work is linear in the page's words and the draft's numbers: a page's numbers are indexed
// by value, and a lookup walks at most maxWalk places of one and, on a page of up to walkWords
// words, its words; a longer page's words are indexed too (by text, the words holding a name by
// a suffix array, the numbers across the lines). See printed.work.
func OnPage(d *schema.OcrDraft, text [][]intake.Word) ([]schema.Warning, []schema.Evidence) {
	ws, ev, _, _ := onPage(nil, d, text)
	return ws, ev
}

// OnPageContext is OnPage, stopping when ctx ends: then it returns ctx's error and nothing
// else (a draft looked for in part must not pass for looked for).
func OnPageContext(ctx context.Context, d *schema.OcrDraft, text [][]intake.Word) ([]schema.Warning, []schema.Evidence, error) {
	ws, ev, _, err := onPage(ctx, d, text)
	return ws, ev, err
}

// onPage is OnPage; work is what its pages counted (printed.work), for the tests.
func onPage(ctx context.Context, d *schema.OcrDraft, text [][]intake.Word) (ws []schema.Warning, ev []schema.Evidence, work int, err error) {
	if d == nil {
		return nil, nil, 0, nil
	}
	// The numbers not found, made warnings at the end for those listed (maxListed).
	type miss struct {
		i      int
		field  string
		v      *schema.Decimal
		reason string
	}
	var out []miss
	pages := make([]*printed, len(text))
	defer func() {
		for _, p := range pages {
			if p != nil {
				work += p.work
			}
		}
	}()
	for i := range d.Indicators {
		if ctx != nil && i%256 == 0 && ctx.Err() != nil {
			return nil, nil, 0, ctx.Err()
		}
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
			p.looked++
			name := trimName(ind.ItemName)
			at, found := p.find(*f.v, name)
			reason := "missing"
			if found && f.name == "valueNum" && p.offRow(*f.v, name) {
				found, reason = false, "offRow"
			}
			if !found {
				out = append(out, miss{i, f.name, f.v, reason})
				if reason == "offRow" {
					p.found++ // printed, so the page's text layer does hold its digits
				}
				continue
			}
			p.found++
			if !at.Empty() {
				ev = append(ev, schema.Evidence{Path: "indicators[" + strconv.Itoa(i) + "]." + f.name, Page: *ind.Page,
					Box: schema.Box{X: at.Min.X, Y: at.Min.Y, W: at.Dx(), H: at.Dy()}, Source: schema.SourceTextLayer})
			}
		}
	}
	// A page whose text layer prints no number, or none of at least three of the draft's, does
	// not hold its digits as text (a font without a Unicode map, an OCR layer of another scan):
	// its warnings would all be false alarms, so it is not judged.
	// At most maxListed are listed, the rest counted in one more, as Run does.
	var kept []schema.Warning
	over := 0
	for _, m := range out {
		ind := &d.Indicators[m.i]
		if p := pages[*ind.Page-1]; len(p.seen) == 0 || p.found == 0 && p.looked >= unreadableAt {
			continue
		}
		if len(kept) == maxListed {
			over++
			continue
		}
		path := "indicators[" + strconv.Itoa(m.i) + "]." + m.field
		params := map[string]string{"itemName": ind.ItemName, "value": m.v.String(), "page": strconv.Itoa(*ind.Page)}
		kept = append(kept, msg.New(schema.ValueNotOnPage, m.reason, &path, ind.Page, params))
	}
	if over > 0 {
		kept = append(kept, msg.New(schema.ValueNotOnPage, "more", nil, nil, map[string]string{"count": strconv.Itoa(over)}))
	}
	return kept, ev, 0, nil
}

// unreadableAt is how many numbers of a page must all be missing from its text layer for the
// layer to be taken as not holding the page's digits.
const unreadableAt = 3

// printed is the numbers of one page, by value.
type printed struct {
	words []intake.Word
	at    map[numKey]chain // value → its places
	seen  []place
	// names is what nameAt found per name; texts indexes the words by text, and held (built on
	// first use) the words' texts for the names that only a word holds.
	names map[string]nameAt
	texts map[string]wordAt
	held  *suffixarray.Index
	joint []int // held's text is the words' joined by NUL; joint[i] is where word i starts
	// nums are the words that are plain numbers (plainNumber), by where they start across the
	// line (top edge on a page across, left edge down), and numsReach the tallest (widest) one.
	nums      []image.Rectangle
	numsReach int
	// work counts places walked, words indexed and looked at: linear in the page and the draft.
	work int
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

// chain is a number's places: the first and the last (where the next is added), and how many.
type chain struct{ first, last, n int }

// maxWalk bounds the places of one number walked to find the one on a name's line: a number
// printed more often on one page (a page of zeros) has no certain place there, and a row of it
// is not judged off its line. Real pages print a number a few dozen times at most.
const maxWalk = 256

// nameAt is the box of a row's name on the page, when it is printed once (ok), and whether
// numbers are printed on its line apart from it (numbers; set with looked).
type nameAt struct {
	box             image.Rectangle
	ok              bool
	looked, numbers bool
}

// wordAt is a word's text on the page: the box of the last word of it, and how many there are.
type wordAt struct {
	box image.Rectangle
	n   int
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
	p.work++
	if c, ok := p.at[k]; ok {
		p.seen[c.last].next = n
		p.at[k] = chain{c.first, n, c.n + 1}
		return
	}
	p.at[k] = chain{n, n, 1}
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
	p := &printed{words: words, at: make(map[numKey]chain, 2*len(words)), seen: make([]place, 0, 2*len(words))}
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
	if len(words) > walkWords {
		p.index()
	}
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

// walkWords is the most words of a page that each look-up walks (a name's word, the numbers on
// its line): for a report's page of a few hundred words that costs less than indexing them, and
// it bounds the walk at a constant. A page of more is indexed (index).
const walkWords = 256

// index indexes the page's words for nameBox and offRow: by text, and the plain numbers by
// where they start across the lines.
func (p *printed) index() {
	p.names, p.texts = map[string]nameAt{}, make(map[string]wordAt, len(p.words))
	for _, w := range p.words {
		p.work++
		t := p.texts[w.Text]
		p.texts[w.Text] = wordAt{w.Box, t.n + 1}
		if plainNumber(w.Text) {
			p.nums = append(p.nums, w.Box)
			p.numsReach = max(p.numsReach, p.extent(w.Box))
		}
	}
	slices.SortFunc(p.nums, func(a, b image.Rectangle) int { return p.start(a) - p.start(b) })
}

// find reports whether v is printed on the page and, when its place is certain, where: the one
// place it is printed, or the one place on the line of the row's name (to its right or left).
func (p *printed) find(v schema.Decimal, name string) (image.Rectangle, bool) {
	c, ok := p.at[keyOf(v)]
	if !ok {
		return image.Rectangle{}, false
	}
	if c.n == 1 {
		return p.seen[c.first].box, true
	}
	line, ok := p.nameBox(name)
	if !ok || c.n > maxWalk {
		return image.Rectangle{}, true
	}
	var at image.Rectangle
	n := 0
	for i := c.first; i >= 0 && n < 2; i = p.seen[i].next {
		p.work++
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
	if p.texts == nil { // a page of at most walkWords words
		p.work += len(p.words)
		for _, w := range p.words {
			if !w.Box.Overlaps(line) && p.sameLine(line, w.Box) && plainNumber(w.Text) {
				return true
			}
		}
		return false
	}
	at := p.names[name]
	if !at.looked {
		at.looked, at.numbers = true, p.numbersBeside(line)
		p.names[name] = at
	}
	return at.numbers
}

// numbersBeside reports whether a plain number is printed on the line of the name at, apart
// from it. It looks at the numbers that start within the tallest number's reach of the line
// (p.nums is sorted by start), at most maxWalk of them: a page that prints more numbers about
// one line is not judged (false: the lenient answer).
func (p *printed) numbersBeside(at image.Rectangle) bool {
	lo := p.start(at) - p.numsReach
	i, _ := slices.BinarySearchFunc(p.nums, lo, func(b image.Rectangle, t int) int { return p.start(b) - t })
	for k := 0; i < len(p.nums) && k < maxWalk; i, k = i+1, k+1 {
		p.work++
		b := p.nums[i]
		if p.start(b) >= p.start(at)+p.extent(at) {
			break
		}
		if !b.Overlaps(at) && p.sameLine(at, b) {
			return true
		}
	}
	return false
}

// start is where a box starts across the page's lines (its top on a page across, its left
// edge on a turned one), and extent how far it reaches that way.
func (p *printed) start(b image.Rectangle) int {
	if p.across {
		return b.Min.Y
	}
	return b.Min.X
}

func (p *printed) extent(b image.Rectangle) int {
	if p.across {
		return b.Dy()
	}
	return b.Dx()
}

// onLine reports whether the number k is printed on the line of at (in its word too:
// 白细胞计数:6.12).
//
// A number printed more than maxWalk times on the page counts as on the line (the row is not
// judged: the lenient answer).
func (p *printed) onLine(k numKey, at image.Rectangle) bool {
	c, ok := p.at[k]
	if !ok {
		return false
	}
	if c.n > maxWalk {
		return true
	}
	for i := c.first; i >= 0; i = p.seen[i].next {
		p.work++
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
// (白细胞计数(WBC)). A page of at most walkWords words is walked; on a longer one it is found
// once per name: the words by their text, then the places the name is printed inside a word,
// from a suffix array of the page's words. A name printed inside words more than maxWalk times
// is in more than one word (or a word of it repeated, no name): it has no certain place.
func (p *printed) nameBox(name string) (image.Rectangle, bool) {
	if name == "" {
		return image.Rectangle{}, false
	}
	if p.texts == nil { // a page of at most walkWords words
		p.work += len(p.words)
		return walkNameBox(p.words, name)
	}
	if at, ok := p.names[name]; ok {
		return at.box, at.ok
	}
	var at nameAt
	if w, ok := p.texts[name]; ok {
		at = nameAt{box: w.box, ok: w.n == 1}
	} else if !strings.Contains(name, "\x00") {
		if p.held == nil {
			var b []byte
			p.joint = make([]int, len(p.words))
			for i, w := range p.words {
				p.joint[i] = len(b)
				b = append(append(b, w.Text...), 0)
			}
			p.work += len(b)
			p.held = suffixarray.New(b)
		}
		offs := p.held.Lookup([]byte(name), maxWalk+1)
		p.work += len(offs)
		holder := -1
		at.ok = len(offs) > 0 && len(offs) <= maxWalk
		for _, o := range offs {
			w, found := slices.BinarySearch(p.joint, o)
			if !found {
				w-- // o is inside word w
			}
			if holder >= 0 && w != holder {
				at.ok = false
				break
			}
			holder = w
		}
		if holder >= 0 {
			at.box = p.words[holder].Box
		}
	}
	p.names[name] = at
	return at.box, at.ok
}

// walkNameBox is nameBox by a walk of the words.
func walkNameBox(words []intake.Word, name string) (image.Rectangle, bool) {
	var is, holds image.Rectangle
	nIs, nHolds := 0, 0
	for _, w := range words {
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
