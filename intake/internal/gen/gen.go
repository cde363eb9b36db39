// Package gen makes the test images in testdata/images. They are generated rather than collected
// so that each one shows exactly the property its test is about, holds no patient data, and can
// be remade: run
//
//	go test ./intake/internal/gen -run TestGolden -update
//
// Go can encode JPEG, PNG and GIF (and, through x/image, TIFF and BMP) but not CMYK JPEG or WebP;
// this package writes those two by hand with the smallest bitstreams their decoders accept (a
// JPEG whose 8×8 blocks carry only their DC term, and a lossless WebP whose pixels are one bit
// each), and both are checked by decoding them with the decoders intake uses.
package gen

//go:generate go test -run TestGolden -update .

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// File is one generated test image.
type File struct {
	Name string
	Data []byte
	Note string // what it is for
}

// Files returns every test image, in a fixed order.
func Files() ([]File, error) {
	var files []File
	var firstErr error
	add := func(name, note string, data []byte, err error) {
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", name, err)
		}
		files = append(files, File{name, data, note})
	}

	scan, err := encodeJPEG(Report(1240, 1754), 85)
	add("scan.jpg", "1240×1754 grey report scan, upright, no EXIF: goes as its own bytes", scan, err)

	phone, err := encodeJPEG(Stored(Photo(3024, 4032), 6), 70)
	add("phone-exif6.jpg", "4032×3024 colour photo stored sideways with EXIF orientation 6", WithExif(phone, 6), err)

	small, err := encodeJPEG(Photo(600, 800), 85)
	add("upright-exif1.jpg", "600×800 colour photo with EXIF orientation 1: goes as its own bytes", WithExif(small, 1), err)

	alpha, err := encodePNG(Alpha(300, 200))
	add("alpha.png", "300×200 PNG, ink on a transparent background: flattened onto white", alpha, err)

	g16, err := encodePNG(Gray16(200, 300))
	add("grey16.png", "200×300 16-bit grey PNG: brought to 8 bits", g16, err)

	pal, err := encodePNG(Paletted(200, 300))
	add("palette.png", "200×300 opaque palette PNG: goes as its own bytes", pal, err)

	add("cmyk.jpg", "128×96 Adobe CMYK JPEG, hand-written: converted to RGB", CMYKJPEG(128, 96, cmykTiles), nil)

	add("bilevel.webp", "160×120 lossless WebP, hand-written: black bars on white", WebP(160, 120, webpInk), nil)

	anim, err := encodeGIF()
	add("anim.gif", "2-frame GIF: the first frame (black square on white) is used", anim, err)

	add("photo.heic", "a HEIC header (ftyp heic) and nothing more: image_unreadable", heic(), nil)
	add("scan.pdf", "a one-page PDF with nothing on its page: a blank page", pdf(), nil)

	var tb bytes.Buffer
	err = tiff.Encode(&tb, Report(64, 90), nil)
	add("scan.tiff", "64×90 grey TIFF from x/image: re-encoded as JPEG", tb.Bytes(), err)

	add("fax.tiff", "a 3-page bilevel fax, hand-written: 864×1100 G4, a thumbnail that is no page, 800×1100 G4, 432×560 uncompressed",
		FaxTIFF([]FaxPage{
			{Image: Report(864, 1100), Compression: TIFFG4},
			{Image: Report(108, 137), Compression: TIFFNone, Thumbnail: true},
			{Image: Report(800, 1100), Compression: TIFFG4},
			{Image: Report(432, 560), Compression: TIFFNone},
		}), nil)

	add("fax-normal.tiff", "a one-page G4 fax in normal mode, 864×550 at 204×98 dpi: shown 864×1100",
		FaxTIFF([]FaxPage{{Image: Report(864, 550), Compression: TIFFG4, XRes: 204, YRes: 98}}), nil)

	add("scan-jpeg.tiff", "a 620×877 colour scan in JPEG strips of 64 rows sharing one JPEGTables (compression 7), as office scanners write: decoded by intake, not x/image",
		JPEGTIFF(Photo(620, 877), 64, false, true), nil)

	var bb bytes.Buffer
	err = bmp.Encode(&bb, Report(64, 90))
	add("scan.bmp", "64×90 BMP: re-encoded as JPEG", bb.Bytes(), err)

	add("truncated.jpg", "scan.jpg cut in half: the header reads, the pixels do not", scan[:len(scan)/2], nil)

	tp := bytes.Clone(pal[:len(pal)*2/3])
	add("truncated.png", "palette.png cut in its IDAT", tp, nil)

	add("empty.jpg", "zero bytes", []byte{}, nil)

	tiny, err := encodePNG(Report(8, 8))
	add("tiny.png", "8×8 PNG: too small to read", tiny, err)

	add("bomb.png", "PNG whose header declares 40000×40000: rejected before decoding", Bomb(40000, 40000), nil)

	return files, firstErr
}

// rng is a tiny deterministic generator, so that the images do not change with math/rand.
type rng uint64

func (r *rng) next(n int) int {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return int(uint64(*r) % uint64(n))
}

// page draws a lab report's layout at any size: a title, a header block, a ruled table of
// results with name, value, unit and range columns, and a footer. ink is called for each bar.
func page(w, h int, ink func(r image.Rectangle)) {
	// The layout is in units of a 1240-pixel-wide page; a unit is never less than a pixel, so tiny
	// pages still end.
	u := func(v float64) int { return max(1, int(v*float64(w)/1240)) }
	r := rng(0x9e3779b97f4a7c15)
	bar := func(x0, y0, x1, y1 int) { ink(image.Rect(x0, y0, x1, y1)) }
	words := func(x0, x1, y, th int) {
		for x := x0; x < x1; {
			ww := u(float64(20 + r.next(90)))
			if x+ww > x1 {
				ww = x1 - x
			}
			bar(x, y, x+ww, y+th)
			x += ww + u(14)
		}
	}
	bar(u(420), u(80), u(820), u(120)) // title
	for i := range 3 {                 // patient, sample, doctor
		y := u(170) + i*u(40)
		words(u(100), u(560), y, u(18))
		words(u(660), u(1140), y, u(18))
	}
	bar(u(80), u(310), u(1160), u(314))
	top := u(340)
	rows := 0
	for y := top; y+u(60) < h*75/100; y += u(52) {
		words(u(100), u(100)+u(float64(160+r.next(200))), y, u(20)) // item name
		bar(u(560), y, u(560)+u(float64(50+r.next(40))), y+u(20))   // value
		if r.next(4) == 0 {
			bar(u(650), y, u(666), y+u(20)) // ↑ flag
		}
		bar(u(720), y, u(800), y+u(20))  // unit
		bar(u(900), y, u(1060), y+u(20)) // range
		rows++
	}
	bar(u(80), top+rows*u(52), u(1160), top+rows*u(52)+u(4))
	words(u(100), u(1140), h*88/100, u(16)) // footer
}

// Report is a grey scan of a report: dark bars on paper white.
func Report(w, h int) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(m, m.Rect, image.NewUniform(color.Gray{0xf4}), image.Point{}, draw.Src)
	page(w, h, func(r image.Rectangle) {
		draw.Draw(m, r, image.NewUniform(color.Gray{0x22}), image.Point{}, draw.Src)
	})
	return m
}

// Photo is a phone photo of a report, upright: a page lit unevenly lying on a wooden desk. It is
// smooth apart from the ink, so that a 12-megapixel JPEG of it stays small.
func Photo(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	mx, my := w/16, h/20 // desk margin
	for y := range h {
		for x := range w {
			var c color.RGBA
			if x < mx || x >= w-mx || y < my || y >= h-my {
				c = color.RGBA{0x8a - uint8(y*0x20/h), 0x5c, 0x3a, 0xff} // desk
			} else {
				l := uint8(0xff - (x+y)*0x28/(w+h)) // light falls off to the bottom right
				c = color.RGBA{l, l, l - 8, 0xff}
			}
			i := m.PixOffset(x, y)
			m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = c.R, c.G, c.B, c.A
		}
	}
	inner := image.Rect(mx, my, w-mx, h-my)
	page(inner.Dx(), inner.Dy(), func(r image.Rectangle) {
		draw.Draw(m, r.Add(inner.Min).Intersect(inner), image.NewUniform(color.RGBA{0x1c, 0x1c, 0x2a, 0xff}), image.Point{}, draw.Src)
	})
	return m
}

// Stored returns the pixels a camera stores for an upright image under an EXIF orientation: the
// image that, turned as orientation o says, shows up.
func Stored(up image.Image, o int) *image.RGBA {
	b := up.Bounds()
	w, h := b.Dx(), b.Dy() // upright size
	sw, sh := w, h
	if o >= 5 {
		sw, sh = h, w
	}
	m := image.NewRGBA(image.Rect(0, 0, sw, sh))
	rgba, _ := up.(*image.RGBA)
	for y := range sh {
		for x := range sw {
			var dx, dy int // where stored (x, y) is seen
			switch o {
			case 2:
				dx, dy = sw-1-x, y
			case 3:
				dx, dy = sw-1-x, sh-1-y
			case 4:
				dx, dy = x, sh-1-y
			case 5:
				dx, dy = y, x
			case 6:
				dx, dy = sh-1-y, x
			case 7:
				dx, dy = sh-1-y, sw-1-x
			case 8:
				dx, dy = y, sw-1-x
			default:
				dx, dy = x, y
			}
			if rgba != nil { // the fast way, for the 12-megapixel photo
				i := rgba.PixOffset(b.Min.X+dx, b.Min.Y+dy)
				copy(m.Pix[m.PixOffset(x, y):], rgba.Pix[i:i+4])
				continue
			}
			m.Set(x, y, up.At(b.Min.X+dx, b.Min.Y+dy))
		}
	}
	return m
}

// Alpha is ink on a transparent background, with a half-transparent band, as a screenshot or an
// app export might be.
func Alpha(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	page(w, h, func(r image.Rectangle) {
		draw.Draw(m, r, image.NewUniform(color.NRGBA{0x10, 0x10, 0x10, 0xff}), image.Point{}, draw.Src)
	})
	draw.Draw(m, image.Rect(0, h-20, w, h), image.NewUniform(color.NRGBA{0x00, 0x00, 0xff, 0x80}), image.Point{}, draw.Src)
	return m
}

// Gray16 is a 16-bit grey report with a gradient, so the low byte matters.
func Gray16(w, h int) *image.Gray16 {
	m := image.NewGray16(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.SetGray16(x, y, color.Gray16{uint16(0xf000 + (x*y)%0x0fff)})
		}
	}
	page(w, h, func(r image.Rectangle) {
		draw.Draw(m, r, image.NewUniform(color.Gray16{0x2222}), image.Point{}, draw.Src)
	})
	return m
}

// Paletted is an opaque palette image, as a fax or a screenshot tool might save.
func Paletted(w, h int) *image.Paletted {
	m := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.Black, color.RGBA{0xcc, 0, 0, 0xff}})
	page(w, h, func(r image.Rectangle) {
		draw.Draw(m, r, image.NewUniform(color.Black), image.Point{}, draw.Src)
	})
	return m
}

func encodeJPEG(m image.Image, q int) ([]byte, error) {
	var b bytes.Buffer
	err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q})
	return b.Bytes(), err
}

func encodePNG(m image.Image) ([]byte, error) {
	var b bytes.Buffer
	err := png.Encode(&b, m)
	return b.Bytes(), err
}

// encodeGIF writes two frames: a black square on white, then a white square on black.
func encodeGIF() ([]byte, error) {
	pal := color.Palette{color.White, color.Black}
	a := image.NewPaletted(image.Rect(0, 0, 64, 64), pal)
	draw.Draw(a, image.Rect(16, 16, 48, 48), image.NewUniform(color.Black), image.Point{}, draw.Src)
	b := image.NewPaletted(image.Rect(0, 0, 64, 64), pal)
	draw.Draw(b, b.Rect, image.NewUniform(color.Black), image.Point{}, draw.Src)
	draw.Draw(b, image.Rect(16, 16, 48, 48), image.NewUniform(color.White), image.Point{}, draw.Src)
	var buf bytes.Buffer
	err := gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{a, b}, Delay: []int{50, 50}})
	return buf.Bytes(), err
}

// WithExif returns a JPEG with an APP1 Exif segment holding only orientation o, placed right
// after SOI where cameras put it.
func WithExif(jpg []byte, o int) []byte {
	tiffHdr := []byte{
		'M', 'M', 0, 42, 0, 0, 0, 8, // big-endian TIFF, IFD0 at offset 8
		0, 1, // one entry
		0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(o), 0, 0, // Orientation, SHORT, count 1, value o
		0, 0, 0, 0, // no next IFD
	}
	seg := append([]byte("Exif\x00\x00"), tiffHdr...)
	out := make([]byte, 0, len(jpg)+len(seg)+4)
	out = append(out, jpg[:2]...)
	out = append(out, 0xff, 0xe1, byte((len(seg)+2)>>8), byte(len(seg)+2))
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// Bomb is a PNG whose header declares w×h RGB pixels but whose IDAT holds only a little of them:
// enough for a decoder that trusts the header to allocate w×h×3 bytes and start inflating.
func Bomb(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	pngChunk(&b, "IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 1<<20)) // 1 MiB of zero rows squeezes to about a kilobyte
	zw.Close()
	pngChunk(&b, "IDAT", z.Bytes())
	pngChunk(&b, "IEND", nil)
	return b.Bytes()
}

func pngChunk(b *bytes.Buffer, typ string, data []byte) {
	binary.Write(b, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.Write(b, binary.BigEndian, crc.Sum32())
}

// heic is the start of an iPhone HEIC: the ftyp box, then the meta box's header; enough for any
// sniffer, and not an image.
func heic() []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0, 0x18})
	b.WriteString("ftypheic\x00\x00\x00\x00mif1heic")
	b.Write([]byte{0, 0, 0, 0x22})
	b.WriteString("meta\x00\x00\x00\x00")
	b.Write(make([]byte, 0x22-12))
	return b.Bytes()
}

// pdf is a minimal one-page PDF with a correct cross-reference table.
func pdf() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// cmykTiles paints 16×16 tiles: pure cyan, magenta, yellow and black ink, and paper (no ink), so
// a test can tell a CMYK decoder that inverts from one that does not.
func cmykTiles(x, y int) color.CMYK {
	switch (x/16 + y/16) % 5 {
	case 0:
		return color.CMYK{C: 0xff}
	case 1:
		return color.CMYK{M: 0xff}
	case 2:
		return color.CMYK{Y: 0xff}
	case 3:
		return color.CMYK{K: 0xff}
	}
	return color.CMYK{}
}

// webpInk draws a black frame and bars on white.
func webpInk(x, y int) bool {
	return x < 4 || y < 4 || x >= 156 || y >= 116 || (y%20 >= 10 && y%20 < 14 && x >= 20 && x < 140)
}

// Noise is a picture of colour noise, every channel of every pixel drawn at random: the costliest
// picture per pixel for a decoder of transform coding (an HEVC decoder does about six times a
// photo's work on it), since nothing is predicted and every coefficient is coded.
func Noise(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rng(0x2545f4914f6cdd1d)
	for i := range m.Pix {
		if i%4 == 3 {
			m.Pix[i] = 0xff
		} else {
			m.Pix[i] = uint8(r.next(256))
		}
	}
	return m
}
