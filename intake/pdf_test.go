package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
	"github.com/ocrdraft/ocrdraft/problem"
)

// TestPDF covers PDF intake, one document each: split into its pages, each rendered so that its
// long edge is MaxEdge (turned as its /Rotate says), or sent as the JPEG a scanned page is; the
// refusals are clear problems.
func TestPDF(t *testing.T) {
	type page struct {
		w, h  int
		words bool
		same  bool // the page is the embedded JPEG, byte for byte
	}
	tests := []struct {
		name   string
		file   string
		limits Limits
		pages  []page
		code   problem.Code
		detail string
	}{
		{name: "digital, two pages", file: "digital.pdf", pages: []page{{1447, 2048, true, false}, {1447, 2048, true, false}}},
		{name: "scanned: each page its JPEG", file: "scanned.pdf", pages: []page{{620, 877, false, true}, {620, 877, false, true}}},
		{name: "rotated page", file: "rotated.pdf", pages: []page{{2048, 1447, true, false}}},
		{name: "scanned, turned by /Rotate", file: "scanned-rotated.pdf", pages: []page{{620, 877, false, false}}},
		{name: "at a smaller edge", file: "digital.pdf", limits: Limits{MaxEdge: 1000}, pages: []page{{707, 1000, true, false}, {707, 1000, true, false}}},
		{name: "a blank page", file: "../images/scan.pdf", pages: []page{{1447, 2048, false, false}}},
		{name: "encrypted", file: "encrypted.pdf", code: problem.DocumentEncrypted, detail: "protected by a password"},
		{name: "truncated", file: "truncated.pdf", code: problem.ImageUnreadable, detail: "a PDF document but is truncated or corrupt"},
		{name: "only a header", file: "", code: problem.ImageUnreadable, detail: "a PDF document but is truncated or corrupt"},
		{name: "a pixel limit under the long edge: drawn smaller", file: "digital.pdf", limits: Limits{MaxPixels: 1 << 20},
			pages: []page{{860, 1218, true, false}, {860, 1218, true, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte("%PDF-1.4\n1 0 obj\n<<>>\nendobj\n")
			if tt.file != "" {
				data = readDoc(t, tt.file)
			}
			p := New(tt.limits, testRuntime)
			n, err := p.Split(t.Context(), data)
			if err == nil {
				var pg Page
				for i := range n {
					if pg, err = p.PreparePage(t.Context(), data, i); err != nil {
						break
					}
					if i >= len(tt.pages) {
						t.Fatalf("page %d of %d expected", i+1, len(tt.pages))
					}
					w := tt.pages[i]
					if pg.Width != w.w || pg.Height != w.h || pg.MIME != "image/jpeg" || pg.Kind != "pdf" || (len(pg.Text) > 0) != w.words {
						t.Errorf("page %d: %s %s %d×%d, %d words; want a JPEG of %d×%d, words %v", i+1, pg.Kind, pg.MIME, pg.Width, pg.Height, len(pg.Text), w.w, w.h, w.words)
					}
					if w.same != bytes.Contains(data, pg.Data) {
						t.Errorf("page %d: the embedded JPEG as is: %v, want %v", i+1, !w.same, w.same)
					}
					if got := checkJPEG(t, pg); got != image.Pt(pg.Width, pg.Height) {
						t.Errorf("page %d: decodes at %v, says %d×%d", i+1, got, pg.Width, pg.Height)
					}
				}
			}
			if tt.code == "" {
				if err != nil || n != len(tt.pages) {
					t.Fatalf("%d pages, %v; want %d", n, err, len(tt.pages))
				}
				return
			}
			pe, ok := err.(*problem.Error)
			if !ok || pe.Code != tt.code || !strings.Contains(pe.Detail, tt.detail) {
				t.Fatalf("got %v, want %s holding %q", err, tt.code, tt.detail)
			}
		})
	}
}

func checkJPEG(t *testing.T, pg Page) image.Point {
	t.Helper()
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(pg.Data))
	if err != nil {
		t.Fatal(err)
	}
	return image.Pt(cfg.Width, cfg.Height)
}

// TestPDFText: a digital page's text layer holds every value and range the report prints,
// digit for digit, and each printed word's box, mapped into the pixels of the page as sent, has
// ink in it: on the upright page, on the page turned by /Rotate, and in a PDF protected by an
// owner password only (which opens without one).
func TestPDFText(t *testing.T) {
	p := New(Limits{}, testRuntime)
	for _, file := range []string{"digital.pdf", "rotated.pdf", "protected.pdf"} {
		data := readDoc(t, file)
		n, err := p.Split(t.Context(), data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			pg, err := p.PreparePage(t.Context(), data, i)
			if err != nil {
				t.Fatal(err)
			}
			var nums []string
			for _, w := range numbers(pg.Text) {
				nums = append(nums, w.Text)
			}
			for _, r := range gen.LabRows[i] {
				for _, want := range append([]string{r.Value}, strings.Split(r.Range, "-")...) {
					if !slices.Contains(nums, want) {
						t.Errorf("%s page %d: %s not among the numbers %v", file, i+1, want, nums)
					}
				}
			}
			words := map[string]bool{}
			for _, w := range pg.Text {
				words[w.Text] = true
			}
			for _, want := range [][]string{{"白细胞计数", "WBC", "10^9/L", "3.50-9.50"}, {"总胆固醇", "TC", "mmol/L", "0.00-5.20"}}[i] {
				if !words[want] {
					t.Errorf("%s page %d: no word %q", file, i+1, want)
				}
			}
			m, err := jpeg.Decode(bytes.NewReader(pg.Data))
			if err != nil {
				t.Fatal(err)
			}
			inked := 0
			for _, w := range pg.Text { // the Chinese too: STSong-Light is drawn in the sandbox's font
				if !ink(m, w.Box) {
					t.Errorf("%s page %d: no ink in the box %v of %q", file, i+1, w.Box, w.Text)
				}
				inked++
			}
			if inked < 15 {
				t.Errorf("%s page %d: %d words checked", file, i+1, inked)
			}
			// And no ink where the boxes say there is none: a box moved to the blank right half
			// of an upright page (or the blank bottom of a turned one) has none.
			if file == "digital.pdf" {
				if off := pg.Text[1].Box.Add(image.Pt(0, 1500)); ink(m, off) {
					t.Errorf("ink at %v, where the page is blank", off)
				}
			}
		}
	}
}

// TestPDFCIDFonts: a page written all in CID fonts it does not embed (STSong-Light for
// Simplified Chinese, MSung-Light for Traditional, digits and units in them too, as iText
// writes) is drawn, every word of it, in the sandbox's font; its text layer holds each word
// whole, so every value and range bound is found among its numbers.
func TestPDFCIDFonts(t *testing.T) {
	pg, err := New(Limits{}, testRuntime).PreparePage(t.Context(), readDoc(t, "cid-fonts.pdf"), 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := jpeg.Decode(bytes.NewReader(pg.Data))
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range pg.Text {
		words[w.Text] = true
		if !ink(m, w.Box) {
			t.Errorf("no ink in the box %v of %q", w.Box, w.Text)
		}
	}
	var nums []string
	for _, w := range numbers(pg.Text) {
		nums = append(nums, w.Text)
	}
	for _, r := range gen.CIDRows {
		for _, want := range []string{r.Name, r.Code, r.Value, r.Unit, r.Range, r.Flag} {
			if want != "" && !words[want] {
				t.Errorf("no word %q among %d", want, len(words))
			}
		}
		for _, want := range append([]string{r.Value}, strings.Split(strings.TrimPrefix(r.Range, "<"), "-")...) {
			if !slices.Contains(nums, want) {
				t.Errorf("%s not among the numbers %v", want, nums)
			}
		}
	}
}

// TestPDFInvisibleText: a scan's invisible OCR layer is no text layer (it is what some OCR
// read, not what the page prints), so a page with only that has none; the control is the same
// values drawn visibly.
func TestPDFInvisibleText(t *testing.T) {
	p := New(Limits{}, testRuntime)
	pg, err := p.PreparePage(t.Context(), readDoc(t, "scanned-ocr.pdf"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Text) != 0 {
		t.Errorf("text layer %v from invisible text", pg.Text)
	}
	visible := gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: gen.Text("F1", 11, 310, 700, gen.LabRows[0][0].Value)}}, "")
	if pg, err := p.PreparePage(t.Context(), visible, 0); err != nil || len(pg.Text) != 1 || pg.Text[0].Text != gen.LabRows[0][0].Value {
		t.Errorf("control: the visible value reads as %v, %v", pg.Text, err)
	}
}

// TestPDFGrey: a page with no colour on it goes as a grey JPEG (one channel: a third of the
// encoding), one with a red mark in colour, each at the page's rendered size.
func TestPDFGrey(t *testing.T) {
	p := New(Limits{}, testRuntime)
	black := gen.LabPage(0)
	red := black + "1 0 0 rg 300 690 20 20 re f\n"
	for _, tt := range []struct {
		name    string
		content string
		model   color.Model
	}{
		{"black on white", black, color.GrayModel},
		{"with a red mark", red, color.YCbCrModel},
	} {
		data := gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: tt.content}}, "")
		pg, err := p.PreparePage(t.Context(), data, 0)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(pg.Data))
		if err != nil || cfg.ColorModel != tt.model || cfg.Width != pg.Width || max(cfg.Width, cfg.Height) != p.Limits().MaxEdge {
			t.Errorf("%s: %+v, %v; want %v at the long edge", tt.name, cfg, err, tt.model)
		}
	}
}

// TestPDFTextCap: a page of more than maxTextChars characters gets no text layer rather than a
// partial one (whose values past the cut would look unprinted); the page itself still goes.
func TestPDFTextCap(t *testing.T) {
	line := strings.Repeat("1.23 ", 40) // 200 characters a line
	var b strings.Builder
	for i := range maxTextChars/200 + 1 {
		b.WriteString(gen.Text("F1", 1, 10, 830-float64(i%800), line))
	}
	for _, tt := range []struct {
		name    string
		content string
		text    bool
	}{
		{"over the cap", b.String(), false},
		{"a line of it", gen.Text("F1", 8, 10, 800, line), true},
	} {
		pg, err := New(Limits{}, testRuntime).PreparePage(t.Context(), gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: tt.content}}, ""), 0)
		if err != nil || len(pg.Data) == 0 {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := len(pg.Text) > 0; got != tt.text {
			t.Errorf("%s: %d words, want a text layer %v", tt.name, len(pg.Text), tt.text)
		}
	}
}

// TestPDFAnnotated: a value a page shows in an annotation (a filled form field, a stamp) is
// drawn but not in the text layer, so such a page has no text layer to judge by; the control is
// the same page without the annotation.
func TestPDFAnnotated(t *testing.T) {
	p := New(Limits{}, testRuntime)
	page := gen.PDFPage{W: 595, H: 842, Content: gen.LabPage(0)}
	stamped := page
	stamped.Stamp, stamped.StampAt = "BT /F1 11 Tf 2 8 Td (9.87) Tj ET\n", [4]float64{400, 600, 60, 24}
	scan := gen.PDFPage{W: 595, H: 842, Content: "q 595 0 0 842 0 0 cm /Im1 Do Q\n", JPEG: readJPEG(t), JPEGW: 620, JPEGH: 877}
	scan.Stamp, scan.StampAt = stamped.Stamp, stamped.StampAt
	for _, tt := range []struct {
		name string
		page gen.PDFPage
		text bool
	}{
		{"a value in a FreeText annotation", stamped, false},
		{"no annotation", page, true},
		{"a scan with a stamp over it: drawn, not sent as its JPEG", scan, false},
	} {
		data := gen.PDF([]gen.PDFPage{tt.page}, "")
		pg, err := p.PreparePage(t.Context(), data, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(pg.Text) > 0; got != tt.text {
			t.Errorf("%s: %d words, want a text layer %v", tt.name, len(pg.Text), tt.text)
		}
		if tt.page.JPEG != nil && bytes.Contains(data, pg.Data) {
			t.Errorf("%s: sent as its JPEG, what is drawn over it left out", tt.name)
		}
		m, err := jpeg.Decode(bytes.NewReader(pg.Data))
		if err != nil {
			t.Fatal(err)
		}
		// The annotation's place, 400–460 × 218–242 pt from the top, in pixels of the page.
		s := float64(pg.Height) / 842
		at := image.Rect(int(400*s), int(218*s), int(460*s), int(242*s))
		if got := ink(m, at); got == tt.text {
			t.Errorf("%s: ink at the annotation's place %v: %v", tt.name, at, got)
		}
	}
}

// TestPDFForm: a filled form whose values are only in its fields, with no appearance of their
// own, reaches the model with the values drawn (a viewer draws them; a plain render leaves them
// out, and the model would see a report without results), and has no text layer, which holds
// no field.
func TestPDFForm(t *testing.T) {
	pg, err := New(Limits{}, testRuntime).PreparePage(t.Context(), readDoc(t, "form.pdf"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Text) != 0 {
		t.Errorf("%d words of a form page's text layer", len(pg.Text))
	}
	m, err := jpeg.Decode(bytes.NewReader(pg.Data))
	if err != nil {
		t.Fatal(err)
	}
	s := float64(pg.Height) / 842
	for _, f := range gen.FormPage(0).Fields { // each value's first characters, 300–320 pt across
		at := image.Rect(int(f.X*s), int((842-f.Y-10)*s), int((f.X+20)*s), int((842-f.Y+2)*s))
		if !ink(m, at) {
			t.Errorf("no ink where the field %q is, %v", f.Value, at)
		}
	}
}

// TestPDFTurnedGlyphs: numbers placed glyph by glyph read the same on a page turned by /Rotate
// 90, 180 or 270 as on the unturned one, digit for digit and in order (PDFium, reading a turned
// page as shown, reversed them at 180° and split them at 90°), and each one's box has ink.
func TestPDFTurnedGlyphs(t *testing.T) {
	p := New(Limits{}, testRuntime)
	data := readDoc(t, "glyphs-rotated.pdf")
	var want []string // the unturned page's, which holds every value and range bound
	for i, rot := range []int{0, 90, 180, 270} {
		pg, err := p.PreparePage(t.Context(), data, i)
		if err != nil {
			t.Fatal(err)
		}
		m, err := jpeg.Decode(bytes.NewReader(pg.Data))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range numbers(pg.Text) {
			got = append(got, w.Text)
			if !ink(m, w.Box) {
				t.Errorf("/Rotate %d: no ink in the box %v of %q", rot, w.Box, w.Text)
			}
		}
		if rot == 0 {
			want = got
			for _, r := range gen.LabRows[0] {
				for _, n := range append([]string{r.Value}, strings.Split(r.Range, "-")...) {
					if !slices.Contains(want, n) {
						t.Fatalf("the unturned page lacks %s: %v", n, want)
					}
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("/Rotate %d: numbers %v, want %v", rot, got, want)
		}
	}
}

// TestPDFCropped: text outside a page's CropBox is not on the page as shown, so it is not in
// the text layer, and every word's box lies inside the image sent.
func TestPDFCropped(t *testing.T) {
	pg, err := New(Limits{}, testRuntime).PreparePage(t.Context(), readDoc(t, "cropped.pdf"), 0)
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range pg.Text {
		words[w.Text] = true
		if !w.Box.In(image.Rect(0, 0, pg.Width, pg.Height)) {
			t.Errorf("%q at %v, outside the %d×%d page", w.Text, w.Box, pg.Width, pg.Height)
		}
	}
	rows := gen.LabRows[0]
	if !words[rows[0].Value] || !words[rows[0].Range] {
		t.Errorf("the first row, inside the crop, is missing: %v", words)
	}
	for _, r := range rows[1:] {
		if words[r.Value] {
			t.Errorf("%s (%s) is cropped away but in the text layer", r.Value, r.Name)
		}
	}
}

// TestPDFWork: a page whose drawing would take work no header bounds is refused, 413, before
// it is drawn (images larger than an upload may be, one or all together; more drawing objects
// than maxPageObjects; more filled than maxPageArea) or when it has taken PDFPageTime
// (here shortened, the drawing bound raised); an ordinary page is not. TestPDFBounds has the
// rest of the walk's bounds.
func TestPDFWork(t *testing.T) {
	jpg := readDoc(t, "scanned.pdf") // any bytes: an image is sized from its dictionary, never decoded here
	image := func(w, h int) gen.PDFPage {
		return gen.PDFPage{W: 595, H: 842, Content: "q 595 0 0 842 0 0 cm /Im1 Do Q\n", JPEG: jpg[:64], JPEGW: w, JPEGH: h}
	}
	// two segments each: within maxPageSegments
	many := gen.PDFPage{W: 595, H: 842, Content: strings.Repeat("0 0 m 1 1 l S\n", maxPageObjects+1)}
	two := image(6000, 6000) // 36 MP, under the limit; two of them are not
	two.Content = strings.Repeat(two.Content, 2)
	tests := []struct {
		name   string
		pages  []gen.PDFPage
		time   time.Duration
		detail string
	}{
		{"an image of 900 megapixels", []gen.PDFPage{image(30000, 30000)}, 0, "an image of 30000×30000 pixels"},
		{"two images of 36 megapixels", []gen.PDFPage{two}, 0, "images of more than 40.0 megapixels in all"},
		{"more drawing objects than the cap", []gen.PDFPage{many}, 0, "more than 25000 drawing objects"},
		{"a page that fills too much", []gen.PDFPage{{W: 595, H: 842, Content: heavyContent(200)}}, 0, "fills more than 128 times its area"},
		{"a page that takes too long", []gen.PDFPage{{W: 595, H: 842, Content: heavyContent(9_000)}}, 300 * time.Millisecond, "takes more than 300ms to draw"},
		{"an ordinary page", []gen.PDFPage{{W: 595, H: 842, Content: gen.LabPage(0)}}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Limits{}, testRuntime)
			p.pageTime, p.pageWork = tt.time, time.Hour // the walk's bounds, and the wall time's (TestPDFPageWork has the work's)
			if tt.time > 0 {
				p.pdfDraw = 1 << 50
			}
			_, err := p.PreparePage(t.Context(), gen.PDF(tt.pages, ""), 0)
			if tt.detail == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *problem.Error
			if tt.time > 0 && errors.As(err, &pe) && pe.Code == problem.Overloaded && strings.Contains(pe.Detail, "waited more than") {
				return // the machine was too loaded for its thread to hold a core half that time: TestPageTimeRefusal
			}
			if !errors.As(err, &pe) || pe.Code != problem.ImageTooLarge || !strings.Contains(pe.Detail, tt.detail) {
				t.Fatalf("got %v; want image_too_large saying %q", err, tt.detail)
			}
		})
	}
}

// TestPDFEmptyFields: a form field that draws no text (an empty one, a signature field as signed
// e-reports carry) leaves the page's text layer whole; a filled one does not (TestPDFForm).
func TestPDFEmptyFields(t *testing.T) {
	p := New(Limits{}, testRuntime)
	empty := gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: gen.LabPage(0), Fields: []gen.Field{{Value: "", X: 500, Y: 20}}}}, "")
	sig := bytes.Replace(empty, []byte("/FT /Tx /T (f0) /V ()"), []byte("/FT /Sig /T (f0)     "), 1)
	if bytes.Equal(sig, empty) {
		t.Fatal("no field to turn into a signature")
	}
	plain, err := p.PreparePage(t.Context(), gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: gen.LabPage(0)}}, ""), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"an empty text field", empty}, {"a signature field", sig}} {
		pg, err := p.PreparePage(t.Context(), c.data, 0)
		if err != nil {
			t.Fatal(c.name, err)
		}
		if len(pg.Text) != len(plain.Text) {
			t.Errorf("%s: %d words, the page without it %d", c.name, len(pg.Text), len(plain.Text))
		}
	}
}

// TestPDFScanCropped: a two-up scan split into two pages by CropBox (one JPEG on each, each page
// showing its half) is drawn page by page, not sent whole as the JPEG (from an independent
// review); the control, the same JPEG filling an uncropped page, goes as its own bytes.
func TestPDFScanCropped(t *testing.T) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, gen.Report(1684, 1190), &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	half := func(l float64) gen.PDFPage {
		return gen.PDFPage{W: 842, H: 595, Content: "q 842 0 0 595 0 0 cm /Im1 Do Q\n", JPEG: b.Bytes(), JPEGW: 1684, JPEGH: 1190, Crop: [4]float64{l, 0, l + 421, 595}}
	}
	whole := half(0)
	whole.Crop = [4]float64{}
	data := gen.PDF([]gen.PDFPage{half(0), half(421), whole}, "")
	p := New(Limits{}, testRuntime)
	for i, want := range []bool{false, false, true} {
		pg, err := p.PreparePage(t.Context(), data, i)
		if err != nil {
			t.Fatal(err)
		}
		if same := bytes.Contains(data, pg.Data); same != want || !want && pg.Width > pg.Height {
			t.Errorf("page %d: %d×%d, sent as the JPEG %v; want %v", i+1, pg.Width, pg.Height, same, want)
		}
	}
}

// readJPEG is the JPEG of scanned.pdf's first page, 620×877.
func readJPEG(t *testing.T) []byte {
	t.Helper()
	pg, err := New(Limits{}, testRuntime).PreparePage(t.Context(), readDoc(t, "scanned.pdf"), 0)
	if err != nil || pg.Width != 620 {
		t.Fatalf("%v %d", err, pg.Width)
	}
	return pg.Data
}

// ink reports whether r holds a dark pixel of m.
func ink(m image.Image, r image.Rectangle) bool {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.GrayModel.Convert(m.At(x, y)).(color.Gray).Y < 100 {
				return true
			}
		}
	}
	return false
}

// TestPageBox covers the mapping of page space to pixels for each /Rotate, on a 100×200-point
// page with a box at its top-left corner in page space.
func TestPageBox(t *testing.T) {
	tests := []struct {
		rotate int
		w, h   int
		want   image.Rectangle
	}{
		{0, 100, 200, image.Rect(0, 0, 10, 20)},
		{1, 200, 100, image.Rect(180, 0, 200, 10)}, // turned clockwise: the top edge is on the right
		{2, 100, 200, image.Rect(90, 180, 100, 200)},
		{3, 200, 100, image.Rect(0, 90, 20, 100)},
	}
	for _, tt := range tests {
		b := pageBox{l: 0, b: 0, r: 100, t: 200, rotate: tt.rotate, w: tt.w, h: tt.h}
		if got := b.pixels(0, 180, 10, 200); got != tt.want {
			t.Errorf("rotate %d: got %v, want %v", tt.rotate, got, tt.want)
		}
	}
}

// TestNumbers covers the numbers picked out of a text layer.
func TestNumbers(t *testing.T) {
	var text []Word
	for _, s := range []string{"3.50-9.50", "<0.1", "10^9/L", "5.20", "WBC", "1.2.3", "7.", "↑12.5"} {
		text = append(text, Word{Text: s})
	}
	var got []string
	for _, w := range numbers(text) {
		got = append(got, w.Text)
	}
	want := []string{"3.50", "9.50", "0.1", "10", "9", "5.20", "1.2", "3", "7", "12.5"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestPDFNoHostFiles: the sandbox PDFium runs in holds only its font, so nothing in a PDF can
// make it read a host file. A PDF written to a host file cannot be opened by its path in the
// process's pool, while a pool given go-pdfium's default (the host's / mounted) opens it.
func TestPDFNoHostFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.pdf")
	if err := os.WriteFile(path, readDoc(t, "digital.pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	pool, err := testRuntime.pdf()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := pool.GetInstanceWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	if _, err := inst.OpenDocument(&requests.OpenDocument{FilePath: &path}); err == nil {
		t.Fatalf("the sandbox opened %s from the host", path)
	}
	if testing.Short() {
		return
	}
	// The control: the same module with the host's / mounted reads the file (compiled from the
	// shared cache, so this costs an instance, not a compilation).
	host, err := webassembly.Init(webassembly.Config{MaxTotal: 1, Stdout: discard{}, Stderr: discard{},
		RuntimeConfig: wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
			WithCompilationCache(testRuntime.cache).WithCloseOnContextDone(pdfEnsure)})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	hi, err := host.GetInstanceWithContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer hi.Close()
	if _, err := hi.OpenDocument(&requests.OpenDocument{FilePath: &path}); err != nil {
		t.Fatalf("control: with / mounted, the file does not open either (%v); the test proves nothing", err)
	}
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// heavy is a one-page PDF whose content fills the page n times: work no header tells.
func heavy(n int) []byte {
	return gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: heavyContent(n)}}, "")
}

// heavyContent fills the page n times, each in another grey.
func heavyContent(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%.3f g 0 0 595 842 re f\n", float64(i%100)/100)
	}
	return b.String()
}

// TestPDFDeadline: a page whose content takes long to render is stopped when its request ends:
// the caller is answered with the context's error and the decode slot is free at once, because
// the instance is killed, not left to finish.
func TestPDFDeadline(t *testing.T) {
	p := New(Limits{}, testRuntime)
	p.sem = make(chan struct{}, 1)
	p.pdfDraw = 1 << 50
	data := heavy(20_000) // under maxPageObjects, and past the drawing bound raised: drawn, not refused
	if _, err := p.Split(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.PreparePage(ctx, data, 0)
		done <- err
	}()
	testwait.For(t, "the render to hold its slot", func() bool { return len(p.sem) > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// The slot frees when the killed call returns; a render that ran on would hold it for
	// a minute or more (20 000 fills of 3 megapixels), so a second page getting it proves the kill.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel2()
	if _, err := p.PreparePage(ctx2, readDoc(t, "digital.pdf"), 0); err != nil {
		t.Fatalf("after the kill: %v", err)
	}
}

// TestPDFScanTurned: a scanned page stored sideways on a page turned by /Rotate comes out as the
// upright picture (its JPEG turned, not rendered), and not the other way up.
func TestPDFScanTurned(t *testing.T) {
	pg, err := New(Limits{}, testRuntime).Prepare(t.Context(), readDoc(t, "scanned-rotated.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := jpeg.Decode(bytes.NewReader(pg.Data))
	if err != nil {
		t.Fatal(err)
	}
	want := gen.Photo(620, 877)
	if m.Bounds() != want.Rect {
		t.Fatalf("bounds %v, want %v", m.Bounds(), want.Rect)
	}
	diff := func(flip bool) int {
		sum := 0
		for y := 0; y < 877; y += 3 {
			for x := 0; x < 620; x += 3 {
				wx, wy := x, y
				if flip {
					wx, wy = 619-x, 876-y
				}
				a := int(color.GrayModel.Convert(m.At(x, y)).(color.Gray).Y)
				b := int(color.GrayModel.Convert(want.At(wx, wy)).(color.Gray).Y)
				sum += max(a-b, b-a)
			}
		}
		return sum / (207 * 293)
	}
	if same, turned := diff(false), diff(true); same > 12 || turned < 2*same+10 {
		t.Errorf("mean difference from the upright photo %d, turned half way %d", same, turned)
	}
}

// numbers returns the runs of ASCII digits (with at most one decimal point inside) of a text
// layer, each with its word's box ("3.50-9.50" gives 3.50 and 9.50, "10^9/L" gives 10 and 9):
// the tests' plain view of what a page prints. The check of a draft against the page reads
// numbers by its own, fuller rules (check.OnPage).
func numbers(text []Word) []Word {
	var out []Word
	for _, w := range text {
		s := w.Text
		for i := 0; i < len(s); {
			if s[i] < '0' || s[i] > '9' {
				i++
				continue
			}
			j, dot := i, false
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' && !dot && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
				dot = dot || s[j] == '.'
				j++
			}
			out = append(out, Word{Text: s[i:j], Box: w.Box})
			i = j
		}
	}
	return out
}
