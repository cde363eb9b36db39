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

	"golang.org/x/image/bmp"

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
	p := New(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := gen.RLEBMP(tt.src, tt.four)
			if _, err := p.inspect(data, 0); err != nil {
				t.Fatal(err)
			}
			b, _ := readBMP(data)
			m, err := decodeBMPRLE(data, b)
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

// TestBMPRLEStreams decodes hand-written RLE8 streams of a 4×2 bitmap (rows from the bottom,
// palette of 4): moves, runs cut at the end of their row, stretches and their padding, and the
// streams that end too soon.
func TestBMPRLEStreams(t *testing.T) {
	tests := []struct {
		name    string
		stream  []byte
		topDown bool
		want    string // the indices, top row first; "" for an error
	}{
		{"runs and ends of line", []byte{4, 1, 0, 0, 2, 2, 2, 3, 0, 1}, false, "2233" + "1111"},
		{"top down", []byte{4, 1, 0, 0, 2, 2, 2, 3, 0, 1}, true, "1111" + "2233"},
		{"a run cut at the row's end", []byte{9, 1, 0, 0, 4, 2, 0, 1}, false, "2222" + "1111"},
		{"a stretch of 3, padded", []byte{0, 3, 1, 2, 3, 0, 1, 1, 0, 0, 4, 2, 0, 1}, false, "2222" + "1231"},
		{"a move over skipped pixels", []byte{1, 3, 0, 2, 2, 1, 1, 3, 0, 1}, false, "0003" + "3000"},
		{"no end of bitmap after the last row", []byte{4, 1, 0, 0, 4, 2, 0, 0}, false, "2222" + "1111"},
		{"what follows the bitmap is not read", []byte{4, 1, 0, 0, 4, 2, 0, 1, 0xff}, false, "2222" + "1111"},
		{"ends before the bitmap", []byte{4, 1, 0, 0}, false, ""},
		{"ends in a stretch", []byte{0, 4, 1, 2}, false, ""},
		{"an index past the palette", []byte{4, 9, 0, 1}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := 2
			if tt.topDown {
				h = -2
			}
			le := binary.LittleEndian
			data := []byte("BM\x00\x00\x00\x00\x00\x00\x00\x00")
			data = le.AppendUint32(data, 14+40+16)
			for _, v := range []uint32{40, 4, uint32(h)} {
				data = le.AppendUint32(data, v)
			}
			data = le.AppendUint16(le.AppendUint16(data, 1), 8)
			for _, v := range []uint32{1, uint32(len(tt.stream)), 0, 0, 4, 0} {
				data = le.AppendUint32(data, v)
			}
			data = append(data, make([]byte, 16)...)
			data = append(data, tt.stream...)
			b, err := readBMP(data)
			if err != nil || !b.rle() {
				t.Fatalf("readBMP: %+v, %v", b, err)
			}
			m, err := decodeBMPRLE(data, b)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, v := range m.(*image.Paletted).Pix {
				got.WriteByte('0' + v)
			}
			if got.String() != tt.want {
				t.Errorf("got %s, want %s", got.String(), tt.want)
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
	if err := bmp.Encode(&plain, gen.Paletted(64, 64)); err != nil {
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
	p := New(Limits{})
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

// TestBMPAllocation holds bmpCost to what the BMP decoders allocate.
func TestBMPAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates beside the decoder")
	}
	var plain bytes.Buffer
	if err := bmp.Encode(&plain, gen.Photo(1200, 1600)); err != nil {
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
	p := New(Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := p.inspect(tt.data, 0)
			if err != nil {
				t.Fatal(err)
			}
			dec := h.decode(t.Context(), tt.data)
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
