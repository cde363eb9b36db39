package intake

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"io/fs"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	pdferr "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ocrdraft/ocrdraft/problem"

	"github.com/ocrdraft/ocrdraft/intake/internal/wasmmem"
)

// pdfEnsure is whether a PDFium call ends when its request does (wazero's CloseOnContextDone).
// A page's content stream can ask for any amount of work, which no header bounds, so the call
// must be stoppable: at the deadline the instance is killed and its slot freed at once.
const pdfEnsure = true

// sandbox is the whole file system PDFium sees: one CJK font where PDFium looks for system fonts
// (/usr/share/fonts), and nothing of the host's. A PDF that names a font it does not embed
// (STSong-Light, SimSun, MSung-Light: Java-made hospital reports often do) is drawn in it
// instead of leaving its Chinese, and its digits, blank. The font is WenQuanYi Micro Hei
// (Apache-2.0; sandbox/COPYRIGHT.wqy-microhei): CJK of GB 18030 and Big5 with Latin and the
// symbols reports print (↑↓×µ±≤≥), and one of the names PDFium asks for by charset. It is
// mounted at / because PDFium's folder scan stops at the first entry it cannot stat, and
// "/usr/share/fonts/.." cannot be statted in a mount at /usr/share/fonts.
//
//go:embed sandbox/usr/share/fonts/wqy-microhei.ttc
var sandbox embed.FS

// startPDF starts the Runtime's one PDFium, at its first use: compiling its 6 MB of WebAssembly
// takes seconds and hundreds of MB once (BenchmarkPDFStart), so never per request. Each use
// takes a fresh instance (a used one keeps the memory it grew), under the decode slots, with no
// host file system (go-pdfium mounts the host's / when given no FSConfig, and a PDF could then
// read host files; it gets the read-only sandbox instead), no output, and its memory capped at
// what its document is charged (pdfInstance).
func (r *Runtime) startPDF() (pdfium.Pool, error) {
	root, err := fs.Sub(sandbox, "sandbox")
	if err != nil {
		return nil, err
	}
	ctx := experimental.WithMemoryAllocator(context.Background(), experimental.MemoryAllocatorFunc(r.pdfMemory))
	return webassembly.Init(webassembly.Config{
		Context:  ctx,
		MinIdle:  0,
		MaxIdle:  0,
		MaxTotal: 2 * runtime.NumCPU(), // the decode slots bound the use; killed ones may linger
		FSConfig: wazero.NewFSConfig().WithFSMount(root, "/"),
		RuntimeConfig: wazero.NewRuntimeConfig().
			WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
			WithCompilationCache(r.cache).
			WithCloseOnContextDone(pdfEnsure),
		Stdout: io.Discard,
		Stderr: io.Discard,
	})
}

// pdfDoc is one opened document in its own instance; close lets go of both.
type pdfDoc struct {
	inst   pdfium.Pdfium
	mem    *wasmmem.Capped // the instance's memory, capped at what the document is charged
	stats  *pdfCounters    // its runtime's
	doc    references.FPDF_DOCUMENT
	stop   func() bool // the AfterFunc that kills the instance when ctx ends
	pages  int
	opened time.Duration // the CPU time its opening took (its thread's)
	meter  *pdfMeter     // charging a page's drawing while it is drawn, else nil

	mu   sync.Mutex // over kill and close, which may come from two goroutines
	dead bool
}

// openPDF opens data in a fresh instance whose memory may grow to limit bytes. The instance is
// killed when ctx ends, which stops a call in progress, or when the opening has taken work of
// its thread's CPU time (PDFOpenWork). Errors are *problem.Error: document_encrypted,
// image_unreadable, image_too_large (the document needs more memory, or work, to open than
// limit or work).
func openPDF(ctx context.Context, r *Runtime, data []byte, limit uint64, work time.Duration) (*pdfDoc, error) {
	pool, err := r.pdf()
	if err != nil {
		return nil, fmt.Errorf("intake: start PDFium: %w", err)
	}
	inst, mem, err := r.pdfInstance(ctx, pool, limit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, abandoned(ctx)
		}
		return nil, fmt.Errorf("intake: PDFium instance: %w", err)
	}
	d := &pdfDoc{inst: inst, mem: mem, stats: &r.stats}
	d.stats.opens.Add(1)
	d.stats.alive(int64(mem.Max))
	d.stop = context.AfterFunc(ctx, d.kill)
	m := newMeter(work, d.stats, d.kill)
	m.begin()
	defer m.stop()
	m.charge(0)
	empty := ""
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data, Password: &empty})
	if err != nil {
		d.close()
		_, over := m.overrun()
		switch {
		case ctx.Err() != nil:
			return nil, abandoned(ctx)
		case over:
			return nil, openWorkRefusal(work)
		case errors.Is(err, pdferr.ErrPassword):
			return nil, &problem.Error{Code: problem.DocumentEncrypted, Err: err,
				Detail: "the PDF is protected by a password; remove the protection (print it to a new PDF) and send it again"}
		case errors.Is(err, pdferr.ErrSecurity):
			return nil, &problem.Error{Code: problem.DocumentEncrypted, Err: err,
				Detail: "the PDF is encrypted in a way that cannot be opened; print it to a new PDF and send it again"}
		case mem.Refused:
			return nil, pdfMemoryRefusal(err, limit, "opening")
		}
		return nil, &problem.Error{Code: problem.ImageUnreadable, Err: err,
			Detail: "the file starts as a PDF document but is truncated or corrupt; export or download it again"}
	}
	d.doc = doc.Document
	n, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: d.doc})
	m.off()
	if _, over := m.overrun(); over && err == nil { // killed as it returned
		d.close()
		return nil, openWorkRefusal(work)
	}
	if err != nil || n.PageCount < 1 {
		d.close()
		if ctx.Err() != nil {
			return nil, abandoned(ctx)
		}
		if _, over := m.overrun(); over {
			return nil, openWorkRefusal(work)
		}
		if mem.Refused {
			return nil, pdfMemoryRefusal(err, limit, "opening")
		}
		return nil, &problem.Error{Code: problem.ImageUnreadable, Err: err, Detail: "the PDF has no pages"}
	}
	d.pages, d.opened = n.PageCount, m.charged()[0]
	return d, nil
}

// pdfMemoryRefusal is the refusal of a document that needed more memory than its instance is
// allowed (what it is charged in the decode memory).
func pdfMemoryRefusal(err error, limit uint64, what string) error {
	return &problem.Error{Code: problem.ImageTooLarge, Err: err, Detail: fmt.Sprintf(
		"%s the PDF needs more than the %s of memory it may use; print it to a new PDF, or send scans or photos of its pages",
		what, mib(int64(limit)))}
}

// kill ends the instance at once, a call in progress included; close after it only forgets it.
func (d *pdfDoc) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dead {
		d.dead = true
		d.inst.Kill()
		d.stats.gone(d.mem)
	}
}

// close lets go of the document and its instance, in order unless it was killed.
func (d *pdfDoc) close() {
	d.stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dead {
		d.dead = true
		if d.doc != "" {
			d.inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: d.doc})
		}
		d.inst.Close()
		d.stats.gone(d.mem)
	}
}

// gone reports whether the instance was killed (or closed): a document whose instance is gone
// must be opened again.
func (d *pdfDoc) gone() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

// pdfSize is the pixel size a page is rendered at: its long edge at maxEdge, whatever its size
// in points (a fixed dpi makes a 12-megapixel photo wrapped in a PDF 27 megapixels at 150 dpi).
func pdfSize(wpt, hpt float64, maxEdge int) (int, int) {
	long := math.Max(wpt, hpt)
	s := float64(maxEdge) / long
	return max(1, int(math.Round(wpt*s))), max(1, int(math.Round(hpt*s)))
}

// PDFPageTime is the longest one page of a PDF may take to draw and read. A page's content
// can ask for any amount of work that no header bounds (two million paths, a vector map); past
// this its instance is killed and the page refused, so that it does not hold a decode slot
// until the request's own deadline. An ordinary report page takes well under a second. It
// counts from when the page holds a decode slot: a wait for one is the request's. Where the
// thread's CPU clock shows the page mostly waited for a core in that time, the refusal is the
// machine's load, overloaded, not the page's (pageTimeRefusal).
const PDFPageTime = 15 * time.Second

// convertPDF renders page i of an opened PDF, which pdfWalk has let through, and reads its text
// layer. It runs under a slot, in the document's instance, which the end of ctx kills.
// scanMemory is what a scanned page's JPEG may take to decode in Go (the instance has drawn
// nothing of it, and the charge holds room for its images); slow is the walk's refusal of a
// page that may go only as its scan.
func (p *Preparer) convertPDF(ctx context.Context, d *pdfDoc, data []byte, i int, scanMemory int64, slow error) (_ Page, err error) {
	if i >= d.pages {
		return Page{}, fmt.Errorf("intake: page %d of a PDF of %d pages", i+1, d.pages)
	}
	page := requests.Page{ByIndex: &requests.PageByIndex{Document: d.doc, Index: i}}
	fail := func(err error, what string) (Page, error) {
		if ctx.Err() != nil {
			return Page{}, abandoned(ctx)
		}
		if d.mem.Refused { // PDFium aborts when it cannot grow: the page needs more than its cap
			doing := "reading"
			if what == "rendered" {
				doing = "drawing"
			}
			return Page{}, pdfMemoryRefusal(err, d.mem.Max, fmt.Sprintf("%s page %d of", doing, i+1))
		}
		return Page{}, &problem.Error{Code: problem.ImageUnreadable, Err: err,
			Detail: fmt.Sprintf("page %d of the PDF could not be %s; export or download it again", i+1, what)}
	}
	size, err := d.inst.GetPageSize(&requests.GetPageSize{Page: page})
	if err != nil {
		return fail(err, "read")
	}
	if !(size.Width > 0 && size.Height > 0) || size.Width > 1e6 || size.Height > 1e6 {
		return fail(fmt.Errorf("page size %g×%g", size.Width, size.Height), "read")
	}
	w, h := pdfSize(size.Width, size.Height, p.l.MaxEdge)
	// Limits set below a page at the long edge (a small OCR_MAX_PIXELS) draw it smaller, as a
	// photo would be shrunk, rather than refuse it.
	if most := min(int64(p.l.MaxPixels), p.l.MaxDecodeBytes/8); int64(w)*int64(h) > most {
		s := math.Sqrt(float64(most) / (float64(w) * float64(h)))
		w, h = max(1, int(float64(w)*s)), max(1, int(float64(h)*s))
	}
	w, h = roundDown(w, p.l.SideMultiple), roundDown(h, p.l.SideMultiple)
	if w < p.l.MinSide || h < p.l.MinSide {
		return Page{}, problem.Errorf(problem.ImageUnreadable,
			"page %d of the PDF is %.0f×%.0f points, a strip too narrow to read at %d×%d pixels", i+1, size.Width, size.Height, w, h)
	}
	marked := annotated(d, page)
	if scan, orient, ok := p.pdfScan(d, page, size.Width, size.Height); ok && !marked {
		// One JPEG filling the page, and nothing drawn over it: it goes through the JPEG path
		// as itself (its own bytes, stripped, when the page is unturned and within the edge),
		// turned as the page's /Rotate says, not rendered and re-encoded.
		if h, err := p.inspect(scan, 0); err == nil && h.f.kind == "jpeg" && h.cost.mem <= scanMemory {
			d.meter.off()     // Go's decode, bounded as an upload's
			h.orient = orient // a PDF shows an image's pixels as stored (its EXIF is no part of it)
			pg, err := p.convert(ctx, h, scan)
			if err == nil {
				pg.Kind, pg.BytesIn = "pdf", len(data)
				return pg, nil
			}
			d.meter.charge(i) // rendered after all, by PDFium
		}
	}
	if slow != nil {
		return Page{}, slow
	}
	// Annotations (stamps, notes) are drawn, and form fields with their values, appearance or
	// not (a filled form's results are often only in its fields); grey anti-aliasing, not LCD
	// colour fringes.
	r, err := d.inst.RenderPageInPixels(&requests.RenderPageInPixels{Page: page, Width: w, Height: h,
		RenderFlags: enums.FPDF_RENDER_FLAG_ANNOT, RenderForm: true, Document: &d.doc})
	if err != nil {
		return fail(err, "rendered")
	}
	m := r.Result.Image
	if r.CleanupFunc != nil {
		defer r.CleanupFunc()
	}
	var text []Word
	if !marked {
		if text, err = p.pdfText(d, page, m.Bounds()); err != nil {
			return fail(err, "read")
		}
	}
	d.meter.off() // what is left is Go's, bounded by the render's size
	out := pagePixels(m, p.l.MaxEdge, p.l.SideMultiple)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: Quality}); err != nil {
		return Page{}, fmt.Errorf("intake: encode: %w", err)
	}
	b := out.Bounds()
	return Page{Kind: "pdf", MIME: "image/jpeg", Data: buf.Bytes(), Width: b.Dx(), Height: b.Dy(),
		BytesIn: len(data), BytesOut: buf.Len(), Reencoded: true, Text: text}, nil
}

// pagePixels returns a rendered page as the JPEG encoder takes it. It was rendered at its size,
// so it is not scaled again; a page with no pixel in colour (most reports are black on white)
// becomes grey, losslessly, which the encoder takes in a third of the time and which makes a
// smaller file. Anything else (a bitmap that is not opaque RGBA) goes through render.
func pagePixels(m *image.RGBA, maxEdge, multiple int) image.Image {
	r := m.Rect
	if r.Dx() > maxEdge || r.Dy() > maxEdge || r.Dx()%multiple != 0 || r.Dy()%multiple != 0 {
		return render(m, r, 1, maxEdge, multiple)
	}
	grey := true
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := m.Pix[m.PixOffset(r.Min.X, y):][:4*r.Dx()]
		for i := 0; i < len(row); i += 4 {
			if row[i+3] != 0xff {
				return render(m, r, 1, maxEdge, multiple)
			}
			grey = grey && row[i] == row[i+1] && row[i+1] == row[i+2]
		}
	}
	if !grey {
		return m.SubImage(r) // the encoder reads from Min
	}
	g := image.NewGray(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := range r.Dy() {
		row, out := m.Pix[m.PixOffset(r.Min.X, r.Min.Y+y):][:4*r.Dx()], g.Pix[y*g.Stride:][:r.Dx()]
		for x := range out {
			out[x] = row[4*x]
		}
	}
	return g
}

// errPageTime is why a page's context ends at PDFPageTime.
var errPageTime = errors.New("intake: the PDF page took too long to draw")

// annotated reports whether a page draws text of its annotations: filled form fields, stamps,
// free-text notes, watermarks. The render shows them, the text layer does not hold them, so a
// value printed there would look unprinted: such a page has no text layer, rather than one that
// flags what it cannot see. Links, popups, note icons and markup of the page's own text do not
// count; a page whose annotations cannot be read, or of more than 1000, does.
func annotated(d *pdfDoc, page requests.Page) bool {
	n, err := d.inst.FPDFPage_GetAnnotCount(&requests.FPDFPage_GetAnnotCount{Page: page})
	if err != nil || n.Count > 1000 {
		return true
	}
	for i := range n.Count {
		a, err := d.inst.FPDFPage_GetAnnot(&requests.FPDFPage_GetAnnot{Page: page, Index: i})
		if err != nil {
			return true
		}
		st, err := d.inst.FPDFAnnot_GetSubtype(&requests.FPDFAnnot_GetSubtype{Annotation: a.Annotation})
		drawn := err != nil
		if err == nil {
			switch st.Subtype {
			case enums.FPDF_ANNOT_SUBTYPE_LINK, enums.FPDF_ANNOT_SUBTYPE_POPUP, enums.FPDF_ANNOT_SUBTYPE_TEXT,
				enums.FPDF_ANNOT_SUBTYPE_HIGHLIGHT, enums.FPDF_ANNOT_SUBTYPE_UNDERLINE, enums.FPDF_ANNOT_SUBTYPE_SQUIGGLY,
				enums.FPDF_ANNOT_SUBTYPE_STRIKEOUT, enums.FPDF_ANNOT_SUBTYPE_FILEATTACHMENT:
			case enums.FPDF_ANNOT_SUBTYPE_WIDGET:
				drawn = fieldText(d, a.Annotation)
			default:
				drawn = true
			}
		}
		d.inst.FPDFPage_CloseAnnot(&requests.FPDFPage_CloseAnnot{Annotation: a.Annotation})
		if drawn {
			return true
		}
	}
	return false
}

// fieldText reports whether a form field's widget may draw text: one with a value, or one whose
// value may be its parent field's. An empty field, a signature field (signed e-reports carry
// one) and the like draw none, and leave the page's text layer whole.
func fieldText(d *pdfDoc, a references.FPDF_ANNOTATION) bool {
	str := func(key string) string {
		v, err := d.inst.FPDFAnnot_GetStringValue(&requests.FPDFAnnot_GetStringValue{Annotation: a, Key: key})
		if err != nil {
			return ""
		}
		return v.Value
	}
	if str("FT") == "Sig" {
		return false
	}
	if str("V") != "" {
		return true
	}
	p, err := d.inst.FPDFAnnot_HasKey(&requests.FPDFAnnot_HasKey{Annotation: a, Key: "Parent"})
	return err != nil || p.HasKey
}

// pdfScan returns the JPEG of a scanned page and the EXIF orientation that shows it as the page
// does: a page whose one object is a grey or RGB image stored as a JPEG (DCTDecode alone), placed
// upright, unmirrored and covering the page; the page's /Rotate becomes the orientation. Anything
// else (a CMYK JPEG, whose PDF may invert it with /Decode, among them) is rendered.
func (p *Preparer) pdfScan(d *pdfDoc, page requests.Page, wpt, hpt float64) ([]byte, int, bool) {
	rot, err := d.inst.FPDFPage_GetRotation(&requests.FPDFPage_GetRotation{Page: page})
	if err != nil {
		return nil, 0, false
	}
	orient := [4]int{1, 6, 3, 8}[int(rot.PageRotation)&3] // /Rotate turns clockwise, as 6 does
	// The page as shown (its CropBox within its MediaBox), before the turn: the image must be
	// placed on it and fill it, else the JPEG is not what the page shows (a two-up scan split
	// into pages by CropBox, an image placed off the page).
	bb, err := d.inst.FPDF_GetPageBoundingBox(&requests.FPDF_GetPageBoundingBox{Page: page})
	if err != nil {
		return nil, 0, false
	}
	l, b := float64(bb.Rect.Left), float64(bb.Rect.Bottom)
	wpt, hpt = float64(bb.Rect.Right)-l, float64(bb.Rect.Top)-b
	n, err := d.inst.FPDFPage_CountObjects(&requests.FPDFPage_CountObjects{Page: page})
	if err != nil || n.Count != 1 {
		return nil, 0, false
	}
	obj, err := d.inst.FPDFPage_GetObject(&requests.FPDFPage_GetObject{Page: page, Index: 0})
	if err != nil {
		return nil, 0, false
	}
	typ, err := d.inst.FPDFPageObj_GetType(&requests.FPDFPageObj_GetType{PageObject: obj.PageObject})
	if err != nil || typ.Type != enums.FPDF_PAGEOBJ_IMAGE {
		return nil, 0, false
	}
	fc, err := d.inst.FPDFImageObj_GetImageFilterCount(&requests.FPDFImageObj_GetImageFilterCount{ImageObject: obj.PageObject})
	if err != nil || fc.Count != 1 {
		return nil, 0, false
	}
	f, err := d.inst.FPDFImageObj_GetImageFilter(&requests.FPDFImageObj_GetImageFilter{ImageObject: obj.PageObject, Index: 0})
	if err != nil || f.ImageFilter != "DCTDecode" {
		return nil, 0, false
	}
	m, err := d.inst.FPDFPageObj_GetMatrix(&requests.FPDFPageObj_GetMatrix{PageObject: obj.PageObject})
	if err != nil || m.Matrix.A <= 0 || m.Matrix.D <= 0 || m.Matrix.B != 0 || m.Matrix.C != 0 {
		return nil, 0, false
	}
	near := func(v, want, size float64) bool { return math.Abs(v-want) <= 0.05*size }
	if a, dd := float64(m.Matrix.A), float64(m.Matrix.D); a < 0.9*wpt || a > 1.1*wpt || dd < 0.9*hpt || dd > 1.1*hpt ||
		!near(float64(m.Matrix.E), l, wpt) || !near(float64(m.Matrix.F), b, hpt) {
		return nil, 0, false
	}
	meta, err := d.inst.FPDFImageObj_GetImageMetadata(&requests.FPDFImageObj_GetImageMetadata{ImageObject: obj.PageObject, Page: page})
	if err != nil {
		return nil, 0, false
	}
	if bpp := meta.ImageMetadata.BitsPerPixel; bpp != 8 && bpp != 24 {
		return nil, 0, false
	}
	switch meta.ImageMetadata.Colorspace {
	case enums.FPDF_COLORSPACE_DEVICEGRAY, enums.FPDF_COLORSPACE_DEVICERGB, enums.FPDF_COLORSPACE_CALGRAY,
		enums.FPDF_COLORSPACE_CALRGB, enums.FPDF_COLORSPACE_ICCBASED:
	default:
		return nil, 0, false
	}
	raw, err := d.inst.FPDFImageObj_GetImageDataRaw(&requests.FPDFImageObj_GetImageDataRaw{ImageObject: obj.PageObject})
	if err != nil || int64(len(raw.Data)) > p.l.MaxBytes {
		return nil, 0, false
	}
	return raw.Data, orient, true
}

// maxTextChars is the most characters of a page's text layer that are read: a dense A4 page
// holds a few thousand. A page with more gets no text layer (no value_not_on_page check) rather
// than a partial one, in which values past the cut would look unprinted.
const maxTextChars = 20000

// pdfText reads a page's text layer as words with their boxes in the pixels of the rendered
// page (bounds). It is read from the page unturned: PDFium orders a page's characters as the
// page is shown, so on a page turned by /Rotate it reverses the digits of text placed glyph by
// glyph (as Chromium writes it); the page has been rendered already, so its rotation is set to
// none for the reading, and each word's box is then mapped through the rotation into the pixels
// sent. A character's box is PDFium's loose one (its advance by the font's ascent and descent,
// not the glyph's ink), so that the digits of a number touch whatever font draws them; one
// outside the rendered page (beyond a CropBox) is not on the page.
func (p *Preparer) pdfText(d *pdfDoc, page requests.Page, bounds image.Rectangle) ([]Word, error) {
	bb, err := d.inst.FPDF_GetPageBoundingBox(&requests.FPDF_GetPageBoundingBox{Page: page})
	if err != nil {
		return nil, err
	}
	rot, err := d.inst.FPDFPage_GetRotation(&requests.FPDFPage_GetRotation{Page: page})
	if err != nil {
		return nil, err
	}
	if rot.PageRotation != enums.FPDF_PAGE_ROTATION_NONE {
		if _, err := d.inst.FPDFPage_SetRotation(&requests.FPDFPage_SetRotation{Page: page, Rotate: enums.FPDF_PAGE_ROTATION_NONE}); err != nil {
			return nil, err
		}
	}
	box := pageBox{l: float64(bb.Rect.Left), b: float64(bb.Rect.Bottom), r: float64(bb.Rect.Right), t: float64(bb.Rect.Top),
		rotate: int(rot.PageRotation), w: bounds.Dx(), h: bounds.Dy()}
	flat := box // the page unturned, at the same scale: where words are put together
	flat.rotate = 0
	if box.rotate&1 == 1 {
		flat.w, flat.h = box.h, box.w
	}
	tp, err := d.inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: page})
	if err != nil {
		return nil, err
	}
	defer d.inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := d.inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return nil, err
	}
	if n.Count <= 0 || n.Count > maxTextChars {
		return nil, nil
	}
	var words []Word
	var cur strings.Builder
	var at image.Rectangle // the word so far on the unturned page
	var l, b, r, t float64 // and in page space
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, Word{Text: cur.String(), Box: box.pixels(l, b, r, t)})
		}
		cur.Reset()
		at = image.Rectangle{}
	} // Invisible text (render mode 3) is not printed: it is a scanner's OCR laid over the page's
	// image, as wrong as any OCR, and no proof of what the page shows. A scan with such a layer
	// has no text layer here.
	invisible := map[references.FPDF_PAGEOBJECT]bool{}
	hidden := func(i int) bool {
		o, err := d.inst.FPDFText_GetTextObject(&requests.FPDFText_GetTextObject{TextPage: tp.TextPage, Index: i})
		if err != nil || o.TextObject == "" {
			return false // a generated character (a space, a line end): no object of its own
		}
		h, ok := invisible[o.TextObject]
		if !ok {
			m, err := d.inst.FPDFTextObj_GetTextRenderMode(&requests.FPDFTextObj_GetTextRenderMode{PageObject: o.TextObject})
			h = err == nil && (m.TextRenderMode == enums.FPDF_TEXTRENDERMODE_INVISIBLE || m.TextRenderMode == enums.FPDF_TEXTRENDERMODE_CLIP)
			invisible[o.TextObject] = h
		}
		return h
	}
	for i := range n.Count {
		u, err := d.inst.FPDFText_GetUnicode(&requests.FPDFText_GetUnicode{TextPage: tp.TextPage, Index: i})
		if err != nil {
			return nil, err
		}
		c := rune(u.Unicode)
		if u.Unicode > unicode.MaxRune || c == 0 || c == 0xfffe || unicode.IsSpace(c) || !utf8.ValidRune(c) || hidden(i) {
			flush()
			continue
		}
		lb, err := d.inst.FPDFText_GetLooseCharBox(&requests.FPDFText_GetLooseCharBox{TextPage: tp.TextPage, Index: i})
		if err != nil { // a character with no box (PDFium has none for some generated ones)
			flush()
			continue
		}
		cl, cb, cr, ct := float64(lb.Rect.Left), float64(lb.Rect.Bottom), float64(lb.Rect.Right), float64(lb.Rect.Top)
		px := flat.pixels(cl, cb, cr, ct)
		if mid := image.Pt((px.Min.X+px.Max.X)/2, (px.Min.Y+px.Max.Y)/2); !mid.In(image.Rect(0, 0, flat.w, flat.h)) {
			flush() // outside the page as rendered: cropped away
			continue
		}
		if cur.Len() > 0 && !sameWord(at, px) { // the next character is elsewhere: a new word
			flush()
		}
		if cur.Len() == 0 {
			l, b, r, t = cl, cb, cr, ct
		}
		l, b, r, t = math.Min(l, cl), math.Min(b, cb), math.Max(r, cr), math.Max(t, ct)
		cur.WriteRune(c)
		at = at.Union(px)
	}
	flush()
	return words, nil
}

// sameWord reports whether the next character r continues the word at: on the same line (their
// boxes overlap across it) and not far from it (within half the line's height), whichever way
// the line runs on the rendered page (a turned page runs top to bottom, or right to left).
func sameWord(at, r image.Rectangle) bool {
	if at.Empty() {
		return true
	}
	if min(at.Max.Y, r.Max.Y) > max(at.Min.Y, r.Min.Y) { // a line across
		gap := max(r.Min.X-at.Max.X, at.Min.X-r.Max.X)
		return gap < max(2, at.Dy()/2)
	}
	if min(at.Max.X, r.Max.X) > max(at.Min.X, r.Min.X) { // a line down
		gap := max(r.Min.Y-at.Max.Y, at.Min.Y-r.Max.Y)
		return gap < max(2, at.Dx()/2)
	}
	return false
}

// pageBox maps page space (points, y up, before /Rotate) to the pixels of the rendered page.
type pageBox struct {
	l, b, r, t float64 // the page's bounding box in page space
	rotate     int     // quarter turns clockwise, as /Rotate
	w, h       int     // the rendered page, after rotation
}

func (p pageBox) pixels(x0, y0, x1, y1 float64) image.Rectangle {
	pw, ph := p.r-p.l, p.t-p.b
	// u, v in [0, 1]: across and down the page as shown.
	at := func(x, y float64) (float64, float64) {
		switch p.rotate {
		case 1:
			return (y - p.b) / ph, (x - p.l) / pw
		case 2:
			return (p.r - x) / pw, (y - p.b) / ph
		case 3:
			return (p.t - y) / ph, (p.r - x) / pw
		}
		return (x - p.l) / pw, (p.t - y) / ph
	}
	u0, v0 := at(x0, y0)
	u1, v1 := at(x1, y1)
	W, H := float64(p.w), float64(p.h)
	return image.Rect(int(math.Floor(math.Min(u0, u1)*W)), int(math.Floor(math.Min(v0, v1)*H)),
		int(math.Ceil(math.Max(u0, u1)*W)), int(math.Ceil(math.Max(v0, v1)*H)))
}
