package intake

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"

	"golang.org/x/image/bmp"

	"github.com/ocrdraft/ocrdraft/problem"
)

// bmpFormat is BMP's row.
var bmpFormat = format{kind: "bmp", mime: "image/bmp", what: "a BMP image", match: func(b []byte) bool {
	// "BM" alone is too weak; the two reserved header words are zero in every real BMP.
	return len(b) >= 14 && bytes.HasPrefix(b, []byte("BM")) && bytes.Equal(b[6:10], []byte{0, 0, 0, 0})
}, read: readBMPPage}

// readBMPPage is the BMP row's read: its headers, the features it uses that are not read here,
// and its decoder: x/image/bmp, or decodeBMPRLE for run-length pixels, which that does not read.
func readBMPPage(_ format, data []byte, i int, _ Limits) (header, error) {
	if i != 0 {
		return header{}, pastOnePage(i)
	}
	b, err := bmpSupported(data)
	if err != nil {
		return header{}, err
	}
	var cfg image.Config
	dec := bmp.Decode
	if b.rle() {
		cfg, err = b.config(data)
		dec = func(io.Reader) (image.Image, error) { return decodeBMPRLE(data, b) }
	} else {
		cfg, err = decodeConfig(bmp.DecodeConfig, bytes.NewReader(data))
	}
	if err != nil {
		return header{}, err
	}
	return header{w: cfg.Width, h: cfg.Height, model: cfg.ColorModel, orient: 1,
		price:  func() (cost, error) { return bmpCost(cfg), nil },
		decode: func(context.Context, []byte) decoder { return dec },
	}, nil
}

// bmpHeader is what intake reads from a BMP's file and info headers, beside what x/image/bmp
// reads: enough to name what it will not decode, and to decode run-length pixels, which it
// does not.
type bmpHeader struct {
	offset      int64 // of the pixels
	info        int   // size of the info header: 40, 108 or 124 (12 and 64 are OS/2's)
	w, h        int
	topDown     bool
	bpp         int
	compression int
	colours     int  // palette entries
	masks       bool // compression 3 with the masks x/image/bmp takes for no compression
}

// rle reports whether the pixels are run-length coded in the way decodeBMPRLE reads.
func (b bmpHeader) rle() bool {
	return b.compression == 1 && b.bpp == 8 || b.compression == 2 && b.bpp == 4
}

// readBMP reads a BMP's headers. Only a file too short for them is an error: what they say is
// judged by bmpFeatures and the decoders.
func readBMP(data []byte) (bmpHeader, error) {
	le := binary.LittleEndian
	if len(data) < 18 {
		return bmpHeader{}, errors.New("bmp: short header")
	}
	b := bmpHeader{offset: int64(le.Uint32(data[10:])), info: int(le.Uint32(data[14:]))}
	if b.info < 40 { // OS/2 1.x, or damage: nothing more is read
		return b, nil
	}
	if len(data) < 54 {
		return bmpHeader{}, errors.New("bmp: short info header")
	}
	b.w, b.h = int(int32(le.Uint32(data[18:]))), int(int32(le.Uint32(data[22:])))
	if b.h < 0 {
		b.h, b.topDown = -b.h, true
	}
	b.bpp, b.compression = int(le.Uint16(data[28:])), int(le.Uint32(data[30:]))
	b.colours = int(le.Uint32(data[46:]))
	if b.colours == 0 && b.bpp <= 8 {
		b.colours = 1 << b.bpp
	}
	b.masks = b.compression == 3 && b.info > 40 && len(data) >= 70 &&
		le.Uint32(data[54:]) == 0xff0000 && le.Uint32(data[58:]) == 0xff00 && le.Uint32(data[62:]) == 0xff && le.Uint32(data[66:]) == 0xff000000
	return b, nil
}

// bmpFeature is one row of the BMP table, as tiffFeature is of the TIFF one.
type bmpFeature struct {
	feature func(b bmpHeader) string
	instead string
}

// bmpFeatures are the BMPs that Windows, Paint and ImageMagick write which x/image/bmp does not
// read and decodeBMPRLE does not either.
var bmpFeatures = []bmpFeature{
	{func(b bmpHeader) string {
		switch b.info {
		case 40, 108, 124:
			return ""
		case 12:
			return "an OS/2 1.x header (BITMAPCOREHEADER)"
		case 64:
			return "an OS/2 2.x header"
		case 52, 56:
			return "a BITMAPV2/V3INFOHEADER"
		}
		return fmt.Sprintf("an info header of %d bytes", b.info)
	}, "with a Windows 3 (BITMAPINFOHEADER) or later header"},
	{func(b bmpHeader) string {
		switch {
		case b.compression == 0 || b.masks || b.rle():
			return ""
		case b.compression == 1 || b.compression == 2:
			return fmt.Sprintf("run-length coding of %d bits a pixel (compression %d)", b.bpp, b.compression)
		}
		if name, ok := bmpCompressions[b.compression]; ok {
			return fmt.Sprintf("%s (compression %d)", name, b.compression)
		}
		return fmt.Sprintf("compression %d", b.compression)
	}, "uncompressed, or run-length coded with 8 or 4 bits a pixel"},
	{func(b bmpHeader) string {
		switch b.bpp {
		case 1, 2, 4, 8, 24, 32:
			return ""
		}
		return fmt.Sprintf("%d bits a pixel", b.bpp)
	}, "with 24 bits a pixel, or a palette of 8 bits"},
	{func(b bmpHeader) string {
		want := int64(14 + b.info) // x/image/bmp reads the pixels right after the palette
		if b.bpp <= 8 {
			want += 4 * int64(b.colours)
		}
		if b.rle() || b.colours > 1<<min(b.bpp, 24) || b.offset == want {
			return ""
		}
		return "pixels that do not follow the palette directly"
	}, "with 24 bits a pixel"},
}

// bmpCompressions names the BMP compressions other than none and run-length.
var bmpCompressions = map[int]string{
	3: "bit fields", 4: "an embedded JPEG", 5: "an embedded PNG", 6: "alpha bit fields",
	11: "CMYK", 12: "run-length CMYK", 13: "run-length CMYK",
}

// bmpSupported reads a BMP's headers and refuses it when it uses a feature of the table.
func bmpSupported(data []byte) (bmpHeader, error) {
	b, err := readBMP(data)
	if err != nil {
		return b, err
	}
	for _, f := range bmpFeatures {
		if name := f.feature(b); name != "" {
			return b, problem.Errorf(problem.UnsupportedMediaType,
				"the BMP uses %s, which is not read here; save it again %s, or as PNG", name, f.instead)
		}
	}
	return b, nil
}

// config returns the size and palette of a run-length BMP.
func (b bmpHeader) config(data []byte) (image.Config, error) {
	at := 14 + int64(b.info)
	if b.w <= 0 || b.h <= 0 || b.colours > 1<<b.bpp || at+4*int64(b.colours) > int64(len(data)) {
		return image.Config{}, errors.New("bmp: bad size or palette")
	}
	p := make(color.Palette, b.colours)
	for i := range p {
		q := data[at+4*int64(i):]
		p[i] = color.RGBA{q[2], q[1], q[0], 0xff}
	}
	return image.Config{Width: b.w, Height: b.h, ColorModel: p}, nil
}

// decodeBMPRLE decodes a BMP of run-length coded pixels (RLE8, RLE4) into a paletted image,
// reading the file in place. Each pair of bytes is a run of one index (two, alternating, for
// RLE4) or an escape: end of line, end of bitmap, a move right and up (pixels skipped are index
// 0), or a stretch of indices as they are, padded to a word. Rows go up from the bottom unless
// the height is negative. A run past the end of its row is cut there, so the work is at most a
// write per pixel and a step per pair of bytes, and the memory is the image's.
func decodeBMPRLE(data []byte, b bmpHeader) (image.Image, error) {
	cfg, err := b.config(data)
	if err != nil {
		return nil, err
	}
	pal := cfg.ColorModel.(color.Palette)
	m := image.NewPaletted(image.Rect(0, 0, b.w, b.h), pal)
	if b.offset > int64(len(data)) {
		return nil, errors.New("bmp: pixels past the end of the file")
	}
	src := data[b.offset:]
	four := b.bpp == 4
	index := func(s []byte, j int) byte { // the j-th index of a stretch
		if !four {
			return s[j]
		}
		return s[j/2] >> (4 * (1 - j%2)) & 15
	}
	x, y := 0, 0 // y counts rows as the file stores them
	for i := 0; y < b.h; {
		if i+2 > len(src) {
			return nil, errors.New("bmp: the run-length data ends before the end of the bitmap")
		}
		n, c := int(src[i]), src[i+1]
		i += 2
		r := y
		if !b.topDown {
			r = b.h - 1 - y
		}
		row := m.Pix[r*m.Stride : r*m.Stride+b.w]
		switch {
		case n > 0: // a run
			hi, lo := c, c
			if four {
				hi, lo = c>>4, c&15
			}
			for j := range min(n, b.w-x) {
				if row[x+j] = hi; j%2 == 1 {
					row[x+j] = lo
				}
				if int(row[x+j]) >= len(pal) {
					return nil, errors.New("bmp: palette index out of range")
				}
			}
			x = min(b.w, x+n)
		case c == 0: // end of line
			x, y = 0, y+1
		case c == 1: // end of bitmap
			return m, nil
		case c == 2: // move
			if i+2 > len(src) {
				return nil, errors.New("bmp: the run-length data ends in a move")
			}
			x, y = min(b.w, x+int(src[i])), y+int(src[i+1])
			i += 2
		default: // c indices as they are
			size := int(c)
			if four {
				size = (size + 1) / 2
			}
			if i+size > len(src) {
				return nil, errors.New("bmp: the run-length data ends in a stretch of pixels")
			}
			for j := range min(int(c), b.w-x) {
				if row[x+j] = index(src[i:], j); int(row[x+j]) >= len(pal) {
					return nil, errors.New("bmp: palette index out of range")
				}
			}
			x = min(b.w, x+int(c))
			i += size + size%2
		}
	}
	return m, nil
}
