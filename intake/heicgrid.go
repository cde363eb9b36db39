package intake

import (
	"context"
	"encoding/binary"
	"image"
)

// A phone writes a HEIC photo as a grid: 48 tiles of 512×512, each an HEVC picture of its own,
// under a grid item that says how they are laid out. libheif decodes such a grid in about 1.5×
// the time its tiles take one by one (docs/performance.md), so intake decodes the tiles itself,
// each as the primary image of the same file (its item number written into pitm, its hidden flag
// cleared, in the copy one instance of the module holds), and puts them together. Anything it does not
// recognise — another layout of the boxes, a crop (clap) or mirror (imir), tiles that differ —
// goes to libheif whole, as before.

// heifGrid is a grid picture as read from its container.
type heifGrid struct {
	rows, cols int
	w, h       int      // the picture, before irot
	ids        []uint16 // the tiles' items, row by row
	flags      []int    // the offset of each tile's infe flags' last byte
	pitm       int      // the offset of the primary item's number in pitm
}

// offset is where sub starts in data, sub being a slice of data.
func offset(data, sub []byte) int { return cap(data) - cap(sub) }

// readGrid reads the grid of data's primary item, if it is a grid intake decodes tile by tile.
func readGrid(data []byte, h heifHeader) (heifGrid, bool) {
	var g heifGrid
	if h.mirror || h.clap {
		return g, false
	}
	meta, ok := child(boxes(data), "meta")
	if !ok || len(meta.body) < 4 {
		return g, false
	}
	inner := boxes(meta.body[4:])
	pitm, ok := child(inner, "pitm")
	if !ok || len(pitm.body) < 6 || pitm.body[0] != 0 {
		return g, false
	}
	primary := binary.BigEndian.Uint16(pitm.body[4:])
	g.pitm = offset(data, pitm.body[4:])

	// iinf: each item's type, and where its flags are.
	iinf, ok := child(inner, "iinf")
	if !ok || len(iinf.body) < 6 {
		return g, false
	}
	skip := 6 // version, flags and a 16-bit count
	if iinf.body[0] != 0 {
		skip = 8
	}
	types, flagAt := map[uint16]string{}, map[uint16]int{}
	for _, b := range boxes(iinf.body[skip:]) {
		if b.typ != "infe" || len(b.body) < 12 || b.body[0] != 2 {
			continue // version 2: 16-bit item numbers, as phones write them
		}
		id := binary.BigEndian.Uint16(b.body[4:])
		types[id], flagAt[id] = string(b.body[8:12]), offset(data, b.body[3:])
	}
	if types[primary] != "grid" {
		return g, false
	}
	// iref: the tiles the grid is derived from (dimg), in order.
	iref, ok := child(inner, "iref")
	if !ok || len(iref.body) < 4 || iref.body[0] != 0 {
		return g, false
	}
	for _, r := range boxes(iref.body[4:]) {
		if r.typ != "dimg" || len(r.body) < 4 || binary.BigEndian.Uint16(r.body) != primary {
			continue
		}
		n := int(binary.BigEndian.Uint16(r.body[2:]))
		if len(r.body) < 4+2*n {
			return g, false
		}
		for i := range n {
			id := binary.BigEndian.Uint16(r.body[4+2*i:])
			if types[id] != "hvc1" {
				return g, false
			}
			g.ids, g.flags = append(g.ids, id), append(g.flags, flagAt[id])
		}
	}
	// The grid's own data, where iloc puts it: rows, columns and the picture's size.
	desc, ok := itemData(data, inner, primary)
	if !ok || len(desc) < 8 || desc[0] != 0 {
		return g, false
	}
	g.rows, g.cols = int(desc[2])+1, int(desc[3])+1
	if desc[1]&1 == 0 {
		g.w, g.h = int(binary.BigEndian.Uint16(desc[4:])), int(binary.BigEndian.Uint16(desc[6:]))
	} else if len(desc) >= 12 {
		g.w, g.h = int(binary.BigEndian.Uint32(desc[4:])), int(binary.BigEndian.Uint32(desc[8:]))
	}
	if len(g.ids) != g.rows*g.cols || g.w != h.w || g.h != h.h || g.w <= 0 || g.h <= 0 {
		return g, false
	}
	return g, true
}

// itemData is the bytes of item id as iloc places them: one extent, in the file or in idat.
func itemData(data []byte, inner []box, id uint16) ([]byte, bool) {
	iloc, ok := child(inner, "iloc")
	if !ok || len(iloc.body) < 8 {
		return nil, false
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
	count, ok := num(map[byte]int{0: 2, 1: 2, 2: 4}[version])
	if !ok || version > 2 {
		return nil, false
	}
	// Sizes may be 0 bytes, so an extent can take no bytes of the file: the walk is bounded by
	// a count of extents instead (a photo's items have one each).
	budget := 4096
	for range count {
		item, ok1 := num(map[byte]int{0: 2, 1: 2, 2: 4}[version])
		method := uint64(0)
		if version > 0 {
			m, ok := num(2)
			if !ok {
				return nil, false
			}
			method = m & 15
		}
		_, ok2 := num(2) // data reference index
		base, ok3 := num(baseSize)
		extents, ok4 := num(2)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, false
		}
		if budget -= int(extents) + 1; budget < 0 {
			return nil, false
		}
		var at, n uint64
		for e := range extents {
			_, okI := num(idxSize)
			o, okO := num(offSize)
			l, okL := num(lenSize)
			if !okI || !okO || !okL {
				return nil, false
			}
			if e == 0 {
				at, n = base+o, l
			}
		}
		if uint16(item) != id || item > 0xffff {
			continue
		}
		if extents != 1 {
			return nil, false
		}
		src := data
		switch method {
		case 0:
		case 1:
			idat, ok := child(inner, "idat")
			if !ok {
				return nil, false
			}
			src = idat.body
		default:
			return nil, false
		}
		if n == 0 || at > uint64(len(src)) || n > uint64(len(src))-at {
			return nil, false
		}
		return src[at : at+n], true
	}
	return nil, false
}

// decodeGrid decodes a grid tile by tile and puts the tiles together, cropped to the picture,
// then turns it as irot says (libheif would have). ok is false when the tiles are not what a
// grid of equal YCbCr or grey tiles is; the caller then decodes the file whole.
func decodeGrid(ctx context.Context, data []byte, g heifGrid, rotate int, limit int64) (m image.Image, ok bool, err error) {
	d, err := newHEIFDecoder(ctx, data, limit)
	if d != nil {
		defer d.close()
	}
	if err != nil {
		return nil, false, err
	}
	var out *image.YCbCr
	var grey *image.Gray
	tw, th := 0, 0
	for k, id := range g.ids {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		// The tile as primary, not hidden: libheif will not take a hidden item as primary.
		if !d.patch(g.pitm, binary.BigEndian.AppendUint16(nil, id)) || !d.patch(g.flags[k], []byte{data[g.flags[k]] &^ 1}) {
			return nil, false, nil
		}
		t, err := d.picture(ctx)
		if err != nil {
			return nil, false, err
		}
		r := t.Bounds()
		if k == 0 {
			tw, th = r.Dx(), r.Dy()
			if tw%2 != 0 || th%2 != 0 || tw*g.cols < g.w || th*g.rows < g.h {
				return nil, false, nil
			}
		}
		if r != image.Rect(0, 0, tw, th) {
			return nil, false, nil
		}
		x, y := k%g.cols*tw, k/g.cols*th
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
		return gray(turnPlane(plane{pix: grey.Pix, stride: grey.Stride, w: g.w, h: g.h, ch: 1}, orient)), true, nil
	}
	if orient == 1 {
		return out, true, nil
	}
	cw, ch := (g.w+1)/2, (g.h+1)/2
	y := turnPlane(plane{pix: out.Y, stride: out.YStride, w: g.w, h: g.h, ch: 1}, orient)
	cb := turnPlane(plane{pix: out.Cb, stride: out.CStride, w: cw, h: ch, ch: 1}, orient)
	cr := turnPlane(plane{pix: out.Cr, stride: out.CStride, w: cw, h: ch, ch: 1}, orient)
	return &image.YCbCr{Y: y.pix, Cb: cb.pix, Cr: cr.pix, YStride: y.stride, CStride: cb.stride,
		SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: image.Rect(0, 0, y.w, y.h)}, true, nil
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

// decodeHEICFile decodes a HEIC's primary image, upright: a grid tile by tile where it can,
// else whole.
func decodeHEICFile(ctx context.Context, data []byte, h heifHeader, limit int64) (image.Image, error) {
	if g, ok := readGrid(data, h); ok {
		m, ok, err := decodeGrid(ctx, data, g, h.rotate, limit)
		if ok || err != nil {
			return m, err
		}
	}
	return decodeHEIC(ctx, data, limit)
}
