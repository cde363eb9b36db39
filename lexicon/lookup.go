package lexicon

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Qualifiers printed before or after a name that do not change the analyte. A specimen prefix
// that does (尿, 粪) is in hintPrefixes instead.
var (
	prefixes = []string{"血清", "血浆", "全血", "血液", "静脉血", "外周血", "serum", "plasma", "血",
		// US specimen qualifiers, read first from "pCO2, Arterial" and "Sodium, Whole Blood".
		"wholeblood", "arterial", "venous", "capillary", "random",
		// A value the lab computed is the same item (计算LDL-C, Calc. LDL); the name still says so
		// for the checks that need it (the calculated LDL-C relation reads the printed name).
		"计算", "估算", "calculated", "calc.", "calc"}
	suffixes = []string{"测定", "检测", "检查", "定量", "定性", "半定量", "含量", "水平", "浓度", "计算值", "值",
		"calculated", "calc.", "calc"}
)

// qualFirst and qualLast hold the first bytes of prefixes and hint prefixes and the last bytes
// of suffixes, so that a name without any is not compared with each.
var qualFirst, qualLast = func() (f, l [256]bool) {
	for _, p := range prefixes {
		f[p[0]] = true
	}
	for _, h := range hintPrefixes {
		f[h.prefix[0]] = true
	}
	for _, s := range suffixes {
		l[s[len(s)-1]] = true
	}
	return f, l
}()

// hintPrefixes name a specimen: what follows is looked up in that section only, so that 尿肌酐
// never becomes serum creatinine.
var hintPrefixes = []struct{ prefix, section string }{
	{"尿液", "urine"}, {"尿", "urine"}, {"urine", "urine"}, {"randomurine", "urine"}, {"spoturine", "urine"}, {"u", "urine"},
	{"粪便", "stool"}, {"大便", "stool"}, {"粪", "stool"}, {"stool", "stool"},
}

// Lookup finds the analyte a printed name means, with no group or unit to tell same-named
// items apart (红细胞 is then the blood count). See Match.
func (l *Lexicon) Lookup(name string) (*Analyte, bool) { return l.Match("", name, "") }

// LookupIn is Match without a unit.
func (l *Lexicon) LookupIn(group, name string) (*Analyte, bool) { return l.Match(group, name, "") }

// Match finds the analyte a printed name means, under a printed group (itemGroup) and with a
// printed unit, either "" when unknown. It tries the whole name, then the parts outside and
// inside brackets (ALT(谷丙转氨酶), 谷丙转氨酶（ALT）, Total Bilirubin 总胆红素), each also without a
// leading qualifier such as 血清 or a trailing one such as 测定; when parts disagree, the longest
// part that matches wins (TG(甲状腺球蛋白) is thyroglobulin). A name means a panel's own item
// only under that panel's group, with a specimen prefix (尿红细胞) or part (红细胞(尿)); otherwise
// the common meaning wins. The unit only chooses between analytes that share a name (PCT in %
// is the plateletcrit, in ng/mL procalcitonin). It does not allocate.
func (l *Lexicon) Match(group, name, unit string) (*Analyte, bool) {
	a, _, ok := l.Find(group, name, unit)
	return a, ok
}

// Find is Match that also returns the analyte's unit printed as unit (Analyte.Unit), or nil
// when the analyte does not know it: the one call a check makes per row. Answers are
// remembered, so a name seen before costs a hash and a comparison.
func (l *Lexicon) Find(group, name, unit string) (*Analyte, *Unit, bool) {
	if len(name) > maxInput {
		return nil, nil, false
	}
	if len(group) > maxInput {
		group = ""
	}
	if len(unit) > maxInput {
		unit = ""
	}
	if l.memo != nil {
		if a, u, ok := l.memo.get(group, name, unit); ok {
			return a, u, a != nil
		}
	}
	a, ok := l.compute(group, name, unit)
	var u *Unit
	if ok {
		u, _ = a.Unit(unit)
	}
	if l.memo != nil {
		l.memo.put(group, name, unit, a, u)
	}
	return a, u, ok
}

// compute is Match without the memo.
func (l *Lexicon) compute(group, name, unit string) (*Analyte, bool) {
	a, ok := l.match1(group, name, unit)
	if !ok {
		if rest, numbered := unnumber(name); numbered {
			return l.match1(group, rest, unit)
		}
	}
	return a, ok
}

// unnumber strips a row number printed before a name: "1.白细胞", "１２、血糖", "3) ALT".
func unnumber(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t\u3000")
	digits, i := 0, 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !(r >= '0' && r <= '9') && !(r >= '０' && r <= '９') {
			break
		}
		digits++
		i += n
	}
	if digits == 0 || digits > 3 || i == len(s) {
		return s, false
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch r {
	case '.', '、', ')', '．', '）', ' ', '\u3000':
	default:
		return s, false
	}
	rest := s[i+n:]
	if rest == "" {
		return s, false
	}
	if c, _ := utf8.DecodeRuneInString(rest); (c >= '0' && c <= '9') || (c >= '０' && c <= '９') {
		return s, false // a decimal, not a row number
	}
	return rest, true
}

// maxInput bounds the bytes of a name, group or unit that is read at all: longer text cannot
// fold into a key that fits.
const maxInput = 4 * maxKey

// maxParts bounds the bracketed parts of a name that are tried; more never occur in a name.
const maxParts = 3

// split is a printed name folded once into the forms Match tries.
type split struct {
	whole   key // everything, brackets dropped
	outside key // outside brackets
	in      [maxParts]key
	nin     int
	bracket bool
	space   bool
	// Outside brackets, runs of space-separated words that are all Han or all not:
	// "Total Bilirubin 总胆红素" → totalbilirubin, 总胆红素.
	runs    [maxParts]key
	nrun    int
	word    key
	wordHan bool
	runHan  bool
	// cut is where outside is cut to be read qualifier first: at its one comma ("Glucose,
	// Fasting" → fasting|glucose), else at its last space ("Bilirubin Direct" → direct|bilirubin);
	// 0 for none.
	cut, commas, lastSpace int
	sw                     key // outside swapped at cut
}

// swapped writes outside with its two sides of cut exchanged into k, or reports false when
// it has no cut.
func (p *split) swapped(k *key) bool {
	cut := p.lastSpace
	switch {
	case p.commas == 1:
		cut = p.cut
	case p.commas > 1:
		return false
	}
	o := p.outside.bytes()
	if p.outside.over || cut <= 0 || cut >= len(o) {
		return false
	}
	k.n, k.over = 0, false
	k.addBytes(o[cut:])
	k.addBytes(o[:cut])
	return !k.over
}

// endWord adds the word just read to the current run, or starts a new run when its script
// differs.
func (p *split) endWord() {
	if p.word.n == 0 {
		return
	}
	if p.nrun == 0 || p.wordHan != p.runHan {
		if p.nrun == maxParts {
			p.word.n = 0
			return
		}
		p.runs[p.nrun].n, p.runs[p.nrun].over = 0, false
		p.nrun++
		p.runHan = p.wordHan
	}
	p.runs[p.nrun-1].addBytes(p.word.bytes())
	p.word.n, p.word.over, p.wordHan = 0, false, false
}

// isHan reports a CJK ideograph, cheaply.
func isHan(r rune) bool {
	return (r >= 0x2E80 && r <= 0x9FFF) || (r >= 0xF900 && r <= 0xFAFF) || (r >= 0x20000 && r <= 0x3FFFF)
}

func (p *split) read(s string) {
	p.whole.n, p.whole.over, p.outside.n, p.outside.over = 0, false, 0, false
	p.nin, p.bracket, p.space = 0, false, false
	p.cut, p.commas, p.lastSpace = 0, 0, 0
	p.nrun, p.word.n, p.word.over, p.wordHan = 0, 0, false, false
	depth := 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		raw := s[i : i+size]
		i += size
		switch {
		case isOpen(r):
			p.bracket = true
			if depth == 0 && p.nin < maxParts {
				p.in[p.nin].n, p.in[p.nin].over = 0, false
				p.nin++
			}
			depth++
			continue
		case isClose(r):
			p.bracket = true
			if depth > 0 {
				depth--
			}
			continue
		case r == ' ' || r == '\t' || r == 0x3000 || r == 0xA0:
			p.space = true
			if depth == 0 {
				p.endWord()
				p.lastSpace = p.outside.n
			}
		case (r == ',' || r == '，') && depth == 0:
			p.commas++
			p.cut = p.outside.n
		}
		f := fold(r)
		if f < 0 {
			continue
		}
		var dst *key
		if depth == 0 {
			dst = &p.outside
			p.wordHan = p.wordHan || isHan(f)
		} else if p.nin > 0 && p.nin <= maxParts {
			dst = &p.in[p.nin-1]
		}
		if f == r && size > 1 { // unchanged: copy the bytes, do not encode again
			p.whole.addRaw(raw)
			if dst != nil {
				dst.addRaw(raw)
				if depth == 0 {
					p.word.addRaw(raw)
				}
			}
			continue
		}
		p.whole.add(f)
		if dst != nil {
			dst.add(f)
			if depth == 0 {
				p.word.add(f)
			}
		}
	}
	p.endWord()
}

func (l *Lexicon) match1(group, name, unit string) (*Analyte, bool) {
	sec := l.sectionIndex(group)
	u := lazyUnit{s: unit}
	if a := l.fast(sec, name, &u); a != nil {
		return a, true
	}
	return l.full(sec, name, &u)
}

// full is Match without the fast path.
func (l *Lexicon) full(sec int, name string, u *lazyUnit) (*Analyte, bool) {
	var p split
	p.read(name)
	if sec < 0 && p.nin > 0 {
		sec = l.hintFromParts(&p)
	}
	if a := l.find(sec, &p.whole, u); a != nil {
		return a, true
	}
	if !p.bracket && !p.space && p.commas == 0 {
		return nil, false
	}
	var best *Analyte
	bestLen := 0
	try := func(k *key) {
		if k.n > bestLen {
			if a := l.find(sec, k, u); a != nil {
				best, bestLen = a, k.n
			}
		}
	}
	if p.bracket {
		try(&p.outside)
		for i := 0; i < p.nin; i++ {
			try(&p.in[i])
		}
	}
	if p.space && p.nrun > 1 {
		for i := 0; i < p.nrun; i++ {
			try(&p.runs[i])
		}
	}
	// "Name, Qualifier" and "Name Qualifier", as US and UK reports print them: the qualifier
	// first is how the table writes them (Glucose, Fasting is Fasting glucose).
	if p.swapped(&p.sw) {
		try(&p.sw)
	}
	return best, best != nil
}

// fast answers the common cases without decoding a character: the whole name, or "X(Y)" /
// "X（Y）" where X and Y name the same analyte, each with only its ASCII folded. Such a string can
// equal a normalised name only if it is one already (every other character it holds folds to
// itself), so a hit is what the full way finds; anything else (nil) goes the full way.
func (l *Lexicon) fast(sec int, name string, u *lazyUnit) *Analyte {
	n := len(name)
	var open, inner int
	switch {
	case n > 2 && name[n-1] == ')':
		open, inner = strings.IndexByte(name, '('), 1
	case n > 6 && name[n-3:] == "）":
		open, inner = strings.Index(name, "（"), 3
	default:
		var k key
		asciiFold(&k, name)
		return l.match(sec, k.bytes(), u)
	}
	if open <= 0 || open+inner >= n-inner {
		return nil
	}
	var x, y, whole key
	asciiFold(&x, name[:open])
	asciiFold(&y, name[open+inner:n-inner])
	whole.addBytes(x.bytes())
	whole.addBytes(y.bytes())
	if x.over || y.over || whole.over {
		return nil
	}
	if a := l.match(sec, whole.bytes(), u); a != nil {
		return a
	}
	a := l.match(sec, x.bytes(), u)
	if a == nil || l.match(sec, y.bytes(), u) != a {
		return nil
	}
	return a
}

// asciiFold writes s with its ASCII folded as fold does and every other byte as it is.
func asciiFold(k *key, s string) {
	k.n, k.over = 0, false
	if len(s) > maxKey {
		k.over = true
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			k.b[k.n] = c
			k.n++
			continue
		}
		if f := fold(rune(c)); f >= 0 {
			k.b[k.n] = byte(f)
			k.n++
		}
	}
}

// lazyUnit normalises the printed unit only when two analytes share a name.
type lazyUnit struct {
	s    string
	k    key
	done bool
}

func (u *lazyUnit) key() *key {
	if !u.done {
		u.done = true
		if u.s != "" {
			normUnit(&u.k, u.s)
		}
	}
	return &u.k
}

// names maps a normalised name to the analytes it means: the default first, then those that
// share the name (written ~name in the table) and are told apart by unit.
type names map[string]cands

type cands struct {
	first *Analyte
	more  []*Analyte
}

// pick returns the candidate that knows unit u, or the default.
func (c cands) pick(lu *lazyUnit) *Analyte {
	if c.first == nil || len(c.more) == 0 || lu.s == "" {
		return c.first
	}
	u := lu.key()
	if u.over || c.first.hasUnit(u) {
		return c.first
	}
	for _, a := range c.more {
		if a.hasUnit(u) {
			return a
		}
	}
	return c.first
}

func (a *Analyte) hasUnit(u *key) bool {
	for i := range a.Units {
		if a.Units[i].norm == string(u.bytes()) {
			return true
		}
	}
	return false
}

// find looks a normalised name up in section sec (-1: none) and then everywhere, also without
// qualifiers.
func (l *Lexicon) find(sec int, k *key, u *lazyUnit) *Analyte {
	if k.over || k.n == 0 {
		return nil
	}
	b := k.bytes()
	if a := l.match(sec, b, u); a != nil {
		return a
	}
	if !qualFirst[b[0]] && !qualLast[b[len(b)-1]] {
		return nil
	}
	for _, p := range prefixes {
		if len(b) > len(p) && string(b[:len(p)]) == p {
			if a := l.match(sec, b[len(p):], u); a != nil {
				return a
			}
			if a := l.matchTrimmed(sec, b[len(p):], u); a != nil {
				return a
			}
		}
	}
	if a := l.matchTrimmed(sec, b, u); a != nil {
		return a
	}
	for _, h := range hintPrefixes {
		if len(b) > len(h.prefix) && string(b[:len(h.prefix)]) == h.prefix {
			hs := l.secIdx[h.section]
			rest := b[len(h.prefix):]
			if a := l.local[hs][string(rest)].pick(u); a != nil {
				return a
			}
			if a := l.global[string(rest)].pick(u); a != nil && a.Section == h.section {
				return a
			}
		}
	}
	return nil
}

// matchTrimmed tries b without each trailing qualifier.
func (l *Lexicon) matchTrimmed(sec int, b []byte, u *lazyUnit) *Analyte {
	for _, s := range suffixes {
		if len(b) > len(s) && string(b[len(b)-len(s):]) == s {
			if a := l.match(sec, b[:len(b)-len(s)], u); a != nil {
				return a
			}
		}
	}
	return nil
}

func (l *Lexicon) match(sec int, b []byte, u *lazyUnit) *Analyte {
	if sec >= 0 {
		if a := l.local[sec][string(b)].pick(u); a != nil {
			return a
		}
	}
	a := l.global[string(b)].pick(u)
	if a == nil || u.s == "" || sec >= 0 {
		return a
	}
	// No group, and the common meaning does not know the unit: a panel's own item of that
	// name that does wins (红细胞计数 in 个/μL is the urine sediment count).
	if k := u.key(); !k.over && !a.hasUnit(k) {
		for _, i := range l.withLocal {
			if b := l.local[i][string(b)].pick(u); b != nil && b.hasUnit(k) {
				return b
			}
		}
	}
	return a
}

// sectionIndex resolves a group name to a section, or -1.
func (l *Lexicon) sectionIndex(group string) int {
	if group == "" {
		return -1
	}
	if i, ok := l.secRaw[group]; ok {
		return i
	}
	var k key
	normName(&k, group)
	if k.over || k.n == 0 {
		return -1
	}
	if i, ok := l.secOf[string(k.bytes())]; ok {
		return i
	}
	if hasBracket(group) {
		normOutside(&k, group)
		if i, ok := l.secOf[string(k.bytes())]; ok {
			return i
		}
	}
	// Urine and stool panels go by many names (尿液分析, 尿沉渣定量, 粪便常规+潜血, Urine
	// Dipstick Screen, Faecal occult blood); a group that names the specimen and not blood is
	// that panel.
	b := k.bytes()
	switch {
	case bytes.Contains(b, []byte("尿")) && !bytes.Contains(b, []byte("血")) && !bytes.Contains(b, []byte("肾")),
		bytes.Contains(b, []byte("urin")) && !bytes.Contains(b, []byte("blood")):
		return l.secIdx["urine"]
	case bytes.Contains(b, []byte("粪")) || bytes.Contains(b, []byte("大便")),
		bytes.Contains(b, []byte("stool")) || bytes.Contains(b, []byte("faec")) || bytes.Contains(b, []byte("fecal")):
		return l.secIdx["stool"]
	}
	return -1
}

// hintFromParts reads a specimen from a bracketed part of the name: 红细胞(尿), 潜血（粪便）.
func (l *Lexicon) hintFromParts(p *split) int {
	for i := 0; i < p.nin; i++ {
		if k := &p.in[i]; !k.over {
			if j, ok := l.secOf[string(k.bytes())]; ok && l.sections[j].hint {
				return j
			}
		}
	}
	return -1
}

// normOutside writes the part of s outside brackets, folded.
func normOutside(k *key, s string) {
	k.n, k.over = 0, false
	depth := 0
	for _, r := range s {
		switch {
		case isOpen(r):
			depth++
		case isClose(r):
			if depth > 0 {
				depth--
			}
		case depth == 0:
			if f := fold(r); f >= 0 {
				k.add(f)
			}
		}
	}
}

func hasBracket(s string) bool {
	for _, r := range s {
		if isOpen(r) || isClose(r) {
			return true
		}
	}
	return false
}
