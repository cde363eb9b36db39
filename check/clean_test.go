package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestNoFalseAlarms: for every analyte with a reference range, in every unit with a factor, a
// row at the range's low and high bound, 1.5× beyond each, and 5× and 9× above it (as far as
// the limits allow), with the range printed beside it and the mark a lab would print, gets no
// warning at all.
func TestNoFalseAlarms(t *testing.T) {
	l := lexicon.Default()
	rows, n := 0, 0
	for _, a := range l.Analytes() {
		sec, _ := sectionName(l, a.Section)
		for k := range a.Units {
			u := &a.Units[k]
			rl, rh, ok := u.Ref()
			if !ok {
				continue
			}
			ll, lh, _ := u.Limits()
			lo, hi := round(rl), round(rh)
			points := []struct {
				v    float64
				flag schema.Flag
			}{{rh, ""}, {rh * 1.5, schema.FlagHigh}, {rh * 5, schema.FlagHigh}, {rh * 9, schema.FlagHigh}}
			if rl > 0 {
				points = append(points, struct {
					v    float64
					flag schema.Flag
				}{rl, ""}, struct {
					v    float64
					flag schema.Flag
				}{rl / 1.5, schema.FlagLow})
			}
			for _, p := range points {
				v := round(p.v)
				fv, _ := strconv.ParseFloat(v, 64)
				if fv < ll || fv > lh {
					continue
				}
				ind := in(a.Names[0], u.Name, v, lo, hi, group(sec), ref(lo+"-"+hi+" "+u.Name))
				if rl == 0 {
					ind = in(a.Names[0], u.Name, v, "", hi, group(sec), ref("<"+hi))
				}
				if p.flag != "" {
					ind.PrintedFlag = &p.flag
				}
				bare := ind // the same row with its unit left out, as models often do
				bare.Unit, bare.RefText = nil, nil
				for _, ind := range []schema.OcrIndicator{ind, bare} {
					d := &schema.OcrDraft{Indicators: []schema.OcrIndicator{ind}}
					rows++
					for _, w := range Run(lexicon.Default(), d, Context{}) {
						n++
						t.Errorf("%s %s %q (range %s–%s): %s %s", a.Key, v, str(ind.Unit), lo, hi, w.Code, w.Message)
					}
				}
			}
		}
	}
	if rows < 300 {
		t.Errorf("only %d rows generated", rows)
	}
	t.Logf("%d rows, %d false alarms", rows, n)
}

func sectionName(l *lexicon.Lexicon, key string) (string, bool) {
	for _, s := range l.Sections() {
		if s.Key == key {
			return s.Name, true
		}
	}
	return "", false
}

// round writes v as a report would: three significant digits, at least.
func round(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// drafts are the testdata drafts: ck-clean-* from every section of the lexicon, normal and
// abnormal but plausible, on which no check may fire; ck-misread-* with the warnings they must
// get. Each is {"context": {...}, "draft": {...}, "want": ["code path", ...]}.
type testDraft struct {
	Context struct {
		Sex       Sex  `json:"sex"`
		Confirmed bool `json:"confirmed"`
	} `json:"context"`
	Draft schema.OcrDraft `json:"draft"`
	Want  []string        `json:"want"`
}

func TestDrafts(t *testing.T) {
	files, err := filepath.Glob("testdata/ck-*.json")
	if err != nil || len(files) == 0 {
		t.Fatal("no testdata/ck-*.json", err)
	}
	sections := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var td testDraft
			if err := json.Unmarshal(b, &td); err != nil {
				t.Fatal(err)
			}
			clean := strings.HasPrefix(filepath.Base(f), "ck-clean-")
			if clean && len(td.Want) > 0 {
				t.Fatal("a clean draft wants warnings")
			}
			if clean {
				for _, ind := range td.Draft.Indicators {
					if a, ok := lexicon.Default().Match(str(ind.ItemGroup), ind.ItemName, str(ind.Unit)); ok {
						sections[a.Section] = true
					}
				}
			}
			ws := Run(lexicon.Default(), &td.Draft, Context{Sex: td.Context.Sex, Confirmed: td.Context.Confirmed})
			got := map[string]bool{}
			for _, w := range ws {
				k := string(w.Code) + " " + *w.Path
				got[k] = true
				if !contains(td.Want, k) {
					t.Errorf("unexpected %s: %s", k, w.Message)
				}
			}
			for _, w := range td.Want {
				if !got[w] {
					t.Errorf("missing %s", w)
				}
			}
		})
	}
	for _, s := range lexicon.Default().Sections() {
		if !sections[s.Key] {
			t.Errorf("no clean draft has an item of section %s", s.Key)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
