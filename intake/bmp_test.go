package intake

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/jpeg"
	"strings"
	"testing"

	xbmp "golang.org/x/image/bmp"

	"github.com/ocrdraft/ocrdraft/intake/internal/bmp"
	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/problem"
)

// quantised is a photo drawn onto a palette of n colours (216 web-safe ones, or 16 greys), so
// that its rows have stretches of changing indices as well as runs.
func quantised(w, h, n int) *image.Paletted {
	p := color.Palette(palette.WebSafe)
	if n == 16 {
		p = make(color.Palette, 16)
		for i := range p {
			p[i] = color.Gray{uint8(17 * i)}
		}
	}
	m := image.NewPaletted(image.Rect(0, 0, w, h), p)
	draw.FloydSteinberg.Draw(m, m.Rect, gen.Photo(w, h), image.Point{})
	return m
}

// TestBMPRLE decodes run-length BMPs as Windows and ImageMagick write them, RLE8 and RLE4: every
// index is the source's, and the prepared page shows its colours.
func TestBMPRLE(t *testing.T) {
	tests := []struct {
		name string
		src  *image.Paletted
		four bool
	}{
		{"RLE8 of a dithered photo", quantised(301, 200, 216), false},
		{"RLE4 of a dithered photo, odd width", quantised(301, 200, 16), true},
		{"RLE8 of a page", gen.Paletted(640, 480), false},
		{"RLE4 of a page", gen.Paletted(640, 480), true},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := gen.RLEBMP(tt.src, tt.four)
			if _, err := p.inspect(data, 0); err != nil {
				t.Fatal(err)
			}
			m, err := bmp.Decode(t.Context(), data, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			got := m.(*image.Paletted)
			if got.Rect != tt.src.Rect || !bytes.Equal(got.Pix, tt.src.Pix) {
				t.Fatalf("the indices differ from the source's")
			}
			pg, err := p.Prepare(t.Context(), data)
			if err != nil {
				t.Fatal(err)
			}
			out, err := jpeg.Decode(bytes.NewReader(pg.Data))
			if err != nil {
				t.Fatal(err)
			}
			if worst := areaDiff(out, tt.src); worst > 24 {
				t.Errorf("the prepared page: an 8×8 area differs by %d in a channel's mean", worst)
			}
		})
	}
}

// TestBMPUnsupported: a valid BMP that uses a feature nothing here decodes is refused as
// unsupported_media_type by the feature's name, from its headers, never as damaged.
func TestBMPUnsupported(t *testing.T) {
	le := binary.LittleEndian
	// rle is an RLE8 BMP with its headers rewritten by edit.
	rle := func(edit func(b []byte)) []byte {
		b := gen.RLEBMP(gen.Paletted(64, 64), false)
		edit(b)
		return b
	}
	var plain bytes.Buffer // x/image/bmp's, its pixels moved on from the palette by 4 bytes
	if err := xbmp.Encode(&plain, gen.Paletted(64, 64)); err != nil {
		t.Fatal(err)
	}
	off := le.Uint32(plain.Bytes()[10:])
	gap := append(bytes.Clone(plain.Bytes()[:off]), append(make([]byte, 4), plain.Bytes()[off:]...)...)
	le.PutUint32(gap[10:], off+4)
	tests := []struct {
		name   string
		data   []byte
		detail string
	}{
		{"an OS/2 1.x header", rle(func(b []byte) { le.PutUint32(b[14:], 12) }), "an OS/2 1.x header (BITMAPCOREHEADER)"},
		{"an embedded JPEG", rle(func(b []byte) { le.PutUint32(b[30:], 4) }), "an embedded JPEG (compression 4)"},
		{"an embedded PNG", rle(func(b []byte) { le.PutUint32(b[30:], 5) }), "an embedded PNG (compression 5)"},
		{"bit fields", rle(func(b []byte) { le.PutUint32(b[30:], 3) }), "bit fields (compression 3)"},
		{"RLE8 at 4 bits a pixel", rle(func(b []byte) { le.PutUint16(b[28:], 4) }), "run-length coding of 4 bits a pixel (compression 1)"},
		{"16 bits a pixel", rle(func(b []byte) { le.PutUint16(b[28:], 16); le.PutUint32(b[30:], 0) }), "16 bits a pixel"},
		{"a gap before the pixels", gap, "pixels that do not follow the palette directly"},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Prepare(t.Context(), tt.data)
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.UnsupportedMediaType || !strings.Contains(pe.Detail, tt.detail) {
				t.Fatalf("got %v; want unsupported_media_type naming %q", err, tt.detail)
			}
		})
	}
}

// TestBMPAllocation holds bmp.Cost to what the BMP decoders allocate.
func TestBMPAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates beside the decoder")
	}
	var plain bytes.Buffer
	if err := xbmp.Encode(&plain, gen.Photo(1200, 1600)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"RLE8", gen.RLEBMP(quantised(1200, 1600, 216), false)},
		{"RLE4", gen.RLEBMP(quantised(1200, 1600, 16), true)},
		{"24-bit", plain.Bytes()},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := p.inspect(tt.data, 0)
			if err != nil {
				t.Fatal(err)
			}
			dec := h.decode(t.Context(), testPrep, tt.data)
			got, err := allocated(func() error {
				_, err := dec(bytes.NewReader(tt.data))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if est := h.cost.mem; got > est+1<<20 || est > 2*got+1<<20 {
				t.Errorf("allocated %d bytes; the headers said %d", got, est)
			}
		})
	}
}
