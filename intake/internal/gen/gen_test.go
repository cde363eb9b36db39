package gen

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/ccitt"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"

	"github.com/ocrdraft/ocrdraft/intake/internal/fax"
)

var update = flag.Bool("update", false, "rewrite testdata/images from the generator")

// dir is testdata/images at the repository root.
var dir = filepath.Join("..", "..", "..", "testdata", "images")

// TestGolden keeps the committed images equal to what the generator makes, so that a fixture is
// never edited by hand and its note here stays true. Go's encoders are deterministic; if a Go
// release changes one, rerun with -update and review the images.
func TestGolden(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	total := 0
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Errorf("%s: %v (run go test ./intake/internal/gen -run TestGolden -update)", f.Name, err)
			continue
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s: committed file (%d bytes) differs from the generator's (%d bytes); rerun with -update", f.Name, len(got), len(f.Data))
		}
		total += len(got)
	}
	if total > 3<<20 {
		t.Errorf("test images total %d bytes; keep them under 3 MiB", total)
	}
}

// TestCMYKJPEG checks the hand-written CMYK JPEG against Go's decoder, pixel for pixel.
func TestCMYKJPEG(t *testing.T) {
	m, err := jpeg.Decode(bytes.NewReader(CMYKJPEG(128, 96, cmykTiles)))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := m.(*image.CMYK)
	if !ok {
		t.Fatalf("decoded as %T, want *image.CMYK", m)
	}
	if got, want := c.Bounds(), image.Rect(0, 0, 128, 96); got != want {
		t.Fatalf("bounds %v, want %v", got, want)
	}
	for y := range 96 {
		for x := range 128 {
			if got, want := c.CMYKAt(x, y), cmykTiles(x, y); got != want {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got, want)
			}
		}
	}
}

// TestWebP checks the hand-written lossless WebP against x/image/webp, pixel for pixel.
func TestWebP(t *testing.T) {
	for _, size := range []image.Point{{160, 120}, {1, 1}, {33, 7}} {
		data := WebP(size.X, size.Y, webpInk)
		cfg, err := webp.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%v: config: %v", size, err)
		}
		if cfg.Width != size.X || cfg.Height != size.Y {
			t.Fatalf("%v: config says %d×%d", size, cfg.Width, cfg.Height)
		}
		m, err := webp.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%v: %v", size, err)
		}
		for y := range size.Y {
			for x := range size.X {
				want := color.NRGBA{0xf0, 0xf0, 0xf0, 0xff}
				if webpInk(x, y) {
					want = color.NRGBA{0x20, 0x20, 0x20, 0xff}
				}
				if got := color.NRGBAModel.Convert(m.At(x, y)); got != want {
					t.Fatalf("%v: pixel (%d,%d) = %v, want %v", size, x, y, got, want)
				}
			}
		}
	}
}

// TestStored checks Stored against the EXIF definitions of where row 0 and column 0 of the
// stored image are seen: for 6 ("right-top"), stored row 0 is the upright image's right edge read
// downwards, and stored column 0 its top edge read leftwards.
func TestStored(t *testing.T) {
	up := image.NewRGBA(image.Rect(0, 0, 3, 2)) // upright, 3 wide: pixel value = 1 + index
	for i := range 6 {
		up.Pix[4*i] = byte(1 + i)
	}
	tests := []struct {
		o    int
		want [][]byte // stored rows of upright indices+1
	}{
		{1, [][]byte{{1, 2, 3}, {4, 5, 6}}},
		{2, [][]byte{{3, 2, 1}, {6, 5, 4}}},
		{3, [][]byte{{6, 5, 4}, {3, 2, 1}}},
		{4, [][]byte{{4, 5, 6}, {1, 2, 3}}},
		{5, [][]byte{{1, 4}, {2, 5}, {3, 6}}},
		{6, [][]byte{{3, 6}, {2, 5}, {1, 4}}},
		{7, [][]byte{{6, 3}, {5, 2}, {4, 1}}},
		{8, [][]byte{{4, 1}, {5, 2}, {6, 3}}},
	}
	for _, tt := range tests {
		m := Stored(up, tt.o)
		var got [][]byte
		for y := range m.Rect.Dy() {
			var row []byte
			for x := range m.Rect.Dx() {
				row = append(row, m.RGBAAt(x, y).R)
			}
			got = append(got, row)
		}
		if !equalRows(got, tt.want) {
			t.Errorf("orientation %d: stored %v, want %v", tt.o, got, tt.want)
		}
	}
}

func equalRows(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestScans checks that Go's decoder accepts the scan-heavy files and decodes them to the size
// and kind they declare.
func TestScans(t *testing.T) {
	for _, tt := range []struct {
		n, scans    int
		progressive bool
		want        string
	}{{1, 20, true, "*image.Gray"}, {3, 20, true, "*image.YCbCr"}, {3, 5, false, "*image.YCbCr"}} {
		m, err := jpeg.Decode(bytes.NewReader(Scans(100, 60, tt.n, tt.scans, tt.progressive)))
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		if got := fmt.Sprintf("%T", m); got != tt.want || m.Bounds() != image.Rect(0, 0, 100, 60) {
			t.Errorf("%+v: %s of %v", tt, got, m.Bounds())
		}
	}
}

// TestFaxTIFF checks the hand-written TIFF against x/image/tiff: each page, G3, G4 or uncompressed,
// decodes to the bilevel page it was made from; a BlackIsZero CCITT page, to its negative, which
// is how x/image/tiff reads libtiff's BlackIsZero faxes (intake inverts it back).
func TestFaxTIFF(t *testing.T) {
	tests := []struct {
		c        int
		black    bool
		negative bool
	}{{TIFFNone, false, false}, {TIFFG3, false, false}, {TIFFG4, false, false}, {TIFFNone, true, false}, {TIFFG3, true, true}, {TIFFG4, true, true}}
	for _, tt := range tests {
		c := tt.c
		want := Report(300, 420)
		data := FaxTIFF([]FaxPage{{Image: want, Compression: c, BlackIsZero: tt.black}})
		m, err := tiff.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("compression %d: %v", c, err)
		}
		if m.Bounds() != want.Rect {
			t.Fatalf("compression %d: bounds %v, want %v", c, m.Bounds(), want.Rect)
		}
		for y := range 420 {
			for x := range 300 {
				g := color.GrayModel.Convert(m.At(x, y)).(color.Gray).Y
				if (g < 128) != (want.GrayAt(x, y).Y < 128 != tt.negative) {
					t.Fatalf("compression %d (BlackIsZero %v): pixel (%d, %d) is %d, want %d", c, tt.black, x, y, g, want.GrayAt(x, y).Y)
				}
			}
		}
	}
}

var heifEnc = flag.Bool("heif-enc", false, "re-encode the HEIC bases in testdata/documents with heif-enc")

// docs is testdata/documents at the repository root.
var docs = filepath.Join("..", "..", "..", "testdata", "documents")

// TestHEICBases re-encodes the HEIC bases with -heif-enc; without it, checks they are there.
func TestHEICBases(t *testing.T) {
	for _, b := range HEICBases {
		if *heifEnc {
			data, err := EncodeHEIC(b.Image(), b.Quality)
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			if err := os.MkdirAll(docs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(docs, b.Name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(filepath.Join(docs, b.Name)); err != nil {
			t.Errorf("%s: %v (run go test ./intake/internal/gen -run TestHEICBases -heif-enc)", b.Name, err)
		}
	}
}

// TestGoldenDocuments is TestGolden for testdata/documents.
func TestGoldenDocuments(t *testing.T) {
	files, err := Documents(docs)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		path := filepath.Join(docs, f.Name)
		if *update {
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run go test ./intake/internal/gen -run TestGoldenDocuments -update)", f.Name, err)
			continue
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s: committed file (%d bytes) differs from the generator's (%d bytes); rerun with -update", f.Name, len(got), len(f.Data))
		}
		total += len(got)
	}
	if total > 2<<20 {
		t.Errorf("documents total %d bytes; keep them under 2 MiB", total)
	}
}

// TestRLEBMP checks the run-length BMP writer by the rules of the format: the stream holds only
// runs, stretches, ends of line and one end of bitmap, and spends fewer bytes than pixels on a
// page of long runs.
func TestRLEBMP(t *testing.T) {
	m := Paletted(300, 200)
	for _, four := range []bool{false, true} {
		data := RLEBMP(m, four)
		px := data[14+40+4*len(m.Palette):]
		lines, i := 0, 0
		for i+2 <= len(px) {
			n, c := px[i], px[i+1]
			i += 2
			switch {
			case n > 0:
			case c == 0:
				lines++
			case c == 1:
				if i != len(px) {
					t.Errorf("four %v: the end of bitmap at %d of %d bytes", four, i, len(px))
				}
			case c == 2:
				t.Fatalf("four %v: a move, which the writer never writes", four)
			default:
				size := int(c)
				if four {
					size = (size + 1) / 2
				}
				i += size + size%2
			}
		}
		if lines != 200 || len(px) >= 300*200/2 {
			t.Errorf("four %v: %d ends of line in %d bytes", four, lines, len(px))
		}
	}
}

// TestModifiedREAD checks mr, the 2-D coder of G3 2-D pages, against x/image/ccitt: a page
// with every row coded against the row above, as Group 4 codes it, decodes to its pixels.
func TestModifiedREAD(t *testing.T) {
	for _, want := range []*image.Gray{Report(300, 420), negative(Report(97, 64)), dither(123, 80)} {
		w, h := want.Rect.Dx(), want.Rect.Dy()
		b := fax.NewWriter(nil)
		ref := bytes.Repeat([]byte{0xff}, w)
		for y := range h {
			row := want.Pix[y*want.Stride : y*want.Stride+w]
			mr(b, ref, row)
			ref = row
		}
		b.Put(fax.EOL)
		b.Put(fax.EOL)
		got := image.NewGray(want.Rect)
		if err := ccitt.DecodeIntoGray(got, bytes.NewReader(b.Bytes()), ccitt.MSB, ccitt.Group4, nil); err != nil {
			t.Fatalf("%v: %v", want.Rect, err)
		}
		for i, v := range got.Pix {
			if v < 128 != (want.Pix[i] < 128) {
				t.Fatalf("%v: pixel (%d, %d) differs", want.Rect, i%w, i/w)
			}
		}
	}
}

// dither is a page of isolated pixels and short runs, which 2-D coding meets as pass and
// vertical modes of every offset.
func dither(w, h int) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	r := rng(7)
	for i := range m.Pix {
		if r.next(3) == 0 {
			m.Pix[i] = 0xff
		}
	}
	return m
}
