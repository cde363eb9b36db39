package draft

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// row is one indicator as a model writes it.
func row(i int) string {
	return fmt.Sprintf(`{"itemName":"项目%d","valueNum":%d.5,"unit":"mmol/L"}`, i, i)
}

// rowsIn writes n rows, each in format.
func rowsIn(n int, format string) string {
	var s strings.Builder
	s.WriteString("以下是识别结果：\n")
	for i := range n {
		fmt.Fprintf(&s, format, row(i))
	}
	return s.String()
}

// overCap is a complete reply whose content is longer than parse.MaxReply: rows, then a remark
// that runs past the cap, then one more row.
func overCap(rows int) string {
	return padded(rows, `{"itemName":"备注","valueText":"`+strings.Repeat("注", parse.MaxReply/3)+`"},`)
}

// flood is a complete reply that a flood of white space between its rows pushes past
// parse.MaxReply: rows, then spaces and blank lines to past the cap, then one more row.
func flood(rows int) string {
	return padded(rows, strings.Repeat(" ", parse.MaxReply/2)+strings.Repeat("\n  \n", parse.MaxReply/8))
}

// padded is a draft of rows, then pad, then one more row.
func padded(rows int, pad string) string {
	var s strings.Builder
	s.WriteString(`{"title":"血脂四项","indicators":[`)
	for i := range rows {
		s.WriteString(row(i) + ",")
	}
	s.WriteString(pad)
	s.WriteString(row(rows) + "]}")
	return s.String()
}

// longList is a complete reply of n rows.
func longList(n int) string {
	var s strings.Builder
	s.WriteString("[")
	for i := range n {
		if i > 0 {
			s.WriteString(",")
		}
		s.WriteString(row(i))
	}
	s.WriteString("]")
	return s.String()
}

// TestFromReplyAccounts reproduces issue 9's silent losses: every row is kept, or dropped with a
// warning that counts it, and the service's own cap is told apart from the model's cut.
func TestFromReplyAccounts(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		cut   bool
		kept  int      // indicators kept; -1 for any
		warn  []string // warning codes in order, with the text a message must hold after '~'
		long  bool     // TooLong
	}{
		{name: "40 rows one per line", reply: rowsIn(40, "%s\n"), kept: 40},
		{name: "40 rows one per fence", reply: rowsIn(40, "```json\n%s\n```\n"), kept: 40},
		{name: "40 rows one per fence, with prose", reply: rowsIn(40, "下一项：\n```\n%s\n```\n说明：见上。\n"), kept: 40},
		{name: "40 rows one per fence, one repaired", reply: rowsIn(39, "```json\n%s\n```\n") + "```json\n{'itemName': 'X', 'valueNum': 1.5,}\n```", kept: 40},
		{name: "4000 rows one per line", reply: rowsIn(4000, "%s\n"), kept: 4000},
		{name: "over the service's cap", reply: overCap(3), kept: 3,
			warn: []string{"reply_too_long~256 KB"}, long: true},
		{name: "over the service's cap and cut by the model", reply: overCap(3), cut: true, kept: 3,
			warn: []string{"reply_too_long", "output_truncated"}, long: true},
		{name: "a flood of white space past the cap", reply: flood(3), kept: 4},
		{name: "a flood of white space past the cap, cut by the model", reply: flood(3), cut: true, kept: 4,
			warn: []string{"output_truncated"}},
		{name: "10 000 rows over the service's cap", reply: longList(10000), kept: -1,
			warn: []string{"reply_too_long"}, long: true},
		{name: "repair budget spent", reply: "[" + strings.Repeat(`{'itemName': 'x', 'valueNum': 5.86↑},`, 3000) + "]", kept: -1,
			warn: []string{"indicator_dropped~values or items in the model's reply were not read"}},
		{name: "warnings past the cap are counted", reply: "[" + row(0) + strings.Repeat(",1", 500) + "]", kept: 1,
			warn: append(repeat("indicator_dropped", maxWarnings), "indicator_dropped~400 more warnings")},
	}
	b := New(lexicon.Default())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := b.FromReply(tt.reply, tt.cut)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(out.Draft.Indicators); tt.kept >= 0 && n != tt.kept || n == 0 {
				t.Errorf("kept %d indicators, want %d", n, tt.kept)
			}
			var got []string
			for _, w := range out.Warnings {
				got = append(got, string(w.Code))
			}
			if len(got) != len(tt.warn) {
				t.Fatalf("warnings %v, want %v", got, tt.warn)
			}
			for i, w := range tt.warn {
				code, text, _ := strings.Cut(w, "~")
				if got[i] != code || !strings.Contains(out.Warnings[i].Message, text) {
					t.Errorf("warning %d is %s %q, want %s with %q", i, got[i], out.Warnings[i].Message, code, text)
				}
			}
			if out.TooLong != tt.long || out.Truncated != tt.cut {
				t.Errorf("TooLong %v Truncated %v, want %v %v", out.TooLong, out.Truncated, tt.long, tt.cut)
			}
			if name, ok := out.Work.Within(parse.Bound(len(tt.reply))); !ok {
				t.Errorf("%s over its bound: %+v", name, out.Work)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestFromReplyBudgetCounts: with the repair budget spent, the items read and the count in the
// warning add up to the items in the reply.
func TestFromReplyBudgetCounts(t *testing.T) {
	const n = 3000
	out, err := New(lexicon.Default()).FromReply("["+strings.Repeat(`{'itemName': 'x', 'valueNum': 5.86↑},`, n)+"]", false)
	if err != nil {
		t.Fatal(err)
	}
	var unread int
	if _, err := fmt.Sscanf(out.Warnings[0].Message, "%d values", &unread); err != nil {
		t.Fatalf("warning %q: %v", out.Warnings[0].Message, err)
	}
	if got := len(out.Draft.Indicators) + unread; got != n {
		t.Errorf("%d kept + %d unread = %d, want %d", len(out.Draft.Indicators), unread, got, n)
	}
}

// TestFromReplyUnreadable: a reply whose every piece needs more repair than a reply may cost is
// model_output_unparseable, never an empty success.
func TestFromReplyUnreadable(t *testing.T) {
	for name, reply := range map[string]string{
		"quote-heavy, the issue's 3.8 KB": "{" + strings.Repeat("'a", 1900) + "}",
		"quote-heavy items":               "[" + strings.Repeat("{"+strings.Repeat("'a", 31)+"'},", 2000) + "]",
		"broken spans":                    strings.Repeat("{x} ", 20000),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := New(lexicon.Default()).FromReply(reply, false)
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.ModelOutputUnparseable {
				t.Fatalf("error %v, want %s", err, problem.ModelOutputUnparseable)
			}
			if name, ok := out.Work.Within(parse.Bound(len(reply))); !ok {
				t.Errorf("%s over its bound: %+v", name, out.Work)
			}
		})
	}
}

// TestFromReplyContext: reading stops when the request is done, with the context's error.
func TestFromReplyContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := New(lexicon.Default()).FromReplyContext(ctx, typical(), false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if out.Stage != parse.Failed || len(out.Draft.Indicators) != 0 {
		t.Errorf("outcome %s with %d indicators, want failed and empty", out.Stage, len(out.Draft.Indicators))
	}
	if _, err := New(lexicon.Default()).FromReplyContext(context.Background(), typical(), false); err != nil {
		t.Fatal(err)
	}
}

// TestWarningCodesKnown: every code the draft warns with is in the contract's table.
func TestWarningCodesKnown(t *testing.T) {
	known := map[schema.WarningCode]bool{}
	for _, c := range schema.WarningCodes {
		known[c.Code] = true
	}
	for _, c := range []schema.WarningCode{schema.ReplyTooLong, schema.OutputTruncated, schema.IndicatorDropped} {
		if !known[c] {
			t.Errorf("%s is not in schema.WarningCodes", c)
		}
	}
}
