package gen

import (
	"bytes"
	"encoding/binary"
	"image"
)

// RLEBMP writes m as Windows and ImageMagick (-compress RLE) write a run-length BMP: RLE8, or
// RLE4 when four (m's indices then under 16), bottom-up, a Windows 3 header and m's palette.
// Each row is runs of one index (of two alternating ones, for RLE4) where three or more pixels
// repeat and stretches of indices as they are between them, then an end of line; an end of
// bitmap ends the file. x/image/bmp reads no run-length BMP.
func RLEBMP(m *image.Paletted, four bool) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	var px bytes.Buffer
	for y := h - 1; y >= 0; y-- {
		row := m.Pix[y*m.Stride : y*m.Stride+w]
		same := func(i int) int { // how many pixels from i repeat row[i], 255 at most
			n := 1
			for i+n < w && n < 255 && row[i+n] == row[i] {
				n++
			}
			return n
		}
		for i := 0; i < w; {
			if n := same(i); n >= 3 || w-i < 3 {
				n = min(n, w-i)
				v := row[i]
				if four { // the run's two indices are the same
					v |= v << 4
				}
				px.Write([]byte{byte(n), v})
				i += n
				continue
			}
			k := 0 // a stretch up to the next run of three
			for i+k < w && k < 255 && (k < 3 || same(i+k) < 3) {
				k++
			}
			px.Write([]byte{0, byte(k)})
			var s []byte
			for j := range k {
				if !four {
					s = append(s, row[i+j])
				} else if j%2 == 0 {
					s = append(s, row[i+j]<<4)
				} else {
					s[len(s)-1] |= row[i+j]
				}
			}
			px.Write(s)
			if len(s)%2 != 0 {
				px.WriteByte(0)
			}
			i += k
		}
		px.Write([]byte{0, 0})
	}
	px.Write([]byte{0, 1})

	le := binary.LittleEndian
	bpp, compression := 8, 1
	if four {
		bpp, compression = 4, 2
	}
	offset := 14 + 40 + 4*len(m.Palette)
	b := []byte("BM")
	b = le.AppendUint32(b, uint32(offset+px.Len()))
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, uint32(offset))
	for _, v := range []uint32{40, uint32(w), uint32(h)} {
		b = le.AppendUint32(b, v)
	}
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, uint16(bpp))
	for _, v := range []uint32{uint32(compression), uint32(px.Len()), 2835, 2835, uint32(len(m.Palette)), 0} {
		b = le.AppendUint32(b, v)
	}
	for _, c := range m.Palette {
		r, g, bl, _ := c.RGBA()
		b = append(b, byte(bl>>8), byte(g>>8), byte(r>>8), 0)
	}
	return append(b, px.Bytes()...)
}
