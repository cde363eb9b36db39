package intake

import (
	"bytes"
	"cmp"
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ocrdraft/ocrdraft/problem"
)

// A PDF is opened once for all its pages: Split opens it (PDFium may rebuild a broken
// cross-reference table of any size on the way, which is the document's cost, not a page's),
// counts its pages and keeps it, and PreparePage draws each page in the same instance, one
// page at a time. While the instance lives it holds its charge in the decode memory
// (pdfCharge), the cap of its memory, so what the decode memory counts is what is held. A
// document that waits between its count and its pages (its request's other uploads being
// counted) is parked: whoever needs decode memory that is not free closes parked documents
// first, and their next page opens them again. A document is let go of when each of its pages
// has been prepared, or when the context of its Split ends.

// pdfFormat is PDF's row: a document whose pages are counted when it is opened and drawn in it.
var pdfFormat = format{kind: "pdf", mime: "application/pdf", what: "a PDF document", match: func(b []byte) bool {
	// PDF readers accept the header anywhere in the first 1024 bytes.
	return bytes.Contains(b[:min(len(b), 1024)], []byte("%PDF-"))
},
	pages: func(_ format, p *Preparer, ctx context.Context, data []byte) (int, error) {
		return p.pdfPages(ctx, data)
	},
	prepare: (*Preparer).preparePDF,
}

// pdfKey names an upload by its bytes' place in memory: Split and PreparePage are given the
// same slice for one upload (two uploads of the same bytes are two documents). The place may
// be another upload's once a request is over, so an entry is found only while its Split's
// context lives and only for the same bytes (their hash): a page is never drawn from another
// upload's document.
type pdfKey struct {
	at *byte
	n  int
}

// pdfDocs is a Preparer's documents between their Split and their last page.
type pdfDocs struct {
	mu   sync.Mutex
	m    map[pdfKey]*pdfEntry
	seed maphash.Seed
	once sync.Once
	held atomic.Int64 // documents holding decode memory or about to take it
}

// sum is the hash of an upload's bytes (about 10 GB/s: 2 ms for the largest upload).
func (s *pdfDocs) sum(data []byte) uint64 {
	s.once.Do(func() { s.seed = maphash.MakeSeed() })
	return maphash.Bytes(s.seed, data)
}

// pdfEntry is one document and what its pages have learnt of it.
type pdfEntry struct {
	p     *Preparer
	data  []byte
	ctx   context.Context // whose end kills the instance: its Split's, or its page's
	split context.Context // its Split's, while the entry may be found
	sum   uint64          // of data, when Split made it
	turn  chan struct{}   // held by the one caller using the instance
	pages int

	// Held with turn:
	d       *pdfDoc // nil when closed (parked and evicted, or killed)
	charge  func()  // gives back d's decode memory
	walked  int     // pages 0..walked-1 have been walked
	verdict []error // each walked page's refusal, if any
	slow    []error // each walked page's refusal unless it goes as its scan (pdfWalk)
	tally   pdfTally
	opened  time.Duration   // the CPU time its openings took
	spent   []time.Duration // each page's, reading and drawing: PDFPageWork a page, pages × it in all with opened
	done    []bool
	left    int
	stopped bool // let go of: no more pages
}

func (e *pdfEntry) take(ctx context.Context) error {
	select {
	case e.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return abandoned(ctx)
	}
}

func (e *pdfEntry) give() { <-e.turn }

// shut closes the instance, if open, and gives its memory back; the turn is held.
func (e *pdfEntry) shut() {
	if e.d != nil {
		e.d.close()
		e.d = nil
		e.charge()
	}
}

// evict closes one parked document, reporting whether there was one.
func (s *pdfDocs) evict() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.m {
		select {
		case e.turn <- struct{}{}:
			open := e.d != nil
			e.shut()
			e.give()
			if open {
				return true
			}
		default: // in use
		}
	}
	return false
}

func keyOf(data []byte) pdfKey { return pdfKey{unsafe.SliceData(data), len(data)} }

func (s *pdfDocs) get(data []byte) *pdfEntry {
	s.mu.Lock()
	e := s.m[keyOf(data)]
	s.mu.Unlock()
	if e == nil || e.split.Err() != nil || e.sum != s.sum(data) {
		return nil
	}
	return e
}

// drop lets go of e: out of the map, its instance closed, once nobody uses it.
func (s *pdfDocs) drop(e *pdfEntry) {
	s.mu.Lock()
	if s.m[keyOf(e.data)] == e {
		delete(s.m, keyOf(e.data))
	}
	s.mu.Unlock()
	e.turn <- struct{}{}
	e.stopped = true
	e.shut()
	e.give()
}

// takeMem takes n bytes of the decode memory, closing parked documents while it is not free.
// While any document holds memory it looks again every 50 ms, since one may be parked while it
// waits (and its pages may come only after this wait: a request's uploads are all counted
// before any page is prepared); with none, it waits in line.
func (p *Preparer) takeMem(ctx context.Context, n int64) error {
	for {
		if p.mem.TryAcquire(n) {
			return nil
		}
		if p.docs.evict() {
			continue
		}
		if p.docs.held.Load() == 0 {
			return p.mem.Acquire(ctx, n)
		}
		wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := p.mem.Acquire(wctx, n)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// pdfBase is what PDFium holds before it draws anything: its own code's data, the fonts it
// loads (the sandbox's CJK font among them), a page's parse (measured for the digital report:
// TestPDFMemoryCharged).
const pdfBase = 48 << 20

// pdfCharge is what a document of size bytes is charged in the decode memory while its
// instance lives, limit the cap of the instance's memory, and images what the images of one
// page may take of it: PDFium's state, the file and its parse (4 times its size), the page's
// bitmap at the long edge or smaller (4 bytes a pixel), room for images of MaxPixels (pdfPixelBytes a
// pixel, MaxDecodeBytes at most), and outside the instance what the Go side holds of a page
// (the bitmap copied out, its grey copy, the JPEG). All of it is within DecodeMemory, the
// images' room first made smaller; an instance is never capped below pdfBase, without which
// PDFium does not start (a DecodeMemory smaller than that is all taken by one document).
func (p *Preparer) pdfCharge(size int) (charge int64, limit uint64, images int64) {
	e2 := min(int64(p.l.MaxEdge)*int64(p.l.MaxEdge), int64(p.l.MaxPixels), p.l.MaxDecodeBytes/8) // the render, as convertPDF sizes it
	goSide := 6 * e2
	fixed := pdfBase + 4*int64(size) + 4*e2
	images = min(pdfPixelBytes*int64(p.l.MaxPixels), p.l.MaxDecodeBytes)
	if over := fixed + images + goSide - p.l.DecodeMemory; over > 0 {
		images = max(0, images-over)
	}
	charge = min(fixed+images+goSide, p.l.DecodeMemory)
	return charge, uint64(max(charge-goSide, pdfBase)), images
}

// pdfOpen opens e's document under its charge and a slot, returning the slot's release.
func (p *Preparer) pdfOpen(ctx context.Context, e *pdfEntry) (func(), error) {
	charge, limit, _ := p.pdfCharge(len(e.data))
	// Counted before it takes memory: an upload that then finds none held and waits in line
	// is ahead of this document, which cannot take memory before it.
	p.docs.held.Add(1)
	if err := p.takeMem(ctx, charge); err != nil {
		p.docs.held.Add(-1)
		return nil, busy(ctx)
	}
	give := func() { p.docs.held.Add(-1); p.mem.Release(charge) }
	slot, err := p.slot(ctx)
	if err != nil {
		give()
		return nil, err
	}
	d, err := openPDF(e.ctx, p.rt, e.data, limit, cmp.Or(p.openWork, PDFOpenWork))
	if err != nil {
		slot()
		give()
		return nil, err
	}
	e.d, e.charge = d, give
	e.opened += d.opened
	if e.pages == 0 {
		e.pages, e.spent = d.pages, make([]time.Duration, d.pages)
		e.verdict, e.slow, e.done, e.left = make([]error, d.pages), make([]error, d.pages), make([]bool, d.pages), d.pages
	}
	return slot, nil
}

// slot waits for a decoding slot alone, for a document that holds its memory already.
func (p *Preparer) slot(ctx context.Context) (func(), error) {
	select {
	case p.sem <- struct{}{}:
		return func() { <-p.sem }, nil
	case <-ctx.Done():
		return nil, busy(ctx)
	}
}

// busy is acquire's refusal: the deadline passed waiting for a slot or memory.
func busy(ctx context.Context) error {
	return &problem.Error{Code: problem.Overloaded, Detail: "the server is busy preparing other images; retry shortly",
		RetryAfter: time.Second, Err: ctx.Err()}
}

// pdfPages counts a PDF's pages and keeps it open for them (see above).
func (p *Preparer) pdfPages(ctx context.Context, data []byte) (int, error) {
	if e := p.docs.get(data); e != nil {
		return e.pages, nil
	}
	if _, err := p.rt.pdf(); err != nil { // its compilation, once per Runtime, is no document's
		return 0, err
	}
	e := &pdfEntry{p: p, data: data, ctx: ctx, split: ctx, sum: p.docs.sum(data), turn: make(chan struct{}, 1)}
	e.turn <- struct{}{}
	slot, err := p.pdfOpen(ctx, e)
	if err != nil {
		return 0, err
	}
	slot()
	p.docs.mu.Lock()
	if p.docs.m == nil {
		p.docs.m = map[pdfKey]*pdfEntry{}
	}
	if old := p.docs.m[keyOf(data)]; old != nil && old.split.Err() == nil && old.sum == e.sum { // counted twice at once: keep the first
		p.docs.mu.Unlock()
		e.shut()
		return old.pages, nil
	}
	p.docs.m[keyOf(data)] = e
	p.docs.mu.Unlock()
	e.give()
	context.AfterFunc(ctx, func() { p.docs.drop(e) })
	return e.pages, nil
}

// preparePDF prepares page i of a PDF: in the document Split opened, or else in one of its own.
// Like any decode it answers when ctx ends, while what it started stops (the instance is killed).
func (p *Preparer) preparePDF(ctx context.Context, data []byte, i int) (Page, error) {
	if _, err := p.rt.pdf(); err != nil {
		return Page{}, err
	}
	e := p.docs.get(data)
	own := e == nil
	if own {
		e = &pdfEntry{p: p, data: data, ctx: ctx, turn: make(chan struct{}, 1)}
	}
	if err := e.take(ctx); err != nil {
		return Page{}, err
	}
	if e.stopped { // let go of while this page waited: draw it in a document of its own
		e.give()
		e, own = &pdfEntry{p: p, data: data, ctx: ctx, turn: make(chan struct{}, 1)}, true
		e.turn <- struct{}{}
	}
	return detached(ctx, func() (Page, error) {
		pg, err := p.pdfPage(ctx, e, i)
		if own {
			e.stopped = true
			e.shut()
		}
		last := !own && e.left == 0 && !e.stopped
		e.give()
		if last {
			p.docs.drop(e)
		}
		return pg, err
	})
}

// mark counts page i as prepared (or refused), once; the turn is held.
func (e *pdfEntry) mark(i int) {
	if !e.done[i] {
		e.done[i] = true
		e.left--
	}
}

// pdfPage is preparePDF with e's turn held: open the document if it is closed, walk the pages
// up to i not walked yet (so that the document's totals, and which page passes them, do not
// depend on the order its pages come in), and draw page i unless its walk refused it. The
// page's work is bounded by PDFPageTime and, each page's reading and page i's drawing apart,
// by PDFPageWork of this thread's CPU time (the instance is killed at either).
func (p *Preparer) pdfPage(ctx context.Context, e *pdfEntry, i int) (_ Page, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = problem.Errorf(problem.ImageUnreadable, "page %d of the PDF could not be read; export or download it again", i+1)
		}
	}()
	if e.stopped {
		return Page{}, abandoned(ctx)
	}
	if i < e.walked && e.verdict[i] != nil { // refused already (its instance may be gone): not opened again
		e.mark(i)
		return Page{}, e.verdict[i]
	}
	// The waits for memory and a slot are the request's, to its deadline (the load, not the
	// page: overloaded); the page's own time and work are counted once it holds a slot.
	var slot func()
	if e.d == nil {
		if e.ctx.Err() != nil { // Split's request is over; this page's own opens it
			e.ctx = ctx
		}
		if slot, err = p.pdfOpen(ctx, e); err != nil {
			return Page{}, err
		}
	} else if slot, err = p.slot(ctx); err != nil {
		return Page{}, err
	}
	defer slot()
	limit, parent := cmp.Or(p.pageTime, PDFPageTime), ctx
	pctx, cancel := context.WithTimeoutCause(ctx, limit, errPageTime)
	defer cancel()
	work := cmp.Or(p.pageWork, PDFPageWork)
	pctx, m := meterPDF(pctx, work, &p.rt.stats)
	defer m.stop()
	left := time.Duration(e.pages)*work - e.opened
	for _, d := range e.spent {
		left -= d
	}
	m.share(e.spent, left)
	defer func() { // what this call charged each page, for the next one's budgets
		m.off()
		for j, d := range m.charged() {
			if j < len(e.spent) {
				e.spent[j] += d
			}
		}
	}()
	drawing := false // past the walks: an overrun is page i's drawing
	defer func() {
		if err == nil || parent.Err() != nil {
			return
		}
		switch context.Cause(pctx) {
		case errPageTime:
			err = pageTimeRefusal(i, limit, m)
		case errPageWork:
			if over, ok := m.overrun(); ok && over == i && drawing {
				err = workRefusal(m, i, work, "draw")
			}
		}
	}()
	m.begin()
	d := e.d
	stop := context.AfterFunc(pctx, d.kill)
	defer func() {
		stop()
		if d.gone() { // killed: its memory is free once the call that was stopped has returned
			e.shut()
		}
	}()
	if i >= e.pages {
		return Page{}, problem.Errorf(problem.ImageUnreadable, "the PDF has no page %d", i+1)
	}
	_, _, images := p.pdfCharge(len(e.data))
	for e.walked <= i {
		j := e.walked
		m.charge(j)
		slow, err := p.pdfWalk(d, j, &e.tally, images)
		m.off()
		if over, ok := m.overrun(); ok && parent.Err() == nil {
			// Page j's reading (its parse, its walk) ran past its budget: refused as by its
			// walk, and with it the pages after it; the instance is gone.
			err, slow = workRefusal(m, over, work, "read"), nil
		} else if pctx.Err() != nil {
			return Page{}, abandoned(pctx)
		}
		if _, ok := err.(*problem.Error); err != nil && !ok {
			return Page{}, err
		}
		e.verdict[j], e.slow[j], e.walked = err, slow, j+1
		if err != nil { // the pages after it are not walked: the document is refused
			for k := j + 1; k < e.pages; k++ {
				e.verdict[k] = err
			}
			e.walked = e.pages
		}
	}
	e.mark(i)
	if err := e.verdict[i]; err != nil {
		return Page{}, err
	}
	d.meter, drawing = m, true
	m.charge(i)
	pg, err := p.convertPDF(pctx, d, e.data, i, images, e.slow[i])
	d.meter = nil
	if err != nil && pctx.Err() != nil && parent.Err() != nil {
		return Page{}, abandoned(parent)
	}
	return pg, err
}
