package parse

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/kaptinlin/jsonrepair"
)

// The repairer only ever sees small pieces, within a budget (see budget.go). A candidate is first
// split at its top-level commas (string- and comment-aware) and read member by member without it,
// literals fixed by hand; only if that fails is a piece of at most smallPiece characters
// repaired whole, a larger one split and its members repaired on their own, recursively, and a
// piece that cannot be split repaired whole only up to maxPiece. Every output is re-checked with
// json.Valid, since the repairer may return invalid JSON with a nil error. maxDepth bounds the
// nesting split (a report's draft, list, group, items, item, value is five levels).
const maxDepth = 6

// repair normalises, cuts and repairs a candidate's text. truncated reports that the text was
// unclosed and was cut back to its last complete item.
func (r *reader) repair(text string) (v Value, truncated bool, ok bool) {
	text = normalize(text)
	text, truncated = cut(text)
	if text == "" {
		return Value{}, truncated, false
	}
	if v, ok := r.decode(text); ok {
		return v, truncated, true // normalised or cut back: no repair needed
	}
	if r.halted() {
		return Value{}, truncated, false
	}
	out, ok := r.repairPiece(text, 0)
	if !ok {
		return Value{}, truncated, false
	}
	v, ok = r.decode(out)
	return v, truncated, ok
}

// repairPiece repairs one piece of text into valid JSON: as it is if it is valid; a Python
// literal or single-quoted string by hand; a container member by member without the repairer
// (the cheap pass: a Python-style reply needs nothing else); then with the repairer, whole if it
// is small, else member by member, else whole if it is at most maxPiece.
func (r *reader) repairPiece(s string, depth int) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	if out, ok := literal(s); ok {
		return out, true // before valid: a failed check allocates its error
	}
	if r.valid(s) {
		return s, true
	}
	container := depth < maxDepth && (s[0] == '{' || s[0] == '[')
	if r.cheap {
		if container {
			return r.repairSplit(s, depth)
		}
		return "", false
	}
	if container && depth <= cheapDepth {
		r.cheap = true
		out, ok := r.repairSplit(s, depth)
		r.cheap = false
		if ok {
			return out, true
		}
	}
	if r.halted() {
		return "", false // not even split: each level of it costs a scan
	}
	n := runes(s, maxPiece)
	if n <= smallPiece {
		if out, ok := r.repairWhole(s); ok {
			return out, true
		}
	}
	if container {
		if out, ok := r.repairSplit(s, depth); ok {
			return out, true
		}
	}
	if n > smallPiece && n <= maxPiece {
		return r.repairWhole(s)
	}
	return "", false
}

// cheapDepth is the deepest piece a cheap pass starts from (the reply, its items, a group's
// items), so that each byte is scanned by at most cheapDepth+1 of them.
const cheapDepth = 2

// literal writes as JSON what Python-style replies spell otherwise: None, True, False, and a
// single-quoted string without backslashes or inner single quotes.
func literal(s string) (string, bool) {
	switch s {
	case "None":
		return "null", true
	case "True":
		return "true", true
	case "False":
		return "false", true
	}
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", false
	}
	body := s[1 : len(s)-1]
	plain := utf8.ValidString(body)
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\'' || c == '\\':
			return "", false // an escape or an inner quote: the repairer knows them
		case c < 0x20 || c == '"' || c == '<' || c == '>' || c == '&':
			plain = false
		}
	}
	if plain {
		return `"` + body + `"`, true
	}
	b, err := json.Marshal(body)
	return string(b), err == nil
}

func (r *reader) repairWhole(s string) (string, bool) {
	if !r.charge(s) {
		return "", false
	}
	out, err := jsonrepair.Repair(s)
	if err != nil || !r.valid(out) {
		return "", false
	}
	return out, true
}

// repairSplit repairs a container member by member. In an array, a member that cannot be repaired
// becomes the string Unreadable, so the item is reported as dropped instead of losing its
// siblings; in an object, such a member fails the object, so that no item is kept with a field
// silently missing. A member value with a colon outside strings fails the object too: it holds
// more than one member (a comma is missing), which the repairer would read as one string.
// Once the budget is spent, an array keeps the members that are valid as they are and counts the
// others unread.
func (r *reader) repairSplit(s string, depth int) (string, bool) {
	open := s[0]
	close := byte('}')
	if open == '[' {
		close = ']'
	}
	body := s[1:]
	if strings.HasSuffix(body, string(close)) {
		body = body[:len(body)-1]
	} else {
		return "", false // unbalanced: cut() closes what it can, so this is not JSON-like
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteByte(open)
	n := 0
	unread := r.unread // an object that fails is counted once, by its list, not by its parts
	fail := func() (string, bool) {
		r.unread = unread
		return "", false
	}
	for _, m := range r.splitTop(body, ',') {
		m = strings.TrimSpace(stripComments(m))
		if m == "" {
			continue // trailing or doubled comma
		}
		var out string
		if open == '[' {
			var ok bool
			if out, ok = r.repairPiece(m, depth+1); !ok {
				if r.cheap {
					return "", false // all or nothing
				}
				if r.halted() {
					r.unread++ // counted once, in the reply's summary, not item by item
					continue
				}
				out = unreadableJSON
			}
		} else {
			kv := r.splitTop(m, ':')
			if len(kv) < 2 {
				return fail()
			}
			key := strings.TrimSpace(kv[0])
			val := strings.TrimSpace(m[len(kv[0])+1:])
			if len(r.splitTop(val, ':')) > 1 {
				return fail()
			}
			k, ok := repairKey(key)
			if !ok {
				return fail()
			}
			v, ok := r.repairPiece(val, depth+1)
			if !ok {
				return fail()
			}
			out = k + ":" + v
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(out)
	}
	b.WriteByte(close)
	return b.String(), true
}

// Unreadable stands, as a JSON string, for a list element that could not be repaired, so that
// the draft can say so instead of calling it null.
const Unreadable = "\x00ocrdraft:unreadable"

var unreadableJSON = func() string { b, _ := json.Marshal(Unreadable); return string(b) }()

// repairKey turns a quoted, single-quoted or bare key into a JSON string.
func repairKey(k string) (string, bool) {
	if k == "" {
		return "", false
	}
	if k[0] == '"' {
		var s string
		if json.Unmarshal([]byte(k), &s) == nil {
			return k, true
		}
	}
	k = strings.Trim(k, `"'`)
	if k == "" {
		return "", false
	}
	b, _ := json.Marshal(k)
	return string(b), true
}

// splitTop splits s at sep where sep stands outside strings, comments and nested containers. It
// reads as the scanner does, but jumps from one byte that matters to the next: it runs at every
// nesting level of every piece repaired.
func (r *reader) splitTop(s string, sep byte) []string {
	r.work.Scanned += len(s)
	special := &commaSpecial
	if sep == ':' {
		special = &colonSpecial
	}
	var parts []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		for i < len(s) && !special[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		switch c := s[i]; c {
		case '"', '\'':
			i = stringEnd(s, i)
		case '/':
			switch {
			case i+1 < len(s) && s[i+1] == '/':
				if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
					i += k
				} else {
					i = len(s)
				}
			case i+1 < len(s) && s[i+1] == '*':
				if k := strings.Index(s[i+1:], "*/"); k >= 0 {
					i += 1 + k + 1 // "/*/" closes itself, as in the scanner
				} else {
					i = len(s)
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, s[last:i])
				last = i + 1
				if sep == ':' {
					return append(parts, s[last:])
				}
			}
		}
	}
	return append(parts, s[last:])
}

// The bytes splitTop stops at, by separator.
var commaSpecial, colonSpecial = specials(','), specials(':')

func specials(sep byte) (t [256]bool) {
	for _, c := range []byte("\"'/{}[]") {
		t[c] = true
	}
	t[sep] = true
	return t
}

// stringEnd returns the index of the quote that closes the string opened at s[i], or len(s).
func stringEnd(s string, i int) int {
	q := s[i]
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return len(s)
}

// stripComments removes // and /* */ comments that stand outside strings.
func stripComments(s string) string {
	if !strings.Contains(s, "//") && !strings.Contains(s, "/*") {
		return s
	}
	var b strings.Builder
	sc := scanner{s: s}
	for sc.next() {
		if sc.inComment {
			continue
		}
		b.WriteByte(s[sc.pos])
	}
	return b.String()
}

// scanner walks a JSON-like text byte by byte, tracking whether the current byte is inside a
// string ("…" or '…') or a comment, so that callers only look at structure.
type scanner struct {
	s         string
	pos       int
	started   bool
	quote     byte // the open string's quote, or 0
	inToken   bool // current byte is part of a string or comment (delimiters included)
	inComment bool // current byte is part of a comment
	comment   byte // '/' for a line comment, '*' for a block comment, 0 outside
	escaped   bool
}

func (sc *scanner) next() bool {
	if sc.started {
		sc.pos++
	}
	sc.started = true
	if sc.pos >= len(sc.s) {
		return false
	}
	c := sc.s[sc.pos]
	switch {
	case sc.comment == '/':
		sc.inToken, sc.inComment = true, true
		if c == '\n' {
			sc.comment = 0
		}
	case sc.comment == '*':
		sc.inToken, sc.inComment = true, true
		if c == '/' && sc.pos > 0 && sc.s[sc.pos-1] == '*' {
			sc.comment = 0
		}
	case sc.quote != 0:
		sc.inToken, sc.inComment = true, false
		switch {
		case sc.escaped:
			sc.escaped = false
		case c == '\\':
			sc.escaped = true
		case c == sc.quote:
			sc.quote = 0
		}
	case c == '"' || c == '\'':
		sc.quote = c
		sc.inToken, sc.inComment = true, false
	case c == '/' && sc.pos+1 < len(sc.s) && (sc.s[sc.pos+1] == '/' || sc.s[sc.pos+1] == '*'):
		sc.comment = sc.s[sc.pos+1]
		sc.inToken, sc.inComment = true, true
		if sc.comment == '*' {
			sc.pos++ // so that "/*/" does not close itself
		}
	default:
		sc.inToken, sc.inComment = false, false
	}
	return true
}

// fullWidth maps punctuation that some models write as structure to its ASCII form.
var fullWidth = map[rune]byte{
	'：': ':', '，': ',', '［': '[', '］': ']', '｛': '{', '｝': '}', '“': '"', '”': '"',
}

// normalize turns full-width structural punctuation and curly quotes that stand outside ASCII
// strings into ASCII. A curly quote outside a string opens a string, which ends at the next
// closing curly or ASCII quote; punctuation inside any string is left alone.
func normalize(s string) string {
	if !hasFullWidth(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	var quote rune // '"', '“' or 0
	escaped := false
	for _, r := range s {
		switch {
		case quote == '"':
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '"':
				quote = 0
			}
			b.WriteRune(r)
		case quote == '“':
			switch r {
			case '”', '"':
				quote = 0
				b.WriteByte('"')
			default:
				b.WriteRune(r)
			}
		case r == '"':
			quote = '"'
			b.WriteRune(r)
		case r == '“' || r == '”':
			quote = '“'
			b.WriteByte('"')
		default:
			if a, ok := fullWidth[r]; ok {
				b.WriteByte(a)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func hasFullWidth(s string) bool {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if _, ok := fullWidth[r]; ok {
			return true
		}
		i += n
	}
	return false
}
