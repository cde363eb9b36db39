package draft

import (
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Outcome is a draft read from a model's reply, with how it was found.
type Outcome struct {
	schema.Result
	Stage     parse.Stage // for metrics
	Truncated bool
}

// FromReply reads the best draft from a model's raw reply. cut says the model stopped at its token
// limit (finish reason "length"), which the text alone may not show.
//
// When the reply holds several JSON values, the one that yields the most indicators wins, so that
// a format example the model echoed before its answer loses to the answer; among equals, the one
// with more of title, hospital, date and year, then one that was not cut, then the later one: a
// model that answers twice corrects itself the second time ("更正：…").
//
// A reply with no JSON, or whose best draft holds nothing at all (no indicator and no field), is
// an error with code model_output_unparseable: a refusal must never become an empty success.
func (b *Builder) FromReply(reply string, cut bool) (Outcome, error) {
	cands, err := parse.Reply(reply)
	if err != nil {
		return Outcome{Stage: parse.Failed}, err
	}
	var best Outcome
	var bestScore [4]int
	for i, c := range cands {
		res := b.Build(c.Value)
		score := [4]int{len(res.Draft.Indicators), fieldCount(res.Draft), boolInt(!c.Truncated), c.Offset}
		if i == 0 || better(score, bestScore) {
			best = Outcome{Result: res, Stage: c.Stage, Truncated: c.Truncated}
			bestScore = score
		}
	}
	best.Truncated = best.Truncated || cut
	if empty(best.Draft) {
		why := "the model's reply holds no report data"
		if best.Truncated {
			why = "the model's reply was cut off before any complete item"
		}
		return Outcome{Stage: parse.Failed, Truncated: best.Truncated}, parse.Unparseable(reply, why)
	}
	if best.Truncated {
		best.Warnings = append([]schema.Warning{schema.WarnDraft(schema.OutputTruncated,
			"the model's reply was cut off; the item it was writing and any after it are missing")}, best.Warnings...)
	}
	return best, nil
}

func empty(d schema.OcrDraft) bool {
	return len(d.Indicators) == 0 && d.Title == nil && d.Hospital == nil && d.CheckupDate == nil && d.ReportYear == nil
}

// better compares scores field by field, the first difference deciding.
func better(a, b [4]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

// fieldCount is how many of the draft's own fields are known.
func fieldCount(d schema.OcrDraft) int {
	n := 0
	for _, known := range []bool{d.Title != nil, d.Hospital != nil, d.CheckupDate != nil, d.ReportYear != nil} {
		n += boolInt(known)
	}
	return n
}
