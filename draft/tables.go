package draft

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Rows in other clothes than a list of objects: a table of a header row and rows of cells
// (tableRows), written as a list of lists or as an object of headers and rows (asTable), and rows
// keyed by their names (isKeyedRows). Each is read as the list of objects it means; a table whose
// header does not say which cell is the name and which the result is never read by guessing, and
// its rows are dropped with a warning each.

// rowList is a list of rows found under a key: path is its place in the reply (for a warning
// about a dropped row), key the key it was found under (a group's name, when it is one).
type rowList struct {
	key, path string
	elems     []parse.Value
	table     bool // a table or rows by name, not a list: never a wrapper's content
}

// tableRows reads a list written as a table: a header row of field names, then one row per item
// ([["项目","结果","单位","参考范围"], ["钠","141","mmol/L","137-147"]]). Rows are read only under
// a header that names one item and at least one result; without one, a row's meaning would be a
// guess, and it is dropped as not an object.
//
// A header that repeats its columns ([名称,结果,单位,名称,结果,单位]) is a page printed in two (or
// more) columns: each row holds one item per repeat. The items are read column by column, the
// left column's first, as the page numbers them; a repeat whose cells are all empty (the last line
// of a column that ran out) is no item.
func tableRows(list []parse.Value) []parse.Value {
	if len(list) < 2 || list[0].Kind != parse.Array {
		return list
	}
	header := list[0].Elems
	fs := make([]field, len(header))
	for i, h := range header {
		if h.Kind != parse.String {
			return list
		}
		fs[i] = fieldOf(h.Text, 1)
	}
	period := headerPeriod(fs)
	if period == 0 {
		return list
	}
	// Only as many repeats as the longest row fills: a header of a thousand repeats costs no more
	// than the rows it has.
	widest := 0
	for _, row := range list[1:] {
		widest = max(widest, len(row.Elems))
	}
	repeats := min(len(header)/period, max(1, (widest+period-1)/period))
	out := make([]parse.Value, 0, len(list)-1)
	for r := range repeats {
		for _, row := range list[1:] {
			if row.Kind != parse.Array {
				if r == 0 {
					out = append(out, row)
				}
				continue
			}
			lo := r * period
			if repeats > 1 && blankCells(row.Elems, lo, lo+period) {
				continue
			}
			obj := parse.Value{Kind: parse.Object}
			for i := lo; i < lo+period && i < len(row.Elems); i++ {
				obj.Members = append(obj.Members, parse.Member{Key: header[i].Text, Value: row.Elems[i]})
			}
			out = append(out, obj)
		}
	}
	return out
}

// headerPeriod is the number of columns one item takes in a header of fields fs: the shortest
// repeat that names one item and a result, or 0 when the header is no table's.
func headerPeriod(fs []field) int {
	for p := 1; p <= len(fs); p++ {
		if len(fs)%p != 0 || !itemColumns(fs[:p]) {
			continue
		}
		same := true
		for i := p; i < len(fs) && same; i++ {
			same = fs[i] == fs[i%p]
		}
		if same {
			return p
		}
	}
	return 0
}

// itemColumns reports whether a header's columns name one item and at least one result.
func itemColumns(fs []field) bool {
	var names, results int
	for _, f := range fs {
		switch f {
		case fItemName:
			names++
		case fValue, fValueNum, fValueText, fInRange, fOutRange:
			results++
		}
	}
	return names == 1 && results > 0
}

// blankCells reports whether cells[lo:hi] are all null, empty or a null word.
func blankCells(cells []parse.Value, lo, hi int) bool {
	for i := lo; i < hi && i < len(cells); i++ {
		c := cells[i]
		if c.Kind != parse.Null && !(c.Kind == parse.String && isNullWord(strings.TrimSpace(c.Text))) {
			return false
		}
	}
	return true
}

// asTable reads an object that is a table: a header (tableHeaderKeys) and rows (tableRowKeys),
// {"headers": [...], "rows": [[...], ...]}, into the rows it means (tableRows); rows that are
// objects already are the list. Header cells may be strings or objects naming the column
// ({"name": "项目"}). Rows of cells without a header that tableRows reads (none, or one that does
// not name an item and a result) are returned as they are, to be dropped with a warning each
// unless their own first row is a header. path is where the rows are in the object (rows, data …).
func asTable(v parse.Value) (list []parse.Value, path string, ok bool) {
	if v.Kind != parse.Object {
		return nil, "", false
	}
	var header, rows *parse.Member
	for i := range v.Members {
		m := &v.Members[i]
		if m.Value.Kind != parse.Array {
			continue
		}
		switch k := normKey(m.Key); {
		case header == nil && slices.Contains(tableHeaderKeys, k):
			header = m
		case rows == nil && slices.Contains(tableRowKeys, k):
			rows = m
		}
	}
	if rows == nil || len(rows.Value.Elems) == 0 {
		return nil, "", false
	}
	cells := 0
	for _, r := range rows.Value.Elems {
		if r.Kind == parse.Array {
			cells++
		}
	}
	switch {
	case cells*2 <= len(rows.Value.Elems) && header != nil: // rows that are objects: the list itself
		return rows.Value.Elems, rows.Key, true
	case cells*2 <= len(rows.Value.Elems):
		return nil, "", false // {"data": [{…}, …]}: a wrapper, read as one
	case header == nil:
		return tableRows(rows.Value.Elems), rows.Key, true
	}
	head := parse.Value{Kind: parse.Array, Elems: make([]parse.Value, len(header.Value.Elems))}
	for i, h := range header.Value.Elems {
		head.Elems[i] = columnName(h)
	}
	table := append([]parse.Value{head}, rows.Value.Elems...)
	if out := tableRows(table); len(out) == 0 || &out[0] != &table[0] {
		return out, rows.Key, true
	}
	return tableRows(rows.Value.Elems), rows.Key, true // a header tableRows does not read: the rows alone
}

// columnName is a header cell as the column's name: a string, or the name an object gives it
// ({"name": "结果"}, {"title": "Result", "key": "result"}); any other cell is left as it is, and
// tableRows then reads no header.
func columnName(h parse.Value) parse.Value {
	if h.Kind != parse.Object {
		return h
	}
	for _, k := range columnNameKeys {
		for _, m := range h.Members {
			if m.Value.Kind == parse.String && normKey(m.Key) == k {
				return m.Value
			}
		}
	}
	return h
}

// isKeyedRows reports whether an object's members are rows keyed by their names: every member
// that is not null is an object with a result as text or a number (scalarResult) and without a name of its own, under a key that
// is no field's ({"WBC": {"result": "6.5"}, "HGB": {"结果": "135"}}). Text under a name
// ({"总胆固醇": "5.86"}) is read that way only under a key that names the list: elsewhere it may
// be anything (a patient's details), and is not guessed at.
func isKeyedRows(members []parse.Member) bool {
	rows := 0
	for _, m := range members {
		if m.Value.Kind == parse.Null {
			continue
		}
		if m.Value.Kind != parse.Object || known(m.Key, 1) || isPersonKey(m.Key) {
			return false
		}
		var f fields
		f.pick(m.Value.Members, 1)
		if !scalarResult(&f) || f[fItemName].key != "" || f[fIndicators].key != "" {
			return false
		}
		rows++
	}
	return rows > 0
}

// scalarResult reports whether an item's fields hold a result, a unit or a range written as a
// string or a number: {"result": {"title": …}} is a wrapper, not a row.
func scalarResult(f *fields) bool {
	for _, k := range []field{fValueNum, fValueText, fValue, fUnit, fRefRange, fInRange, fOutRange} {
		if v := f[k].val; f[k].key != "" && (v.Kind == parse.String || v.Kind == parse.Number) {
			return true
		}
	}
	return false
}

// rowsOf reads a member's value as a list of rows, if it is one: a list of objects or of table
// rows, a table object, or rows keyed by name.
func rowsOf(m parse.Member) (rowList, bool) {
	switch m.Value.Kind {
	case parse.Array:
		if len(m.Value.Elems) == 0 {
			return rowList{}, false
		}
		objects := 0
		for _, e := range m.Value.Elems {
			if e.Kind == parse.Object || e.Kind == parse.Array {
				objects++
			}
		}
		if objects*2 > len(m.Value.Elems) {
			return rowList{key: m.Key, path: m.Key, elems: tableRows(m.Value.Elems)}, true
		}
	case parse.Object:
		if list, at, ok := asTable(m.Value); ok {
			return rowList{key: m.Key, path: m.Key + "." + at, elems: list, table: true}, true
		}
		if isKeyedRows(m.Value.Members) {
			return rowList{key: m.Key, path: m.Key, elems: keyedItems(m.Value.Members), table: true}, true
		}
	}
	return rowList{}, false
}

// status is a result printed in columns by status (readStatus).
type status struct {
	v        value
	flag     schema.Flag
	fromFlag bool   // the flag column held the result
	conflict bool   // both columns held a result, and they differ
	in, out  string // the two results of a conflict, as written
}

// readStatus reads a result printed in columns by status, as US labs print them (In Range | Out
// of Range, Normal | Abnormal), for a row with no result under a value key: the one cell that is
// filled is the value, and an H, L, High or Low after it there is its printed flag; a value in
// the out-of-range column without one is flagged abnormal, as its column prints it. A flag column
// that holds a number ("Flag": "105 H", "Abnormal": "105") holds the out-of-range result. Both
// columns filled with different results: neither is the value.
func readStatus(f *fields, a *arena) status {
	var st status
	in, out := f[fInRange], f[fOutRange]
	if out.key == "" || out.val.Kind == parse.Null {
		if fl := f[fPrintedFlag]; fl.key != "" {
			if _, isFlag := readFlag(fl.val); !isFlag && readStatusCell(fl.val, a).v.num != nil {
				out, st.fromFlag = fl, true
			}
		}
	}
	iv, ov := readStatusCell(in.val, a), readStatusCell(out.val, a)
	hasIn, hasOut := iv.v.num != nil || iv.v.text != nil, ov.v.num != nil || ov.v.text != nil
	switch {
	case hasIn && hasOut && param(in.val) != param(out.val):
		st.conflict, st.in, st.out, st.fromFlag = true, param(in.val), param(out.val), false
	case hasOut:
		st.v, st.flag = ov.v, cmp.Or(ov.flag, schema.FlagAbnormal)
	case hasIn:
		st.v, st.flag, st.fromFlag = iv.v, iv.flag, false
	default:
		st.fromFlag = false
	}
	return st
}

// statusRange takes an in-range cell that is a range with both bounds ("Normal": "3.5-5.1") for
// the reference range, when the row gives none: a column named Normal may print either.
func statusRange(f *fields, a *arena) {
	if in := f[fInRange]; in.key != "" && f[fRefRange].key == "" && in.val.Kind == parse.String && isSpan(lexicon.Narrow(clean(in.val.Text)), a) {
		f[fRefRange], f[fInRange] = in, slot{}
	}
}

// readStatusCell reads one status column's cell: a value, and a flag word after it (105 H, 105
// High, 3.2 (Low)) as its mark.
func readStatusCell(raw parse.Value, a *arena) status {
	if raw.Kind != parse.String {
		v := readValue(raw, a)
		return status{v: v, flag: v.flag}
	}
	s := clean(raw.Text)
	var flag schema.Flag
	if i := strings.LastIndexAny(s, " \t("); i > 0 && len(s)-i <= maxMarkLen {
		w := strings.Trim(s[i:], " \t()")
		for _, fw := range statusFlagWords {
			if strings.EqualFold(w, fw.word) {
				s, flag = strings.TrimSpace(s[:i]), fw.flag
				break
			}
		}
	}
	v := readValue(parse.Value{Kind: parse.String, Text: s}, a)
	return status{v: v, flag: joinFlags(v.flag, flag)}
}

// isSpan reports whether s reads as one range with both bounds (3.5-5.1).
func isSpan(s string, a *arena) bool {
	var buf [2]schema.RefSpan
	r, ok := a.lex.ReadRangeInto(buf[:0], s)
	return ok && len(r.Spans) == 1 && r.Spans[0].HasLow && r.Spans[0].HasHigh
}
