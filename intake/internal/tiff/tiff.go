// Package tiff decodes the TIFFs that fax servers and office scanners write, page by page:
// through golang.org/x/image/tiff, and here where it stops short (CCITT G3 2-D, rewritten as G4
// by intake/internal/fax; CMYK; pages in JPEG strips or tiles, compression 7). Its surface is
// image/jpeg's, for one page of a file: Pages reads the chain of directories, and a Page's
// DecodeConfig, Cost and Decode read its header, say what decoding it holds and does, and decode
// it. It knows nothing of who calls it or of limits beyond the one Decode is given: its errors
// are plain, an *UnsupportedError for a valid page that uses a feature its headers name, an
// UnsupportedError for one the decoder meets, ErrTooManyPages, and any other error for damage.
package tiff

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"math"

	"golang.org/x/image/ccitt"
	xtiff "golang.org/x/image/tiff"

	"github.com/ocrdraft/ocrdraft/intake/internal/fax"
	"github.com/ocrdraft/ocrdraft/intake/internal/guard"
)

// MaxPages is the most directories a TIFF's chain is followed for. A fax or a scanner's batch
// has tens of pages; a caller's own page limit refuses far fewer than this long before, and the
// walk never costs more than this many small reads.
const MaxPages = 1000

// ErrTooManyPages is Pages' one refusal that is not damage: more than MaxPages directories.
var ErrTooManyPages = fmt.Errorf("the TIFF has more than %d pages", MaxPages)

// ErrLimit is Decode's refusal of a page whose Cost is over its limit.
var ErrLimit = errors.New("tiff: the page takes more memory than its limit")

// FeatureError is a valid page that uses a feature, named by its directory, that is not read
// here: Feature names it, Instead completes "save it again …".
type FeatureError struct{ Feature, Instead string }

func (e *FeatureError) Error() string { return "tiff: " + e.Feature + " is not read" }

// UnsupportedError is a feature the decoder met that is not read (x/image/tiff's own, or a
// JPEG block that is not baseline): valid, but not decoded here.
type UnsupportedError string

func (e UnsupportedError) Error() string { return "tiff: unsupported feature: " + string(e) }

// Page is one full-resolution page of a TIFF, as its directory describes it.
type Page struct{ d ifd }

// Pages follows a TIFF's chain of directories and returns its pages in order: a directory
// marked as a reduced-resolution copy (a thumbnail) is not a page. A loop in the chain, or an
// offset outside the file, is damage; more than MaxPages directories is ErrTooManyPages.
func Pages(data []byte) ([]Page, error) {
	ds, err := chain(data)
	if err != nil {
		return nil, err
	}
	out := make([]Page, len(ds))
	for i, d := range ds {
		out[i] = Page{d}
	}
	return out, nil
}

// Size is the page's size as its directory says it.
func (p Page) Size() (w, h int) { return p.d.w, p.d.h }

// Orientation is its Orientation tag, 1 (upright) when it has none.
func (p Page) Orientation() int { return p.d.orient }

// Stretch is how many rows each of its rows stands for, when its pixels are taller than wide
// (a fax in normal mode is 204×98 dpi: 2); 0 or 1 when they are square enough.
func (p Page) Stretch() int { return p.d.stretch }

// Blocks is the page's blocks (strips or tiles) and the size of each, as the decoders cut it.
func (p Page) Blocks() (n, w, h int64) { return blocks(p.d) }

// Work is the work of decoding the page (see perBlock), in a JPEG's samples; 0 for a page whose
// tiles are damage (DecodeConfig refuses it).
func (p Page) Work() int64 {
	if tilesDamaged(p.d) {
		return 0
	}
	return work(p.d)
}

// tilesDamaged is a tile larger than its page by more than a tile's padding: damage, whose
// size, from the file, would overflow the cost of decoding it.
func tilesDamaged(d ifd) bool {
	return d.tileW > d.w+256 || d.tileH > d.h+256 || d.tileW < 0 || d.tileH < 0
}

// DecodeConfig returns the page's size and colour model from its directory, refusing first a
// feature that is not read here (*FeatureError) and damaged tiles.
func (p Page) DecodeConfig(data []byte) (cfg image.Config, err error) {
	defer guard.Recover("tiff", &err)
	d := p.d
	for _, f := range features {
		if name := f.feature(d); name != "" {
			return image.Config{}, &FeatureError{Feature: name, Instead: f.instead}
		}
	}
	if tilesDamaged(d) {
		return image.Config{}, fmt.Errorf("tiff: %d×%d tiles on a %d×%d page", d.tileW, d.tileH, d.w, d.h)
	}
	if d.compression == 7 { // x/image/tiff reads no YCbCr header
		cfg = image.Config{Width: d.w, Height: d.h, ColorModel: color.RGBAModel}
		if d.photometric < 2 {
			cfg.ColorModel = color.GrayModel
		}
		return cfg, nil
	}
	cfg, err = xtiff.DecodeConfig(reader(data, d))
	return cfg, plain(err)
}

// Cost is what decoding a page holds at its peak (Mem, in bytes) and does (Work), and What names
// the kind of page for a person.
type Cost struct {
	Mem, Work int64
	What      string
}

// Cost is what Decode of the page will take, cfg being its DecodeConfig and size the file's.
func (p Page) Cost(cfg image.Config, size int) Cost {
	c := memory(p.d, cfg, size)
	c.Work = p.Work()
	return c
}

// Decode decodes the page, refusing one whose Cost is over limit bytes (ErrLimit). It stops at
// its next read of the file, or its next block, once ctx ends.
func (p Page) Decode(ctx context.Context, data []byte, limit int64) (image.Image, error) {
	cfg, err := p.DecodeConfig(data)
	if err != nil {
		return nil, err
	}
	if p.Cost(cfg, len(data)).Mem > limit {
		return nil, ErrLimit
	}
	return p.decode(ctx, data, guard.Reader(ctx, reader(data, p.d)))
}

// decode decodes the page with x/image/tiff reading r (the page's view), or from data itself.
func (p Page) decode(ctx context.Context, data []byte, r io.Reader) (m image.Image, err error) {
	defer guard.Recover("tiff", &err)
	m, err = decoder(ctx, data, p.d)(r)
	return m, plain(err)
}

// plain turns x/image/tiff's UnsupportedError into this package's.
func plain(err error) error {
	var u xtiff.UnsupportedError
	if errors.As(err, &u) {
		return UnsupportedError(string(u))
	}
	return err
}

// ifd is what one image file directory says, beside what x/image/tiff reads.
type ifd struct {
	at          int64 // offset of the directory
	w, h        int
	compression int
	photometric int // PhotometricInterpretation: 0 and 1 grey, 2 RGB, 6 YCbCr …
	rows        int // RowsPerStrip; 0 when absent (one strip)
	tileW       int
	tileH       int
	orient      int // Orientation, 1 when absent
	reduced     bool

	// What features.go checks before decoding.
	bits    int // BitsPerSample, when every sample has the same; -1 when they differ
	samples int // SamplesPerPixel, 1 when absent
	extra   int // ExtraSamples: the first value, 0 also when absent
	planar  int // PlanarConfiguration, 1 when absent
	format  int // SampleFormat: the first value that is not 1 (unsigned), else 1
	t4      int // T4Options: bit 0 2-D coding, bit 1 uncompressed mode, bit 2 EOLs byte-aligned
	inkSet  int // InkSet, 1 (CMYK) when absent
	tables  int // JPEGTables: its bytes, which decodeJPEG puts before every block
	// stretch is how many rows each row stands for, when the page's pixels are taller than
	// wide (a fax in normal mode is 204×98 dpi): YResolution below XResolution by a fifth or
	// more. 0 or 1: square enough.
	stretch int
}

// order reads a TIFF header's byte order and the offset of the first directory.
func order(data []byte) (binary.ByteOrder, int64, error) {
	if len(data) < 8 {
		return nil, 0, errors.New("short header")
	}
	var bo binary.ByteOrder
	switch string(data[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return nil, 0, errors.New("not a TIFF header")
	}
	return bo, int64(bo.Uint32(data[4:])), nil
}

// tiffPages follows a TIFF's chain of directories and returns the full-resolution images in
// order: a directory marked as a reduced-resolution copy (NewSubfileType bit 0, a thumbnail) is
// not a page. A loop in the chain, or an offset outside the file, is an error: a file that says
// it goes on but does not is damaged. More than MaxPages directories is too_many_pages.
func chain(data []byte) ([]ifd, error) {
	bo, off, err := order(data)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	var pages []ifd
	for off != 0 {
		if seen[off] {
			return nil, errors.New("the chain of directories loops")
		}
		if len(seen) == MaxPages {
			return nil, ErrTooManyPages
		}
		seen[off] = true
		d, next, err := readIFD(data, bo, off)
		if err != nil {
			return nil, err
		}
		if !d.reduced {
			pages = append(pages, d)
		}
		off = next
	}
	if len(pages) == 0 {
		return nil, errors.New("no image directory")
	}
	return pages, nil
}

// readIFD reads the tags intake needs from the directory at off, and the next one's offset.
func readIFD(data []byte, bo binary.ByteOrder, off int64) (ifd, int64, error) {
	if off < 8 || off+2 > int64(len(data)) {
		return ifd{}, 0, fmt.Errorf("directory offset %d outside the file", off)
	}
	n := int64(bo.Uint16(data[off:]))
	end := off + 2 + 12*n
	if end+4 > int64(len(data)) {
		return ifd{}, 0, fmt.Errorf("directory at %d runs past the end of the file", off)
	}
	d := ifd{at: off, orient: 1, bits: 1, samples: 1, planar: 1, format: 1, inkSet: 1}
	var xres, yres float64
	for e := off + 2; e < end; e += 12 {
		tag, typ, count := bo.Uint16(data[e:]), bo.Uint16(data[e+2:]), bo.Uint32(data[e+4:])
		if (tag == 282 || tag == 283) && typ == 5 && count == 1 { // X/YResolution, a RATIONAL
			at := int64(bo.Uint32(data[e+8:]))
			if at >= 0 && at+8 <= int64(len(data)) {
				if den := bo.Uint32(data[at+4:]); den != 0 {
					v := float64(bo.Uint32(data[at:])) / float64(den)
					if tag == 282 {
						xres = v
					} else {
						yres = v
					}
				}
			}
			continue
		}
		if (tag == 258 || tag == 338 || tag == 339) && typ == 3 { // a SHORT for each sample
			v := shorts(data, bo, e, count)
			switch {
			case len(v) == 0:
			case tag == 258:
				d.bits = v[0]
				for _, b := range v {
					if b != d.bits {
						d.bits = -1
					}
				}
			case tag == 338:
				d.extra = v[0]
			default:
				for _, f := range v {
					if f != 1 {
						d.format = f
						break
					}
				}
			}
			continue
		}
		if tag == 347 {
			d.tables = int(min(count, math.MaxInt32))
			continue
		}
		if count != 1 || typ != 3 && typ != 4 {
			continue // every other tag read here is one SHORT or LONG
		}
		v := int(bo.Uint32(data[e+8:]))
		if typ == 3 {
			v = int(bo.Uint16(data[e+8:]))
		}
		switch tag {
		case 254:
			d.reduced = v&1 != 0
		case 256:
			d.w = v
		case 257:
			d.h = v
		case 259:
			d.compression = v
		case 262:
			d.photometric = v
		case 274:
			if v >= 1 && v <= 8 {
				d.orient = v
			}
		case 278:
			d.rows = v
		case 322:
			d.tileW = v
		case 323:
			d.tileH = v
		case 277:
			d.samples = v
		case 284:
			d.planar = v
		case 292:
			d.t4 = v
		case 332:
			d.inkSet = v
		}
	}
	if xres > 0 && yres > 0 && xres >= 1.2*yres {
		d.stretch = min(4, int(math.Round(xres/yres)))
	}
	return d, int64(bo.Uint32(data[end:])), nil
}

// shorts returns the first values (16 at most, as many as a pixel has samples) of the SHORT
// entry at e, or nil when they lie outside the file: the decoder refuses that.
func shorts(data []byte, bo binary.ByteOrder, e int64, count uint32) []int {
	n := int64(min(count, 16))
	at := e + 8
	if count > 2 {
		at = int64(bo.Uint32(data[e+8:]))
	}
	if at < 0 || at+2*n > int64(len(data)) {
		return nil
	}
	v := make([]int, n)
	for i := range v {
		v[i] = int(bo.Uint16(data[at+2*int64(i):]))
	}
	return v
}

// view is a TIFF seen as if the directory at ifd were its first: the header's offset is
// replaced, nothing is copied. x/image/tiff reads only the first directory, and reads through
// ReadAt when it can, so the view is how it decodes page n without holding a second copy. A view
// may also hold a directory of its own past the end of the file (tail), which the header then
// points at.
type view struct {
	data []byte
	head [8]byte
	tail []byte
}

func newView(data []byte, at int64) *io.SectionReader {
	return (&view{data: data}).at(at)
}

// at points the view's header at the directory at off, and returns the view as a reader.
func (v *view) at(off int64) *io.SectionReader {
	copy(v.head[:], v.data[:8])
	bo, _, _ := order(v.data)
	bo.PutUint32(v.head[4:], uint32(off))
	return io.NewSectionReader(v, 0, int64(len(v.data)+len(v.tail)))
}

// reader returns page d as x/image/tiff is to read it: a view of the file whose header points
// at d. x/image/tiff reads no CMYK, so for a CMYK page the view holds a copy of d's directory
// that says RGB with an alpha sample, its other entries (and the offsets they hold) as they
// are: x/image/tiff then reads the four bytes of each pixel, predictor and compression undone,
// into an NRGBA image, and decoder takes them for the C, M, Y and K they are.
func reader(data []byte, d ifd) *io.SectionReader {
	v := &view{data: data}
	if d.photometric != 5 {
		return v.at(d.at)
	}
	bo, _, _ := order(data)
	n := int(bo.Uint16(data[d.at:]))
	entries := data[d.at+2 : d.at+2+12*int64(n)]
	pad := len(data) % 2 // a directory starts on a word
	dir := make([]byte, pad+2, pad+2+12*(n+1)+4)
	bo.PutUint16(dir[pad:], uint16(n+1))
	extra := short(bo, 338, 2) // ExtraSamples: unassociated alpha
	for i := range n {
		e := entries[12*i : 12*i+12]
		tag := bo.Uint16(e)
		if extra != nil && tag > 338 {
			dir, extra = append(dir, extra...), nil
		}
		if tag == 262 { // PhotometricInterpretation: RGB
			e = short(bo, 262, 2)
		}
		dir = append(dir, e...)
	}
	dir = append(dir, extra...)
	v.tail = append(dir, 0, 0, 0, 0)
	return v.at(int64(len(data) + pad))
}

// short returns a directory entry of one SHORT.
func short(bo binary.ByteOrder, tag, v uint16) []byte {
	e := make([]byte, 12)
	bo.PutUint16(e, tag)
	bo.PutUint16(e[2:], 3)
	bo.PutUint32(e[4:], 1)
	bo.PutUint16(e[8:], v)
	return e
}

func (v *view) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("tiff: negative offset")
	}
	size := int64(len(v.data) + len(v.tail))
	if off >= size {
		return 0, io.EOF
	}
	n := 0
	if off < int64(len(v.data)) {
		n = copy(p, v.data[off:])
	}
	if n < len(p) && len(v.tail) > 0 {
		n += copy(p[n:], v.tail[off+int64(n)-int64(len(v.data)):])
	}
	if off < 8 {
		copy(p, v.head[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// decoder returns the decoder of page d, which reads the page through reader's view:
// decodeJPEG for JPEG blocks, decodeG3 for G3 2-D, else x/image/tiff, with two of its
// readings put right.
//
// A CMYK page comes out of the view as NRGBA, and is the CMYK image those bytes are.
//
// A CCITT code has white runs and black runs. libtiff, which writes and reads most faxes, codes a
// run of 0 bits as white and of 1 bits as black whatever PhotometricInterpretation says, and lets
// that tag say what a 0 bit is: a BlackIsZero fax from libtiff codes its white pixels as black
// runs, and every reader built on it (ImageMagick, viewers, fax software) shows it upright.
// x/image/tiff instead takes a white run for white under either, and so decodes a BlackIsZero
// fax as its negative; it is inverted back here. A WhiteIsZero fax, the usual kind, reads the
// same under both.
func decoder(ctx context.Context, data []byte, d ifd) func(io.Reader) (image.Image, error) {
	if d.compression == 7 { // x/image/tiff does not read JPEG blocks
		return func(io.Reader) (image.Image, error) { return decodeJPEG(ctx, data, d) }
	}
	if d.compression == 3 && d.t4&1 != 0 { // nor G3 2-D
		return func(io.Reader) (image.Image, error) { return decodeG3(ctx, data, d) }
	}
	return func(r io.Reader) (image.Image, error) {
		m, err := xtiff.Decode(r)
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *image.Gray:
			if (d.compression == 3 || d.compression == 4) && d.photometric == 1 {
				for i, v := range m.Pix {
					m.Pix[i] = ^v
				}
			}
		case *image.NRGBA:
			if d.photometric == 5 {
				return &image.CMYK{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}, nil
			}
		}
		return m, nil
	}
}

// decodeG3 decodes a page of CCITT G3 2-D, strip by strip: each is rewritten as G4
// (fax.G4), which x/image/ccitt decodes straight into the strip's rows of the grey page, a white
// run white on a WhiteIsZero page and black on a BlackIsZero one (libtiff's reading, as in
// decoder). One buffer holds the rewritten strip, twice the largest strip at most.
func decodeG3(ctx context.Context, data []byte, d ifd) (image.Image, error) {
	bo, _, err := order(data)
	if err != nil {
		return nil, err
	}
	offs, _, err := tagValues(data, bo, d.at, 273)
	if err != nil {
		return nil, err
	}
	counts, _, err := tagValues(data, bo, d.at, 279)
	if err != nil {
		return nil, err
	}
	bh := d.h
	if d.rows > 0 && d.rows < d.h {
		bh = d.rows
	}
	n := (d.h + bh - 1) / bh
	if len(offs) < n || len(counts) < n {
		return nil, fmt.Errorf("tiff: %d strips for a page of %d", min(len(offs), len(counts)), n)
	}
	largest := uint32(0)
	for _, c := range counts[:n] {
		largest = max(largest, c)
	}
	if int64(largest) > int64(len(data)) {
		return nil, errors.New("tiff: a strip larger than the file")
	}
	fill, _, _ := tagValues(data, bo, d.at, 266)
	lsb := len(fill) == 1 && fill[0] == 2
	page := image.NewGray(image.Rect(0, 0, d.w, d.h))
	buf := make([]byte, 0, 2*int(largest)+16)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		at, size := int64(offs[i]), int64(counts[i])
		if at+size > int64(len(data)) {
			return nil, fmt.Errorf("tiff: strip %d runs past the end of the file", i)
		}
		y := i * bh
		rows := min(bh, d.h-y)
		if buf, err = fax.G4(buf[:0], data[at:at+size], lsb, d.w, rows); err != nil {
			return nil, fmt.Errorf("tiff: strip %d: %w", i, err)
		}
		strip := page.SubImage(image.Rect(0, y, d.w, y+rows)).(*image.Gray)
		if err := ccitt.DecodeIntoGray(strip, bytes.NewReader(buf), ccitt.MSB, ccitt.Group4, &ccitt.Options{Invert: d.photometric == 1}); err != nil {
			return nil, fmt.Errorf("tiff: strip %d: %w", i, err)
		}
	}
	return page, nil
}

// bytesPerPixel is what the image types the x/image decoders return hold per pixel, from the
// colour model their DecodeConfig names.
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel:
		return 1
	case color.Gray16Model:
		return 2
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 4
}

// Cost: x/image/tiff holds the image at the bytes per pixel of its type (a bilevel fax is
// grey, a byte per pixel; a fax in normal mode once more for each row it is stretched to), and,
// for a compressed page, one strip or tile inflated at a time into a buffer it lets grow to 8
// bytes per pixel of the block whatever the data says (a deflate bomb fills it), which
// bytes.Buffer may double. For CCITT G3/G4 the decoder writes a bit per pixel and stops at the
// block's last row, keeping two rows of transitions (its growing buffer may hold the rows three
// times over). An uncompressed block is read as stored, at most the file. A JPEG-compressed
// page is decoded by decodeJPEG.
func memory(d ifd, cfg image.Config, size int) Cost {
	w, h := int64(cfg.Width), int64(cfg.Height)
	bw, bh := w, h
	if d.tileW > 0 && d.tileH > 0 {
		bw, bh = int64(d.tileW), int64(d.tileH)
	} else if d.rows > 0 && int64(d.rows) < h {
		bh = int64(d.rows)
	}
	if d.compression == 7 { // decodeJPEG: the page at 4 bytes a pixel at most, and every block
		// decoded afresh (3 bytes a pixel at most, 4:4:4) until the collector takes them back
		return Cost{Mem: 7*w*h + 8*bw*bh + 2*int64(size), What: "JPEG-compressed TIFF"}
	}
	c := Cost{Mem: w * h * bytesPerPixel(cfg.ColorModel) * int64(max(1, d.stretch)), What: "TIFF"}
	switch d.compression {
	case 0, 1: // none
		c.Mem += min(int64(size), bw*bh*8)
	case 3, 4: // CCITT G3, G4, and the decoder's state of two rows of transitions
		c.Mem += 4*((bw+7)/8)*bh + 64*bw
		if d.compression == 3 && d.t4&1 != 0 { // decodeG3: a strip rewritten, twice its size at
			// most, and for each strip a decoder of 1 KiB or so and the runs of a row
			c.Mem = w*h + 2*int64(size) + 16<<10 + (4<<10+8*(w+2))*((h+bh-1)/bh)
		}
	default:
		c.Mem += 2 * bw * bh * 8
		c.What = "compressed TIFF"
	}
	return c
}

// The work of decoding a TIFF page, in the units of Limits.MaxDecodeWork (a JPEG's samples,
// about 3 ns of one core each): every block (strip or tile) costs a decoder of its own whatever
// its data, 10–16 µs with x/image/tiff's inflate (390,625 8×8 deflate tiles sharing one
// 20-byte stream took 4.3 s, 97,656 16×16 ones 1.9 s, on a loaded machine; a page of 20,000
// strips 0.6 s), counted as perBlock (about 18 µs); each block of JPEG copies JPEGTables before its data and reads both twice;
// and every byte the page decodes to counts twice. What the blocks' data says does not count:
// blocks may share one stream, and a deflate stream may say anything.
const perBlock = 6144

// blocks is the page's blocks and the size of each, as the decoders cut it.
func blocks(d ifd) (n, bw, bh int64) {
	w, h := int64(max(d.w, 0)), int64(max(d.h, 0))
	bw, bh = w, h
	if d.tileW > 0 && d.tileH > 0 {
		bw, bh = int64(d.tileW), int64(d.tileH)
	} else if d.rows > 0 && int64(d.rows) < h {
		bh = int64(d.rows)
	}
	if bw == 0 || bh == 0 {
		return 0, bw, bh
	}
	return ((w + bw - 1) / bw) * ((h + bh - 1) / bh), bw, bh
}

// work: per block, perBlock (and JPEGTables four times over for JPEG blocks), and two
// units a byte of the blocks decoded, at the most bytes a pixel its samples can take (8).
func work(d ifd) int64 {
	n, bw, bh := blocks(d)
	bpp := int64(8)
	if d.bits > 0 && d.samples > 0 {
		bpp = min(8, max(1, int64(d.samples)*int64(max(d.bits, 8))/8))
	}
	per := int64(perBlock)
	if d.compression == 7 {
		per += 4*int64(d.tables) + 9*bw*bh // and each block decoded as a baseline JPEG, its samples
	}
	return n*per + 2*n*bw*bh*bpp
}

// TIFF compressions: what x/image/tiff decodes, and JPEG (7, TIFF Technical Note 2), which
// office scanners write for grey and colour batches and which intake decodes here. Anything
// else (old-style JPEG 6, JPEG 2000, JBIG …) is refused before decoding, by the name
// features.go gives it.
var compressions = map[int]string{
	0: "none", 1: "none", 3: "CCITT G3", 4: "CCITT G4", 5: "LZW", 7: "JPEG",
	8: "deflate", 32773: "PackBits", 32946: "deflate",
}

// tagValues returns the values of a tag of the directory at off: SHORTs or LONGs as numbers,
// an UNDEFINED or BYTE tag as its bytes (in the second result). Offsets and counts come from
// the file, so each is checked against it.
func tagValues(data []byte, bo binary.ByteOrder, off int64, tag uint16) ([]uint32, []byte, error) {
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

// decodeJPEG decodes a page whose strips or tiles are each a JPEG stream, the tables they
// share (JPEGTables) put in front of each. Only baseline streams are decoded: their work is their
// pixels, and a block may not be larger than its place on the page. The page is grey when every
// block is, else RGBA; one block is held decoded at a time beside it, and ctx is looked at
// between blocks.
func decodeJPEG(ctx context.Context, data []byte, d ifd) (image.Image, error) {
	bo, _, err := order(data)
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
	if planar, _, _ := tagValues(data, bo, d.at, 284); len(planar) == 1 && planar[0] == 2 {
		return nil, errors.New("tiff: JPEG in separate planes")
	}
	offs, _, err := tagValues(data, bo, d.at, offTag)
	if err != nil {
		return nil, err
	}
	counts, _, err := tagValues(data, bo, d.at, cntTag)
	if err != nil {
		return nil, err
	}
	across, down := (d.w+bw-1)/bw, (d.h+bh-1)/bh
	if len(offs) != across*down || len(counts) != len(offs) {
		return nil, fmt.Errorf("tiff: %d blocks for a page of %d×%d", len(offs), across, down)
	}
	_, tables, err := tagValues(data, bo, d.at, 347)
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
			return nil, UnsupportedError(fmt.Sprintf("JPEG block %d: %v", i, err))
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
			return nil, UnsupportedError(fmt.Sprintf("JPEG block %d: %v", i, err))
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

// feature is one row of the TIFF table: feature names what page d uses that is not read,
// "" when it uses nothing of the kind; instead completes "save it again …".
type feature struct {
	feature func(d ifd) string
	instead string
}

// features are checked in order; the first that names a feature refuses the page.
var features = []feature{
	{func(d ifd) string {
		if _, ok := compressions[d.compression]; ok {
			return ""
		}
		if name, ok := unread[d.compression]; ok {
			return fmt.Sprintf("%s compression (compression %d)", name, d.compression)
		}
		return fmt.Sprintf("a compression that is not read here (compression %d)", d.compression)
	}, "with LZW, deflate, CCITT G4 or JPEG compression"},
	{func(d ifd) string { // x/image/ccitt reads G3 1-D, decodeG3 G3 2-D in strips
		switch {
		case d.compression != 3:
		case d.t4&2 != 0:
			return "CCITT G3 uncompressed mode (T4Options bit 1)"
		case d.t4&4 != 0:
			return "CCITT G3 with fill bits before each EOL (T4Options bit 2)"
		case d.t4&1 != 0 && d.tileW > 0:
			return "CCITT G3 2-D coding in tiles"
		}
		return ""
	}, "with CCITT G4 compression (tiffcp -c g4)"},
	{func(d ifd) string {
		switch d.photometric {
		case 0, 1, 2, 3, 5, 6:
			return ""
		}
		if name, ok := colours[d.photometric]; ok {
			return fmt.Sprintf("the %s colour space (PhotometricInterpretation %d)", name, d.photometric)
		}
		return fmt.Sprintf("a colour space that is not read here (PhotometricInterpretation %d)", d.photometric)
	}, "as RGB or grey"},
	{func(d ifd) string {
		if d.photometric == 6 && d.compression != 7 {
			return "YCbCr pixels that are not JPEG-compressed (PhotometricInterpretation 6)"
		}
		return ""
	}, "as RGB, or with JPEG compression"},
	{func(d ifd) string {
		switch {
		case d.photometric != 5:
		case d.compression == 7:
			return "JPEG-compressed CMYK"
		case d.inkSet != 1 || d.samples != 4 || d.bits != 8:
			return fmt.Sprintf("separated colour other than CMYK at 8 bits a sample (InkSet %d, %d samples)", d.inkSet, d.samples)
		}
		return ""
	}, "as RGB, or as CMYK with LZW or deflate compression"},
	{func(d ifd) string {
		switch d.bits {
		case 1, 8, 16:
			return ""
		case -1:
			return "samples of different bit depths"
		}
		return fmt.Sprintf("%d bits per sample", d.bits)
	}, "with 8 bits per sample (or 1 for a bilevel fax)"},
	{func(d ifd) string {
		switch d.format {
		case 1:
			return ""
		case 2:
			return "signed-integer samples (SampleFormat 2)"
		case 3:
			return "floating-point samples (SampleFormat 3)"
		}
		return fmt.Sprintf("samples of SampleFormat %d", d.format)
	}, "with unsigned 8-bit samples"},
	{func(d ifd) string {
		if d.planar == 2 && d.samples > 1 {
			return "separate colour planes (PlanarConfiguration 2)"
		}
		return ""
	}, "with the samples of each pixel together (PlanarConfiguration 1)"},
	{func(d ifd) string {
		switch d.photometric {
		case 0, 1, 3:
			if d.samples > 1 {
				return fmt.Sprintf("grey or palette pixels with %d samples (an alpha channel)", d.samples)
			}
		case 2:
			if d.samples > 4 || d.samples == 4 && d.extra != 1 && d.extra != 2 {
				return fmt.Sprintf("RGB pixels with %d samples", d.samples)
			}
		}
		return ""
	}, "without an alpha channel or extra samples"},
}

// unread names the compressions met in the field that nothing here decodes.
var unread = map[int]string{
	2: "CCITT modified Huffman (RLE)", 6: "old-style JPEG", 32771: "CCITT RLEW", 32809: "ThunderScan",
	34661: "JBIG", 34676: "SGI LogL", 34677: "SGI LogLuv", 34712: "JPEG 2000", 34887: "LERC",
	34925: "LZMA", 50000: "Zstandard", 50001: "WebP", 50002: "JPEG XL",
}

// colours names the colour spaces (PhotometricInterpretation) that nothing here decodes.
var colours = map[int]string{
	4: "transparency mask", 8: "CIE L*a*b*", 9: "ICC L*a*b*", 10: "ITU L*a*b*", 32803: "CFA (raw sensor)",
	32844: "LogL", 32845: "LogLuv", 34892: "linear raw",
}
