package parse

// White-space floods. A model that loops may pad its reply with kilobytes of spaces or blank lines
// between two rows; a flood that pushes the reply past MaxReply would lose the rows after it
// (reply_too_long) although the reply's content fits. So a reply longer than MaxReply has every
// run of white space outside JSON strings squeezed to one byte before the cap is applied: JSON
// means the same without them, and prose and fences keep their line breaks. A reply whose
// content is longer than the cap is still cut there.
//
// Work: one pass, each byte looked at once, over at most maxFlood bytes, counted in
// Work.Scanned; what lies past maxFlood is past the cap whatever it holds.

// maxFlood is the most of a reply squeezed: the vision client's default bound on an answer's
// body (sixteen times MaxReply).
const maxFlood = 16 * MaxReply

// squeeze returns s with each run of two or more white-space bytes outside JSON strings written
// as one (a line break when the run holds one, else a space), and more when it stopped before
// the end of s: once its output is longer than limit, or past maxFlood bytes of s. A string's
// text is kept as written; a raw line break ends a string, since JSON strings hold none (the
// quote was prose's, or the string is broken), so a stray quote costs at most one line.
func (r *reader) squeeze(s string, limit int) (out string, more bool) {
	end := min(len(s), maxFlood)
	b := make([]byte, 0, min(end, limit+1))
	inString := false
	i := 0
	for i < end && len(b) <= limit {
		c := s[i]
		switch {
		case inString:
			switch c {
			case '\\':
				if i+1 < end && s[i+1] != '\n' {
					b = append(b, c, s[i+1])
					i += 2
					continue
				}
			case '"':
				inString = false
			case '\n':
				inString = false
				continue // the line break starts a run of white space outside strings
			}
		case c == '"':
			inString = true
		case isSpace(c):
			j, line := i, false
			for j < end && isSpace(s[j]) {
				line = line || s[j] == '\n'
				j++
			}
			if j-i > 1 {
				c = ' '
				if line {
					c = '\n'
				}
			}
			b = append(b, c)
			i = j
			continue
		}
		b = append(b, c)
		i++
	}
	r.work.Scanned += i
	return string(b), i < len(s)
}

// isSpace reports JSON's white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
