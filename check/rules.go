package check

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// rangeApplies (range_sex_specific, range_condition_specific) applies what decide chose for each
// row whose range is printed per sex or per condition, in one warning: the bounds of the span
// that applies to the patient, with params.sex (男 130-175 for a male patient; 4.3-5.8(男)
// 3.8-5.1(女) for a female one), or null bounds, refText kept, when none does or which one
// cannot be told: the sex not given, a range printed only for the other sex, a condition
// (成人, 孕早期) the caller cannot state, spans that differ by age. A value judged against
// another group's range would be wrongly flagged. It runs as two rows of Rules, one per code;
// each row's choice has one code, so a row gets one warning. On a confirmed draft it changes
// nothing and only warns when the bounds kept are none of the printed spans.
func rangeApplies(s *state) {
	for i := range s.rows {
		if s.stop() {
			return
		}
		r := &s.rows[i]
		c := r.choice
		if c.code != s.code {
			continue
		}
		ind := r.ind
		if s.ctx.Confirmed {
			if ind.RefLow == nil && ind.RefHigh == nil || r.anySpan() {
				continue
			}
			s.warn(i, "refLow", "confirmed", facts(ind))
			continue
		}
		field := "refText"
		if c.span != nil {
			r.setBounds(spanBounds(c.span))
			field = "refLow"
		} else {
			r.setBounds(nil, nil)
		}
		p := facts(ind)
		if c.span != nil {
			p["sex"] = string(s.ctx.Sex)
		}
		if c.sex != "" {
			p["printedSex"] = string(c.sex)
			p["sex"] = string(s.ctx.Sex)
		}
		if c.cond != "" {
			p["condition"] = c.cond
		}
		s.warn(i, field, c.reason, p)
	}
}

// anySpan reports whether the row's bounds are one of its printed spans.
func (r *row) anySpan() bool {
	for k := range r.rd.Spans {
		if isSpan(&r.rd.Spans[k], r.ind) {
			return true
		}
	}
	return false
}

// rangeImplausible (range_implausible), for a known analyte whose unit the lexicon knows:
//   - refText ends in another unit of the analyte than the value's ("70-110 mg/dL" beside
//     mmol/L), with a factor between them (not U/L beside IU/L): the bounds are not this
//     value's and are set to null, refText kept;
//   - the bounds are 3× or more off the lexicon's reference range in the value's unit (on the
//     geometric mean of the bounds' ratios, so one lab's narrower range does not count) and
//     within 1.6× of it in another of the analyte's units (glucose 70–110 beside mmol/L: 18×
//     off, and mg/dL fits): a range in another unit, without its unit printed. As for the first
//     case the bounds are not this value's (a client comparing 5.4 with 70 would call it low):
//     set to null, refText kept;
//   - an analyte without a lexicon range: a bound beyond the physiological limits in the unit
//     (an HDL range of 40–60 beside mmol/L, whose limit is 10). Kept as printed.
func rangeImplausible(s *state) {
	for i := range s.rows {
		if s.stop() {
			return
		}
		r := &s.rows[i]
		ind := r.ind
		if r.a == nil || r.u == nil || r.u.Factor == 0 {
			continue
		}
		if r.rd != nil {
			if tail := r.rd.Unit; tail != "" {
				if ru, ok := r.a.Unit(tail); ok && ru != r.u && ru.Factor != 0 && !near(ru.Factor/r.u.Factor, 1, 0.01) {
					p := facts(ind)
					p["refUnit"] = tail
					if !s.ctx.Confirmed {
						r.setBounds(nil, nil)
					}
					r.rangeBad = true
					s.warn(i, "refText", "other_unit", p)
					continue
				}
			}
		}
		lo, hi, hasLo, hasHi := r.bounds()
		if !hasLo && !hasHi {
			continue
		}
		if rl, rh, ok := r.u.Ref(); ok {
			if own := fit(lo, hi, hasLo, hasHi, rl, rh); own >= 3 {
				var best *lexicon.Unit
				bestFit := 1.6
				for k := range r.a.Units {
					w := &r.a.Units[k]
					if w == r.u || w.Factor == 0 || near(w.Factor/r.u.Factor, 1, 0.01) {
						continue
					}
					wl, wh, _ := w.Ref()
					if d := fit(lo, hi, hasLo, hasHi, wl, wh); d > 0 && d <= bestFit {
						best, bestFit = w, d
					}
				}
				if best != nil {
					p := facts(ind)
					p["expectedUnit"] = best.Name
					if !s.ctx.Confirmed {
						r.setBounds(nil, nil)
					}
					r.rangeBad = true
					s.warn(i, "refLow", "fits_other_unit", p)
					continue
				}
			}
		}
		if ll, lh, ok := r.u.Limits(); ok {
			if (hasHi && hi > lh) || (hasLo && lo > lh) || (hasHi && hi > 0 && hi < ll) {
				p := facts(ind)
				p["limitLow"], p["limitHigh"] = format(ll), format(lh)
				r.rangeBad = true
				s.warn(i, "refLow", "limits", p)
			}
		}
	}
}

// unitUnexpected (unit_unexpected): a number with a printed unit that the analyte is not
// measured in, under any of the spellings the lexicon folds (μ/u, ×10^9/L or 10*9/L), and that
// is a unit the lexicon knows for some other analyte (g/L beside cholesterol, mmol/L beside
// ALT): a spelling the lexicon lacks (sec, 次/分钟) is not the person's problem, unless the value
// fits none of the analyte's units either (MCH 304 "PE": a misread unit beside a misread value,
// which value_implausible also says). The name is first
// tried in every section (row.load), so that T in ℃ is a temperature and not a testosterone in
// the wrong unit. A unit with no letter or digit (-, /) is no unit.
func unitUnexpected(s *state) {
	for i := range s.rows {
		if s.stop() {
			return
		}
		r := &s.rows[i]
		if r.a == nil || r.u != nil || !r.hasV || r.a.Kind == lexicon.Qual || len(r.a.Units) == 0 || !isUnit(str(r.ind.Unit)) {
			continue
		}
		if !s.knownUnit(*r.ind.Unit) && !outsideAny(r) {
			continue
		}
		if s.unlisted() {
			continue
		}
		p := facts(r.ind)
		p["expectedUnit"] = unitNames(r.a)
		s.warn(i, "unit", "unknown", p)
	}
}

// outsideAny reports whether the row's value lies outside the analyte's limits in every unit it
// has: then its unit, whatever it is, cannot be right with it (MCH 304 beside "PE").
// A range printed beside it beyond the limits on the same side (Neutrophils 7.8E+09 "/L" beside
// 2.0E+09~7.5E+09) says the row is in a scale the lexicon lacks, value and range alike: then
// nothing was lost from the value.
func outsideAny(r *row) bool {
	ll, lh, ok := anyLimits(r.a)
	if !ok || r.v >= ll && r.v <= lh {
		return false
	}
	lo, hi, hasLo, hasHi := r.bounds()
	if r.v > lh {
		return !(hasHi && hi > lh || hasLo && lo > lh)
	}
	return !(hasLo && lo < ll || hasHi && hi > 0 && hi < ll)
}

// knownUnit reports whether some analyte of the lexicon is measured in u. It walks the whole
// lexicon, which only a row in an unexpected unit costs.
// What it found is kept per unit for the run, so a draft of many such rows walks it once per
// unit printed.
func (s *state) knownUnit(u string) bool {
	if known, ok := s.units[u]; ok {
		return known
	}
	known := false
	for _, a := range s.lex.Analytes() {
		s.work++
		if _, ok := a.Unit(u); ok {
			known = true
			break
		}
	}
	if s.units == nil {
		s.units = make(map[string]bool)
	}
	s.units[u] = known
	return known
}

// maxTenfoldSpread bounds the analytes the tenfold test applies to: those whose lexicon limits
// lie within 30× of their reference range on that side (electrolytes, proteins, lipids, glucose,
// urea, the blood count indices …). Enzymes, markers, hormones and inflammation markers are
// 100× beyond their range in real patients (ALT in hepatitis, CRP in sepsis), so for them only
// the limits speak.
const maxTenfoldSpread = 30

// valueImplausible (value_implausible), for a known analyte's number:
//   - outside the lexicon's physiological limits in its unit (cholesterol 586 mmol/L). When the
//     value fits another unit of the analyte (creatinine 78 beside mmol/L is 78 μmol/L), the
//     message says so (other_unit); an integer of four digits or more whose thousandth fits
//     (a urine specific gravity of 1020, 1,020 read with a thousands comma) was printed with a
//     decimal comma (decimal_comma), and the message suggests that figure; else limits;
//   - with no unit printed, or one the analyte is not measured in (a misread "PE" for pg, "任"
//     for fL): outside the limits in every unit the analyte has (MCH 304: no patient's MCH is
//     above 60 pg). A unit misread never turns this check off;
//   - 10× or more above the printed upper bound, or at most a tenth of the printed lower bound,
//     for an analyte whose own variation is narrower than that (maxTenfoldSpread): a lost or
//     added decimal point (586 beside 3.1–5.2 with no unit). Not when the range itself was
//     found wrong (range_implausible), which would say the same thing twice.
//
// A row it warns about is marked judged, so that flagMismatch does not say it again.
func valueImplausible(s *state) {
	for i := range s.rows {
		if s.stop() {
			return
		}
		r := &s.rows[i]
		if r.a == nil || !r.hasV || r.a.Kind == lexicon.Qual {
			continue
		}
		var ll, lh float64
		ok, anyUnit := false, false
		if r.u != nil {
			ll, lh, ok = r.u.Limits()
		} else {
			ll, lh, ok = anyLimits(r.a)
			anyUnit = isUnit(str(r.ind.Unit))
		}
		if ok && (r.v < ll || r.v > lh) && (!anyUnit || outsideAny(r)) {
			r.judged = true
			if s.unlisted() {
				continue
			}
			p := facts(r.ind)
			p["limitLow"], p["limitHigh"] = format(ll), format(lh)
			reason := "limits"
			switch w := otherUnit(r); {
			case anyUnit:
				reason = "any_unit"
				p["expectedUnit"] = unitNames(r.a)
			case w != nil:
				reason = "other_unit"
				p["expectedUnit"] = w.Name
			case decimalComma(r.v, ll, lh):
				reason = "decimal_comma"
				p["suggested"] = strconv.FormatFloat(r.v/1000, 'f', 3, 64)
			}
			s.warn(i, "valueNum", reason, p)
			continue
		}
		if r.rangeBad {
			continue
		}
		lo, hi, hasLo, hasHi := r.bounds()
		cl, ch, okL := r.a.Canonical().Limits()
		rl, rh, okR := r.a.Canonical().Ref()
		if !okL || !okR {
			continue
		}
		times := 0.0
		switch {
		case hasHi && hi > 0 && r.v >= 10*hi && rh > 0 && ch/rh <= maxTenfoldSpread:
			times = r.v / hi
		case hasLo && lo > 0 && r.v >= 0 && r.v <= lo/10 && cl > 0 && rl/cl <= maxTenfoldSpread:
			if r.v == 0 {
				times = math.Inf(1)
			} else {
				times = lo / r.v
			}
		}
		if times > 0 {
			r.judged = true
			if s.unlisted() {
				continue
			}
			p := facts(r.ind)
			p["times"] = format(math.Floor(math.Min(times, 1e6)))
			s.warn(i, "valueNum", "tenfold", p)
		}
	}
}

// decimalComma reports whether v, outside [ll, hh], is a number printed with a decimal comma
// and read with a thousands one (1,020 read as 1020): an integer of at least four digits whose
// thousandth lies within the limits.
func decimalComma(v, ll, lh float64) bool {
	return v >= 1000 && v == math.Trunc(v) && v/1000 >= ll && v/1000 <= lh
}

// otherUnit returns another unit of the row's analyte, with a factor, within whose limits the
// row's value lies (creatinine 78 beside mmol/L lies within μmol/L's): the one whose reference
// range the value is nearest to, else the first; nil when none, or when the row's printed range
// lies within its unit's limits (586 beside 3.1–5.2 mmol/L: the unit is the range's, and the
// value lost its decimal point).
func otherUnit(r *row) *lexicon.Unit {
	if r.u == nil || r.u.Factor == 0 {
		return nil
	}
	if ll, lh, ok := r.u.Limits(); ok && !r.rangeBad {
		lo, hi, hasLo, hasHi := r.bounds()
		if hasLo && lo >= ll && lo <= lh || hasHi && hi > 0 && hi >= ll && hi <= lh {
			return nil
		}
	}
	var best *lexicon.Unit
	bestD := math.Inf(1)
	for k := range r.a.Units {
		w := &r.a.Units[k]
		if w == r.u || w.Factor == 0 || near(w.Factor/r.u.Factor, 1, 0.01) {
			continue
		}
		wl, wh, ok := w.Limits()
		if !ok || r.v < wl || r.v > wh {
			continue
		}
		d := math.MaxFloat64
		if rl, rh, ok := w.Ref(); ok && r.v > 0 {
			mid := math.Sqrt(math.Max(rl, rh/10) * rh)
			d = math.Abs(math.Log(r.v / mid))
		}
		if best == nil || d < bestD {
			best, bestD = w, d
		}
	}
	return best
}

// flagMismatch (flag_mismatch): a printed ↑ beside a value below the upper bound (or, with a
// lower bound only, below it), a printed ↓ beside a value above the lower bound (or above the
// upper bound only). A value equal to the bound is not a mismatch: labs flag on the unrounded
// value, and the printed one rounds to the bound. A mark with no direction (*, 异常) is not
// judged: reports use it for footnotes too.
//
// And the other way round (unmarked_high, unmarked_low): a value far outside its printed range
// with no mark at all, on a page that marks other results outside theirs (a ↑ or ↓ beside a
// value beyond its bound in that direction). A lab's system marks every result outside its
// range, so a value printed without one, far beyond it, was misread (TG 142 beside 0.56–1.70 for
// 1.42, Hb 13.8 g/L beside 130–175 for 138), or its mark was lost. Far is unmarkedNarrow times
// beyond the bound for an analyte whose living values lie within maxTenfoldSpread of its range on
// that side (the lexicon's limits and range), unmarkedWide times for the others (enzymes,
// markers, hormones: ALT 2000 in hepatitis). A true extreme (creatinine 412 in CKD, AFP 1200)
// carries its mark and stays silent. Only quantitative analytes of the lexicon (a semi result is
// printed against a cut-off, often with a word for its mark), and not a row value_implausible
// warned about.
func flagMismatch(s *state) {
	var marked pageSet
	for i := range s.rows {
		r := &s.rows[i]
		if f := r.ind.PrintedFlag; f != nil && r.hasV && !r.rangeBad && beyond(r, *f) {
			marked.add(r.ind.Page)
		}
	}
	for i := range s.rows {
		if s.stop() {
			return
		}
		r := &s.rows[i]
		f := r.ind.PrintedFlag
		if !r.hasV || r.rangeBad {
			continue
		}
		if f == nil {
			if marked.has(r.ind.Page) {
				unmarked(s, i)
			}
			continue
		}
		lo, hi, hasLo, hasHi := r.bounds()
		bad := false
		switch *f {
		case schema.FlagHigh:
			bad = (hasHi && r.v < hi) || (!hasHi && hasLo && r.v < lo)
		case schema.FlagLow:
			bad = (hasLo && r.v > lo) || (!hasLo && hasHi && r.v > hi)
		}
		if bad && !s.unlisted() {
			p := facts(r.ind)
			p["printedFlag"] = string(*f)
			s.warn(i, "valueNum", string(*f), p)
		}
	}
}

// How far beyond its printed range an unmarked value must lie for flagMismatch to ask about
// it: for analytes of narrow spread (electrolytes, proteins, the blood count's indices), and for
// the others.
const (
	unmarkedNarrow = 3
	unmarkedWide   = 10
)

// unmarked warns about row i, which has no mark, when its value lies far beyond its range.
func unmarked(s *state, i int) {
	r := &s.rows[i]
	if r.a == nil || r.a.Kind != lexicon.Quant || r.judged {
		return
	}
	lo, hi, hasLo, hasHi := r.bounds()
	cl, ch, _ := r.a.Canonical().Limits()
	rl, rh, okR := r.a.Canonical().Ref()
	reason, times := "", 0.0
	switch {
	case hasHi && hi > 0 && r.v > hi:
		k := float64(unmarkedWide)
		if okR && rh > 0 && ch/rh <= maxTenfoldSpread {
			k = unmarkedNarrow
		}
		if r.v >= k*hi {
			reason, times = "unmarked_high", r.v/hi
		}
	case hasLo && lo > 0 && r.v >= 0 && r.v < lo:
		k := float64(unmarkedWide)
		if okR && cl > 0 && rl/cl <= maxTenfoldSpread {
			k = unmarkedNarrow
		}
		if r.v*k <= lo {
			reason, times = "unmarked_low", math.Inf(1)
			if r.v > 0 {
				times = lo / r.v
			}
		}
	}
	if reason == "" || s.unlisted() {
		return
	}
	p := facts(r.ind)
	p["times"] = format(math.Floor(math.Min(times, 1e6)*10) / 10)
	s.warn(i, "valueNum", reason, p)
}

// beyond reports whether row r's value lies beyond its bound in the direction of mark f: a
// mark that agrees with the value, as a lab's system prints it.
func beyond(r *row, f schema.Flag) bool {
	lo, hi, hasLo, hasHi := r.bounds()
	switch f {
	case schema.FlagHigh:
		return hasHi && r.v > hi
	case schema.FlagLow:
		return hasLo && r.v < lo
	}
	return false
}

// pageSet is a set of pages (nil is page 0); pages past 63 are one member, all of them.
type pageSet uint64

func (p *pageSet) add(page *int) { *p |= pageBit(page) }

func (p pageSet) has(page *int) bool { return p&pageBit(page) != 0 }

func pageBit(page *int) pageSet {
	n := 0
	if page != nil {
		n = min(max(*page, 0), 63)
	}
	return 1 << n
}

// timeSeries are group words of tests that print one item at several times (OGTT, insulin
// release): the same name with different values is their point, not a duplicate.
var timeSeries = []string{"糖耐量", "耐量", "释放", "釋放", "OGTT", "ogtt", "曲线", "曲線", "小时", "min", "分钟"}

// walkUpTo bounds the walks some rules make at a constant: nameUnknown looks at the first
// walkUpTo unknown names; duplicateRow's table for a draft of at most walkUpTo rows lives on the
// stack.
const walkUpTo = 64

// duplicateRow (duplicate_row): two rows of one page with the same name, group and unit, both
// numbers, and different values: a neighbouring row read twice, or a model looping. Not across
// units (中性粒细胞 in % and in ×10^9/L is a pair), not for words (a dipstick 阴性 beside a
// sediment count), not in a time-series test (timeSeries). Each later row warns once, naming
// the first earlier row of its key with another value.
//
// The rows are hashed on their key (dupKey), so a draft of n rows costs n look-ups whatever
// their number: a report's 40 rows cost less than their 780 pairs, and a looping model's 7,000
// rows not the 24 million pairs. Per key the table keeps the first row and the first later row
// whose value differs from it: the first earlier row with another value than v is the first row
// when v differs from it, else that later row (every row before it has v).
func duplicateRow(s *state) {
	size := 8
	for size < 2*len(s.rows) {
		size *= 2
	}
	var small [2 * walkUpTo]dupSlot
	t := small[:]
	if size <= len(small) {
		t = small[:size]
	} else {
		t = make([]dupSlot, size)
	}
	mask := uint64(len(t) - 1)
	var sc dupScratch
	for j := range s.rows {
		if s.stop() {
			return
		}
		r := &s.rows[j]
		b := r.ind
		if b.ValueNum == nil {
			continue
		}
		h := dupKey(r, &sc)
		for k := h & mask; ; k = (k + 1) & mask {
			s.work++
			sl := &t[k]
			if sl.row == 0 {
				*sl = dupSlot{h: h, row: int32(j) + 1}
				break
			}
			f := &s.rows[sl.row-1]
			if sl.h != h || f.name != r.name || !samePtr(f.ind.ItemGroup, b.ItemGroup) || !samePage(f.ind.Page, b.Page) ||
				!sameUnit(f.ind.Unit, b.Unit) {
				continue
			}
			other := -1
			if !f.ind.ValueNum.Equal(*b.ValueNum) {
				other = int(sl.row) - 1
				if sl.diff == 0 {
					sl.diff = int32(j) + 1
				}
			} else if sl.diff > 0 {
				other = int(sl.diff) - 1
			}
			// A time-series row's key is all time-series rows (the group is in it): none warns.
			if other >= 0 && !inTimeSeries(b.ItemGroup) && !s.unlisted() {
				p := facts(b)
				p["otherValue"] = s.rows[other].ind.ValueNum.String()
				p["otherPath"] = "indicators[" + strconv.Itoa(other) + "]"
				s.warn(j, "valueNum", "values", p)
			}
			break
		}
	}
}

// dupSlot is one key of duplicateRow's table: its hash, its first row and the first later row
// with another value than that one's, each 1-based (0: none).
type dupSlot struct {
	h         uint64
	row, diff int32
}

// dupSeed seeds dupKey per process: a reply cannot be written to make its rows collide.
var dupSeed = maphash.MakeSeed()

// dupKey hashes what duplicateRow compares: the name, the group (none is ""), the page and the
// unit as sameUnit compares it (spaces trimmed, case folded as strings.EqualFold folds it). A
// key that fits dupKeyBuf is hashed in one call, each part after its length (so that no two
// keys write the same bytes); a longer one part by part, the hashes mixed, as a map hashes a
// struct's fields. Which one is decided by the folded key's length, the same for every row of
// one key (the unit as printed is not: k and the Kelvin sign fold alike in 1 and 3 bytes).
func dupKey(r *row, sc *dupScratch) uint64 {
	g := str(r.ind.ItemGroup)
	fu := foldUnit(sc.unit[:0], trimUnit(str(r.ind.Unit)))
	if len(r.name)+len(g)+len(fu)+20 > dupKeyBuf { // lengths and page take at most 20 bytes
		h := maphash.String(dupSeed, r.name)
		if g != "" {
			h = mix(h) ^ maphash.String(dupSeed, g)
		}
		if r.ind.Page != nil {
			h = mix(h ^ uint64(*r.ind.Page) ^ 1<<62)
		}
		return mix(h^1<<61) ^ maphash.Bytes(dupSeed, fu)
	}
	b := binary.AppendUvarint(sc.key[:0], uint64(len(r.name)))
	b = append(b, r.name...)
	b = binary.AppendUvarint(b, uint64(len(g)))
	b = append(b, g...)
	if p := r.ind.Page; p != nil {
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, uint64(*p))
	} else {
		b = append(b, 0)
	}
	return maphash.Bytes(dupSeed, append(b, fu...))
}

// trimUnit is strings.TrimSpace(u), without its call (and its walk of a unit that begins with
// μ) for a unit that neither begins nor ends with a space (all but a few).
func trimUnit(u string) string {
	if u == "" {
		return u
	}
	first, last := rune(u[0]), rune(u[len(u)-1])
	if first >= utf8.RuneSelf {
		first, _ = utf8.DecodeRuneInString(u)
	}
	if last >= utf8.RuneSelf {
		last, _ = utf8.DecodeLastRuneInString(u)
	}
	if ' ' < first && !unicode.IsSpace(first) && ' ' < last && !unicode.IsSpace(last) {
		return u // TrimSpace trims unicode.IsSpace runes at either end: there are none
	}
	return strings.TrimSpace(u)
}

// dupKeyBuf is the longest key dupKey hashes in one call.
const dupKeyBuf = 192

// dupScratch is where dupKey writes a key, one for all the rows of a draft (not zeroed for each).
type dupScratch struct {
	key  [dupKeyBuf]byte
	unit [64]byte
}

// foldUnit appends u with its case folded as strings.EqualFold folds it to b.
func foldUnit(b []byte, u string) []byte {
	for i := 0; i < len(u); {
		c := u[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		c2, size := utf8.DecodeRuneInString(u[i:])
		i += size
		// The least rune of its fold orbit stands for all of it (k, K and the Kelvin sign K
		// are one letter to EqualFold; the least is K).
		least := c2
		for f := unicode.SimpleFold(c2); f != c2; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b = utf8.AppendRune(b, least)
	}
	return b
}

// mix spreads the bits of a hash before another is xored in (splitmix64's finaliser).
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// fit is how far printed bounds are from a reference range: the geometric mean of the bounds'
// ratios to it, over the bounds that both have above zero, folded above 1 (2 means twice or
// half); 0 when no bound compares.
func fit(lo, hi float64, hasLo, hasHi bool, rl, rh float64) float64 {
	g, n := 1.0, 0
	if hasLo && lo > 0 && rl > 0 {
		g *= lo / rl
		n++
	}
	if hasHi && hi > 0 && rh > 0 {
		g *= hi / rh
		n++
	}
	switch n {
	case 0:
		return 0
	case 2:
		g = math.Sqrt(g)
	}
	if g < 1 {
		g = 1 / g
	}
	return g
}

// anyLimits is the widest span of the analyte's limits over its units: a value outside it is
// impossible in whatever unit it was meant.
func anyLimits(a *lexicon.Analyte) (lo, hi float64, ok bool) {
	for k := range a.Units {
		l, h, has := a.Units[k].Limits()
		if !has {
			continue
		}
		if !ok || l < lo {
			lo = l
		}
		if !ok || h > hi {
			hi = h
		}
		ok = true
	}
	return lo, hi, ok
}

func near(x, want, tol float64) bool { return math.Abs(x-want) <= tol*math.Abs(want) }

// isUnit reports whether a printed unit says anything: a letter, a digit, % or a symbol unit.
func isUnit(u string) bool {
	for _, c := range u {
		if c == '-' || c == '/' || c == ' ' || c == '—' || c == '.' || c == '　' {
			continue
		}
		return true
	}
	return false
}

func unitNames(a *lexicon.Analyte) string {
	var b strings.Builder
	for k, u := range a.Units {
		if k == 4 {
			b.WriteString(" …")
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		if u.Name == "" {
			b.WriteString("no unit")
			continue
		}
		b.WriteString(u.Name)
	}
	return b.String()
}

func inTimeSeries(g *string) bool {
	if g == nil {
		return false
	}
	for _, w := range timeSeries {
		if strings.Contains(*g, w) {
			return true
		}
	}
	return false
}

func samePtr(a, b *string) bool {
	return str(a) == str(b)
}

func samePage(a, b *int) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func sameUnit(a, b *string) bool {
	return strings.EqualFold(strings.TrimSpace(str(a)), strings.TrimSpace(str(b)))
}

// nameUnknown (name_unknown): a row whose name the lexicon does not know, but close to a known
// one (lexicon.Near: a known abbreviation inside it, CRP in "CRP=26", or one edit from a known
// name, 谷丙转氨梅 or CEP in "(白CEP）=26"): a name misread past recognition gets no check, and
// must not get no word either. With a unit printed that some of the near items are measured in,
// only those are named (CEP beside mg/L is CRP, not CEA); when none is, the row is not about
// them, and nothing is said. Only rows with a number, which the checks would have judged. Only the
// first walkUpTo unknown names are looked at: a report prints a few, and a draft of thousands
// (a looping model's) is told nothing more by a hint on each.
func nameUnknown(s *state) {
	asked := 0
	for i := range s.rows {
		if s.stop() {
			return
		}
		r := &s.rows[i]
		if r.a != nil || !r.hasV || r.name == "" {
			continue
		}
		if asked++; asked > walkUpTo {
			return
		}
		near := s.lex.Near(r.name)
		s.work += 2 * utf8.RuneCountInString(r.name) // Near's look-ups: one per character, per run
		if unit := str(r.ind.Unit); isUnit(unit) && len(near) > 0 {
			kept := near[:0:0]
			for _, a := range near {
				if _, ok := a.Unit(unit); ok {
					kept = append(kept, a)
				}
			}
			near = kept
		}
		if len(near) == 0 || s.unlisted() {
			continue
		}
		p := facts(r.ind)
		var b strings.Builder
		for k, a := range near {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(label(a))
		}
		p["nearName"] = b.String()
		s.warn(i, "itemName", "near", p)
	}
}

// label names an analyte for a person: its first name, and its first abbreviation beside it
// (C反应蛋白 (CRP)).
func label(a *lexicon.Analyte) string {
	for _, n := range a.Names[1:] {
		if len(n) >= 2 && len(n) <= 8 && n == strings.ToUpper(n) && strings.IndexFunc(n, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0 &&
			strings.IndexFunc(n, func(r rune) bool { return r >= utf8.RuneSelf }) < 0 {
			return a.Names[0] + " (" + n + ")"
		}
	}
	return a.Names[0]
}
