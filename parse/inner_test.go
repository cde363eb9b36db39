package parse

import (
	"context"
	"testing"
)

// TestInnerFound holds the shortcut for plain replies (plain) to inner's own reading: JSON held in
// a string is found however the string writes it, and a reply whose strings hold none is plain.
func TestInnerFound(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		inner       bool
	}{
		{"no JSON in strings", `{"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"refText":"3.1-5.2"}]}`, false},
		{"unit in brackets", `{"indicators":[{"itemName":"TC","unit":"[mmol/L]","flag":"{H}"}]}`, false},
		{"CJK escapes", `{"indicators":[{"itemName":"\u603b\u80c6\u56fa\u9187","valueNum":5.86}]}`, false},
		{"escaped quotes", `{"content":"{\"indicators\":[{\"itemName\":\"TC\",\"valueNum\":5.86}]}"}`, true},
		{"brace as an escape", `{"content":"\u007b\"itemName\":\"TC\",\"valueNum\":5.86\u007d"}`, true},
		{"bracket as an escape", `{"content":"\u005B\u007B\"itemName\":\"TC\",\"valueNum\":5.86\u007D\u005D"}`, true},
		{"in a key, which is not read", `{"{\"indicators\":[{\"itemName\":\"TC\",\"valueNum\":5.86}]}":1}`, false},
		{"keys without quotes", `{"content":"{itemName: '总胆固醇', valueNum: 5.86, unit: 'mmol/L'}"}`, true},
		{"a mark in braces is no key", `{"indicators":[{"itemName":"TC","flag":"{H} high: see note"}]}`, false},
		{"full-width", `{"content":"｛“indicators”：［｛“itemName”：“TC”，“valueNum”：5.86｝］｝"}`, true},
		{"fenced", "{\"content\":\"```json\\n{\\\"itemName\\\":\\\"TC\\\",\\\"valueNum\\\":5.86}\\n```\"}", true},
		{"fence as escapes", `{"content":"\u0060\u0060\u0060json\n{\"itemName\":\"TC\",\"valueNum\":5.86}\n\u0060\u0060\u0060"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := Read(context.Background(), tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			if len(rd.Candidates) != 1 {
				t.Fatalf("%d candidates, want 1", len(rd.Candidates))
			}
			c := rd.Candidates[0]
			if got := len(c.Inner) > 0; got != tc.inner {
				t.Errorf("JSON found in its strings: %v, want %v (inner %+v)", got, tc.inner, c.Inner)
			}
			if c.plain && tc.inner {
				t.Error("a reply whose strings hold JSON is taken for plain")
			}
		})
	}
}
