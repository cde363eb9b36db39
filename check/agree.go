package check

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Agree judges two independent reads of one page against each other (OCR_VERIFY): first is the
// page's draft, second the second read's rows, both as package draft read them. Rows are
// matched one to one — by the lexicon's key (analyte), then by name folded (case, width, spaces),
// then by position among the rows still unmatched — and every field of a matched pair that
// differs is one reads_disagree warning at that field of the first read's row
// (indicators[N].valueNum, .valueText, .unit, .refText), with both readings as printed in params
// (first, second). A row only one read has is read_once. Paths index first, the page's own draft.
//
// Nothing is changed: the value kept is the first read's. Which read is right is the person's to
// say; two reads that agree may both be wrong, and a page that agrees is not proven.
//
// valueNum compares as decimals (5.0 and 5.00 agree: the same number, which the first read keeps
// as printed); units compare as the lexicon matches them (×10^9/L, 10*9/L and 10⁹/L are one unit,
// lexicon.SameUnit: what the person would store does not differ); ranges as printed, up to white
// space, letter case and full-width forms, and the dash between their bounds (3.9–6.1 and
// 3.9-6.1 agree), which are how two reads of one print differ without the print differing.
func Agree(first, second []schema.OcrIndicator, page int) []schema.Warning {
	pair := match(first, second)
	var ws []schema.Warning
	taken := make([]bool, len(second))
	for i, j := range pair {
		if j < 0 {
			ws = append(ws, once(first[i], i, page, "first_only"))
			continue
		}
		taken[j] = true
		ws = append(ws, differ(first[i], second[j], i, page)...)
	}
	for j, t := range taken {
		if !t {
			ws = append(ws, once(second[j], -1, page, "second_only"))
		}
	}
	return ws
}

// match pairs each row of a with a row of b (its index, or -1), one to one, by the keys of
// matchKeys in order: each pass pairs, in order, rows still unmatched whose key is the same. Each
// pass is one map of b's unmatched rows by key, so the work is linear in the rows.
func match(a, b []schema.OcrIndicator) []int {
	pair := make([]int, len(a))
	for i := range pair {
		pair[i] = -1
	}
	used := make([]bool, len(b))
	for _, key := range matchKeys {
		byKey := make(map[string][]int, len(b))
		for j := range b {
			if k := key(b[j], j); !used[j] && k != "" {
				byKey[k] = append(byKey[k], j)
			}
		}
		for i := range a {
			if pair[i] >= 0 {
				continue
			}
			k := key(a[i], i)
			if k == "" {
				continue
			}
			list := byKey[k]
			for _, j := range list {
				if !used[j] && !twoItems(a[i], b[j]) {
					pair[i], used[j] = j, true
					break
				}
			}
			for len(list) > 0 && used[list[0]] {
				list = list[1:] // what is paired is never looked at again
			}
			byKey[k] = list
		}
	}
	return pair
}

// twoItems reports whether two rows are of two known items, which no key pairs: a row at the
// same place in both reads, whose names the lexicon knows as different analytes, is a row one
// read has and the other lacks, not one row misread.
func twoItems(a, b schema.OcrIndicator) bool {
	return a.Analyte != nil && b.Analyte != nil && *a.Analyte != *b.Analyte
}

// matchKeys are the keys rows are matched by, best first; "" is no key. The analyte with its
// unit first (one analyte printed in two units is two rows), then the analyte alone (one read
// lost the unit), the name folded (a name the lexicon does not know), and last the position
// among the rows: a name misread in one read still meets its row.
var matchKeys = []func(ind schema.OcrIndicator, i int) string{
	func(ind schema.OcrIndicator, _ int) string {
		if ind.Analyte == nil {
			return ""
		}
		return *ind.Analyte + "\x00" + lexicon.UnitKey(deref(ind.Unit))
	},
	func(ind schema.OcrIndicator, _ int) string { return deref(ind.Analyte) },
	func(ind schema.OcrIndicator, _ int) string { return foldText(ind.ItemName) },
	func(_ schema.OcrIndicator, i int) string { return strconv.Itoa(i) },
}

// differ is the reads_disagree warnings of a matched pair: first's row i against second's.
func differ(a, b schema.OcrIndicator, i, page int) []schema.Warning {
	var ws []schema.Warning
	say := func(field, first, second string) {
		path := "indicators[" + strconv.Itoa(i) + "]." + field
		ws = append(ws, msg.New(schema.ReadsDisagree, "differs", &path, &page, map[string]string{
			"itemName": a.ItemName, "field": field, "first": first, "second": second}))
	}
	switch {
	case a.ValueNum != nil && b.ValueNum != nil:
		if !a.ValueNum.Equal(*b.ValueNum) {
			say("valueNum", a.ValueNum.String(), b.ValueNum.String())
		}
	case a.ValueNum != nil || b.ValueNum != nil:
		// a number in one read, text or nothing in the other
		field := "valueNum"
		if a.ValueNum == nil && a.ValueText != nil {
			field = "valueText"
		}
		say(field, resultText(a), resultText(b))
	case foldText(deref(a.ValueText)) != foldText(deref(b.ValueText)):
		say("valueText", resultText(a), resultText(b))
	}
	if au, bu := deref(a.Unit), deref(b.Unit); foldText(au) != foldText(bu) && !lexicon.SameUnit(au, bu) {
		say("unit", orNull(a.Unit), orNull(b.Unit))
	}
	if !sameRange(a, b) {
		say("refText", orNull(a.RefText), orNull(b.RefText))
	}
	return ws
}

// sameRange reports whether two reads give one range: their refText as printed, or, when one
// read gave only bounds (refLow, refHigh without the text the prompt asks for), the bounds of
// both as decimals.
func sameRange(a, b schema.OcrIndicator) bool {
	if a.RefText != nil && b.RefText != nil || !hasBounds(a) || !hasBounds(b) {
		return foldRange(deref(a.RefText)) == foldRange(deref(b.RefText))
	}
	return sameDecimal(a.RefLow, b.RefLow) && sameDecimal(a.RefHigh, b.RefHigh)
}

func hasBounds(ind schema.OcrIndicator) bool { return ind.RefLow != nil || ind.RefHigh != nil }

func sameDecimal(a, b *schema.Decimal) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// once is the read_once warning of a row only one read has: i is its row in the draft, or -1
// for the second read's (no row of the draft; the path is null and params say what it read).
func once(ind schema.OcrIndicator, i, page int, reason string) schema.Warning {
	params := map[string]string{"itemName": ind.ItemName, "read": "first"}
	var path *string
	if i >= 0 {
		p := "indicators[" + strconv.Itoa(i) + "]"
		path = &p
	} else {
		params["read"] = "second"
		params["value"] = resultText(ind)
		if params["value"] == "null" {
			delete(params, "value")
		}
	}
	return msg.New(schema.ReadOnce, reason, path, &page, params)
}

// resultText is a row's result as printed, "null" when it has none.
func resultText(ind schema.OcrIndicator) string {
	switch {
	case ind.ValueNum != nil:
		return ind.ValueNum.String()
	case ind.ValueText != nil:
		return *ind.ValueText
	}
	return "null"
}

func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// foldText is s without white space, in lower case, full-width forms as their ASCII and the
// micro sign as u (µmol/L, μmol/L and umol/L are one print read three ways).
func foldText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			continue
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r == 'µ' || r == 'μ':
			r = 'u'
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// foldRange is foldText with every dash and tilde between bounds as '-'.
func foldRange(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '–', '—', '−', '~', '～', '〜', '‐', '‑', '﹣', '－':
			return '-'
		}
		return r
	}, foldText(s))
}
