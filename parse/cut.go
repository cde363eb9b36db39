package parse

import "strings"

// cut handles a reply that stops before its JSON is closed: the model hit its token limit, or the
// text ends mid-value. Repairing such text as it is would invent data — "valueNum": 4. becomes
// 4.0, a half-written name becomes a whole one — so cut goes back to the last point at which no
// item was half-written, and closes what is open there.
//
// An item is an object that is an element of an array (an indicator, or a group of them), or an
// object that is a member value of an object other than the top one (indicators keyed by name). A point
// is safe when, looking outwards from the innermost open container, an array is met before any
// such item: between items, or between the draft's own fields, but never between an item's
// fields. A group whose items array is open is not half-written in that sense; its complete items
// are kept.
//
// cut reports whether the text was unclosed; closed text is returned as it is.
func cut(s string) (string, bool) {
	type frame struct {
		kind      byte // '{' or '['
		item      bool // an object that is an array element
		expectKey bool // in an object, the next string is a key
	}
	var stack []frame
	safe := func() bool {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].kind == '[' {
				return true
			}
			if stack[i].item {
				return false
			}
		}
		return true
	}
	// The last safe point and what was open there; the closers are written once, at the end.
	lastCut := -1
	var lastOpen []byte
	mark := func(end int) {
		if !safe() {
			return
		}
		lastCut, lastOpen = end, lastOpen[:0]
		for _, f := range stack {
			lastOpen = append(lastOpen, f.kind)
		}
	}

	sc := scanner{s: s}
	for sc.next() {
		c := s[sc.pos]
		if sc.inToken {
			// A string's closing quote (the scanner has just cleared quote) completes a value,
			// unless the string was a key.
			if !sc.inComment && sc.quote == 0 && (c == '"' || c == '\'') {
				if len(stack) > 0 && !stack[len(stack)-1].expectKey {
					mark(sc.pos + 1)
				}
			}
			continue
		}
		switch c {
		case '{', '[':
			if len(stack) >= maxNesting {
				return "", true // deeper than any report; nothing honest to salvage
			}
			// An item is an object in a list, or an object keyed inside an object that is not
			// the top one ({"indicators": {"总胆固醇": {…}}}: the indicators keyed by name).
			item := c == '{' && len(stack) > 0 && (stack[len(stack)-1].kind == '[' || len(stack) >= 2 && stack[len(stack)-1].kind == '{')
			stack = append(stack, frame{kind: c, item: item, expectKey: c == '{'})
			if len(stack) == 1 {
				lastCut, lastOpen = -1, lastOpen[:0]
			}
			mark(sc.pos + 1)
		case '}', ']':
			if len(stack) == 0 {
				return s, false // closed (or junk after the value): not ours to cut
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return s, false
			}
			mark(sc.pos + 1)
		case ',':
			if len(stack) > 0 {
				mark(sc.pos)
				if top := &stack[len(stack)-1]; top.kind == '{' {
					top.expectKey = true
				}
			}
		case ':':
			if len(stack) > 0 {
				stack[len(stack)-1].expectKey = false
			}
		}
	}
	if len(stack) == 0 && sc.quote == 0 {
		return s, false
	}
	if lastCut < 0 {
		return "", true
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(s[:lastCut], " \t\r\n,"))
	for i := len(lastOpen) - 1; i >= 0; i-- {
		if lastOpen[i] == '{' {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
	}
	return b.String(), true
}
