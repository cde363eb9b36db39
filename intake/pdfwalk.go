package intake

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/klippa-app/go-pdfium/enums"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"

	"github.com/ocrdraft/ocrdraft/problem"
)

// The bounds of what PDFium is asked to draw, checked page by page before a page is drawn
// (pdfWalk), each against the walk of the page's objects at every depth of its forms, and of its
// annotations' appearances, as PDFium will draw them. What a page's drawing costs is its objects, the segments of its paths and the
// pixels of its images (decoded, one by one and all together); none of it shows in the file's
// size: 16 KB of compressed content can hold a million lines, 1 KB a JPEG of 60000×60000.
const (
	// maxPageObjects is the most drawing objects of a page, its forms' at every depth included;
	// a report page has hundreds to a few thousand (one a glyph, where a writer places each).
	// A document has at most pdfDocFactor times that in all its pages. The walk itself costs
	// about 36 µs of one core an object (four calls into PDFium), 0.9 s at the bound.
	maxPageObjects = 25_000
	// maxPageSegments is the most path segments (lines, curves, rectangles) of a page: a ruled
	// report page has a few thousand. PDFium draws a short stroked segment in about 16 µs of one
	// core (100 000 short strokes, 3.3 s), so that this bound alone costs about 0.8 s.
	maxPageSegments = 50_000
	// maxPageDraw is the most length of paths a page may ask PDFium to draw, in pixels of a
	// render at a 2048-pixel long edge (less in proportion at a smaller edge): each path's
	// segments times the diagonal of its box, as none is longer. Long strokes cost about 200 ns
	// a pixel, more where they cross each other (2000 lines zigzagging across an A4 page, 7
	// million, took 1.4 s); a ruled report page asks for under a million. Its price is that a
	// vector chart of thousands of points across the page (an ECG) is refused: sent as a
	// scan or photo, it is read.
	maxPageDraw = 10_000_000
	// maxPageArea is how many times its own area a page may ask PDFium to fill or stretch
	// images over (each path's and image's box): a fill costs about a nanosecond a pixel.
	maxPageArea = 128
	// pdfDocFactor bounds a document's total against its pages' bounds: its objects, and its
	// images' pixels (Limits.MaxPixels a page, pdfDocFactor times that in all its pages).
	pdfDocFactor = 4
	// pdfPixelBytes is what PDFium holds for one pixel of an image it draws, at most: it
	// decodes and draws an image a band at a time (a 40-megapixel Flate image took the
	// instance to 60 MiB at its peak in grey, 40 MiB in RGB; docs/performance.md). A
	// progressive JPEG's coefficients come besides (dctImage).
	pdfPixelBytes = 2
	// pdfProgressive is how much more a progressive JPEG costs PDFium to draw than Go's
	// decoder to decode (cost.go's work): a 4-megapixel grey one of 10 scans took 1.5 s of one
	// core, a 16-megapixel colour one of 3 scans 2.2 s, 15 to 30 times Go's time. A baseline
	// JPEG costs PDFium about what it costs Go.
	pdfProgressive = 16
	// maxPageAnnots is the most annotations a page may have: PDFium opens and draws each (its
	// appearance, walked as the page's objects are). A filled form page has tens to a few
	// hundred fields; the text layer is already given up past 1000 (annotated, pdf.go).
	maxPageAnnots = 1000
)

// pdfTally is what the pages walked so far of one document hold: their objects, their images'
// pixels and the bytes of image streams read to size them.
type pdfTally struct {
	objects, pixels, raw int64
}

// pdfWalk refuses page i of d, before it is drawn, when drawing it would cost more than the
// bounds above allow, or more than Limits allow an upload: an image of more than MaxPixels
// (sized from its JPEG or JPEG 2000 stream, which PDFium decodes at the stream's size whatever
// the dictionary says), a JPEG over the scan and work bounds of an uploaded JPEG, images of more
// than MaxPixels together, or than images bytes of PDFium's memory. doc is the document's tally
// of the pages before, to which the page's is added. Errors are *problem.Error, image_too_large
// or image_unreadable, whose detail names the bound. slow is the refusal of a page whose
// progressive JPEG is within the bounds of Go's decoder but not of PDFium's: it stands unless
// the page goes as that JPEG (pdfScan), decoded in Go.
func (p *Preparer) pdfWalk(d *pdfDoc, i int, doc *pdfTally, images int64) (slow, err error) {
	w := &pageWalk{p: p, d: d, i: i, doc: doc, images: images,
		page: requests.Page{ByIndex: &requests.PageByIndex{Document: d.doc, Index: i}}}
	size, err := d.inst.GetPageSize(&requests.GetPageSize{Page: w.page})
	if err != nil {
		return nil, w.broken(err)
	}
	w.width, w.height = size.Width, size.Height
	w.long = float64(p.l.MaxEdge) / math.Max(1, math.Max(size.Width, size.Height)) // pixels a point
	w.most = float64(cmp.Or(p.pdfDraw, maxPageDraw)) * float64(p.l.MaxEdge) / 2048
	w.area = maxPageArea * size.Width * size.Height * w.long * w.long
	if p.pdfDraw != 0 {
		w.area = float64(p.pdfDraw)
	}
	n, err := d.inst.FPDFPage_CountObjects(&requests.FPDFPage_CountObjects{Page: w.page})
	if err != nil {
		return nil, w.broken(err)
	}
	if err := w.walk([]walkFrame{{count: n.Count, scale: w.long}}); err != nil {
		return nil, err
	}
	// Annotations are drawn (RenderPageInPixels with FPDF_ANNOT and the form), each its normal
	// appearance: its objects are walked as the page's, into the page's totals.
	na, err := d.inst.FPDFPage_GetAnnotCount(&requests.FPDFPage_GetAnnotCount{Page: w.page})
	if err != nil {
		return nil, w.broken(err)
	}
	if na.Count > maxPageAnnots {
		return nil, w.refuse("has more than %d annotations to draw", maxPageAnnots)
	}
	for j := range na.Count {
		a, err := d.inst.FPDFPage_GetAnnot(&requests.FPDFPage_GetAnnot{Page: w.page, Index: j})
		if err != nil {
			return nil, w.broken(err)
		}
		if err := w.annot(a.Annotation); err != nil {
			return nil, err
		}
	}
	return w.slow, nil
}

// pageWalk is pdfWalk's walk of one page: the page, its bounds, and what it has counted so far
// (and doc, the document's tally, to which the page's is added).
type pageWalk struct {
	p      *Preparer
	d      *pdfDoc
	i      int
	page   requests.Page
	doc    *pdfTally
	images int64 // the bytes of PDFium's memory the page's images may take

	width, height float64 // the page, in points
	long          float64 // pixels of the rendered page a point
	most, area    float64 // the most length of paths it may draw, the most area it may fill

	objects, segments, pixels, mem int64
	drawn, filled                  float64
	slow                           error // see pdfWalk
}

// walkFrame is one level of the walk: the page, an annotation's appearance or a form in them.
type walkFrame struct {
	form        references.FPDF_PAGEOBJECT // "" for the page or the annotation itself
	annot       references.FPDF_ANNOTATION // the annotation whose appearance this is, if any
	count, next int
	scale       float64 // pixels of the rendered page to a unit of the form's space, at most
	// box is, in an annotation's appearance, the diagonal and the area in pixels of the
	// annotation's rectangle, into which PDFium fits and clips the appearance at whatever
	// scale its /BBox and /Matrix ask (neither of which PDFium's API shows): every segment is
	// counted as long as the diagonal and every object as filling the rectangle.
	diag, area float64
}

func (w *pageWalk) refuse(what string, args ...any) error {
	return problem.Errorf(problem.ImageTooLarge, "page %d of the PDF %s: send a scan or photo of it instead", w.i+1, fmt.Sprintf(what, args...))
}

func (w *pageWalk) broken(err error) error {
	if w.d.mem.Refused { // PDFium aborts when it cannot grow: the page needs more than its cap
		return pdfMemoryRefusal(err, w.d.mem.Max, fmt.Sprintf("reading page %d of", w.i+1))
	}
	return &problem.Error{Code: problem.ImageUnreadable, Err: err,
		Detail: fmt.Sprintf("page %d of the PDF could not be read; export or download it again", w.i+1)}
}

// draw adds an object's box, in its form's space, to what the page draws: each of its segments
// as long as the box's diagonal, and its area filled.
func (w *pageWalk) draw(obj references.FPDF_PAGEOBJECT, top *walkFrame, segs int64) error {
	if top.annot != "" {
		w.drawn += float64(segs) * math.Max(1, top.diag)
		w.filled += top.area
	} else {
		b, err := w.d.inst.FPDFPageObj_GetBounds(&requests.FPDFPageObj_GetBounds{PageObject: obj})
		if err != nil {
			return nil // no box: nothing drawn
		}
		bw, bh := math.Abs(float64(b.Right-b.Left))*top.scale, math.Abs(float64(b.Top-b.Bottom))*top.scale
		w.drawn += float64(segs) * math.Max(1, math.Hypot(bw, bh))
		w.filled += bw * bh
	}
	switch {
	case w.drawn > w.most || math.IsNaN(w.drawn):
		return w.refuse("draws more than %.1f million pixels of paths", w.most/1e6)
	case w.filled > w.area || math.IsNaN(w.filled):
		return w.refuse("fills more than %d times its area", maxPageArea)
	}
	return nil
}

// walk walks the objects of a page or of an annotation's appearance, at every depth of their
// forms, adding to the page's and the document's totals.
func (w *pageWalk) walk(stack []walkFrame) error {
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next >= top.count {
			stack = stack[:len(stack)-1]
			continue
		}
		w.d.stats.walked.Add(1)
		if w.objects++; w.objects > maxPageObjects {
			return w.refuse("has more than %d drawing objects", maxPageObjects)
		}
		if w.doc.objects++; w.doc.objects > pdfDocFactor*maxPageObjects {
			return w.refuse("brings the document's drawing objects to more than %d", pdfDocFactor*maxPageObjects)
		}
		obj, err := w.object(top)
		if err != nil {
			return err
		}
		top.next++
		inner, err := w.visit(obj, top)
		if err != nil {
			return err
		}
		if inner != nil {
			stack = append(stack, *inner)
		}
	}
	return nil
}

// object is the next object of top's level.
func (w *pageWalk) object(top *walkFrame) (references.FPDF_PAGEOBJECT, error) {
	d := w.d
	switch {
	case top.form != "":
		o, err := d.inst.FPDFFormObj_GetObject(&requests.FPDFFormObj_GetObject{PageObject: top.form, Index: uint64(top.next)})
		if err != nil {
			return "", w.broken(err)
		}
		return o.PageObject, nil
	case top.annot != "":
		o, err := d.inst.FPDFAnnot_GetObject(&requests.FPDFAnnot_GetObject{Annotation: top.annot, Index: top.next})
		if err != nil {
			return "", w.broken(err)
		}
		return o.PageObject, nil
	}
	o, err := d.inst.FPDFPage_GetObject(&requests.FPDFPage_GetObject{Page: w.page, Index: top.next})
	if err != nil {
		return "", w.broken(err)
	}
	return o.PageObject, nil
}

// visit counts one object of top's level: a path's segments, an image's pixels and memory, or
// a form, whose level it returns to be walked next.
func (w *pageWalk) visit(obj references.FPDF_PAGEOBJECT, top *walkFrame) (*walkFrame, error) {
	d, l := w.d, w.p.l
	typ, err := d.inst.FPDFPageObj_GetType(&requests.FPDFPageObj_GetType{PageObject: obj})
	if err != nil {
		return nil, w.broken(err)
	}
	switch typ.Type {
	case enums.FPDF_PAGEOBJ_PATH:
		c, err := d.inst.FPDFPath_CountSegments(&requests.FPDFPath_CountSegments{PageObject: obj})
		if err != nil {
			return nil, w.broken(err)
		}
		if w.segments += int64(max(c.Count, 0)); w.segments > maxPageSegments {
			return nil, w.refuse("has more than %d path segments to draw", maxPageSegments)
		}
		return nil, w.draw(obj, top, int64(max(c.Count, 0)))
	case enums.FPDF_PAGEOBJ_IMAGE:
		im, err := w.p.pdfImage(d, obj, w.doc)
		if err != nil {
			return nil, w.refuse("%s", err)
		}
		if im.slow != nil && w.slow == nil {
			w.slow = w.refuse("%s", im.slow)
		}
		if im.px > int64(l.MaxPixels) {
			return nil, w.refuse("holds %s of %d×%d pixels; the limit is %.1f megapixels", im.what, im.w, im.h, float64(l.MaxPixels)/1e6)
		}
		if w.pixels += im.px; w.pixels > int64(l.MaxPixels) {
			return nil, w.refuse("holds images of more than %.1f megapixels in all", float64(l.MaxPixels)/1e6)
		}
		if w.doc.pixels += im.px; w.doc.pixels > pdfDocFactor*int64(l.MaxPixels) {
			return nil, w.refuse("brings the document's images to more than %.0f megapixels in all", pdfDocFactor*float64(l.MaxPixels)/1e6)
		}
		if w.mem += im.mem; w.mem > w.images {
			return nil, w.refuse("holds images that take more than %s of memory to draw", mib(w.images))
		}
		return nil, w.draw(obj, top, 0)
	case enums.FPDF_PAGEOBJ_FORM: // drawn at any depth PDFium goes to, so walked at any
		c, err := d.inst.FPDFFormObj_CountObjects(&requests.FPDFFormObj_CountObjects{PageObject: obj})
		if err != nil {
			return nil, w.broken(err)
		}
		scale := top.scale
		if m, err := d.inst.FPDFPageObj_GetMatrix(&requests.FPDFPageObj_GetMatrix{PageObject: obj}); err == nil {
			a, b, c, dd := float64(m.Matrix.A), float64(m.Matrix.B), float64(m.Matrix.C), float64(m.Matrix.D)
			// the most the matrix stretches any length: its largest singular value
			sq, det := a*a+b*b+c*c+dd*dd, a*dd-b*c
			scale *= math.Sqrt((sq + math.Sqrt(math.Max(0, sq*sq-4*det*det))) / 2)
		}
		return &walkFrame{form: obj, annot: top.annot, count: c.Count, scale: scale, diag: top.diag, area: top.area}, nil
	}
	return nil, nil
}

// annot walks annotation a's appearance, or counts what PDFium will write for one that has
// none; a is closed after.
func (w *pageWalk) annot(a references.FPDF_ANNOTATION) error {
	d := w.d
	defer d.inst.FPDFPage_CloseAnnot(&requests.FPDFPage_CloseAnnot{Annotation: a})
	// its appearance's objects live while it is open: walked before it is closed
	c, err := d.inst.FPDFAnnot_GetObjectCount(&requests.FPDFAnnot_GetObjectCount{Annotation: a})
	if err != nil {
		return w.broken(err)
	}
	top := walkFrame{annot: a, count: c.Count, scale: w.long}
	if r, err := d.inst.FPDFAnnot_GetRect(&requests.FPDFAnnot_GetRect{Annotation: a}); err == nil {
		rw := math.Min(math.Abs(float64(r.Rect.Right-r.Rect.Left)), w.width) * w.long
		rh := math.Min(math.Abs(float64(r.Rect.Top-r.Rect.Bottom)), w.height) * w.long
		top.diag, top.area = math.Hypot(rw, rh), rw*rh
	} else { // no rectangle read: the whole page
		rw, rh := w.width*w.long, w.height*w.long
		top.diag, top.area = math.Hypot(rw, rh), rw*rh
	}
	if c.Count > 0 {
		return w.walk([]walkFrame{top})
	}
	segs, err := w.generated(a)
	if err != nil {
		return err
	}
	if w.segments += segs; w.segments > maxPageSegments {
		return w.refuse("has more than %d path segments to draw", maxPageSegments)
	}
	if segs == 0 {
		return nil
	}
	return w.draw("", &top, segs)
}

// generated counts the segments of the appearance PDFium writes itself as it draws the page,
// for an annotation without one: for an ink annotation a line through each of its points (5000
// took 2.7 s, 100 000 13.6 s, unseen), for a markup of text one shape a quadrilateral.
func (w *pageWalk) generated(a references.FPDF_ANNOTATION) (int64, error) {
	d := w.d
	var segs int64
	st, err := d.inst.FPDFAnnot_GetSubtype(&requests.FPDFAnnot_GetSubtype{Annotation: a})
	if err != nil {
		return 0, w.broken(err)
	}
	switch st.Subtype {
	case enums.FPDF_ANNOT_SUBTYPE_INK:
		k, err := d.inst.FPDFAnnot_GetInkListCount(&requests.FPDFAnnot_GetInkListCount{Annotation: a})
		if err != nil {
			return 0, nil // no ink list: nothing generated
		}
		for l := range min(uint64(k.Count), maxPageSegments+1) {
			if w.segments+segs > maxPageSegments {
				break
			}
			path, err := d.inst.FPDFAnnot_GetInkListPath(&requests.FPDFAnnot_GetInkListPath{Annotation: a, Index: l})
			if err != nil {
				return 0, w.broken(err)
			}
			segs += int64(max(len(path.Path), 1))
		}
	case enums.FPDF_ANNOT_SUBTYPE_HIGHLIGHT, enums.FPDF_ANNOT_SUBTYPE_UNDERLINE,
		enums.FPDF_ANNOT_SUBTYPE_STRIKEOUT, enums.FPDF_ANNOT_SUBTYPE_SQUIGGLY:
		q, err := d.inst.FPDFAnnot_CountAttachmentPoints(&requests.FPDFAnnot_CountAttachmentPoints{Annotation: a})
		if err != nil {
			return 0, nil
		}
		segs = 4 * int64(min(q.Count, maxPageSegments))
	}
	return segs, nil
}

// pdfImg is an image object as PDFium will decode it.
type pdfImg struct {
	w, h int
	px   int64  // pixels decoded
	mem  int64  // bytes PDFium holds to draw it
	what string // "an image", "a JPEG", for a refusal
	slow error  // a progressive JPEG over PDFium's work bound (not Go's)
}

// pdfImage sizes an image object. A JPEG (DCTDecode) or JPEG 2000 (JPXDecode) is decoded at the
// size its own stream says, which the image's dictionary need not match; the stream is read
// (its bytes counted in doc.raw, at most twice MaxBytes a document) and sized from its frame,
// and a JPEG is held to the scan and work bounds of an uploaded one, which PDFium's decoder
// does not have. Any other image is decoded at its dictionary's size. An image PDFium cannot
// size draws nothing. The error's text is the refusal's, after "page N of the PDF".
func (p *Preparer) pdfImage(d *pdfDoc, obj references.FPDF_PAGEOBJECT, doc *pdfTally) (pdfImg, error) {
	im := pdfImg{what: "an image"}
	sz, err := d.inst.FPDFImageObj_GetImagePixelSize(&requests.FPDFImageObj_GetImagePixelSize{ImageObject: obj})
	if err == nil {
		im.w, im.h = int(sz.Width), int(sz.Height)
	}
	var filters []string
	if fc, err := d.inst.FPDFImageObj_GetImageFilterCount(&requests.FPDFImageObj_GetImageFilterCount{ImageObject: obj}); err == nil {
		for j := range min(max(0, fc.Count), 8) {
			f, err := d.inst.FPDFImageObj_GetImageFilter(&requests.FPDFImageObj_GetImageFilter{ImageObject: obj, Index: j})
			if err != nil {
				break
			}
			filters = append(filters, f.ImageFilter)
		}
	}
	last := ""
	if len(filters) > 0 {
		last = filters[len(filters)-1]
	}
	if last == "DCT" || last == "DCTDecode" || last == "JPX" || last == "JPXDecode" {
		raw, err := d.inst.FPDFImageObj_GetImageDataRaw(&requests.FPDFImageObj_GetImageDataRaw{ImageObject: obj})
		if err != nil {
			return im.sized(), nil
		}
		d.stats.raw.Add(int64(len(raw.Data)))
		if doc.raw += int64(len(raw.Data)); doc.raw > 2*p.l.MaxBytes {
			return im, fmt.Errorf("holds images whose streams are more than %s in all", mib(2*p.l.MaxBytes))
		}
		data, err := unfilter(raw.Data, filters[:len(filters)-1], p.l.MaxBytes)
		if err != nil {
			return im, err
		}
		if last == "JPX" || last == "JPXDecode" {
			return jpxImage(im, data), nil
		}
		return p.dctImage(im, data)
	}
	return im.sized(), nil
}

func (im pdfImg) sized() pdfImg {
	im.px = int64(max(im.w, 0)) * int64(max(im.h, 0))
	im.mem = pdfPixelBytes * im.px
	return im
}

// unfilter undoes the filters before an image's own (FlateDecode, as a few writers wrap a
// JPEG), in Go and to at most max bytes; any other is refused, as no writer of reports uses it.
func unfilter(data []byte, filters []string, most int64) ([]byte, error) {
	for _, f := range filters {
		if f != "FlateDecode" && f != "Fl" {
			return nil, fmt.Errorf("holds an image stored with %s before its own compression, which is not read here", f)
		}
		z, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("holds an image whose compressed stream is corrupt")
		}
		out, err := io.ReadAll(io.LimitReader(z, most+1))
		if int64(len(out)) > most {
			return nil, fmt.Errorf("holds an image stream of more than %s", mib(most))
		}
		if err != nil && len(out) == 0 {
			return nil, fmt.Errorf("holds an image whose compressed stream is corrupt")
		}
		data = out
	}
	return data, nil
}

// dctImage sizes a JPEG from its frame and bounds its decode as an uploaded JPEG's is (its scans
// and work, cost.go). PDFium's decoder (libjpeg) holds the coefficients of a progressive file at
// half the bytes of Go's.
func (p *Preparer) dctImage(im pdfImg, data []byte) (pdfImg, error) {
	w, h, ok := jpegFrame(data)
	if !ok {
		return im.sized(), nil // no frame: PDFium cannot decode it and draws nothing
	}
	im.w, im.h, im.what = w, h, "a JPEG"
	if im = im.sized(); im.px > int64(p.l.MaxPixels) {
		return im, nil // refused for its size
	}
	c, err := jpegCost(data, nil)
	if err != nil { // a frame Go's decoder does not read (arithmetic coding, lossless): its scans
		c = cost{what: "JPEG"}
		walkJPEG(data, func(s jpegSeg) bool {
			if s.marker == 0xda {
				c.scans++
				c.work += 3 * im.px * 3 // every sample of three components, transformed
			}
			return true
		})
	}
	l := p.l
	switch {
	case c.scans > l.MaxScans:
		return im, fmt.Errorf("holds a JPEG of %d scans; the limit is %d", c.scans, l.MaxScans)
	case c.work > l.MaxDecodeWork:
		return im, fmt.Errorf("holds a %d×%d %s that takes %d million samples of work to decode (%d scans); the limit is %d million",
			w, h, c.what, c.work/1e6, c.scans, l.MaxDecodeWork/1e6)
	}
	if c.what == "progressive JPEG" {
		im.mem += c.mem / 2
		if c.work*pdfProgressive > l.MaxDecodeWork {
			im.slow = fmt.Errorf("holds a %d×%d progressive JPEG that takes PDFium %d million samples of work to draw (%d scans, %d times Go's work); the limit is %d million",
				w, h, c.work*pdfProgressive/1e6, c.scans, pdfProgressive, l.MaxDecodeWork/1e6)
		}
	}
	return im, nil
}

// jpegFrame returns the size in a JPEG's first frame header (any SOFn), as libjpeg reads it.
func jpegFrame(data []byte) (w, h int, ok bool) {
	walkJPEG(data, func(s jpegSeg) bool {
		m := s.marker
		if m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc && len(s.body) >= 5 {
			h, w, ok = int(s.body[1])<<8|int(s.body[2]), int(s.body[3])<<8|int(s.body[4]), true
			return false
		}
		return m != 0xda
	})
	return w, h, ok
}

// jpxImage sizes a JPEG 2000 image from its codestream's SIZ marker (in a JP2 file or bare),
// the size and components OpenJPEG decodes, each sample held as 4 bytes; a stream without one
// keeps its dictionary's size (OpenJPEG cannot decode it).
func jpxImage(im pdfImg, data []byte) pdfImg {
	im = im.sized()
	at := bytes.Index(data, []byte{0xff, 0x4f, 0xff, 0x51})
	if at < 0 || len(data) < at+4+38 {
		return im
	}
	siz := data[at+4:]
	u := func(o int) int64 { return int64(binary.BigEndian.Uint32(siz[o:])) }
	w, h := min(u(4)-u(12), 1<<31-1), min(u(8)-u(16), 1<<31-1) // Xsiz−XOsiz, Ysiz−YOsiz
	comps := int64(binary.BigEndian.Uint16(siz[36:]))
	if w <= 0 || h <= 0 {
		return im
	}
	im.w, im.h, im.what = int(w), int(h), "a JPEG 2000 image"
	im.px = w * h
	im.mem = 4*im.px*max(comps, 1) + 4*im.px
	return im
}
