package draft

import (
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// value is what one JSON value says about a result: a number (maybe with a unit, a mark and a
// range) or text.
type value struct {
	num  *schema.Decimal
	unit string      // a unit written after the number, or ""
	flag schema.Flag // an abnormality mark printed beside the number, or ""
	rng  string      // a reference range written after the number ("5.86 mmol/L (3.1-5.2)"), or ""
	src  string      // the string as written, when the number came from one
	text *string
	bad  bool // a shape no value can have (an object, a list, a boolean)
}

// readValue reads a result. Numbers keep their digits; a string that is a number, maybe with a
// unit, an abnormality mark and a reference range, gives a number; any other string is text as
// written — "阴性(-)", "1+", "<0.5" are results in their own right, never guesses at a number.
func readValue(raw parse.Value, a *arena) value {
	switch raw.Kind {
	case parse.Null:
		return value{}
	case parse.Number:
		d, err := schema.ParseDecimal(raw.Text)
		if err != nil {
			return value{bad: true}
		}
		return value{num: a.dec(d)}
	case parse.String:
		s := clean(raw.Text)
		if isNullWord(s) {
			return value{}
		}
		d, unit, flag, ok := numberWithUnit(s)
		// A unit that swallowed a bracketed range ("1.33mmol/L（0.56-1.70）", no space) is the
		// unit and the range: split below rather than keep mmol/L(0.56-1.70) as the unit.
		if ok && !strings.ContainsAny(unit, "([【") {
			return value{num: a.dec(d), unit: unit, flag: flag, src: s}
		}
		if t, f := cutMarks(lexicon.Narrow(s)); strings.IndexByte(t, ' ') > 0 || strings.ContainsAny(t, "(（[【") {
			if head, rng, ok := splitRange(t, a); ok { // "5.86 mmol/L (3.1-5.2) ↑"
				if d, unit, flag, ok := numberWithUnit(head); ok {
					return value{num: a.dec(d), unit: unit, flag: joinFlags(f, flag), rng: rng, src: s}
				}
			}
		}
		if ok { // a bracket in the unit that is not a range: the unit as printed (U/L(37℃))
			return value{num: a.dec(d), unit: unit, flag: flag, src: s}
		}
		if f, ok := markOnly(lexicon.Narrow(s)); ok { // "↑" alone: the mark of a number given elsewhere
			return value{flag: f, text: a.str(s)}
		}
		return value{text: a.str(s)}
	default:
		return value{bad: true}
	}
}

// numberWithUnit reads "5.6", "５．６", "1,024.5", "140mmHg", "6.5×10^9/L", and a number with
// its abnormality mark before, after or in brackets around it ("5.86↑", "↑5.86", "H 82.3",
// "5.86 (H)", "356（高）", "3.75*", "5.86↑ mmol/L", "5.86 mmol/L H"): the mark is returned as a
// flag, never read as part of the number or the unit.
func numberWithUnit(s string) (schema.Decimal, string, schema.Flag, bool) {
	if len(s) > maxNumberLen {
		return schema.Decimal{}, "", "", false
	}
	s, flag := cutMarks(lexicon.Narrow(s))
	n := numberPrefix(s)
	if n == 0 {
		return schema.Decimal{}, "", "", false
	}
	d, err := schema.ParseDecimal(strings.ReplaceAll(s[:n], ",", ""))
	if err != nil {
		return schema.Decimal{}, "", "", false
	}
	if e := exponentLen(s[n:]); e > 0 { // 1.2e3 is 1200: scientific notation, not a unit "e3"
		if x, err := schema.ParseDecimal(strings.ReplaceAll(s[:n+e], ",", "")); err == nil {
			d, n = x, n+e
		}
	}
	rest := strings.TrimSpace(s[n:])
	if after, f := cutMark(rest, true); f != "" { // a mark between the number and its unit
		rest, flag = strings.TrimSpace(after), joinFlags(flag, f)
	}
	if rest == "" {
		return d, "", flag, true
	}
	if isUnit(rest) {
		return d, rest, flag, true
	}
	return schema.Decimal{}, "", "", false
}

// Lengths past which a string is not read as a number, a mark or a range: longer than any
// printed one, so that a hostile value costs nothing.
const (
	maxNumberLen = 100
	maxMarkLen   = 24
	maxRangeLen  = 300
)

// flagMarks are the abnormality marks printed beside a result, and what each means: a direction,
// or abnormal for a mark without one. Longer marks come first, so ↑↑ is not read as ↑ and ↑. A
// word mark (a letter, HH) counts only where it stands apart from a number's unit — after a digit
// or a space, before a digit or a space — so that mmol/L keeps its L. Any mark may stand in
// brackets: (H), （高）, [↑]. A lone + or - is never a mark: in 阳性(+) it is the result.
var flagMarks = []struct {
	mark string
	flag schema.Flag
	word bool
}{
	{"↑↑", schema.FlagHigh, false}, {"↑", schema.FlagHigh, false}, {"⬆", schema.FlagHigh, false}, {"▲", schema.FlagHigh, false},
	{"↓↓", schema.FlagLow, false}, {"↓", schema.FlagLow, false}, {"⬇", schema.FlagLow, false}, {"▼", schema.FlagLow, false},
	{"偏高", schema.FlagHigh, false}, {"升高", schema.FlagHigh, false}, {"高", schema.FlagHigh, false},
	{"偏低", schema.FlagLow, false}, {"降低", schema.FlagLow, false}, {"低", schema.FlagLow, false},
	{"HH", schema.FlagHigh, true}, {"H", schema.FlagHigh, true}, {"LL", schema.FlagLow, true}, {"L", schema.FlagLow, true},
	{"**", schema.FlagAbnormal, false}, {"*", schema.FlagAbnormal, false}, {"!", schema.FlagAbnormal, false},
	{"异常", schema.FlagAbnormal, false}, {"異常", schema.FlagAbnormal, false},
}

// flagWords are what a flag column (flag, 提示, 异常标志 …) holds besides marks: the contract's
// own words, and words that say there is no mark. A value that is neither is not read.
var flagWords = []struct {
	word string
	flag schema.Flag // "" means no mark: the result is within range
}{
	{"high", schema.FlagHigh}, {"low", schema.FlagLow}, {"abnormal", schema.FlagAbnormal},
	{"h", schema.FlagHigh}, {"l", schema.FlagLow}, {"a", schema.FlagAbnormal},
	{"阳性", schema.FlagAbnormal}, {"positive", schema.FlagAbnormal}, {"abn", schema.FlagAbnormal}, {"y", schema.FlagAbnormal}, {"yes", schema.FlagAbnormal},
	{"陽性", schema.FlagAbnormal}, {"陰性", ""}, {"異常", schema.FlagAbnormal}, {"是", schema.FlagAbnormal}, {"true", schema.FlagAbnormal}, {"否", ""}, {"false", ""},
	{"正常", ""}, {"normal", ""}, {"n", ""}, {"no", ""}, {"阴性", ""}, {"negative", ""}, {"-", ""}, {"—", ""}, {"/", ""}, {"无", ""}, {"未见异常", ""},
}

// cutMarks cuts the abnormality marks before and after a number ("↑5.86", "5.86 (H)", "7.1HH")
// and returns what is left and the flag they make. Marks that contradict each other (↑ and L)
// make abnormal: a mark was printed, its direction is not certain.
func cutMarks(s string) (string, schema.Flag) {
	var flag schema.Flag
	for range 3 {
		s = strings.TrimSpace(s)
		rest, f := cutMark(s, false)
		if f == "" {
			rest, f = cutTrailingMark(s)
		}
		if f == "" {
			return s, flag
		}
		s, flag = rest, joinFlags(flag, f)
	}
	return strings.TrimSpace(s), flag
}

// cutMark cuts one mark at the start of s. Something must follow it; between a number and its
// unit (inner) a symbol must not be followed by a digit (6.5*10^9/L is a multiplication) and a
// word must be followed by a space.
func cutMark(s string, inner bool) (string, schema.Flag) {
	if s == "" {
		return s, ""
	}
	for _, br := range rangeBrackets {
		if rest, ok := strings.CutPrefix(s, br[0]); ok {
			if i := strings.Index(rest, br[1]); i > 0 {
				if f, ok := markOnly(rest[:i]); ok && strings.TrimSpace(rest[i+len(br[1]):]) != "" || ok && inner {
					return rest[i+len(br[1]):], f
				}
			}
			return s, ""
		}
	}
	for _, m := range flagMarks {
		rest, ok := strings.CutPrefix(s, m.mark)
		if !ok {
			continue
		}
		next := byte(' ')
		if rest != "" {
			next = rest[0]
		} else if !inner {
			return s, "" // the mark alone: no number follows
		}
		switch {
		case m.word && inner && next != ' ' && next != '\t':
		case m.word && !isDigit(next) && next != ' ' && next != '\t' && next != '.' && next != '-':
		case m.word && next != ' ' && next != '\t' && numberPrefix(rest) != len(rest):
			// L98 is a mark and a number; H2O or L5/S1 is text, not a mark and a number with a unit
		case !m.word && inner && isDigit(next):
		default:
			return rest, m.flag
		}
		return s, ""
	}
	return s, ""
}

// cutTrailingMark cuts one mark at the end of s; something must stand before it, and before a
// word mark a digit or a space.
func cutTrailingMark(s string) (string, schema.Flag) {
	for _, br := range rangeBrackets {
		if rest, ok := strings.CutSuffix(s, br[1]); ok {
			if i := strings.LastIndex(rest, br[0]); i > 0 {
				if f, ok := markOnly(rest[i+len(br[0]):]); ok {
					return rest[:i], f
				}
			}
			return s, ""
		}
	}
	for _, m := range flagMarks {
		rest, ok := strings.CutSuffix(s, m.mark)
		if !ok || rest == "" {
			continue
		}
		if last := rest[len(rest)-1]; m.word && !isDigit(last) && last != ' ' && last != '\t' {
			continue // mmol/L: the L of a unit
		}
		return rest, m.flag
	}
	return s, ""
}

// markOnly reads a string that is nothing but marks ("↑", "H", "↑↑", "(高)", " * ").
func markOnly(s string) (schema.Flag, bool) {
	if len(s) > maxMarkLen {
		return "", false
	}
	s = strings.TrimSpace(s)
	for _, br := range rangeBrackets {
		if inner, ok := strings.CutPrefix(s, br[0]); ok {
			if inner, ok := strings.CutSuffix(inner, br[1]); ok {
				s = strings.TrimSpace(inner)
			}
			break
		}
	}
	if s == "" {
		return "", false
	}
	var flag schema.Flag
	for s != "" {
		found := false
		for _, m := range flagMarks {
			if rest, ok := strings.CutPrefix(s, m.mark); ok {
				s, flag, found = strings.TrimSpace(rest), joinFlags(flag, m.flag), true
				break
			}
		}
		if !found {
			return "", false
		}
	}
	return flag, true
}

// joinFlags adds a mark's flag to those already found: two directions that disagree make
// abnormal.
func joinFlags(a, b schema.Flag) schema.Flag {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	case a == schema.FlagAbnormal:
		return b // * beside ↑: the direction says more
	case b == schema.FlagAbnormal:
		return a
	}
	return schema.FlagAbnormal
}

// readFlag reads a flag column: a mark (↑, H, (高)), a word of flagWords, or a boolean (an
// "abnormal": true column). ok is false for a value that says something else.
func readFlag(raw parse.Value) (f schema.Flag, ok bool) {
	switch raw.Kind {
	case parse.Null:
		return "", true
	case parse.Bool:
		if raw.Text == "true" {
			return schema.FlagAbnormal, true
		}
		return "", true
	case parse.String:
		s := lexicon.Narrow(clean(raw.Text))
		if isNullWord(s) {
			return "", true
		}
		if f, ok := markOnly(s); ok {
			return f, true
		}
		for _, w := range flagWords {
			if strings.EqualFold(s, w.word) {
				return w.flag, true
			}
		}
	}
	return "", false
}

// numberPrefix returns the length of the plain decimal number at the start of s: a sign, digits
// with optional thousands commas (1,024.5 but not 1,5), and a fraction.
func numberPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := i - start
	// Thousands groups: only when the first group has 1–3 digits and every group has 3.
	if intDigits >= 1 && intDigits <= 3 {
		j := i
		groups := 0
		for j+3 < len(s) && s[j] == ',' && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) && (j+4 == len(s) || !isDigit(s[j+4])) {
			j += 4
			groups++
		}
		if groups > 0 {
			i = j
		}
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j > i+1 {
			i = j
		} else if intDigits > 0 {
			i = j // "5." is 5
		}
	}
	if i == start || (i == start+1 && s[start] == '.') {
		return 0
	}
	if i < len(s) && (isDigit(s[i]) || s[i] == ',' || s[i] == '.') {
		return 0 // 1,5 or 1.2.3: not a plain number
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// exponentLen is the length of an exponent (e3, E-2, e+02) at the start of s that no letter
// follows (3.5E+09~9.5E+09, but not 5e3abc), or 0.
func exponentLen(s string) int {
	if len(s) < 2 || s[0] != 'e' && s[0] != 'E' {
		return 0
	}
	i := 1
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i || j < len(s) && (isLetter(s[j]) || s[j] == '.') {
		return 0
	}
	return j
}

// isUnit reports whether s looks like a unit: it starts with a letter or one of unitStarts (not a
// slash, so 120/80 stays text), holds no spaces, and only unit characters.
func isUnit(s string) bool {
	if s == "" || len(s) > 30 || isNullWord(s) {
		return false
	}
	if n := powerOfTen(s); n > 0 { // 10^9/L, 10*9/L, 10E12/L, 10⁹/L: a unit that starts with its power
		rest := s[n:]
		return rest == "" || rest[0] == '/' && isUnit(rest) || isUnit(rest) && !isDigit(rest[0])
	}
	r, _ := utf8.DecodeRuneInString(s)
	if r == '/' && len(s) > 1 { // per something: /HP, /μL; but not 120/80
		r2, _ := utf8.DecodeRuneInString(s[1:])
		if r2 < utf8.RuneSelf && isLetter(byte(r2)) || strings.ContainsRune(unitStarts, r2) {
			r = r2
		}
	}
	if !(r < utf8.RuneSelf && isLetter(byte(r))) && !strings.ContainsRune(unitStarts, r) {
		return false
	}
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (isLetter(byte(r)) || isDigit(byte(r))):
		case strings.ContainsRune(unitChars, r):
		default:
			return false
		}
	}
	return true
}

// powerOfTen is the length of a power of ten at the start of a unit — 10^9, 10*9, 10**9, 10E9,
// 10e12, 10⁹ — or 0. The sign between 10 and its power must be there (109 is a number), and a
// tilde is none: 10~9/L is a misread, left as written for the checks to flag.
func powerOfTen(s string) int {
	if !strings.HasPrefix(s, "10") {
		return 0
	}
	i := 2
	switch {
	case strings.HasPrefix(s[i:], "**"):
		i += 2
	case i < len(s) && (s[i] == '^' || s[i] == '*' || s[i] == 'e' || s[i] == 'E'):
		i++
	default:
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !strings.ContainsRune("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", r) {
				break
			}
			j += size
		}
		if j == i {
			return 0
		}
		return j
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i || j-i > 2 {
		return 0
	}
	return j
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// bounds is what a reference range says: its bounds, a unit printed with them, the range as
// printed (text), and the lexicon's reading of it. A reading that is not plain (several spans,
// or one sex's) gives no bounds here: which span applies is the checks' to decide, with the
// caller's context, not the reader's.
type bounds struct {
	low, high *schema.Decimal
	unit      string
	text      *string
	reading   *schema.RefReading
}

// readRange reads a reference range: a number (the caller decides which bound), a string in one
// of the notations of rangeSeparators and rangeBounds (maybe with a unit), a two-number list, or
// an object of bounds ({"low": 3.9, "high": 6.1}). ok is false for a value that has digits but no
// notation we know; a range without digits ("阴性") is qualitative and reads as no bounds. The
// text of a range string is kept as written; a list or an object is written out as 3.9-6.1.
func readRange(raw parse.Value, a *arena) (b bounds, num *schema.Decimal, ok bool) {
	switch raw.Kind {
	case parse.Null:
		return bounds{}, nil, true
	case parse.Number:
		x := readValue(raw, a)
		return bounds{}, x.num, x.num != nil
	case parse.Array:
		if len(raw.Elems) == 2 {
			return boundsOf(readValue(raw.Elems[0], a), readValue(raw.Elems[1], a), raw.Elems[0], raw.Elems[1], a)
		}
		return bounds{}, nil, false
	case parse.Object:
		var f fields
		f.pick(raw.Members, 1)
		if f[fRefRange].key != "" { // {"text": "3.9-6.1"} or a range beside its bounds
			return readRange(f[fRefRange].val, a)
		}
		if f[fRefLow].key == "" && f[fRefHigh].key == "" {
			return bounds{}, nil, false
		}
		b, num, ok := boundsOf(readValue(f[fRefLow].val, a), readValue(f[fRefHigh].val, a), f[fRefLow].val, f[fRefHigh].val, a)
		if u, _ := readText(f[fUnit].val, a); ok && u != nil {
			b.unit = *u
		}
		return b, num, ok
	case parse.String:
		s := clean(raw.Text)
		if isNullWord(s) {
			return bounds{}, nil, true
		}
		b, num, ok := readRangeText(lexicon.Narrow(s), a)
		if num == nil {
			b.text = a.str(s)
		}
		return b, num, ok
	default:
		return bounds{}, nil, false
	}
}

// boundsOf makes a range of two values read from a list or an object; each is a number or null.
func boundsOf(lo, hi value, rawLo, rawHi parse.Value, a *arena) (bounds, *schema.Decimal, bool) {
	if lo.bad || hi.bad || lo.num == nil && rawLo.Kind != parse.Null || hi.num == nil && rawHi.Kind != parse.Null || lo.num == nil && hi.num == nil {
		return bounds{}, nil, false
	}
	var t string
	switch {
	case lo.num != nil && hi.num != nil:
		t = lo.num.String() + "-" + hi.num.String()
	case lo.num != nil:
		t = "≥" + lo.num.String()
	default:
		t = "≤" + hi.num.String()
	}
	unit := lo.unit
	if unit == "" {
		unit = hi.unit
	}
	return bounds{low: lo.num, high: hi.num, unit: unit, text: a.str(t)}, nil, true
}

// readRangeText reads a range string, already narrowed: the lexicon's reading, or a lone number
// (which bound it is, the caller decides).
func readRangeText(s string, a *arena) (b bounds, num *schema.Decimal, ok bool) {
	var buf [8]schema.RefSpan // the spans go to the arena: buf stays on the stack
	r, ok := a.lex.ReadRangeInto(buf[:0], s)
	if ok {
		if len(r.Spans) == 0 {
			return bounds{}, nil, true // qualitative (阴性) or a dilution (<1:100)
		}
		b.reading = a.reading(r.Spans)
		if b.reading.Plain() {
			sp := &b.reading.Spans[0]
			if sp.HasLow {
				b.low = a.dec(sp.Low)
			}
			if sp.HasHigh {
				b.high = a.dec(sp.High)
			}
			b.unit = b.reading.Unit
		}
		return b, nil, true
	}
	if d, unit, _, isNum := numberWithUnit(s); isNum && !strings.ContainsAny(unit, "-~") {
		return bounds{unit: unit}, a.dec(d), true
	}
	return bounds{}, nil, false
}

// splitRange splits a result string that ends with its reference range: "5.86 mmol/L (3.1-5.2)",
// "5.86 mmol/L 参考 3.1-5.2", "5.86 mmol/L 3.1-5.2". head is the result and rng the range as
// written; the range must read as one, so that nothing is split at a guess.
func splitRange(s string, a *arena) (head, rng string, ok bool) {
	if len(s) > 120 || !strings.ContainsAny(s, "-~～—–―‒‐‑﹘〜∼﹣－至到<>≤≥＜＞") {
		return "", "", false
	}
	t := lexicon.Narrow(s)
	for _, br := range rangeBrackets {
		if rest, ok := strings.CutSuffix(t, br[1]); ok {
			if i := strings.LastIndex(rest, br[0]); i > 0 {
				inner := strings.TrimSpace(rest[i+len(br[0]):])
				inner = cutLabel(inner)
				if isRange(inner, a) {
					return strings.TrimSpace(rest[:i]), inner, true
				}
			}
			return "", "", false
		}
	}
	for _, l := range resultRangeLabels {
		if i := strings.Index(t, l); i > 0 {
			inner := strings.TrimSpace(strings.TrimLeft(t[i+len(l):], ":： "))
			if isRange(inner, a) {
				return strings.TrimSpace(t[:i]), inner, true
			}
			return "", "", false
		}
	}
	// A bare range after a number and its unit: the unit must be there, so that 5 3-5 is not split.
	if i := strings.LastIndexByte(t, ' '); i > 0 {
		head, inner := strings.TrimSpace(t[:i]), t[i+1:]
		if _, unit, _, ok := numberWithUnit(head); ok && unit != "" && isRange(inner, a) {
			return head, inner, true
		}
	}
	return "", "", false
}

// resultRangeLabels introduce a range inside a result string: 5.86 mmol/L 参考 3.1-5.2.
var resultRangeLabels = []string{"参考值", "参考范围", "参考区间", "参考", "正常值", "正常范围", "Ref", "ref", "Reference", "reference", "Normal", "normal", "RR"}

func cutLabel(s string) string {
	for _, l := range resultRangeLabels {
		if rest, ok := strings.CutPrefix(s, l); ok {
			return strings.TrimSpace(strings.TrimLeft(rest, ":： "))
		}
	}
	return s
}

// isRange reports whether s reads as a range with at least one bound.
func isRange(s string, a *arena) bool {
	var buf [4]schema.RefSpan
	r, ok := a.lex.ReadRangeInto(buf[:0], s)
	return ok && len(r.Spans) > 0
}

// datePattern reads year-first dates: 2026-03-05, 2026/3/5, 2026.03.05, 2026年3月5日, 20260305,
// followed by an optional weekday and time part (timePattern) that are dropped. Day-first and month-first
// dates are ambiguous and are not read; a month written as a word (monthDate) or in Chinese
// numerals (二〇二六年三月五日, cnDigits) cannot be misread, and is.
var (
	datePattern = regexp.MustCompile(`^(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*[日号號]?(.*)$`)
	compactDate = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})(.*)$`)
	timePattern = regexp.MustCompile(`^(?:\s*[(（]?(?:星期|周|週|礼拜|禮拜)[一二三四五六日天][)）]?|\s*\(?(?i:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\)?)?(?:[T\s]*(?:上午|下午)?\s*\d{1,2}\s*[:时点]\s*\d{1,2}\s*(?:[:分]\s*(?:\d{1,2}(?:\.\d+)?\s*秒?)?)?\s*(?:Z|[+-]\d{2}:?\d{2})?)?$`)
	// ambiguousDate is a numeric date not written year-first: 05/03/2026, 3/5/26, 26-03-05 (a
	// two-digit year could be the day), 115/03/05 (a three-digit year), 03/05.
	ambiguousDate = regexp.MustCompile(`^\d{1,3}\s*[-/.]\s*\d{1,2}(?:\s*[-/.]\s*\d{2,4})?(?:\D|$)`)
)

// readDate reads a checkup date. ok is false for a value that is there but is not a date that
// can be read with certainty; dateTrouble says why.
func readDate(raw parse.Value) (d *schema.Date, ok bool) {
	s, null, ok := dateString(raw)
	if null || !ok {
		return nil, ok
	}
	if y, mo, day, ok := monthDate(s); ok {
		date, err := schema.NewDate(y, mo, day)
		if err != nil {
			return nil, false
		}
		return &date, true
	}
	s = cnDigits(s)
	m := datePattern.FindStringSubmatch(s)
	if m == nil {
		m = compactDate.FindStringSubmatch(s)
	}
	if m == nil || !timePattern.MatchString(m[4]) {
		return nil, false
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	day, _ := strconv.Atoi(m[3])
	date, err := schema.NewDate(y, time.Month(mo), day)
	if err != nil {
		return nil, false
	}
	return &date, true
}

// dateString is a date value as text to read: narrowed, cleaned, without a time-of-day word.
// null reports a null or a null word; ok is false for a value no date can be (a list, a bool).
func dateString(raw parse.Value) (s string, null, ok bool) {
	switch raw.Kind {
	case parse.Null:
		return "", true, true
	case parse.String:
		s = lexicon.Narrow(clean(raw.Text))
		if isNullWord(s) {
			return "", true, true
		}
	case parse.Number:
		s = raw.Text
	default:
		return "", false, false
	}
	for _, w := range timeOfDay {
		s = strings.TrimSpace(strings.TrimSuffix(s, w))
	}
	return s, false, true
}

// dateTrouble says why a date that is there was not read, as its invalid_date warning's reason
// (its row in internal/msg): a template's placeholder, a date that can be read more than one way,
// a year and month with no day, or no calendar date at all (2026-02-30). Only called for a date
// readDate refused.
func dateTrouble(raw parse.Value) string {
	s, _, ok := dateString(raw)
	switch {
	case !ok:
		return "not_date"
	case isPlaceholder(s):
		return "placeholder"
	case yearPrefix.MatchString(cnDigits(s)), func() bool { _, ok := monthYear(s); return ok }():
		return "no_day"
	case minguoDate.MatchString(s):
		return "minguo"
	case ambiguousDate.MatchString(s), shortYearMonthDate(s):
		return "ambiguous"
	}
	return "not_date"
}

// minguoDate is a date whose year has three digits, 100 to 199 (115年03月05日, 115/03/05): a
// Minguo year (民國115年 is 2026) written without 民國, or a year misread. It is not read.
var minguoDate = regexp.MustCompile(`^(1\d{2})\s*(?:年\s*\d{1,2}\s*月\s*\d{1,2}\s*[日号號]?|[-/.]\s*\d{1,2}\s*[-/.]\s*\d{1,2})(?:\D|$)`)

// minguoYear is the Gregorian year a date's three-digit year would be in the Minguo calendar,
// for the warning that says it is not read as one.
func minguoYear(raw parse.Value) string {
	s, _, _ := dateString(raw)
	m := minguoDate.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	y, _ := strconv.Atoi(m[1])
	return strconv.Itoa(1911 + y)
}

// cnDigits writes a date's Chinese numerals as digits — 二〇二六年三月五日 and 二零二六年三月十五日
// become 2026年3月5日 and 2026年3月15日 — and a Minguo year (民國115年, Taiwan's calendar) as the
// Gregorian year. A year's numerals are read digit by digit; a month's or day's with 十 as tens.
func cnDigits(s string) string {
	if !strings.ContainsAny(s, "〇○零一二三四五六七八九十民") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if cnDigit(rs[i]) < 0 && rs[i] != '十' || i > 0 && strings.ContainsRune("期周週拜", rs[i-1]) { // 星期四 is a day of the week
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && (cnDigit(rs[j]) >= 0 || rs[j] == '十') {
			j++
		}
		run := rs[i:j]
		if t := slices.Index(run, '十'); t >= 0 {
			tens, ones := 1, 0
			if t == 1 {
				tens = cnDigit(run[0])
			}
			if t+1 < len(run) {
				ones = cnDigit(run[t+1])
			}
			if t > 1 || len(run) > t+2 || tens < 0 || ones < 0 || slices.Contains(run[t+1:], '十') {
				b.WriteString(string(run)) // not a number of 1 to 99: left as written
			} else {
				b.WriteString(strconv.Itoa(tens*10 + ones))
			}
		} else {
			for _, r := range run {
				b.WriteByte(byte('0' + cnDigit(r)))
			}
		}
		i = j
	}
	s = b.String()
	for _, era := range []string{"民国", "民國"} {
		rest, ok := strings.CutPrefix(s, era)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		n := 0
		for n < len(rest) && n < 3 && isDigit(rest[n]) {
			n++
		}
		if y, err := strconv.Atoi(rest[:n]); err == nil && y > 0 && n < len(rest) && !isDigit(rest[n]) {
			return strconv.Itoa(1911+y) + rest[n:]
		}
	}
	return s
}

// cnDigit is the value of a Chinese numeral 〇 to 九, or -1.
func cnDigit(r rune) int {
	switch r {
	case '〇', '○', '零':
		return 0
	case '一':
		return 1
	case '二':
		return 2
	case '三':
		return 3
	case '四':
		return 4
	case '五':
		return 5
	case '六':
		return 6
	case '七':
		return 7
	case '八':
		return 8
	case '九':
		return 9
	}
	return -1
}

// monthWords are the month names and abbreviations a date may be written with, lower case.
var monthWords = map[string]time.Month{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
	"jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
	"oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

// weekdayWords may stand before a date written with its month as a word: Thu, 5 March 2026.
var weekdayWords = []string{"mon", "monday", "tue", "tues", "tuesday", "wed", "wednesday", "thu", "thur", "thurs", "thursday", "fri", "friday", "sat", "saturday", "sun", "sunday"}

// monthDate reads a date with the month as a word, in any order of its parts — 05-Mar-2026,
// 5 March 2026, March 5, 2026, Mar. 5th 2026, 2026-Mar-05 — and an optional time after it
// (timeWords): with the month a word and the year four digits, the day cannot be misread. A
// two-digit year (05-Mar-26) could be the day, and is not read.
func monthDate(s string) (year int, month time.Month, day int, ok bool) {
	// Every such date has a month word: without a Latin letter there is none (the common case).
	if !strings.ContainsFunc(s, isLatinLetter) {
		return 0, 0, 0, false
	}
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && strings.IndexByte(" ,.-/", rest[i]) >= 0 {
			i++
		}
		rest = rest[i:]
		if rest == "" {
			break
		}
		j := 0
		for j < len(rest) && strings.IndexByte(" ,.-/", rest[j]) < 0 {
			j++
		}
		tok := rest[:j]
		if strings.IndexByte(tok, ':') >= 0 { // the time: it and all after it
			if year == 0 || !timeWords(rest) {
				return 0, 0, 0, false
			}
			break
		}
		rest = rest[j:]
		n := 0
		for n < len(tok) && isDigit(tok[n]) {
			n++
		}
		switch {
		case n == 4 && n == len(tok) && year == 0:
			year, _ = strconv.Atoi(tok)
		case n >= 1 && n <= 2 && day == 0 && (n == len(tok) || isOrdinal(tok[n:])):
			day, _ = strconv.Atoi(tok[:n])
		case n == 0 && month == 0 && monthWord(tok) > 0:
			month = monthWord(tok)
		case n == 0 && month == 0 && year == 0 && day == 0 && isWeekday(tok):
		default:
			return 0, 0, 0, false
		}
	}
	if year == 0 || month == 0 || day == 0 {
		return 0, 0, 0, false
	}
	return year, month, day, true
}

// monthYear reads a month in words and a four-digit year without a day (March 2026, Mar-2026):
// the year is certain.
func monthYear(s string) (int, bool) {
	f := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" ,.-/", r) })
	if len(f) != 2 {
		return 0, false
	}
	if monthWord(f[1]) > 0 {
		f[0], f[1] = f[1], f[0]
	}
	if monthWord(f[0]) == 0 || len(f[1]) != 4 || strings.Trim(f[1], "0123456789") != "" {
		return 0, false
	}
	y, _ := strconv.Atoi(f[1])
	return y, true
}

// shortYearMonthDate reports a date with its month in words but a year of two digits (05-Mar-26):
// the 26 could be the day.
func shortYearMonthDate(s string) bool {
	if !strings.ContainsFunc(s, isLatinLetter) {
		return false
	}
	f := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" ,.-/", r) })
	months, short := 0, 0
	for _, t := range f {
		if monthWord(t) > 0 {
			months++
		} else if len(t) <= 2 && strings.Trim(t, "0123456789") == "" {
			short++
		}
	}
	return len(f) == 3 && months == 1 && short == 2
}

func monthWord(tok string) time.Month {
	if len(tok) > 9 {
		return 0
	}
	var buf [9]byte
	for i := 0; i < len(tok); i++ {
		buf[i] = tok[i] | 0x20
	}
	return monthWords[string(buf[:len(tok)])]
}

func isWeekday(tok string) bool {
	for _, w := range weekdayWords {
		if strings.EqualFold(tok, w) {
			return true
		}
	}
	return false
}

func isOrdinal(s string) bool {
	for _, o := range []string{"st", "nd", "rd", "th"} {
		if strings.EqualFold(s, o) {
			return true
		}
	}
	return false
}

// timeWords reports whether s is only a time of day: digits, colons, a fraction, AM/PM, a zone.
func timeWords(s string) bool {
	for _, f := range strings.Fields(s) {
		switch strings.ToUpper(f) {
		case "AM", "PM", "A.M.", "P.M.", "Z", "UTC", "GMT", "CST", "HKT":
			continue
		}
		if strings.Trim(f, "0123456789:.+-") != "" {
			return false
		}
	}
	return true
}

func isLatinLetter(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' }

// yearOf reads the year of a date written without its day (2026年3月, 2026-03, 2026年): the
// year is certain though the date is not. An impossible date (2026-02-30) gives no year: a
// misread there may be anywhere.
var yearPrefix = regexp.MustCompile(`^(\d{4})\s*(?:年\s*$|[/.-]\s*\d{1,2}\s*$|年\s*\d{1,2}\s*月\s*$)`)

func yearOf(raw parse.Value) (int, bool) {
	if raw.Kind != parse.String {
		return 0, false
	}
	s := lexicon.Narrow(strings.TrimSpace(raw.Text))
	if y, ok := monthYear(s); ok { // March 2026
		return y, y >= 1900 && y <= 2100
	}
	m := yearPrefix.FindStringSubmatch(cnDigits(s))
	if m == nil {
		return 0, false
	}
	y, _ := strconv.Atoi(m[1])
	return y, y >= 1900 && y <= 2100
}

// readYear reads a report year: 2026, "2026", "2026年".
func readYear(raw parse.Value) (y *int, ok bool) {
	var s string
	switch raw.Kind {
	case parse.Null:
		return nil, true
	case parse.Number:
		s = raw.Text
	case parse.String:
		s = lexicon.Narrow(clean(raw.Text))
		if isNullWord(s) {
			return nil, true
		}
		s = strings.TrimSpace(strings.TrimSuffix(cnDigits(s), "年"))
	default:
		return nil, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1900 || n > 2100 {
		return nil, false
	}
	return &n, true
}

// readText reads a text field: a trimmed string, null for null words. Numbers become their
// digits (a hospital named by a number is odd, but it is what was written).
func readText(raw parse.Value, a *arena) (s *string, ok bool) {
	switch raw.Kind {
	case parse.Null:
		return nil, true
	case parse.String:
		t := clean(raw.Text)
		if isNullWord(t) {
			return nil, true
		}
		return a.str(t), true
	case parse.Number:
		t := raw.Text
		return a.str(t), true
	default:
		return nil, false
	}
}

// arena hands out pointers for a draft's nullable fields from chunks, so that a reply costs a few
// allocations instead of one per field. A full chunk is left as it is and a new one started, so
// pointers already handed out stay valid.
type arena struct {
	strs     []string
	decs     []schema.Decimal
	flags    []schema.Flag
	readings []schema.RefReading
	spanBuf  []schema.RefSpan
	lex      *lexicon.Lexicon // reads ranges: the build's
}

// reading keeps the reading of spans (the caller's buffer, copied into the arena), whose unit
// is the last one's, as ReadRange's.
func (a *arena) reading(spans []schema.RefSpan) *schema.RefReading {
	n := len(spans)
	if cap(a.spanBuf)-len(a.spanBuf) < n {
		a.spanBuf = make([]schema.RefSpan, 0, max(n, 16))
	}
	at := len(a.spanBuf)
	a.spanBuf = append(a.spanBuf, spans...)
	if len(a.readings) == cap(a.readings) {
		a.readings = make([]schema.RefReading, 0, 16)
	}
	kept := a.spanBuf[at:len(a.spanBuf):len(a.spanBuf)]
	a.readings = append(a.readings, schema.RefReading{Spans: kept, Unit: kept[n-1].Unit})
	return &a.readings[len(a.readings)-1]
}

const arenaChunk = 64

func (a *arena) str(s string) *string {
	if len(a.strs) == cap(a.strs) {
		a.strs = make([]string, 0, arenaChunk)
	}
	a.strs = append(a.strs, s)
	return &a.strs[len(a.strs)-1]
}

func (a *arena) flag(f schema.Flag) *schema.Flag {
	if len(a.flags) == cap(a.flags) {
		a.flags = make([]schema.Flag, 0, arenaChunk)
	}
	a.flags = append(a.flags, f)
	return &a.flags[len(a.flags)-1]
}

func (a *arena) dec(d schema.Decimal) *schema.Decimal {
	if len(a.decs) == cap(a.decs) {
		a.decs = make([]schema.Decimal, 0, arenaChunk)
	}
	a.decs = append(a.decs, d)
	return &a.decs[len(a.decs)-1]
}

// clean trims a string, decodes HTML entities (&lt;5.0 is <5.0: some models escape their text)
// and drops quotes wrapped around the whole of it ('5.6', "6.2"), which a model adds by mistake.
func clean(s string) string {
	s = strings.TrimSpace(s)
	if strings.IndexByte(s, '&') >= 0 && strings.IndexByte(s, ';') >= 0 {
		s = strings.TrimSpace(html.UnescapeString(s))
	}
	if s == "" || s[0] != '\'' && s[0] != '"' && s[0] < utf8.RuneSelf {
		return s // no quote can open it: the common case
	}
	for _, q := range wrapQuotes {
		if len(s) >= len(q[0])+len(q[1])+1 && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) {
			inner := s[len(q[0]) : len(s)-len(q[1])]
			if !strings.Contains(inner, q[0]) && !strings.Contains(inner, q[1]) {
				return strings.TrimSpace(inner)
			}
		}
	}
	return s
}

// sameUnit compares units as written loosely: case, spaces, a leading multiplication sign,
// micro signs and superscript digits do not matter (×10^9/L is 10⁹/L).
func sameUnit(a, b string) bool { return unitKey(a) == unitKey(b) || lexicon.SameUnit(a, b) }

var unitFold = strings.NewReplacer(" ", "", "^", "", "μ", "u", "µ", "u",
	"⁰", "0", "¹", "1", "²", "2", "³", "3", "⁴", "4", "⁵", "5", "⁶", "6", "⁷", "7", "⁸", "8", "⁹", "9")

func unitKey(u string) string {
	u = strings.ToLower(unitFold.Replace(lexicon.Narrow(u)))
	return strings.TrimLeft(u, "×x*")
}

// multiplier is a power of ten written before a unit: ×10^3, x10^9, *10^12, ×10³, and without
// the sign 10^3, 10*3, 10E3, 10³ (never 103).
var multiplier = regexp.MustCompile(`^(?:[×xX*]\s*10(?:\^|\*\*?|[eE])?[-+]?\d+|[×xX*]?\s*10(?:\^|\*\*?|[eE])[-+]?\d+|[×xX*]?\s*10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)$`)

func isMultiplier(u string) bool { return multiplier.MatchString(strings.TrimSpace(u)) }

// leadingMultiplier returns the multiplier a unit starts with (×10^9 of ×10^9/L), or "".
func leadingMultiplier(u string) string {
	u = strings.TrimSpace(u)
	for i := len(u); i > 0; i-- {
		if isMultiplier(u[:i]) {
			return u[:i]
		}
	}
	return ""
}

// censors reports whether text is a bound on the number rather than a value: "<0.5" beside 0.5,
// "≥1000" beside 1000. The number alone would read as an exact result.
func censors(text string, num schema.Decimal, a *arena) bool {
	var buf [1]schema.RefSpan
	r, ok := a.lex.ReadRangeInto(buf[:0], lexicon.Narrow(strings.TrimSpace(text)))
	if !ok || len(r.Spans) != 1 {
		return false
	}
	sp := r.Spans[0]
	return sp.HasLow != sp.HasHigh && (sp.HasLow && sp.Low.Equal(num) || sp.HasHigh && sp.High.Equal(num))
}
