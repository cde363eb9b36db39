package gen

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/draw"
	"image/jpeg"
	"sort"
)

// JPEGTIFF writes a one-page little-endian TIFF of compression 7 (JPEG, TIFF Technical Note 2),
// as office scanners write grey and colour batches: the page cut into strips of block rows, or
// into block×block tiles, each a JPEG stream. With tables, the streams are abbreviated as
// libtiff writes them: their quantisation and Huffman tables are taken out into one JPEGTables
// tag that every block shares. A colour page is YCbCr (photometric 6), a grey one BlackIsZero.
func JPEGTIFF(m image.Image, block int, tiled, tables bool) []byte {
	r := m.Bounds()
	w, h := r.Dx(), r.Dy()
	_, grey := m.(*image.Gray)
	bw, bh := w, block
	if tiled {
		bw = block
	}
	var blocks [][]byte
	var shared []byte
	for y := 0; y < h; y += bh {
		for x := 0; x < w; x += bw {
			var tile draw.Image = image.NewRGBA(image.Rect(0, 0, bw, min(bh, h-y)))
			if tiled { // a tile is whole even at the page's edge, padded white
				tile = image.NewRGBA(image.Rect(0, 0, bw, bh))
			}
			if grey {
				tile = image.NewGray(tile.Bounds())
			}
			draw.Draw(tile, tile.Bounds(), image.White, image.Point{}, draw.Src)
			draw.Draw(tile, tile.Bounds(), m, r.Min.Add(image.Pt(x, y)), draw.Src)
			var b bytes.Buffer
			if err := jpeg.Encode(&b, tile, &jpeg.Options{Quality: 90}); err != nil {
				panic(err) // cannot happen in memory
			}
			s := b.Bytes()
			if tables {
				s, shared = abbreviate(s)
			}
			blocks = append(blocks, s)
		}
	}
	var b bytes.Buffer
	b.WriteString("II*\x00\x08\x00\x00\x00")
	var offs, counts []uint32
	for _, s := range blocks {
		offs, counts = append(offs, uint32(b.Len())), append(counts, uint32(len(s)))
		b.Write(s)
		if b.Len()%2 != 0 {
			b.WriteByte(0)
		}
	}
	tags := map[uint16][]uint32{256: {uint32(w)}, 257: {uint32(h)}, 259: {7}, 284: {1}}
	if grey {
		tags[258], tags[262], tags[277] = []uint32{8}, []uint32{1}, []uint32{1}
	} else {
		tags[258], tags[262], tags[277], tags[530] = []uint32{8, 8, 8}, []uint32{6}, []uint32{3}, []uint32{2, 2}
	}
	if tiled {
		tags[322], tags[323], tags[324], tags[325] = []uint32{uint32(bw)}, []uint32{uint32(bh)}, offs, counts
	} else {
		tags[278], tags[273], tags[279] = []uint32{uint32(bh)}, offs, counts
	}
	raw := map[uint16][]byte{}
	if shared != nil {
		raw[347] = shared
	}
	writeIFD(&b, tags, raw)
	return b.Bytes()
}

// abbreviate takes the DQT and DHT segments out of a JPEG written by image/jpeg and returns the
// stream without them, and them as a stream of their own (SOI, tables, EOI), as JPEGTables holds.
func abbreviate(s []byte) (stream, tables []byte) {
	stream, tables = []byte{0xff, 0xd8}, []byte{0xff, 0xd8}
	i := 2
	for i+4 <= len(s) {
		m := s[i+1]
		n := 2 + int(binary.BigEndian.Uint16(s[i+2:]))
		if m == 0xda { // SOS: the rest is the scan and EOI
			stream = append(stream, s[i:]...)
			break
		}
		if m == 0xdb || m == 0xc4 {
			tables = append(tables, s[i:i+n]...)
		} else {
			stream = append(stream, s[i:i+n]...)
		}
		i += n
	}
	return stream, append(tables, 0xff, 0xd9)
}

// writeIFD appends a directory of tags (SHORT when every value fits, else LONG; UNDEFINED for
// raw), whose values that do not fit in an entry follow it, and points the header at it.
func writeIFD(b *bytes.Buffer, tags map[uint16][]uint32, raw map[uint16][]byte) {
	le := binary.LittleEndian
	ids := make([]int, 0, len(tags)+len(raw))
	for id := range tags {
		ids = append(ids, int(id))
	}
	for id := range raw {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	at := b.Len()
	le.PutUint32(b.Bytes()[4:], uint32(at))
	dataAt := at + 2 + 12*len(ids) + 4
	var dir, extra bytes.Buffer
	var e [12]byte
	le.PutUint16(e[:2], uint16(len(ids)))
	dir.Write(e[:2])
	for _, id := range ids {
		var val []byte
		typ := uint16(7)
		if v, ok := raw[uint16(id)]; ok {
			val = v
		} else {
			v := tags[uint16(id)]
			typ = 3
			for _, x := range v {
				if x > 0xffff {
					typ = 4
				}
			}
			for _, x := range v {
				if typ == 3 {
					val = le.AppendUint16(val, uint16(x))
				} else {
					val = le.AppendUint32(val, x)
				}
			}
		}
		count := len(val)
		if typ == 3 {
			count /= 2
		} else if typ == 4 {
			count /= 4
		}
		le.PutUint16(e[0:], uint16(id))
		le.PutUint16(e[2:], typ)
		le.PutUint32(e[4:], uint32(count))
		clear(e[8:])
		if len(val) <= 4 {
			copy(e[8:], val)
		} else {
			le.PutUint32(e[8:], uint32(dataAt+extra.Len()))
			extra.Write(val)
			if extra.Len()%2 != 0 {
				extra.WriteByte(0)
			}
		}
		dir.Write(e[:])
	}
	dir.Write([]byte{0, 0, 0, 0}) // no next directory
	b.Write(dir.Bytes())
	b.Write(extra.Bytes())
}
