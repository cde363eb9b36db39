// Package extract reads a report: it checks and normalises each page image, asks the model about
// each page concurrently, reads each reply into a draft, merges the pages, and runs the review
// checks (package check) on the merged draft. It owns the small
// interfaces it needs from the model client and the image intake, so tests use fakes.
package extract

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/prompt"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// Model answers one question about page images.
type Model interface {
	Complete(ctx context.Context, req vision.Request) (vision.Reply, error)
}

// Preparer checks and normalises one page image.
type Preparer interface {
	Prepare(ctx context.Context, data []byte) (intake.Page, error)
}

// Splitter is a Preparer that also reads uploads of several pages (a PDF, a multi-page TIFF):
// Split counts an upload's pages from its headers and PreparePage prepares page i of it.
// *intake.Preparer is one; a Preparer that is not reads every upload as one page.
type Splitter interface {
	Preparer
	Split(ctx context.Context, data []byte) (int, error)
	PreparePage(ctx context.Context, data []byte, i int) (intake.Page, error)
}

// Observer hears what happened, for metrics. Its methods must be cheap and must not keep health
// data; every field they get is a count, a duration or a stable name.
type Observer interface {
	Page(p schema.PageMeta)
}

// Config assembles a Service.
type Config struct {
	Model       Model
	Prep        Preparer
	Builder     *draft.Builder
	ModelName   string // reported in meta when the upstream names none
	OutputMode  string
	MaxAttempts int // model calls per page while the reply is unparseable; 0 means DefaultMaxAttempts
	// Concurrency bounds the pages of one request read at once; 0 means DefaultConcurrency.
	// Pages beyond it wait. The model calls start in page order (with 1, one after another),
	// so a document reaches the model as it reads; they may end in any order.
	Concurrency int
	// RetryMemory bounds the bytes of page images kept, across all requests, while their model
	// calls run, so that a call can be tried again (after a 429, a 5xx or a broken connection)
	// or re-asked (after an unusable reply). A page that does not fit is handed over to its model
	// call, which lets go of it as soon as it is written (vision.Image.Body), and a failure after
	// that which would have been tried again is answered as it is (503 model_rate_limited, 502
	// model_unavailable or model_output_unparseable; in a report of several pages, a page_failed
	// warning if another page was read), for the caller to retry with the image it still has.
	// So a burst of large uploads costs memory only while they are read and sent, not for the
	// seconds the model takes. 0 means DefaultRetryMemory, which holds the default 32 calls'
	// pages at 2 MB, a large page as sent (at most 2048 px on its long side; an upright JPEG
	// goes as it came).
	RetryMemory int64
	// MaxPages bounds the pages of one request, counted after the uploads are split (a PDF of
	// twelve pages is twelve); more is too_many_pages before any page is prepared or any model
	// call made. 0 means no bound here (the server bounds the uploads).
	MaxPages int
	// MaxPageImageBytes bounds the page images one response may carry when they are asked for
	// (Options.PageImages): their bytes as sent, before base64. More is payload_too_large
	// before any model call. 0 means DefaultMaxPageImageBytes.
	MaxPageImageBytes int64
	Observer          Observer // may be nil
	// Verify reads pages a second time, independently, and says where the reads differ
	// (OCR_VERIFY, OCR_VERIFY_MODEL); see verify.go. Its zero value is off.
	Verify Verify
	// Boxes asks the model for each row's box in its convention (OCR_MODEL_BOXES), mapped into
	// meta.evidence; "" is prompt.BoxesOff, and the prompt then says nothing of boxes.
	Boxes prompt.Boxes
}

// Options are what a caller asks of one Extract beyond the draft.
type Options struct {
	// PageImages keeps each page's image as sent to the model and returns it in
	// Response.PageImages, for a screen that shows the page beside its rows (a browser cannot
	// show a PDF page, a HEIC or a TIFF). Kept pages stay counted where they were (the upload
	// memory) until the caller closes the Response; they are lent to each model call, never
	// handed over.
	PageImages bool
}

// Service reads reports. It is safe for concurrent use.
type Service struct {
	cfg    Config
	retry  *budget.Budget // RetryMemory
	prompt string         // the first read's, with Boxes
}

// Defaults for Config's zero fields (OCR_MAX_ATTEMPTS, OCR_PAGE_CONCURRENCY, OCR_RETRY_MEMORY).
const (
	DefaultMaxAttempts = 2
	DefaultConcurrency = 4
	DefaultRetryMemory = 64 << 20
	// DefaultMaxPageImageBytes holds ten 2048-pixel pages as drawn (about 1 MB each) three
	// times over; the answer carrying them is a third more as base64.
	DefaultMaxPageImageBytes = 32 << 20
)

// TooManyPages is the error for a report of more than max pages, from the API and the CLI alike.
func TooManyPages(max int) error {
	return problem.Errorf(problem.TooManyPages, "more than %d images: send at most %d pages per request", max, max)
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.RetryMemory <= 0 {
		cfg.RetryMemory = DefaultRetryMemory
	}
	if cfg.Builder == nil {
		cfg.Builder = draft.New(lexicon.Default())
	}
	if cfg.MaxPageImageBytes <= 0 {
		cfg.MaxPageImageBytes = DefaultMaxPageImageBytes
	}
	if cfg.Boxes == "" {
		cfg.Boxes = prompt.BoxesOff
	}
	return &Service{cfg: cfg, retry: budget.New(cfg.RetryMemory), prompt: prompt.First(cfg.Boxes)}
}

// add is u plus v, each count saturating rather than overflowing: the counts come from the
// upstream (vision clamps each reply's, but sums of many must not wrap either).
func add(u, v schema.Usage) schema.Usage {
	return schema.Usage{PromptTokens: sum(u.PromptTokens, v.PromptTokens), CompletionTokens: sum(u.CompletionTokens, v.CompletionTokens)}
}

// sum is a+b for counts: a negative count is 0, and the sum stops at math.MaxInt.
func sum(a, b int) int {
	a, b = max(a, 0), max(b, 0)
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// Response is a report's draft with its warnings and meta.
type Response struct {
	Draft    schema.OcrDraft  `json:"draft"`
	Warnings []schema.Warning `json:"warnings" desc:"What the person confirming the draft should look at. With several pages, each path starts with its page: pages[1].indicators[3]."`
	Meta     schema.Meta      `json:"meta"`
	// Text is each page's text layer, in page order (nil for a page that has none, such as a
	// photo), in the pixel coordinates of the image the model was sent: what a check of the
	// model's values against the page reads. It is health data and never encoded.
	Text [][]intake.Word `json:"-"`
	// Pages is the number of pages the uploads held once split (what Config.MaxPages counts; a
	// PDF of three pages is three), 0 when one could not be split. Unlike the rest, it is set
	// when Extract fails too, for the caller's log line.
	Pages int `json:"-"`
	// PageImages are the pages as sent to the model, when Options.PageImages asked for them.
	// They are health data: encoded in the answer, never logged. Their bytes stay counted in
	// kept until Close.
	PageImages []schema.SentImage `json:"pageImages,omitempty" desc:"Only with include=pageImages: each page's image as sent to the model, in page order, for a screen to show beside its rows (meta.evidence boxes are in its pixels)."`
	kept       []*budget.Bytes
}

// Close gives back the memory of the page images the response carries, once they are written;
// it may be called more than once, and on a Response without them.
func (r *Response) Close() {
	for _, b := range r.kept {
		b.Close()
	}
	r.kept = nil
}

// Extract reads the pages of one report, in order. Every page is checked and prepared before
// any model call, so a bad file costs no model call. Errors are *problem.Error; a page whose
// model call fails while another page succeeds becomes a page_failed warning. A panic in any
// page's work is recovered there and fails the request with internal_error, the panic and its
// stack in the cause (Err) for the caller to log.
//
// Extract takes the uploads over, one budget.Bytes per upload (counted in the server's upload
// memory, or in nothing), and closes each of them, on every way out: the caller keeps no other
// reference to their bytes. Once an upload's pages are prepared, its share moves to its pages
// (each takes what its image needs, at most what the upload has left, see budget.Bytes.Carve)
// and the upload is closed, giving back the rest — a smaller page prepared from a larger upload
// at once; then each page gives its share back when its model request has carried it or the
// retry memory has taken it over (see Config.RetryMemory). When Extract returns, nothing of the
// uploads is counted any more.
//
// who is what the caller knows about the patient (the sex, to pick a printed range); it is used
// only by the checks, never sent to the model nor logged.
func (s *Service) Extract(ctx context.Context, uploads []*budget.Bytes, who check.Context) (Response, error) {
	return s.ExtractWith(ctx, uploads, who, Options{})
}

// ExtractWith is Extract with what opts asks for besides; the caller closes the Response (see
// Response.Close) once it is written.
func (s *Service) ExtractWith(ctx context.Context, uploads []*budget.Bytes, who check.Context, opts Options) (Response, error) {
	start := time.Now()
	// An upload is closed once its pages are prepared; any still open when Extract returns
	// (it was refused, or the request ended first) is closed here.
	defer func() {
		for _, up := range uploads {
			up.Close()
		}
	}()
	pages, n, err := s.pages(ctx, uploads)
	if err != nil {
		return Response{Pages: n}, err
	}
	// Every page is owned by one party at a time, and closing it gives its memory back: here
	// until its model call starts, then page, then (for a page handed over) the model call. Any
	// still open when the request ends — it failed, was cancelled or panicked before a page got
	// that far — is closed here, so that no request leaves memory counted behind it.
	defer func() {
		for _, pg := range pages {
			pg.img.Close()
		}
	}()
	if opts.PageImages {
		if err := s.keep(pages); err != nil {
			return Response{Pages: n}, err
		}
	}
	text := make([][]intake.Word, len(pages))
	for i, pg := range pages {
		text[i] = pg.text
	}

	results, metas, model := s.read(ctx, pages)
	if errors.Is(ctx.Err(), context.Canceled) {
		return Response{Pages: n}, problem.FromContext(ctx, "before the report was read")
	}
	res, err := s.finish(ctx, results, metas, model, text, who, start, n)
	if err == nil && opts.PageImages {
		res.PageImages, res.kept = give(pages)
	}
	return res, err
}

// keep marks every page to be kept for the answer, or refuses the request, before any model
// call, when their images would make it larger than MaxPageImageBytes.
func (s *Service) keep(pages []page) error {
	total := int64(0)
	for i := range pages {
		pages[i].keep = true
		total += int64(pages[i].img.Len())
	}
	return s.imagesFit(total)
}

// imagesFit refuses page images of total bytes that an answer may not carry.
func (s *Service) imagesFit(total int64) error {
	if total > s.cfg.MaxPageImageBytes {
		return problem.Errorf(problem.PayloadTooLarge,
			"the page images asked for (include=pageImages) come to %d KiB, more than the %d KiB an answer carries: send fewer pages, or ask without them",
			total>>10, s.cfg.MaxPageImageBytes>>10)
	}
	return nil
}

// give moves the kept pages' images to the answer: the images, and the Bytes that count them,
// which Extract's own closing of its pages then no longer reaches.
func give(pages []page) ([]schema.SentImage, []*budget.Bytes) {
	imgs := make([]schema.SentImage, 0, len(pages))
	kept := make([]*budget.Bytes, 0, len(pages))
	for i := range pages {
		pg := &pages[i]
		if data := pg.img.Bytes(); data != nil {
			imgs = append(imgs, schema.SentImage{Page: i + 1, MediaType: pg.mime, Width: pg.w, Height: pg.h, Data: data})
			kept = append(kept, pg.img)
			pg.img = nil
		}
	}
	return imgs, kept
}

// read asks the model about every page, concurrently within Concurrency, and returns each
// page's draft (or failure) and meta in page order, and the model's name as it answered.
func (s *Service) read(ctx context.Context, pages []page) ([]draft.Page, []schema.PageMeta, string) {
	results := make([]draft.Page, len(pages))
	metas := make([]schema.PageMeta, len(pages))
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	var model string
	var once sync.Once
	prog := startProgress(ctx, len(pages))
	// Pages are handed their slots here, one by one, and the next waits until this one's model
	// call has started (or the page has ended without one): goroutines that raced for the slots
	// would start their calls in whatever order the scheduler ran them (the last page first,
	// typically), and a document's pages must reach the model in order.
dispatch:
	for i := range pages {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for j := i; j < len(pages); j++ {
				results[j] = draft.Page{Err: problem.FromContext(ctx, "before this page was read")}
				pages[j].img.Close() // no call will need it
			}
			break dispatch
		}
		started := make(chan struct{})
		start := sync.OnceFunc(func() { close(started) })
		wg.Go(func() {
			defer start()
			defer func() { <-sem }()
			defer func() {
				if v := recover(); v != nil { // the Observer's, say: page recovers its own
					results[i] = draft.Page{Err: recovered(v)}
				}
			}()
			res, meta, name, err := s.page(ctx, pages[i], start)
			results[i], metas[i] = draft.Page{Result: res, Err: err}, meta
			prog.page()
			if name != "" {
				once.Do(func() { model = name })
			}
		})
		<-started
	}
	wg.Wait()
	return results, metas, model
}

// meta is the report's meta: the pages' own, and their attempts, tokens and finish reason
// summed (a cut page's "length" wins, as it says items may be missing).
func (s *Service) meta(model string, metas []schema.PageMeta, start time.Time) schema.Meta {
	if model == "" {
		model = s.cfg.ModelName
	}
	meta := schema.Meta{
		Model:         model,
		OutputMode:    s.cfg.OutputMode,
		PromptVersion: prompt.FirstVersion(s.cfg.Boxes),
		Pages:         metas,
		DurationMs:    time.Since(start).Milliseconds(),
	}
	for _, m := range metas {
		meta.Attempts += m.Attempts
		meta.Usage = add(meta.Usage, m.Usage)
		if meta.FinishReason == nil || m.FinishReason != nil && *m.FinishReason == "length" {
			meta.FinishReason = m.FinishReason
		}
	}
	meta.Verify = s.verifyTotal(metas)
	return meta
}

// split counts each upload's pages (1 each unless the Preparer is a Splitter) and refuses a
// request of more than MaxPages of them, before any page is prepared; the counts come with that
// refusal too, and are nil when an upload cannot be split. The Splits run in work, which cancel
// ends when one is refused; the caller ends it once the pages are prepared.
func (s *Service) split(ctx, work context.Context, cancel func(), uploads []*budget.Bytes) ([]int, error) {
	counts := make([]int, len(uploads))
	sp, ok := s.cfg.Prep.(Splitter)
	if !ok {
		for i := range counts {
			counts[i] = 1
		}
	} else {
		// The first upload refused stops its siblings' work (cancel ends work): its answer
		// does not wait for them (see phase).
		errs := make([]error, len(uploads))
		var wg sync.WaitGroup
		for i, up := range uploads {
			wg.Go(func() {
				defer func() {
					if v := recover(); v != nil {
						errs[i] = recovered(v)
					}
					if errs[i] != nil {
						cancel()
					}
				}()
				counts[i], errs[i] = sp.Split(work, up.Bytes())
			})
		}
		wg.Wait()
		if i, err := phase(ctx, errs); err != nil {
			if problem.CodeOf(err) == problem.PagesTooSlow {
				return nil, err // about all the uploads
			}
			first, exact := 1, true
			for j := range i {
				first += counts[j]
				exact = exact && errs[j] == nil
			}
			return nil, numbered(err, first, exact, i, len(uploads) > 1)
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if s.cfg.MaxPages > 0 && total > s.cfg.MaxPages {
		if total == len(uploads) {
			return counts, TooManyPages(s.cfg.MaxPages)
		}
		return counts, problem.Errorf(problem.TooManyPages,
			"the files hold %d pages; send at most %d pages per request (split the document)", total, s.cfg.MaxPages)
	}
	return counts, nil
}

// onPage puts the page number in front of a problem's detail, for a report of several pages.
func onPage(err error, page int, several bool) error {
	if pe, ok := err.(*problem.Error); ok && several {
		cp := *pe
		cp.Detail = "page " + strconv.Itoa(page) + ": " + pe.Detail
		return &cp
	}
	return err
}

// page is a prepared page on its way to the model: its image, owned (see budget.Bytes), and
// what else of intake.Page the model call, the meta and the checks read.
type page struct {
	img     *budget.Bytes
	mime    string
	in, out int // intake.Page's BytesIn and BytesOut
	w, h    int // intake.Page's Width and Height: the image sent, upright
	text    []intake.Word
	keep    bool // for the answer (Options.PageImages): lent to every call, closed by its Response
}

// prepare checks and normalises every page of every upload concurrently (the Preparer bounds
// the CPU work), in order, and returns the first page's error, in page order, if any fails.
//
// Once every page is prepared, each upload's pages take their shares of its memory, in order
// (budget.Bytes.Carve), and the upload is closed, giving back what is left. Pages rendered from
// a small document may need more than it held: the excess is not accounted here (the retry
// memory and the page limit bound it).
func (s *Service) prepare(ctx context.Context, uploads []*budget.Bytes, counts []int) ([]page, error) {
	total := 0
	for _, n := range counts {
		total += n
	}
	pages := make([]intake.Page, total)
	errs := make([]error, total)
	sp, _ := s.cfg.Prep.(Splitter)
	// The first page refused stops the others' work: its answer does not wait for them.
	work, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	at := 0
	for u, up := range uploads {
		img := up.Bytes() // for the page work alone, which ends before up is closed
		for j := range counts[u] {
			i := at + j
			wg.Go(func() {
				defer func() {
					if v := recover(); v != nil {
						errs[i] = recovered(v)
					}
					if errs[i] != nil {
						cancel()
					}
				}()
				if sp != nil {
					pages[i], errs[i] = sp.PreparePage(work, img, j)
				} else {
					pages[i], errs[i] = s.cfg.Prep.Prepare(work, img)
				}
			})
		}
		at += counts[u]
	}
	wg.Wait()
	if i, err := phase(ctx, errs); err != nil {
		if problem.CodeOf(err) == problem.PagesTooSlow {
			return nil, err // about all the pages
		}
		return nil, onPage(err, i+1, total > 1)
	}
	out := make([]page, total)
	at = 0
	for u, up := range uploads {
		for j := range counts[u] {
			pg := pages[at+j]
			out[at+j] = page{img: up.Carve(pg.Data, int64(len(pg.Data))), mime: pg.MIME, in: pg.BytesIn, out: pg.BytesOut, w: pg.Width, h: pg.Height, text: pg.Text}
		}
		up.Close() // what no page took goes back; the upload is its pages' now
		at += counts[u]
	}
	return out, nil
}

// Refuser is a Preparer that tells an upload it refuses from its bytes alone, with no work
// (an empty file, a ZIP): *intake.Preparer is one.
type Refuser interface {
	Refuse(data []byte) error
}

// sniff refuses, before any upload is split or any page prepared, an upload whose bytes alone
// already say it is refused, when the Preparer is a Refuser: its answer need not wait for the
// heavy work on its siblings (two PDFs drawn, say).
func (s *Service) sniff(uploads []*budget.Bytes) error {
	r, ok := s.cfg.Prep.(Refuser)
	if !ok {
		return nil
	}
	page, exact := 1, true
	for i, up := range uploads {
		img := up.Bytes()
		if err := r.Refuse(img); err != nil {
			return numbered(err, page, exact, i, len(uploads) > 1)
		}
		if document(img) {
			exact = false // its pages are not counted yet, so neither are those after it
		}
		page++
	}
	return nil
}

// document reports whether an upload may be of several pages (a PDF, a TIFF), which Split
// alone counts.
func document(img []byte) bool {
	kind, _ := intake.Sniff(img)
	return kind == "pdf" || kind == "tiff"
}

// numbered is onPage for the upload i whose first page is page, when the pages before it are
// known (exact); when they are not (a document before it not yet split), it is named as the
// request's file i+1.
func numbered(err error, page int, exact bool, i int, several bool) error {
	if exact {
		return onPage(err, page, several)
	}
	if pe, ok := err.(*problem.Error); ok {
		cp := *pe
		cp.Detail = "file " + strconv.Itoa(i+1) + ": " + pe.Detail
		return &cp
	}
	return err
}

// phase is the error a phase of a request's page work (splitting the uploads, preparing the
// pages) ends in, and its index, given each one's error: the first in order, leaving out the
// cancellations that the first refusal caused (ctx, the request's, still alive), and told as
// this request's own work when its deadline passed while its pages waited on each other (see
// ownWork).
func phase(ctx context.Context, errs []error) (int, error) {
	for i, err := range errs {
		if err == nil || ctx.Err() == nil && errors.Is(err, context.Canceled) {
			continue
		}
		return i, ownWork(ctx, err, errs)
	}
	return -1, nil
}

// ownWork tells a request whose deadline passed while its own pages were being prepared from
// one the service's load kept waiting. A page that waited for a decoding slot until the
// deadline is 503 overloaded from intake; that is the service's load only if none of this
// request's pages had a slot either. When some had (they were prepared, or were still being
// prepared), the request starved itself — ten slow PDF pages on two slots — and another
// replica would starve it the same way: pages_too_slow, 413, says so, and not "scale out". So
// does a deadline passing while a page of its own was being prepared.
func ownWork(ctx context.Context, err error, errs []error) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	waited := func(err error) bool {
		return problem.CodeOf(err) == problem.Overloaded && errors.Is(err, context.DeadlineExceeded)
	}
	running := func(err error) bool {
		var pe *problem.Error
		return !errors.As(err, &pe) && errors.Is(err, context.DeadlineExceeded)
	}
	waiting, busy, done := 0, 0, 0
	for _, e := range errs {
		switch {
		case waited(e):
			waiting++
		case running(e):
			busy++
		default:
			done++
		}
	}
	if !running(err) && !(waited(err) && busy+done > 0) {
		return err
	}
	detail := fmt.Sprintf("the request deadline passed while its own %s were being prepared (%d done, %d under way, %d waiting for a decoding slot held by its other pages)",
		plural(len(errs), "page", "pages"), done, busy, waiting)
	if waiting == 0 {
		detail = fmt.Sprintf("the request deadline passed while its %s being prepared", plural(busy, "page was", "pages were"))
	}
	return &problem.Error{Code: problem.PagesTooSlow, Err: err,
		Detail: detail + ": send fewer pages per request, or a scan or photo in place of a PDF page that is slow to draw"}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// page asks the model about one page, re-asking while the reply holds no usable draft (but never
// after a reply cut at the token limit: the same budget would cut it again, nor for a page sent
// once, nor after a refusal or a finish reason other than stop and length, which a re-ask would
// meet again). Such a finish reason is an output_interrupted warning on a usable reply. started
// is called just before the first model call, for the next page to start its own.
//
// page owns pg.img. When the retry memory has room, the page's accounting moves there (its share
// of the upload memory goes back at once) and the image is lent to each call, kept until the
// last has returned: any try or re-ask can resend it. When it has none, the image is handed over
// to the one call made, which lets go of it after its last byte is written; nothing is then
// retried once it has gone. Either way the image's memory is given back as soon as no call can
// need it again.
func (s *Service) page(ctx context.Context, pg page, started func()) (res *schema.Result, meta schema.PageMeta, model string, err error) {
	start := time.Now()
	meta = schema.PageMeta{BytesIn: pg.in, BytesSent: pg.out, Stage: parse.Failed, Width: pg.w, Height: pg.h}
	img := pg.img
	defer func() {
		if !pg.keep { // a kept page is the answer's (give), or Extract's to close on a failure
			img.Close() // lent, or a call that broke its word: nothing else would give it back
		}
	}()
	defer func() {
		if v := recover(); v != nil { // the model's or the parser's: this page's goroutine is the last stop
			res, err, meta.Error = nil, recovered(v), problem.Internal
		}
		meta.Duration = time.Since(start)
		if s.cfg.Observer != nil {
			s.cfg.Observer.Page(meta)
		}
	}()
	if pg.keep {
		// Kept anyway, in the upload memory: every call may resend it, at no cost in the retry
		// memory.
	} else if kept, ok := s.retry.TryTake(int64(img.Len())); ok {
		img.Move(kept)
	} else {
		meta.SentOnce = true
	}
	req := vision.Request{Prompt: s.prompt}
	// The second read (nil when verification is off), stopped before the meta goes to the
	// Observer (the deferred func above).
	second := s.verifier(ctx, pg, img, meta.SentOnce)
	defer second.stop(&meta)
	started()
	for {
		im := vision.Image{MIME: pg.mime, Sent: second.sent()}
		if meta.SentOnce {
			im.Body = second.body(img) // handed over: img is the call's now (the two calls', verifying all)
		} else {
			im.Data = img.Bytes() // lent: img stays page's, for the next call
		}
		req.Images = []vision.Image{im}
		reply, err := s.cfg.Model.Complete(ctx, req)
		meta.Attempts++
		if err != nil {
			meta.Error = problem.CodeOf(err)
			return nil, meta, model, err
		}
		model = reply.Model
		fr := reply.FinishReason
		meta.FinishReason = &fr
		meta.Usage = add(meta.Usage, schema.Usage{PromptTokens: reply.PromptTokens, CompletionTokens: reply.CompletionTokens})
		if reply.Refusal != "" {
			// The model declined (OpenAI's refusal field); asking again in the same
			// conversation would only hear it again.
			meta.Error = problem.ModelOutputUnparseable
			return nil, meta, model, &problem.Error{Code: problem.ModelOutputUnparseable, Detail: "the model refused to read the page", Excerpt: parse.Excerpt(reply.Refusal)}
		}
		cut := fr == "length"
		odd := !cut && fr != "stop" // content_filter, tool_calls …: the answer did not end as answers do
		out, err := s.cfg.Builder.FromReplyContext(ctx, reply.Text, cut)
		meta.Stage, meta.Found, meta.Truncated, meta.TooLong = out.Stage, out.Found, out.Truncated, out.TooLong
		if err != nil && ctx.Err() != nil {
			// The request ended while the reply was read (the read checks between pieces).
			err = problem.FromContext(ctx, "before this page was read")
			meta.Error = problem.CodeOf(err)
			return nil, meta, model, err
		}
		if err == nil {
			if odd {
				out.Warnings = append([]schema.Warning{msg.New(schema.OutputInterrupted, "finish", nil, nil,
					map[string]string{"finishReason": fr})}, out.Warnings...)
			}
			meta.Indicators = len(out.Draft.Indicators)
			for _, w := range out.Warnings {
				if w.Code == schema.IndicatorDropped {
					meta.Dropped++
				}
			}
			if err := second.check(ctx, &out.Result, &meta); err != nil {
				meta.Error = problem.Internal
				return nil, meta, model, err
			}
			return &out.Result, meta, model, nil
		}
		if odd && problem.CodeOf(err) == problem.ModelOutputUnparseable {
			// Nothing usable came, and the reason says why: a filter would stop a re-ask too.
			meta.Error = problem.ModelOutputUnparseable
			return nil, meta, model, problem.Errorf(problem.ModelOutputUnparseable,
				"the model stopped with finish reason %s before writing anything usable", fr)
		}
		if cut || meta.SentOnce || meta.Attempts >= s.cfg.MaxAttempts || problem.CodeOf(err) != problem.ModelOutputUnparseable {
			meta.Error = problem.CodeOf(err)
			return nil, meta, model, err
		}
		req.Previous, req.Retry = reply.Text, prompt.Retry()
	}
}

// panicked is a panic recovered in request work, kept with its stack for the log.
type panicked struct {
	value any
	stack []byte
}

func (p *panicked) Error() string { return fmt.Sprintf("extract: panic: %v\n%s", p.value, p.stack) }

// recovered is the error for a recovered panic: internal_error for the caller, whose request id
// finds the panic and its stack in the server's log of the cause.
func recovered(v any) error {
	return &problem.Error{Code: problem.Internal, Detail: "internal error", Err: &panicked{v, debug.Stack()}}
}

// internal reports whether err is a bug (a panic, or a *problem.Error that says internal_error),
// as opposed to a page's own failure.
func internal(err error) bool {
	var pe *problem.Error
	return errors.As(err, &pe) && pe.Code == problem.Internal
}

// checkErr is the error for checks stopped by the request's end: the draft, checked in part,
// is not answered (it would pass for checked), and a deadline is model_timeout as for a page.
func checkErr(err error) error {
	return problem.Ended(err, "while the draft was checked")
}
