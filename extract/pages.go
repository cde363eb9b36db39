package extract

import (
	"context"
	"time"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// The steps of Extract, apart, for a report read as a job (package jobs): its pages prepared
// once, each page read on its own (perhaps in another process, after a restart), then the
// readings finished together exactly as Extract finishes them.

// Prepared is one page prepared for the model, held by no memory budget: what a job stores
// (encrypted) between its acceptance and the page's reading. Text is the page's text layer (nil
// for a photo or a scan). All of it is health data.
type Prepared struct {
	Data              []byte
	MIME              string
	BytesIn, BytesOut int
	Width, Height     int // the image sent, upright: meta.pages' size, the pixels of a model's boxes
	Text              []intake.Word
}

// PageRead is one page's reading, what Finish merges: its result or failure, its meta, and the
// model's name as it answered ("" if none).
type PageRead struct {
	Result *schema.Result
	Meta   schema.PageMeta
	Model  string
	Err    error
}

// Prepare refuses, splits and prepares the uploads as Extract does, with at most maxPages pages
// (0: Config.MaxPages), and returns the pages, copied out of the uploads' memory. It takes the
// uploads over and closes them, as Extract does.
func (s *Service) Prepare(ctx context.Context, uploads []*budget.Bytes, maxPages int) ([]Prepared, error) {
	defer func() {
		for _, up := range uploads {
			up.Close()
		}
	}()
	cp := *s // the same model, memory and builder; another page limit
	if maxPages > 0 {
		cp.cfg.MaxPages = maxPages
	}
	pages, _, err := cp.pages(ctx, uploads)
	if err != nil {
		return nil, err
	}
	out := make([]Prepared, len(pages))
	for i, pg := range pages {
		out[i] = Prepared{Data: append([]byte(nil), pg.img.Bytes()...), MIME: pg.mime, BytesIn: pg.in, BytesOut: pg.out, Width: pg.w, Height: pg.h, Text: pg.text}
		pg.img.Close()
	}
	return out, nil
}

// PageImagesFit refuses, with /v1/extract's payload_too_large, prepared pages whose images an
// answer may not carry (Config.MaxPageImageBytes): a job asked for include=pageImages is refused
// when it is submitted, as /v1/extract refuses before any model call.
func (s *Service) PageImagesFit(pages []Prepared) error {
	total := int64(0)
	for _, p := range pages {
		total += int64(len(p.Data))
	}
	return s.imagesFit(total)
}

// PageImages are prepared pages as Response.PageImages carries them, in page order.
func PageImages(pages []Prepared) []schema.SentImage {
	imgs := make([]schema.SentImage, len(pages))
	for i, p := range pages {
		imgs[i] = schema.SentImage{Page: i + 1, MediaType: p.MIME, Width: p.Width, Height: p.Height, Data: p.Data}
	}
	return imgs
}

// ReadPage reads one prepared page as Extract reads each of its pages (re-asks, retry memory,
// warnings), a panic recovered as internal_error.
func (s *Service) ReadPage(ctx context.Context, p Prepared) (r PageRead) {
	defer func() {
		if v := recover(); v != nil {
			r = PageRead{Err: recovered(v), Meta: r.Meta}
		}
	}()
	pg := page{img: budget.NewBytes(p.Data, nil, 0), mime: p.MIME, in: p.BytesIn, out: p.BytesOut, w: p.Width, h: p.Height, text: p.Text}
	res, meta, model, err := s.page(ctx, pg, func() {})
	return PageRead{Result: res, Meta: meta, Model: model, Err: err}
}

// Finish merges and checks a report's page readings, in page order, as Extract does once its
// pages are read; text is each page's text layer (Prepared.Text) and start when the work began,
// for meta's duration.
func (s *Service) Finish(ctx context.Context, reads []PageRead, text [][]intake.Word, who check.Context, start time.Time) (Response, error) {
	results := make([]draft.Page, len(reads))
	metas := make([]schema.PageMeta, len(reads))
	model := ""
	for i, r := range reads {
		results[i], metas[i] = draft.Page{Result: r.Result, Err: r.Err}, r.Meta
		if model == "" {
			model = r.Model
		}
	}
	if len(reads) == 0 {
		return Response{}, problem.Errorf(problem.InvalidRequest, "no image: send one image per page")
	}
	return s.finish(ctx, results, metas, model, text, who, start, len(reads))
}

// pages refuses what the uploads' bytes and headers refuse, splits the uploads and prepares
// every page, and returns the pages (each owned: see page) and how many the uploads held once
// split, that count also with an error when it is known.
func (s *Service) pages(ctx context.Context, uploads []*budget.Bytes) ([]page, int, error) {
	if len(uploads) == 0 {
		return nil, 0, problem.Errorf(problem.InvalidRequest, "no image: send one image per page")
	}
	if err := s.sniff(uploads); err != nil {
		n := len(uploads) // the pages, if no upload is a document, which only Split counts
		for _, up := range uploads {
			if document(up.Bytes()) {
				n = 0
			}
		}
		return nil, n, err
	}
	// The splits' context outlives them, to the end of the pages' preparing: a document a Split
	// opened stays open for its pages, drawn in the same instance (its end kills it); the first
	// upload refused ends it at once, stopping its siblings' work.
	work, stop := context.WithCancel(ctx)
	defer stop()
	counts, err := s.split(ctx, work, stop, uploads)
	n := 0
	for _, c := range counts {
		n += c
	}
	if err != nil {
		return nil, n, err
	}
	pages, err := s.prepare(ctx, uploads, counts)
	if err != nil {
		return nil, n, err
	}
	return pages, n, nil
}

// finish is the end of a report's reading, once every page has been read: a bug in any page
// fails it, the pages are merged, the draft checked (against the pages' text layers too), and
// the answer made.
func (s *Service) finish(ctx context.Context, results []draft.Page, metas []schema.PageMeta, model string, text [][]intake.Word, who check.Context, start time.Time, n int) (Response, error) {
	// A bug is the request's failure, not a page_failed warning on an otherwise good draft.
	for _, r := range results {
		if internal(r.Err) {
			return Response{Pages: n}, r.Err
		}
	}

	merged, err := draft.Merge(results)
	if err != nil {
		return Response{Pages: n}, err
	}
	meta := s.meta(model, metas, start)
	ws, err := check.RunContext(ctx, s.cfg.Builder.Lexicon(), &merged.Draft, who)
	if err != nil {
		return Response{Pages: n}, checkErr(err)
	}
	merged.Warnings = append(merged.Warnings, ws...)
	meta.Evidence = []schema.Evidence{}
	for _, t := range text {
		if t != nil {
			// After the checks: they may null a range, which is then not looked for.
			ws, ev, err := check.OnPageContext(ctx, &merged.Draft, text)
			if err != nil {
				return Response{Pages: n}, checkErr(err)
			}
			merged.Warnings = append(merged.Warnings, ws...)
			meta.Evidence = append(meta.Evidence, ev...)
			break
		}
	}
	meta.Evidence = append(meta.Evidence, modelEvidence(s.cfg.Boxes, &merged.Draft, metas)...)
	if merged.Warnings == nil {
		merged.Warnings = []schema.Warning{}
	}
	return Response{Draft: merged.Draft, Warnings: merged.Warnings, Meta: meta, Text: text, Pages: n}, nil
}
