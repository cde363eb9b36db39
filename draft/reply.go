package draft

import (
	"context"
	"fmt"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Outcome is a draft read from a model's reply, with how it was found.
type Outcome struct {
	schema.Result
	Stage     parse.Stage // for metrics
	Truncated bool        // the model's reply was cut off by the model (warning output_truncated)
	TooLong   bool        // the reply was longer than parse.MaxReply; only its start was read (reply_too_long)
	Work      parse.Work  // what reading the reply cost, for tests and fuzzers
}

// FromReply is FromReplyContext without a deadline.
func (b *Builder) FromReply(reply string, cut bool) (Outcome, error) {
	return b.FromReplyContext(context.Background(), reply, cut)
}

// FromReplyContext reads the best draft from a model's raw reply. cut says the model stopped at
// its token limit (finish reason "length"), which the text alone may not show. The work is
// bounded whatever the text (parse.Bound), and ctx is checked between pieces: when it is done,
// the error wraps ctx.Err().
//
// When the reply holds several JSON values, the one that yields the most indicators wins, so that
// a format example the model echoed before its answer loses to the answer; among equals, the one
// with more of title, hospital, date and year, then one that was not cut, then the later one: a
// model that answers twice corrects itself the second time ("更正：…").
//
// A reply with no JSON, or whose best draft holds nothing at all (no indicator and no field), is
// an error with code model_output_unparseable: a refusal must never become an empty success.
// Nothing is lost in silence: a reply longer than the service reads warns reply_too_long, and
// values left unread because reading them would cost too much warn indicator_dropped with their
// count.
func (b *Builder) FromReplyContext(ctx context.Context, reply string, cut bool) (Outcome, error) {
	rd, err := parse.Read(ctx, reply)
	if err != nil {
		return Outcome{Stage: parse.Failed, TooLong: rd.TooLong, Work: rd.Work}, err
	}
	cands := rd.Candidates
	var joined *schema.Result
	if last := cands[len(cands)-1]; last.Joined {
		// Rows written one per line or fence: the list they make wins over any one of them as
		// soon as it holds two indicators, so the rows need not be built one by one.
		if res := b.Build(last.Value); len(res.Draft.Indicators) >= 2 {
			cands, joined = cands[len(cands)-1:], &res
		}
	}
	var best Outcome
	var bestScore [4]int
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return Outcome{Stage: parse.Failed, Work: rd.Work}, fmt.Errorf("draft: reading the reply: %w", err)
		}
		var res schema.Result
		switch {
		case joined != nil:
			res = *joined
		case c.Value.IsContainer() && len(c.Value.Members) == 0 && len(c.Value.Elems) == 0:
			// {} or []: an empty draft, found without building one (a reply may hold thousands)
		default:
			res = b.Build(c.Value)
		}
		score := [4]int{len(res.Draft.Indicators), fieldCount(res.Draft), boolInt(!c.Truncated), c.Offset}
		if i == 0 || better(score, bestScore) {
			best = Outcome{Result: res, Stage: c.Stage, Truncated: c.Truncated}
			bestScore = score
		}
	}
	best.TooLong, best.Work = rd.TooLong, rd.Work
	// A candidate cut at parse.MaxReply was cut by the service, not by the model; only the
	// finish reason can still say the model stopped early.
	best.Truncated = cut || best.Truncated && !rd.TooLong
	if empty(best.Draft) {
		why := "the model's reply holds no report data"
		switch {
		case rd.TooLong:
			why = fmt.Sprintf("the model's reply is longer than the %d KB the service reads, and holds no complete item before that", parse.MaxReply>>10)
		case best.Truncated:
			why = "the model's reply was cut off before any complete item"
		case rd.Unread > 0:
			why = fmt.Sprintf("the model's reply holds no report data that could be read; %d more values were not read: reading them would cost more work than one reply may", rd.Unread)
		}
		return Outcome{Stage: parse.Failed, Truncated: best.Truncated, TooLong: rd.TooLong, Work: rd.Work}, parse.Unparseable(reply, why)
	}
	var ws []schema.Warning
	if rd.TooLong {
		ws = append(ws, schema.WarnDraft(schema.ReplyTooLong, fmt.Sprintf(
			"the model's reply is longer than the %d KB the service reads; items after that point are missing", parse.MaxReply>>10)))
	}
	if best.Truncated {
		ws = append(ws, schema.WarnDraft(schema.OutputTruncated,
			"the model's reply was cut off; the item it was writing and any after it are missing"))
	}
	if rd.Unread > 0 {
		ws = append(ws, schema.WarnDraft(schema.IndicatorDropped, fmt.Sprintf(
			"%d values or items in the model's reply were not read: reading them would cost more work than one reply may; check the report for missing items", rd.Unread)))
	}
	if ws != nil {
		best.Warnings = append(ws, best.Warnings...)
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
