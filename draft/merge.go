package draft

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Page is one page's draft, or why it has none.
type Page struct {
	Result *schema.Result
	Err    error
}

// Merge joins the pages of one report, in page order. title, hospital, checkupDate and
// reportYear come from the first page that has them; a different value on a later page is kept
// out with warning page_conflict. Indicators are concatenated; an exact repeat on a later page
// (same name, value and unit: overlapping photos) is dropped with warning duplicate_indicator. A
// failed page adds page_failed; if every page failed, the first page's error is returned.
//
// Every indicator and warning of page i gets page i+1, whatever its build said. With more than
// one page, every warning path is prefixed by its page (pages[1].indicators[3]) and indexes that
// page's own draft; a single page's paths are left as they are.
//
// At most maxRepeats repeats are listed, the rest counted in one more warning. A page keeps at
// most MaxPageRows rows; the rest are left out with one indicator_dropped
// warning that counts them (path pages[i].indicators[MaxPageRows], the first row left out), and
// a warning about a row left out keeps that page's path, prefixed by its page, a single page's
// too: a path starting with indicators[ is always a row of the returned draft. Merge's work is
// linear in the rows (one map look-up each), and the cut bounds what the checks after it do.
func Merge(pages []Page) (schema.Result, error) {
	if len(pages) == 1 {
		return mergeOne(pages[0])
	}
	var firstErr error
	ok := 0
	for _, p := range pages {
		if p.Err == nil {
			ok++
		} else if firstErr == nil {
			firstErr = p.Err
		}
	}
	if ok == 0 {
		return schema.Result{}, firstErr
	}

	out := schema.Result{Draft: schema.OcrDraft{Indicators: []schema.OcrIndicator{}}, Warnings: []schema.Warning{}}
	d := &out.Draft
	seen := make(map[string]int) // indicator key → page it was first seen on
	repeats := 0                 // rows dropped as repeats
	for i, p := range pages {
		at := fmt.Sprintf("pages[%d]", i)
		page := i + 1
		warn := func(code schema.WarningCode, reason, path string, params map[string]string) {
			out.Warnings = append(out.Warnings, msg.New(code, reason, &path, &page, params))
		}
		if p.Err != nil {
			warn(schema.PageFailed, "failed", at, map[string]string{"code": string(problem.CodeOf(p.Err))})
			continue
		}
		pd := p.Result.Draft
		conflict := func(field string, differs bool, theirs, ours string) {
			if differs {
				warn(schema.PageConflict, "differs", at+"."+field, map[string]string{"field": field, "value": theirs, "kept": ours})
			}
		}
		mergeHeader(d, pd, conflict)
		// Which row of the merged draft each of this page's rows becomes (-1: a repeat, dropped;
		// -2: past MaxPageRows, left out).
		merged := make([]int, len(pd.Indicators))
		next := len(d.Indicators)
		for j, ind := range pd.Indicators {
			if j >= MaxPageRows {
				merged[j] = -2
				continue
			}
			k := indicatorKey(ind)
			if first, dup := seen[k]; dup && first < i {
				merged[j] = -1
				continue
			}
			if _, dup := seen[k]; !dup {
				seen[k] = i
			}
			merged[j], next = next, next+1
		}
		for _, w := range p.Result.Warnings {
			path := at
			if w.Path != nil {
				path = rebase(*w.Path, at, merged)
			}
			w.Path, w.Page = &path, &page
			out.Warnings = append(out.Warnings, w)
		}
		for j, ind := range pd.Indicators[:min(len(pd.Indicators), MaxPageRows)] {
			if merged[j] < 0 {
				if repeats++; repeats > maxRepeats {
					continue
				}
				warn(schema.DuplicateIndicator, "repeat", fmt.Sprintf("%s.indicators[%d]", at, j),
					map[string]string{"itemName": ind.ItemName, "firstPage": strconv.Itoa(seen[indicatorKey(ind)] + 1)})
				continue
			}
			ind.Page = &page
			d.Indicators = append(d.Indicators, ind)
		}
		if len(pd.Indicators) > MaxPageRows {
			out.Warnings = append(out.Warnings, cutWarning(i, len(pd.Indicators)))
		}
	}
	if repeats > maxRepeats {
		out.Warnings = append(out.Warnings, msg.New(schema.DuplicateIndicator, "more", nil, nil,
			map[string]string{"count": strconv.Itoa(repeats - maxRepeats)}))
	}
	return out, nil
}

// mergeOne is Merge of a single page: its rows and warnings are page 1's, cut at MaxPageRows.
func mergeOne(p Page) (schema.Result, error) {
	if p.Err != nil {
		return schema.Result{}, p.Err
	}
	res := *p.Result
	one := 1
	n := len(res.Draft.Indicators)
	res.Draft.Indicators = stamp(res.Draft.Indicators[:min(n, MaxPageRows)], &one)
	res.Warnings = stampWarnings(res.Warnings, &one)
	if n > MaxPageRows {
		for i, w := range res.Warnings {
			if w.Path != nil {
				path := cutPath(*w.Path, "pages[0]")
				res.Warnings[i].Path = &path
			}
		}
		res.Warnings = append(res.Warnings, cutWarning(0, n))
	}
	return res, nil
}

// mergeHeader takes a page's header fields into d where d has none, and calls conflict for
// each that differs from what an earlier page gave (the earlier is kept).
func mergeHeader(d *schema.OcrDraft, pd schema.OcrDraft, conflict func(field string, differs bool, theirs, ours string)) {
	mergeString(&d.Title, pd.Title, func(s string) { conflict("title", true, s, *d.Title) })
	mergeString(&d.Hospital, pd.Hospital, func(s string) { conflict("hospital", true, s, *d.Hospital) })
	if pd.CheckupDate != nil {
		if d.CheckupDate == nil {
			d.CheckupDate = pd.CheckupDate
		} else {
			conflict("checkupDate", *d.CheckupDate != *pd.CheckupDate, pd.CheckupDate.String(), d.CheckupDate.String())
		}
	}
	if pd.ReportYear != nil {
		if d.ReportYear == nil {
			d.ReportYear = pd.ReportYear
		} else {
			conflict("reportYear", *d.ReportYear != *pd.ReportYear, strconv.Itoa(*pd.ReportYear), strconv.Itoa(*d.ReportYear))
		}
	}
}

// maxRepeats bounds the duplicate_indicator warnings listed: ten pages of one looping reply
// repeat 4,500 rows. The rest are counted in one more, as the reader counts (maxWarnings).
const maxRepeats = 100

// MaxPageRows bounds the rows one page keeps. The densest report pages print about 120 rows
// (two columns of a blood count and chemistry); a page of more is a model repeating itself or
// told to, whose rows would cost every check after it and the answer's size (a looping model
// writes 7,000 rows in a reply of 256 KiB).
const MaxPageRows = 500

// cutWarning counts the rows of page i (0-based) past MaxPageRows, of n, that were left out.
func cutWarning(i, n int) schema.Warning {
	page := i + 1
	path := fmt.Sprintf("pages[%d].indicators[%d]", i, MaxPageRows)
	return msg.New(schema.IndicatorDropped, "page_rows", &path, &page,
		map[string]string{"count": strconv.Itoa(n - MaxPageRows), "kept": strconv.Itoa(MaxPageRows)})
}

// cutPath is the path of a single page's warning once its rows past MaxPageRows are left out:
// one about such a row is prefixed by the page (at), as Merge says; any other is as it was.
func cutPath(path, at string) string {
	if rest, ok := strings.CutPrefix(path, "indicators["); ok {
		if n, _, ok := strings.Cut(rest, "]"); ok {
			if j, err := strconv.Atoi(n); err == nil && j >= MaxPageRows {
				return at + "." + path
			}
		}
	}
	return path
}

// rebase turns a page's warning path into the merged draft's: a kept row's indicators[j]… becomes
// indicators[m]…, its index in the merged draft, so that a path starting with indicators[ always
// means a row of the returned draft; anything else (a dropped item's reply.…, a page's own
// field, a row dropped as a repeat) is prefixed with the page: pages[1].reply.indicators[2].
func rebase(path, at string, merged []int) string {
	if rest, ok := strings.CutPrefix(path, "indicators["); ok {
		if n, tail, ok := strings.Cut(rest, "]"); ok {
			if j, err := strconv.Atoi(n); err == nil && j >= 0 && j < len(merged) && merged[j] >= 0 {
				return "indicators[" + strconv.Itoa(merged[j]) + "]" + tail
			}
		}
	}
	return at + "." + path
}

// stamp returns the indicators with their page set, copied: the caller's stay as they were.
func stamp(inds []schema.OcrIndicator, page *int) []schema.OcrIndicator {
	out := make([]schema.OcrIndicator, len(inds))
	for i, ind := range inds {
		ind.Page = page
		out[i] = ind
	}
	return out
}

func stampWarnings(ws []schema.Warning, page *int) []schema.Warning {
	if ws == nil {
		return nil
	}
	out := make([]schema.Warning, len(ws))
	for i, w := range ws {
		w.Page = page
		out[i] = w
	}
	return out
}

func mergeString(dst **string, src *string, conflict func(string)) {
	switch {
	case src == nil:
	case *dst == nil:
		*dst = src
	case **dst != *src:
		conflict(*src)
	}
}

// indicatorKey identifies an indicator for duplicate detection: name, value and unit. Numbers
// compare by value, so 5.6 on one page repeats 5.60 on another.
func indicatorKey(ind schema.OcrIndicator) string {
	var b strings.Builder
	b.WriteString(ind.ItemName)
	b.WriteByte(0)
	if ind.ValueNum != nil {
		b.WriteString(ind.ValueNum.Decimal().String())
	}
	b.WriteByte(0)
	if ind.ValueText != nil {
		b.WriteString(*ind.ValueText)
	}
	b.WriteByte(0)
	if ind.Unit != nil {
		b.WriteString(*ind.Unit)
	}
	return b.String()
}
