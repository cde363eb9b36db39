package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/lexicon"
)

// corpusMisreads are the warnings the checks give on the captured replies of testdata/replies
// read by draft: each a real misread in that reply, or a range by sex that needs the patient's
// sex. Any other warning there is a false alarm.
var corpusMisreads = map[string]string{
	// Misreads of every kind, in replies written by a held-out evaluation or by hand.
	"heldout-misread-586-qwen.txt":              "value_implausible indicators[0].valueNum",
	"heldout-misread-flag-inrange-glm.txt":      "flag_mismatch indicators[0].valueNum",
	"heldout-misread-glucose-range-gemini.txt":  "range_implausible indicators[0].refLow",
	"heldout-misread-hdl-above-tc-internvl.txt": "inconsistent_values indicators[1].valueNum",
	"heldout-misread-range-other-unit-en.txt":   "range_implausible indicators[0].refText",
	"heldout-sg-comma-qwen.txt":                 "value_implausible indicators[0].valueNum",
	"ck-misread-duplicate-row-qwen.txt":         "duplicate_row indicators[3].valueNum",
	"ck-misread-unit-unexpected-gpt4o.txt":      "unit_unexpected indicators[0].unit",
	// Ranges printed for men and women, read without a sex: bounds left empty, on purpose.
	"ev-gemini-english-flag-column.txt": "range_sex_specific indicators[1].refText",
	"ev-gpt4o-evidence-fields.txt":      "range_sex_specific indicators[1].refText",
	// A range printed for men only, read without a sex: bounds left empty, and now said so.
	"ev-qwenvl-marks-around-numbers.txt": "range_sex_specific indicators[3].refText",
	// 98 mg/dL written beside the item's mmol/L: the draft says 98 mmol/L.
	"field-gpt4o-unit-conflict.txt": "value_implausible indicators[0].valueNum",
	// 1.2 mg/dL beside the item's μmol/L: the draft says 1.2 μmol/L.
	"field-qwen25vl-mistake-unit-in-valuenum.txt": "value_implausible indicators[5].valueNum",
}

// TestCorpus runs the checks on every captured reply as draft reads it.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("../testdata/replies/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatal("no replies", err)
	}
	b := draft.New(lexicon.Default())
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.FromReply(string(raw), strings.HasSuffix(f, ".length.txt"))
		if err != nil {
			continue
		}
		name := filepath.Base(f)
		found := false
		for _, w := range Run(lexicon.Default(), &out.Draft, Context{}) {
			got := string(w.Code) + " " + *w.Path
			if got != corpusMisreads[name] {
				t.Errorf("%s: %s: %s", name, got, w.Message)
			}
			found = found || got == corpusMisreads[name]
		}
		if want := corpusMisreads[name]; want != "" && !found {
			t.Errorf("%s: no %s: the misread went unflagged", name, want)
		}
	}
}
