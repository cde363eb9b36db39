package gen

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/color"
	"sort"

	"github.com/ocrdraft/ocrdraft/intake/internal/fax"
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
	// T4Options is written as it is for a G3 page: with bit 0, the strip is coded 2-D (K = 4);
	// the other bits (uncompressed mode, fill bits) change nothing in it.
	T4Options uint32
	Rows      int // RowsPerStrip, each strip coded on its own; 0 for one strip
}

// FaxTIFF writes a little-endian TIFF with one directory per page, as fax software and
// scanners write them: 1 bit per pixel, WhiteIsZero (BlackIsZero when the page says so), one
// strip per page unless it says how many rows, the pages chained in order. x/image/tiff writes
// neither several pages nor CCITT, so this writes the file by hand and encodes G4 in horizontal
// mode only (every row a series of white and black run pairs), which any G4 decoder reads.
func FaxTIFF(pages []FaxPage) []byte {
	var b bytes.Buffer
	b.WriteString("II*\x00\x00\x00\x00\x00") // the first directory's offset is patched below
	le := binary.LittleEndian
	link := 4 // where the offset of the next directory goes
	for i, p := range pages {
		w, h := p.Image.Rect.Dx(), p.Image.Rect.Dy()
		photometric := uint32(0)
		if p.BlackIsZero {
			photometric = 1
		}
		rows := h
		if p.Rows > 0 && p.Rows < h {
			rows = p.Rows
		}
		offs, counts := faxStrips(&b, p, rows)
		stripAt, stripLen := offs[0], counts[0]
		if len(offs) > 1 { // the offsets and counts, out of line
			stripAt, stripLen = uint32(b.Len()), uint32(b.Len()+4*len(offs))
			for _, v := range append(offs, counts...) {
				b.Write(le.AppendUint32(nil, v))
			}
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
			262: photometric, 273: stripAt, 277: 1, 278: uint32(rows), 279: stripLen,
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
		le.PutUint32(b.Bytes()[link:], uint32(b.Len()))
		link = faxDirectory(&b, tags, len(offs))
	}
	return b.Bytes()
}

// faxStrips writes page p's strips of rows rows, each on a word, coded as p says, and returns
// their offsets and sizes.
func faxStrips(b *bytes.Buffer, p FaxPage, rows int) (offs, counts []uint32) {
	w, h := p.Image.Rect.Dx(), p.Image.Rect.Dy()
	coded := p.Image
	if p.BlackIsZero { // the negative is what codes a 1 bit as black
		coded = negative(p.Image)
	}
	for y := 0; y < h; y += rows {
		part := coded.SubImage(image.Rect(0, y, w, min(h, y+rows))).(*image.Gray)
		var strip []byte
		switch p.Compression {
		case TIFFG3:
			strip = g3(part, p.T4Options&1 != 0)
		case TIFFG4:
			strip = g4(part)
		default:
			strip = packBits(part)
		}
		for b.Len()%2 != 0 {
			b.WriteByte(0)
		}
		offs, counts = append(offs, uint32(b.Len())), append(counts, uint32(len(strip)))
		b.Write(strip)
	}
	for b.Len()%2 != 0 {
		b.WriteByte(0)
	}
	return offs, counts
}

// faxDirectory writes a directory of tags in order, strips being the count of the strip
// offsets and sizes, and returns where the offset of the next directory goes (0 until patched).
func faxDirectory(b *bytes.Buffer, tags map[uint16]uint32, strips int) int {
	le := binary.LittleEndian
	ids := make([]int, 0, len(tags))
	for id := range tags {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
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
		case 273, 279:
			count = uint32(strips)
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
	link := b.Len()
	b.Write([]byte{0, 0, 0, 0})
	return link
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
// EOL, then five more EOLs (the return to control). With twoD, as Group 3 2-D (modified READ,
// K = 4, as a fax in fine mode sends it): each EOL is followed by a tag bit, 1 before a row
// coded 1-D (every fourth, from the first), 0 before one coded against the row above (mr).
func g3(m *image.Gray, twoD bool) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	b := fax.NewWriter(nil)
	b.Put(fax.EOL)
	ref := make([]byte, w) // the row above the first is white
	for i := range ref {
		ref[i] = 0xff
	}
	for y := range h {
		row := m.Pix[y*m.Stride : y*m.Stride+w]
		if twoD && y%4 != 0 {
			b.Put(fax.Code{Bits: 0, N: 1})
			mr(b, ref, row)
		} else {
			if twoD {
				b.Put(fax.Code{Bits: 1, N: 1})
			}
			rs := runs(row)
			if rs[len(rs)-1] == 0 { // a row ends at its width: no pair to fill
				rs = rs[:len(rs)-1]
			}
			for i, n := range rs {
				b.Run(n, i%2 == 1)
			}
		}
		ref = row
		b.Put(fax.EOL)
	}
	for i := range 6 { // the return to control: six EOLs, each with a tag bit 1 in 2-D
		if i > 0 {
			b.Put(fax.EOL)
		}
		if twoD {
			b.Put(fax.Code{Bits: 1, N: 1})
		}
	}
	return b.Bytes()
}

// mr codes row against ref in the modes of T.4 2-D and T.6 (pass, vertical, horizontal), as
// T.4 §4.2.1.3 lays out.
func mr(b *fax.Writer, ref, row []byte) {
	w := len(row)
	black := func(line []byte, p int) bool { return p >= 0 && p < w && line[p] < 128 }
	// next returns the first changing element of line after p, or w: a pixel whose colour is not
	// its left neighbour's (left of the first is white).
	next := func(line []byte, p int) int {
		for q := p + 1; q < w; q++ {
			if black(line, q) != black(line, q-1) {
				return q
			}
		}
		return w
	}
	vertical := [7]fax.Code{{Bits: 0x2, N: 7}, {Bits: 0x2, N: 6}, {Bits: 0x2, N: 3}, {Bits: 0x1, N: 1}, {Bits: 0x3, N: 3}, {Bits: 0x3, N: 6}, {Bits: 0x3, N: 7}}
	a0, colour := -1, false // colour: is a0's colour black
	for a0 < w {
		a1, b1 := next(row, a0), next(ref, a0)
		for b1 < w && black(ref, b1) == colour { // b1 is of the colour opposite a0's
			b1 = next(ref, b1)
		}
		b2 := next(ref, b1)
		switch {
		case b2 < a1: // pass
			b.Put(fax.Code{Bits: 0x1, N: 4})
			a0 = b2
		case a1-b1 >= -3 && a1-b1 <= 3:
			b.Put(vertical[a1-b1+3])
			a0, colour = a1, !colour
		default:
			a2 := next(row, a1)
			b.Put(fax.Horizontal)
			b.Run(a1-max(a0, 0), colour)
			b.Run(a2-a1, !colour)
			a0 = a2
		}
	}
}

// g4 encodes a page in CCITT Group 4, every row as horizontal-mode pairs of runs, and ends with
// the end-of-facsimile-block code.
func g4(m *image.Gray) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	b := fax.NewWriter(nil)
	for y := range h {
		rs := runs(m.Pix[y*m.Stride : y*m.Stride+w])
		for i := 0; i < len(rs); i += 2 {
			b.Put(fax.Horizontal)
			b.Run(rs[i], false)
			b.Run(rs[i+1], true)
		}
	}
	b.Put(fax.EOL)
	b.Put(fax.EOL)
	return b.Bytes()
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

// SharedTiles writes a little-endian grey TIFF of pages pages of w×h, each cut into tile×tile
// deflate tiles that all point at one stream of a tile of zeros, every page at the same table
// of tile offsets: a few bytes of data that a decoder inflates once for every tile of every
// page. It is the shape of an attack on a decoder's cost per tile; strips (tile 0: rows of one
// pixel, each a strip) the same for a decoder's cost per strip.
func SharedTiles(w, h, tile, pages int) []byte {
	le := binary.LittleEndian
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	bw, bh := tile, tile
	if tile == 0 {
		bw, bh = w, 1
	}
	zw.Write(make([]byte, bw*bh))
	zw.Close()
	n := ((w + bw - 1) / bw) * ((h + bh - 1) / bh)
	b := []byte("II*\x00\x00\x00\x00\x00")
	at := len(b)
	b = append(b, z.Bytes()...)
	if len(b)%2 != 0 {
		b = append(b, 0)
	}
	offs := len(b)
	for range n {
		b = le.AppendUint32(b, uint32(at))
	}
	counts := len(b)
	for range n {
		b = le.AppendUint32(b, uint32(z.Len()))
	}
	entry := func(b []byte, tag, typ, count, v int) []byte {
		b = le.AppendUint16(le.AppendUint16(b, uint16(tag)), uint16(typ))
		return le.AppendUint32(le.AppendUint32(b, uint32(count)), uint32(v))
	}
	le.PutUint32(b[4:], uint32(len(b)))
	for p := range pages {
		tags := 10
		if tile == 0 {
			tags = 9
		}
		b = le.AppendUint16(b, uint16(tags))
		b = entry(b, 256, 4, 1, w)
		b = entry(b, 257, 4, 1, h)
		b = entry(b, 258, 3, 1, 8)
		b = entry(b, 259, 3, 1, 8)
		b = entry(b, 262, 3, 1, 1)
		if tile == 0 {
			b = entry(b, 273, 4, n, offs)
			b = entry(b, 277, 3, 1, 1)
			b = entry(b, 278, 4, 1, 1)
			b = entry(b, 279, 4, n, counts)
		} else {
			b = entry(b, 277, 3, 1, 1)
			b = entry(b, 322, 4, 1, tile)
			b = entry(b, 323, 4, 1, tile)
			b = entry(b, 324, 4, n, offs)
			b = entry(b, 325, 4, n, counts)
		}
		next := 0
		if p < pages-1 {
			next = len(b) + 4
		}
		b = le.AppendUint32(b, uint32(next))
	}
	return b
}
