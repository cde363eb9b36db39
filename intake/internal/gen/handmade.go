package gen

import (
	"bytes"
	"encoding/binary"
	"image/color"
)

// bits writes a bit stream, most significant bit first (JPEG) or least significant first (WebP).
type bits struct {
	buf   bytes.Buffer
	acc   uint64
	n     uint
	lsb   bool
	stuff bool // JPEG: a 0xff byte in entropy-coded data is followed by 0x00
}

func (b *bits) put(v uint32, n uint) {
	if b.lsb {
		b.acc |= uint64(v&(1<<n-1)) << b.n
		b.n += n
		for b.n >= 8 {
			b.buf.WriteByte(byte(b.acc))
			b.acc >>= 8
			b.n -= 8
		}
		return
	}
	b.acc = b.acc<<n | uint64(v&(1<<n-1))
	b.n += n
	for b.n >= 8 {
		c := byte(b.acc >> (b.n - 8))
		b.buf.WriteByte(c)
		if b.stuff && c == 0xff {
			b.buf.WriteByte(0)
		}
		b.n -= 8
	}
}

// flush pads the last byte: with 1 bits for JPEG, as the standard asks, with 0 bits for WebP.
func (b *bits) flush() []byte {
	if b.n > 0 {
		if b.lsb {
			b.put(0, 8-b.n)
		} else {
			b.put(1<<(8-b.n)-1, 8-b.n)
		}
	}
	return b.buf.Bytes()
}

// CMYKJPEG writes a baseline Adobe CMYK JPEG, which Go's encoder cannot. Every 8×8 block is one
// flat colour (the colour of its top-left pixel), so each block is just its DC coefficient and an
// end-of-block code; with all quantisers 1 a flat block decodes back exactly. Like Photoshop, it
// stores each channel inverted (255 means no ink) and says so with an APP14 Adobe segment whose
// transform is 0. w and h must be multiples of 8.
func CMYKJPEG(w, h int, at func(x, y int) color.CMYK) []byte {
	var b bytes.Buffer
	seg := func(marker byte, data []byte) {
		b.Write([]byte{0xff, marker, byte((len(data) + 2) >> 8), byte(len(data) + 2)})
		b.Write(data)
	}
	b.Write([]byte{0xff, 0xd8})
	seg(0xee, []byte("Adobe\x00\x64\x00\x00\x00\x00\x00")) // version 100, flags 0, transform 0
	seg(0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 4}
	for id := byte(1); id <= 4; id++ {
		sof = append(sof, id, 0x11, 0)
	}
	seg(0xc0, sof)
	// DC: the standard luminance table (categories 0–11). AC: one code, "0", for end of block.
	dcCounts := []byte{0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}
	dht := append([]byte{0x00}, dcCounts...)
	dht = append(dht, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	acCounts := make([]byte, 16)
	acCounts[0] = 1
	dht = append(dht, 0x10)
	dht = append(dht, acCounts...)
	dht = append(dht, 0x00)
	seg(0xc4, dht)
	seg(0xda, []byte{4, 1, 0, 2, 0, 3, 0, 4, 0, 0, 63, 0})

	codes, lens := canonical(dcCounts)
	e := bits{stuff: true}
	var pred [4]int
	for by := 0; by < h; by += 8 {
		for bx := 0; bx < w; bx += 8 {
			c := at(bx, by)
			for i, v := range []uint8{c.C, c.M, c.Y, c.K} {
				dc := 8 * (int(255-v) - 128) // the DCT of a flat block of the stored (inverted) value
				d := dc - pred[i]
				pred[i] = dc
				cat, extra := 0, d
				for a := max(d, -d); a > 0; a >>= 1 {
					cat++
				}
				if d < 0 {
					extra = d + (1 << cat) - 1
				}
				e.put(codes[cat], lens[cat])
				e.put(uint32(extra), uint(cat))
				e.put(0, 1) // end of block
			}
		}
	}
	b.Write(e.flush())
	b.Write([]byte{0xff, 0xd9})
	return b.Bytes()
}

// canonical returns the JPEG Huffman codes for symbols 0, 1, … given the count of codes of each
// length 1–16 (Annex C of the standard).
func canonical(counts []byte) (codes []uint32, lens []uint) {
	code := uint32(0)
	for l, n := range counts {
		for range n {
			codes = append(codes, code)
			lens = append(lens, uint(l+1))
			code++
		}
		code <<= 1
	}
	return codes, lens
}

// WebP writes a lossless (VP8L) WebP, which Go cannot encode, in which each pixel is one bit:
// ink (0x20 grey) or paper (0xf0 grey). The green channel's prefix code has those two symbols and
// every other channel's has a single symbol, which costs no bits at all; the subtract-green
// transform then copies green into red and blue, so the pixels come out grey. Only the dimensions
// and the ink bits are free, which is all a test fixture needs.
func WebP(w, h int, ink func(x, y int) bool) []byte {
	e := bits{lsb: true}
	e.put(0x2f, 8) // VP8L signature
	e.put(uint32(w-1), 14)
	e.put(uint32(h-1), 14)
	e.put(0, 1) // no alpha
	e.put(0, 3) // version 0
	e.put(1, 1) // a transform follows:
	e.put(2, 2) // subtract green
	e.put(0, 1) // no more transforms
	e.put(0, 1) // no colour cache
	e.put(0, 1) // no meta prefix codes: one group of five codes for the whole image
	simple := func(symbols ...uint32) {
		e.put(1, 1) // simple code
		e.put(uint32(len(symbols)-1), 1)
		if symbols[0] < 2 && len(symbols) == 1 {
			e.put(0, 1)
			e.put(symbols[0], 1)
		} else {
			e.put(1, 1)
			e.put(symbols[0], 8)
		}
		if len(symbols) == 2 {
			e.put(symbols[1], 8)
		}
	}
	simple(0x20, 0xf0) // green: ink is code 0, paper is code 1 (the smaller symbol takes 0)
	simple(0)          // red, added to green by the transform
	simple(0)          // blue, likewise
	simple(0xff)       // alpha: opaque
	simple(0)          // distance: unused
	for y := range h {
		for x := range w {
			if ink(x, y) {
				e.put(0, 1)
			} else {
				e.put(1, 1)
			}
		}
	}
	data := e.flush()

	var b bytes.Buffer
	pad := len(data) & 1
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(4+8+len(data)+pad))
	b.WriteString("WEBPVP8L")
	binary.Write(&b, binary.LittleEndian, uint32(len(data)))
	b.Write(data)
	if pad == 1 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

// Scans writes a w×h JPEG of grey blocks in n components (1×1 sampling, ids 1…n) that makes its
// decoder work as hard as its header allows for its size: scans scans, each over every block.
// A progressive one (SOF2) holds only successive-approximation refinements of the AC
// coefficients, one component per scan, whose blocks are all in end-of-band runs of 32767, so a
// scan over 40 megapixels is about 40 bytes; a baseline one interleaves all components in every
// scan, each block a DC and an end-of-block code, two bits. Go's decoder accepts both (it does not
// check that a progression makes sense), and visits every block of every scan.
func Scans(w, h, n, scans int, progressive bool) []byte {
	var b bytes.Buffer
	seg := func(marker byte, data []byte) {
		b.Write([]byte{0xff, marker, byte((len(data) + 2) >> 8), byte(len(data) + 2)})
		b.Write(data)
	}
	b.Write([]byte{0xff, 0xd8})
	seg(0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(n)}
	for id := 1; id <= n; id++ {
		sof = append(sof, byte(id), 0x11, 0)
	}
	frame := byte(0xc0)
	if progressive {
		frame = 0xc2
	}
	seg(frame, sof)
	// One code, "0", in each table: DC category 0; AC end of block (table 0) or an end-of-band
	// run of 2¹⁴ plus 14 more bits (table 1).
	one := func(class byte, sym byte) []byte {
		t := []byte{class, 1}
		return append(append(t, make([]byte, 15)...), sym)
	}
	seg(0xc4, one(0x00, 0))
	seg(0xc4, one(0x10, 0x00))
	seg(0xc4, one(0x11, 0xe0))
	blocks := ((w + 7) / 8) * ((h + 7) / 8)
	for s := range scans {
		e := bits{stuff: true}
		if progressive {
			seg(0xda, []byte{1, byte(1 + s%n), 0x01, 1, 63, 0x10}) // AC 1–63, refine bit 0
			for range (blocks + 32766) / 32767 {
				e.put(0, 1)
				e.put(1<<14-1, 14)
			}
		} else {
			sos := []byte{byte(n)}
			for id := 1; id <= n; id++ {
				sos = append(sos, byte(id), 0x00)
			}
			seg(0xda, append(sos, 0, 63, 0))
			for range blocks * n {
				e.put(0, 2)
			}
		}
		b.Write(e.flush())
	}
	b.Write([]byte{0xff, 0xd9})
	return b.Bytes()
}
