package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/problem"
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
	res, err := New(Config{Model: m, Prep: fakePrep{}}).Extract(t.Context(), owned([][]byte{[]byte("p1"), []byte("p2")}), check.Context{Sex: check.Female})
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

// late is a request context whose deadline passes once every page has been read (its flag set
// by the Observer): the checks are what it ends in.
type late struct {
	context.Context
	read atomic.Bool
}

func (c *late) Err() error {
	if c.read.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *late) Page(schema.PageMeta) { c.read.Store(true) }

// TestChecksStopAtTheDeadline: a page of a looping model's rows whose request deadline passes
// while they are checked is 504 model_timeout, not a draft checked in part; and such a page
// keeps MaxPageRows rows, the rest counted.
func TestChecksStopAtTheDeadline(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"indicators":[`)
	for i := range 5000 { // 235 KB, within the reply read (parse.MaxReply)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"itemName":"ALT","valueNum":%d,"unit":"U/L"}`, i)
	}
	b.WriteString(`]}`)
	m := &fakeModel{answer: func(context.Context, string, int) (vision.Reply, error) { return reply(b.String()), nil }}
	// Each page its own values (page i's ALT from 10000·i), else later pages only repeat it.
	other := &fakeModel{answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
		return reply(strings.ReplaceAll(b.String(), `"valueNum":`, `"valueNum":`+page[1:])), nil
	}}
	ctx := &late{Context: t.Context()}
	_, err := New(Config{Model: m, Prep: fakePrep{}, Observer: ctx}).Extract(ctx, owned([][]byte{[]byte("p1")}), check.Context{})
	if problem.CodeOf(err) != problem.ModelTimeout {
		t.Fatalf("err %v, want model_timeout", err)
	}
	res, err := New(Config{Model: m, Prep: fakePrep{}}).Extract(t.Context(), owned([][]byte{[]byte("p1")}), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	counted := map[schema.WarningCode]string{}
	for _, w := range res.Warnings {
		if c, ok := w.Params["count"]; ok {
			counted[w.Code] = c
		}
	}
	// Ten such pages: the answer is bounded by the rows the pages keep, not the model's.
	pages := make([][]byte, 10)
	for i := range pages {
		pages[i] = []byte("p" + strconv.Itoa(i+1))
	}
	ten, err := New(Config{Model: other, Prep: fakePrep{}}).Extract(t.Context(), owned(pages), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(ten)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ten pages: %d rows, %d warnings, %d bytes", len(ten.Draft.Indicators), len(ten.Warnings), len(out))
	if len(ten.Draft.Indicators) != 10*draft.MaxPageRows || len(out) > 4<<20 {
		t.Errorf("ten pages: %d rows in %d bytes, want %d rows in at most 4 MiB", len(ten.Draft.Indicators), len(out), 10*draft.MaxPageRows)
	}
	if len(res.Draft.Indicators) != draft.MaxPageRows || counted[schema.IndicatorDropped] != "4500" || counted[schema.DuplicateRow] != "399" {
		t.Errorf("%d rows, counted %v: want %d rows, 4500 left out and 399 duplicates past the 100 listed", len(res.Draft.Indicators), counted, draft.MaxPageRows)
	}
}
