package draft

import (
	"strings"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// The finder: where in a reply the draft is. A reply may be the draft, or hold it: an API body
// passed on whole (a chat completion's choices[0].message.content, a Responses body's
// output[].content[].text, Gemini's candidates[0].content.parts[].text, Ollama's response), a
// tool call ([TOOL_CALLS][{"name": …, "arguments": {…}}], OpenAI's
// tool_calls[].function.arguments as a JSON string), a wrapper ({"data": …}). No rule per shape:
// every object and list of the reply, and the JSON held in its strings (which parse reads as
// Candidate.Inner), is scored by how much it looks like a draft (fitOf: rows with a name and a
// result, report fields), and the one that fits best is read. The reply's own value wins
// every tie: a value inside it is read only when it fits strictly better, so that a draft's own
// shape (groups, pages, a report object beside its list) is read as Build reads it.
//
// Work: the finder looks at each value of a candidate once (its fit looks at the value's members
// and theirs, a bounded number of levels), and at most parse.Bound's Walked values per reply,
// counted in parse.Work.Walked; what lies past that is read as Build reads it, from the value found so far.

// fit is how much a value looks like a draft: the rows it would give (with a name and a
// result), then its report fields, then the items it would keep that have only a name and
// fields without a value ({"itemName": "x", "unit": null}).
type fit struct{ rows, fields, named int }

func (a fit) better(b fit) bool {
	switch {
	case a.rows != b.rows:
		return a.rows > b.rows
	case a.fields != b.fields:
		return a.fields > b.fields
	}
	return a.named > b.named
}

// count is the rows of a list, and its items with a name only.
type count struct{ rows, named int }

func (c *count) add(d count) { c.rows, c.named = c.rows+d.rows, c.named+d.named }

// finder is the state of finding the draft in one reply.
type finder struct {
	walked, limit int // values looked at, at most limit (parse.Bound's Walked)
}

// scored is a candidate as the finder leaves it: its value the best fit it holds, and that fit.
type scored struct {
	cand parse.Candidate
	fit  fit
}

// expand returns the candidates the draft is chosen from: each one's value replaced by the value
// inside it that fits a draft best (its Path says where), or, when the best fit is JSON held in
// one of its strings, the candidates that string holds, in its place.
func (fd *finder) expand(cands []parse.Candidate) []parse.Candidate {
	out := make([]parse.Candidate, 0, len(cands))
	for _, c := range cands {
		if c.Joined { // flat rows joined by parse: nothing inside them to find
			out = append(out, c)
			continue
		}
		for _, s := range fd.candidate(c, false) {
			out = append(out, s.cand)
		}
	}
	return out
}

// candidate finds the best fit in c, its own values first, then the strings that hold JSON.
// Its fit is only scored when needed (to weigh the values of one string against another
// value's): a draft of the reply's own, with nothing in its strings, is just read.
func (fd *finder) candidate(c parse.Candidate, needFit bool) []scored {
	if !needFit && len(c.Inner) == 0 && whole(c.Value) {
		return []scored{{cand: c}}
	}
	v, path, best, parts := fd.best(c.Value)
	var inner []scored
	for i := 0; i < len(c.Inner); {
		j := i + 1
		for j < len(c.Inner) && c.Inner[j].Path == c.Inner[i].Path {
			j++ // the values one string holds are that string's candidates, as a reply's are
		}
		if within(c.Inner[i].Path, parts) {
			i = j
			continue
		}
		var group []scored
		gf := fit{-1, -1, -1}
		for _, ic := range c.Inner[i:j] {
			for _, s := range fd.candidate(ic, true) {
				if s.fit.better(gf) {
					gf = s.fit
				}
				group = append(group, s)
			}
		}
		if gf.better(best) {
			best, inner = gf, group
			for k := range inner {
				in := &inner[k].cand
				in.Path = parse.JoinPath(c.Path, in.Path) // in.Path holds c.Inner[i].Path already
				in.Stage = laterStage(c.Stage, in.Stage)
				in.Truncated = in.Truncated || c.Truncated
				// In the reply's order, within the text of the value that held it.
				off := min(in.Offset, max(c.Len-1, 0))
				in.Offset, in.Len = c.Offset+off, max(min(in.Len, c.Len-off), 1)
			}
		}
		i = j
	}
	if inner != nil {
		return inner
	}
	c.Value, c.Path, c.Inner = asPages(v), parse.JoinPath(c.Path, path), nil
	return []scored{{c, best}}
}

// best walks v and returns the value within it that fits a draft best, where it is, and its
// fit; v itself on a tie. A draft's or a row's values are its parts, never a draft of their own:
// the walk does not go into a value with report fields or one that reads as a row (a list of
// lists under a report's fields is that report's, however its rows fit), and parts returns
// where such values are, so that the strings inside them are not looked into either.
func (fd *finder) best(v parse.Value) (found parse.Value, at string, f fit, parts []string) {
	found, f = v, fitOf(v)
	if whole(v) {
		return found, "", f, []string{""}
	}
	// The steps to the value walked, rendered as a path only where one is kept.
	type step struct {
		key string
		i   int // an element's index, when key is ""
	}
	var steps []step
	path := func() string {
		ss := make([]string, len(steps))
		for i, st := range steps {
			switch st.key {
			case "":
				ss[i] = parse.IndexStep(st.i)
			case "\x00":
				ss[i] = parse.KeyStep("")
			default:
				ss[i] = parse.KeyStep(st.key)
			}
		}
		return parse.JoinPath(ss...)
	}
	var walk func(v parse.Value)
	walk = func(v parse.Value) {
		fd.walked++
		for i := range max(len(v.Members), len(v.Elems)) {
			if fd.walked >= fd.limit {
				return
			}
			var e parse.Value
			st := step{i: i}
			if v.Kind == parse.Object {
				e, st.key = v.Members[i].Value, v.Members[i].Key
				if st.key == "" {
					st.key = "\x00" // rendered [""]
				}
			} else {
				e = v.Elems[i]
			}
			if !e.IsContainer() {
				continue
			}
			steps = append(steps, st)
			switch {
			case f.rows > 0 && flat(e):
				fd.walked++ // a row, or a list of text: it cannot fit better than a draft with rows
			default:
				if g := fitOf(e); g.better(f) {
					found, at, f = e, path(), g
				}
				if whole(e) {
					fd.walked++
					parts = append(parts, path())
				} else {
					walk(e)
				}
			}
			steps = steps[:len(steps)-1]
		}
	}
	walk(v)
	return found, at, f, parts
}

// whole reports a value whose inside is its own parts: an object with report fields, or a row.
func whole(v parse.Value) bool {
	return v.Kind == parse.Object && (reportFields(v.Members) > 0 || rowLike(v))
}

// within reports whether path lies inside one of the values at parts.
func within(path string, parts []string) bool {
	for _, p := range parts {
		if p == "" || strings.HasPrefix(path, p) && len(path) > len(p) && (path[len(p)] == '.' || path[len(p)] == '[') {
			return true
		}
	}
	return false
}

// flat reports a container that holds no container.
func flat(v parse.Value) bool {
	for _, m := range v.Members {
		if m.Value.IsContainer() {
			return false
		}
	}
	for _, e := range v.Elems {
		if e.IsContainer() {
			return false
		}
	}
	return true
}

// fitOf is how much v looks like a draft, as Build would read it: an object's report fields
// (its own, or in an object beside its list: {"report": {"title": …}, "results": [...]}) and
// the rows of its lists (under a list key or any other key but the patient's, groups and tables
// included, or keyed by name under a list key), or the object itself as one row; a list's rows,
// and the fields of the first report in it.
func fitOf(v parse.Value) fit {
	switch v.Kind {
	case parse.Array:
		n := listRows(v.Elems, 0)
		f := fit{rows: n.rows, named: n.named}
		if len(v.Elems) > 0 && v.Elems[0].Kind == parse.Object {
			f.fields = reportFields(v.Elems[0].Members)
		}
		return f
	case parse.Object:
		var f fit
		var n count
		switch {
		case rowLike(v):
			n.rows = 1
		case named(v):
			n.named = 1
		default:
			if list, _, ok := asTable(v); ok { // {"headers": [...], "rows": [[...]]}, columns/data
				n.add(listRows(list, 1))
			}
		}
		f.fields = reportFields(v.Members)
		side := 0
		for _, m := range v.Members {
			k := fieldOf(m.Key, 0)
			switch {
			case m.Value.Kind == parse.Array && (k == fIndicators || k == noField && !isPersonKey(m.Key)):
				n.add(listRows(m.Value.Elems, 0))
				if k == noField && len(m.Value.Elems) > 0 && m.Value.Elems[0].Kind == parse.Object {
					side = max(side, reportFields(m.Value.Elems[0].Members)) // {"pages": [{"title": …}, …]}
				}
			case m.Value.Kind == parse.Object && k == fIndicators:
				n.add(objectRows(m.Value, true))
			case m.Value.Kind == parse.Object && k == noField && isPageKey(m.Key):
				n.add(pageRows(m.Value)) // {"page1": {…}, "page2": {…}}
			case m.Value.Kind == parse.Object && k == noField && !isPersonKey(m.Key):
				side = max(side, reportFields(m.Value.Members))
				n.add(objectRows(m.Value, false)) // {"table": {"headers": …}}, {"血常规": {"WBC": {…}}}
			}
		}
		f.rows, f.named = n.rows, n.named
		if f.rows > 0 {
			f.fields = max(f.fields, side)
		}
		return f
	}
	return fit{}
}

// pageRows counts the rows of one page's draft keyed by its number: those of its lists.
func pageRows(v parse.Value) count {
	var n count
	for _, m := range v.Members {
		if k := fieldOf(m.Key, 0); m.Value.Kind == parse.Array && (k == fIndicators || k == noField && !isPersonKey(m.Key)) {
			n.add(listRows(m.Value.Elems, 0))
		}
	}
	return n
}

// reportFields counts an object's report fields that hold a value.
func reportFields(members []parse.Member) int {
	n := 0
	for _, m := range members {
		switch fieldOf(m.Key, 0) {
		case fTitle, fHospital, fCheckupDate, fReportYear:
			if m.Value.Kind == parse.String && strings.TrimSpace(m.Value.Text) != "" || m.Value.Kind == parse.Number {
				n++
			}
		}
	}
	return n
}

// rowLike reports an object that reads as one indicator: a name and a result, unit or range.
// A tool call's {"name": "record_report", "arguments": {…}} is not one.
func rowLike(v parse.Value) bool {
	name, result := false, false
	for _, m := range v.Members {
		switch fieldOf(m.Key, 1) {
		case fItemName:
			name = name || isName(m.Value)
		case fValueNum, fValueText, fValue, fUnit, fRefLow, fRefHigh, fRefRange, fPrintedFlag, fInRange, fOutRange:
			result = result || m.Value.Kind != parse.Null && m.Value.Kind != parse.Array
		}
	}
	return name && result
}

// named reports an object Build keeps as an item without a result: a name and an item field
// beside it, even null ({"itemName": "x", "refRange": null}), a name beside a null under any key,
// or a name alone ({"itemName": "x"}). A tool call's {"name": …, "arguments": …} is not one.
func named(v parse.Value) bool {
	name, other := false, len(v.Members) == 1
	for _, m := range v.Members {
		switch k := fieldOf(m.Key, 1); {
		case k == fItemName:
			name = name || isName(m.Value)
		case k != noField && k != fIndicators, m.Value.Kind == parse.Null:
			other = true // an item field, or a null beside the name: a tool call's arguments are never null
		}
	}
	return name && other
}

// listRows counts the rows a list gives: its row objects, a table's rows under its header, and
// the rows of groups in it ({"group": …, "items": [...]}, a report's own list), maxGroupDepth
// levels deep.
func listRows(elems []parse.Value, depth int) count {
	var n count
	for _, e := range tableRows(elems) {
		if e.Kind != parse.Object {
			continue
		}
		if rowLike(e) {
			n.rows++
			continue
		}
		if named(e) {
			n.named++
			continue
		}
		if depth >= maxGroupDepth {
			continue
		}
		for _, m := range e.Members {
			switch k := fieldOf(m.Key, 1); {
			case m.Value.Kind == parse.Array && (k == fIndicators || k == fValue || k == fItemName):
				n.add(listRows(m.Value.Elems, depth+1))
			case m.Value.Kind == parse.Object && k == fIndicators:
				n.add(objectRows(m.Value, true))
			}
		}
	}
	return n
}

// objectRows counts the rows an object under a key gives as Build reads it (rowsOf, keyedItems):
// a table of a header and rows ({"headers": [...], "rows": [[...]]}, columns/data), rows keyed by
// their names ({"WBC": {"结果": "6.5"}}), and, under a key that names the list (list), indicators
// keyed by name as text ({"总胆固醇": "5.86 mmol/L"}).
func objectRows(v parse.Value, list bool) count {
	if t, _, ok := asTable(v); ok {
		return listRows(t, 1)
	}
	if list {
		return count{rows: keyedRows(v.Members)}
	}
	if isKeyedRows(v.Members) {
		return count{rows: keyedRows(v.Members)}
	}
	return count{}
}

// keyedRows counts the rows of indicators keyed by name ({"总胆固醇": "5.86 mmol/L"} or
// {"总胆固醇": {"value": 5.86}}) under a list key: members that are not report fields and hold a
// result.
func keyedRows(members []parse.Member) int {
	n := 0
	for _, m := range members {
		if known(m.Key, 0) || known(m.Key, 1) {
			continue // {"title": …} or {"value": …, "unit": …}: a draft or a result, not rows keyed by name
		}
		switch m.Value.Kind {
		case parse.Number:
			n++
		case parse.String:
			if strings.TrimSpace(m.Value.Text) != "" {
				n++
			}
		case parse.Object:
			for _, x := range m.Value.Members {
				if k := fieldOf(x.Key, 1); k == fValue || k == fValueNum || k == fValueText {
					n++
					break
				}
			}
		case parse.Array:
			n += listRows(m.Value.Elems, 1).rows
		}
	}
	return n
}

// asPages reads a list of two or more whole reports (each an object with report fields and
// lists of rows, not a row itself) as a reply's pages ({"pages": [...]}), so that they merge as pages do: each keeps its
// fields, a differing one is a page_conflict, never null.
func asPages(v parse.Value) parse.Value {
	if v.Kind != parse.Array || len(v.Elems) < 2 {
		return v
	}
	for _, e := range v.Elems {
		if e.Kind != parse.Object || reportFields(e.Members) == 0 || rowLike(e) || fitOf(e).rows == 0 {
			return v
		}
	}
	return parse.Value{Kind: parse.Object, Members: []parse.Member{{Key: pageKeys[0], Value: v}}}
}

// laterStage is the later of two stages in the order they are tried: a draft in a fence inside
// a strict API body was read from a fence.
func laterStage(a, b schema.ParseStage) schema.ParseStage {
	for _, s := range schema.ParseStages {
		switch s {
		case a:
			return b
		case b:
			return a
		}
	}
	return b
}

// isName reports a value Build reads as an item's name: text that is not blank, or a number
// ({"name": 0} is a row named 0, as readText reads it).
func isName(v parse.Value) bool {
	return v.Kind == parse.String && strings.TrimSpace(v.Text) != "" || v.Kind == parse.Number
}
