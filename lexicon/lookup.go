package lexicon

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Qualifiers printed before or after a name that do not change the analyte. A specimen prefix
// that does (尿, 粪) is in hintPrefixes instead.
var (
	prefixes = []string{"血清", "血浆", "全血", "血液", "静脉血", "外周血", "serum", "plasma", "血"}
	suffixes = []string{"测定", "检测", "检查", "定量", "定性", "半定量", "含量", "水平", "浓度", "值"}
)

// hintPrefixes name a specimen: what follows is looked up in that section only, so that 尿肌酐
// never becomes serum creatinine.
var hintPrefixes = []struct{ prefix, section string }{
	{"尿液", "urine"}, {"尿", "urine"}, {"urine", "urine"}, {"u", "urine"},
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
	sec := l.sectionIndex(group)
	if sec < 0 {
		sec = l.hintFromParts(name)
	}
	var u key
	if unit != "" {
		normUnit(&u, unit)
	}
	var k key
	normName(&k, name)
	if a := l.find(sec, &k, &u); a != nil {
		return a, true
	}
	if !hasBracket(name) && !hasSpace(name) {
		return nil, false
	}
	var best *Analyte
	bestLen := 0
	try := func(k *key) {
		if a := l.find(sec, k, &u); a != nil && k.n > bestLen {
			best, bestLen = a, k.n
		}
	}
	normOutside(&k, name)
	try(&k)
	for i := 0; i < len(name); { // each bracketed part
		start, end, next := nextBracket(name, i)
		if start < 0 {
			break
		}
		normName(&k, name[start:end])
		try(&k)
		i = next
	}
	// Runs of words in one script: "Total Bilirubin 总胆红素", "ALT 谷丙转氨酶".
	for i := 0; i < len(name); {
		start, end := nextScriptRun(name, i)
		if start < 0 {
			break
		}
		if start > 0 || end < len(name) {
			normOutside(&k, name[start:end])
			try(&k)
		}
		i = end
	}
	return best, best != nil
}

// names maps a normalised name to the analytes it means: the default first, then those that
// share the name (written ~name in the table) and are told apart by unit.
type names map[string]cands

type cands struct {
	first *Analyte
	more  []*Analyte
}

// pick returns the candidate that knows unit u, or the default.
func (c cands) pick(u *key) *Analyte {
	if c.first == nil || len(c.more) == 0 || u.n == 0 || u.over || c.first.hasUnit(u) {
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
func (l *Lexicon) find(sec int, k, u *key) *Analyte {
	if k.over || k.n == 0 {
		return nil
	}
	b := k.bytes()
	if a := l.match(sec, b, u); a != nil {
		return a
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
func (l *Lexicon) matchTrimmed(sec int, b []byte, u *key) *Analyte {
	for _, s := range suffixes {
		if len(b) > len(s) && string(b[len(b)-len(s):]) == s {
			if a := l.match(sec, b[:len(b)-len(s)], u); a != nil {
				return a
			}
		}
	}
	return nil
}

func (l *Lexicon) match(sec int, b []byte, u *key) *Analyte {
	if sec >= 0 {
		if a := l.local[sec][string(b)].pick(u); a != nil {
			return a
		}
	}
	return l.global[string(b)].pick(u)
}

// sectionIndex resolves a group name to a section, or -1.
func (l *Lexicon) sectionIndex(group string) int {
	if group == "" {
		return -1
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
	// Urine and stool panels go by many names (尿液分析, 尿沉渣定量, 粪便常规+潜血); a group that
	// names the specimen and not blood is that panel.
	b := k.bytes()
	switch {
	case bytes.Contains(b, []byte("尿")) && !bytes.Contains(b, []byte("血")) && !bytes.Contains(b, []byte("肾")):
		return l.secIdx["urine"]
	case bytes.Contains(b, []byte("粪")) || bytes.Contains(b, []byte("大便")):
		return l.secIdx["stool"]
	}
	return -1
}

// hintFromParts reads a specimen from a bracketed part of the name: 红细胞(尿), 潜血（粪便）.
func (l *Lexicon) hintFromParts(name string) int {
	var k key
	for i := 0; i < len(name); {
		start, end, next := nextBracket(name, i)
		if start < 0 {
			break
		}
		normName(&k, name[start:end])
		if !k.over {
			if j, ok := l.secOf[string(k.bytes())]; ok && l.sections[j].hint {
				return j
			}
		}
		i = next
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

// nextBracket returns the byte span of the next top-level bracketed part at or after i and where
// to continue; start < 0 when there is none.
func nextBracket(s string, i int) (start, end, next int) {
	depth := 0
	for j := i; j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		switch {
		case isOpen(r):
			if depth == 0 {
				start = j + n
			}
			depth++
		case isClose(r) && depth > 0:
			depth--
			if depth == 0 {
				return start, j, j + n
			}
		}
		j += n
	}
	if depth > 0 { // unclosed: the rest is the part
		return start, len(s), len(s)
	}
	return -1, -1, len(s)
}

// nextScriptRun returns the next span of whitespace-separated words that are all Han or all not,
// so that "Total Bilirubin 总胆红素" yields "Total Bilirubin" and then "总胆红素".
func nextScriptRun(s string, i int) (start, end int) {
	for i < len(s) && isSpaceByte(s, i) {
		i += spaceLen(s, i)
	}
	if i >= len(s) {
		return -1, -1
	}
	start = i
	han := wordHan(s, i)
	end = i
	for j := i; j < len(s); {
		// j is at the start of a word
		w := j
		for w < len(s) && !isSpaceByte(s, w) {
			_, n := utf8.DecodeRuneInString(s[w:])
			w += n
		}
		if wordHan(s, j) != han {
			break
		}
		end = w
		for w < len(s) && isSpaceByte(s, w) {
			w += spaceLen(s, w)
		}
		j = w
	}
	return start, end
}

// wordHan reports whether the word starting at i holds a Han character.
func wordHan(s string, i int) bool {
	for j := i; j < len(s) && !isSpaceByte(s, j); {
		r, n := utf8.DecodeRuneInString(s[j:])
		if unicode.Is(unicode.Han, r) {
			return true
		}
		j += n
	}
	return false
}

func isSpaceByte(s string, i int) bool {
	if s[i] == ' ' || s[i] == '\t' {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r == 0x3000 || r == 0xA0
}

func spaceLen(s string, i int) int {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n
}

func hasBracket(s string) bool {
	for _, r := range s {
		if isOpen(r) || isClose(r) {
			return true
		}
	}
	return false
}

func hasSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if isSpaceByte(s, i) {
			return true
		}
	}
	return false
}
