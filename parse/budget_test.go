package parse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kaptinlin/jsonrepair"

	"github.com/ocrdraft/ocrdraft/problem"
)

// fill repeats unit between prefix and suffix up to about n bytes.
func fill(prefix, unit, suffix string, n int) string {
	return prefix + strings.Repeat(unit, max(1, (n-len(prefix)-len(suffix))/len(unit))) + suffix
}

// needsRepair is an item only the repairer reads: an unquoted value.
const needsRepair = `{'itemName': 'x', 'valueNum': 5.86↑},`

// hostile are the shapes that make the repairer work hardest: quotes not followed by a
// delimiter (its cubic case: {'a'a'a…} is the issue's), unbalanced quotes, backslashes, nesting,
// and many small broken items that each need a call.
var hostile = []struct {
	name                 string
	prefix, unit, suffix string
	manyItems            bool // items that each need the repairer: enough of them spend the budget
}{
	{name: "quote-heavy", prefix: "{", unit: "'a", suffix: "}"},
	{name: "quote-heavy-lines", unit: "\n'a", suffix: "}"},
	{name: "curly-quote-lines", prefix: "{", unit: "a\n“", suffix: "}"},
	{name: "double-quote-lines", prefix: "[", unit: "\"a\n", suffix: "}"},
	{name: "unbalanced-quotes", prefix: `{"k": "`, unit: `a" `, suffix: `"}`},
	{name: "escaped-quotes", prefix: `{"k": "`, unit: `\"a`, suffix: "}"},
	{name: "backslash-quotes", prefix: "[", unit: `\1'`, suffix: "}"},
	{name: "nested-brackets", unit: "[{"},
	{name: "nested-keys", unit: "{'a':"},
	{name: "quote-heavy-items", prefix: "[", unit: "{" + strings.Repeat("'a", 31) + "'},", suffix: "]", manyItems: true},
	{name: "worst-pieces", prefix: "[", unit: "[" + strings.Repeat("\n'a", 30) + "},", suffix: "]", manyItems: true},
	{name: "worst-pieces-double", prefix: "[", unit: "[" + strings.Repeat("\"a\n", 30) + "a},", suffix: "]", manyItems: true},
	{name: "nested-items", prefix: "[", unit: "[[[[{" + strings.Repeat("'a", 39) + "'}]]]],", suffix: "]", manyItems: true},
	{name: "python-items", prefix: "[", unit: `{'itemName': 'x', 'valueNum': None, 'ok': True},`, suffix: "]"},
	{name: "unquoted-items", prefix: "[", unit: needsRepair, suffix: "]", manyItems: true},
	{name: "broken-spans", unit: "{x} ", manyItems: true},
}

// TestReadWorkBounded reproduces issue 9: 3.8 KB of {'a'a'a…} cost 2.7 s, 64 KB 53 s, 256 KB
// 264 s. Whatever the shape and size, the work counted stays within Bound, and a budget that
// ran out is never silent: what was left is counted unread, or the reply is unparseable.
func TestReadWorkBounded(t *testing.T) {
	for _, h := range hostile {
		for _, size := range []int{3800, 64 << 10, MaxReply + 1000} {
			t.Run(fmt.Sprintf("%s/%d", h.name, size), func(t *testing.T) {
				reply := fill(h.prefix, h.unit, h.suffix, size)
				rd, err := Read(context.Background(), reply)
				if name, ok := rd.Work.Within(Bound(len(reply))); !ok {
					t.Errorf("%s over its bound: %+v, bound %+v", name, rd.Work, Bound(len(reply)))
				}
				spent := rd.Work.Cost+cost(maxPiece) > repairBudget
				if spent && err == nil && rd.Unread == 0 {
					t.Errorf("the repair budget ran out (%+v) and nothing was counted unread", rd.Work)
				}
				if err != nil && !isUnparseable(err) {
					t.Errorf("error %v, want model_output_unparseable", err)
				}
				if h.manyItems && size > 3800 && !spent {
					t.Errorf("%d bytes of items that need repair did not spend the budget: %+v", size, rd.Work)
				}
			})
		}
	}
}

func isUnparseable(err error) bool {
	var pe *problem.Error
	return errors.As(err, &pe) && pe.Code == problem.ModelOutputUnparseable
}

// TestReadAccountsForItems: a list that needs repair item by item is read until the budget is
// spent, and every item is accounted for: kept, marked unreadable, or counted unread.
func TestReadAccountsForItems(t *testing.T) {
	const n = 3000
	reply := "[" + strings.Repeat(needsRepair, n) + "]"
	rd, err := Read(context.Background(), reply)
	if err != nil {
		t.Fatal(err)
	}
	c := rd.Candidates[0]
	if c.Stage != Repaired || c.Value.Kind != Array {
		t.Fatalf("candidate %s %v, want a repaired list", c.Stage, c.Value.Kind)
	}
	if got := len(c.Value.Elems) + rd.Unread; got != n || rd.Unread == 0 {
		t.Errorf("%d items kept + %d unread = %d, want %d with some unread", len(c.Value.Elems), rd.Unread, got, n)
	}
	for i, e := range c.Value.Elems {
		if e.Kind != Object {
			t.Fatalf("item %d is %v, want an object", i, e.Kind)
		}
	}
}

// TestReadRows reproduces issue 9's silent loss: 40 flat objects one per line kept 32 (a
// candidate cap), 40 items each in its own fence kept 1, without a word.
func TestReadRows(t *testing.T) {
	row := func(i int) string { return fmt.Sprintf(`{"itemName":"项目%d","valueNum":%d.5}`, i, i) }
	build := func(n int, format string) string {
		var s strings.Builder
		s.WriteString("以下是识别结果：\n")
		for i := range n {
			fmt.Fprintf(&s, format, row(i))
		}
		return s.String()
	}
	tests := []struct {
		name   string
		reply  string
		rows   int
		unread int
	}{
		{"40 per line", build(40, "%s\n"), 40, 0},
		{"40 per fence", build(40, "```json\n%s\n```\n"), 40, 0},
		{"40 per fence with numbers", build(40, "第几项：\n```\n%s\n```\n"), 40, 0},
		{"40 per line, some repaired", build(40, "%s,\n"), 40, 0},
		{"5000 per line", build(5000, "%s\n"), 5000, 0},
		{"equal rows are rows", strings.Repeat(row(1)+"\n", 3), 3, 0},
		{"junk past the cap", strings.Repeat(`{"a":1}`, maxCandidates+500), maxCandidates, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd, err := Read(context.Background(), tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			last := rd.Candidates[len(rd.Candidates)-1]
			if !last.Joined || len(last.Value.Elems) != tt.rows {
				t.Errorf("last candidate joined %v with %d rows, want %d", last.Joined, len(last.Value.Elems), tt.rows)
			}
			if rd.Unread != tt.unread {
				t.Errorf("unread %d, want %d", rd.Unread, tt.unread)
			}
		})
	}
}

// TestReadAfterBudget: once the budget is spent, JSON that needs no repair is still read (a
// reply cut at its token limit needs only cutting back), and the rest is counted unread.
func TestReadAfterBudget(t *testing.T) {
	spend := "[" + strings.Repeat("{"+strings.Repeat("'a", 31)+"'},", 400) + "]"
	reply := spend + "\n" + `{"indicators":[{"itemName":"A","valueNum":1.5},{"itemName":"B","valueNum":4.`
	rd, err := Read(context.Background(), reply)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Work.Cost+cost(maxPiece) <= repairBudget || rd.Unread == 0 {
		t.Fatalf("the budget was not spent (%+v, %d unread)", rd.Work, rd.Unread)
	}
	last := rd.Candidates[len(rd.Candidates)-1]
	if got := canon(t, last.Value); got != `{"indicators":[{"itemName":"A","valueNum":1.5}]}` || !last.Truncated {
		t.Errorf("last candidate %s truncated %v, want the cut-back answer", got, last.Truncated)
	}
}

// TestReadTooLong reproduces issue 9: a complete 10 000-item reply cut by the service's own cap
// was reported as cut by the model. It is read up to MaxReply and says so.
func TestReadTooLong(t *testing.T) {
	var s strings.Builder
	s.WriteString(`{"indicators":[`)
	for i := range 10000 {
		if i > 0 {
			s.WriteString(",")
		}
		fmt.Fprintf(&s, `{"itemName":"项目%d","valueNum":%d.5,"unit":"mmol/L"}`, i, i)
	}
	s.WriteString("]}")
	reply := s.String()
	if len(reply) <= MaxReply {
		t.Fatalf("reply of %d bytes is not over MaxReply", len(reply))
	}
	rd, err := Read(context.Background(), reply)
	if err != nil {
		t.Fatal(err)
	}
	if !rd.TooLong {
		t.Error("TooLong is false")
	}
	c := rd.Candidates[0]
	list, _ := c.Value.Get("indicators")
	if n := len(list.Elems); n == 0 || n >= 10000 || !c.Truncated {
		t.Errorf("read %d items, truncated %v; want some, not all, cut", n, c.Truncated)
	}
	if rd.Work.Repairs != 0 {
		t.Errorf("a strict reply cut at MaxReply was repaired %d times; cutting it back is enough", rd.Work.Repairs)
	}

	rd, _ = Read(context.Background(), strings.Repeat("血", MaxReply/3+1)+`{"a":1}`)
	if !rd.TooLong {
		t.Error("a reply over MaxReply by its last bytes is not TooLong")
	}
}

// stopAfter is a context that ends after its Err has been asked n times, so that a test can stop
// a reading between pieces without timing anything.
type stopAfter struct {
	context.Context
	n int
}

func (c *stopAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestReadContext: a 256 KB /v1/parse body ran 264 s and went on after the client left. Reading
// stops between pieces when its context ends, and says why.
func TestReadContext(t *testing.T) {
	reply := fill("[", needsRepair, "]", MaxReply)
	for _, n := range []int{0, 1, 10, 100} {
		ctx := &stopAfter{Context: context.Background(), n: n}
		rd, err := Read(ctx, reply)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("after %d checks: error %v, want context.Canceled", n, err)
		}
		if rd.Work.Repairs > n {
			t.Errorf("after %d checks: %d repairs, want at most one a check", n, rd.Work.Repairs)
		}
	}
}

// TestCostCoversPieces pins the budget's arithmetic: it pays for a few of the costliest pieces
// and for many small ones, and bounds the characters repaired.
func TestCostCoversPieces(t *testing.T) {
	if c := cost(maxPiece); c*5 > repairBudget {
		t.Errorf("cost(maxPiece) = %d: the budget %d pays for fewer than 5 of the largest pieces", c, repairBudget)
	}
	if c := cost(10); c*1000 > repairBudget {
		t.Errorf("cost(10) = %d: the budget %d pays for fewer than 1000 values of ten characters", c, repairBudget)
	}
	for n := 1; n <= maxPiece; n++ {
		if cost(n) < n+callCost {
			t.Fatalf("cost(%d) = %d is below the linear part", n, cost(n))
		}
	}
}

// worstPieces are the costliest texts of maxPiece characters found for the repairer: by a
// search over every periodic shape of up to three symbols, with each closing (the first five,
// which the splitter never hands it whole, as they leave a quote open), and by a random search
// over the pieces it does hand it (the last two).
func worstPieces() map[string]string {
	at := func(prefix, unit, suffix string) string {
		r := []rune(strings.Repeat(unit, maxPiece))
		return prefix + string(r[:maxPiece-len([]rune(prefix))-len([]rune(suffix))]) + suffix
	}
	return map[string]string{
		"quote-heavy":        at("{", "'a", "}"),
		"quote-heavy-lines":  at("", "\n'a", "}"),
		"curly-quote-lines":  at("{", "a\n“", "}"),
		"double-quote-lines": at("[", "\"a\n", "}"),
		"backslash-quotes":   at("[", `\1'`, "}"),
		"split-quote-lines":  "[" + strings.Repeat("\n'a", (maxPiece-2)/6*2) + "}",
		"split-double-lines": "[" + strings.Repeat("\"a\n", (maxPiece-3)/6*2) + "a}",
	}
}

// BenchmarkRepairPiece measures the repairer alone on the worst pieces it can be given: this is
// what one unit of the budget's cubic term stands for (see cost).
//
//	go test ./parse -run '^$' -bench RepairPiece -cpu 1
func BenchmarkRepairPiece(b *testing.B) {
	for name, s := range worstPieces() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				jsonrepair.Repair(s)
			}
			b.ReportMetric(float64(cost(len([]rune(s)))), "charged-µs")
		})
	}
}

// BenchmarkReadHostile reads 256 KB of each hostile shape: the whole reply's cost, repairer
// budget included, whatever the text.
//
//	go test ./parse -run '^$' -bench ReadHostile -cpu 1
func BenchmarkReadHostile(b *testing.B) {
	for _, h := range hostile {
		reply := fill(h.prefix, h.unit, h.suffix, MaxReply)
		b.Run(h.name, func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				Read(context.Background(), reply)
			}
		})
	}
}

// FuzzRead fails on any reply whose work exceeds Bound for its size, so that a slow input is
// found like a crash; it is seeded with the repairer's worst shapes.
func FuzzRead(f *testing.F) {
	for _, h := range hostile {
		f.Add(fill(h.prefix, h.unit, h.suffix, 600))
	}
	for _, s := range worstPieces() {
		f.Add(s)
	}
	for _, tt := range replyTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		rd, err := Read(context.Background(), reply)
		if name, ok := rd.Work.Within(Bound(len(reply))); !ok {
			t.Fatalf("%s over its bound for %d bytes: %+v, bound %+v", name, len(reply), rd.Work, Bound(len(reply)))
		}
		if err != nil && !isUnparseable(err) {
			t.Fatalf("error %v, want model_output_unparseable", err)
		}
		if err == nil && len(rd.Candidates) == 0 {
			t.Fatal("no error and no candidate")
		}
	})
}

// splitSlow is splitTop as the scanner reads it, the reference for FuzzSplitTop.
func splitSlow(s string, sep byte) []string {
	var parts []string
	depth, last := 0, 0
	sc := scanner{s: s}
	for sc.next() {
		if sc.inToken {
			continue
		}
		switch c := s[sc.pos]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, s[last:sc.pos])
				last = sc.pos + 1
				if sep == ':' {
					return append(parts, s[last:])
				}
			}
		}
	}
	return append(parts, s[last:])
}

// FuzzSplitTop holds the fast splitter to the scanner's reading.
func FuzzSplitTop(f *testing.F) {
	for _, s := range []string{`{'a': "b,c", d: [1, 2]}, x`, "a: 1, // c,\n b: 2", "a /* , */ , b", "/*/ , */ x, y", `"a\"", 'b\'', c`, `'unclosed, x`} {
		f.Add(s)
	}
	r := &reader{ctx: context.Background()}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sep := range []byte{',', ':'} {
			got, want := r.splitTop(s, sep), splitSlow(s, sep)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("splitTop(%q, %q) = %q, want %q", s, sep, got, want)
			}
		}
	})
}
