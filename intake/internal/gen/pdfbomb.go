package gen

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// The hostile PDFs of intake's work bounds: each asks PDFium for work that no header shows
// (forms nested past a walk's depth, an image whose JPEG is larger than its dictionary says, a
// million lines in a few kilobytes, images each within the limits and not together), built by
// RawPDF from objects written out here.

// RawPage is one page of RawPDF: its content (FlateDecode-compressed when Flate is set) and the
// XObjects its resources name, in order /X0, /X1, … (object numbers from RawPDF.Add).
type RawPage struct {
	W, H     float64
	Content  []byte
	Flate    bool
	XObjects []int
	Annots   []int // annotation dictionaries (RawPDF.Annot), in the page's /Annots
}

// RawPDF is a PDF built object by object.
type RawPDF struct {
	d     pdfDoc
	pages []RawPage
}

// Stream adds a stream object of dict and data and returns its number; flate compresses data
// and adds the FlateDecode filter in front of any in dict's /Filter (write dict's filters as
// "/Filter [ ... ]" or none).
func (r *RawPDF) Stream(dict string, data []byte, flate bool) int {
	if flate {
		data = Deflate(data)
		if i := strings.Index(dict, "/Filter ["); i >= 0 {
			dict = dict[:i] + "/Filter [/FlateDecode " + dict[i+len("/Filter ["):]
		} else {
			dict += " /Filter /FlateDecode"
		}
	}
	return r.d.stream(dict, data)
}

// Annot adds an annotation of subtype (Stamp, Widget, …) over rect whose normal appearance
// (/AP /N) is the form XObject ap, and returns its number for RawPage.Annots; a Widget is a
// text field with a value, so that a form filler draws it as well.
func (r *RawPDF) Annot(subtype string, rect [4]float64, ap int) int {
	extra := ""
	if subtype == "Widget" {
		extra = " /FT /Tx /T (f) /V (1)"
	}
	return r.d.add(fmt.Sprintf("<< /Type /Annot /Subtype /%s /Rect [%g %g %g %g] /F 4%s /AP << /N %d 0 R >> >>",
		subtype, rect[0], rect[1], rect[2], rect[3], extra, ap))
}

// Ink adds an ink annotation over rect with no appearance stream, of one stroke of n points
// zigzagging across it: PDFium writes its appearance itself when it draws the page.
func (r *RawPDF) Ink(rect [4]float64, n int) int {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%g %g ", rect[0]+(rect[2]-rect[0])*float64(i&1), rect[1]+(rect[3]-rect[1])*float64(i%1000)/1000)
	}
	return r.d.add(fmt.Sprintf("<< /Type /Annot /Subtype /Ink /Rect [%g %g %g %g] /F 4 /InkList [[%s]] >>",
		rect[0], rect[1], rect[2], rect[3], b.String()))
}

// Add adds a page.
func (r *RawPDF) Add(p RawPage) { r.pages = append(r.pages, p) }

// Form adds a Form XObject of content drawing the XObjects xs (as /X0, /X1, …).
func (r *RawPDF) Form(content []byte, flate bool, xs ...int) int {
	return r.Stream(fmt.Sprintf("/Type /XObject /Subtype /Form /BBox [0 0 1000 1000] /Resources << %s >>", xobjects(xs)), content, flate)
}

// Image adds an image XObject of w×h grey pixels with data as its stream, after filter (a
// PDF filter name such as "/DCTDecode", or "" for raw samples); flate puts FlateDecode first.
func (r *RawPDF) Image(w, h int, filter string, data []byte, flate bool) int {
	dict := fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", w, h)
	if filter != "" {
		dict += " /Filter [" + filter + "]"
	}
	return r.Stream(dict, data, flate)
}

func xobjects(xs []int) string {
	if len(xs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("/XObject <<")
	for i, x := range xs {
		fmt.Fprintf(&b, " /X%d %d 0 R", i, x)
	}
	b.WriteString(" >>")
	return b.String()
}

// Bytes writes the document.
func (r *RawPDF) Bytes() []byte {
	catalog, tree := r.d.add(""), r.d.add("")
	var kids []string
	for _, p := range r.pages {
		dict := ""
		if p.Flate {
			dict = "/Filter /FlateDecode"
		}
		content := p.Content
		if p.Flate {
			content = Deflate(content)
		}
		c := r.d.stream(dict, content)
		annots := ""
		if len(p.Annots) > 0 {
			var refs []string
			for _, a := range p.Annots {
				refs = append(refs, fmt.Sprintf("%d 0 R", a))
			}
			annots = " /Annots [" + strings.Join(refs, " ") + "]"
		}
		page := r.d.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %g %g] /Resources << %s >> /Contents %d 0 R%s >>",
			tree, p.W, p.H, xobjects(p.XObjects), c, annots))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	r.d.set(tree, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	r.d.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	r.d.id = "0123456789abcdef0123456789abcdef"
	return r.d.bytes(catalog)
}

// Deflate compresses data with zlib, as FlateDecode reads it.
func Deflate(data []byte) []byte {
	var b bytes.Buffer
	z, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	z.Write(data)
	z.Close()
	return b.Bytes()
}

// Draw is the content that draws each of n XObjects /X0 … over the whole of a w×h area.
func Draw(n int, w, h float64) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "q %g 0 0 %g 0 0 cm /X%d Do Q\n", w, h, i)
	}
	return []byte(b.String())
}

// Nested adds depth Form XObjects, each drawing the next, the last drawing inner (an XObject),
// and returns the outermost: what a page's one /X0 draws.
func (r *RawPDF) Nested(depth int, inner int) int {
	x := inner
	for range depth {
		x = r.Form([]byte("q 1 0 0 1 0 0 cm /X0 Do Q\n"), false, x)
	}
	return x
}

// Lines is a path of n lines zigzagging across a w×h area, stroked: n segments for PDFium to
// draw, a few bytes each before compression and almost nothing after.
func Lines(n int, w, h float64) []byte {
	var b strings.Builder
	b.WriteString("0.1 w 0 0 m\n")
	for i := range n {
		fmt.Fprintf(&b, "%g %g l\n", w*float64(i&1), h*float64(i%1000)/1000)
	}
	b.WriteString("S\n")
	return []byte(b.String())
}

// BrokenXref is a PDF of pages pages, each drawing a rectangle, with filler objects of no
// use, whose cross-reference table is missing (startxref points nowhere): a reader rebuilds
// it by scanning every object, the work of the whole file, each time it opens it.
func BrokenXref(pages, filler int) []byte {
	var r RawPDF
	for i := range filler {
		r.d.add(fmt.Sprintf("<< /Filler %d >>", i))
	}
	for range pages {
		r.Add(RawPage{W: 595, H: 842, Content: []byte("0 0 1 1 re f\n")})
	}
	data := r.Bytes()
	at := bytes.LastIndex(data, []byte("xref\n0 "))
	end := bytes.LastIndex(data, []byte("trailer\n"))
	out := append([]byte{}, data[:at]...)
	out = append(out, data[end:]...)
	return bytes.Replace(out, []byte("startxref\n"), []byte("startxref\n9"), 1)
}

// The pages below ask PDFium for work its API does not show before drawing (a soft mask is
// not the image's size, a Type3 glyph is a text object, a pattern or shading fill reads as a
// colour): what only a bound on the drawing's own work answers.

// form adds a page drawing one Form XObject over the page, of content with resources res.
func (r *RawPDF) form(res string, content []byte) {
	x := r.Stream("/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << "+res+" >>", content, true)
	r.Add(RawPage{W: 595, H: 842, Content: []byte("/X0 Do\n"), XObjects: []int{x}})
}

// AddSoftMasked adds a page of a 10×10 image over the page whose soft mask (/SMask) is n×n.
func (r *RawPDF) AddSoftMasked(n int) {
	sm := r.Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", n, n),
		make([]byte, n*n), true)
	im := r.Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width 10 /Height 10 /ColorSpace /DeviceGray /BitsPerComponent 8 /SMask %d 0 R", sm),
		make([]byte, 100), true)
	r.Add(RawPage{W: 595, H: 842, Content: Draw(1, 595, 842), XObjects: []int{im}})
}

// AddType3 adds a page showing glyphs characters of a Type3 font whose one glyph draws a path of
// lines lines (a coloured glyph, d0, which PDFium draws each time rather than from its cache).
func (r *RawPDF) AddType3(glyphs, lines int) {
	proc := r.Stream("", append([]byte("0 0 d0\n"), Lines(lines, 1000, 1000)...), true)
	r.form(fmt.Sprintf("/Font << /F1 << /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] /FontMatrix [0.001 0 0 0.001 0 0] "+
		"/CharProcs << /a %d 0 R >> /Encoding << /Type /Encoding /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [1000] "+
		"/Resources << >> >> >>", proc), []byte("BT /F1 50 Tf 10 10 Td ("+strings.Repeat("a", glyphs)+") Tj ET\n"))
}

// AddTiling adds a page filled with a tiling pattern whose cell is step points square.
func (r *RawPDF) AddTiling(step float64) {
	pat := r.Stream(fmt.Sprintf("/Type /Pattern /PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 1 1] /XStep %g /YStep %g /Resources << >>", step, step),
		[]byte("0 0 0.2 0.2 re f\n"), true)
	r.form(fmt.Sprintf("/Pattern << /P1 %d 0 R >>", pat), []byte("/Pattern cs /P1 scn 0 0 595 842 re f\n"))
}

// AddShading adds a page painted by a function-based shading (type 1) whose PostScript
// calculator function is ops operators long, evaluated for each pixel drawn.
func (r *RawPDF) AddShading(ops int) {
	fn := r.Stream("/FunctionType 4 /Domain [0 1 0 1] /Range [0 1]", []byte("{ pop "+strings.Repeat("dup mul ", ops/2)+"}"), true)
	r.form(fmt.Sprintf("/Shading << /S1 << /ShadingType 1 /ColorSpace /DeviceGray /Domain [0 1 0 1] /Matrix [595 0 0 842 0 0] /Function %d 0 R >> >>", fn),
		[]byte("/S1 sh\n"))
}
