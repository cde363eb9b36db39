package lexicon

import (
	"slices"
	"sync"
	"unicode/utf8"
)

// Near returns the analytes (at most maxNear, in table order) whose name a printed name that
// Match does not know is close to: in a garbled name (a value glued into it, Latin letters glued
// onto Chinese), a run of its ASCII letters and digits is a known name of at least three
// characters (CRP in "CRP=26"); else its normalised form or such a run is one edit
// (a character added, dropped or changed) from one (谷丙转氨梅, CEP in "(白CEP）=26"), but not
// a digit after it (IgG4 and LDH1 are subclasses, not misreadings). For a name that names
// nothing (Find's false) only: a name the lexicon knows is never near another. It answers
// nothing for a name longer than Find reads.
//
// The names are indexed on the first call (each name and each of its one-character deletions:
// two keys one edit apart share one of them), so a lexicon that never meets an unknown name
// never builds it.
func (l *Lexicon) Near(name string) []*Analyte {
	if len(name) > maxInput {
		return nil
	}
	l.nearOnce.Do(l.buildNear)
	// exact: analytes a run of the name is a name of; out: those one edit from it.
	var exact, out []*Analyte
	look := func(k []byte) {
		if utf8.RuneCount(k) < nearMin {
			return
		}
		try := func(v []byte) {
			for _, c := range l.near[string(v)] {
				switch {
				case c.key == string(k):
					if !slices.Contains(exact, c.a) {
						exact = append(exact, c.a)
					}
				case !slices.Contains(out, c.a) && oneEdit(string(k), c.key) && !subtype(string(k), c.key):
					out = append(out, c.a)
				}
			}
		}
		try(k)
		var d [maxKey]byte
		for i := 0; i < len(k); {
			_, n := utf8.DecodeRune(k[i:])
			try(append(append(d[:0], k[:i]...), k[i+n:]...))
			i += n
		}
	}
	var k key
	normName(&k, name)
	if !k.over {
		look(k.bytes())
	}
	// Runs of ASCII letters and digits: an abbreviation inside a garbled name. Only a garbled
	// one: a name of words (BUN/Creatinine Ratio, Adjusted calcium, LDL Cholesterol Calc) that
	// holds a known name is another item built on it, a ratio or a corrected value, not a
	// misreading of it, and naming the word inside would be a false alarm.
	if garbled(name) {
		var run key
		for _, r := range name + " " {
			if f := fold(r); f >= 'a' && f <= 'z' || f >= '0' && f <= '9' {
				run.add(f)
				continue
			}
			if r == '-' || r == '.' {
				continue // folded away inside an abbreviation (CA19-9, S.G.)
			}
			if run.n > 0 && run.n < k.n {
				look(run.bytes())
			}
			run.n, run.over = 0, false
		}
	}
	if len(exact) > 0 {
		out = exact
	}
	if len(out) == 0 {
		return nil
	}
	// In table order, the first maxNear.
	sorted := make([]*Analyte, 0, min(len(out), maxNear))
	for _, a := range l.analytes {
		if len(sorted) < maxNear && slices.Contains(out, a) {
			sorted = append(sorted, a)
		}
	}
	return sorted
}

// garbled reports whether a name shows OCR debris rather than words: a value glued into it
// (CRP=26), or Latin letters glued straight onto Chinese characters with no space or bracket
// between (白CEP), which a printed name spells only for a short prefix or suffix (C反应蛋白,
// 载脂蛋白A1), too short to be a run that Near looks at.
func garbled(name string) bool {
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '=' || r == '＝':
			return true
		case isHan(prev) && isLatin(r), isLatin(prev) && isHan(r):
			return true
		}
		prev = r
	}
	return false
}

func isLatin(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// maxNear bounds the analytes Near names; nearMin is the fewest characters a name must have to
// be near another (two-letter abbreviations are one edit from dozens).
const (
	maxNear = 3
	nearMin = 3
)

// nearName is a normalised name and the analyte it names.
type nearName struct {
	key string
	a   *Analyte
}

// buildNear indexes every name of nearMin characters or more, global and per section.
func (l *Lexicon) buildNear() {
	m := make(map[string][]nearName, 8*len(l.global))
	put := func(v string, c nearName) {
		if !slices.Contains(m[v], c) {
			m[v] = append(m[v], c)
		}
	}
	index := func(k string, c cands) {
		if utf8.RuneCountInString(k) < nearMin {
			return
		}
		for _, a := range append([]*Analyte{c.first}, c.more...) {
			put(k, nearName{k, a})
			for i := 0; i < len(k); {
				_, n := utf8.DecodeRuneInString(k[i:])
				put(k[:i]+k[i+n:], nearName{k, a})
				i += n
			}
		}
	}
	for k, c := range l.global {
		index(k, c)
	}
	for _, ns := range l.local {
		for k, c := range ns {
			index(k, c)
		}
	}
	l.near = m
}

// subtype reports whether k is name followed by one digit: a subclass or an isoenzyme of it
// (IgG4, LDH1), another item, not a misreading.
func subtype(k, name string) bool {
	return len(k) == len(name)+1 && k[:len(name)] == name && k[len(name)] >= '0' && k[len(name)] <= '9'
}

// oneEdit reports whether a and b differ by at most one character added, dropped or changed.
func oneEdit(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > len(rb) {
		ra, rb = rb, ra
	}
	if len(rb)-len(ra) > 1 {
		return false
	}
	i := 0
	for i < len(ra) && ra[i] == rb[i] {
		i++
	}
	if i == len(ra) {
		return true
	}
	if len(ra) == len(rb) {
		return string(ra[i+1:]) == string(rb[i+1:])
	}
	return string(ra[i:]) == string(rb[i+1:])
}

// nearIndex is the lazily built index of Near.
type nearIndex struct {
	nearOnce sync.Once
	near     map[string][]nearName // a name, or a name less one character → the names
}
