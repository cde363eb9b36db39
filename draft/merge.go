package draft

import (
	"fmt"
	"strings"

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
// With more than one page, every warning path is prefixed by its page (pages[1].indicators[3])
// and indexes that page's own draft; a single page's result is returned as it is.
func Merge(pages []Page) (schema.Result, error) {
	if len(pages) == 1 {
		if pages[0].Err != nil {
			return schema.Result{}, pages[0].Err
		}
		return *pages[0].Result, nil
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
	for i, p := range pages {
		at := fmt.Sprintf("pages[%d]", i)
		if p.Err != nil {
			out.Warnings = append(out.Warnings, schema.Warn(schema.PageFailed, at,
				fmt.Sprintf("page %d could not be read (%s): %s", i+1, problem.CodeOf(p.Err), problem.From(p.Err).Detail)))
			continue
		}
		pd := p.Result.Draft
		conflict := func(field string, differs bool, theirs string) {
			if differs {
				out.Warnings = append(out.Warnings, schema.Warn(schema.PageConflict, at+"."+field,
					fmt.Sprintf("page %d shows %s %s, unlike an earlier page; the earlier value is kept", i+1, field, theirs)))
			}
		}
		mergeString(&d.Title, pd.Title, func(s string) { conflict("title", true, fmt.Sprintf("%q", s)) })
		mergeString(&d.Hospital, pd.Hospital, func(s string) { conflict("hospital", true, fmt.Sprintf("%q", s)) })
		if pd.CheckupDate != nil {
			if d.CheckupDate == nil {
				d.CheckupDate = pd.CheckupDate
			} else {
				conflict("checkupDate", *d.CheckupDate != *pd.CheckupDate, pd.CheckupDate.String())
			}
		}
		if pd.ReportYear != nil {
			if d.ReportYear == nil {
				d.ReportYear = pd.ReportYear
			} else {
				conflict("reportYear", *d.ReportYear != *pd.ReportYear, fmt.Sprint(*pd.ReportYear))
			}
		}
		for _, w := range p.Result.Warnings {
			path := at
			if w.Path != nil {
				path += "." + *w.Path
			}
			w.Path = &path
			out.Warnings = append(out.Warnings, w)
		}
		for j, ind := range pd.Indicators {
			k := indicatorKey(ind)
			if first, dup := seen[k]; dup && first < i {
				out.Warnings = append(out.Warnings, schema.Warn(schema.DuplicateIndicator, fmt.Sprintf("%s.indicators[%d]", at, j),
					fmt.Sprintf("%s repeats exactly an item of page %d and was dropped", ind.ItemName, first+1)))
				continue
			}
			if _, dup := seen[k]; !dup {
				seen[k] = i
			}
			d.Indicators = append(d.Indicators, ind)
		}
	}
	return out, nil
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
