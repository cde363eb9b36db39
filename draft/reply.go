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
// a format example the model echoed before its answer loses to the answer; among equals, the
// longer text, then the earlier one.
//
// A reply with no JSON, or whose best draft holds nothing at all (no indicator and no field), is
// an error with code model_output_unparseable: a refusal must never become an empty success.
func (b *Builder) FromReply(reply string, cut bool) (Outcome, error) {
	cands, err := parse.Reply(reply)
	if err != nil {
		return Outcome{Stage: parse.Failed}, err
	}
	var best Outcome
	bestLen := -1
	for _, c := range cands {
		res := b.Build(c.Value)
		n, bn := len(res.Draft.Indicators), len(best.Draft.Indicators)
		if bestLen < 0 || n > bn || n == bn && c.Len > bestLen {
			best = Outcome{Result: res, Stage: c.Stage, Truncated: c.Truncated}
			bestLen = c.Len
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
