package gen

import (
	"fmt"
	"os"
	"path/filepath"
)

// Documents returns the fixtures of testdata/documents that are made here, in a fixed order;
// base holds the encoded files they are derived from (HEICBases).
func Documents(base string) ([]File, error) {
	var files []File
	var firstErr error
	add := func(name, note string, data []byte, err error) {
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, File{name, data, note})
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(base, name))
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return b
	}

	sideways, small, square := read("photo-sideways.heic"), read("small.heic"), read("square4096.heic")
	if firstErr != nil {
		return nil, firstErr
	}
	add("photo-irot.heic", "photo-sideways.heic with irot 3 (a quarter turn clockwise, as an iPhone held upright writes it): decodes upright, 3024×4032",
		WithIRot(sideways, 3), nil)
	add("small-irot.heic", "small.heic with irot 1 (a quarter turn anticlockwise): 480×640 upright", WithIRot(small, 1), nil)
	add("bomb-ispe.heic", "small.heic whose ispe declares 8192×8192: refused before decoding", WithISPE(small, 8192, 8192), nil)
	add("lying-ispe.heic", "square4096.heic whose ispe declares 64×64: the decoder's memory bound stops it", WithISPE(square, 64, 64), nil)
	a4 := func(content string) PDFPage { return PDFPage{W: 595, H: 842, Content: content} }
	digital := PDF([]PDFPage{a4(LabPage(0)), a4(LabPage(1))}, "")
	add("digital.pdf", "a two-page Chinese lab report with a text layer (Helvetica digits, STSong-Light names, not embedded)", digital, nil)
	add("cid-fonts.pdf", "one page all in STSong-Light and MSung-Light, digits too, neither embedded (as iText writes): drawn in the sandbox's font",
		PDF([]PDFPage{a4(CIDPage())}, ""), nil)
	jpg, err := encodeJPEG(Report(620, 877), 80)
	if err != nil {
		return nil, err
	}
	scan := PDFPage{W: 595, H: 842, Content: "q 595 0 0 842 0 0 cm /Im1 Do Q\n", JPEG: jpg, JPEGW: 620, JPEGH: 877}
	add("scanned.pdf", "two pages, each one grey JPEG (620×877) filling the page, no text layer", PDF([]PDFPage{scan, scan}, ""), nil)
	ocr := scan
	for j, r := range LabRows[0] {
		ocr.Content += Invisible("F1", 11, 310, 700-24*float64(j), r.Value)
	}
	add("scanned-ocr.pdf", "a scan with a scanner app's invisible OCR layer (render mode 3) of its values: no text layer to check against",
		PDF([]PDFPage{ocr}, ""), nil)
	// A scanner app's page: the photo stored as the sensor saw it, the page turned by /Rotate.
	side, err := encodeJPEG(Stored(Photo(620, 877), 6), 80)
	if err != nil {
		return nil, err
	}
	add("scanned-rotated.pdf", "one colour JPEG stored sideways (877×620) on a landscape page with /Rotate 90: shown upright, 620×877",
		PDF([]PDFPage{{W: 842, H: 595, Rotate: 90, Content: "q 842 0 0 595 0 0 cm /Im1 Do Q\n", JPEG: side, JPEGW: 877, JPEGH: 620, RGB: true}}, ""), nil)
	rot := a4(LabPage(0))
	rot.Rotate = 90
	add("rotated.pdf", "page 1 of digital.pdf with /Rotate 90: shown landscape, its text turned with it", PDF([]PDFPage{rot}, ""), nil)
	var turned []PDFPage
	for _, r := range []int{0, 90, 180, 270} {
		turned = append(turned, PDFPage{W: 595, H: 842, Rotate: r, Content: GlyphPage(0)})
	}
	add("glyphs-rotated.pdf", "page 1 of digital.pdf with its numbers placed glyph by glyph (as Chromium writes), turned by /Rotate 0, 90, 180 and 270",
		PDF(turned, ""), nil)
	add("cropped.pdf", "page 1 of digital.pdf with a CropBox keeping its top: its first row shown, the others (below 690 pt) not",
		PDF([]PDFPage{{W: 595, H: 842, Content: LabPage(0), Crop: [4]float64{0, 690, 595, 842}}}, ""), nil)
	add("encrypted.pdf", "digital.pdf encrypted with the user password \"secret\" (RC4, 40 bits)",
		PDF([]PDFPage{a4(LabPage(0)), a4(LabPage(1))}, "secret"), nil)
	add("protected.pdf", "digital.pdf with an owner password only (no printing, copying or changing): opens without one, text and all",
		ProtectedPDF([]PDFPage{a4(LabPage(0)), a4(LabPage(1))}, "portal"), nil)
	add("form.pdf", "page 1 of digital.pdf as a filled form: its values only in text fields with no appearance (NeedAppearances)",
		PDF([]PDFPage{FormPage(0)}, ""), nil)
	add("truncated.pdf", "digital.pdf cut in half", digital[:len(digital)/2], nil)
	add("truncated.heic", "small.heic cut in its coded picture", small[:len(small)*2/3], nil)
	return files, firstErr
}
