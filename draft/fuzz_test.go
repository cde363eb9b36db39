package draft

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// FuzzFromReply feeds arbitrary replies through parse and draft. It must never panic, its work
// (counted, not timed) must stay within parse.Bound for the reply's size, so that a slow input
// fails like a crash, and any draft it accepts must re-encode to JSON that decodes into the
// contract types and validates, and building a draft again from that JSON must give the same
// draft without warnings: what we return is a fixed point of our own rules.
func FuzzFromReply(f *testing.F) {
	files, _ := os.ReadDir("../testdata/replies")
	for _, e := range files {
		if b, err := os.ReadFile("../testdata/replies/" + e.Name()); err == nil && strings.HasSuffix(e.Name(), ".txt") {
			f.Add(string(b), strings.HasSuffix(e.Name(), ".length.txt"))
		}
	}
	for _, s := range []string{
		`{"indicators":[{"itemName":"a","valueNum":"5.6↑","refRange":"3.9-6.1"}]}`,
		"```json\n[{\"name\":\"x\",\"value\":\"1,024.5 mmol/L\"}]\n```",
		`{'items': [{'name': 'x', 'value': None,}]`,
		`"{\"title\":\"t\"}"`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	} {
		f.Add(s, false)
	}
	// The repairer's cubic shapes (issue 9: 3.8 KB of {'a'a'a…} cost 2.7 s), whole and as items.
	for _, s := range []string{
		"{" + strings.Repeat("'a", 1900) + "}",
		strings.Repeat("\n'a", 300) + "}",
		"{" + strings.Repeat("a\n“", 300) + "}",
		"[" + strings.Repeat("\"a\n", 300) + "}",
		`{"k": "` + strings.Repeat(`a" `, 300) + `"}`,
		"[" + strings.Repeat(`\1'`, 300) + "}",
		"[" + strings.Repeat("{"+strings.Repeat("'a", 31)+"'},", 40) + "]",
		strings.Repeat("```json\n{'itemName': 'x', 'valueNum': 1,}\n```\n", 40),
	} {
		f.Add(s, false)
	}
	b := New(lexicon.Default())
	f.Fuzz(func(t *testing.T, reply string, cut bool) {
		out, err := b.FromReply(reply, cut)
		if name, ok := out.Work.Within(parse.Bound(len(reply))); !ok {
			t.Fatalf("%s over its bound for %d bytes: %+v, bound %+v", name, len(reply), out.Work, parse.Bound(len(reply)))
		}
		if err != nil {
			return
		}
		enc, err := json.Marshal(out.Result)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back schema.Result
		dec := json.NewDecoder(bytes.NewReader(enc))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("accepted draft does not decode into the contract: %v\n%s", err, enc)
		}
		for i, ind := range back.Draft.Indicators {
			if err := b.validate.Struct(ind); err != nil {
				t.Fatalf("indicator %d does not validate: %v", i, err)
			}
		}
		d := back.Draft
		d.Indicators = nil
		if err := b.validate.Struct(d); err != nil {
			t.Fatalf("draft does not validate: %v", err)
		}
		draftJSON, _ := json.Marshal(out.Draft)
		v, err := parse.Decode(string(draftJSON))
		if err != nil {
			t.Fatal(err)
		}
		again := b.build(v, confirmedRows{}, false)
		againJSON, _ := json.Marshal(again.Draft)
		if diff := cmp.Diff(string(draftJSON), string(againJSON)); diff != "" {
			t.Fatalf("rebuilding the draft changed it (-first +again):\n%s", diff)
		}
		if len(again.Warnings) > 0 {
			t.Fatalf("rebuilding the draft warned: %+v", again.Warnings)
		}
	})
}
