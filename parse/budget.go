package parse

import (
	"context"
	"unicode/utf8"
)

// The repairer (kaptinlin/jsonrepair v0.4.8) is cubic on some text. When a quote is not followed
// by a delimiter ({'a'a'a…}) its parseString takes the quote for an unescaped one inside the
// string and scans on to the end of the text, copying the string and the whole output at every
// further quote; at the end it backs up and re-reads the string stopping at the first delimiter,
// having consumed two characters, so the object parser starts the same scan at the next quote:
// n strings × n characters × n bytes copied. Measured here on a shared CPU (the worst of a random
// search over pieces the splitter hands it, such as [\n'a\n'a…}; BenchmarkRepairPiece): up to
// 7.5 ms for 128 characters and 3 ms for 96 under heavy load (0.3–0.7 ms for 96 when quieter),
// 70 ms for 1 KB, seconds for 4 KB. So every call is small, and one
// reply pays for at most a budget of them. A Python-style reply needs no call at all: its
// containers are split and its literals fixed by hand (repairPiece's cheap pass).
const (
	// smallPiece is the longest text repaired whole before trying to split it at its top-level
	// commas; maxPiece the longest repaired whole at all, when it cannot be split. In characters
	// (runes), the unit the repairer works in.
	smallPiece = 64
	maxPiece   = 96
	// repairBudget is the repairer's work one reply may cost, in units of cost(n): a call on n
	// characters is charged its measured worst case, about n + n³/280 µs, so the budget is about
	// 25 ms of CPU whatever the text (7 calls on the worst text of maxPiece characters, or 1700
	// on ten characters). Once it is spent nothing more is repaired; what is left is reported as
	// unread.
	repairBudget = 25_000
	// callCost is the fixed part of a call and of what precedes it (the strict decodes that
	// failed, normalising, cutting, splitting; a failed decode allocates its error).
	callCost = 8
	// cubic scales the cubic part of cost.
	cubic = 280
)

// cost is the repairer's worst-case cost of a call on n characters, in budget units (about µs).
func cost(n int) int { return callCost + n + n*n*n/cubic }

// Work counts what reading one reply cost, by counting, not by timing, so that tests and
// fuzzers can bound it.
type Work struct {
	Candidates int // JSON values kept as candidates
	Decoded    int // bytes given to the strict decoder (json.Valid included)
	Scanned    int // bytes scanned to split text for repair
	Repairs    int // calls of the repairer
	Repaired   int // characters given to the repairer
	Cost       int // the repairer's charged cost, at most repairBudget
	Reread     int // bytes read again: strings holding JSON, a reply decoded or unescaped again
	Walked     int // values the draft's finder looked at, to find the draft among them
}

// Bound is the most work reading a reply of n bytes may cost: the repairer's budget, and a
// linear bound on everything else. Each byte is decoded by each stage that sees it (the whole
// reply, a fence, a span: a fence's text is a span again); when it is split for repair, it is
// checked and scanned three times (members, key, value) at each nesting level, by the split and
// by each cheap pass started above it; all of it again for each double-encoding unwrapped. The
// repairer's output (at most 32 bytes for each character it is given, escapes included) is
// decoded twice.
func Bound(n int) Work {
	n = min(n, MaxReply)
	unwraps, levels := maxUnwrap+1, (cheapDepth+2)*(maxDepth+1)
	return Work{
		Candidates: maxCandidates + 1,
		Decoded:    unwraps*(8+2*levels)*n + 64*repairBudget + 64,
		Scanned:    unwraps * 2 * 3 * levels * n,
		Repairs:    repairBudget / callCost,
		Repaired:   repairBudget,
		Cost:       repairBudget,
		Reread:     maxUnwrap * n,
		Walked:     (1 + maxUnwrap) * n / 2,
	}
}

// Within reports whether w is within b, naming the first count that is not.
func (w Work) Within(b Work) (string, bool) {
	for _, c := range []struct {
		name    string
		got, to int
	}{
		{"candidates", w.Candidates, b.Candidates},
		{"decoded bytes", w.Decoded, b.Decoded},
		{"scanned bytes", w.Scanned, b.Scanned},
		{"repairer calls", w.Repairs, b.Repairs},
		{"repaired characters", w.Repaired, b.Repaired},
		{"repair cost", w.Cost, b.Cost},
		{"bytes read again", w.Reread, b.Reread},
		{"values walked", w.Walked, b.Walked},
	} {
		if c.got > c.to {
			return c.name, false
		}
	}
	return "", true
}

// reader is the state of reading one reply: its context, its work, and what it left unread.
type reader struct {
	ctx    context.Context
	work   Work
	unread int    // values and list items left unread because a limit was reached
	n      int    // the length of the reply's text, which bounds what is read again
	kept   int    // candidates kept, inner ones included: at most maxCandidates
	spent  bool   // the repair budget ran out
	err    error  // the context's error, once seen
	cheap  bool   // in a cheap pass: split and fix literals, never call the repairer
	broken string // the reply, trimmed, when whole found that it is not JSON
}

// halted reports that nothing more may be repaired: the budget is spent or the request is done.
func (r *reader) halted() bool {
	if r.err == nil {
		r.err = r.ctx.Err()
	}
	return r.spent || r.err != nil
}

// charge takes a call on s from the budget, or reports that it cannot be paid. Once the budget
// cannot pay for a call, nothing more is repaired, so the cut between read and unread is one
// point in the reply, not a scatter of pieces.
func (r *reader) charge(s string) bool {
	if r.halted() {
		return false
	}
	n := utf8.RuneCountInString(s)
	c := cost(n)
	if r.work.Cost+c > repairBudget {
		r.spent = true
		return false
	}
	r.work.Cost += c
	r.work.Repairs++
	r.work.Repaired += n
	return true
}

// runes is the length of s in characters when it may be at most limit, or limit+1.
func runes(s string, limit int) int {
	if len(s) > utf8.UTFMax*limit {
		return limit + 1
	}
	return utf8.RuneCountInString(s)
}
