package extract

import (
	"context"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// TestChecksRunOnTheMergedDraft: read → merge → check. The checks' paths index the merged draft
// (page 2's cholesterol is indicators[1]), and the caller's context never reaches the model.
func TestChecksRunOnTheMergedDraft(t *testing.T) {
	m := &fakeModel{answer: func(ctx context.Context, page string, call int) (vision.Reply, error) {
		if page == "p1" {
			return reply(`{"indicators":[{"itemName":"HDL-C","valueNum":1.3,"unit":"mmol/L"}]}`), nil
		}
		return reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":586,"unit":"mmol/L","refLow":3.1,"refHigh":5.2}]}`), nil
	}}
	res, err := New(Config{Model: m, Prep: fakePrep{}}).Extract(t.Context(), [][]byte{[]byte("p1"), []byte("p2")}, nil, check.Context{Sex: check.Female})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range res.Warnings {
		if w.Code == schema.ValueImplausible {
			got = append(got, *w.Path)
		}
	}
	if strings.Join(got, " ") != "indicators[1].valueNum" {
		t.Errorf("value_implausible at %v, want indicators[1].valueNum; all: %v", got, res.Warnings)
	}
	for _, r := range m.reqs {
		if strings.Contains(r.Prompt, "female") || strings.Contains(r.Retry, "female") {
			t.Error("the sex reached the prompt")
		}
	}
}
