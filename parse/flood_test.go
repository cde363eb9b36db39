package parse

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// floodRows is a draft of rows with pad written between the third and the fourth.
func floodRows(pad string) string {
	row := func(i int) string { return fmt.Sprintf(`{"itemName":"项目%d","valueNum":%d.5}`, i, i) }
	return `{"title":"血脂","indicators":[` + row(0) + "," + row(1) + "," + row(2) + "," + pad + row(3) + "]}"
}

// TestReadFlood: a flood of white space outside strings that pushes a reply past MaxReply is
// squeezed before the cap, so the rows after it are read; content longer than the cap is still
// cut there and said to be (TooLong).
func TestReadFlood(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		rows  int // indicators read from the first candidate
		long  bool
	}{
		{name: "spaces", reply: floodRows(strings.Repeat(" ", MaxReply+1)), rows: 4},
		{name: "blank lines and tabs", reply: floodRows(strings.Repeat("\n\t \r\n", MaxReply/4)), rows: 4},
		{name: "in a fence with prose", reply: "结果如下：" + strings.Repeat("\n", MaxReply) + "```json\n" + floodRows(strings.Repeat("  \n", MaxReply/3)) + "\n```\n以上。", rows: 4},
		{name: "a flood inside a string is content", reply: floodRows(`{"itemName":"备注","valueText":"` + strings.Repeat(" ", MaxReply) + `"},`), rows: 3, long: true},
		{name: "content past the cap after a flood", reply: floodRows(strings.Repeat(" ", MaxReply) + strings.Repeat(`{"itemName":"x","valueNum":1},`, MaxReply/29+1)), rows: -1, long: true},
		{name: "a flood past what is squeezed", reply: floodRows(strings.Repeat(" ", maxFlood)), rows: 3, long: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.reply) <= MaxReply {
				t.Fatalf("reply of %d bytes is not over MaxReply", len(tt.reply))
			}
			rd, err := Read(context.Background(), tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			if rd.TooLong != tt.long {
				t.Errorf("TooLong %v, want %v", rd.TooLong, tt.long)
			}
			list, _ := rd.Candidates[0].Value.Get("indicators")
			if n := len(list.Elems); tt.rows >= 0 && n != tt.rows || n < 3 {
				t.Errorf("read %d rows, want %d", n, tt.rows)
			}
			if name, ok := rd.Work.Within(Bound(len(tt.reply))); !ok {
				t.Errorf("%s over its bound: %+v", name, rd.Work)
			}
		})
	}
}

// TestSqueeze: what squeeze keeps and what it writes as one byte.
func TestSqueeze(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a  b", "a b"},
		{"a \n\t b", "a\nb"},
		{"a b", "a b"},
		{`{"k":  "x    y",   "n": 1}`, `{"k": "x    y", "n": 1}`},
		{`"a\"  b"   c`, `"a\"  b" c`},
		{"say \"hi  \n\n  there", "say \"hi  \nthere"}, // a line break ends a stray quote's string
		{`"\\"  x`, `"\\" x`},
	}
	for _, tt := range tests {
		r := &reader{}
		got, more := r.squeeze(tt.in, MaxReply)
		if got != tt.want || more {
			t.Errorf("squeeze(%q) = %q, %v; want %q", tt.in, got, more, tt.want)
		}
		if r.work.Scanned != len(tt.in) {
			t.Errorf("squeeze(%q) scanned %d bytes, want %d", tt.in, r.work.Scanned, len(tt.in))
		}
	}
	r := &reader{}
	if got, more := r.squeeze("abcdef", 3); got != "abcd" || !more {
		t.Errorf("squeeze past its limit = %q, %v; want abcd, true", got, more)
	}
}

// FuzzSqueeze: squeezing never changes what JSON means, never lengthens the text, reads each
// byte once, and a second squeeze changes nothing.
func FuzzSqueeze(f *testing.F) {
	for _, tt := range replyTests {
		f.Add(tt.in)
	}
	f.Add("{\"a\" :\n\n [1 ,  2],\t\"b\": \"x  \\\"  y\"}")
	f.Fuzz(func(t *testing.T, s string) {
		r := &reader{}
		got, more := r.squeeze(s, len(s))
		if more || len(got) > len(s) || r.work.Scanned != len(s) {
			t.Fatalf("squeeze(%q) = %q, more %v, scanned %d", s, got, more, r.work.Scanned)
		}
		if again, _ := (&reader{}).squeeze(got, len(got)); again != got {
			t.Fatalf("squeeze is not idempotent on %q: %q then %q", s, got, again)
		}
		var a, b any
		if json.Unmarshal([]byte(s), &a) != nil {
			return
		}
		if err := json.Unmarshal([]byte(got), &b); err != nil {
			t.Fatalf("squeeze(%q) = %q, no longer JSON: %v", s, got, err)
		}
		if canon(t, a) != canon(t, b) {
			t.Fatalf("squeeze(%q) = %q changed its meaning", s, got)
		}
	})
}
