package heif

import (
	"context"
	"encoding/binary"
	"errors"
	"image"

	"github.com/ocrdraft/ocrdraft/intake/internal/plane"
)

// A phone writes a HEIC photo as a grid: 48 tiles of 512×512, each an HEVC picture of its own,
// under a grid item that says how they are laid out. libheif decodes such a grid in about 1.5×
// the time its tiles take one by one (docs/performance.md), and it reads the whole container
// again for every decode, in time that grows with the square of its items. So Decode decodes the
// tiles itself, each as the one picture of a small container of its own (tileFile: the tile's
// item, its properties, its data where it lies in the file), and puts them together. Only the
// tiles that cover a pixel of the picture are decoded. Anything it does not recognise — another
// layout of the boxes, a crop (clap) or mirror (imir), tiles that differ — goes to libheif
// whole, within the bounds readHEIF's count of what that decodes sets.

// heifGrid is a grid picture as read from its container.
type heifGrid struct {
	rows, cols int
	w, h       int        // the picture, before irot
	tw, th     int        // every tile's size, from its ispe
	tiles      []gridTile // row by row
	head       int        // the most bytes a tile's container takes before the file
}

// gridTile is one tile: its data in the file and the properties it is decoded with.
type gridTile struct {
	at, n int
	props []box // in the order ipma gives them
	ess   []bool
}

// needed is the tiles that cover a pixel of the picture, across and down: a grid may declare
// more than that, and those past the picture are never decoded.
func (g heifGrid) needed() (across, down int) {
	return min(g.cols, (g.w+g.tw-1)/g.tw), min(g.rows, (g.h+g.th-1)/g.th)
}

// decodes is the tiles decoded and their pixels.
func (g heifGrid) decodes() (int, int64) {
	a, d := g.needed()
	return a * d, int64(a*d) * int64(g.tw) * int64(g.th)
}

// offset is where sub starts in data, sub being a slice of data.
func offset(data, sub []byte) int { return cap(data) - cap(sub) }

// readGrid reads the grid of data's primary item, if it is a grid decoded tile by tile:
// tiles of one size, hvc1, each of one extent, that cover the picture.
func readGrid(data []byte, h heifHeader) (heifGrid, bool) {
	var g heifGrid
	if h.mirror || h.clap {
		return g, false
	}
	m, err := readMeta(data)
	if err != nil {
		return g, false
	}
	grid := m.items[m.primary]
	if grid == nil || grid.typ != "grid" {
		return g, false
	}
	// The grid's own data, where iloc puts it: rows, columns and the picture's size.
	loc := ilocAll(data, m.inner)
	desc, ok := loc[m.primary]
	if !ok || len(desc) < 8 || desc[0] != 0 {
		return g, false
	}
	g.rows, g.cols = int(desc[2])+1, int(desc[3])+1
	if desc[1]&1 == 0 {
		g.w, g.h = int(binary.BigEndian.Uint16(desc[4:])), int(binary.BigEndian.Uint16(desc[6:]))
	} else if len(desc) >= 12 {
		g.w, g.h = int(binary.BigEndian.Uint32(desc[4:])), int(binary.BigEndian.Uint32(desc[8:]))
	}
	if len(grid.dimg) != g.rows*g.cols || g.w != h.w || g.h != h.h || g.w <= 0 || g.h <= 0 {
		return g, false
	}
	for k, id := range grid.dimg {
		it := m.items[id]
		if it == nil || it.typ != "hvc1" || it.w <= 0 || it.h <= 0 || it.w > 1<<16 || it.h > 1<<16 {
			return g, false
		}
		if k == 0 {
			g.tw, g.th = int(it.w), int(it.h)
		}
		b, ok := loc[id]
		if !ok || int(it.w) != g.tw || int(it.h) != g.th {
			return g, false
		}
		t := gridTile{at: offset(data, b), n: len(b)}
		for _, p := range it.props {
			t.props, t.ess = append(t.props, m.ipco[p&0x7fff-1]), append(t.ess, p&0x8000 != 0)
		}
		g.tiles = append(g.tiles, t)
	}
	if g.tw%2 != 0 || g.th%2 != 0 || g.tw*g.cols < g.w || g.th*g.rows < g.h {
		return g, false
	}
	across, down := g.needed()
	if across*down > MaxPictures {
		return g, true // refused before any container is made
	}
	for r := range down {
		for c := range across {
			g.head = max(g.head, len(tileHead(g.tiles[r*g.cols+c], 0, 0)))
		}
	}
	return g, true
}

// tileFile is the container a tile is decoded from: ftyp, then a meta box of one hvc1 item, the
// tile, with the tile's own properties, whose one extent is at base+t.at; then a free box that
// covers the rest of head bytes and the file, which follows them in the module's memory. libheif
// reads the small container and the tile's bytes only. head 0 gives the container's own size.
func tileHead(t gridTile, head, file int) []byte {
	u16 := func(b []byte, v int) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
	u32 := func(b []byte, v int) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
	mk := func(typ string, body ...[]byte) []byte {
		n := 8
		for _, b := range body {
			n += len(b)
		}
		out := append(u32(make([]byte, 0, n), n), typ...)
		for _, b := range body {
			out = append(out, b...)
		}
		return out
	}
	var ipco, assoc []byte
	assoc = append(u16(u32([]byte{0, 0, 0, 1}, 1), 1), byte(len(t.props))) // ipma v0, flags 1: 16-bit indices
	for i, p := range t.props {
		ipco = append(ipco, mk(p.typ, p.body)...)
		v := i + 1
		if t.ess[i] {
			v |= 0x8000
		}
		assoc = u16(assoc, v)
	}
	loc := u32(u16(u16(u16(u16(u16([]byte{1, 0, 0, 0, 0x44, 0x00}, 1), 1), 0), 0), 1), head+t.at) // one item, its one extent
	loc = u32(loc, t.n)
	out := mk("ftyp", []byte("heic\x00\x00\x00\x00mif1heic"))
	out = append(out, mk("meta", []byte{0, 0, 0, 0},
		mk("hdlr", make([]byte, 8), []byte("pict"), make([]byte, 13)),
		mk("pitm", []byte{0, 0, 0, 0, 0, 1}),
		mk("iinf", []byte{0, 0, 0, 0, 0, 1}, mk("infe", []byte{2, 0, 0, 0, 0, 1, 0, 0}, []byte("hvc1\x00"))),
		mk("iloc", loc),
		mk("iprp", mk("ipco", ipco), mk("ipma", assoc)))...)
	if head == 0 {
		return append(out, make([]byte, 8)...) // room for the free box's header
	}
	out = append(u32(out, head-len(out)+file), "free"...)
	return append(out, make([]byte, head-len(out))...)
}

// ilocAll is the bytes of every item as iloc places them: one extent, in the file or in idat.
// Sizes may be 0 bytes, so an extent can take no bytes of the file: the walk is bounded by a
// count of extents instead (a photo's items have one each).
func ilocAll(data []byte, inner []box) map[uint32][]byte {
	out := map[uint32][]byte{}
	iloc, ok := child(inner, "iloc")
	if !ok || len(iloc.body) < 8 {
		return out
	}
	b := iloc.body
	version := b[0]
	offSize, lenSize, baseSize, idxSize := int(b[4]>>4), int(b[4]&15), int(b[5]>>4), int(b[5]&15)
	if version == 0 {
		idxSize = 0
	}
	b = b[6:]
	num := func(n int) (uint64, bool) {
		if n > 8 || len(b) < n {
			return 0, false
		}
		var v uint64
		for _, c := range b[:n] {
			v = v<<8 | uint64(c)
		}
		b = b[n:]
		return v, true
	}
	idSize := map[byte]int{0: 2, 1: 2, 2: 4}[version]
	count, ok := num(idSize)
	if !ok || version > 2 {
		return out
	}
	budget := 4096
	for range count {
		item, ok1 := num(idSize)
		method := uint64(0)
		if version > 0 {
			m, ok := num(2)
			if !ok {
				return out
			}
			method = m & 15
		}
		_, ok2 := num(2) // data reference index
		base, ok3 := num(baseSize)
		extents, ok4 := num(2)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return out
		}
		if budget -= int(extents) + 1; budget < 0 {
			return map[uint32][]byte{}
		}
		var at, n uint64
		for e := range extents {
			_, okI := num(idxSize)
			o, okO := num(offSize)
			l, okL := num(lenSize)
			if !okI || !okO || !okL {
				return out
			}
			if e == 0 {
				at, n = base+o, l
			}
		}
		if extents != 1 {
			continue
		}
		src := data
		switch method {
		case 0:
		case 1:
			idat, ok := child(inner, "idat")
			if !ok {
				continue
			}
			src = idat.body
		default:
			continue
		}
		if n == 0 || at > uint64(len(src)) || n > uint64(len(src))-at {
			continue
		}
		if _, dup := out[uint32(item)]; !dup {
			out[uint32(item)] = src[at : at+n]
		}
	}
	return out
}

// decodeGrid decodes a grid tile by tile and puts the tiles together, cropped to the picture,
// then turns it as irot says (libheif would have). Only the tiles that cover the picture are
// decoded, each in a container of its own (tileFile) written before the file in one instance of
// the module; ctx is looked at before each. ok is false when the tiles are not what a grid of
// equal YCbCr or grey tiles is; the caller then decodes the file whole.
func (dd *Decoder) decodeGrid(ctx context.Context, data []byte, g heifGrid, rotate int, limit int64) (m image.Image, ok bool, err error) {
	d, err := dd.instance(ctx, data, g.head, limit)
	if d != nil {
		defer d.close()
	}
	if err != nil {
		return nil, false, err
	}
	var out *image.YCbCr
	var grey *image.Gray
	tw, th := g.tw, g.th
	across, down := g.needed()
	for k := range across * down {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		col, row := k%across, k/across
		if !d.head(tileHead(g.tiles[row*g.cols+col], g.head, len(data))) {
			return nil, false, nil
		}
		t, err := d.picture(ctx)
		if err != nil {
			return nil, false, err
		}
		if t.Bounds() != image.Rect(0, 0, tw, th) {
			return nil, false, nil
		}
		x, y := col*tw, row*th
		switch t := t.(type) {
		case *image.YCbCr:
			if t.SubsampleRatio != image.YCbCrSubsampleRatio420 || grey != nil {
				return nil, false, nil
			}
			if out == nil {
				out = image.NewYCbCr(image.Rect(0, 0, g.w, g.h), image.YCbCrSubsampleRatio420)
			}
			paste(out.Y, out.YStride, g.w, g.h, t.Y, t.YStride, x, y, tw, th)
			cw, ch := (g.w+1)/2, (g.h+1)/2
			paste(out.Cb, out.CStride, cw, ch, t.Cb, t.CStride, x/2, y/2, tw/2, th/2)
			paste(out.Cr, out.CStride, cw, ch, t.Cr, t.CStride, x/2, y/2, tw/2, th/2)
		case *image.Gray:
			if out != nil {
				return nil, false, nil
			}
			if grey == nil {
				grey = image.NewGray(image.Rect(0, 0, g.w, g.h))
			}
			paste(grey.Pix, grey.Stride, g.w, g.h, t.Pix, t.Stride, x, y, tw, th)
		default:
			return nil, false, nil
		}
	}
	orient := [4]int{1, 8, 3, 6}[rotate&3] // irot turns anticlockwise
	if grey != nil {
		t := plane.Turn(plane.Plane{Pix: grey.Pix, Stride: grey.Stride, W: g.w, H: g.h, Ch: 1}, orient)
		return &image.Gray{Pix: t.Pix, Stride: t.Stride, Rect: image.Rect(0, 0, t.W, t.H)}, true, nil
	}
	if orient == 1 {
		return out, true, nil
	}
	cw, ch := (g.w+1)/2, (g.h+1)/2
	y := plane.Turn(plane.Plane{Pix: out.Y, Stride: out.YStride, W: g.w, H: g.h, Ch: 1}, orient)
	cb := plane.Turn(plane.Plane{Pix: out.Cb, Stride: out.CStride, W: cw, H: ch, Ch: 1}, orient)
	cr := plane.Turn(plane.Plane{Pix: out.Cr, Stride: out.CStride, W: cw, H: ch, Ch: 1}, orient)
	return &image.YCbCr{Y: y.Pix, Cb: cb.Pix, Cr: cr.Pix, YStride: y.Stride, CStride: cb.Stride,
		SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: image.Rect(0, 0, y.W, y.H)}, true, nil
}

// paste copies a w×h tile (src, stride ss) to (x, y) of a plane of pw×ph (dst, stride ds),
// cutting what falls outside it.
func paste(dst []byte, ds, pw, ph int, src []byte, ss, x, y, w, h int) {
	if x >= pw {
		return // a column wholly past the picture: a grid may say more tiles than it needs
	}
	for r := range min(h, ph-y) {
		copy(dst[(y+r)*ds+x:(y+r)*ds+min(pw, x+w)], src[r*ss:])
	}
}

// decodeFile decodes a HEIC's primary image, upright: a grid tile by tile where it can, else
// whole; the module's memory capped at what Cost charges for it, limit at most.
func (dd *Decoder) decodeFile(ctx context.Context, data []byte, h heifHeader, limit int64) (image.Image, error) {
	if g := h.grid; g != nil {
		m, ok, err := dd.decodeGrid(ctx, data, *g, h.rotate, min(limit, heicWasm(h, len(data), false)))
		if ok || err != nil {
			return m, err
		}
		// Tiles that differ: whole, if that decodes no more than was allowed for the tiles.
		if !wholeOK(h) {
			return nil, errors.New("heic: the grid's tiles differ, and libheif would decode more than the tiles that cover the picture")
		}
	}
	return dd.whole(ctx, data, min(limit, heicWasm(h, len(data), true)))
}
