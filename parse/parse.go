// Package parse turns a vision model's raw reply into JSON values. Replies are untrusted text that
// is usually almost JSON: fenced, wrapped in chatter, with trailing commas, Python literals,
// full-width punctuation, or cut off at the token limit. Reply finds every JSON value the text
// could honestly mean and lets the caller pick the best one; it never invents data at a cut.
//
// The stages, cheapest first:
//  1. strict: the whole trimmed reply decodes as JSON (the fast path; the repairer is not touched);
//  2. fenced / extracted: the content of a ``` or ~~~ fence, or a balanced top-level {…} or […]
//     found by a string-aware scan, decodes as JSON;
//  3. repaired: a candidate that does not decode is normalised (full-width punctuation and curly
//     quotes outside strings), cut back to its last complete item if it is unclosed, and repaired
//     with kaptinlin/jsonrepair in pieces of at most 96 characters, within a budget per reply
//     (budget.go: the repairer is cubic on some text); its output is re-checked with json.Valid.
//
// Nothing is dropped in silence: what a limit left unread is counted (Reading.Unread), and a
// reply longer than MaxReply says so (Reading.TooLong).
package parse

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// The stages a value is found at (schema.ParseStage, the contract's, which meta and metrics
// report), in the order they are tried.
const (
	Strict    = schema.StageStrict
	Fenced    = schema.StageFenced
	Extracted = schema.StageExtracted
	Repaired  = schema.StageRepaired
	Failed    = schema.StageFailed
)

// Candidate is one JSON value found in a reply.
type Candidate struct {
	// Value is the decoded JSON, an object or an array, numbers as the model wrote them.
	Value Value
	Stage schema.ParseStage
	// Truncated reports that the candidate's text was unclosed at the end of the reply; it was cut
	// back to its last complete item, and whatever was open at the cut is gone.
	Truncated bool
	// Offset and Len locate the candidate's text in the reply, for tie-breaks and diagnostics.
	Offset, Len int
	// Joined reports a list made of the flat objects before it, written one per line or fence.
	Joined bool
	// Inner are the JSON values held in this value's strings, read as a reply is: an API body's
	// content (choices[0].message.content), a tool call's arguments. Each has its Path; its
	// Offset and Len are in the string that holds it. See inner.go.
	Inner []Candidate
	// Path is where an Inner value was found in the value that holds it, as a warning's path is
	// written (choices[0].message.content, [0].arguments); "" for a value of the reply's text.
	Path string
	// plain: no string of the value can hold JSON (see plain), so inner has nothing to find.
	plain bool
	// depth counts the strings decoded again to reach the value (a double-encoded reply, a
	// string holding JSON): at most maxUnwrap.
	depth int
}

// Limits that bound the work one reply can cost, whatever its shape.
const (
	// MaxReply is the longest reply looked at, in bytes; the rest is not read (Reading.TooLong).
	MaxReply = 256 << 10
	// maxCandidates bounds how many fences and spans are decoded; the rest are counted unread.
	// Each costs a decode, linear in its length, and a few allocations, so the bound is on those
	// (a reply of 256 KB of {} is 87 000 spans), not on rows: one row is at least 16 bytes
	// ({"itemName":"x"}), so a list written one row per fence or line is read whole up to MaxReply.
	maxCandidates = MaxReply / 16
	// maxUnwrap bounds how deep a JSON string holding JSON is decoded again.
	maxUnwrap = 2
	// quoteLen is how much of a reply a failure's detail quotes, in characters.
	quoteLen = 120
)

// Reading is what Read found in a reply, and what it had to leave unread.
type Reading struct {
	// Candidates are the JSON values found, best guess first by stage and position.
	Candidates []Candidate
	// TooLong reports that the reply was longer than MaxReply: only its start was read, and
	// anything after it is missing (the model did not stop there; the service did).
	TooLong bool
	// Unread counts JSON values and list items that were not read because a limit on the work
	// one reply may cost was reached: the repair budget, or more than maxCandidates values.
	Unread int
	// Work is what reading cost, within Bound(len(reply)).
	Work Work
}

// Reply returns the JSON values found in a reply; see Read.
func Reply(reply string) ([]Candidate, error) {
	rd, err := Read(context.Background(), reply)
	return rd.Candidates, err
}

// Read returns the JSON values found in a reply, best guess first by stage and position; the
// caller scores them (the one that yields the most indicators should win, so that an echoed
// format example loses to the real answer). A reply with no usable JSON is a *problem.Error with
// code model_output_unparseable quoting the start of the reply.
//
// The work is bounded whatever the text (see Bound), and ctx is checked between pieces: when it
// is done, Read returns its error, wrapped.
func Read(ctx context.Context, reply string) (Reading, error) {
	r := &reader{ctx: ctx}
	cut := false // the reply goes on past what is read
	if len(reply) > MaxReply {
		reply, cut = r.squeeze(reply, MaxReply) // a flood of white space is no content (flood.go)
	}
	streamed := ""
	if t, at, ok := unstream(reply); ok { // a streamed body passed on whole (stream.go)
		reply, streamed = t, at
	}
	text, unfinished, cands := r.whole(reply)
	if cands == nil {
		text, unfinished = answer(reply)
		if (unfinished != "" || len(text) != len(reply)) && len(reply) <= MaxReply && r.valid(trim(reply)) {
			// The reply is JSON, and the tags or markers are in its strings (an API body whose
			// content reasons): the strings are read as replies are, reasoning dropped (inner.go).
			text, unfinished = reply, ""
		}
		text = trim(text)
		if len(text) > MaxReply {
			n := MaxReply
			for n > 0 && !utf8.RuneStart(text[n]) {
				n-- // cut at a character, not inside one
			}
			text = text[:n]
		}
		r.n = len(text)
		cands = r.candidates(text, 0)
	}
	rd := Reading{TooLong: cut || len(text) > MaxReply}
	for i := range cands {
		r.inner(&cands[i])
	}
	if lines := lineItems(cands); lines != nil {
		cands = append(cands, *lines)
		r.kept++
	}
	if streamed != "" {
		for i := range cands {
			cands[i].Path = streamed
		}
	}
	rd.Candidates, rd.Unread, rd.Work = cands, r.unread, r.work
	rd.Work.Candidates = r.kept
	if r.err != nil {
		return rd, fmt.Errorf("parse: reading the reply: %w", r.err)
	}
	if len(cands) == 0 {
		if unfinished != "" {
			return rd, Unparseable(reply, unfinished)
		}
		if r.spent {
			return rd, Unparseable(reply, "the model's reply is too broken to repair within the work one reply may cost")
		}
		return rd, unparseable(reply)
	}
	return rd, nil
}

// whole reads a reply that is one JSON object or list, the common case, as its one candidate.
// Reasoning's tags and markers are then in its strings, which are read as replies are (inner.go),
// so nothing is dropped, and the reply need not be searched for them first. A reply that is not
// JSON is remembered (r.broken), so that candidates does not decode it again.
func (r *reader) whole(reply string) (string, string, []Candidate) {
	t := trim(reply)
	if len(t) > MaxReply || t == "" || t[0] != '{' && t[0] != '[' {
		return "", "", nil
	}
	v, n, ok := r.decodeCounted(t)
	if !ok {
		r.broken = t
		return "", "", nil
	}
	r.n = len(t)
	r.kept++
	return t, "", []Candidate{{Value: v, Stage: Strict, Len: len(t), plain: plain(t, n)}}
}

// plain reports that no string of the JSON text t, holding n objects and lists, can hold JSON
// (holdsJSON): every bracket of t is one of its values' own, and t has no full-width bracket
// and no fence. inner then need not walk the value: the common reply costs a few scans of its
// bytes, not a walk of every value.
func plain(t string, n int) bool {
	return strings.Count(t, "{")+strings.Count(t, "[") == n &&
		!strings.Contains(t, "｛") && !strings.Contains(t, "［") && !fenced(t) && !escapesMark(t)
}

// escapesMark reports whether t writes, as a \u escape, a character that holdsJSON looks for
// (jsonMarks) and that the decoded string would then hold.
func escapesMark(t string) bool {
	for i := strings.Index(t, `\u`); i >= 0; {
		if i+6 <= len(t) {
			if r, err := strconv.ParseUint(t[i+2:i+6], 16, 32); err == nil && strings.ContainsRune(jsonMarks, rune(r)) {
				return true
			}
		}
		j := strings.Index(t[i+2:], `\u`)
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return false
}

// strictly is decode, except for the reply that whole found is not JSON.
func (r *reader) strictly(text string, depth int) (Value, bool) {
	if depth == 0 && text == r.broken {
		return Value{}, false
	}
	return r.decode(text)
}

// lineItems joins replies written one flat object per line ({"itemName": "TSH", …} then
// {"itemName": "FT3", …}), or one per fence (a model that writes ```json {row}``` row by row),
// into the list they mean, as one more candidate. Only flat objects qualify (no list or object
// inside), so a format example echoed before an answer is never joined to it.
func lineItems(cands []Candidate) *Candidate {
	if len(cands) < 2 {
		return nil
	}
	var elems []Value
	var first, last *Candidate
	stage, truncated := Extracted, false
	for i := range cands {
		c := &cands[i]
		if c.Value.Kind == Object && len(c.Value.Members) == 0 {
			continue // a stray {} in prose
		}
		if c.Value.Kind != Object || c.Stage == Strict {
			return nil
		}
		for _, m := range c.Value.Members {
			if m.Value.IsContainer() {
				return nil
			}
		}
		elems = append(elems, c.Value)
		switch {
		case c.Stage == Repaired:
			stage = Repaired
		case c.Stage == Fenced && stage == Extracted:
			stage = Fenced
		}
		truncated = truncated || c.Truncated
		if first == nil {
			first = c
		}
		last = c
	}
	if len(elems) < 2 {
		return nil
	}
	return &Candidate{Value: Value{Kind: Array, Elems: elems}, Stage: stage, Truncated: truncated,
		Offset: first.Offset, Len: last.Offset + last.Len - first.Offset, Joined: true}
}

// candidates does the work of Read on trimmed text; depth counts double-encoding unwraps.
func (r *reader) candidates(text string, depth int) []Candidate {
	// Stage 1: the whole reply is JSON (tried already when it is the reply itself, by whole).
	if v, ok := r.strictly(text, depth); ok {
		if v.Kind == String {
			if depth < maxUnwrap && r.reread(len(v.Text)) {
				return r.candidates(trim(v.Text), depth+1)
			}
			return nil
		}
		if v.IsContainer() {
			r.kept++
			return []Candidate{{Value: v, Stage: Strict, Len: len(text), depth: depth}}
		}
		return nil // a bare number or literal is not a draft
	}
	if depth < maxUnwrap {
		if u, ok := r.overEscaped(text); ok {
			// {\"title\": …}: every quote escaped once too often. Read unescaped, it is JSON.
			if cands := r.candidates(trim(u), depth+1); len(cands) > 0 {
				for i := range cands {
					cands[i].Stage = Repaired // the text was changed to be read
				}
				return cands
			}
		}
	}

	// Stage 2 and 3: fences and balanced spans, each decoded strictly or else repaired.
	// A fence's content is found again as a span: seen holds where each body was, so that it is
	// tried once, while two equal rows at different places are two rows.
	var out []Candidate
	type place struct{ offset, len int }
	seen := make(map[place]bool)
	hasEmpty := false
	try := func(p piece, stage schema.ParseStage) {
		body := strings.TrimSpace(p.text)
		at := place{p.offset + len(p.text) - len(strings.TrimLeftFunc(p.text, unicode.IsSpace)), len(body)}
		if body == "" || seen[at] {
			return
		}
		if r.err == nil {
			r.err = r.ctx.Err()
		}
		if r.err != nil {
			return
		}
		if r.kept >= maxCandidates {
			r.unread++
			return
		}
		if stage == Fenced {
			seen[at] = true // spans do not overlap one another, only fences
		}
		if v, ok := r.decode(body); ok {
			if v.Kind == String && depth < maxUnwrap {
				if !r.reread(len(v.Text)) {
					r.unread++
					return
				}
				for _, c := range r.candidates(trim(v.Text), depth+1) {
					c.Offset, c.Len = p.offset, len(p.text)
					if c.Stage == Strict {
						c.Stage = stage
					}
					out = append(out, c)
				}
				return
			}
			if v.IsContainer() && !(isEmpty(v) && hasEmpty) {
				hasEmpty = hasEmpty || isEmpty(v) // one {} says the reply held JSON; more say nothing
				r.kept++
				out = append(out, Candidate{Value: v, Stage: stage, Offset: p.offset, Len: len(p.text), depth: depth})
			}
			return
		}
		if body[0] != '{' && body[0] != '[' && !strings.HasPrefix(body, "｛") && !strings.HasPrefix(body, "［") {
			return // fence content with chatter: its spans are tried on their own
		}
		v, truncated, ok := r.repair(body)
		switch {
		case ok && v.IsContainer():
			r.kept++
			out = append(out, Candidate{Value: v, Stage: Repaired, Truncated: truncated || p.unclosed, Offset: p.offset, Len: len(p.text), depth: depth})
		case !ok && r.halted():
			r.unread++
		}
	}
	for _, f := range fences(text) {
		try(f, Fenced)
	}
	ss, more := spans(text)
	for _, s := range ss {
		try(s, Extracted)
	}
	r.unread += more
	r.halted() // a context that ended during the last piece is still seen
	return out
}

// isEmpty reports an empty object or list.
func isEmpty(v Value) bool {
	return v.IsContainer() && len(v.Members) == 0 && len(v.Elems) == 0
}

// trim drops a byte-order mark and surrounding white space.
func trim(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "\uFEFF")
	return strings.TrimSpace(s)
}

// decode is decode, counted. A long text is checked with json.Valid first, which allocates
// nothing: decoding 256 KB of [1,1,…] that turns out unclosed at its end would build 128 000
// values to throw away, and a reply's text is decoded whole by more than one stage.
func (r *reader) decode(s string) (Value, bool) {
	v, _, ok := r.decodeCounted(s)
	return v, ok
}

// decodeCounted is decode, also saying how many objects and lists the value holds.
func (r *reader) decodeCounted(s string) (Value, int, bool) {
	if len(s) > checkFirst && !r.valid(s) {
		return Value{}, 0, false
	}
	r.work.Decoded += len(s)
	return decode(s)
}

// checkFirst is the length above which decode checks before it builds.
const checkFirst = 16 << 10

// valid is json.Valid, counted.
func (r *reader) valid(s string) bool {
	r.work.Decoded += len(s)
	return json.Valid([]byte(s))
}

// decode is a strict decode of exactly one JSON value, keeping numbers as written, with the
// number of objects and lists in it.
func decode(s string) (Value, int, bool) {
	if s == "" {
		return Value{}, 0, false
	}
	switch s[0] {
	case '{', '[', '"':
	default:
		return Value{}, 0, false
	}
	v, n, err := decodeCounted(s)
	return v, n, err == nil
}

// unparseable is the error for a reply without usable JSON, quoting its start so the caller can
// see a refusal for what it is.
func unparseable(reply string) error {
	return Unparseable(reply, "the model's reply holds no usable JSON")
}

// piece is a stretch of the reply that may hold JSON.
type piece struct {
	text     string
	offset   int
	unclosed bool // ran to the end of the reply without closing
}

// fences returns the content of every ``` and ~~~ fence, in order, up to maxCandidates of them
// (the JSON in any further fence is found again, and counted, by spans). An unclosed fence runs
// to the end of the reply: a cut reply often stops inside its fence.
func fences(text string) []piece {
	var out []piece
	for i := 0; i < len(text) && len(out) < maxCandidates; {
		j := indexFence(text, i)
		if j < 0 {
			break
		}
		marker := text[j : j+3]
		// The info string (json, JSON, …) runs to the end of the line.
		start := j + 3
		if nl := strings.IndexByte(text[start:], '\n'); nl >= 0 && !strings.ContainsAny(text[start:start+nl], "{[") {
			start += nl + 1
		} else {
			for start < len(text) && isInfoByte(text[start]) {
				start++
			}
		}
		end := strings.Index(text[start:], marker)
		if end < 0 {
			out = append(out, piece{text: text[start:], offset: start, unclosed: true})
			break
		}
		out = append(out, piece{text: text[start : start+end], offset: start})
		i = start + end + 3
	}
	return out
}

func indexFence(text string, from int) int {
	a := strings.Index(text[from:], "```")
	b := strings.Index(text[from:], "~~~")
	switch {
	case a < 0 && b < 0:
		return -1
	case a < 0:
		return from + b
	case b < 0 || a < b:
		return from + a
	default:
		return from + b
	}
}

func isInfoByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// spans returns every balanced top-level {…} or […] in the text, found by a scan that knows JSON
// strings, so braces inside strings do not count. Full-width brackets count as brackets because
// some models write them as structure. A span still open at the end runs to the end and is marked
// unclosed. Only the first maxCandidates are returned; more counts the rest.
func spans(text string) (out []piece, more int) {
	depth, start := 0, -1
	inString := false
	for i := 0; i < len(text); {
		c := text[i]
		size := 1
		if depth > 0 && inString {
			switch c {
			case '\\':
				size = 2
			case '"':
				inString = false
			}
			i += size
			continue
		}
		if depth == 0 && c == '"' && i+1 < len(text) && (text[i+1] == '{' || text[i+1] == '[') {
			// A JSON document encoded as a string literal, after chatter: decode the literal.
			if n := stringLiteral(text[i:]); n > 0 {
				if len(out) < maxCandidates {
					out = append(out, piece{text: text[i : i+n], offset: i})
				} else {
					more++
				}
				i += n
				continue
			}
		}
		open, close := false, false
		switch {
		case c == '{' || c == '[':
			open = true
		case c == '}' || c == ']':
			close = true
		case c == '"' && depth > 0:
			inString = true
		case c == 0xEF && i+2 < len(text): // ｛［｝］ are EF BD 9B, EF BC BB, EF BD 9D, EF BC BD
			switch text[i : i+3] {
			case "｛", "［":
				open, size = true, 3
			case "｝", "］":
				close, size = true, 3
			}
		}
		switch {
		case open:
			if depth == 0 {
				start = i
			}
			depth++
		case close && depth > 0:
			depth--
			if depth == 0 {
				if len(out) < maxCandidates {
					out = append(out, piece{text: text[start : i+size], offset: start})
				} else {
					more++
				}
			}
		}
		i += size
	}
	switch {
	case depth > 0 && len(out) < maxCandidates:
		out = append(out, piece{text: text[start:], offset: start, unclosed: true})
	case depth > 0:
		more++
	}
	return out, more
}

// stringLiteral returns the length of the JSON string literal at the start of s, or 0. It reads
// no further than the literal's end, or the first byte that cannot be in one, so that the scan
// for spans stays linear however many quotes the text holds.
func stringLiteral(s string) int {
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '"':
			if json.Valid([]byte(s[:i+1])) {
				return i + 1
			}
			return 0
		case c < 0x20:
			return 0
		}
	}
	return 0
}

// Unparseable is the error model_output_unparseable, saying why and quoting the start of the
// reply (at most 120 characters) so the caller can see a refusal for what it is. The draft uses
// it for a reply that holds JSON but no report data, so that it is never an empty success.
func Unparseable(reply, why string) error {
	q := strings.TrimSpace(strings.TrimPrefix(reply, "\uFEFF"))
	if q == "" {
		return problem.Errorf(problem.ModelOutputUnparseable, "the model's reply is empty")
	}
	return &problem.Error{Code: problem.ModelOutputUnparseable, Detail: why, Excerpt: Excerpt(q)}
}

// Excerpt is the start of a model's text as a problem quotes it: at most quoteLen characters.
func Excerpt(s string) string {
	if utf8.RuneCountInString(s) > quoteLen {
		return string([]rune(s)[:quoteLen]) + "…"
	}
	return s
}
