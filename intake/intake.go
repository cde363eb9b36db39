// Package intake checks and normalises one page image before it is sent to the vision model.
//
// Every check that can be made from the header is made before any pixel is decoded, so a file
// that would cost memory or a model call for nothing (a ZIP, a video, a 40000×40000 PNG bomb) is
// rejected for the price of reading a few bytes. What passes is decoded under a semaphore, turned
// upright, flattened onto white, brought to 8 bits and shrunk (area average) to what a model can
// use, then sent as JPEG; an upload that needs none of that goes as its own bytes.
//
// # Formats
//
// Each accepted format is one row of the table in sniff.go: how to know it from its first
// bytes, what its headers say of a page, how many pages it holds, what decoding one costs and
// how to decode it. The decoders of TIFF (internal/tiff, with internal/fax), HEIC
// (internal/heif) and BMP (internal/bmp) are packages of their own with image/jpeg's surface
// and plain errors; their rows here hold them to the Limits and word the refusals.
//
// # Documents
//
// A TIFF (a fax, a scanner's batch) and a PDF may hold several pages: Split counts them from the
// headers and PreparePage prepares each as an image of its own. A TIFF page is decoded by
// x/image/tiff, or by internal/tiff where it stops short (G3 2-D, CMYK, JPEG blocks). A PDF page
// is rendered by PDFium, so that its long edge is MaxEdge, with its text layer read into
// Page.Text; a scanned page that is one JPEG goes as that JPEG. A HEIC is decoded by libheif (a
// grid tile by tile), upright as its container turns it. PDFium and libheif run as WebAssembly
// (wazero) in the Runtime the Preparer is given: no cgo, no host file system, no system
// library, each instance's memory capped; see pdf.go and internal/heif.
//
// # What reaches the model
//
// The pixels, and what a decoder needs to show them as the sender saw them; nothing that says who
// sent them, where or with what (health data: caller identity never goes to the model provider).
// A re-encoded page carries none of the upload's metadata: the encoder writes only the image. An
// upload that goes as its own bytes is first stripped, losslessly and without decoding: a JPEG
// keeps its JFIF, ICC profile and Adobe segments and every table, frame and scan, and loses EXIF
// (GPS position, camera serial, times, owner), XMP, IPTC, every other APPn, comments and
// whatever follows the end of the image; a PNG keeps its critical chunks and those that set its
// colours, and loses text, EXIF, time and every other chunk, and whatever follows IEND. A file
// the walk does not expect is re-encoded instead. Page.Stripped counts the bytes removed. The
// EXIF orientation is read before stripping, and only an upright upload goes as its own bytes, so
// dropping it changes nothing.
//
// # What a decode may cost
//
// A file's size says little about what decoding it costs: a 13 KB progressive JPEG can make the
// decoder visit 40 megapixels 200 times, and a 334-byte one can make it hold 571 MiB of
// coefficients. So the cost of every decode is worked out from the headers first (cost.go, one
// formula per decoder) and an image over Limits.MaxScans, MaxDecodeWork or MaxDecodeBytes is
// refused as image_too_large without being decoded. The decode then runs on its own goroutine
// under a slot; Prepare answers at the request's deadline whether or not it has finished.
package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/ocrdraft/ocrdraft/intake/internal/bmp"
	"github.com/ocrdraft/ocrdraft/intake/internal/guard"
	"github.com/ocrdraft/ocrdraft/intake/internal/tiff"
	"github.com/ocrdraft/ocrdraft/problem"
)

// The default limits. 20 MiB holds any phone photo; 40 megapixels holds any phone sensor while
// capping one decoded image at 60 MB (YCbCr 4:2:0) to 320 MB (16-bit RGBA); a 2048-pixel long edge
// keeps the smallest print on an A4 report legible, and vision models downscale larger images
// anyway.
//
// The decode bounds come from the headers too, because what a decode costs is not its size: a
// 13 KB progressive JPEG can declare 200 scans over 40 megapixels, and every scan makes the
// decoder visit every block, whatever its data. Cameras and libjpeg write 1 scan, or 10 for a
// progressive file (6 for grey); 64 leaves room for any encoder's script. The work bound is 16
// passes over the largest image (libjpeg's 10-scan script over a 40-megapixel 4:2:0 photo takes
// 11): with it, no accepted JPEG takes more than two seconds of one core to decode
// (BenchmarkWorstJPEG: 1.0–1.6 s; the worst PNG takes 1.8 s, BenchmarkWorstDecode). The
// memory bound is 8 bytes per pixel of the largest image, what its 16-bit RGBA form takes: a
// 40-megapixel baseline photo or a 24-megapixel progressive one fits, a progressive file that
// keeps 3×40 megapixels of coefficients (480 MB) does not.
const (
	DefaultMaxBytes  = 20 << 20
	DefaultMaxPixels = 40_000_000
	DefaultMaxEdge   = 2048
	DefaultMinSide   = 32
	DefaultMaxScans  = 64

	DefaultWorkPerPixel = 16 // MaxDecodeWork = 16 × MaxPixels unless set
	DefaultMemPerPixel  = 8  // MaxDecodeBytes = 8 × MaxPixels unless set
)

// Quality is the JPEG quality of re-encoded pages: high enough that small print keeps its edges.
const Quality = 90

// Limits bound what one image may cost. A zero field takes its default.
type Limits struct {
	MaxBytes  int64 // encoded size; larger is payload_too_large
	MaxPixels int   // width×height from the header; larger is image_too_large, never decoded
	MaxEdge   int   // long edge sent to the model; larger images are downscaled
	MinSide   int   // shortest side accepted; smaller is image_unreadable
	// SideMultiple makes both sides of the image sent whole multiples of it (rounded down,
	// within MaxEdge and MaxPixels), for a model that resizes what it is sent to such sides
	// before it reads it and answers boxes in its pixels (Qwen2.5-VL: 28), so that its pixels are
	// the sent image's. 0 or 1: any side.
	SideMultiple int

	// The decode bounds, from the headers; more is image_too_large, never decoded.
	MaxScans       int   // JPEG scans (SOS segments)
	MaxDecodeWork  int64 // JPEG samples decoded, summed over its scans; 0 is DefaultWorkPerPixel × MaxPixels
	MaxDecodeBytes int64 // peak memory of one decode; 0 is DefaultMemPerPixel × MaxPixels
	// DecodeMemory bounds the memory all decodes in progress hold together, each counted at its
	// cost from the headers (a PDF document at pdfCharge, its instance's cap, while it is open);
	// a decode waits until its cost is free.
	// 0 is 2 × MaxDecodeBytes, so that however many CPUs there are, four 26-megapixel HEICs
	// (300 MB each) cannot run at once.
	DecodeMemory int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = DefaultMaxPixels
	}
	if l.MaxEdge <= 0 {
		l.MaxEdge = DefaultMaxEdge
	}
	if l.MinSide <= 0 {
		l.MinSide = DefaultMinSide
	}
	if l.SideMultiple <= 1 {
		l.SideMultiple = 1
	}
	if l.MaxScans <= 0 {
		l.MaxScans = DefaultMaxScans
	}
	if l.MaxDecodeWork <= 0 {
		l.MaxDecodeWork = DefaultWorkPerPixel * int64(l.MaxPixels)
	}
	if l.MaxDecodeBytes <= 0 {
		l.MaxDecodeBytes = DefaultMemPerPixel * int64(l.MaxPixels)
	}
	if l.DecodeMemory <= 0 {
		l.DecodeMemory = 2 * l.MaxDecodeBytes
	}
	return l
}

// Page is one image ready for the model, with the sizes the metrics want.
type Page struct {
	MIME          string // image/jpeg or image/png
	Data          []byte // aliases the input when Reencoded is false and Stripped is 0
	Width, Height int    // of Data, upright
	Kind          string // what was sent, as Sniff names it
	BytesIn       int
	BytesOut      int
	Reencoded     bool
	Stripped      int // metadata bytes left out of an upload sent as its own bytes

	// Text is the page's text layer, for a PDF page that has one (nil otherwise): each word
	// as printed, with its box in the pixels of Data, upright; check.OnPage reads its numbers.
	Text []Word
}

// Word is one run of text on a page's text layer, split at white space, and its box in the
// pixel coordinates of the page as sent (origin top left, y down, after any /Rotate).
type Word struct {
	Text string
	Box  image.Rectangle
}

// Preparer turns uploads into Pages. Its semaphore, one slot per CPU, is what keeps a burst of
// uploads from decoding dozens of 12-megapixel photos at once: the rest wait for a slot instead of
// each holding the 18–36 MB that a 12-megapixel photo decodes to. A slot is held until its decode
// ends, even one that nobody waits for any more (a HEIC's ends then: its worker is killed), and so is the decode's share of DecodeMemory,
// which every decode takes at its cost before its slot: the decodes in progress hold at most
// DecodeMemory together (each at most MaxDecodeBytes), plus, per slot, what the shrink and encode
// hold (under 8·MaxEdge² bytes and 32 bytes per pixel of width), plus the uploads themselves.
type Preparer struct {
	l        Limits
	rt       *Runtime // the WebAssembly decoders (HEIC, PDF)
	sem      chan struct{}
	mem      *semaphore.Weighted                                   // Limits.DecodeMemory
	docs     pdfDocs                                               // PDFs open between their Split and their last page
	dec      func(format, io.Reader, decoder) (image.Image, error) // tests put a slow or counting one around the decoder here
	pageTime time.Duration                                         // PDFPageTime when 0; tests shorten it
	pageWork time.Duration                                         // PDFPageWork when 0; tests shorten it
	heicWork time.Duration                                         // HEICWork when 0; tests shorten it
	openWork time.Duration                                         // PDFOpenWork when 0; tests shorten it
	pdfDraw  int64                                                 // maxPageDraw when 0; tests raise it
}

// New returns a Preparer with l's limits (zero fields take the defaults) that runs its
// WebAssembly decoders in rt, which Preparers may share (main makes one for the process). With
// rt nil it makes a Runtime of its own, compiled in memory at its first HEIC or PDF.
func New(l Limits, rt *Runtime) *Preparer {
	l = l.withDefaults()
	if rt == nil {
		rt = NewRuntime("")
	}
	return &Preparer{l: l, rt: rt, sem: make(chan struct{}, runtime.NumCPU()), mem: semaphore.NewWeighted(l.DecodeMemory)}
}

// Limits returns the limits in force, defaults filled in.
func (p *Preparer) Limits() Limits { return p.l }

// header is what intake knows of one page before decoding it: what every kind has, and, from
// the format's row (its read), what decoding the page will cost and the decoder that will.
// What a kind knows beside (a TIFF's directory, a HEIC's container) stays in those functions.
type header struct {
	f      format
	w, h   int
	orient int         // EXIF orientation, 1 when there is none
	model  color.Model // from the header: YCbCr, Gray, CMYK …
	cost   cost
	// lw, lh is the largest image the file declares, when it is larger than the page (a HEIC's
	// tile, thumbnail or auxiliary image): it is held to MaxPixels too.
	lw, lh int
	// stretch is how many rows each decoded row stands for (a fax in normal mode, whose pixels
	// are twice as tall as wide); 0 or 1 for square pixels.
	stretch int

	price  func() (cost, error)                             // the decode's cost, once the size has passed
	decode func(context.Context, *Preparer, []byte) decoder // the page's decoder, for a decode under ctx by p
}

// reader returns the bytes of the page h describes, as its decoder reads them (the decoders of
// internal/ packages read data itself).
func (h header) reader(data []byte) io.Reader { return bytes.NewReader(data) }

// Prepare checks data and returns the page to send. Errors are *problem.Error with codes
// payload_too_large, unsupported_media_type, image_too_large and image_unreadable, or overloaded
// (wrapping ctx.Err()) when ctx ends while waiting for a decoding slot. The decoded pixels are
// dropped before it returns; Page.Data may alias data.
//
// When ctx ends during the decode, Prepare returns at once with an error wrapping ctx.Err() (no
// *problem.Error), which the server answers as it answers any request past its deadline. Go's decoders cannot be
// interrupted: the decode goes on, holding its slot, until its next read of the file or at the
// latest until it has done the work the decode bounds allow (under two seconds of one core at
// the default limits, BenchmarkWorstJPEG); nothing after it (shrinking, encoding) is done.
//
// An upload of several pages (a TIFF with several directories) is prepared here as its first
// page; Split counts them and PreparePage prepares each.
func (p *Preparer) Prepare(ctx context.Context, data []byte) (Page, error) {
	return p.PreparePage(ctx, data, 0)
}

// Split counts the pages of one upload from its headers, without decoding any: the directories
// of a TIFF, and 1 for any other image (whose checks are left to PreparePage). A caller that
// limits the pages of a request (OCR_MAX_PAGES) adds the counts up before preparing any page.
// Errors are *problem.Error: image_unreadable for a TIFF whose chain of directories is damaged,
// too_many_pages for one of more than MaxTIFFPages.
func (p *Preparer) Split(ctx context.Context, data []byte) (int, error) {
	f := lookup(data)
	if !f.ok() || int64(len(data)) > p.l.MaxBytes || f.pages == nil {
		return 1, nil // PreparePage refuses what is not accepted
	}
	return f.pages(f, p, ctx, data)
}

// PreparePage is Prepare for page i (from 0) of an upload that Split counted; each page of a
// document is checked against the limits on its own, as if it were an image of its own.
func (p *Preparer) PreparePage(ctx context.Context, data []byte, i int) (Page, error) {
	f := lookup(data)
	if err := p.refuse(data, f); err != nil {
		return Page{}, err
	}
	if f.prepare != nil { // a document: charged, and drawn, as a whole (pdfdoc.go)
		return f.prepare(p, ctx, data, i)
	}
	h, err := p.inspect(data, i)
	if err != nil {
		return Page{}, err
	}
	release, err := p.acquire(ctx, h.cost.mem)
	if err != nil {
		return Page{}, err
	}
	return detached(ctx, func() (Page, error) {
		defer release()
		return p.convert(ctx, h, data)
	})
}

// detached runs a decode on a goroutine of its own and answers when it is done or when ctx ends,
// whichever comes first: a decode that cannot be interrupted (Go's image decoders, a HEIC
// picture decoded in this process where no worker could start) runs on to its end holding what
// it acquired, and gives it back then; the caller is not kept waiting for it. A HEIC's worker is
// killed when ctx ends, so its decode gives back what it holds at once. A decode that finished as ctx ended is answered, not abandoned.
func detached(ctx context.Context, decode func() (Page, error)) (Page, error) {
	type result struct {
		page Page
		err  error
	}
	done := make(chan result, 1)
	go func() {
		page, err := decode()
		done <- result{page, err}
	}()
	select {
	case r := <-done:
		return r.page, r.err
	case <-ctx.Done():
		select {
		case r := <-done:
			return r.page, r.err
		default:
		}
		return Page{}, abandoned(ctx)
	}
}

func abandoned(ctx context.Context) error {
	return fmt.Errorf("intake: the request ended while its image was being decoded: %w", ctx.Err())
}

// refuse makes the checks of data that need none of its headers: empty, too large, of a kind
// that is not accepted (f is its row).
func (p *Preparer) refuse(data []byte, f format) error {
	if len(data) == 0 {
		return problem.Errorf(problem.ImageUnreadable, "the file is empty; attach the photo or scan again")
	}
	if int64(len(data)) > p.l.MaxBytes {
		return tooManyBytes(int64(len(data)), p.l.MaxBytes)
	}
	if !f.ok() {
		hint := f.hint
		if hint == "" {
			hint = "send each page as a JPEG or PNG image, or the report as a PDF"
		}
		return problem.Errorf(problem.UnsupportedMediaType, "the file is %s; %s", f.what, hint)
	}
	return nil
}

// inspect makes every check that the header allows, so that nothing rejected here is decoded:
// the format's row reads page i, then the size and the cost of its decode are held to the
// limits. A document (a PDF) is not inspected: its pages' sizes are read under the slot.
func (p *Preparer) inspect(data []byte, page int) (header, error) {
	f := lookup(data)
	if err := p.refuse(data, f); err != nil {
		return header{}, err
	}
	if f.read == nil {
		return header{}, fmt.Errorf("intake: %s is not inspected, but drawn as a document", f.what)
	}
	h, err := f.read(f, data, page, p.l)
	if err != nil {
		return header{}, readFailed(f, err)
	}
	h.f = f
	if err := p.size(h); err != nil {
		return header{}, err
	}
	if h.cost, err = h.price(); err != nil {
		return header{}, unreadable(f, err)
	}
	if err := p.bound(h); err != nil {
		return header{}, err
	}
	return h, nil
}

// readFailed is the refusal of a row's read: its own problem, a page the upload does not have
// (the caller's error, not the file's), or damage.
func readFailed(f format, err error) error {
	var pe *problem.Error
	var np pageError
	if errors.As(err, &pe) || errors.As(err, &np) {
		return err
	}
	return unreadable(f, err)
}

// size refuses a page over MaxPixels (or a file declaring a larger image), or under MinSide.
func (p *Preparer) size(h header) error {
	px := int64(h.w) * int64(h.h)
	if lpx := int64(h.lw) * int64(h.lh); lpx > px && lpx > int64(p.l.MaxPixels) {
		return problem.Errorf(problem.ImageTooLarge,
			"the image is %d×%d pixels, but the %s holds an image (a tile, thumbnail or auxiliary image) of %d×%d pixels (%.1f megapixels); the limit is %.1f megapixels: downscale it, a long edge of %d pixels is enough",
			h.w, h.h, strings.ToUpper(h.f.kind), h.lw, h.lh, float64(lpx)/1e6, float64(p.l.MaxPixels)/1e6, p.l.MaxEdge)
	}
	if px > int64(p.l.MaxPixels) {
		return problem.Errorf(problem.ImageTooLarge,
			"the image is %d×%d pixels (%.1f megapixels); the limit is %.1f megapixels: downscale it, a long edge of %d pixels is enough",
			h.w, h.h, float64(px)/1e6, float64(p.l.MaxPixels)/1e6, p.l.MaxEdge)
	}
	if h.w < p.l.MinSide || h.h < p.l.MinSide {
		return problem.Errorf(problem.ImageUnreadable,
			"the image is only %d×%d pixels; each side must be at least %d: send the full-size photo or scan", h.w, h.h, p.l.MinSide)
	}
	return nil
}

// bound refuses an image whose decode would cost more than the limits allow, from its headers.
func (p *Preparer) bound(h header) error {
	c, l := h.cost, p.l
	if c.over != nil { // a format's own bounds (HEIC's pictures, TIFF's blocks)
		if err := c.over(l); err != nil {
			return err
		}
	}
	switch {
	case c.scans > l.MaxScans:
		return problem.Errorf(problem.ImageTooLarge,
			"the JPEG has %d scans; the limit is %d: save it again as a baseline (non-progressive) JPEG", c.scans, l.MaxScans)
	case c.mem > l.MaxDecodeBytes:
		hint := fmt.Sprintf("downscale it, a long edge of %d pixels is enough", l.MaxEdge)
		if c.what == "progressive JPEG" {
			hint = "save it again as a baseline (non-progressive) JPEG, or downscale it"
		}
		return problem.Errorf(problem.ImageTooLarge,
			"decoding this %d×%d %s would take %s of memory; the limit is %s: %s", h.w, h.h, c.what, mib(c.mem), mib(l.MaxDecodeBytes), hint)
	case c.work > l.MaxDecodeWork:
		hint := "save it again as a single-scan JPEG, or downscale it"
		if c.what == "progressive JPEG" {
			hint = "save it again as a baseline (non-progressive) JPEG"
		}
		return problem.Errorf(problem.ImageTooLarge,
			"decoding this %d×%d %s would take %d million samples of work (%d scans); the limit is %d million: %s",
			h.w, h.h, c.what, c.work/1e6, c.scans, l.MaxDecodeWork/1e6, hint)
	}
	return nil
}

// acquire waits for a decoding slot. A request whose deadline passes in the queue is overloaded:
// the CPU, not the image, is the problem, and a retry later will succeed.
// It takes weight bytes of the decode memory first (all of it at most), then a slot; release
// gives both back.
func (p *Preparer) acquire(ctx context.Context, weight int64) (release func(), err error) {
	weight = min(max(weight, 1), p.l.DecodeMemory)
	if err := ctx.Err(); err == nil && p.takeMem(ctx, weight) == nil {
		select {
		case p.sem <- struct{}{}:
			return func() { <-p.sem; p.mem.Release(weight) }, nil
		case <-ctx.Done():
			p.mem.Release(weight)
		}
	}
	return nil, &problem.Error{
		Code:       problem.Overloaded,
		Detail:     "the server is busy preparing other images; retry shortly",
		RetryAfter: time.Second,
		Err:        ctx.Err(),
	}
}

// convert decodes and, unless the upload can go as it is, normalises and re-encodes it. It runs
// on a goroutine of its own, so a panic in it is turned into an error here.
func (p *Preparer) convert(ctx context.Context, h header, data []byte) (_ Page, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("intake: panic preparing a %s: %v", h.f.kind, r)
		}
	}()
	// The common case — an upright YCbCr or grey JPEG within the edge, as phones and scanners
	// write them — goes as its own bytes without being decoded: decoding a 2-megapixel JPEG costs
	// tens of milliseconds and would change nothing. Its structure is checked instead, by the
	// walk that strips its metadata, which follows every segment and scan to EOI, so an empty,
	// truncated or mangled file still falls through to the decoder below and is refused there.
	// What this lets through is damage inside the compressed data of a well-formed file; the
	// model then sees a damaged page and says so, or the draft shows it.
	within := h.orient == 1 && h.w <= p.l.MaxEdge && h.h <= p.l.MaxEdge && h.w%p.l.SideMultiple == 0 && h.h%p.l.SideMultiple == 0
	if h.f.asIs && within && (h.model == color.YCbCrModel || h.model == color.GrayModel) {
		if out, ok := h.f.strip(data); ok {
			return Page{
				Kind: h.f.kind, MIME: h.f.mime, Data: out, Width: h.w, Height: h.h,
				BytesIn: len(data), BytesOut: len(out), Stripped: len(data) - len(out),
			}, nil
		}
	}
	dec := h.decode(ctx, p, data)
	if p.dec != nil {
		next := dec
		dec = func(r io.Reader) (image.Image, error) { return p.dec(h.f, r, next) }
	}
	m, err := decodeWith(dec, guard.Reader(ctx, h.reader(data)))
	if ctx.Err() != nil { // nobody waits for the rest, and a failed read is no fault of the file
		return Page{}, abandoned(ctx)
	}
	if err != nil {
		if h.f.failed != nil {
			if refusal := h.f.failed(h, err); refusal != nil {
				return Page{}, refusal
			}
		}
		return Page{}, unreadable(h.f, err)
	}
	canvas := image.Rect(0, 0, h.w, h.h)
	if !m.Bounds().In(canvas) {
		return Page{}, unreadable(h.f, fmt.Errorf("decoded bounds %v outside the header's %v", m.Bounds(), canvas))
	}
	page := Page{Kind: h.f.kind, BytesIn: len(data)}
	if within && h.f.plain != nil && h.f.plain(m) {
		if out, ok := h.f.strip(data); ok { // else re-encoded below
			page.MIME, page.Data, page.Width, page.Height = h.f.mime, out, h.w, h.h
			page.BytesOut, page.Stripped = len(out), len(data)-len(out)
			return page, nil
		}
	}
	if g, ok := m.(*image.Gray); ok && h.stretch > 1 && m.Bounds() == canvas {
		m = stretchRows(g, h.stretch) // a fax in normal mode: its pixels are twice as tall as wide
		canvas = m.Bounds()
	}
	out := render(m, canvas, h.orient, p.l.MaxEdge, p.l.SideMultiple) // m is garbage from here on
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: Quality}); err != nil {
		return Page{}, fmt.Errorf("intake: encode: %w", err) // cannot happen for in-memory images
	}
	b := out.Bounds()
	page.MIME, page.Data, page.Width, page.Height = "image/jpeg", buf.Bytes(), b.Dx(), b.Dy()
	page.BytesOut, page.Reencoded = buf.Len(), true
	return page, nil
}

// plainJPEG and plainPNG report whether a decoded upload may go to the model as its own bytes:
// a JPEG or PNG whose pixels are already 8-bit grey, YCbCr, RGB or palette, with nothing
// transparent. A CMYK JPEG, a 16-bit PNG or a PNG with alpha is re-encoded, because models
// differ in how they read those, and transparent pixels are black to some of them.
func plainJPEG(m image.Image) bool {
	switch m.(type) {
	case *image.YCbCr, *image.Gray:
		return true
	}
	return false
}

func plainPNG(m image.Image) bool {
	switch m := m.(type) {
	case *image.Gray:
		return true
	case *image.RGBA:
		return m.Opaque()
	case *image.NRGBA:
		return m.Opaque()
	case *image.Paletted:
		return m.Opaque()
	}
	return false
}

// decodeConfig reads only the header, with the decoder the signature table names.
func decodeConfig(config func(io.Reader) (image.Config, error), r io.Reader) (cfg image.Config, err error) {
	defer guard.Recover("intake", &err)
	return config(r)
}

// decoder decodes a whole image from its reader.
type decoder = func(io.Reader) (image.Image, error)

func decodeWith(dec decoder, r io.Reader) (m image.Image, err error) {
	defer guard.Recover("intake", &err)
	return dec(r)
}

// unreadable is the refusal of a file its decoder could not read; what the decoder calls valid
// but unsupported is unsupported_media_type instead.
//
// A valid file may use a feature that no decoder here reads: a G3 fax with fill bits, a TIFF in
// the Lab colour space, a BMP of 16-bit pixels. Such a file is not damaged, and saying so would
// send its sender to export it again the same way; it is refused as unsupported_media_type
// instead, naming the feature and what to send in its place, from the headers and before any
// pixel is decoded: each kind's table of features is in its decoder's package (internal/tiff,
// internal/bmp), and its row words the refusal. What a decoder still calls unsupported
// (tiff.UnsupportedError, bmp.ErrUnsupported) is refused here.
func unreadable(f format, err error) error {
	var tu tiff.UnsupportedError
	if errors.As(err, &tu) || errors.Is(err, bmp.ErrUnsupported) {
		what := "a feature"
		if errors.As(err, &tu) {
			what = fmt.Sprintf("a feature (%s)", string(tu))
		}
		return &problem.Error{
			Code:   problem.UnsupportedMediaType,
			Detail: fmt.Sprintf("the file is %s that uses %s not read here; save it again as PNG or JPEG, or as a PDF", f.what, what),
			Err:    err,
		}
	}
	return &problem.Error{
		Code:   problem.ImageUnreadable,
		Detail: fmt.Sprintf("the file starts as %s but is truncated or corrupt; export it again or retake the photo", f.what),
		Err:    err,
	}
}

func tooManyBytes(n, max int64) error {
	what := "the image is larger than"
	if n > 0 {
		what = fmt.Sprintf("the image is %s; that is more than", mib(n))
	}
	return problem.Errorf(problem.PayloadTooLarge,
		"%s the %s limit for one image: send a smaller file, such as a JPEG with a long edge of about 2000 pixels", what, mib(max))
}

// mib formats a byte count for a person: "20 MiB", "20.5 MiB", "900 KiB".
func mib(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadAll reads one image (a multipart part, a decoded base64 body) and fails with
// payload_too_large as soon as it passes max bytes (DefaultMaxBytes when max <= 0). It never
// reads or holds more than max+1 bytes, so an oversized upload costs at most that much memory. A body cut
// by http.MaxBytesReader is payload_too_large too; any other read error is invalid_request, since
// the upload, not the image, is broken.
func ReadAll(r io.Reader, max int64) ([]byte, error) { return ReadAllSized(r, max, 0) }

// fit drops a buffer's slack when it is large (a hint that covered several images), so that a
// page does not hold memory it does not use while the model is asked.
func fit(b []byte) []byte {
	if slack := cap(b) - len(b); slack > 64<<10 && slack > len(b)/8 {
		return append([]byte(nil), b...)
	}
	return b
}

// ReadAllSized is ReadAll with a hint of the size to expect, such as the request's
// Content-Length for its only image: one buffer of about the right size instead of a doubling
// series, which for a 1 MB photo saves a megabyte of copying and up to a megabyte of slack held
// while the model is asked. A wrong hint costs only the usual growth.
func ReadAllSized(r io.Reader, max, hint int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	size := int64(64 << 10)
	if hint+1 > size {
		size = hint + 1
	}
	buf := make([]byte, 0, min(max, size))
	for {
		if int64(len(buf)) == max {
			// Full: one more byte, in a probe of its own, tells too large from exactly max.
			var probe [1]byte
			n, err := io.ReadFull(r, probe[:])
			if n > 0 {
				return nil, tooManyBytes(0, max)
			}
			if err == io.EOF {
				return fit(buf), nil
			}
			return nil, readError(err)
		}
		if len(buf) == cap(buf) { // grow by doubling like append, but never past max
			next := make([]byte, len(buf), min(int64(cap(buf))*2, max))
			copy(next, buf)
			buf = next
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return fit(buf), nil
		}
		if err != nil {
			return nil, readError(err)
		}
	}
}

// readError tells a body cut by http.MaxBytesReader (payload_too_large) from a broken upload.
func readError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &problem.Error{Code: problem.PayloadTooLarge,
			Detail: fmt.Sprintf("the request is larger than the %s limit: send fewer or smaller images", mib(mb.Limit)), Err: err}
	}
	return &problem.Error{Code: problem.InvalidRequest, Detail: "the upload could not be read to its end; send it again", Err: err}
}
