// Package extract reads a report: it checks and normalises each page image, asks the model about
// each page concurrently, reads each reply into a draft, and merges the pages. It owns the small
// interfaces it needs from the model client and the image intake, so tests use fakes.
package extract

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/intake"
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

// Observer hears what happened, for metrics. Its methods must be cheap and must not keep health
// data; every field they get is a count, a duration or a stable name.
type Observer interface {
	Page(p PageMeta)
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
	// Pages beyond it wait.
	Concurrency int
	Observer    Observer // may be nil
}

// Service reads reports. It is safe for concurrent use.
type Service struct {
	cfg Config
}

// Defaults for Config's zero fields (OCR_MAX_ATTEMPTS, OCR_PAGE_CONCURRENCY).
const (
	DefaultMaxAttempts = 2
	DefaultConcurrency = 4
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
	if cfg.Builder == nil {
		cfg.Builder = draft.New()
	}
	return &Service{cfg: cfg}
}

// Usage is the model's token count.
type Usage struct {
	PromptTokens     int `json:"promptTokens" desc:"Tokens the model counted in the prompt, images included."`
	CompletionTokens int `json:"completionTokens" desc:"Tokens the model wrote."`
}

// PageMeta is what happened to one page. It holds no health data.
type PageMeta struct {
	Attempts     int           `json:"attempts" desc:"Model calls for this page, re-asks after an unusable reply included."`
	FinishReason *string       `json:"finishReason" desc:"The model's finish reason for the last call; length means the reply was cut at the token limit; null when no reply came."`
	Usage        Usage         `json:"usage" desc:"Tokens for this page."`
	BytesIn      int           `json:"bytesIn" desc:"Size of the uploaded image."`
	BytesSent    int           `json:"bytesSent" desc:"Size of the image sent to the model, after orientation and downscaling."`
	Stage        parse.Stage   `json:"stage" desc:"How the reply was read: strict JSON, from a fence, extracted from chatter, repaired, or failed."`
	Indicators   int           `json:"indicators" desc:"Indicators read from this page."`
	Dropped      int           `json:"dropped" desc:"Items of the reply left out (see the indicator_dropped warnings)."`
	Truncated    bool          `json:"truncated" desc:"The reply was cut off."`
	Error        problem.Code  `json:"error,omitempty" desc:"Why this page failed, when it did."`
	Duration     time.Duration `json:"-"`
}

// Meta describes how a draft was made.
type Meta struct {
	Model         string `json:"model" desc:"The model that answered, as the endpoint names it."`
	OutputMode    string `json:"outputMode" desc:"How the reply was held to JSON: prompt, json_object or json_schema."`
	PromptVersion string `json:"promptVersion" desc:"A hash of the prompt, to trace a draft to the instructions that produced it."`
	// Attempts is the model calls made for all pages, re-asks included (transport retries of
	// one call are not counted).
	Attempts int `json:"attempts" desc:"Model calls for all pages."`
	// FinishReason is "length" if any page was cut at the token limit, else the first page's.
	FinishReason *string    `json:"finishReason" desc:"length if any page was cut at the token limit, else the first page's finish reason."`
	Usage        Usage      `json:"usage" desc:"Tokens for all pages."`
	DurationMs   int64      `json:"durationMs" desc:"Time spent on the request, model calls included."`
	Pages        []PageMeta `json:"pages" desc:"Per page, in order."`
}

// Response is a report's draft with its warnings and meta.
type Response struct {
	Draft    schema.OcrDraft  `json:"draft"`
	Warnings []schema.Warning `json:"warnings" desc:"What the person confirming the draft should look at. With several pages, each path starts with its page: pages[1].indicators[3]."`
	Meta     Meta             `json:"meta"`
}

// Extract reads the pages of one report, in order. Every page is checked and prepared before
// any model call, so a bad file costs no model call. Errors are *problem.Error; a page whose
// model call fails while another page succeeds becomes a page_failed warning.
func (s *Service) Extract(ctx context.Context, images [][]byte) (Response, error) {
	start := time.Now()
	if len(images) == 0 {
		return Response{}, problem.Errorf(problem.InvalidRequest, "no image: send one image per page")
	}
	pages, err := s.prepare(ctx, images)
	if err != nil {
		return Response{}, err
	}

	results := make([]draft.Page, len(pages))
	metas := make([]PageMeta, len(pages))
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	var model string
	var once sync.Once
	for i := range pages {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = draft.Page{Err: ctxErr(ctx)}
				return
			}
			defer func() { <-sem }()
			res, meta, name, err := s.page(ctx, pages[i])
			pages[i].Data = nil // the page's bytes are no longer needed
			results[i], metas[i] = draft.Page{Result: res, Err: err}, meta
			if name != "" {
				once.Do(func() { model = name })
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
		return Response{}, ctx.Err()
	}

	merged, err := draft.Merge(results)
	if err != nil {
		return Response{}, err
	}
	if model == "" {
		model = s.cfg.ModelName
	}
	meta := Meta{
		Model:         model,
		OutputMode:    s.cfg.OutputMode,
		PromptVersion: prompt.Version(),
		Pages:         metas,
		DurationMs:    time.Since(start).Milliseconds(),
	}
	for _, m := range metas {
		meta.Attempts += m.Attempts
		meta.Usage.PromptTokens += m.Usage.PromptTokens
		meta.Usage.CompletionTokens += m.Usage.CompletionTokens
		if meta.FinishReason == nil || m.FinishReason != nil && *m.FinishReason == "length" {
			meta.FinishReason = m.FinishReason
		}
	}
	if merged.Warnings == nil {
		merged.Warnings = []schema.Warning{}
	}
	return Response{Draft: merged.Draft, Warnings: merged.Warnings, Meta: meta}, nil
}

// prepare checks and normalises every page concurrently (the Preparer bounds the CPU work) and
// returns the first page's error, in page order, if any fails.
func (s *Service) prepare(ctx context.Context, images [][]byte) ([]intake.Page, error) {
	pages := make([]intake.Page, len(images))
	errs := make([]error, len(images))
	var wg sync.WaitGroup
	for i, img := range images {
		wg.Go(func() {
			pages[i], errs[i] = s.cfg.Prep.Prepare(ctx, img)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			if len(images) > 1 {
				if pe, ok := err.(*problem.Error); ok {
					cp := *pe
					cp.Detail = "page " + strconv.Itoa(i+1) + ": " + pe.Detail
					return nil, &cp
				}
			}
			return nil, err
		}
	}
	return pages, nil
}

// page asks the model about one page, re-asking while the reply holds no usable draft (but never
// after a reply cut at the token limit: the same budget would cut it again).
func (s *Service) page(ctx context.Context, pg intake.Page) (*schema.Result, PageMeta, string, error) {
	start := time.Now()
	meta := PageMeta{BytesIn: pg.BytesIn, BytesSent: pg.BytesOut, Stage: parse.Failed}
	defer func() {
		meta.Duration = time.Since(start)
		if s.cfg.Observer != nil {
			s.cfg.Observer.Page(meta)
		}
	}()
	req := vision.Request{Prompt: prompt.Render(), Images: []vision.Image{{MIME: pg.MIME, Data: pg.Data}}}
	var model string
	for {
		reply, err := s.cfg.Model.Complete(ctx, req)
		meta.Attempts++
		if err != nil {
			meta.Error = problem.CodeOf(err)
			return nil, meta, model, err
		}
		model = reply.Model
		fr := reply.FinishReason
		meta.FinishReason = &fr
		meta.Usage.PromptTokens += reply.PromptTokens
		meta.Usage.CompletionTokens += reply.CompletionTokens
		cut := reply.FinishReason == "length"
		out, err := s.cfg.Builder.FromReply(reply.Text, cut)
		meta.Stage, meta.Truncated = out.Stage, out.Truncated
		if err == nil {
			meta.Indicators = len(out.Draft.Indicators)
			for _, w := range out.Warnings {
				if w.Code == schema.IndicatorDropped {
					meta.Dropped++
				}
			}
			return &out.Result, meta, model, nil
		}
		if cut || meta.Attempts >= s.cfg.MaxAttempts || problem.CodeOf(err) != problem.ModelOutputUnparseable {
			meta.Error = problem.CodeOf(err)
			return nil, meta, model, err
		}
		req.Previous, req.Retry = reply.Text, prompt.Retry()
	}
}

func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &problem.Error{Code: problem.ModelTimeout, Detail: "the request deadline passed before this page's turn", Err: ctx.Err()}
	}
	return ctx.Err()
}
