package intake

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"

	"golang.org/x/image/ccitt"
	"golang.org/x/image/tiff"

	"github.com/ocrdraft/ocrdraft/intake/internal/fax"
	"github.com/ocrdraft/ocrdraft/problem"
)

// MaxTIFFPages is the most IFDs a TIFF's chain is followed for. A fax or a scanner's batch has
// tens of pages; OCR_MAX_PAGES refuses far fewer than this long before, and the walk never costs
// more than this many small reads.
const MaxTIFFPages = 1000

// tiffFormat is TIFF's row: every page a directory, each read and costed from it.
var tiffFormat = format{kind: "tiff", mime: "image/tiff", what: "a TIFF image", match: func(b []byte) bool {
	return bytes.HasPrefix(b, []byte("II*\x00")) || bytes.HasPrefix(b, []byte("MM\x00*"))
}, read: readTIFF, pages: tiffPageCount}

// tiffPageCount is the TIFF row's pages: its directories, each page's work counted toward the
// document's.
func tiffPageCount(f format, p *Preparer, _ context.Context, data []byte) (int, error) {
	pages, err := tiffPages(data)
	if errors.Is(err, errTIFFPages) {
		return 0, problem.Errorf(problem.TooManyPages, "the TIFF has more than %d pages; send at most that many per request", MaxTIFFPages)
	}
	if err != nil {
		return 0, unreadable(f, err)
	}
	if err := tiffDocument(pages, p.l); err != nil {
		return 0, err
	}
	return len(pages), nil
}

// readTIFF is the TIFF row's read of page i: its directory, the features it uses that are not
// read here, its size and colours, and its decoder (tiffDecoder, through tiffReader's view).
func readTIFF(_ format, data []byte, i int, l Limits) (header, error) {
	pages, err := tiffPages(data)
	if err != nil {
		return header{}, err
	}
	if i >= len(pages) {
		return header{}, pageError{fmt.Sprintf("intake: page %d of a TIFF of %d pages", i+1, len(pages))}
	}
	if err := tiffDocument(pages, l); err != nil {
		return header{}, err
	}
	d := pages[i]
	if err := tiffSupported(d, i); err != nil {
		return header{}, err
	}
	// A tile larger than its page by more than a tile's padding is damage, and its size, from
	// the file, would overflow the cost of decoding it.
	if d.tileW > d.w+256 || d.tileH > d.h+256 || d.tileW < 0 || d.tileH < 0 {
		return header{}, fmt.Errorf("tiff: %d×%d tiles on a %d×%d page", d.tileW, d.tileH, d.w, d.h)
	}
	open := func(data []byte) io.Reader { return tiffReader(data, d) }
	var cfg image.Config
	if d.compression == 7 { // x/image/tiff reads no YCbCr header
		cfg = image.Config{Width: d.w, Height: d.h, ColorModel: color.RGBAModel}
		if d.photometric < 2 {
			cfg.ColorModel = color.GrayModel
		}
	} else if cfg, err = decodeConfig(tiff.DecodeConfig, open(data)); err != nil {
		return header{}, err
	}
	return header{w: cfg.Width, h: cfg.Height, model: cfg.ColorModel, orient: d.orient, stretch: d.stretch,
		price:  func() (cost, error) { return tiffCost(d, cfg, len(data)), nil },
		open:   open,
		decode: func(ctx context.Context, data []byte) decoder { return tiffDecoder(ctx, data, d) },
	}, nil
}

// ifd is what intake reads from one TIFF image file directory, beside what x/image/tiff reads.
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
	tables  int // JPEGTables: its bytes, which decodeTIFFJPEG puts before every block
	// stretch is how many rows each row stands for, when the page's pixels are taller than
	// wide (a fax in normal mode is 204×98 dpi): YResolution below XResolution by a fifth or
	// more. 0 or 1: square enough.
	stretch int
}

// tiffOrder reads a TIFF header's byte order and the offset of the first directory.
func tiffOrder(data []byte) (binary.ByteOrder, int64, error) {
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
// it goes on but does not is damaged. More than MaxTIFFPages directories is too_many_pages.
func tiffPages(data []byte) ([]ifd, error) {
	bo, off, err := tiffOrder(data)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	var pages []ifd
	for off != 0 {
		if seen[off] {
			return nil, errors.New("the chain of directories loops")
		}
		if len(seen) == MaxTIFFPages {
			return nil, errTIFFPages
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

// errTIFFPages is the walk's one refusal that is not damage.
var errTIFFPages = fmt.Errorf("the TIFF has more than %d pages", MaxTIFFPages)

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

// stretchRows repeats each row of g n times: a page of tall pixels made square.
func stretchRows(g *image.Gray, n int) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	out := image.NewGray(image.Rect(0, 0, w, h*n))
	for y := range h {
		row := g.Pix[y*g.Stride : y*g.Stride+w]
		for k := range n {
			copy(out.Pix[(y*n+k)*out.Stride:], row)
		}
	}
	return out
}

// tiffView is a TIFF seen as if the directory at ifd were its first: the header's offset is
// replaced, nothing is copied. x/image/tiff reads only the first directory, and reads through
// ReadAt when it can, so the view is how it decodes page n without holding a second copy. A view
// may also hold a directory of its own past the end of the file (tail), which the header then
// points at.
type tiffView struct {
	data []byte
	head [8]byte
	tail []byte
}

func newTIFFView(data []byte, at int64) *io.SectionReader {
	return (&tiffView{data: data}).at(at)
}

// at points the view's header at the directory at off, and returns the view as a reader.
func (v *tiffView) at(off int64) *io.SectionReader {
	copy(v.head[:], v.data[:8])
	bo, _, _ := tiffOrder(v.data)
	bo.PutUint32(v.head[4:], uint32(off))
	return io.NewSectionReader(v, 0, int64(len(v.data)+len(v.tail)))
}

// tiffReader returns page d as x/image/tiff is to read it: a view of the file whose header points
// at d. x/image/tiff reads no CMYK, so for a CMYK page the view holds a copy of d's directory
// that says RGB with an alpha sample, its other entries (and the offsets they hold) as they
// are: x/image/tiff then reads the four bytes of each pixel, predictor and compression undone,
// into an NRGBA image, and tiffDecoder takes them for the C, M, Y and K they are.
func tiffReader(data []byte, d ifd) *io.SectionReader {
	v := &tiffView{data: data}
	if d.photometric != 5 {
		return v.at(d.at)
	}
	bo, _, _ := tiffOrder(data)
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

func (v *tiffView) ReadAt(p []byte, off int64) (int, error) {
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

// tiffDecoder returns the decoder of page d, which reads the page through tiffReader's view:
// decodeTIFFJPEG for JPEG blocks, decodeTIFFG3 for G3 2-D, else x/image/tiff, with two of its
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
func tiffDecoder(ctx context.Context, data []byte, d ifd) decoder {
	if d.compression == 7 { // x/image/tiff does not read JPEG blocks
		return func(io.Reader) (image.Image, error) { return decodeTIFFJPEG(ctx, data, d) }
	}
	if d.compression == 3 && d.t4&1 != 0 { // nor G3 2-D
		return func(io.Reader) (image.Image, error) { return decodeTIFFG3(ctx, data, d) }
	}
	return func(r io.Reader) (image.Image, error) {
		m, err := tiff.Decode(r)
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

// decodeTIFFG3 decodes a page of CCITT G3 2-D, strip by strip: each is rewritten as G4
// (fax.G4), which x/image/ccitt decodes straight into the strip's rows of the grey page, a white
// run white on a WhiteIsZero page and black on a BlackIsZero one (libtiff's reading, as in
// tiffDecoder). One buffer holds the rewritten strip, twice the largest strip at most.
func decodeTIFFG3(ctx context.Context, data []byte, d ifd) (image.Image, error) {
	bo, _, err := tiffOrder(data)
	if err != nil {
		return nil, err
	}
	offs, _, err := tiffTag(data, bo, d.at, 273)
	if err != nil {
		return nil, err
	}
	counts, _, err := tiffTag(data, bo, d.at, 279)
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
	fill, _, _ := tiffTag(data, bo, d.at, 266)
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

// tiffCost: x/image/tiff holds the image at the bytes per pixel of its type (a bilevel fax is
// grey, a byte per pixel; a fax in normal mode once more for each row it is stretched to), and,
// for a compressed page, one strip or tile inflated at a time into a buffer it lets grow to 8
// bytes per pixel of the block whatever the data says (a deflate bomb fills it), which
// bytes.Buffer may double. For CCITT G3/G4 the decoder writes a bit per pixel and stops at the
// block's last row, keeping two rows of transitions (its growing buffer may hold the rows three
// times over). An uncompressed block is read as stored, at most the file. A JPEG-compressed
// page is decoded by decodeTIFFJPEG.
func tiffCost(d ifd, cfg image.Config, size int) cost {
	c := tiffMem(d, cfg, size)
	c.work = tiffWork(d)
	c.over = func(l Limits) error { return tiffOver(d, c.work, l) }
	return c
}

func tiffMem(d ifd, cfg image.Config, size int) cost {
	w, h := int64(cfg.Width), int64(cfg.Height)
	bw, bh := w, h
	if d.tileW > 0 && d.tileH > 0 {
		bw, bh = int64(d.tileW), int64(d.tileH)
	} else if d.rows > 0 && int64(d.rows) < h {
		bh = int64(d.rows)
	}
	if d.compression == 7 { // decodeTIFFJPEG: the page at 4 bytes a pixel at most, and every block
		// decoded afresh (3 bytes a pixel at most, 4:4:4) until the collector takes them back
		return cost{mem: 7*w*h + 8*bw*bh + 2*int64(size), what: "JPEG-compressed TIFF"}
	}
	c := cost{mem: w * h * bytesPerPixel(cfg.ColorModel) * int64(max(1, d.stretch)), what: "TIFF"}
	switch d.compression {
	case 0, 1: // none
		c.mem += min(int64(size), bw*bh*8)
	case 3, 4: // CCITT G3, G4, and the decoder's state of two rows of transitions
		c.mem += 4*((bw+7)/8)*bh + 64*bw
		if d.compression == 3 && d.t4&1 != 0 { // decodeTIFFG3: a strip rewritten, twice its size at
			// most, and for each strip a decoder of 1 KiB or so and the runs of a row
			c.mem = w*h + 2*int64(size) + 16<<10 + (4<<10+8*(w+2))*((h+bh-1)/bh)
		}
	default:
		c.mem += 2 * bw * bh * 8
		c.what = "compressed TIFF"
	}
	return c
}

// The work of decoding a TIFF page, in the units of Limits.MaxDecodeWork (a JPEG's samples,
// about 3 ns of one core each): every block (strip or tile) costs a decoder of its own whatever
// its data, 10–16 µs with x/image/tiff's inflate (390,625 8×8 deflate tiles sharing one
// 20-byte stream took 4.3 s, 97,656 16×16 ones 1.9 s, on a loaded machine; a page of 20,000
// strips 0.6 s), counted as tiffPerBlock (about 18 µs); each block of JPEG copies JPEGTables before its data and reads both twice;
// and every byte the page decodes to counts twice. What the blocks' data says does not count:
// blocks may share one stream, and a deflate stream may say anything.
const tiffPerBlock = 6144

// tiffBlocks is the page's blocks and the size of each, as the decoders cut it.
func tiffBlocks(d ifd) (n, bw, bh int64) {
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

// tiffWork: per block, tiffPerBlock (and JPEGTables four times over for JPEG blocks), and two
// units a byte of the blocks decoded, at the most bytes a pixel its samples can take (8).
func tiffWork(d ifd) int64 {
	n, bw, bh := tiffBlocks(d)
	bpp := int64(8)
	if d.bits > 0 && d.samples > 0 {
		bpp = min(8, max(1, int64(d.samples)*int64(max(d.bits, 8))/8))
	}
	per := int64(tiffPerBlock)
	if d.compression == 7 {
		per += 4*int64(d.tables) + 9*bw*bh // and each block decoded as a baseline JPEG, its samples
	}
	return n*per + 2*n*bw*bh*bpp
}

// tiffOver refuses a page whose blocks would take more than the decode work allows.
func tiffOver(d ifd, work int64, l Limits) error {
	if work <= l.MaxDecodeWork {
		return nil
	}
	n, bw, bh := tiffBlocks(d)
	return problem.Errorf(problem.ImageTooLarge,
		"decoding this %d×%d TIFF page means decoding %d blocks of %d×%d, %d million units of work; the limit is %d million: save it again with fewer, larger strips or tiles (or as PNG or PDF)",
		d.w, d.h, n, bw, bh, work/1e6, l.MaxDecodeWork/1e6)
}

// MaxTIFFWork is how much more than one page's decode work all the pages of one TIFF may take
// together: ten pages that each take what one may would be 20 s of one core.
const MaxTIFFWork = 4

// tiffDocument refuses a TIFF whose pages together would take more than MaxTIFFWork pages'
// decode work, from their directories, before any is decoded.
func tiffDocument(pages []ifd, l Limits) error {
	var sum int64
	for _, d := range pages {
		if int64(d.w)*int64(d.h) > int64(l.MaxPixels) || d.tileW > d.w+256 || d.tileH > d.h+256 {
			continue // refused on its own, before its blocks are counted
		}
		sum += tiffWork(d)
	}
	if limit := MaxTIFFWork * l.MaxDecodeWork; sum > limit {
		return problem.Errorf(problem.ImageTooLarge,
			"decoding the TIFF's %d pages means %d million units of work; the limit for one document is %d million: send fewer pages per request, or pages with fewer, larger strips or tiles",
			len(pages), sum/1e6, limit/1e6)
	}
	return nil
}
