package intake

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"

	"golang.org/x/image/tiff"
)

// TIFF compressions: what x/image/tiff decodes, and JPEG (7, TIFF Technical Note 2), which
// office scanners write for grey and colour batches and which intake decodes here. Anything
// else (old-style JPEG 6, JPEG 2000, JBIG …) is refused before decoding, by the name
// features.go gives it.
var tiffCompressions = map[int]string{
	0: "none", 1: "none", 3: "CCITT G3", 4: "CCITT G4", 5: "LZW", 7: "JPEG",
	8: "deflate", 32773: "PackBits", 32946: "deflate",
}

// tiffTag returns the values of a tag of the directory at off: SHORTs or LONGs as numbers,
// an UNDEFINED or BYTE tag as its bytes (in the second result). Offsets and counts come from
// the file, so each is checked against it.
func tiffTag(data []byte, bo binary.ByteOrder, off int64, tag uint16) ([]uint32, []byte, error) {
	n := int64(bo.Uint16(data[off:]))
	for e := off + 2; e < off+2+12*n; e += 12 {
		if bo.Uint16(data[e:]) != tag {
			continue
		}
		typ, count := bo.Uint16(data[e+2:]), int64(bo.Uint32(data[e+4:]))
		size := map[uint16]int64{1: 1, 3: 2, 4: 4, 7: 1}[typ]
		if size == 0 {
			return nil, nil, fmt.Errorf("tag %d has type %d", tag, typ)
		}
		at := e + 8
		if count*size > 4 {
			at = int64(bo.Uint32(data[e+8:]))
		}
		if count > int64(len(data)) || at < 0 || at+count*size > int64(len(data)) {
			return nil, nil, fmt.Errorf("tag %d runs past the end of the file", tag)
		}
		raw := data[at : at+count*size]
		if size == 1 {
			return nil, raw, nil
		}
		v := make([]uint32, count)
		for i := range v {
			if size == 2 {
				v[i] = uint32(bo.Uint16(raw[2*i:]))
			} else {
				v[i] = bo.Uint32(raw[4*i:])
			}
		}
		return v, nil, nil
	}
	return nil, nil, nil
}

// decodeTIFFJPEG decodes a page whose strips or tiles are each a JPEG stream, the tables they
// share (JPEGTables) put in front of each. Only baseline streams are decoded: their work is their
// pixels, and a block may not be larger than its place on the page. The page is grey when every
// block is, else RGBA; one block is held decoded at a time beside it, and ctx is looked at
// between blocks.
func decodeTIFFJPEG(ctx context.Context, data []byte, d ifd) (image.Image, error) {
	bo, _, err := tiffOrder(data)
	if err != nil {
		return nil, err
	}
	bw, bh := d.w, d.h
	offTag, cntTag := uint16(273), uint16(279)
	if d.tileW > 0 && d.tileH > 0 {
		bw, bh, offTag, cntTag = d.tileW, d.tileH, 324, 325
	} else if d.rows > 0 && d.rows < d.h {
		bh = d.rows
	}
	if planar, _, _ := tiffTag(data, bo, d.at, 284); len(planar) == 1 && planar[0] == 2 {
		return nil, errors.New("tiff: JPEG in separate planes")
	}
	offs, _, err := tiffTag(data, bo, d.at, offTag)
	if err != nil {
		return nil, err
	}
	counts, _, err := tiffTag(data, bo, d.at, cntTag)
	if err != nil {
		return nil, err
	}
	across, down := (d.w+bw-1)/bw, (d.h+bh-1)/bh
	if len(offs) != across*down || len(counts) != len(offs) {
		return nil, fmt.Errorf("tiff: %d blocks for a page of %d×%d", len(offs), across, down)
	}
	_, tables, err := tiffTag(data, bo, d.at, 347)
	if err != nil {
		return nil, err
	}
	if len(tables) >= 4 {
		if !bytes.HasPrefix(tables, []byte{0xff, 0xd8}) || !bytes.HasSuffix(tables, []byte{0xff, 0xd9}) {
			return nil, errors.New("tiff: JPEGTables is not a JPEG stream")
		}
		tables = tables[2 : len(tables)-2]
	} else {
		tables = nil
	}
	rect := image.Rect(0, 0, d.w, d.h)
	var page draw.Image
	var buf []byte
	for i := range offs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		at, n := int64(offs[i]), int64(counts[i])
		if n < 4 || at+n > int64(len(data)) || !bytes.HasPrefix(data[at:], []byte{0xff, 0xd8}) {
			return nil, fmt.Errorf("tiff: block %d is no JPEG stream", i)
		}
		buf = append(append(append(buf[:0], 0xff, 0xd8), tables...), data[at+2:at+n]...)
		if err := baseline(buf); err != nil { // valid, but not read here: 415, by name
			return nil, tiff.UnsupportedError(fmt.Sprintf("JPEG block %d: %v", i, err))
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(buf))
		if err != nil {
			return nil, fmt.Errorf("tiff: block %d: %w", i, err)
		}
		if cfg.Width > bw || cfg.Height > bh {
			return nil, fmt.Errorf("tiff: block %d is %d×%d, its place %d×%d", i, cfg.Width, cfg.Height, bw, bh)
		}
		m, err := jpeg.Decode(bytes.NewReader(buf))
		var unsupported jpeg.UnsupportedError
		if errors.As(err, &unsupported) { // 12-bit samples, arithmetic coding …: valid, not read here
			return nil, tiff.UnsupportedError(fmt.Sprintf("JPEG block %d: %v", i, err))
		}
		if err != nil {
			return nil, fmt.Errorf("tiff: block %d: %w", i, err)
		}
		if page == nil {
			if _, grey := m.(*image.Gray); grey {
				page = image.NewGray(rect)
			} else {
				page = image.NewRGBA(rect)
			}
		}
		if _, grey := page.(*image.Gray); grey {
			if _, ok := m.(*image.Gray); !ok { // a colour block after grey ones: the page is colour
				rgba := image.NewRGBA(rect)
				draw.Draw(rgba, rect, page, image.Point{}, draw.Src)
				page = rgba
			}
		}
		x, y := i%across*bw, i/across*bh
		draw.Draw(page, image.Rect(x, y, x+bw, y+bh).Intersect(rect), m, m.Bounds().Min, draw.Src)
	}
	return page, nil
}

// baseline checks that a JPEG stream's frame is baseline or extended sequential (SOF0, SOF1),
// the one kind a TIFF block may hold whose decoding costs only its pixels.
func baseline(b []byte) error {
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xff {
			return errors.New("no frame header")
		}
		m := b[i+1]
		switch {
		case m == 0xc0 || m == 0xc1:
			return nil
		case m >= 0xc2 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc:
			return fmt.Errorf("a JPEG of frame type %#x (progressive, lossless or arithmetic), not baseline", m)
		case m == 0xd8 || m >= 0xd0 && m <= 0xd7 || m == 0x01:
			i += 2
			continue
		case m == 0xff:
			i++
			continue
		}
		i += 2 + int(binary.BigEndian.Uint16(b[i+2:]))
	}
	return errors.New("no frame header")
}
