package draft

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
)

const draftHead = `"title":"血脂","hospital":null,"checkupDate":"2026-03-05","reportYear":2026`

// TestValidate: a confirmed draft is held to the contract, and one answer lists every problem.
func TestValidate(t *testing.T) {
	b := New(lexicon.Default())
	tests := []struct {
		name  string
		body  string
		paths []string // the fields of the invalid_draft error, in order; nil means accepted
		want  string   // the draft it becomes, when accepted
	}{
		{name: "a complete draft is accepted; analyte is filled again, page kept",
			body: `{` + draftHead + `,"indicators":[{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.86,"valueText":null,"unit":"mmol/L","refLow":3.1,"refHigh":5.2,"printedFlag":"high","refText":"3.1-5.2","page":2,"analyte":"made_up"}]}`,
			want: `{"title":"血脂","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.86,"unit":"mmol/L","refLow":3.1,"refHigh":5.2,"printedFlag":"high","refText":"3.1-5.2","page":2,"analyte":"total_cholesterol"}]}`},
		{name: "the person's bounds beside refText are kept",
			body: `{` + draftHead + `,"indicators":[{"itemName":"GLU","itemGroup":null,"valueNum":5.1,"valueText":null,"unit":"mmol/L","refLow":3.6,"refHigh":6.1,"printedFlag":null,"refText":"3.9-6.1","page":1,"analyte":null}]}`,
			want: `{"title":"血脂","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"GLU","valueNum":5.1,"unit":"mmol/L","refLow":3.6,"refHigh":6.1,"refText":"3.9-6.1"}]}`},
		{name: "an empty object lists every missing key",
			body:  `{}`,
			paths: []string{"title", "hospital", "checkupDate", "reportYear", "indicators"}},
		{name: "a missing indicator key of the caller's",
			body:  `{` + draftHead + `,"indicators":[{"itemName":"TC","itemGroup":null,"valueNum":5.86,"unit":null,"refHigh":null,"printedFlag":null,"refText":null,"page":1,"analyte":null}]}`,
			paths: []string{"indicators[0].valueText", "indicators[0].refLow"}},
		{name: "the service's keys left out, as a client built before them sends it: null",
			body: `{` + draftHead + `,"indicators":[{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.86,"valueText":null,"unit":"mmol/L","refLow":3.1,"refHigh":5.2}]}`,
			want: `{"title":"血脂","checkupDate":"2026-03-05","reportYear":2026,"indicators":[{"itemName":"总胆固醇","itemGroup":"血脂","valueNum":5.86,"unit":"mmol/L","refLow":3.1,"refHigh":5.2,"analyte":"total_cholesterol"}]}`},
		{name: "types, lengths, dates, ranges and unknown keys, all at once",
			body: `{"title":"` + strings.Repeat("题", 201) + `","hospital":null,"checkupDate":"2026-02-30","reportYear":1800,"extra":1,"indicators":[` +
				`{"itemName":" ","itemGroup":null,"valueNum":"5.6","valueText":null,"unit":"` + strings.Repeat("u", 51) + `","refLow":null,"refHigh":null,"printedFlag":"H","refText":null,"page":0,"analyte":null},` +
				`{"itemName":"` + strings.Repeat("名", 201) + `","itemGroup":null,"valueNum":null,"valueText":null,"unit":null,"refLow":null,"refHigh":null,"printedFlag":null,"refText":null,"page":1,"analyte":7}]}`,
			paths: []string{"title", "checkupDate", "reportYear",
				"indicators[0].itemName", "indicators[0].valueNum", "indicators[0].unit", "indicators[0].printedFlag", "indicators[0].page",
				"indicators[1].itemName", "indicators[1].analyte", "extra"}},
		{name: "an extract response instead of its draft",
			body:  `{"draft":{` + draftHead + `,"indicators":[]},"warnings":[],"meta":{"pages":1}}`,
			paths: []string{"draft"}},
		{name: "a parse response instead of its draft",
			body:  `{"draft":{` + draftHead + `,"indicators":[]},"warnings":[]}`,
			paths: []string{"draft"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := b.Validate([]byte(tt.body))
			if tt.paths == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				checkDraft(t, tt.want, res.Draft)
				return
			}
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.InvalidDraft {
				t.Fatalf("Validate = %v, want invalid_draft", err)
			}
			var got []string
			for _, f := range pe.Fields {
				got = append(got, f.Path)
			}
			if diff := cmp.Diff(tt.paths, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s\n%s", diff, pe.Detail)
			}
			if tt.paths[0] == "draft" && !strings.Contains(pe.Detail, "draft member") {
				t.Errorf("detail %q does not say to send the draft member", pe.Detail)
			}
		})
	}
}

// TestValidateRebuilds: what Build returns for a reply, Validate accepts, and returns unchanged.
func TestValidateRebuilds(t *testing.T) {
	b := New(lexicon.Default())
	out, err := b.FromReply(`{"title":"血脂","indicators":[{"itemName":"总胆固醇","value":"5.86↑ mmol/L","参考范围":"3.1-5.2"},`+
		`{"itemName":"血红蛋白","valueNum":135,"unit":"g/L","refText":"男：130-175；女：115-150"}]}`, false)
	if err != nil {
		t.Fatal(err)
	}
	first := mustJSON(out.Draft)
	res, err := b.Validate([]byte(first))
	if err != nil {
		t.Fatalf("Validate of a built draft: %v\n%s", err, first)
	}
	if diff := cmp.Diff(first, mustJSON(res.Draft)); diff != "" {
		t.Errorf("validated draft differs (-built +validated):\n%s", diff)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("validating a built draft warned: %s", warningDump(res.Warnings))
	}
}
