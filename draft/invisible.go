package draft

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/parse"
)

// Invisible characters — the zero-width space, non-joiner and joiner (U+200B–U+200D), the word
// joiner (U+2060), a byte-order mark inside the text (U+FEFF), the soft hyphen (U+00AD), bidi
// marks and every other format character (Unicode's Cf), and the combining grapheme joiner
// (U+034F) — print as nothing, and a model copies them from a PDF's text layer or adds them
// itself. Left in, they make a number text (5.6​ is not 5.6), a date no date, a key no key. They
// are removed once, from every key and string of the reply, before anything is read (Build):
// what is read is what a person sees.

// isInvisible reports whether r prints as nothing.
func isInvisible(r rune) bool {
	return r == 0x034F || r >= 0x00AD && unicode.Is(unicode.Cf, r)
}

// hasInvisible reports whether s holds an invisible character. ASCII holds none, and only a
// dozen bytes begin one (leads): each is looked for by IndexByte, which passes over text many
// bytes at a time, and where one is found its second byte tells most visible characters apart
// (full-width punctuation and arrows share first bytes with invisible characters) before any
// decoding.
func hasInvisible(s string) bool {
	for _, b := range leads {
		for from := 0; from < len(s); {
			j := strings.IndexByte(s[from:], b)
			if j < 0 {
				break
			}
			i := from + j
			if i+1 < len(s) {
				if c := s[i+1]; starts[b][c>>6]&(1<<(c&63)) != 0 {
					if r, _ := utf8.DecodeRuneInString(s[i:]); isInvisible(r) {
						return true
					}
				}
			}
			from = i + 1
		}
	}
	return false
}

// leads are the bytes that begin an invisible character's encoding.
var leads = func() (bs []byte) {
	for b := range starts {
		if starts[b] != [4]uint64{} {
			bs = append(bs, byte(b))
		}
	}
	return bs
}()

// starts holds, for each first byte, the second bytes of the UTF-8 encodings of invisible
// characters that begin with it (a set of 256 bits).
var starts = func() (t [256][4]uint64) {
	add := func(r rune) {
		var b [utf8.UTFMax]byte
		utf8.EncodeRune(b[:], r)
		t[b[0]][b[1]>>6] |= 1 << (b[1] & 63)
	}
	add(0x034F)
	for _, rg := range unicode.Cf.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			if isInvisible(r) {
				add(r)
			}
		}
	}
	for _, rg := range unicode.Cf.R32 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			if isInvisible(r) {
				add(r)
			}
		}
	}
	return t
}()

// cleanText reports whether every string a JSON value decoded from text can hold is free of
// invisible characters: text holds none itself, nor a \u escape that could write one. Most
// replies are, and their values need no walk (visible) at all.
func cleanText(text string) bool {
	return !hasInvisible(text) && !strings.Contains(text, `\u`)
}

// dropInvisible returns s without its invisible characters.
func dropInvisible(s string) string {
	if !hasInvisible(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isInvisible(r) {
			return -1
		}
		return r
	}, s)
}

// visible returns v with the invisible characters removed from every key and string. The
// reply's value is shared with the caller and never written: a container is copied only when
// something in it changes, so a clean reply costs one pass and no allocation.
func visible(v parse.Value) parse.Value {
	switch v.Kind {
	case parse.String:
		v.Text = dropInvisible(v.Text)
	case parse.Array:
		var out []parse.Value
		for i, e := range v.Elems {
			f := visible(e)
			if out == nil && !sameValue(f, e) {
				out = append(make([]parse.Value, 0, len(v.Elems)), v.Elems[:i]...)
			}
			if out != nil {
				out = append(out, f)
			}
		}
		if out != nil {
			v.Elems = out
		}
	case parse.Object:
		var out []parse.Member
		for i, m := range v.Members {
			f := parse.Member{Key: dropInvisible(m.Key), Value: visible(m.Value)}
			if out == nil && (f.Key != m.Key || !sameValue(f.Value, m.Value)) {
				out = append(make([]parse.Member, 0, len(v.Members)), v.Members[:i]...)
			}
			if out != nil {
				out = append(out, f)
			}
		}
		if out != nil {
			v.Members = out
		}
	}
	return v
}

// sameValue reports whether visible left a value as it was: the same text, or the same
// backing list.
func sameValue(a, b parse.Value) bool {
	switch a.Kind {
	case parse.String:
		return a.Text == b.Text
	case parse.Array:
		return len(a.Elems) == len(b.Elems) && (len(a.Elems) == 0 || &a.Elems[0] == &b.Elems[0])
	case parse.Object:
		return len(a.Members) == len(b.Members) && (len(a.Members) == 0 || &a.Members[0] == &b.Members[0])
	}
	return true
}
