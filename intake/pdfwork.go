package intake

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/cpuclock"
	"github.com/ocrdraft/ocrdraft/problem"
)

// PDFPageWork is the most CPU time PDFium may spend on one PDF page: reading it (its content
// parsed and walked, pdfWalk) and drawing it and reading its text layer, together; and a
// document's openings and all its pages share pages × PDFPageWork, so that no page costs more
// with its share of a slow opening (a broken cross-reference table rebuilt). It answers
// what the walk cannot see before drawing (an image's soft mask, a Type3 font's glyph
// procedures, a tiling or shading pattern, a content stream of a million operators to parse):
// past it the instance is killed, as at PDFPageTime, and the page refused; the document's other
// pages are drawn in a new instance. It is the page's own work on its own thread, so a loaded
// machine, which stretches the wall clock, does not bring an ordinary page near it: a report
// page is charged 20–30 ms, a scan with an OCR text layer 0.25 s (docs/performance.md). Its
// price: a page of one lossless colour image near the pixel limit (36 MP RGB, 40 MP CMYK, 2–5 s)
// is refused. PDFium's progressive render cannot bound this instead: it asks whether to pause
// only between a page's objects and while it stretches an image, never inside a soft mask, a
// glyph, a pattern or a shading. Where there is no thread CPU clock (systems other than Linux)
// only PDFPageTime bounds a page.
const PDFPageWork = 2 * time.Second

// PDFOpenWork is the most CPU time PDFium may spend opening a PDF and counting its pages: a
// broken cross-reference table is rebuilt then, by scanning every object of the file (300,000
// objects in a few MB took 3.3 s of one core). A document is opened once for all its pages, and
// an ordinary one in milliseconds, a broken one of thousands of objects in well under a second.
const PDFOpenWork = 2 * time.Second

// errPageWork is why a page's context ends at PDFPageWork.
var errPageWork = errors.New("intake: the PDF page took too much work to draw")

// pdfMeter charges the calling thread's CPU time to a page, in phases (charge), and ends the
// page's context past budget in any one of them. It ticks every pdfMeterTick: a page is
// stopped at most that much CPU time past its budget.
type pdfMeter struct {
	clock  cpuclock.Clock
	budget time.Duration
	past   func() // what is done past budget: the page's context ended, the instance killed
	stats  *pdfCounters

	mu    sync.Mutex
	base  time.Duration
	on    bool
	phase int // the page (of the document) whose work is charged
	over  int // the phase that ran past budget, once one has (-1 before)
	done  chan struct{}

	// A page's phases (its reading, its drawing) share its budget, and all of a document's
	// work (its openings and its pages) shares pages × budget: prior is what each page was
	// charged before this meter, left what the document had left then (share); used is what
	// this meter has charged each page (pages); cap the budget of the phase in progress, docCap whether
	// the document's share is what set it.
	prior  []time.Duration
	left   time.Duration
	shared bool
	pages  map[int]time.Duration
	cap    time.Duration
	docCap bool

	locked bool          // by begin, on the goroutine that calls stop
	start  time.Duration // the thread's CPU time at begin
	free   func()        // lets go of what the meter holds, at stop (its context)
}

const pdfMeterTick = 20 * time.Millisecond

// meterPDF returns a meter for a page and the context that ends when the meter finds the page
// past budget (and with ctx). It charges nothing before begin.
func meterPDF(ctx context.Context, budget time.Duration, stats *pdfCounters) (context.Context, *pdfMeter) {
	wctx, cancel := context.WithCancelCause(ctx)
	m := newMeter(budget, stats, func() { cancel(errPageWork) })
	m.free = func() { cancel(nil) }
	return wctx, m
}

// newMeter returns a meter that calls past when a phase runs past budget.
func newMeter(budget time.Duration, stats *pdfCounters, past func()) *pdfMeter {
	return &pdfMeter{budget: budget, cap: budget, past: past, stats: stats, over: -1, done: make(chan struct{})}
}

// begin locks the calling goroutine to its thread, whose CPU time is then what is charged, once
// it holds a decode slot (a goroutine waiting for one would hold a thread idle). Without a
// thread clock the meter charges nothing.
func (m *pdfMeter) begin() {
	runtime.LockOSThread()
	m.locked = true
	if c, ok := cpuclock.Thread(); ok {
		m.clock, m.start = c, c.Used()
		go m.watch()
	}
}

// used is the CPU time the thread has spent since begin, and false without a thread clock.
func (m *pdfMeter) used() (time.Duration, bool) {
	if !m.locked || m.clock == (cpuclock.Clock{}) {
		return 0, false
	}
	return m.clock.Used() - m.start, true
}

func (m *pdfMeter) watch() {
	t := time.NewTicker(pdfMeterTick)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-t.C:
		}
		m.mu.Lock()
		past := m.on && m.clock.Used()-m.base > m.cap
		if past {
			m.end()
			m.over = m.phase
		}
		m.mu.Unlock()
		if past {
			m.stats.overruns.Add(1)
			m.past()
			return
		}
	}
}

// charge starts a phase: the work of page i from now on, against a budget of its own; a nil
// meter charges nothing.
func (m *pdfMeter) charge(i int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.end()
	m.base, m.on, m.phase = m.clock.Used(), true, i
	m.cap, m.docCap = m.budget, false
	if m.shared {
		page := m.budget - m.pages[i]
		if i < len(m.prior) {
			page -= m.prior[i]
		}
		doc := m.left
		for _, d := range m.pages {
			doc -= d
		}
		m.cap, m.docCap = max(0, min(page, doc)), doc < page
	}
	spent := m.on && m.cap <= 0 && m.over < 0 // nothing left to charge: past budget at once
	if spent {
		m.on, m.over = false, i
	}
	m.mu.Unlock()
	if spent {
		m.stats.overruns.Add(1)
		m.past()
	}
}

// share makes the meter's phases share the budgets of their pages and document (above): prior
// is each page's charge so far, left the document's budget left.
func (m *pdfMeter) share(prior []time.Duration, left time.Duration) {
	m.prior, m.left, m.shared = prior, left, true
}

// charged is what the meter charged each page, once it has stopped charging.
func (m *pdfMeter) charged() map[int]time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pages
}

// overDoc says whether the phase that ran past budget was stopped by the document's share.
func (m *pdfMeter) overDoc() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.over >= 0 && m.docCap
}

// off stops charging (what follows is bounded otherwise: Go's own decode and encode); a nil
// meter charges nothing.
func (m *pdfMeter) off() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.end()
	m.mu.Unlock()
}

// end ends the phase charged, if one is, and counts it; m.mu is held.
func (m *pdfMeter) end() {
	if m.on {
		m.on = false
		d := m.clock.Used() - m.base
		m.stats.work(d)
		if m.pages == nil {
			m.pages = map[int]time.Duration{}
		}
		m.pages[m.phase] += d
	}
}

// overrun is the page whose work ran past budget, if one did.
func (m *pdfMeter) overrun() (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.over, m.over >= 0
}

// stop ends the meter and unlocks the thread; the context meterPDF returned ends too.
func (m *pdfMeter) stop() {
	m.off()
	close(m.done)
	if m.free != nil {
		m.free()
	}
	if m.locked {
		runtime.UnlockOSThread()
	}
}

// openWorkRefusal is the refusal of a document whose opening took more than budget of one core.
func openWorkRefusal(budget time.Duration) error {
	return problem.Errorf(problem.ImageTooLarge,
		"opening the PDF takes more than %s of one processor core (its cross-reference table is broken and its objects too many to rebuild it): print it to a new PDF, or send scans or photos of its pages", budget)
}

// pageTimeRefusal is the refusal of page i (from 0) that held its slot for PDFPageTime (limit):
// image_too_large when it was its own work, or nothing tells (no thread clock); but when its
// thread spent less than half that time on a core, it was mostly waiting for one, the
// machine's load and not the page (whose work, each phase within PDFPageWork, is bounded
// apart): overloaded, to be tried again.
func pageTimeRefusal(i int, limit time.Duration, m *pdfMeter) error {
	if used, ok := m.used(); ok && used < limit/2 {
		return &problem.Error{Code: problem.Overloaded, RetryAfter: time.Second, Detail: fmt.Sprintf(
			"page %d of the PDF waited more than %s for a processor core (it used %s of one): the server is busy; retry shortly", i+1, limit, used.Round(time.Millisecond))}
	}
	return problem.Errorf(problem.ImageTooLarge,
		"page %d of the PDF takes more than %s to draw: send a scan or photo of it instead", i+1, limit)
}

// docWorkRefusal is the refusal of page i (from 0) stopped by its document's share of work:
// pages × PDFPageWork for its openings and all its pages.
func docWorkRefusal(i int, budget time.Duration) error {
	return problem.Errorf(problem.ImageTooLarge,
		"the PDF takes more than %s of one processor core a page to open and draw (at page %d): print it to a new PDF, or send scans or photos of its pages", budget, i+1)
}

// workRefusal is the refusal of page i stopped at its budget by m: its own, or its document's
// share.
func workRefusal(m *pdfMeter, i int, budget time.Duration, what string) error {
	if m.overDoc() {
		return docWorkRefusal(i, budget)
	}
	return pageWorkRefusal(i, budget, what)
}

// pageWorkRefusal is the refusal of page i (from 0) whose reading or drawing took more than
// budget of one core.
func pageWorkRefusal(i int, budget time.Duration, what string) error {
	return problem.Errorf(problem.ImageTooLarge,
		"page %d of the PDF takes more than %s of one processor core to %s: send a scan or photo of it instead", i+1, budget, what)
}
