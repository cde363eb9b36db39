package gen

import (
	"bytes"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
)

// The PDF fixtures are written by the small writer below rather than a library: go-pdf/fpdf and
// signintech/gopdf cannot write a /Rotate, a standard-security encryption or a predefined CJK
// CMap font without an embedded TrueType file, and each of those is a few lines here. Latin text
// is in Helvetica (one of the standard 14 fonts every reader, PDFium included, carries); Chinese
// text is in STSong-Light through the predefined UniGB-UCS2-H CMap (Adobe-GB1), Traditional in
// MSung-Light through UniCNS-UCS2-H (Adobe-CNS1), neither embedded, as Java-made (iText) reports
// do: the text layer reads as Unicode, and a reader draws it in a system font of its own.

// pdfDoc collects numbered objects and writes them with a cross-reference table.
type pdfDoc struct {
	objs    []string // body of object i+1
	key     []byte   // RC4 file key, when encrypting
	encrypt string   // the /Encrypt dictionary
	id      string
}

// add reserves the next object number for body (filled later with set when it refers forward).
func (d *pdfDoc) add(body string) int {
	d.objs = append(d.objs, body)
	return len(d.objs)
}

func (d *pdfDoc) set(n int, body string) { d.objs[n-1] = body }

// stream is an object of data with its dictionary; data is encrypted with the object's key.
func (d *pdfDoc) stream(dict string, data []byte) int {
	n := d.add("")
	if d.key != nil {
		data = rc4Crypt(d.objectKey(n), data)
	}
	d.set(n, fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data))
	return n
}

func (d *pdfDoc) bytes(root int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(d.objs))
	for i, body := range d.objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, body)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(d.objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R /ID [<%s> <%s>]%s >>\nstartxref\n%d\n%%%%EOF\n",
		len(d.objs)+1, root, d.id, d.id, d.encrypt, xref)
	return b.Bytes()
}

// PDFPage is one page of a generated PDF: its size in points, its /Rotate, its content, and the
// JPEG it draws (a scan), if any.
type PDFPage struct {
	W, H    float64
	Rotate  int
	Content string // operators, with /F1 Helvetica, /F2 STSong-Light, /F3 MSung-Light, /Im1 the JPEG
	JPEG    []byte
	JPEGW   int
	JPEGH   int
	RGB     bool // the JPEG is in colour (else grey)
	// Stamp, when set, is the content (in F1) of a FreeText annotation's appearance over the
	// rectangle StampAt (x, y, w, h in points): what a viewer shows, and no part of the page's
	// text layer.
	Stamp   string
	StampAt [4]float64
	Crop    [4]float64 // the CropBox, when set: what a viewer shows of the MediaBox
	// Fields are filled text fields of the document's AcroForm on this page, with no
	// appearance of their own (NeedAppearances): a viewer draws their values, which are in no
	// content stream.
	Fields []Field
}

// Field is a filled text field: its value at (X, Y), in points from the bottom left.
type Field struct {
	Value string
	X, Y  float64
}

// PDF writes pages into a PDF 1.4 file. A non-empty password encrypts it with the standard
// security handler, revision 2 (RC4, 40 bits), that password opening it.
func PDF(pages []PDFPage, password string) []byte {
	owner := []rune(password)
	slices.Reverse(owner)
	return writePDF(pages, password, string(owner), -4) // every permission: the bits but the two reserved low ones
}

// ProtectedPDF writes pages encrypted with an owner password only, as hospital portals protect
// their reports: it opens without a password, and asks a reader not to print, copy or change it
// (permissions -3904: bits 3 to 6 and 9 to 12 clear).
func ProtectedPDF(pages []PDFPage, owner string) []byte { return writePDF(pages, "", owner, -3904) }

func writePDF(pages []PDFPage, user, owner string, perms int32) []byte {
	d := &pdfDoc{id: "0123456789abcdef0123456789abcdef"}
	if user != "" || owner != "" {
		d.setPassword(user, owner, perms)
	}
	catalog := d.add("")
	tree := d.add("")
	helv := d.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	desc := d.add("<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>")
	cid := d.add(fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light /CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> /FontDescriptor %d 0 R /DW 1000 /W [1 95 500] >>", desc))
	song := d.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H /DescendantFonts [%d 0 R] >>", cid))
	tdesc := d.add("<< /Type /FontDescriptor /FontName /MSung-Light /Flags 6 /FontBBox [-160 -259 1015 888] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>")
	tcid := d.add(fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /MSung-Light /CIDSystemInfo << /Registry (Adobe) /Ordering (CNS1) /Supplement 4 >> /FontDescriptor %d 0 R /DW 1000 /W [1 95 500] >>", tdesc))
	msung := d.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /MSung-Light /Encoding /UniCNS-UCS2-H /DescendantFonts [%d 0 R] >>", tcid))
	var kids []string
	var fields []int
	for _, p := range pages {
		res := fmt.Sprintf("/Font << /F1 %d 0 R /F2 %d 0 R /F3 %d 0 R >>", helv, song, msung)
		if p.JPEG != nil {
			cs := "/DeviceGray"
			if p.RGB {
				cs = "/DeviceRGB"
			}
			im := d.stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8 /Filter /DCTDecode", p.JPEGW, p.JPEGH, cs), p.JPEG)
			res += fmt.Sprintf(" /XObject << /Im1 %d 0 R >>", im)
		}
		content := d.stream("", []byte(p.Content))
		rot := ""
		if p.Rotate != 0 {
			rot = fmt.Sprintf(" /Rotate %d", p.Rotate)
		}
		var annots []string
		for _, f := range p.Fields {
			fields = append(fields, d.add(fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Tx /T (f%d) /V (%s) /DA (/Helv 11 Tf 0 g) /Rect [%g %g %g %g] /F 4 >>",
				len(fields), f.Value, f.X, f.Y-4, f.X+70, f.Y+14)))
			annots = append(annots, fmt.Sprintf("%d 0 R", fields[len(fields)-1]))
		}
		if p.Stamp != "" {
			x, y, w, h := p.StampAt[0], p.StampAt[1], p.StampAt[2], p.StampAt[3]
			ap := d.stream(fmt.Sprintf("/Type /XObject /Subtype /Form /BBox [0 0 %g %g] /Resources << /Font << /F1 %d 0 R >> >>", w, h, helv), []byte(p.Stamp))
			annot := d.add(fmt.Sprintf("<< /Type /Annot /Subtype /FreeText /Rect [%g %g %g %g] /F 4 /DA (/F1 11 Tf 0 g) /AP << /N %d 0 R >> >>", x, y, x+w, y+h, ap))
			annots = append(annots, fmt.Sprintf("%d 0 R", annot))
		}
		if len(annots) > 0 {
			rot += " /Annots [" + strings.Join(annots, " ") + "]"
		}
		if p.Crop != [4]float64{} {
			rot += fmt.Sprintf(" /CropBox [%g %g %g %g]", p.Crop[0], p.Crop[1], p.Crop[2], p.Crop[3])
		}
		page := d.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %g %g]%s /Resources << %s >> /Contents %d 0 R >>",
			tree, p.W, p.H, rot, res, content))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	d.set(tree, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	form := ""
	if len(fields) > 0 {
		var refs []string
		for _, f := range fields {
			refs = append(refs, fmt.Sprintf("%d 0 R", f))
		}
		form = fmt.Sprintf(" /AcroForm << /Fields [%s] /NeedAppearances true /DA (/Helv 11 Tf 0 g) /DR << /Font << /Helv %d 0 R >> >> >>",
			strings.Join(refs, " "), helv)
	}
	d.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R%s >>", tree, form))
	return d.bytes(catalog)
}

// Text returns the operators that show s at (x, y) in points from the bottom left, in font f
// (F1 Helvetica for ASCII, F2 STSong-Light for Simplified Chinese, F3 MSung-Light for
// Traditional; F2 and F3 take any text, ASCII too) at size pt.
func Text(f string, pt, x, y float64, s string) string {
	str := "(" + strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s) + ")"
	if f == "F2" || f == "F3" { // two bytes per character, UCS-2 big-endian, as the CMap reads them
		var h strings.Builder
		for _, u := range utf16.Encode([]rune(s)) {
			fmt.Fprintf(&h, "%04X", u)
		}
		str = "<" + h.String() + ">"
	}
	return fmt.Sprintf("BT /%s %g Tf %g %g Td %s Tj ET\n", f, pt, x, y, str)
}

// Invisible is Text in render mode 3, drawn nowhere: the OCR layer a scanner app lays over its
// image, so that the scan can be searched.
func Invisible(f string, pt, x, y float64, s string) string {
	return strings.Replace(Text(f, pt, x, y, s), "BT ", "BT 3 Tr ", 1)
}

// LabRow is one row of a generated lab report.
type LabRow struct{ Name, Code, Value, Unit, Range string }

// LabRows are the two pages of the digital report.
var LabRows = [][]LabRow{
	{
		{"白细胞计数", "WBC", "6.12", "10^9/L", "3.50-9.50"},
		{"红细胞计数", "RBC", "4.87", "10^12/L", "4.30-5.80"},
		{"血红蛋白", "HGB", "148", "g/L", "130-175"},
		{"血小板计数", "PLT", "231", "10^9/L", "125-350"},
		{"中性粒细胞百分比", "NEUT%", "58.3", "%", "40.0-75.0"},
	},
	{
		{"总胆固醇", "TC", "5.62", "mmol/L", "0.00-5.20"},
		{"甘油三酯", "TG", "1.48", "mmol/L", "0.00-1.70"},
		{"高密度脂蛋白胆固醇", "HDL-C", "1.21", "mmol/L", "1.04-2.00"},
		{"低密度脂蛋白胆固醇", "LDL-C", "3.87", "mmol/L", "0.00-3.40"},
	},
}

// LabPage is the content of page i of the digital report on an A4 page: a title, a header line,
// and one row per result at 24-point steps from y = 700.
func LabPage(i int) string { return labPage(i, Text) }

// GlyphPage is LabPage with every value and range placed glyph by glyph.
func GlyphPage(i int) string { return labPage(i, Glyphs) }

// labPage is LabPage with its values and ranges written by number (Text or Glyphs).
func labPage(i int, number func(f string, pt, x, y float64, s string) string) string {
	var b strings.Builder
	b.WriteString(Text("F2", 18, 50, 790, "检验报告单"))
	b.WriteString(Text("F1", 10, 400, 790, fmt.Sprintf("Page %d of %d", i+1, len(LabRows))))
	b.WriteString(Text("F2", 11, 50, 740, "项目"))
	b.WriteString(Text("F1", 11, 230, 740, "Code"))
	b.WriteString(Text("F1", 11, 310, 740, "Result"))
	b.WriteString(Text("F1", 11, 390, 740, "Unit"))
	b.WriteString(Text("F1", 11, 470, 740, "Range"))
	for j, r := range LabRows[i] {
		y := 700 - 24*float64(j)
		b.WriteString(Text("F2", 11, 50, y, r.Name))
		b.WriteString(Text("F1", 11, 230, y, r.Code))
		b.WriteString(number("F1", 11, 310, y, r.Value))
		b.WriteString(Text("F1", 11, 390, y, r.Unit))
		b.WriteString(number("F1", 11, 470, y, r.Range))
	}
	return b.String()
}

// CIDRows are the rows of CIDPage: a Simplified and a Traditional report, every character of
// them in a CID font that is not embedded.
var CIDRows = []struct {
	Font string
	LabRow
	Flag string
}{
	{"F2", LabRow{"丙氨酸氨基转移酶", "ALT", "56.4", "U/L", "9-50"}, "↑"},
	{"F2", LabRow{"肌酐", "Cr", "71", "µmol/L", "57-111"}, ""},
	{"F2", LabRow{"白细胞计数", "WBC", "3.12", "×10^9/L", "3.50-9.50"}, "↓"},
	{"F3", LabRow{"總膽固醇", "TC", "6.05", "mmol/L", "<5.20"}, "H"},
	{"F3", LabRow{"糖化血紅蛋白", "HbA1c", "5.4", "%", "4.0-6.0"}, ""},
}

// CIDPage is an A4 page whose text is all in STSong-Light (F2) and MSung-Light (F3), digits
// and units included, as a Java-made report writes it: drawn only if the reader has a font for
// it.
func CIDPage() string {
	var b strings.Builder
	b.WriteString(Text("F2", 18, 50, 790, "检验报告单 / 檢驗報告"))
	for j, r := range CIDRows {
		y := 740 - 30*float64(j)
		b.WriteString(Text(r.Font, 11, 50, y, r.Name))
		b.WriteString(Text(r.Font, 11, 230, y, r.Code))
		b.WriteString(Text(r.Font, 11, 300, y, r.Value))
		if r.Flag != "" {
			b.WriteString(Text(r.Font, 11, 345, y, r.Flag))
		}
		b.WriteString(Text(r.Font, 11, 390, y, r.Unit))
		b.WriteString(Text(r.Font, 11, 470, y, r.Range))
	}
	return b.String()
}

// Glyphs is Text placed glyph by glyph, each character its own text object at Helvetica's
// advance (a digit 0.556 em, "." 0.278, "-" 0.333), as Chromium and other writers that position
// every glyph do: nothing in the content says the characters form one word.
func Glyphs(f string, pt, x, y float64, s string) string {
	var b strings.Builder
	for _, c := range s {
		b.WriteString(Text(f, pt, x, y, string(c)))
		x += map[rune]float64{'.': 0.278, '-': 0.333}[c] * pt
		if c != '.' && c != '-' {
			x += 0.556 * pt
		}
	}
	return b.String()
}

// FormPage is page i of the digital report as a filled form: the names, units and ranges in its
// content, the values only in its fields.
func FormPage(i int) PDFPage {
	var b strings.Builder
	var fields []Field
	for j, r := range LabRows[i] {
		y := 700 - 24*float64(j)
		b.WriteString(Text("F2", 11, 50, y, r.Name))
		b.WriteString(Text("F1", 11, 390, y, r.Unit))
		b.WriteString(Text("F1", 11, 470, y, r.Range))
		fields = append(fields, Field{Value: r.Value, X: 300, Y: y})
	}
	return PDFPage{W: 595, H: 842, Content: b.String(), Fields: fields}
}

// pdfPad is the padding string of the standard security handler.
var pdfPad = []byte("\x28\xbf\x4e\x5e\x4e\x75\x8a\x41\x64\x00\x4e\x56\xff\xfa\x01\x08\x2e\x2e\x00\xb6\xd0\x68\x3e\x80\x2f\x0c\xa9\xfe\x64\x53\x69\x7a")

func padded(pw string) []byte { return append([]byte(pw), pdfPad...)[:32] }

func rc4Crypt(key, data []byte) []byte {
	c, _ := rc4.NewCipher(key)
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// setPassword sets up revision 2 of the standard security handler (PDF 1.7, 7.6.3): the owner
// password is the user password reversed, and every permission is granted.
func (d *pdfDoc) setPassword(user, owner string, perms int32) {
	ok := md5.Sum(padded(owner))
	o := rc4Crypt(ok[:5], padded(user))
	id, _ := hex.DecodeString(d.id)
	h := md5.New()
	h.Write(padded(user))
	h.Write(o)
	binary.Write(h, binary.LittleEndian, perms)
	h.Write(id)
	d.key = h.Sum(nil)[:5]
	u := rc4Crypt(d.key, pdfPad)
	d.encrypt = fmt.Sprintf(" /Encrypt << /Filter /Standard /V 1 /R 2 /O <%x> /U <%x> /P %d >>", o, u, perms)
}

// objectKey is the key of object n, generation 0 (algorithm 1).
func (d *pdfDoc) objectKey(n int) []byte {
	k := append(bytes.Clone(d.key), byte(n), byte(n>>8), byte(n>>16), 0, 0)
	s := md5.Sum(k)
	return s[:min(len(d.key)+5, 16)]
}
