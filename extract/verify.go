package extract

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/prompt"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// The second, independent read of a page (OCR_VERIFY), inside a page's work (Service.page), so
// that whatever reads a page reads it twice. Its rows are read by the same reader as the first's
// and judged against them by check.Agree; the draft is never changed by it, and a second read
// that fails leaves the page as the first read gave it, with page_not_verified.

// VerifyMode says which pages are read a second time.
type VerifyMode string

// The modes (OCR_VERIFY).
const (
	VerifyOff = VerifyMode("off")
	// VerifyFlagged reads again the pages where the reader or the checks raised a warning about
	// a row (see flagged), after the first read.
	VerifyFlagged = VerifyMode("flagged")
	// VerifyAll reads every page again, the second call started as soon as the first has sent
	// the image, so that a page takes as long as the slower read, not both.
	VerifyAll = VerifyMode("all")
)

// VerifyModes is the one list of modes, for the settings table.
var VerifyModes = []VerifyMode{VerifyOff, VerifyFlagged, VerifyAll}

// Verify configures the second read.
type Verify struct {
	Mode VerifyMode // "" is VerifyOff
	// Model asks the second question; nil asks Config.Model. Another model disagrees more
	// usefully than one model twice.
	Model     Model
	ModelName string // reported in meta when the upstream names none
}

// on reports whether pages are read twice at all.
func (v Verify) on() bool { return v.Mode == VerifyFlagged || v.Mode == VerifyAll }

// reserve is the part of a request's remaining time a second read leaves for what comes after
// it (merging, the checks, the answer), so that its deadline fails the second read, never the
// request.
func reserve(left time.Duration) time.Duration { return min(left/10, 2*time.Second) }

// second is one page's second read: under way (VerifyAll) or to be made (VerifyFlagged).
type second struct {
	s    *Service
	mime string
	img  *budget.Bytes
	text []intake.Word // the page's text layer, for flagged
	// share, when the page is handed over to its model calls (no retry memory), is the image
	// shared by the two calls: each holds one reference, and the last to let go closes it.
	share *sharedImage

	ctx      context.Context
	cancel   context.CancelFunc
	once     sync.Once   // the call starts at most once, and never after stop
	launched atomic.Bool // it did
	done     chan struct{}
	reply    vision.Reply
	err      error
}

// verifier is the page's second read: nil when verification is off, so that the page's work
// with it off is what it was. With VerifyAll the call starts when the first call has sent the
// image (Image.Sent) or, at the latest, when the first read is done; with VerifyFlagged it is
// made after the first read, by check, if the page is flagged.
func (s *Service) verifier(ctx context.Context, pg page, img *budget.Bytes, sentOnce bool) *second {
	if !s.cfg.Verify.on() {
		return nil
	}
	v := &second{s: s, mime: pg.mime, img: img, text: pg.text, done: make(chan struct{})}
	if dl, ok := ctx.Deadline(); ok {
		v.ctx, v.cancel = context.WithDeadline(ctx, dl.Add(-reserve(time.Until(dl))))
	} else {
		v.ctx, v.cancel = context.WithCancel(ctx)
	}
	if sentOnce && s.cfg.Verify.Mode == VerifyAll {
		v.share = &sharedImage{img: img}
		v.share.refs.Store(2)
	}
	return v
}

// launch starts the call, once.
func (v *second) launch() {
	v.once.Do(func() {
		v.launched.Store(true)
		go v.call()
	})
}

// body is what the first call is handed when the page is not kept for retries: the shared image
// when the second read needs it too, else the image itself.
func (v *second) body(img *budget.Bytes) vision.Body {
	if v == nil || v.share == nil {
		return img
	}
	return &imageRef{s: v.share}
}

// sent is the first call's Image.Sent: with VerifyAll, the second call starts once the first
// has sent the image.
func (v *second) sent() func() {
	if v == nil || v.s.cfg.Verify.Mode != VerifyAll {
		return nil
	}
	return v.launch
}

// call makes the second read's one model call.
func (v *second) call() {
	defer close(v.done)
	defer func() {
		if r := recover(); r != nil {
			v.err = recovered(r)
		}
	}()
	im := vision.Image{MIME: v.mime, Data: v.img.Bytes()}
	if v.share != nil {
		im = vision.Image{MIME: v.mime, Body: &imageRef{s: v.share}}
	}
	m := v.s.cfg.Verify.Model
	if m == nil {
		m = v.s.cfg.Model
	}
	v.reply, v.err = m.Complete(v.ctx, vision.Request{Prompt: prompt.Second(), Images: []vision.Image{im}})
}

// stop ends the second read when the page's work ends: a call under way is cancelled (the first
// read failed) or has ended (check waited for it), and is waited for, so that nothing uses the
// image after the page lets go of it; a call never started gives its reference back. A call
// made for a page whose first read failed is still counted in its meta: its tokens were spent.
func (v *second) stop(meta *schema.PageMeta) {
	if v == nil {
		return
	}
	v.cancel()
	v.once.Do(func() {}) // no call starts from now on
	if !v.launched.Load() {
		if v.share != nil {
			v.share.release()
		}
		return
	}
	<-v.done
	if meta.Verify == nil {
		meta.Verify = &schema.PageVerify{Status: schema.VerifyFailed, Attempts: 1, Model: v.reply.Model,
			Usage: schema.Usage{PromptTokens: v.reply.PromptTokens, CompletionTokens: v.reply.CompletionTokens}}
		if v.err != nil && !errors.Is(v.err, context.Canceled) {
			meta.Verify.Error = problem.CodeOf(v.err)
		}
	}
}

// check is the page's second read judged against its first read, res: the warnings it raises are
// added to res (paths in the page's own draft, as the reader's), and what it cost to meta. It
// never fails the page for the second read's own failure, which is page_not_verified; a bug (a
// panic in the call, recovered) is returned, for the request to fail as for any bug.
func (v *second) check(ctx context.Context, res *schema.Result, meta *schema.PageMeta) error {
	if v == nil {
		return nil
	}
	pv := &schema.PageVerify{Status: schema.VerifyFailed}
	meta.Verify = pv
	page := 1 // Merge gives the page its number
	notVerified := func(reason string, params map[string]string) {
		res.Warnings = append(res.Warnings, msg.New(schema.PageNotVerified, reason, nil, &page, params))
	}
	if v.s.cfg.Verify.Mode == VerifyFlagged {
		if !v.s.flagged(ctx, res, v.text) {
			pv.Status = schema.VerifySkipped
			return nil
		}
		if meta.SentOnce {
			pv.Error = problem.Overloaded
			notVerified("not_kept", nil)
			return nil
		}
	}
	v.launch()
	<-v.done
	pv.Attempts = 1
	pv.Model = v.reply.Model
	pv.Usage = schema.Usage{PromptTokens: v.reply.PromptTokens, CompletionTokens: v.reply.CompletionTokens}
	if pv.Model == "" {
		pv.Model = v.s.cfg.Verify.ModelName
	}
	if internal(v.err) {
		pv.Error = problem.Internal
		return v.err
	}
	if v.err != nil {
		pv.Error = problem.CodeOf(v.err)
		if errors.Is(v.err, context.DeadlineExceeded) {
			pv.Error = problem.ModelTimeout
		}
		notVerified("failed", map[string]string{"code": string(pv.Error)})
		return nil
	}
	cut := v.reply.FinishReason == "length"
	out, err := v.s.cfg.Builder.FromReplyContext(v.ctx, v.reply.Text, cut)
	if err != nil || v.reply.Refusal != "" {
		pv.Error = problem.ModelOutputUnparseable
		notVerified("unreadable", nil)
		return nil
	}
	// The rows Merge keeps (draft.MaxPageRows): a looping reply's thousands are not compared.
	first, again := res.Draft.Indicators, out.Draft.Indicators
	ws := check.Agree(first[:min(len(first), draft.MaxPageRows)], again[:min(len(again), draft.MaxPageRows)], page)
	if out.Truncated {
		// The rows a cut reply did not reach are not rows it lacks.
		ws = slices.DeleteFunc(ws, func(w schema.Warning) bool { return w.Code == schema.ReadOnce && w.Params["read"] == "first" })
	}
	pv.Status = schema.VerifyAgreed
	if len(ws) > 0 {
		pv.Status = schema.VerifyDisagreed
		res.Warnings = append(res.Warnings, ws...)
	}
	return nil
}

// flagCodes are the warnings that make a page worth a second read under VerifyFlagged: those
// that say a row may be misread or missing. A range that applies by sex or condition is no sign
// of a misread, and a page that conflicts with another is not this page's doubt.
var flagCodes = map[schema.WarningCode]bool{
	schema.IndicatorDropped: true, schema.InvalidValue: true, schema.UnitConflict: true,
	schema.ReferenceRangeSwapped: true, schema.OutputTruncated: true,
	schema.FlagMismatch: true, schema.ValueImplausible: true, schema.RangeImplausible: true,
	schema.UnitUnexpected: true, schema.DuplicateRow: true, schema.InconsistentValues: true,
	schema.NameUnknown: true, schema.ValueNotOnPage: true,
}

// flagged reports whether the reader or the checks, run on this page alone (its text layer's
// too, for a digital PDF's page), raised a warning about a row of res. The checks run on a copy:
// the report's own run, on the merged draft, is what the answer says.
func (s *Service) flagged(ctx context.Context, res *schema.Result, text []intake.Word) bool {
	for _, w := range res.Warnings {
		if flagCodes[w.Code] {
			return true
		}
	}
	d := res.Draft
	d.Indicators = append([]schema.OcrIndicator(nil), d.Indicators...)
	ws, err := check.RunContext(ctx, s.cfg.Builder.Lexicon(), &d, check.Context{})
	if err != nil {
		return false // the request is ending; its end says so
	}
	if text != nil {
		on, _, err := check.OnPageContext(ctx, &d, [][]intake.Word{text})
		if err != nil {
			return false
		}
		ws = append(ws, on...)
	}
	for _, w := range ws {
		if flagCodes[w.Code] {
			return true
		}
	}
	return false
}

// sharedImage is a page handed over to two model calls at once: each holds an imageRef, and the
// image is closed when both have let go of it.
type sharedImage struct {
	img  *budget.Bytes
	refs atomic.Int32
}

func (s *sharedImage) release() {
	if s.refs.Add(-1) == 0 {
		s.img.Close()
	}
}

// imageRef is one call's reference to a sharedImage: a vision.Body whose Close lets go once.
type imageRef struct {
	s    *sharedImage
	once sync.Once
}

func (r *imageRef) Bytes() []byte { return r.s.img.Bytes() }

func (r *imageRef) Close() error {
	r.once.Do(r.s.release)
	return nil
}
