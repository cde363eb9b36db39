// Package bmp decodes the BMPs that Windows, Paint and ImageMagick write: uncompressed ones
// through golang.org/x/image/bmp, and run-length coded ones (RLE8, RLE4), which that does not
// read, here. Its surface is image/jpeg's: DecodeConfig reads the headers, Decode the pixels,
// within what Cost says they take. It knows nothing of who calls it: its errors are plain, an
// *UnsupportedError (or ErrUnsupported, x/image/bmp's) for a valid file that uses a feature not
// read here, and any other error for damage.
package bmp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"

	xbmp "golang.org/x/image/bmp"

	"github.com/ocrdraft/ocrdraft/intake/internal/guard"
)

// ErrUnsupported is x/image/bmp's refusal of a feature it does not read, which the table of
// features refuses first for the BMPs met in the field.
var ErrUnsupported = xbmp.ErrUnsupported

// ErrLimit is Decode's refusal of a bitmap that takes more memory than its limit.
var ErrLimit = errors.New("bmp: the bitmap takes more memory than its limit")

// UnsupportedError is a valid BMP that uses a feature not read here: Feature names it, Instead
// completes "save it again …".
type UnsupportedError struct{ Feature, Instead string }

func (e *UnsupportedError) Error() string { return "bmp: " + e.Feature + " is not read" }

// DecodeConfig returns a BMP's size and colour model from its headers, refusing a feature not
// read here (*UnsupportedError) before any pixel is read.
func DecodeConfig(data []byte) (cfg image.Config, err error) {
	defer guard.Recover("bmp", &err)
	b, err := supported(data)
	if err != nil {
		return image.Config{}, err
	}
	if b.rle() { // x/image/bmp reads no run-length pixels
		return b.config(data)
	}
	return xbmp.DecodeConfig(bytes.NewReader(data))
}

// Decode decodes a BMP, refusing one whose Cost is over limit bytes (ErrLimit); an uncompressed
// one stops at its next row once ctx ends.
func Decode(ctx context.Context, data []byte, limit int64) (m image.Image, err error) {
	defer guard.Recover("bmp", &err)
	cfg, err := DecodeConfig(data)
	if err != nil {
		return nil, err
	}
	if Cost(cfg) > limit {
		return nil, ErrLimit
	}
	b, _ := readBMP(data)
	if b.rle() {
		return decodeRLE(data, b)
	}
	return xbmp.Decode(guard.Reader(ctx, bytes.NewReader(data)))
}

// Cost is the most bytes Decode holds for a BMP of cfg: x/image/bmp holds a paletted image at a
// byte per pixel and every other at four, and reads one row at a time; decodeRLE holds the same
// paletted image and reads the file in place.
func Cost(cfg image.Config) int64 {
	w, h := int64(cfg.Width), int64(cfg.Height)
	px := int64(4)
	if _, ok := cfg.ColorModel.(color.Palette); ok {
		px = 1
	}
	return w*h*px + 4*w
}

// header is what a BMP's file and info headers say, beside what x/image/bmp reads: enough to name what it will not decode, and to decode run-length pixels, which it
// does not.
type header struct {
	offset      int64 // of the pixels
	info        int   // size of the info header: 40, 108 or 124 (12 and 64 are OS/2's)
	w, h        int
	topDown     bool
	bpp         int
	compression int
	colours     int  // palette entries
	masks       bool // compression 3 with the masks x/image/bmp takes for no compression
}

// rle reports whether the pixels are run-length coded in the way decodeRLE reads.
func (b header) rle() bool {
	return b.compression == 1 && b.bpp == 8 || b.compression == 2 && b.bpp == 4
}

// readBMP reads a BMP's headers. Only a file too short for them is an error: what they say is
// judged by features and the decoders.
func readBMP(data []byte) (header, error) {
	le := binary.LittleEndian
	if len(data) < 18 {
		return header{}, errors.New("bmp: short header")
	}
	b := header{offset: int64(le.Uint32(data[10:])), info: int(le.Uint32(data[14:]))}
	if b.info < 40 { // OS/2 1.x, or damage: nothing more is read
		return b, nil
	}
	if len(data) < 54 {
		return header{}, errors.New("bmp: short info header")
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

// feature is one row of the table of what is not read: feature names what b uses, "" when it
// uses nothing of the kind; instead completes "save it again …".
type feature struct {
	feature func(b header) string
	instead string
}

// features are the BMPs that Windows, Paint and ImageMagick write which x/image/bmp does not
// read and decodeRLE does not either.
var features = []feature{
	{func(b header) string {
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
	{func(b header) string {
		switch {
		case b.compression == 0 || b.masks || b.rle():
			return ""
		case b.compression == 1 || b.compression == 2:
			return fmt.Sprintf("run-length coding of %d bits a pixel (compression %d)", b.bpp, b.compression)
		}
		if name, ok := compressions[b.compression]; ok {
			return fmt.Sprintf("%s (compression %d)", name, b.compression)
		}
		return fmt.Sprintf("compression %d", b.compression)
	}, "uncompressed, or run-length coded with 8 or 4 bits a pixel"},
	{func(b header) string {
		switch b.bpp {
		case 1, 2, 4, 8, 24, 32:
			return ""
		}
		return fmt.Sprintf("%d bits a pixel", b.bpp)
	}, "with 24 bits a pixel, or a palette of 8 bits"},
	{func(b header) string {
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

// compressions names the BMP compressions other than none and run-length.
var compressions = map[int]string{
	3: "bit fields", 4: "an embedded JPEG", 5: "an embedded PNG", 6: "alpha bit fields",
	11: "CMYK", 12: "run-length CMYK", 13: "run-length CMYK",
}

// supported reads a BMP's headers and refuses it when it uses a feature of the table.
func supported(data []byte) (header, error) {
	b, err := readBMP(data)
	if err != nil {
		return b, err
	}
	for _, f := range features {
		if name := f.feature(b); name != "" {
			return b, &UnsupportedError{Feature: name, Instead: f.instead}
		}
	}
	return b, nil
}

// config returns the size and palette of a run-length BMP.
func (b header) config(data []byte) (image.Config, error) {
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

// decodeRLE decodes a BMP of run-length coded pixels (RLE8, RLE4) into a paletted image,
// reading the file in place. Each pair of bytes is a run of one index (two, alternating, for
// RLE4) or an escape: end of line, end of bitmap, a move right and up (pixels skipped are index
// 0), or a stretch of indices as they are, padded to a word. Rows go up from the bottom unless
// the height is negative. A run past the end of its row is cut there, so the work is at most a
// write per pixel and a step per pair of bytes, and the memory is the image's.
func decodeRLE(data []byte, b header) (image.Image, error) {
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
