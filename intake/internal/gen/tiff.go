package gen

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/color"
	"sort"
)

// Compression values of a TIFF page.
const (
	TIFFNone = 1
	TIFFG3   = 3 // 1-D (modified Huffman with EOLs)
	TIFFG4   = 4
)

// FaxPage is one page of a hand-written bilevel TIFF.
type FaxPage struct {
	Image       *image.Gray // pixels under 128 are black
	Compression int         // TIFFNone, TIFFG3 or TIFFG4
	Thumbnail   bool        // a reduced-resolution copy (NewSubfileType 1), not a page
	XRes, YRes  int         // dots per inch, as a fax writes them (204×196 fine, 204×98 normal); 0 for none
	// BlackIsZero writes the page as libtiff's tiffcp does from a PBM: PhotometricInterpretation
	// 1, a 1 bit white, and the bits coded as they are, so that its white pixels are the CCITT
	// code's black runs (libtiff codes 0 bits as white runs whatever the photometric says).
	BlackIsZero bool
	// T4Options is written as it is for a G3 page (bit 0 says 2-D, bit 2 fill bits); the strip
	// is 1-D without fill whatever it says.
	T4Options uint32
}

// FaxTIFF writes a little-endian TIFF with one directory per page, as fax software and
// scanners write them: 1 bit per pixel, WhiteIsZero, one strip per page, the pages chained in
// order (BlackIsZero when the page says so). x/image/tiff writes neither several pages nor CCITT, so this writes the file by hand
// and encodes G4 in horizontal mode only (every row a series of white and black run pairs),
// which any G4 decoder reads.
func FaxTIFF(pages []FaxPage) []byte {
	var b bytes.Buffer
	b.WriteString("II*\x00\x00\x00\x00\x00") // the first directory's offset is patched below
	le := binary.LittleEndian
	link := 4 // where the offset of the next directory goes
	for i, p := range pages {
		w, h := p.Image.Rect.Dx(), p.Image.Rect.Dy()
		coded, photometric := p.Image, uint32(0)
		if p.BlackIsZero { // the negative is what codes a 1 bit as black
			coded, photometric = negative(p.Image), 1
		}
		var strip []byte
		switch p.Compression {
		case TIFFG3:
			strip = g3(coded)
		case TIFFG4:
			strip = g4(coded)
		default:
			strip = packBits(coded)
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
			262: photometric, 273: uint32(stripAt), 277: 1, 278: uint32(h), 279: uint32(len(strip)),
		}
		if !p.Thumbnail {
			tags[297] = uint32(i) | uint32(len(pages))<<16 // PageNumber: this one, of the count
		}
		if p.Compression == TIFFG3 {
			tags[292] = p.T4Options
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

// negative returns m with black and white swapped.
func negative(m *image.Gray) *image.Gray {
	n := image.NewGray(m.Rect)
	for i, v := range m.Pix {
		n.Pix[i] = ^v
	}
	return n
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

// runs returns a row's alternating runs of white and black pixels (black: under 128), starting
// with white, in pairs: the last black run may be 0.
func runs(row []byte) []int {
	var rs []int
	black, n := false, 0
	for _, v := range row {
		if (v < 128) != black {
			rs = append(rs, n)
			black, n = !black, 0
		}
		n++
	}
	rs = append(rs, n)
	if len(rs)%2 != 0 {
		rs = append(rs, 0)
	}
	return rs
}

// g3 encodes a page in CCITT Group 3 1-D: an EOL, then each row as its runs followed by an
// EOL, then five more EOLs (the return to control).
func g3(m *image.Gray) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	var b bits
	eol := bitString{0x1, 12}
	b.code(eol)
	for y := range h {
		rs := runs(m.Pix[y*m.Stride : y*m.Stride+w])
		if rs[len(rs)-1] == 0 { // a row ends at its width: no pair to fill
			rs = rs[:len(rs)-1]
		}
		for i, n := range rs {
			b.run(n, i%2 == 1)
		}
		b.code(eol)
	}
	for range 5 {
		b.code(eol)
	}
	return b.zeroPad()
}

// g4 encodes a page in CCITT Group 4, every row as horizontal-mode pairs of runs, and ends with
// the end-of-facsimile-block code.
func g4(m *image.Gray) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	var b bits
	horizontal := bitString{0x1, 3} // "001"
	for y := range h {
		rs := runs(m.Pix[y*m.Stride : y*m.Stride+w])
		for i := 0; i < len(rs); i += 2 {
			b.code(horizontal)
			b.run(rs[i], false)
			b.run(rs[i+1], true)
		}
	}
	eol := bitString{0x1, 12}
	b.code(eol)
	b.code(eol)
	return b.zeroPad()
}

// CMYKTIFF writes m as ImageMagick writes a CMYK TIFF (-colorspace CMYK): PhotometricInterpretation
// 5, 8 bits for each of four inks, strips of rows rows, deflated with the horizontal predictor
// when deflate is set, else stored. x/image/tiff writes no CMYK.
func CMYKTIFF(m image.Image, rows int, deflate bool) []byte {
	r := m.Bounds()
	w, h := r.Dx(), r.Dy()
	le := binary.LittleEndian
	var b bytes.Buffer
	b.WriteString("II*\x00\x00\x00\x00\x00")
	var offs, counts []uint32
	for y0 := 0; y0 < h; y0 += rows {
		var strip []byte
		for y := y0; y < min(h, y0+rows); y++ {
			row := make([]byte, 0, 4*w)
			for x := range w {
				c := color.CMYKModel.Convert(m.At(r.Min.X+x, r.Min.Y+y)).(color.CMYK)
				row = append(row, c.C, c.M, c.Y, c.K)
			}
			if deflate { // each sample less the same sample of the pixel on its left
				for i := len(row) - 1; i >= 4; i-- {
					row[i] -= row[i-4]
				}
			}
			strip = append(strip, row...)
		}
		if deflate {
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write(strip)
			zw.Close()
			strip = z.Bytes()
		}
		offs, counts = append(offs, uint32(b.Len())), append(counts, uint32(len(strip)))
		b.Write(strip)
		if b.Len()%2 != 0 {
			b.WriteByte(0)
		}
	}
	array := func(v []uint32, short bool) uint32 { // written out of line, its offset returned
		at := uint32(b.Len())
		for _, x := range v {
			if short {
				b.Write(le.AppendUint16(nil, uint16(x)))
			} else {
				b.Write(le.AppendUint32(nil, x))
			}
		}
		return at
	}
	type entry struct {
		tag, typ   uint16
		count, val uint32
	}
	compression, predictor := uint32(1), uint32(1)
	if deflate {
		compression, predictor = 8, 2
	}
	stripOffs, stripCounts := offs[0], counts[0]
	if len(offs) > 1 {
		stripOffs, stripCounts = array(offs, false), array(counts, false)
	}
	entries := []entry{
		{256, 4, 1, uint32(w)}, {257, 4, 1, uint32(h)}, {258, 3, 4, array([]uint32{8, 8, 8, 8}, true)},
		{259, 3, 1, compression}, {262, 3, 1, 5}, {273, 4, uint32(len(offs)), stripOffs}, {277, 3, 1, 4},
		{278, 4, 1, uint32(rows)}, {279, 4, uint32(len(offs)), stripCounts}, {284, 3, 1, 1},
		{317, 3, 1, predictor}, {332, 3, 1, 1},
	}
	le.PutUint32(b.Bytes()[4:], uint32(b.Len()))
	b.Write(le.AppendUint16(nil, uint16(len(entries))))
	for _, e := range entries {
		var x [12]byte
		le.PutUint16(x[0:], e.tag)
		le.PutUint16(x[2:], e.typ)
		le.PutUint32(x[4:], e.count)
		if e.typ == 3 && e.count == 1 {
			le.PutUint16(x[8:], uint16(e.val))
		} else {
			le.PutUint32(x[8:], e.val)
		}
		b.Write(x[:])
	}
	b.Write([]byte{0, 0, 0, 0})
	return b.Bytes()
}
