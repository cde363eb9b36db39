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
