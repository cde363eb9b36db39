package intake

import (
	"encoding/binary"
	"errors"
	"image"
	"image/color"
)

// cost is what decoding one image will take, worked out from its headers before any pixel is
// decoded, for the decoder intake runs (image/jpeg, image/png, image/gif, x/image/webp). Each
// format's formula is on its function; each is exact or an upper bound for that decoder.
type cost struct {
	mem   int64  // peak bytes the decoder holds
	work  int64  // JPEG: samples decoded, summed over its scans; 0 for the other formats
	scans int    // JPEG scans
	what  string // what makes it costly, for the refusal's detail
	// over is a format's own bounds on what it decodes beyond memory (HEIC's tiles, TIFF's
	// blocks): the refusal, or nil.
	over func(Limits) error
}

// jpegCost walks a JPEG's markers as Go's decoder will meet them. Work: a scan makes the decoder
// visit every block of the components it names, whatever the size of its data (an end-of-band
// run codes 32767 empty blocks in two bytes), so a scan costs 64 samples per block of those
// components, MCU padding included. A baseline scan also transforms every block it visits, and
// counts three times; a progressive file transforms each block once after its last scan, which
// counts twice (measured against a progressive visit, BenchmarkWorstJPEG).
// Memory: the image planes, padded to whole MCUs; for a progressive file, 256 bytes (64 int32
// coefficients) per block of every component a scan names, kept until the last scan; and a
// 4-byte-per-pixel copy when the pixels are RGB or CMYK.
func jpegCost(data []byte, cm color.Model) (cost, error) {
	var (
		fr  jpegSOF
		c   cost
		bad error
	)
	jfif, adobe, transform := false, false, byte(0)
	walkJPEG(data, func(s jpegSeg) bool {
		p := s.body
		switch m := s.marker; {
		case m == 0xe0 && len(p) >= 5: // the decoder's test for JFIF, as the last APP0 leaves it
			jfif = string(p[:5]) == "JFIF\x00"
		case m == 0xee && len(p) >= 12 && string(p[:5]) == "Adobe":
			adobe, transform = true, p[11]
		case m == 0xc0 || m == 0xc1 || m == 0xc2:
			if fr.comps != nil {
				return false // a second frame: the decoder stops there
			}
			bad = fr.sof(p, m == 0xc2)
		case m == 0xda:
			bad = fr.sos(p, &c)
		}
		return bad == nil
	})
	if bad != nil {
		return cost{}, bad
	}
	comps := fr.comps
	if comps == nil {
		return cost{}, errors.New("no frame")
	}
	w, h := fr.w, fr.h
	mcus := int64(fr.mxx) * int64(fr.myy)
	h0, v0 := comps[0].h, comps[0].v
	luma := mcus * int64(64*h0*v0)
	c.mem = luma
	if len(comps) >= 3 { // chroma planes, as the decoder sizes them from the first two
		c.mem += 2 * luma / int64(max(1, h0/comps[1].h)*max(1, v0/comps[1].v))
	}
	if len(comps) == 4 { // the black plane, and the CMYK image built from all four
		c.mem += mcus*int64(64*comps[3].h*comps[3].v) + 4*int64(w)*int64(h)
	} else if len(comps) == 3 && !jfif && (adobe && transform == 0 || comps[0].id == 'R' && comps[1].id == 'G' && comps[2].id == 'B' || cm == color.RGBAModel) {
		c.mem += 4 * int64(w) * int64(h) // RGB converted to RGBA
	}
	c.what = "JPEG"
	if fr.progressive {
		c.what = "progressive JPEG"
		for _, k := range comps {
			if k.used {
				blocks := mcus * int64(k.h*k.v)
				c.mem += 256 * blocks
				c.work += 2 * 64 * blocks
			}
		}
	}
	return c, nil
}

// jpegSOF is a JPEG's frame as jpegCost reads it: its components (and whether a scan names
// each), its size, and its MCUs across and down.
type jpegSOF struct {
	comps       []jpegSOFComp
	w, h        int
	mxx, myy    int
	progressive bool
}

type jpegSOFComp struct {
	id   byte
	h, v int
	used bool
}

// sof reads a frame header (SOF0, SOF1, SOF2).
func (fr *jpegSOF) sof(p []byte, progressive bool) error {
	if len(p) < 6 || len(p) != 6+3*int(p[5]) || p[5] == 0 {
		return errors.New("malformed SOF")
	}
	fr.progressive = progressive
	fr.h, fr.w = int(p[1])<<8|int(p[2]), int(p[3])<<8|int(p[4])
	for i := range int(p[5]) {
		f := p[7+3*i]
		c := jpegSOFComp{id: p[6+3*i], h: max(1, int(f>>4)), v: max(1, int(f&15))}
		if p[5] == 1 { // the decoder treats a lone component as 1×1, whatever it says
			c.h, c.v = 1, 1
		}
		fr.comps = append(fr.comps, c)
	}
	h0, v0 := fr.comps[0].h, fr.comps[0].v
	fr.mxx, fr.myy = (fr.w+8*h0-1)/(8*h0), (fr.h+8*v0-1)/(8*v0)
	return nil
}

// sos reads a scan header and adds the scan's work to c.
func (fr *jpegSOF) sos(p []byte, c *cost) error {
	if fr.comps == nil {
		return errors.New("a scan before the frame")
	}
	n := 0
	if len(p) > 0 {
		n = int(p[0])
	}
	if n == 0 || len(p) < 1+2*n {
		return errors.New("malformed SOS")
	}
	hv := 0
	for i := range n {
		j := 0
		for j < len(fr.comps) && fr.comps[j].id != p[1+2*i] {
			j++
		}
		if j == len(fr.comps) {
			return errors.New("a scan names no component of the frame")
		}
		fr.comps[j].used = true
		hv += fr.comps[j].h * fr.comps[j].v
	}
	c.scans++
	blocks := int64(fr.mxx) * int64(fr.myy) * int64(hv)
	c.work += 64 * blocks
	if !fr.progressive {
		c.work += 2 * 64 * blocks
	}
	return nil
}

// pngCost: image/png holds the image at the bytes per pixel of the type it decodes to (grey 1,
// 16-bit grey 2, palette 1, RGB and RGBA 4, 16-bit 8, and grey with a tRNS chunk 4 or 8), and an
// interlaced file as much again for its seven passes; plus two rows. It inflates only what the
// header's rows need and refuses more ("too much pixel data"), so a zlib bomb costs the pixels
// and no more.
func pngCost(data []byte, _ image.Config) (cost, error) {
	if len(data) < 33 || string(data[12:16]) != "IHDR" {
		return cost{}, errors.New("no IHDR")
	}
	w, h := int64(binary.BigEndian.Uint32(data[16:])), int64(binary.BigEndian.Uint32(data[20:]))
	depth, typ, interlaced := int64(data[24]), data[25], data[28] == 1
	trns := false
	for i := 8; i+8 <= len(data); { // tRNS counts only before the first IDAT
		n, t := int64(binary.BigEndian.Uint32(data[i:])), string(data[i+4:i+8])
		if t == "IDAT" || t == "IEND" || n > int64(len(data)) {
			break
		}
		trns = trns || t == "tRNS"
		i += 12 + int(n)
	}
	var px int64
	switch typ {
	case 0: // grey
		px = max(1, depth/8)
		if trns {
			px *= 4
		}
	case 3: // palette
		px = 1
	default: // RGB, grey with alpha, RGBA
		px = 4 * max(1, depth/8)
	}
	c := cost{mem: w*h*px + 2*(1+8*w), what: "PNG"}
	if interlaced {
		c.mem += w * h * px
		c.what = "interlaced PNG"
	}
	return c, nil
}

// gifCost: image/gif's Decode reads only up to the end of the first frame (the rest of the file
// is never read), holds that frame at a byte per pixel of the logical screen at most, and once
// more when it is interlaced. The LZW data of the frame is read to its end and no further.
func gifCost(_ []byte, cfg image.Config) (cost, error) {
	return cost{mem: 2 * int64(cfg.Width) * int64(cfg.Height), what: "GIF"}, nil
}

// vp8lGroups is the most x/image/vp8l holds in Huffman tables: it refuses more than 2600 groups of
// five trees, and a group's trees hold at most 2·2328−1, 3·(2·256−1) and 2·40−1 eight-byte nodes
// and five 512-byte tables.
const vp8lGroup = 5*(24+512) + 8*(2*2328-1+3*(2*256-1)+2*40-1)

// webpCost walks the RIFF chunks as x/image/webp does, up to the first VP8 or VP8L chunk (an
// animation's ANMF frames are skipped, never decoded: an animated WebP has no still image and is
// refused as unreadable). Lossy (VP8): YCbCr 4:2:0 padded to 16×16 macroblocks, 384 bytes each,
// 8 bytes of filter state each, and a copy of its partitions. Lossless (VP8L), and a VP8L-compressed ALPH chunk: the
// NRGBA pixels twice over (the colour-indexing transform writes a new copy), a quarter more for
// the transforms' own images, and the Huffman tables, min(2600, ⌈w/4⌉·⌈h/4⌉) groups. An ALPH
// chunk keeps a byte of alpha per pixel.
func webpCost(data []byte, cfg image.Config) (cost, error) {
	w, h := int64(cfg.Width), int64(cfg.Height)
	lossless := func(w, h int64) int64 {
		return 9*w*h + min(2600, ((w+3)/4)*((h+3)/4))*vp8lGroup
	}
	var c cost
	for i := 12; i+8 <= len(data); {
		id, n := string(data[i:i+4]), int64(binary.LittleEndian.Uint32(data[i+4:]))
		switch id {
		case "ALPH":
			c.mem += w * h
			if i+8 < len(data) && data[i+8]&3 == 1 {
				c.mem += lossless(w, h)
			}
		case "VP8 ": // its partitions are copied too
			c.mem += ((w+15)/16)*((h+15)/16)*(384+8) + min(n, int64(len(data)))
			c.what = "WebP"
			return c, nil
		case "VP8L":
			c.mem += lossless(w, h)
			c.what = "lossless WebP"
			return c, nil
		}
		if n > int64(len(data)) {
			break
		}
		i += 8 + int(n) + int(n&1)
	}
	c.what = "WebP"
	return c, nil
}
