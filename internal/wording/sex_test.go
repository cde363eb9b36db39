package wording_test

import (
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/internal/wording"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestSexZh: the sexes the checks name in {sex} are the ones the Chinese text translates; the
// table cannot import check (check writes its English from it), so it spells them itself.
func TestSexZh(t *testing.T) {
	for sex, want := range map[check.Sex]string{check.Male: "男性", check.Female: "女性"} {
		w := schema.Warning{Code: schema.RangeSexSpecific, Reason: "chosen", Params: map[string]string{
			"itemName": "Hb", "refText": "130-175(M) 115-150(F)", "sex": string(sex), "refLow": "1", "refHigh": "2"}}
		if got, ok := wording.Localized(w, "zh"); !ok || !strings.Contains(got, "已采用"+want+"范围") {
			t.Errorf("%s: %q, %v", sex, got, ok)
		}
	}
}
