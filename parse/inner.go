package parse

import (
	"strconv"
	"strings"
)

// JSON held in strings. A model's reply may be a whole API body passed on (a chat completion
// whose choices[0].message.content holds the draft, an Ollama body whose response holds it in a
// fence), or a tool call whose arguments are JSON written as a string. Read finds the JSON in
// such strings as it finds it in a reply, and hangs it on the value that holds it
// (Candidate.Inner, with its Path); which value is the draft is the caller's to judge, by fit.
//
// Work: every string read again, at any depth, and every reply read again unescaped, is charged
// its length against reread, at most maxUnwrap times the reply's length: with the reply's own
// read, no byte is read more often than the unwraps Bound allows. A string that would pass that
// is not read and counted unread.

// minInner is the shortest string read again: {"name":"x"} is 12 bytes.
const minInner = 12

// inner finds the JSON held in c's strings (and, within maxUnwrap, in theirs).
func (r *reader) inner(c *Candidate) {
	if c.depth >= maxUnwrap || !c.Value.IsContainer() || c.plain {
		return
	}
	var path []step // the steps to the value walked: a key, or an element's index
	var walk func(v Value)
	walk = func(v Value) {
		switch v.Kind {
		case Object:
			for i := range v.Members {
				path = append(path, step{key: v.Members[i].Key, index: -1})
				walk(v.Members[i].Value)
				path = path[:len(path)-1]
			}
		case Array:
			for i := range v.Elems {
				if e := &v.Elems[i]; e.Kind == Object || e.Kind == Array || e.Kind == String && len(e.Text) >= minInner {
					path = append(path, step{index: i})
					walk(*e)
					path = path[:len(path)-1]
				}
			}
		case String:
			if !holdsJSON(v.Text) || r.halted() {
				return
			}
			if !r.reread(len(v.Text)) {
				r.unread++
				return
			}
			at := stepsPath(path)
			text, unfinished := answer(v.Text) // a body's content may reason too
			if unfinished != "" {
				return
			}
			cands := r.candidates(trim(text), c.depth+1)
			for i := range cands {
				cands[i].Path = at
				r.inner(&cands[i])
			}
			if lines := lineItems(cands); lines != nil { // rows one per line or fence, as in a reply
				r.kept++
				lines.Path, lines.depth = at, c.depth+1
				cands = append(cands, *lines)
			}
			c.Inner = append(c.Inner, cands...)
		}
	}
	walk(c.Value)
}

// step is one step of the path inner walks: a member's key, or an element's index (index ≥ 0).
type step struct {
	key   string
	index int
}

// stepsPath writes the steps inner walked as a path.
func stepsPath(path []step) string {
	ss := make([]string, len(path))
	for i, st := range path {
		if st.index >= 0 {
			ss[i] = "[" + strconv.Itoa(st.index) + "]"
		} else {
			ss[i] = KeyStep(st.key)
		}
	}
	return JoinPath(ss...)
}

// reread charges m bytes read again against what the reply allows, or reports that they
// cannot be paid.
func (r *reader) reread(m int) bool {
	if r.work.Reread+m > maxUnwrap*r.n {
		return false
	}
	r.work.Reread += m
	return true
}

// holdsJSON reports whether a string may hold a JSON object or list: an object's bracket
// followed by a quote ({" or {', full-width too: ｛“) or by a key without quotes and its colon
// ({itemName:), a list's by a list, an object or a quote ([[, [{, ["), or a fence, anywhere in it. A unit in brackets ([mmol/L]), a mark ({H}) or a
// range ([3.5-5.5]) does not.
func holdsJSON(s string) bool {
	if len(s) < minInner {
		return false
	}
	if strings.IndexByte(s, '{') < 0 && strings.IndexByte(s, '[') < 0 && strings.IndexByte(s, 0xEF) < 0 {
		return fenced(s) // most strings, looked at many bytes at a time
	}
	for i := 0; i < len(s); i++ {
		var list bool
		switch {
		case s[i] == '{':
		case s[i] == '[':
			list = true
		case s[i] == 0xEF && strings.HasPrefix(s[i:], "｛"):
			i += len("｛") - 1
		case s[i] == 0xEF && strings.HasPrefix(s[i:], "［"):
			i += len("［") - 1
			list = true
		default:
			continue
		}
		u := strings.TrimLeft(s[i+1:], " \t\r\n")
		switch {
		case u == "":
		case u[0] == '"' || u[0] == '\'' || strings.HasPrefix(u, "“"):
			return true
		case list && (u[0] == '{' || u[0] == '[' || strings.HasPrefix(u, "｛")):
			return true
		case !list && bareKey(u):
			return true
		}
	}
	return fenced(s)
}

// bareKey reports whether u begins with a key written without quotes and its colon
// ({itemName: …}, as JavaScript writes objects), which the repairer reads as JSON.
func bareKey(u string) bool {
	i := 0
	for i < len(u) && (u[i] == '_' || u[i] >= 'a' && u[i] <= 'z' || u[i] >= 'A' && u[i] <= 'Z' || i > 0 && u[i] >= '0' && u[i] <= '9') {
		i++
	}
	if i == 0 {
		return false
	}
	u = strings.TrimLeft(u[i:], " \t")
	return strings.HasPrefix(u, ":") || strings.HasPrefix(u, "：")
}

// jsonMarks are the characters that begin what holdsJSON takes for JSON or a fence: brackets,
// full-width brackets, a fence's backtick or tilde. plain and escapesMark look for the same.
const jsonMarks = "{[｛［`~"

// fenced reports whether s holds a fence.
func fenced(s string) bool {
	return strings.Contains(s, "```") || strings.Contains(s, "~~~")
}

// KeyStep is a member's key as a step of a path: as written when it is a plain name, else
// quoted in brackets (["a b"]).
func KeyStep(k string) string {
	if k == "" || strings.ContainsAny(k, ".[]\"' \t\r\n") {
		return "[" + strconv.Quote(k) + "]"
	}
	return k
}

// IndexStep is a list's element as a step of a path: [3].
func IndexStep(i int) string { return "[" + strconv.Itoa(i) + "]" }

// JoinPath writes steps as a path, leaving out empty ones: choices[0].message.content,
// [0].arguments.
func JoinPath(steps ...string) string {
	var b strings.Builder
	for _, s := range steps {
		if s == "" {
			continue
		}
		if b.Len() > 0 && s[0] != '[' {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// overEscaped returns the text unescaped once when every quote in it is escaped
// ({\"title\": \"血脂\", …}: a reply escaped once too often, by a model or a proxy), charged as
// read again. Only \" \\ \/ \n \r \t are unescaped; any other escape is kept as written, so that
// \u00e9 inside a string still means é.
func (r *reader) overEscaped(text string) (string, bool) {
	if !strings.Contains(text, `\"`) {
		return "", false
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			return "", false // a quote as JSON writes it: not escaped once too often
		}
	}
	if !r.reread(len(text)) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' || i+1 == len(text) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := text[i]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), true
}
