package gen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
)

// HEIC fixtures need an HEVC encoder, which Go has not: the base files are encoded once by
// libheif's heif-enc (Debian's libheif-examples 1.15.1, x265 inside) and committed, by
//
//	go test ./intake/internal/gen -run TestHEICBases -heif-enc
//
// and every other HEIC fixture is derived from them here, in Go, by rewriting container boxes
// (the coded picture is never touched), so TestGolden keeps those exact.

// HEICBase is a file heif-enc makes from a generated image.
type HEICBase struct {
	Name    string
	Image   func() image.Image
	Quality int
	Note    string
}

// HEICBases are the encoded files, in testdata/documents.
var HEICBases = []HEICBase{
	{"photo-sideways.heic", func() image.Image { return Stored(Photo(3024, 4032), 6) }, 50,
		"a 12-megapixel photo stored as the sensor saw it, 4032×3024, no irot (photo-irot.heic adds it)"},
	{"small.heic", func() image.Image { return Photo(640, 480) }, 50, "a 640×480 photo"},
	{"square4096.heic", func() image.Image { return Report(4096, 4096) }, 30,
		"a 4096×4096 page, for lying-ispe.heic"},
	{"noise.heic", func() image.Image { return Noise(640, 480) }, 50,
		"640×480 of colour noise, about 0.1 s of one core to decode: a small stand-in for the pictures whose decode only HEICWork bounds"},
}

// EncodeHEIC runs heif-enc on m.
func EncodeHEIC(m image.Image, quality int) ([]byte, error) {
	dir, err := os.MkdirTemp("", "heif")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in.png"), filepath.Join(dir, "out.heic")
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		return nil, err
	}
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("heif-enc", "-q", fmt.Sprint(quality), "-o", out, in)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("heif-enc: %v: %s", err, msg)
	}
	return os.ReadFile(out)
}

// heifBox is one box found by findBox: where its header starts, where its body starts and ends.
type heifBox struct{ at, body, end int }

// findBox follows a path of box types from the top of a HEIF file (meta is a full box: its
// children start after its version and flags).
func findBox(data []byte, path ...string) (heifBox, bool) {
	start, end := 0, len(data)
	var found heifBox
	for i, typ := range path {
		ok := false
		for at := start; at+8 <= end; {
			size := int(binary.BigEndian.Uint32(data[at:]))
			if size < 8 || at+size > end {
				return heifBox{}, false
			}
			if string(data[at+4:at+8]) == typ {
				found, ok = heifBox{at, at + 8, at + size}, true
				break
			}
			at += size
		}
		if !ok {
			return heifBox{}, false
		}
		start, end = found.body, found.end
		if typ == "meta" && i < len(path)-1 {
			start += 4
		}
	}
	return found, true
}

// WithISPE rewrites the size in a HEIF file's first ispe property, the coded picture unchanged:
// a header that lies about the picture.
func WithISPE(heic []byte, w, h int) []byte {
	out := bytes.Clone(heic)
	b, ok := findBox(out, "meta", "iprp", "ipco", "ispe")
	if !ok {
		panic("gen: no ispe")
	}
	binary.BigEndian.PutUint32(out[b.body+4:], uint32(w))
	binary.BigEndian.PutUint32(out[b.body+8:], uint32(h))
	return out
}

// WithIRot turns the pixi property of a heif-enc file (the last in its ipco, associated with the
// primary image) into an irot of the given angle (quarter turns anticlockwise), in place: the box
// keeps its 16 bytes, the angle in the first byte of its body and zeros after it, which readers
// skip, so no offset in the file moves.
func WithIRot(heic []byte, angle int) []byte {
	out := bytes.Clone(heic)
	b, ok := findBox(out, "meta", "iprp", "ipco", "pixi")
	if !ok {
		panic("gen: no pixi")
	}
	copy(out[b.at+4:], "irot")
	clear(out[b.body:b.end])
	out[b.body] = byte(angle & 3)
	return out
}

// Grid builds a grid HEIC from a heif-enc file of one picture: a grid item of rows×cols tiles
// over a w×h picture, every tile an item of its own whose coded data is the base's one picture
// (one copy in the file, as a hostile grid shares it) and whose size is the base's. Each tile
// is hidden, as phones write them. It is how a hostile grid is made in a few kilobytes: the
// tiles may be more, or larger, than the picture needs. props are boxes of further properties
// of the grid item (an imir, a clap).
func Grid(base []byte, rows, cols, w, h int, props ...[]byte) []byte {
	hvcC, ok1 := findBox(base, "meta", "iprp", "ipco", "hvcC")
	ispe, ok2 := findBox(base, "meta", "iprp", "ipco", "ispe")
	mdat, ok3 := findBox(base, "mdat")
	if !ok1 || !ok2 || !ok3 || rows < 1 || cols < 1 || rows > 256 || cols > 256 || rows*cols > 0xfffe {
		panic("gen: not a grid that can be made from this base")
	}
	n := rows * cols
	coded := base[mdat.body:mdat.end]
	u16 := func(b []byte, v int) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
	u32 := func(b []byte, v int) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
	box := func(typ string, body ...[]byte) []byte {
		size := 8
		for _, b := range body {
			size += len(b)
		}
		out := append(u32(nil, size), typ...)
		for _, b := range body {
			out = append(out, b...)
		}
		return out
	}
	meta := func(at int) []byte {
		hdlr := box("hdlr", make([]byte, 8), []byte("pict"), make([]byte, 13))
		pitm := box("pitm", []byte{0, 0, 0, 0, 0, 1})
		infe := box("infe", []byte{2, 0, 0, 0, 0, 1, 0, 0}, []byte("grid\x00"))
		list := infe
		for i := range n {
			list = append(list, box("infe", u16([]byte{2, 0, 0, 1}, 2+i), []byte{0, 0}, []byte("hvc1\x00"))...)
		}
		iinf := box("iinf", u16([]byte{0, 0, 0, 0}, n+1), list)
		refs := u16(u16(nil, 1), n)
		for i := range n {
			refs = u16(refs, 2+i)
		}
		iref := box("iref", []byte{0, 0, 0, 0}, box("dimg", refs))
		desc := u16(u16([]byte{0, 0, byte(rows - 1), byte(cols - 1)}, w), h)
		idat := box("idat", desc)
		loc := u16([]byte{1, 0, 0, 0, 0x44, 0x00}, n+1)
		loc = u32(u32(u16(append(u16(loc, 1), 0, 1, 0, 0), 1), 0), len(desc)) // the grid, in idat
		for i := range n {
			loc = u32(u32(u16(append(u16(loc, 2+i), 0, 0, 0, 0), 1), at), len(coded)) // every tile: the one picture
		}
		iloc := box("iloc", loc)
		grid := box("ispe", make([]byte, 4), u32(u32(nil, w), h))
		ipco := box("ipco", append([][]byte{base[hvcC.at:hvcC.end], base[ispe.at:ispe.end], grid}, props...)...)
		assoc := u32([]byte{0, 0, 0, 0}, n+1)
		assoc = append(u16(assoc, 1), byte(1+len(props)), 3)
		for i := range props {
			assoc = append(assoc, byte(4+i))
		}
		for i := range n {
			assoc = append(u16(assoc, 2+i), 2, 0x81, 2)
		}
		ipma := box("ipma", assoc)
		return box("meta", []byte{0, 0, 0, 0}, hdlr, pitm, iloc, iinf, iref, idat, box("iprp", ipco, ipma))
	}
	ftyp := box("ftyp", []byte("heic\x00\x00\x00\x00mif1heic"))
	head := len(ftyp) + len(meta(0)) + 8
	out := append(ftyp, meta(head)...)
	return append(out, box("mdat", coded)...)
}
