package gen

import (
	"bytes"
	"encoding/binary"
	"image"
	"sort"
)

// Compression values of a TIFF page.
const (
	TIFFNone = 1
	TIFFG4   = 4
)

// FaxPage is one page of a hand-written bilevel TIFF.
type FaxPage struct {
	Image       *image.Gray // pixels under 128 are black
	Compression int         // TIFFNone or TIFFG4
	Thumbnail   bool        // a reduced-resolution copy (NewSubfileType 1), not a page
	XRes, YRes  int         // dots per inch, as a fax writes them (204×196 fine, 204×98 normal); 0 for none
}

// FaxTIFF writes a little-endian TIFF with one directory per page, as fax software and
// scanners write them: 1 bit per pixel, WhiteIsZero, one strip per page, the pages chained in
// order. x/image/tiff writes neither several pages nor CCITT, so this writes the file by hand
// and encodes G4 in horizontal mode only (every row a series of white and black run pairs),
// which any G4 decoder reads.
func FaxTIFF(pages []FaxPage) []byte {
	var b bytes.Buffer
	b.WriteString("II*\x00\x00\x00\x00\x00") // the first directory's offset is patched below
	le := binary.LittleEndian
	link := 4 // where the offset of the next directory goes
	for i, p := range pages {
		w, h := p.Image.Rect.Dx(), p.Image.Rect.Dy()
		var strip []byte
		if p.Compression == TIFFG4 {
			strip = g4(p.Image)
		} else {
			strip = packBits(p.Image)
		}
		for b.Len()%2 != 0 {
			b.WriteByte(0)
		}
		stripAt := b.Len()
		b.Write(strip)
		for b.Len()%2 != 0 {
			b.WriteByte(0)
		}
		resAt := b.Len()
		if p.XRes > 0 {
			var r [16]byte
			le.PutUint32(r[0:], uint32(p.XRes))
			le.PutUint32(r[4:], 1)
			le.PutUint32(r[8:], uint32(p.YRes))
			le.PutUint32(r[12:], 1)
			b.Write(r[:])
		}
		subfile := uint32(2) // a page of a multi-page document
		if p.Thumbnail {
			subfile = 1
		}
		tags := map[uint16]uint32{
			254: subfile, 256: uint32(w), 257: uint32(h), 258: 1, 259: uint32(p.Compression),
			262: 0, 273: uint32(stripAt), 277: 1, 278: uint32(h), 279: uint32(len(strip)),
		}
		if !p.Thumbnail {
			tags[297] = uint32(i) | uint32(len(pages))<<16 // PageNumber: this one, of the count
		}
		if p.XRes > 0 {
			tags[282], tags[283], tags[296] = uint32(resAt), uint32(resAt+8), 2 // per inch
		}
		ids := make([]int, 0, len(tags))
		for id := range tags {
			ids = append(ids, int(id))
		}
		sort.Ints(ids)
		at := b.Len()
		le.PutUint32(b.Bytes()[link:], uint32(at))
		var e [12]byte
		le.PutUint16(e[:2], uint16(len(ids)))
		b.Write(e[:2])
		for _, id := range ids {
			typ, count := uint16(4), uint32(1) // LONG
			v := tags[uint16(id)]
			switch id {
			case 258, 259, 262, 277, 296:
				typ = 3 // SHORT
			case 282, 283:
				typ = 5 // RATIONAL, at the offset
			case 297:
				typ, count = 3, 2 // two SHORTs packed in the value
			}
			le.PutUint16(e[0:], uint16(id))
			le.PutUint16(e[2:], typ)
			le.PutUint32(e[4:], count)
			if typ == 3 && count == 1 {
				le.PutUint32(e[8:], 0)
				le.PutUint16(e[8:], uint16(v))
			} else if id == 297 {
				le.PutUint16(e[8:], uint16(v))
				le.PutUint16(e[10:], uint16(v>>16))
			} else {
				le.PutUint32(e[8:], v)
			}
			b.Write(e[:])
		}
		link = b.Len()
		b.Write([]byte{0, 0, 0, 0})
	}
	return b.Bytes()
}

// packBits packs a page at a bit per pixel, 1 for black (WhiteIsZero), rows byte-aligned.
func packBits(m *image.Gray) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	stride := (w + 7) / 8
	out := make([]byte, stride*h)
	for y := range h {
		for x := range w {
			if m.Pix[y*m.Stride+x] < 128 {
				out[y*stride+x/8] |= 0x80 >> (x % 8)
			}
		}
	}
	return out
}

// code writes a CCITT code into b (handmade.go's writer, most significant bit first).
func (b *bits) code(c bitString) { b.put(c.bits, uint(c.n)) }

// zeroPad ends a CCITT stream: the last byte is filled with 0 bits, which no code starts with
// meaningfully (fill before an EOL is zeros).
func (b *bits) zeroPad() []byte {
	if b.n > 0 {
		b.put(0, 8-b.n)
	}
	return b.buf.Bytes()
}

// run writes one run length: makeup codes for the multiples of 64, then a terminating code.
func (b *bits) run(n int, black bool) {
	term, makeup := white2[:], white3[:]
	if black {
		term, makeup = black2[:], black3[:]
	}
	for n >= 2560 {
		b.code(makeup[len(makeup)-1])
		n -= 2560
	}
	if n >= 64 {
		b.code(makeup[n/64-1])
		n %= 64
	}
	b.code(term[n])
}

// g4 encodes a page in CCITT Group 4, every row as horizontal-mode pairs of runs, and ends with
// the end-of-facsimile-block code.
func g4(m *image.Gray) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	var b bits
	horizontal := bitString{0x1, 3} // "001"
	for y := range h {
		row := m.Pix[y*m.Stride : y*m.Stride+w]
		var runs []int
		black, n := false, 0
		for _, v := range row {
			if (v < 128) != black {
				runs = append(runs, n)
				black, n = !black, 0
			}
			n++
		}
		runs = append(runs, n)
		if len(runs)%2 != 0 {
			runs = append(runs, 0)
		}
		for i := 0; i < len(runs); i += 2 {
			b.code(horizontal)
			b.run(runs[i], false)
			b.run(runs[i+1], true)
		}
	}
	eol := bitString{0x1, 12}
	b.code(eol)
	b.code(eol)
	return b.zeroPad()
}
