package check

import (
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestRangeReasons: every reason the range rows give has its sentences, filled from params the
// row gives (no "?" for a missing one), in English and in Chinese.
func TestRangeReasons(t *testing.T) {
	for _, c := range []struct {
		ref    string
		ctx    Context
		lo, hi string
		reason string
	}{
		{"男：130-175；女：115-150", Context{}, "", "", "unknown"},
		{"男：130-175；女：115-150", Context{Sex: Female}, "", "", "chosen"},
		{"男：130-175；女：115-150", Context{Confirmed: true}, "100", "200", "confirmed"},
		{"男性 130-175", Context{}, "", "", "one_sex"},
		{"男性 130-175", Context{Sex: Female}, "", "", "other_sex"},
		{"男性 130-175", Context{Sex: Male}, "", "", "one_sex_used"},
		{"130-175；女 115-150", Context{Sex: Male}, "", "", "chosen"},
		{"空腹 3.9-6.1", Context{}, "", "", "condition"},
		{"<50岁 0-15；≥50岁 0-20", Context{}, "", "", "age"},
		{"0-15；0-20", Context{}, "", "", "several"},
		{"成人 0-15；儿童 0-20", Context{Confirmed: true}, "1", "2", "confirmed"},
	} {
		d := &schema.OcrDraft{Indicators: []schema.OcrIndicator{in("某项目", "U/L", "10", c.lo, c.hi, ref(c.ref))}}
		ws := Run(lexicon.Default(), d, c.ctx)
		if len(ws) != 1 || ws[0].Reason != c.reason {
			t.Errorf("%q %+v: %v, want one warning for %s", c.ref, c.ctx, ws, c.reason)
			continue
		}
		zh := msg.Text(ws[0], msg.Zh)
		if en := ws[0].Message; en == string(ws[0].Code) || zh == string(ws[0].Code) || strings.ContainsAny(en+zh, "?{}") {
			t.Errorf("%s/%s: en %q, zh %q", ws[0].Code, c.reason, en, zh)
		}
	}
}
