package check

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// shapes are the drafts a looping or prompt-injected model writes, by name: n rows each.
var shapes = []struct {
	name string
	rows func(n int) []schema.OcrIndicator
}{
	// Every row the same item with another value: every row but the first is a duplicate_row.
	{"all duplicates", func(n int) []schema.OcrIndicator {
		return gen(n, func(i int) schema.OcrIndicator { return in("ALT", "U/L", strconv.Itoa(i+1), "9", "50") })
	}},
	// Every row the same item with the same value: no warning, and the old pairwise walk compared
	// every pair to the end.
	{"all the same", func(n int) []schema.OcrIndicator {
		return gen(n, func(i int) schema.OcrIndicator { return in("ALT", "U/L", "25", "9", "50") })
	}},
	// Every row its own item: nothing to compare.
	{"no duplicates", func(n int) []schema.OcrIndicator {
		return gen(n, func(i int) schema.OcrIndicator { return in("项目"+strconv.Itoa(i), "U/L", "25", "9", "50") })
	}},
	// A panel of 20 rows repeated across ten pages (a loop on each page), each page's copy with
	// other values: duplicates within a page, none across.
	{"loops across pages", func(n int) []schema.OcrIndicator {
		panel := []string{"WBC", "RBC", "HGB", "HCT", "MCV", "MCH", "MCHC", "PLT", "ALT", "AST", "TBIL", "DBIL", "TP", "ALB", "GLB", "TC", "TG", "HDL-C", "LDL-C", "GLU"}
		return gen(n, func(i int) schema.OcrIndicator {
			return in(panel[i%len(panel)], "", strconv.Itoa(1+i/len(panel)%50), "", "", page(1+i*10/n))
		})
	}},
	// Known analytes in units they are not measured in, each unit spelt apart: the unit rule's
	// walk of the lexicon, once per row.
	{"odd units", func(n int) []schema.OcrIndicator {
		return gen(n, func(i int) schema.OcrIndicator { return in("ALT", "mmol/L"+strconv.Itoa(i%7), "25", "", "") })
	}},
	// Every relation's analytes, then thousands of rows of one of them with one value: the
	// relation rule's look-ups.
	{"relations", func(n int) []schema.OcrIndicator {
		head := []schema.OcrIndicator{in("TC", "mmol/L", "5.2", "", ""), in("HDL-C", "mmol/L", "1.3", "", ""), in("TBIL", "μmol/L", "12", "", ""),
			in("DBIL", "μmol/L", "3", "", ""), in("TP", "g/L", "70", "", ""), in("ALB", "g/L", "45", "", ""), in("GLB", "g/L", "25", "", "")}
		return gen(n, func(i int) schema.OcrIndicator {
			if i < len(head) {
				return head[i]
			}
			return in("WBC", "10^9/L", "6.1", "", "")
		})
	}},
}

// maxName is the most characters of an item's name (schema: max=200).
const maxName = 200

func gen(n int, f func(int) schema.OcrIndicator) []schema.OcrIndicator {
	out := make([]schema.OcrIndicator, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// BenchmarkHostile checks each hostile shape at 7,000 rows (a page of a looping model's reply)
// and 70,000 (ten). go test ./check -run '^$' -bench Hostile -benchtime 1x -cpu 1
func BenchmarkHostile(b *testing.B) {
	for _, sh := range shapes {
		for _, n := range []int{7000, 70000} {
			rows := sh.rows(n)
			buf := make([]schema.OcrIndicator, n)
			b.Run(sh.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					copy(buf, rows)
					Run(lexicon.Default(), &schema.OcrDraft{Indicators: buf}, Context{})
				}
			})
		}
	}
}

// TestHostileWork: whatever the draft's shape, a run's counted work (state.work) is at most a
// constant per row, plus the lexicon walks the run does once (the relations, a unit's).
func TestHostileWork(t *testing.T) {
	for _, sh := range shapes {
		for _, n := range []int{20, 7000, 70000} {
			d := &schema.OcrDraft{Indicators: sh.rows(n)}
			_, work, err := run(nil, lexicon.Default(), d, Context{})
			if err != nil {
				t.Fatal(err)
			}
			// 12 a row: loading it, each rule's look, the duplicate table's probes, the relations'
			// index; the walks of a short draft, at most 80 walkUpTo (duplicate_row compares no pairs);
			// and at most 8 walks of the lexicon for units (the shapes print 7); the near names of
			// at most walkUpTo unknown names, each of at most maxName characters.
			if limit := 12*n + 80*walkUpTo + 8*len(lexicon.Default().Analytes()) + walkUpTo*2*maxName; work > limit {
				t.Errorf("%s/%d rows: work %d, over %d", sh.name, n, work, limit)
			}
		}
	}
}

// TestDuplicateRowPairs holds the hashed duplicateRow to the pairwise walk it replaced (pairs,
// below), on random drafts of few names, units spelt in several cases and spacings (the Kelvin
// sign folds with k), groups, pages and values (5.2 is 5.20).
func TestDuplicateRowPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"ALT", " ALT", "AST", "葡萄糖"}
	units := []string{"", "U/L", "u/l", " U/L ", "mmol/L", "\u212a/L", "k/L", "K/L", "ſ", "S", "\xff", "\xfe"}
	groups := []string{"", "生化", "糖耐量试验"}
	values := []string{"5.2", "5.20", "6", "", "阴性"}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	for round := range 2000 {
		rows := gen(1+rng.IntN(40), func(int) schema.OcrIndicator {
			opts := []func(*schema.OcrIndicator){}
			if g := pick(groups); g != "" || rng.IntN(2) == 0 {
				opts = append(opts, group(g)) // "" and no group are one group
			}
			if p := rng.IntN(3); p > 0 {
				opts = append(opts, page(p))
			}
			return in(pick(names), pick(units), pick(values), "", "", opts...)
		})
		s := &state{d: &schema.OcrDraft{Indicators: rows}, code: schema.DuplicateRow, rows: make([]row, len(rows))}
		for i := range rows {
			s.rows[i].load(lexicon.Default(), &rows[i])
		}
		duplicateRow(s)
		var got []string
		for _, w := range s.out {
			got = append(got, *w.Path+" "+w.Params["otherPath"])
		}
		if diff := cmp.Diff(pairs(s), got); diff != "" {
			t.Fatalf("round %d: (-pairs +hashed):\n%s", round, diff)
		}
	}
}

// pairs is duplicateRow as it was, comparing every row with every earlier one: the oracle.
func pairs(s *state) []string {
	var out []string
	for j := 1; j < len(s.rows); j++ {
		b := s.rows[j].ind
		if b.ValueNum == nil {
			continue
		}
		for i := 0; i < j; i++ {
			a := s.rows[i].ind
			if a.ValueNum == nil || s.rows[i].name != s.rows[j].name || !samePtr(a.ItemGroup, b.ItemGroup) ||
				!samePage(a.Page, b.Page) || !sameUnit(a.Unit, b.Unit) || a.ValueNum.Equal(*b.ValueNum) || inTimeSeries(b.ItemGroup) {
				continue
			}
			out = append(out, fmt.Sprintf("indicators[%d].valueNum indicators[%d]", j, i))
			break
		}
	}
	return out
}

// TestListedCap: a rule lists maxListed warnings, and counts the rest in one more.
func TestListedCap(t *testing.T) {
	ws := Run(lexicon.Default(), &schema.OcrDraft{Indicators: shapes[0].rows(7000)}, Context{})
	n, last := 0, schema.Warning{}
	for _, w := range ws {
		if w.Code == schema.DuplicateRow {
			n, last = n+1, w
		}
	}
	if n != maxListed+1 || last.Path != nil || last.Params["count"] != strconv.Itoa(7000-1-maxListed) {
		t.Errorf("%d duplicate_row warnings, the last %q %v: want %d listed and one counting %d", n, last.Message, last.Params, maxListed, 7000-1-maxListed)
	}
}

// ending is a context whose Err is DeadlineExceeded from its after-th call on: a deadline that
// passes in the middle of a run, at a known point of its work.
type ending struct {
	context.Context
	calls, after int
}

func (c *ending) Err() error {
	c.calls++
	if c.calls >= c.after {
		return context.DeadlineExceeded
	}
	return nil
}

// TestRunStops: a run whose deadline passes stops within stopEvery units of work, with the
// deadline's error and no warnings (a draft checked in part must not pass for checked).
func TestRunStops(t *testing.T) {
	for _, sh := range shapes {
		d := &schema.OcrDraft{Indicators: sh.rows(70000)}
		_, full, _ := run(nil, lexicon.Default(), d, Context{})
		for _, after := range []int{1, 20, 200} {
			ctx := &ending{Context: context.Background(), after: after}
			d := &schema.OcrDraft{Indicators: sh.rows(70000)}
			ws, work, err := run(ctx, lexicon.Default(), d, Context{})
			if err != context.DeadlineExceeded || ws != nil {
				t.Fatalf("%s: %d warnings, %v: want none, the deadline's error", sh.name, len(ws), err)
			}
			if want := after*stopEvery + walkUpTo; work > want || work >= full {
				t.Errorf("%s: stopped after %d units of work, want at most %d (the whole run is %d)", sh.name, work, want, full)
			}
		}
	}
	// A draft of walkUpTo rows, whose pairs and walks add to the work many units at a time, still
	// looks at its deadline once stopEvery units have passed.
	for _, sh := range shapes {
		d := &schema.OcrDraft{Indicators: sh.rows(walkUpTo)}
		if _, full, _ := run(nil, lexicon.Default(), d, Context{}); full > 2*stopEvery {
			if _, err := RunContext(&ending{Context: context.Background(), after: 1}, lexicon.Default(), d, Context{}); err != context.DeadlineExceeded {
				t.Errorf("%s, %d rows, %d units of work: %v, want the deadline's error", sh.name, walkUpTo, full, err)
			}
		}
	}
	// A short draft is checked to its end: it looks at its deadline after stopEvery units.
	d := &schema.OcrDraft{Indicators: shapes[0].rows(20)}
	if ws, err := RunContext(&ending{Context: context.Background()}, lexicon.Default(), d, Context{}); err != nil || len(ws) != 19 {
		t.Errorf("20 rows past the deadline: %d warnings, %v; want the 19 duplicates", len(ws), err)
	}
}

// TestFindIndexed holds the relations' index of the rows (one pass, whatever their number) to a
// walk of the rows for each analyte, on random drafts of the relations' analytes.
func TestFindIndexed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	items := [][2]string{{"TC", "mmol/L"}, {"TC", "mg/dL"}, {"HDL-C", "mmol/L"}, {"ALB", "g/L"}, {"GLB", "g/L"}, {"TP", "g/L"}, {"WBC", "10^9/L"}, {"WBC", ""}, {"某某", "U/L"}}
	values := []string{"5.2", "5.20", "201", "1.3", "", "阴性"}
	for round := range 300 {
		rows := gen(walkUpTo+1+rng.IntN(40), func(int) schema.OcrIndicator {
			it := items[rng.IntN(len(items))]
			return in(it[0], it[1], values[rng.IntN(len(values))], "", "")
		})
		s := &state{d: &schema.OcrDraft{Indicators: rows}, rows: make([]row, len(rows)), lex: lexicon.Default()}
		for i := range rows {
			s.rows[i].load(lexicon.Default(), &rows[i])
		}
		for _, rel := range lexicon.Default().Relations() {
			for _, a := range rel.Analytes() {
				whole := -1 // the walk, over all the rows
				for i := range s.rows {
					r := &s.rows[i]
					if r.a != a || !r.hasV || r.u == nil || r.u.Factor == 0 {
						continue
					}
					if whole >= 0 && s.canon(whole) != s.canon(i) {
						whole = -2
						break
					}
					if whole < 0 {
						whole = i
					}
				}
				if whole == -2 {
					whole = -1
				}
				if got := s.find(a); got != whole {
					t.Fatalf("round %d, %s: indexed %d, walk %d", round, a.Key, got, whole)
				}
			}
		}
	}
}

// FuzzChecks runs the checks on drafts of any rows, each a line "name|unit|value|lo|hi|group|
// page", repeated times times: no panic, the counted work within TestHostileWork's bound (so
// a shape that grows faster than the rows fails like a crash), and the hashed duplicate_row
// equal to the pairwise one.
func FuzzChecks(f *testing.F) {
	f.Add("ALT|U/L|25|9|50||1\nALT|u/l|52|||生化|1\nTC|mmol/L|5.2|||血脂|\nHDL-C|mmol/L|6.1|||血脂|", uint8(1))
	f.Add("葡萄糖|mmol/L|5.1|3.9|6.1|糖耐量|2\n葡萄糖|mmol/L|8.1|3.9|6.1|糖耐量|2", uint8(40))
	f.Add("K|\u212a/L|1||||\nK|k/L|2||||\nWBC||6|||", uint8(30))
	f.Fuzz(func(t *testing.T, spec string, times uint8) {
		var base []schema.OcrIndicator
		for line := range strings.Lines(spec) {
			fs := strings.Split(strings.TrimSuffix(line, "\n"), "|")
			for len(fs) < 7 {
				fs = append(fs, "")
			}
			opts := []func(*schema.OcrIndicator){}
			if fs[5] != "" {
				opts = append(opts, group(fs[5]))
			}
			if p, err := strconv.Atoi(fs[6]); err == nil {
				opts = append(opts, page(p))
			}
			for _, k := range []int{3, 4} {
				if _, err := schema.ParseDecimal(fs[k]); err != nil {
					fs[k] = ""
				}
			}
			base = append(base, in(fs[0], fs[1], fs[2], fs[3], fs[4], opts...))
		}
		var rows []schema.OcrIndicator
		for range max(1, int(times)) {
			rows = append(rows, base...)
		}
		n := len(rows)
		_, work, err := run(nil, lexicon.Default(), &schema.OcrDraft{Indicators: slices.Clone(rows)}, Context{})
		if err != nil {
			t.Fatal(err)
		}
		// As TestHostileWork, with a lexicon walk for every row's unit.
		if limit := 12*n + 80*walkUpTo + n*len(lexicon.Default().Analytes()); work > limit {
			t.Fatalf("%d rows: work %d, over %d", n, work, limit)
		}
		s := &state{d: &schema.OcrDraft{Indicators: rows}, code: schema.DuplicateRow, rows: make([]row, n)}
		for i := range rows {
			s.rows[i].load(lexicon.Default(), &rows[i])
		}
		duplicateRow(s)
		var got []string
		for _, w := range s.out {
			got = append(got, *w.Path+" "+w.Params["otherPath"])
		}
		if s.over > 0 {
			return // past maxListed the two lists are cut alike only while both list
		}
		if diff := cmp.Diff(pairs(s), got); diff != "" {
			t.Fatalf("(-pairs +hashed):\n%s", diff)
		}
	})
}
