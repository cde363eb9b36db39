package draft

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Outcome is a draft read from a model's reply, with how it was found.
type Outcome struct {
	schema.Result
	Stage     schema.ParseStage // for metrics
	Truncated bool              // the model's reply was cut off by the model (warning output_truncated)
	TooLong   bool              // the reply was longer than parse.MaxReply; only its start was read (reply_too_long)
	Work      parse.Work        // what reading the reply cost, for tests and fuzzers
	// Found is where in the reply's JSON the draft was found (choices[0].message.content,
	// [0].arguments), "" when the reply itself was the draft; see find.go.
	Found string
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
// Two or more complete drafts (a report's fields and rows each, no pages wrapper: one object per
// page) are pages when no row repeats between them; see pageDrafts.
//
// A placeholder from a format template (<报告标题>, [医院名称], YYYY-MM-DD, XX医院) is never data:
// it is set to null with a warning, in any field (scrub). A reply with no JSON, or whose best
// draft holds nothing at all (no indicator and no field) — a refusal, or a template it offered
// to fill in — is an error with code model_output_unparseable: a refusal must never become a
// success.
// Nothing is lost in silence: a reply longer than the service reads warns reply_too_long, and
// values left unread because reading them would cost too much warn indicator_dropped with their
// count.
func (b *Builder) FromReplyContext(ctx context.Context, reply string, cut bool) (Outcome, error) {
	rd, err := parse.Read(ctx, reply)
	if err != nil {
		return Outcome{Stage: parse.Failed, TooLong: rd.TooLong, Work: rd.Work}, err
	}
	fd := finder{limit: parse.Bound(len(reply)).Walked}
	cands := fd.expand(rd.Candidates)
	rd.Work.Walked = fd.walked
	clean := cleanText(reply)
	build := func(v parse.Value) schema.Result {
		res := b.build(v, modelRows{}, clean)
		scrub(&res)
		return res
	}
	var joined *schema.Result
	if last := cands[len(cands)-1]; last.Joined {
		// Rows written one per line or fence: the list they make wins over any one of them as
		// soon as it holds two indicators, so the rows need not be built one by one.
		if res := build(last.Value); len(res.Draft.Indicators) >= 2 {
			cands, joined = cands[len(cands)-1:], &res
		}
	}
	var best Outcome
	var bestScore [4]int
	var drafts []pageDraft // complete drafts, for one object per page (see pageDrafts)
	var parts []pageDraft  // every value with rows, for rows split over several (see chunks)
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
			res = build(c.Value)
		}
		score := [4]int{len(res.Draft.Indicators), fieldCount(res.Draft), boolInt(!c.Truncated), c.Offset}
		if i == 0 || better(score, bestScore) {
			best = Outcome{Result: res, Stage: c.Stage, Truncated: c.Truncated, Found: c.Path}
			bestScore = score
		}
		if joined == nil && len(cands) > 1 && c.Value.Kind == parse.Object && fieldCount(res.Draft) > 0 && slices.ContainsFunc(res.Draft.Indicators, hasValue) {
			drafts = append(drafts, pageDraft{res, c})
		}
		if joined == nil && len(cands) > 1 && slices.ContainsFunc(res.Draft.Indicators, hasValue) {
			parts = append(parts, pageDraft{res, c})
		}
	}
	switch {
	case len(drafts) >= 2:
		best = pageDrafts(drafts, best)
	case len(parts) >= 2:
		best = chunks(parts, best)
	}
	best.TooLong, best.Work = rd.TooLong, rd.Work
	// A candidate cut at parse.MaxReply was cut by the service, not by the model; only the
	// finish reason can still say the model stopped early.
	best.Truncated = cut || best.Truncated && !rd.TooLong
	template := placeholderDrops(best.Warnings)
	if empty(best.Draft) || template && onlyYear(best.Draft) {
		why := nothingRead(rd, best.Truncated, cut, template)
		return Outcome{Stage: parse.Failed, Truncated: best.Truncated, TooLong: rd.TooLong, Work: rd.Work}, parse.Unparseable(reply, why)
	}
	if ws := replyWarnings(rd, best.Truncated); ws != nil {
		best.Warnings = append(ws, best.Warnings...)
	}
	// A reply is one page: its warnings are page 1's, the reply's own (cut off, too long) too,
	// as Merge's one-page path says them on /v1/extract. Drafts of one reply read as pages
	// (pageDrafts) keep the pages they were given.
	page := 1
	for i := range best.Warnings {
		if best.Warnings[i].Page == nil {
			best.Warnings[i].Page = &page
		}
	}
	return best, nil
}

// nothingRead says why a reply gave no draft: what it shows (too long, cut off, left open, a
// template, too costly to read), or that it holds no report data.
func nothingRead(rd parse.Reading, truncated, cut, template bool) string {
	switch {
	case rd.TooLong:
		return fmt.Sprintf("the model's reply is longer than the %d KB the service reads, and holds no complete item before that", parse.MaxReply>>10)
	case cut:
		return "the model's reply was cut off before any complete item"
	case truncated:
		// The text alone cannot tell a reply cut off from one broken: say what it shows.
		return "the model's reply holds no complete item: its JSON is left open (cut off, or broken)"
	case template:
		return "the model's reply holds only a format template with placeholders (such as <医院名称> or YYYY-MM-DD), no report data: it did not read the page"
	case rd.Unread > 0:
		return fmt.Sprintf("the model's reply holds no report data that could be read; %d more values were not read: reading them would cost more work than one reply may", rd.Unread)
	}
	return "the model's reply holds no report data"
}

// replyWarnings are the reply's own warnings, before its rows': too long for the service, cut
// off by the model, values left unread.
func replyWarnings(rd parse.Reading, truncated bool) []schema.Warning {
	var ws []schema.Warning
	if rd.TooLong {
		ws = append(ws, msg.New(schema.ReplyTooLong, "too_long", nil, nil, map[string]string{"kb": strconv.Itoa(parse.MaxReply >> 10)}))
	}
	if truncated {
		ws = append(ws, msg.New(schema.OutputTruncated, "cut_off", nil, nil, nil))
	}
	if rd.Unread > 0 {
		ws = append(ws, msg.New(schema.IndicatorDropped, "unread", nil, nil, map[string]string{"count": strconv.Itoa(rd.Unread)}))
	}
	return ws
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

// pageDraft is a complete draft found in a reply, and where.
type pageDraft struct {
	res  schema.Result
	cand parse.Candidate
}

// pageDrafts decides what two or more complete drafts in one reply are (each with a report
// field and rows with results, no pages wrapper): a model that wrote one object per page, or one that
// answered twice. When they lie apart in the reply and no row's name repeats between them, they
// are different pages and are merged as pages are (Merge: the first page's fields, page_conflict
// for a differing one, warning paths under pages[i]). Otherwise best, the winner, is kept, and
// if another holds rows best lacks, warning indicator_dropped names how many and tells the
// person to check: rows are never lost in silence. A correction that repeats the rows loses
// nothing, and says nothing.
func pageDrafts(drafts []pageDraft, best Outcome) Outcome {
	slices.SortFunc(drafts, func(a, b pageDraft) int { return a.cand.Offset - b.cand.Offset })
	apart := true
	seen := map[string]int{}
	for i, d := range drafts {
		if i > 0 && d.cand.Offset < drafts[i-1].cand.Offset+drafts[i-1].cand.Len {
			apart = false // one inside the other: the same text found twice
		}
		for _, ind := range d.res.Draft.Indicators {
			k := rowName(ind)
			if p, ok := seen[k]; ok && p != i {
				apart = false
			}
			seen[k] = i
		}
	}
	if apart {
		pages := make([]Page, len(drafts))
		for i := range drafts {
			pages[i] = Page{Result: &drafts[i].res}
		}
		if merged, err := Merge(pages); err == nil {
			truncated := slices.ContainsFunc(drafts, func(d pageDraft) bool { return d.cand.Truncated })
			return Outcome{Result: merged, Stage: drafts[0].cand.Stage, Truncated: truncated, Found: drafts[0].cand.Path}
		}
	}
	return withMissing(best, drafts)
}

// withMissing is best with one indicator_dropped warning counting the rows of the other values
// that best lacks, if any.
func withMissing(best Outcome, others []pageDraft) Outcome {
	have := map[string]bool{}
	for _, ind := range best.Draft.Indicators {
		have[rowName(ind)] = true
	}
	missing := 0
	var names []string
	for _, d := range others {
		for _, ind := range d.res.Draft.Indicators {
			if k := rowName(ind); !have[k] && hasValue(ind) {
				have[k] = true
				missing++
				if len(names) < 5 {
					names = append(names, ind.ItemName)
				}
			}
		}
	}
	if missing > 0 {
		w := msg.New(schema.IndicatorDropped, "other_draft", nil, nil,
			map[string]string{"count": strconv.Itoa(missing), "names": strings.Join(names, ", ")})
		best.Warnings = append(slices.Clip(best.Warnings), w)
	}
	return best
}

// chunks decides what several JSON values with rows are when at most one has a report's fields:
// one list the model split (a fence per row or per few rows, a draft and then "其余项目" as a
// list). When they lie apart in the reply, no row's name repeats between them, none carries a
// warning with a path (whose index would have to be rebased) and only the first has any of the
// report's keys (title, hospital, date, year — even null: an echoed format example has them),
// their rows are joined in order, with the first one's fields. Otherwise best is kept, and the rows it lacks are
// counted in one indicator_dropped warning, as pageDrafts does: rows are never lost in silence.
func chunks(parts []pageDraft, best Outcome) Outcome {
	slices.SortFunc(parts, func(a, b pageDraft) int { return a.cand.Offset - b.cand.Offset })
	join := true
	seen := map[string]int{}
	for i, p := range parts {
		if i > 0 && p.cand.Offset < parts[i-1].cand.Offset+parts[i-1].cand.Len {
			join = false
		}
		if i > 0 && reportKeys(p.cand.Value) {
			// Only the first value may be the report's own (a draft, then "其余项目" as a list).
			// A later one with the report's keys is a second answer, or the answer after an
			// echoed format example, whose rows must never be taken for the report's.
			join = false
		}
		for _, w := range p.res.Warnings {
			if w.Path != nil {
				join = false
			}
		}
		for _, ind := range p.res.Draft.Indicators {
			k := rowName(ind)
			if q, ok := seen[k]; ok && q != i {
				join = false
			}
			seen[k] = i
		}
	}
	if !join {
		return withMissing(best, parts)
	}
	out := schema.Result{Draft: parts[0].res.Draft} // its fields, if it has any
	out.Draft.Indicators = nil
	for _, p := range parts {
		out.Draft.Indicators = append(out.Draft.Indicators, p.res.Draft.Indicators...)
		out.Warnings = append(out.Warnings, p.res.Warnings...)
	}
	truncated := slices.ContainsFunc(parts, func(d pageDraft) bool { return d.cand.Truncated })
	return Outcome{Result: out, Stage: parts[0].cand.Stage, Truncated: truncated, Found: parts[0].cand.Path}
}

// reportKeys reports an object with any of a report's own keys, null or not.
func reportKeys(v parse.Value) bool {
	for _, m := range v.Members {
		switch fieldOf(m.Key, 0) {
		case fTitle, fHospital, fCheckupDate, fReportYear:
			return true
		}
	}
	return false
}

// hasValue reports a row with a result: a draft's rows count as a page's only when they say
// something ({"itemName": "x"} alone is an afterthought, not a page).
func hasValue(ind schema.OcrIndicator) bool { return ind.ValueNum != nil || ind.ValueText != nil }

// rowName identifies a row across drafts by its group and name, case and width folded.
func rowName(ind schema.OcrIndicator) string {
	g := ""
	if ind.ItemGroup != nil {
		g = *ind.ItemGroup
	}
	return strings.ToLower(lexicon.Narrow(g)) + "\x00" + strings.ToLower(lexicon.Narrow(ind.ItemName))
}

// scrub sets to null every placeholder a format template left in a draft's text (isPlaceholder:
// <报告标题>, [医院名称], XX医院, <单位>), with warning invalid_value. Item names are checked as
// items are read, and a placeholder name drops its row; dates, as they are read (dateTrouble).
func scrub(res *schema.Result) {
	var last [2]string // the last two values found not to be placeholders: groups and units repeat
	null := func(p **string, i int, field string) {
		if *p == nil || **p == last[0] || **p == last[1] {
			return
		}
		if !isPlaceholder(**p) {
			last[0], last[1] = **p, last[0]
			return
		}
		path, params := field, kv("value", **p)
		if i >= 0 {
			path = itemPath("indicators", i) + "." + field
			params["itemName"] = res.Draft.Indicators[i].ItemName
		}
		res.Warnings = append(res.Warnings, msg.New(schema.InvalidValue, "placeholder", &path, nil, params))
		*p = nil
	}
	d := &res.Draft
	null(&d.Title, -1, "title")
	null(&d.Hospital, -1, "hospital")
	for i := range d.Indicators {
		ind := &d.Indicators[i]
		null(&ind.ItemGroup, i, "itemGroup")
		null(&ind.Unit, i, "unit")
		null(&ind.ValueText, i, "valueText")
	}
}

// onlyYear reports a draft whose one known field is its year: beside a template's placeholders,
// the year is the template's too.
func onlyYear(d schema.OcrDraft) bool {
	return len(d.Indicators) == 0 && d.Title == nil && d.Hospital == nil && d.CheckupDate == nil
}

// placeholderDrops reports whether a draft's warnings say rows or a date were placeholders.
func placeholderDrops(ws []schema.Warning) bool {
	return slices.ContainsFunc(ws, func(w schema.Warning) bool { return strings.Contains(w.Message, "placeholder") })
}
