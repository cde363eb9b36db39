package lexicon

import (
	"strings"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/schema"
)

// The vocabulary of printed reference ranges: one table per kind of word, so that the reader of a
// draft and the checks read a range the same way. Full-width forms (－ ～ ＜ ＞ ： （ ）, digits and
// letters) are folded to ASCII before the tables are consulted, and Traditional characters to
// Simplified where they differ. Longer words come before their prefixes.

// rangeSeparators stand between the two bounds of a span: 3.9-6.1, 3.9～6.1, 3.9 至 6.1, 4 to 10.
// "--" is read only when "-" would make the upper bound negative (3.5--5.5), so that -3--1 stays
// -3 to -1.
// The dashes are every one a reply was seen to print: hyphen ‐ and non-breaking hyphen ‑, figure
// dash ‒, en dash –, em dash — (doubled as a Chinese dash ——), horizontal bar ―, the small em dash
// ﹘ and the wave dash 〜; full-width －, ～ and the small hyphen-minus ﹣ are folded first (Narrow).
var rangeSeparators = []string{"-", "--", "~", "–", "——", "—", "―", "‒", "‐", "‑", "﹘", "〜", "∼", "至", "到", "to", "TO", "To"}

// comparator is a word that bounds a span on one side: high says it gives the upper bound,
// open that the bound itself is outside (< rather than ≤). after marks a word printed after the
// number (5.2以下).
type comparator struct {
	word         string
	high, open   bool
	after, word2 bool // word2: an ASCII word, matched as a whole word
}

// rangeComparators are the one-sided notations: <5.2 gives the upper bound only, ≥1.04 the lower.
var rangeComparators = []comparator{
	// Quest Diagnostics prints ≤ and ≥ as "< OR =" and "> OR =" (> OR = 40).
	{word: "< or =", high: true, word2: true}, {word: "<or=", high: true, word2: true},
	{word: "> or =", high: false, word2: true}, {word: ">or=", high: false, word2: true},
	{word: "<=", high: true}, {word: "≤", high: true}, {word: "≦", high: true}, {word: "⩽", high: true},
	{word: "小于等于", high: true}, {word: "小于或等于", high: true}, {word: "不超过", high: true}, {word: "不高于", high: true},
	{word: "<", high: true, open: true}, {word: "小于", high: true, open: true}, {word: "低于", high: true, open: true},
	{word: "less than", high: true, open: true, word2: true},
	{word: "up to", high: true, word2: true},
	{word: ">=", high: false}, {word: "≥", high: false}, {word: "≧", high: false}, {word: "⩾", high: false},
	{word: "大于等于", high: false}, {word: "大于或等于", high: false}, {word: "不低于", high: false}, {word: "不小于", high: false},
	{word: ">", high: false, open: true}, {word: "大于", high: false, open: true}, {word: "高于", high: false, open: true},
	{word: "greater than", high: false, open: true, word2: true}, {word: "more than", high: false, open: true, word2: true},
	{word: "及以下", high: true, after: true}, {word: "以下", high: true, after: true}, {word: "以内", high: true, after: true},
	{word: "及以上", high: false, after: true}, {word: "以上", high: false, after: true},
}

// sexWord names whom the span beside it is for. ASCII words match whole, case-insensitively, and
// not after a slash (kg/m2 is no man).
type sexWord struct {
	word string
	sex  schema.Sex
}

// rangeSexWords name the sexes in a range printed per sex: 男：40-50；女：35-45, M 13-17 F 12-15,
// 130-175(M), Males 30-500; Females 15-200. 男 and 女 are the same characters in Traditional.
var rangeSexWords = []sexWord{
	{"成年男性", schema.SexMale}, {"成年女性", schema.SexFemale}, {"男性", schema.SexMale}, {"女性", schema.SexFemale},
	{"男士", schema.SexMale}, {"女士", schema.SexFemale}, {"男子", schema.SexMale}, {"女子", schema.SexFemale},
	{"男", schema.SexMale}, {"女", schema.SexFemale},
	{"females", schema.SexFemale}, {"female", schema.SexFemale}, {"women", schema.SexFemale}, {"woman", schema.SexFemale},
	{"males", schema.SexMale}, {"male", schema.SexMale}, {"men", schema.SexMale}, {"man", schema.SexMale},
	{"f", schema.SexFemale}, {"m", schema.SexMale},
}

// rangeConditions are words that say a span is for a condition other than sex: an age group, a
// pregnancy, a cycle phase, a fasting state. A span printed with one is for that condition; which
// applies to the patient is not the reader's to say. Any other word before each of several spans
// counts as a condition too (卵泡期 3.5-12.5 黄体期 1.7-7.7).
var rangeConditions = []string{
	"成人", "成年", "儿童", "小儿", "婴儿", "新生儿", "青少年", "老年", "老人",
	"孕早期", "孕中期", "孕晚期", "孕妇", "妊娠", "非孕", "孕期", "绝经后", "绝经前", "绝经期", "绝经",
	"卵泡期", "黄体期", "排卵期", "月经期", "空腹", "餐后",
	"adults", "adult", "children", "child", "infants", "infant", "newborns", "newborn", "neonates", "neonate", "elderly",
	"pregnancy", "pregnant", "non-pregnant", "postmenopausal", "premenopausal", "menopause", "follicular", "luteal",
	"ovulation", "ovulatory", "midcycle", "trimester", "fasting",
}

// rangeAges follow the numbers of an age band, which is a condition and no range: 男(20-79岁),
// 儿童(<14岁), >60 years.
var rangeAges = []string{"周岁", "岁", "years", "year", "yrs", "yr", "y", "Y", "个月", "月龄", "天"}

// rangeLabels may stand before a range and say nothing about it: 参考值：40-55.
var rangeLabels = []string{
	"参考值", "参考范围", "参考区间", "正常值", "正常范围", "参考",
	"reference range", "reference interval", "reference", "ref range", "ref", "normal range", "normal", "range", "RR",
}

// unitStarts are the characters a unit may start with besides ASCII letters; unitChars those it
// may hold besides ASCII letters and digits.
const (
	unitStarts = "%‰×*μµ℃°个秒次分倍克毫微纳皮升滴"
	unitChars  = "%‰×*·^/.-μµ℃°⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻个秒次分倍克毫微纳皮升滴天小时钟"
)

// firsts marks the bytes a word of a table may start with (either case for ASCII), so that a
// position no word starts at is passed over without trying each word.
type firsts [256]bool

func firstsOf(words ...[]string) *firsts {
	var f firsts
	for _, ws := range words {
		for _, w := range ws {
			c := w[0]
			f[c] = true
			if isLetterByte(c) {
				f[c|0x20], f[c&^0x20] = true, true
			}
		}
	}
	return &f
}

func wordsOf[T any](list []T, word func(T) string) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = word(x)
	}
	return out
}

var (
	cmpFirst   = firstsOf(wordsOf(rangeComparators, func(c comparator) string { return c.word }))
	sexFirst   = firstsOf(wordsOf(rangeSexWords, func(w sexWord) string { return w.word }))
	labelFirst = firstsOf(rangeLabels)
	ageFirst   = firstsOf(rangeAges)
	sepFirst   = firstsOf(rangeSeparators)
)

// Limits on what one range is read for: longer than any printed one, so that a hostile value
// costs nothing.
const (
	maxRangeLen   = 300
	maxRangeSpans = 8
)

// ReadRange reads a printed reference range into what it says: its spans in printed order, each
// with its bounds as printed, the comparator that bounded it, the sex or condition it is printed
// for, and its unit. ok is false when the text has digits but no notation the vocabulary knows (a
// lone number, 1:100 is a dilution and reads as no spans with ok true), or more than
// maxRangeSpans spans. Text without digits (阴性) is qualitative: no spans, ok.
//
// Marks and spans pair by where they stand: when the text starts with a span and its first mark
// follows a span with no separator between them, each mark is for the span before it
// ("4.3-5.8(男) 3.8-5.1(女)", "130-175 男性"); else each span is for the marks before it
// ("男：40-50；女：35-45", "成人：男 40-50 女 35-45", "130-175；女 115-150": the first for all).
func (l *Lexicon) ReadRange(text string) (schema.RefReading, bool) { return l.ReadRangeInto(nil, text) }

// ReadRangeInto is ReadRange with the spans appended to buf[:0], so that a caller reading many
// ranges (or one it does not keep) need not allocate for each.
func (l *Lexicon) ReadRangeInto(buf []schema.RefSpan, text string) (schema.RefReading, bool) {
	if len(text) > maxRangeLen {
		return schema.RefReading{}, false
	}
	s := foldRange(strings.TrimSpace(text))
	var sp schema.RefSpan
	if n, age := spanAt(s, 0, &sp); n > 0 && n == len(s) && !age { // one span and nothing else: most ranges
		return schema.RefReading{Spans: append(buf[:0], sp), Unit: sp.Unit}, true
	}
	if !hasDigit(s) {
		return schema.RefReading{}, true
	}
	if isTitre(s) {
		return schema.RefReading{}, true
	}
	if sp, ok := readList(s); ok {
		return schema.RefReading{Spans: append(buf[:0], sp), Unit: sp.Unit}, true
	}
	var r rangeReader
	if !r.scan(s) || r.nspans == 0 {
		return schema.RefReading{}, false
	}
	if !r.pair() {
		return schema.RefReading{}, false
	}
	spans := append(buf[:0], r.spanBuf[:r.nspans]...) // the caller's: r stays on the stack
	return schema.RefReading{Spans: spans, Unit: spans[len(spans)-1].Unit}, true
}

// rangeReader is one reading: the spans scan found, in printed order, and the marks among them.
type rangeReader struct {
	spanBuf [maxRangeSpans]schema.RefSpan
	nspans  int
	items   [2 * maxRangeSpans]item
	n       int
	words   int  // words that are neither labels, sexes nor known conditions
	apart   bool // a group separator since the last item
}

// item is a span (its index in spans) or a mark (a sex, a condition, an age band), in printed
// order.
type item struct {
	kind itemKind
	span uint8
	sex  schema.Sex
	text string // a condition's or an age band's words as printed
	// apart: a separator between groups (; , / a new line) stands between it and the item
	// before it.
	apart bool
}

type itemKind uint8

const (
	isSpan itemKind = iota
	isSex
	isCond
	isAge
)

func (r *rangeReader) add(it item) bool {
	if r.n == len(r.items) {
		return false
	}
	it.apart, r.apart = r.apart, false
	r.items[r.n] = it
	r.n++
	return true
}

func (r *rangeReader) addSpan(sp schema.RefSpan) bool {
	if r.nspans == maxRangeSpans {
		return false
	}
	r.spanBuf[r.nspans] = sp
	r.nspans++
	return r.add(item{kind: isSpan, span: uint8(r.nspans - 1)})
}

// scan reads s into spans and items; false when s holds something no range has (a stray
// number), or too much.
func (r *rangeReader) scan(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || strings.IndexByte("()[]{}:.", c) >= 0:
			i++
			continue
		case c == '\n' || strings.IndexByte(";,/|", c) >= 0 || strings.HasPrefix(s[i:], "、"):
			r.apart = true
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		if n := labelAt(s, i); n > 0 {
			i += n
			continue
		}
		var sp schema.RefSpan
		if n, age := spanAt(s, i, &sp); n > 0 {
			ok := false
			if age {
				ok = r.add(item{kind: isAge, text: strings.TrimSpace(s[i : i+n])})
			} else {
				ok = r.addSpan(sp)
			}
			if !ok {
				return false
			}
			i += n
			continue
		}
		if isDigitByte(c) || c == '.' && i+1 < len(s) && isDigitByte(s[i+1]) {
			return false // a number that is no span: 5.2 alone, 1:100 in words
		}
		if sx, n := sexAt(s, i); n > 0 {
			if !r.add(item{kind: isSex, sex: sx}) {
				return false
			}
			i += n
			continue
		}
		n, known := wordAt(s, i)
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s[i:])
			i += n
			continue
		}
		if !known {
			r.words++
		}
		if !r.add(item{kind: isCond, text: s[i : i+n]}) {
			return false
		}
		i += n
	}
	return true
}

// pair gives each span its marks. A word the vocabulary does not know makes a condition only
// when there are several spans to tell apart; beside a single span it is text no range has,
// and the reading fails.
func (r *rangeReader) pair() bool {
	spans := r.spanBuf[:r.nspans]
	if r.words > 0 && len(spans) < 2 {
		return false
	}
	items := r.items[:r.n]
	switch {
	case len(items) == len(spans): // no marks: the common case
	case items[0].kind == isSpan && !firstMark(items).apart: // marks after their spans: 4.3-5.8(男) 3.8-5.1(女)
		last := &spans[0]
		for _, it := range items {
			if it.kind == isSpan {
				last = &spans[it.span]
				continue
			}
			setMark(last, it, true)
		}
	default:
		prefixMarks(items, spans)
	}
	return true
}

// firstMark is the first mark among items (there is one: pair has more items than spans).
func firstMark(items []item) item {
	for _, it := range items {
		if it.kind != isSpan {
			return it
		}
	}
	return item{}
}

// prefixMarks gives each span the marks before it. A mark holds until another of its kind; the
// kind printed first is the outer one, and a new outer mark ends the inner ones ("男：成人 40-50
// 儿童 30-40；女：…" and "成人：男 40-50 女 35-45" both read as meant). An inner mark that comes
// after a group's span, in a group that had none of its kind, starts a group of its own
// ("男 130-175 女 115-150 儿童 110-160": the children's range is no woman's). Marks of one
// kind in a row are one mark in several words (Child (<14 years)).
func prefixMarks(items []item, spans []schema.RefSpan) {
	var cur schema.RefSpan // the marks in force
	outer := isSpan        // the kind printed first
	var had [isAge + 1]bool
	spanned := false // the group has had a span
	for k, it := range items {
		if it.kind == isSpan {
			sp := &spans[it.span]
			sp.Sex, sp.Cond, sp.Age = cur.Sex, cur.Cond, cur.Age
			spanned = true
			continue
		}
		if outer == isSpan {
			outer = it.kind
		}
		joined := k > 0 && items[k-1].kind == it.kind
		if it.kind == outer && !joined || it.kind != outer && spanned && !had[it.kind] {
			cur, had, spanned = schema.RefSpan{}, [isAge + 1]bool{}, false
		}
		had[it.kind] = true
		setMark(&cur, it, joined)
	}
}

// setMark writes a mark into sp; joined adds its words to the mark of its kind already there.
func setMark(sp *schema.RefSpan, it item, joined bool) {
	field := &sp.Cond
	switch it.kind {
	case isSex:
		if joined && sp.Sex != "" && sp.Sex != it.sex {
			sp.Sex = "" // 男/女：0-40: both sexes, so no one sex
		} else {
			sp.Sex = it.sex
		}
		return
	case isAge:
		field = &sp.Age
	}
	if joined && *field != "" {
		*field += " " + it.text
	} else {
		*field = it.text
	}
}

// spanAt reads a span at s[i:]: [comparator] number [power of ten] [separator number] [unit]
// [comparator after]. age says the span was an age band (20-79岁), a condition and no range.
func spanAt(s string, i int, sp *schema.RefSpan) (n int, age bool) {
	j := i
	cmpHigh, cmpOpen, hasCmp := false, false, false
	if c, m := comparatorAt(s, j, false); m > 0 {
		cmpHigh, cmpOpen, hasCmp = c.high, c.open, true
		j = skipBlank(s, j+m)
	}
	lo, m := numberAt(s, j)
	if m == 0 {
		return 0, false
	}
	j += m
	if hasCmp {
		if cmpHigh {
			sp.High, sp.HasHigh, sp.HighOpen = lo, true, cmpOpen
		} else {
			sp.Low, sp.HasLow, sp.LowOpen = lo, true, cmpOpen
		}
		return finishSpan(s, i, j, sp)
	}
	k := skipBlank(s, j)
	mult := multiplierAt(s, k)
	if mult > 0 {
		k = skipBlank(s, k+mult)
	}
	if hi, end, ok := upperAt(s, k, lo); ok {
		if mult > 0 && !sameMultiplier(s[j:k], s[end:]) {
			return 0, false // 4.0×10^9-10.0: the high bound must carry it too
		}
		sp.Low, sp.HasLow, sp.High, sp.HasHigh = lo, true, hi, true
		return finishSpan(s, i, end, sp) // 4.0×10^9-10.0×10^9/L: the power of ten is the unit's
	}
	if c, m := comparatorAt(s, skipBlank(s, j), true); m > 0 { // 5.2以下
		if c.high {
			sp.High, sp.HasHigh = lo, true
		} else {
			sp.Low, sp.HasLow = lo, true
		}
		return finishSpan(s, i, skipBlank(s, j)+m, sp)
	}
	if a := ageAt(s, skipBlank(s, j)); a > 0 { // 60岁
		return skipBlank(s, j) + a - i, true
	}
	return 0, false // a lone number is no range
}

// upperAt reads a separator and the upper bound at s[k:].
func upperAt(s string, k int, lo schema.Decimal) (schema.Decimal, int, bool) {
	if k >= len(s) || !sepFirst[s[k]] {
		return schema.Decimal{}, 0, false
	}
	for _, sep := range rangeSeparators {
		if !strings.HasPrefix(s[k:], sep) || isASCIIWord(sep) && !wordBoundary(s, k, len(sep)) {
			continue
		}
		at := skipBlank(s, k+len(sep))
		hi, m := numberAt(s, at)
		if m == 0 {
			continue
		}
		if sep == "-" && s[at] == '-' && lo.Cmp(hi) > 0 {
			continue // 3.5--5.5: the second dash is a separator too, not a sign
		}
		return hi, at + m, true
	}
	return schema.Decimal{}, 0, false
}

// finishSpan reads what may follow a span's last number at s[j:] (a unit, an age word, a
// comparator printed after), and returns the span and its length from i.
func finishSpan(s string, i, j int, sp *schema.RefSpan) (int, bool) {
	k := skipBlank(s, j)
	if a := ageAt(s, k); a > 0 {
		return k + a - i, true
	}
	if _, m := sexAt(s, k); m > 0 {
		return j - i, false
	}
	if u := unitAt(s, k); u > 0 {
		sp.Unit = s[k : k+u]
		j = k + u
	}
	if c, m := comparatorAt(s, skipBlank(s, j), true); m > 0 && !sp.HasLow && c.high == sp.HasHigh {
		j = skipBlank(s, j) + m // ≤5.2以下: said twice
	}
	return j - i, false
}

// numberAt reads a decimal at s[i:]: a sign, digits with optional thousands commas (1,024.5 but
// not 1,5), a fraction, an exponent (3.5E+09). 0 when none.
func numberAt(s string, i int) (schema.Decimal, int) {
	j := i
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	start := j
	for j < len(s) && isDigitByte(s[j]) {
		j++
	}
	intDigits := j - start
	if intDigits >= 1 && intDigits <= 3 {
		k := j
		for k+3 < len(s) && s[k] == ',' && isDigitByte(s[k+1]) && isDigitByte(s[k+2]) && isDigitByte(s[k+3]) && (k+4 == len(s) || !isDigitByte(s[k+4])) {
			k += 4
		}
		j = k
	}
	if j < len(s) && s[j] == '.' && j+1 < len(s) && isDigitByte(s[j+1]) {
		j++
		for j < len(s) && isDigitByte(s[j]) {
			j++
		}
	}
	if j == start || j == start+1 && s[start] == '.' || intDigits == 0 && s[start] != '.' {
		return schema.Decimal{}, 0
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		e := k
		for k < len(s) && isDigitByte(s[k]) {
			k++
		}
		if k > e && (k == len(s) || !isLetterByte(s[k])) {
			j = k
		}
	}
	lit := s[i:j]
	if strings.IndexByte(lit, ',') >= 0 {
		lit = strings.ReplaceAll(lit, ",", "")
	}
	d, err := schema.ParseDecimal(lit)
	if err != nil {
		return schema.Decimal{}, 0
	}
	return d, j - i
}

// multiplierAt is the length of a power of ten at s[i:] (×10^9, x10^9, *10^12, ×10⁹), or 0.
func multiplierAt(s string, i int) int {
	j := i
	switch {
	case strings.HasPrefix(s[j:], "×"):
		j += len("×")
	case j < len(s) && (s[j] == 'x' || s[j] == 'X' || s[j] == '*'):
		j++
	default:
		return 0
	}
	j = skipBlank(s, j)
	if !strings.HasPrefix(s[j:], "10") {
		return 0
	}
	j += 2
	k := j
	if k < len(s) && s[k] == '^' {
		k++
	}
	if k < len(s) && (s[k] == '-' || s[k] == '+') {
		k++
	}
	d := k
	for k < len(s) && isDigitByte(s[k]) {
		k++
	}
	if k > d {
		return k - i
	}
	for k = j; k < len(s); {
		r, n := utf8.DecodeRuneInString(s[k:])
		if !strings.ContainsRune("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", r) {
			break
		}
		k += n
	}
	if k > j {
		return k - i
	}
	return 0
}

// sameMultiplier reports whether the unit after the high bound starts with the power of ten
// printed after the low one.
func sameMultiplier(low, rest string) bool {
	m := multiplierAt(rest, 0)
	return m > 0 && unitKeyOf(rest[:m]) == unitKeyOf(low)
}

func unitKeyOf(s string) string { return multFold.Replace(s) }

var multFold = strings.NewReplacer(" ", "", "^", "", "×", "", "x", "", "X", "", "*", "")

// unitAt is the length of a unit at s[i:] (mmol/L, ×10^9/L, 10^12/L, %, U/L), or 0.
func unitAt(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	start := r < utf8.RuneSelf && isLetterByte(byte(r)) || strings.ContainsRune(unitStarts, r) ||
		strings.HasPrefix(s[i:], "10^") || strings.HasPrefix(s[i:], "10*") ||
		r == '/' && i+1 < len(s) && isLetterByte(s[i+1])
	if !start {
		return 0
	}
	if n, known := wordAt(s, i); n > 0 && known {
		return 0 // adult, 成人: a condition, not a unit
	}
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !(r < utf8.RuneSelf && (isLetterByte(byte(r)) || isDigitByte(byte(r)))) && !strings.ContainsRune(unitChars, r) {
			break
		}
		if r == '-' && j+1 < len(s) && isDigitByte(s[j+1]) && j > i && !strings.ContainsRune("^", rune(s[j-1])) {
			break // g/L-5: a dash before a number is a separator
		}
		j += n
	}
	for j > i && (s[j-1] == '.' || s[j-1] == '-') {
		j--
	}
	return j - i
}

// comparatorAt reads a comparator at s[i:]; after picks the words printed after a number.
func comparatorAt(s string, i int, after bool) (comparator, int) {
	if i >= len(s) || !cmpFirst[s[i]] {
		return comparator{}, 0
	}
	for _, c := range rangeComparators {
		if c.after != after || !strings.HasPrefix(s[i:], c.word) && !(c.word2 && hasFoldPrefix(s[i:], c.word)) {
			continue
		}
		if c.word2 && !wordBoundary(s, i, len(c.word)) {
			continue
		}
		return c, len(c.word)
	}
	return comparator{}, 0
}

// sexAt reads a sex word at s[i:].
func sexAt(s string, i int) (schema.Sex, int) {
	if i >= len(s) || !sexFirst[s[i]] {
		return "", 0
	}
	if s[i] >= utf8.RuneSelf {
		for _, w := range rangeSexWords {
			if w.word[0] >= utf8.RuneSelf && strings.HasPrefix(s[i:], w.word) {
				return w.sex, len(w.word)
			}
		}
		return "", 0
	}
	if !isLetterByte(s[i]) || i > 0 && (isLetterByte(s[i-1]) || s[i-1] == '/' || isDigitByte(s[i-1])) {
		return "", 0
	}
	for _, w := range rangeSexWords {
		if w.word[0] < utf8.RuneSelf && hasFoldPrefix(s[i:], w.word) && wordBoundary(s, i, len(w.word)) {
			return w.sex, len(w.word)
		}
	}
	return "", 0
}

// labelAt is the length of a label at s[i:], with the colon after it, or 0.
func labelAt(s string, i int) int {
	if i >= len(s) || !labelFirst[s[i]] {
		return 0
	}
	for _, l := range rangeLabels {
		if hasFoldPrefix(s[i:], l) && (l[0] >= utf8.RuneSelf || wordBoundary(s, i, len(l))) {
			return len(l)
		}
	}
	return 0
}

// ageAt is the length of an age word at s[i:] (岁, years), or 0.
func ageAt(s string, i int) int {
	if i >= len(s) || !ageFirst[s[i]] {
		return 0
	}
	for _, a := range rangeAges {
		if strings.HasPrefix(s[i:], a) && (a[0] >= utf8.RuneSelf || wordBoundary(s, i, len(a))) {
			return len(a)
		}
	}
	return 0
}

// wordAt is the length of a word at s[i:] — a run of ASCII letters (a hyphen inside:
// non-pregnant) or of Han characters, up to a sex, a comparator, a label or an age word — and
// whether it holds a known condition; 0 when s[i:] starts no word.
func wordAt(s string, i int) (int, bool) {
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		han := r >= 0x4E00 && r <= 0x9FFF
		ascii := r < utf8.RuneSelf && (isLetterByte(byte(r)) || r == '-' && j > i && j+1 < len(s) && isLetterByte(s[j-1]) && isLetterByte(s[j+1]))
		if !han && !ascii {
			break
		}
		if han && j > i && stopsWord(s, j) {
			break
		}
		j += n
	}
	w := s[i:j]
	for _, c := range rangeConditions {
		if len(c) <= len(w) && (c[0] >= utf8.RuneSelf && strings.Contains(w, c) || c[0] < utf8.RuneSelf && strings.EqualFold(w, c)) {
			return j - i, true
		}
	}
	return j - i, false
}

// stopsWord: a sex, a comparator, a label or an age word at s[j:] ends the Han word before it
// (成人男性, 成人小于5.2).
func stopsWord(s string, j int) bool {
	if _, m := sexAt(s, j); m > 0 {
		return true
	}
	if _, m := comparatorAt(s, j, false); m > 0 {
		return true
	}
	if _, m := comparatorAt(s, j, true); m > 0 {
		return true
	}
	return labelAt(s, j) > 0 || ageAt(s, j) > 0
}

// readList reads a bracketed list of two bounds: [2.8, 5.2].
func readList(s string) (schema.RefSpan, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 5 || t[0] != '[' || t[len(t)-1] != ']' {
		return schema.RefSpan{}, false
	}
	a, b, ok := strings.Cut(t[1:len(t)-1], ",")
	if !ok {
		return schema.RefSpan{}, false
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	lo, n := numberAt(a, 0)
	hi, m := numberAt(b, 0)
	if n == 0 || m == 0 {
		return schema.RefSpan{}, false
	}
	ua, ub := strings.TrimSpace(a[n:]), strings.TrimSpace(b[m:])
	if ua != "" && unitAt(ua, 0) != len(ua) || ub != "" && unitAt(ub, 0) != len(ub) {
		return schema.RefSpan{}, false
	}
	return schema.RefSpan{Low: lo, HasLow: true, High: hi, HasHigh: true, Unit: cmpOr(ub, ua)}, true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// isTitre reports a dilution (1:100, <1:80): no bounds.
func isTitre(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == ':' {
			j := i - 1
			for j >= 0 && s[j] == ' ' {
				j--
			}
			k := i + 1
			for k < len(s) && s[k] == ' ' {
				k++
			}
			if j >= 0 && isDigitByte(s[j]) && k < len(s) && isDigitByte(s[k]) {
				return true
			}
		}
	}
	return false
}

// Narrow maps full-width forms (Ｕ+FF01–FF5E: １２．５, ｍｍｏｌ／Ｌ, ＜, ～) and the ideographic
// space to ASCII, for numbers, units, dates and ranges; text that is not a number keeps its own
// spelling. draft reads numbers, units and marks through it, and ReadRange a range.
func Narrow(s string) string {
	wide := false
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E || r == 0x3000 || r == '∼' || r == '−' || r == '﹣' {
			wide = true
			break
		}
	}
	if !wide {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			return r - 0xFEE0
		case r == 0x3000:
			return ' '
		case r == '∼':
			return '~'
		case r == '−' || r == '﹣': // the minus sign and the small hyphen-minus
			return '-'
		}
		return r
	}, s)
}

// foldRange is Narrow, and Traditional characters mapped to Simplified; the common case, plain
// ASCII with Simplified Han, is returned as it is.
func foldRange(s string) string {
	s = Narrow(s)
	trad := false
	for _, r := range s {
		if r >= 0x3400 && t2s(r) != r {
			trad = true
			break
		}
	}
	if !trad {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r >= 0x3400 {
			return t2s(r)
		}
		return r
	}, s)
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigitByte(s[i]) {
			return true
		}
	}
	return false
}

func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// wordBoundary reports whether s[i:i+n] stands apart from letters on both sides.
func wordBoundary(s string, i, n int) bool {
	return (i == 0 || !isLetterByte(s[i-1])) && (i+n >= len(s) || !isLetterByte(s[i+n]))
}

func isASCIIWord(w string) bool { return w != "" && isLetterByte(w[0]) }

// hasFoldPrefix reports whether s starts with p, ASCII letters of p in either case.
func hasFoldPrefix(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		a, b := s[i], p[i]
		if a != b && !(isLetterByte(a) && a|0x20 == b|0x20) {
			return false
		}
	}
	return true
}

func isDigitByte(c byte) bool  { return c >= '0' && c <= '9' }
func isLetterByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
