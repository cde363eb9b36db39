package heif

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
)

// Header is what a HEIC's container says before decoding: the primary image's size, upright
// (a quarter turn by irot swaps it, as the decoder applies it), and YCbCr, as phones write it;
// the largest image any item declares (a grid's tile, a thumbnail), which may be larger.
type Header struct {
	image.Config
	Largest image.Point
	h       heifHeader
}

// DecodeConfig reads a HEIC's container. It reads only within data; anything it cannot find is
// an error, so a file that does not say how large its picture is is never decoded.
func DecodeConfig(data []byte) (Header, error) {
	h, err := readHEIF(data)
	if err != nil {
		return Header{}, err
	}
	if g, ok := readGrid(data, h); ok {
		h.grid = &g
	}
	w, ht := h.w, h.h
	if h.rotate%2 == 1 {
		w, ht = ht, w
	}
	return Header{Config: image.Config{Width: w, Height: ht, ColorModel: color.YCbCrModel},
		Largest: image.Pt(h.lw, h.lh), h: h}, nil
}

// box is one ISO BMFF box: its type and what it holds after its header.
type box struct {
	typ  string
	body []byte
}

// boxes splits data into the boxes it holds, in order. A box whose size runs past data is cut
// short there (a truncated file keeps what it has); a size below its header ends the walk.
func boxes(data []byte) []box {
	var out []box
	for len(data) >= 8 {
		size, typ, head := uint64(binary.BigEndian.Uint32(data)), string(data[4:8]), uint64(8)
		switch size {
		case 0: // to the end of the file
			size = uint64(len(data))
		case 1:
			if len(data) < 16 {
				return out
			}
			size, head = binary.BigEndian.Uint64(data[8:]), 16
		}
		if size < head {
			return out
		}
		end := min(size, uint64(len(data)))
		out = append(out, box{typ, data[head:end]})
		data = data[end:]
	}
	return out
}

func child(bs []box, typ string) (box, bool) {
	for _, b := range bs {
		if b.typ == typ {
			return b, true
		}
	}
	return box{}, false
}

// heifHeader is what a HEIF container says before decoding: the primary image's
// size (its ispe property: for a grid, the whole picture), the largest image any item declares
// (a grid's tiles, a thumbnail), how the container turns it, and what libheif would decode to
// show it whole.
type heifHeader struct {
	w, h     int
	largest  int64     // pixels of the largest ispe of any item
	lw, lh   int       // that ispe's size
	items    int       // ispe properties seen
	rotate   int       // irot: quarter turns anticlockwise
	mirror   bool      // imir
	clap     bool      // a clean aperture (a crop) on the primary image
	entries  int       // items in iinf: libheif's reading of the container grows with their square
	derived  bool      // the primary is derived from other items (a grid, an overlay)
	pictures int       // coded pictures libheif decodes for the primary (its tiles, an alpha plane)
	px       int64     // their pixels, from their ispe
	tw, th   int       // a derived primary's largest tile
	grid     *heifGrid // the grid decodeGrid decodes tile by tile, or nil
}

// heifItem is what the container says of one item.
type heifItem struct {
	typ   string
	w, h  int64    // ispe; 0 when it has none
	props []uint16 // ipma: its properties, from 1, bit 15 set when essential
	dimg  []uint32 // what it is derived from, in order
	aux   bool     // an auxiliary image (alpha, depth, gain map) of the primary
	at    int      // the offset of its infe in the file
}

// heifMeta is a HEIF container's meta box, read once: its boxes, its primary item, its
// properties and its items.
type heifMeta struct {
	inner   []box
	primary uint32
	ipco    []box
	items   map[uint32]*heifItem
	entries int
}

func (m *heifMeta) item(id uint32) *heifItem {
	it := m.items[id]
	if it == nil {
		it = &heifItem{}
		m.items[id] = it
	}
	return it
}

// readMeta walks ftyp → meta → pitm, iinf, iref, iprp → ipco, ipma. Every count is bounded by the
// bytes that hold what it counts, so the walk is linear in the file.
func readMeta(data []byte) (*heifMeta, error) {
	meta, ok := child(boxes(data), "meta")
	if !ok || len(meta.body) < 4 {
		return nil, errors.New("no meta box")
	}
	m := &heifMeta{inner: boxes(meta.body[4:]), items: map[uint32]*heifItem{}} // meta is a full box
	pitm, ok := child(m.inner, "pitm")
	if !ok || len(pitm.body) < 6 {
		return nil, errors.New("no primary item")
	}
	m.primary = uint32(binary.BigEndian.Uint16(pitm.body[4:]))
	if pitm.body[0] != 0 {
		if len(pitm.body) < 8 {
			return nil, errors.New("short pitm")
		}
		m.primary = binary.BigEndian.Uint32(pitm.body[4:])
	}
	m.readItems(data)
	m.readRefs()
	iprp, ok := child(m.inner, "iprp")
	if !ok {
		return nil, errors.New("no item properties")
	}
	props := boxes(iprp.body)
	ipco, ok := child(props, "ipco")
	if !ok {
		return nil, errors.New("no property container")
	}
	m.ipco = boxes(ipco.body)
	m.readProps(props)
	return m, nil
}

// readItems reads iinf: each item's type and where its infe is.
func (m *heifMeta) readItems(data []byte) {
	if iinf, ok := child(m.inner, "iinf"); ok && len(iinf.body) >= 6 {
		skip := 6 // version, flags and a 16-bit count
		if iinf.body[0] != 0 {
			skip = 8
		}
		for _, b := range boxes(iinf.body[min(skip, len(iinf.body)):]) {
			if b.typ != "infe" || len(b.body) < 4 {
				continue
			}
			m.entries++
			var id uint32
			var typ []byte
			switch v := b.body[0]; {
			case v == 2 && len(b.body) >= 12:
				id, typ = uint32(binary.BigEndian.Uint16(b.body[4:])), b.body[8:12]
			case v == 3 && len(b.body) >= 14:
				id, typ = binary.BigEndian.Uint32(b.body[4:]), b.body[10:14]
			default:
				continue // versions 0 and 1 have no item type: not an image
			}
			it := m.item(id)
			it.typ, it.at = string(typ), offset(data, b.body)
		}
	}
}

// readRefs reads iref: what each item is derived from (dimg), and which are the primary's
// auxiliary images (auxl).
func (m *heifMeta) readRefs() {
	if iref, ok := child(m.inner, "iref"); ok && len(iref.body) >= 4 && iref.body[0] <= 1 {
		n := 2 << iref.body[0] // item numbers of 16 bits in version 0, 32 in version 1
		get := func(b []byte) uint32 {
			if n == 2 {
				return uint32(binary.BigEndian.Uint16(b))
			}
			return binary.BigEndian.Uint32(b)
		}
		for _, r := range boxes(iref.body[4:]) {
			if len(r.body) < n+2 || r.typ != "dimg" && r.typ != "auxl" {
				continue
			}
			from, count := get(r.body), int(binary.BigEndian.Uint16(r.body[n:]))
			to := r.body[n+2:]
			count = min(count, len(to)/n)
			for i := range count {
				id := get(to[i*n:])
				if r.typ == "dimg" {
					it := m.item(from)
					it.dimg = append(it.dimg, id)
				} else if id == m.primary {
					m.item(from).aux = true
				}
			}
		}
	}
}

// readProps reads every ipma of iprp: each item's properties, and its size from its ispe.
func (m *heifMeta) readProps(props []box) {
	for _, ipma := range props {
		if ipma.typ != "ipma" || len(ipma.body) < 8 {
			continue
		}
		version, flags := ipma.body[0], ipma.body[3]
		n := binary.BigEndian.Uint32(ipma.body[4:])
		b := ipma.body[8:]
		for range n {
			var id uint32
			if version < 1 {
				if len(b) < 3 {
					break
				}
				id, b = uint32(binary.BigEndian.Uint16(b)), b[2:]
			} else {
				if len(b) < 5 {
					break
				}
				id, b = binary.BigEndian.Uint32(b), b[4:]
			}
			count := int(b[0])
			b = b[1:]
			it := m.item(id)
			for range count {
				var p uint16
				if flags&1 != 0 {
					if len(b) < 2 {
						break
					}
					p, b = binary.BigEndian.Uint16(b), b[2:]
				} else {
					if len(b) < 1 {
						break
					}
					p, b = uint16(b[0]&0x7f)|uint16(b[0]&0x80)<<8, b[1:]
				}
				index := int(p & 0x7fff)
				if index < 1 || index > len(m.ipco) {
					continue
				}
				it.props = append(it.props, p)
				if q := m.ipco[index-1]; q.typ == "ispe" && len(q.body) >= 12 {
					it.w, it.h = ispe(q.body)
				}
			}
		}
	}
}

// MaxItems is the most items a HEIC's container may hold (Decode refuses more). libheif's reading of the
// container takes time that grows with the square of its items (0.2 s for 1,600, 8 s for
// 10,000, measured), and it reads the container again for every decode. An iPhone's 24-megapixel
// photo holds about 150 (108 tiles, a gain map's, a thumbnail, EXIF).
const MaxItems = 1024

// readHEIF reads the primary image's properties and what libheif would decode to show it. It
// reads only within data; anything it cannot find is an error, so a file that does not say how
// large its picture is is never decoded.
func readHEIF(data []byte) (heifHeader, error) {
	m, err := readMeta(data)
	if err != nil {
		return heifHeader{}, err
	}
	var h heifHeader
	for _, p := range m.ipco {
		if p.typ == "ispe" && len(p.body) >= 12 {
			w, ht := ispe(p.body)
			if px := w * ht; px > h.largest {
				h.largest, h.lw, h.lh = px, int(w), int(ht)
			}
			h.items++
		}
	}
	h.entries = m.entries
	found := false
	if it := m.items[m.primary]; it != nil {
		for _, p := range it.props {
			switch q := m.ipco[p&0x7fff-1]; {
			case q.typ == "ispe" && len(q.body) >= 12:
				w, ht := ispe(q.body)
				h.w, h.h, found = int(w), int(ht), true
			case q.typ == "irot" && len(q.body) >= 1:
				h.rotate = int(q.body[0] & 3)
			case q.typ == "imir":
				h.mirror = true
			case q.typ == "clap":
				h.clap = true
			}
		}
	}
	if !found || h.w <= 0 || h.h <= 0 {
		return heifHeader{}, errors.New("the primary image declares no size (ispe)")
	}
	// What libheif decodes for the primary, whole: the picture, or each tile it is derived
	// from; and the auxiliary images of the primary (it decodes an alpha plane with it).
	for id, it := range m.items {
		if id != m.primary && !it.aux {
			continue
		}
		if !derivedType(it.typ) {
			h.pictures++
			h.px = min(h.px+it.w*it.h, 1<<56)
			continue
		}
		h.derived = h.derived || id == m.primary
		for _, r := range it.dimg {
			t := m.items[r]
			if t == nil || derivedType(t.typ) || t.w <= 0 || t.h <= 0 {
				return heifHeader{}, fmt.Errorf("item %d is derived from item %d, which is no picture of a declared size", id, r)
			}
			h.pictures++
			h.px = min(h.px+t.w*t.h, 1<<56) // saturates: over any limit
			if id == m.primary {
				h.tw, h.th = max(h.tw, int(t.w)), max(h.th, int(t.h))
			}
		}
	}
	return h, nil
}

// ispe reads an ispe property's size, each side at most 2²⁴ (any more is over every limit the
// same, and is shown as 2²⁴), so that no product of sides overflows.
func ispe(body []byte) (w, h int64) {
	return min(int64(binary.BigEndian.Uint32(body[4:])), 1<<24), min(int64(binary.BigEndian.Uint32(body[8:])), 1<<24)
}

// derivedType is whether an item of this type is made from other items (ISO/IEC 23008-12 6.6):
// a grid, an overlay or an identity transform.
func derivedType(typ string) bool { return typ == "grid" || typ == "iovl" || typ == "iden" }
