package intake

import (
	"encoding/binary"
	"errors"
	"image"
	"image/color"
)

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

// heifHeader is what intake reads from a HEIF container before decoding: the primary image's
// size (its ispe property: for a grid, the whole picture), the largest image any item declares
// (a grid's tiles, a thumbnail), and how the container turns it.
type heifHeader struct {
	w, h    int
	largest int64 // pixels of the largest ispe of any item
	items   int   // ispe properties seen
	rotate  int   // irot: quarter turns anticlockwise
	mirror  bool  // imir
	clap    bool  // a clean aperture (a crop) on the primary image
}

// readHEIF walks ftyp → meta → pitm, iprp → ipco, ipma to the primary item's properties. It reads
// only within data; anything it cannot find is an error, so a file that does not say how large
// its picture is is never decoded.
func readHEIF(data []byte) (heifHeader, error) {
	meta, ok := child(boxes(data), "meta")
	if !ok || len(meta.body) < 4 {
		return heifHeader{}, errors.New("no meta box")
	}
	inner := boxes(meta.body[4:]) // meta is a full box: version and flags first
	pitm, ok := child(inner, "pitm")
	if !ok || len(pitm.body) < 6 {
		return heifHeader{}, errors.New("no primary item")
	}
	primary := uint32(binary.BigEndian.Uint16(pitm.body[4:]))
	if pitm.body[0] != 0 {
		if len(pitm.body) < 8 {
			return heifHeader{}, errors.New("short pitm")
		}
		primary = binary.BigEndian.Uint32(pitm.body[4:])
	}
	iprp, ok := child(inner, "iprp")
	if !ok {
		return heifHeader{}, errors.New("no item properties")
	}
	props := boxes(iprp.body)
	ipco, ok := child(props, "ipco")
	if !ok {
		return heifHeader{}, errors.New("no property container")
	}
	list := boxes(ipco.body)
	var h heifHeader
	for _, p := range list {
		if p.typ == "ispe" && len(p.body) >= 12 {
			w, ht := int64(binary.BigEndian.Uint32(p.body[4:])), int64(binary.BigEndian.Uint32(p.body[8:]))
			h.largest = max(h.largest, w*ht)
			h.items++
		}
	}
	found := false
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
			for range count {
				var index int
				if flags&1 != 0 {
					if len(b) < 2 {
						break
					}
					index, b = int(binary.BigEndian.Uint16(b)&0x7fff), b[2:]
				} else {
					if len(b) < 1 {
						break
					}
					index, b = int(b[0]&0x7f), b[1:]
				}
				if id != primary || index < 1 || index > len(list) {
					continue
				}
				switch p := list[index-1]; {
				case p.typ == "ispe" && len(p.body) >= 12:
					h.w, h.h = int(binary.BigEndian.Uint32(p.body[4:])), int(binary.BigEndian.Uint32(p.body[8:]))
					found = true
				case p.typ == "irot" && len(p.body) >= 1:
					h.rotate = int(p.body[0] & 3)
				case p.typ == "imir":
					h.mirror = true
				case p.typ == "clap":
					h.clap = true
				}
			}
		}
	}
	if !found || h.w <= 0 || h.h <= 0 {
		return heifHeader{}, errors.New("the primary image declares no size (ispe)")
	}
	return h, nil
}

// heicConfig is the format table's config for HEIC: the size from the container, upright (a
// quarter turn by irot swaps it, as the decoder applies it), and YCbCr, as phones write it.
func heicConfig(data []byte) (image.Config, heifHeader, error) {
	h, err := readHEIF(data)
	if err != nil {
		return image.Config{}, h, err
	}
	w, ht := h.w, h.h
	if h.rotate%2 == 1 {
		w, ht = ht, w
	}
	return image.Config{Width: w, Height: ht, ColorModel: color.YCbCrModel}, h, nil
}
