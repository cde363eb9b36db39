package intake

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/image/tiff"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/problem"
)

// tiffHeader writes a one-directory little-endian TIFF header: w×h, the given compression and
// samples (1 for bilevel, 3 for 8-bit RGB), one strip of strip bytes right after the directory.
// next is the offset of the next directory (0 for none).
func tiffHeader(w, h, compression, samples int, strip []byte, next uint32) []byte {
	type tag struct {
		id, typ uint16
		v       uint32
	}
	bps, photometric := uint32(1), uint32(0)
	if samples == 3 {
		bps, photometric = 8, 2
	}
	tags := []tag{{256, 4, uint32(w)}, {257, 4, uint32(h)}, {258, 3, bps}, {259, 3, uint32(compression)},
		{262, 3, photometric}, {273, 4, 0}, {277, 3, uint32(samples)}, {278, 4, uint32(h)}, {279, 4, uint32(len(strip))}}
	if samples == 3 { // BitsPerSample has three values: point at them
		tags[2] = tag{258, 3, 0}
	}
	le := binary.LittleEndian
	b := []byte("II*\x00\x08\x00\x00\x00")
	b = le.AppendUint16(b, uint16(len(tags)))
	end := 8 + 2 + 12*len(tags) + 4
	bpsAt := end
	if samples == 3 {
		end += 6
	}
	for _, t := range tags {
		b = le.AppendUint16(b, t.id)
		b = le.AppendUint16(b, t.typ)
		switch {
		case t.id == 258 && samples == 3:
			b = le.AppendUint32(b, 3)
			b = le.AppendUint32(b, uint32(bpsAt))
			continue
		case t.id == 273:
			t.v = uint32(end)
		}
		b = le.AppendUint32(b, 1)
		if t.typ == 3 {
			b = le.AppendUint16(b, uint16(t.v))
			b = le.AppendUint16(b, 0)
		} else {
			b = le.AppendUint32(b, t.v)
		}
	}
	b = le.AppendUint32(b, next)
	if samples == 3 {
		b = append(b, 8, 0, 8, 0, 8, 0)
	}
	return append(b, strip...)
}

// TestTIFFPages covers Split and PreparePage on the committed fax: its pages come out in order,
// each re-encoded at its own size, and its thumbnail directory is no page.
func TestTIFFPages(t *testing.T) {
	fax := read(t, "fax.tiff")
	p := New(Limits{}, testRuntime)
	n, err := p.Split(t.Context(), fax)
	if err != nil || n != 3 {
		t.Fatalf("Split: %d pages, %v; want 3", n, err)
	}
	want := []image.Point{{864, 1100}, {800, 1100}, {432, 560}}
	for i, w := range want {
		pg, err := p.PreparePage(t.Context(), fax, i)
		if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
		if pg.Width != w.X || pg.Height != w.Y || pg.MIME != "image/jpeg" || !pg.Reencoded || pg.Kind != "tiff" {
			t.Errorf("page %d: %s %d×%d (re-encoded %v, kind %s); want a JPEG of %v", i+1, pg.MIME, pg.Width, pg.Height, pg.Reencoded, pg.Kind, w)
		}
	}
	if _, err := p.PreparePage(t.Context(), fax, 3); err == nil {
		t.Errorf("page 4 of 3: no error")
	}
	if n, err := p.Split(t.Context(), read(t, "scan.jpg")); n != 1 || err != nil {
		t.Errorf("Split of a JPEG: %d, %v; want 1 page", n, err)
	}
}

// TestTIFFChain covers the directory walk's refusals: each is a clear problem before decoding.
func TestTIFFChain(t *testing.T) {
	page := tiffHeader(64, 64, 1, 1, make([]byte, 8*64), 0)
	loop := tiffHeader(64, 64, 1, 1, make([]byte, 8*64), 8) // the next directory is itself
	outside := tiffHeader(64, 64, 1, 1, make([]byte, 8*64), 1<<30)
	var many []byte
	{ // MaxTIFFPages+1 empty directories, chained
		le := binary.LittleEndian
		many = []byte("II*\x00\x08\x00\x00\x00")
		for i := range MaxTIFFPages + 1 {
			many = le.AppendUint16(many, 0)
			next := uint32(len(many) + 4)
			if i == MaxTIFFPages {
				next = 0
			}
			many = le.AppendUint32(many, next)
		}
	}
	tests := []struct {
		name string
		data []byte
		n    int
		code problem.Code
	}{
		{"one page", page, 1, ""},
		{"a loop", loop, 0, problem.ImageUnreadable},
		{"a directory outside the file", outside, 0, problem.ImageUnreadable},
		{"more directories than MaxTIFFPages", many, 0, problem.TooManyPages},
		{"cut in its directory", page[:20], 0, problem.ImageUnreadable},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Split(t.Context(), tt.data)
			if n != tt.n || problem.CodeOf(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("got %d pages, %v; want %d, %q", n, err, tt.n, tt.code)
			}
		})
	}
}

// TestTIFFBounds: a compressed page may inflate to 8 bytes a pixel of its strip whatever its
// data, so one large strip is refused from the header; a fax page of the same size is not.
func TestTIFFBounds(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		code   problem.Code
		detail string
	}{
		{name: "deflate RGB in one strip", data: tiffHeader(6000, 6000, 8, 3, []byte("x\x9c"), 0),
			code: problem.ImageTooLarge, detail: "decoding this 6000×6000 compressed TIFF would take 686.6 MiB of memory"},
		{name: "LZW bilevel at the pixel limit", data: tiffHeader(6320, 6320, 5, 1, []byte{0x80}, 0),
			code: problem.ImageTooLarge, detail: "compressed TIFF"},
		{name: "G4 fax at the pixel limit", data: tiffHeader(6320, 6320, 4, 1, []byte{0}, 0)},
		{name: "over the pixel limit", data: tiffHeader(7000, 7000, 4, 1, []byte{0}, 0),
			code: problem.ImageTooLarge, detail: "7000×7000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Limits{}, testRuntime)
			_, err := p.inspect(tt.data, 0)
			if problem.CodeOf(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("got %v, want %q", err, tt.code)
			}
			if pe, ok := err.(*problem.Error); ok && !strings.Contains(pe.Detail, tt.detail) {
				t.Errorf("detail %q\nwant it to hold %q", pe.Detail, tt.detail)
			}
		})
	}
}

// TestTIFFBlocks: a page's decode work is charged by the blocks it will decode and the bytes they
// decode to, not by their data, and a document's pages together are bounded too; both refused
// before any decode, by what is over. Before, 390,625 8×8 deflate tiles sharing one 20-byte
// stream took 4.3–6.5 CPU-s for one page, and ten pages sharing one table of them 29 CPU-s.
func TestTIFFBlocks(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		split  problem.Code // Split's answer
		page   problem.Code // PreparePage's of page 1
		detail string
	}{
		{name: "390,625 tiles of 8×8 sharing one stream", data: gen.SharedTiles(5000, 5000, 8, 1), page: problem.ImageTooLarge,
			detail: "decoding this 5000×5000 TIFF page means decoding 390625 blocks of 8×8, 2450 million units of work; the limit is 640 million"},
		{name: "97,969 tiles of 16×16", data: gen.SharedTiles(5000, 5000, 16, 1), page: problem.ImageTooLarge, detail: "97969 blocks of 16×16"},
		{name: "15,625 tiles of 8×8", data: gen.SharedTiles(1000, 1000, 8, 1)},
		{name: "a strip a row, 20,000 rows", data: gen.SharedTiles(2000, 20000, 0, 1)},
		{name: "ten pages sharing a table of 62,500 tiles", data: gen.SharedTiles(2000, 2000, 8, 10), split: problem.ImageTooLarge, page: problem.ImageTooLarge,
			detail: "decoding the TIFF's 10 pages means 3920 million units of work; the limit for one document is 2560 million"},
		{name: "four pages sharing a table of 62,500 tiles", data: gen.SharedTiles(2000, 2000, 8, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Limits{}, testRuntime)
			check := func(what string, err error, want problem.Code) {
				t.Helper()
				if problem.CodeOf(err) != want && !(want == "" && err == nil) {
					t.Fatalf("%s: got %v, want %q", what, err, want)
				}
				if pe, ok := err.(*problem.Error); ok && !strings.Contains(pe.Detail, tt.detail) {
					t.Errorf("%s: detail %q\nwant it to hold %q", what, pe.Detail, tt.detail)
				}
			}
			_, err := p.Split(t.Context(), tt.data)
			check("split", err, tt.split)
			decoded := false
			p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) {
				decoded = true
				return next(r)
			}
			_, err = p.PreparePage(t.Context(), tt.data, 0)
			check("page 1", err, tt.page)
			if decoded != (tt.page == "") {
				t.Errorf("decoded: %v", decoded)
			}
		})
	}
}

// TestTIFFAllocation holds tiff.Page.Cost to what its Decode (x/image/tiff, JPEG blocks) allocates,
// page by page of a multi-page file decoded through the view.
func TestTIFFAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates beside the decoder")
	}
	var deflate bytes.Buffer
	if err := tiff.Encode(&deflate, gen.Photo(600, 400), &tiff.Options{Compression: tiff.Deflate}); err != nil {
		t.Fatal(err)
	}
	fax := gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(1728, 2200), Compression: gen.TIFFG4}, {Image: gen.Report(1000, 1400), Compression: gen.TIFFNone}})
	tests := []struct {
		name  string
		data  []byte
		page  int
		loose bool
	}{
		{"G4 fax page", fax, 0, false},
		{"uncompressed fax page 2", fax, 1, false},
		{"BlackIsZero G3 fax", gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(1728, 2200), Compression: gen.TIFFG3, BlackIsZero: true}}), 0, false},
		{"G3 2-D fax", gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(1728, 2200), Compression: gen.TIFFG3, T4Options: 1}}), 0, false},
		{"CMYK deflate strips", gen.CMYKTIFF(gen.Photo(1200, 1600), 256, true), 0, true}, // 8 bytes a pixel of a strip inflated, at worst
		{"CMYK stored", gen.CMYKTIFF(gen.Photo(1200, 1600), 1600, false), 0, false},
		{"deflate RGB", deflate.Bytes(), 0, true}, // the worst case is 8 bytes a pixel inflated
		{"JPEG colour strips", gen.JPEGTIFF(gen.Photo(1200, 1600), 128, false, true), 0, false},
		{"JPEG grey tiles", gen.JPEGTIFF(gen.Report(1200, 1600), 256, true, true), 0, true}, // counted as colour
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := p.inspect(tt.data, tt.page)
			if err != nil {
				t.Fatal(err)
			}
			got, err := allocated(func() error {
				_, err := h.decode(t.Context(), testPrep, tt.data)(h.reader(tt.data))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			est := h.cost.mem
			if got > est+1<<20 || !tt.loose && est > 2*got+1<<20 {
				t.Errorf("allocated %d bytes; the headers said %d", got, est)
			}
			t.Logf("allocated %d bytes; the headers said %d", got, est)
		})
	}
}

// allocated returns the bytes f allocates.
func allocated(f func() error) (int64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc), err
}

// TestTIFFJPEG decodes pages of JPEG blocks (compression 7) as scanners write them, strips and
// tiles, with the tables shared in JPEGTables and without, colour and grey: the pixels are the
// page's within JPEG's loss, 8×8 area by area, so a block misplaced or a colour read in the
// wrong space fails.
func TestTIFFJPEG(t *testing.T) {
	photo, report := gen.Photo(600, 400), gen.Report(500, 700)
	tests := []struct {
		name string
		src  image.Image
		data []byte
	}{
		{"colour strips, shared tables", photo, gen.JPEGTIFF(photo, 64, false, true)},
		{"colour tiles, shared tables, edge tiles padded", photo, gen.JPEGTIFF(photo, 128, true, true)},
		{"colour, one strip, own tables", photo, gen.JPEGTIFF(photo, 400, false, false)},
		{"grey strips, shared tables", report, gen.JPEGTIFF(report, 96, false, true)},
		{"grey tiles, own tables", report, gen.JPEGTIFF(report, 256, true, false)},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := p.inspect(tt.data, 0)
			if err != nil {
				t.Fatal(err)
			}
			m, err := h.decode(t.Context(), testPrep, tt.data)(h.reader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if m.Bounds() != tt.src.Bounds() {
				t.Fatalf("bounds %v, want %v", m.Bounds(), tt.src.Bounds())
			}
			if worst := areaDiff(m, tt.src); worst > 24 {
				t.Errorf("an 8×8 area differs by %d in a channel's mean", worst)
			}
			pg, err := p.PreparePage(t.Context(), tt.data, 0)
			if err != nil || pg.MIME != "image/jpeg" || pg.Width != tt.src.Bounds().Dx() {
				t.Errorf("prepared %v %dx%d, %v", pg.MIME, pg.Width, pg.Height, err)
			}
		})
	}
}

// areaDiff is the largest difference of a channel's mean over any 8×8 area of a and b.
func areaDiff(a, b image.Image) int {
	worst := 0
	r := a.Bounds()
	for y := r.Min.Y; y+8 <= r.Max.Y; y += 8 {
		for x := r.Min.X; x+8 <= r.Max.X; x += 8 {
			var sa, sb [3]int
			for j := range 8 {
				for i := range 8 {
					ar, ag, ab, _ := a.At(x+i, y+j).RGBA()
					br, bg, bb, _ := b.At(x+i, y+j).RGBA()
					sa[0], sa[1], sa[2] = sa[0]+int(ar>>8), sa[1]+int(ag>>8), sa[2]+int(ab>>8)
					sb[0], sb[1], sb[2] = sb[0]+int(br>>8), sb[1]+int(bg>>8), sb[2]+int(bb>>8)
				}
			}
			for c := range 3 {
				worst = max(worst, abs(sa[c]-sb[c])/64)
			}
		}
	}
	return worst
}

func abs(n int) int { return max(n, -n) }

// TestTIFFJPEGRefused: what internal/tiff's JPEG blocks will not decode is a clear problem, not a guess: a
// progressive block (its work is not its pixels), blocks that do not tile the page, and the
// compressions nothing here reads, by name before decoding.
func TestTIFFJPEGRefused(t *testing.T) {
	good := gen.JPEGTIFF(gen.Photo(600, 400), 64, false, true)
	progressive := bytes.Clone(good)
	if i := bytes.Index(progressive, []byte{0xff, 0xc0}); i < 0 {
		t.Fatal("no SOF0")
	} else {
		progressive[i+1] = 0xc2
	}
	fewer := bytes.Clone(good) // RowsPerStrip 64 → 32: the page wants 13 strips, it has 7
	if i := bytes.Index(fewer, []byte{0x16, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 64, 0}); i < 0 {
		t.Fatal("no RowsPerStrip 64")
	} else {
		fewer[i+8] = 32
	}
	tests := []struct {
		name   string
		data   []byte
		code   problem.Code
		detail string
	}{
		{"progressive block: valid, not read here", progressive, problem.UnsupportedMediaType, "not baseline"},
		{"strips that do not cover the page", fewer, problem.ImageUnreadable, "7 blocks"},
		{"old-style JPEG", tiffHeader(64, 64, 6, 3, make([]byte, 16), 0), problem.UnsupportedMediaType, "compression 6"},
		{"JPEG 2000", tiffHeader(64, 64, 34712, 3, make([]byte, 16), 0), problem.UnsupportedMediaType, "compression 34712"},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.PreparePage(t.Context(), tt.data, 0)
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != tt.code || !strings.Contains(pe.Error(), tt.detail) {
				t.Fatalf("got %v; want %s mentioning %q", err, tt.code, tt.detail)
			}
		})
	}
}

// TestTIFFFaxPhotometric: a fax reads as the page it was made from, pixel for pixel, whichever
// way its PhotometricInterpretation says a 1 bit is and however it is coded (G3 1-D, G3 2-D, G4,
// none; one strip or several). x/image/tiff alone reads a BlackIsZero CCITT fax (libtiff's
// tiffcp -c g4 from a PBM) as its negative, and no G3 2-D at all.
func TestTIFFFaxPhotometric(t *testing.T) {
	src := gen.Report(300, 420)
	tests := []struct {
		name string
		page gen.FaxPage
	}{
		{"WhiteIsZero G4", gen.FaxPage{Image: src, Compression: gen.TIFFG4}},
		{"BlackIsZero G4", gen.FaxPage{Image: src, Compression: gen.TIFFG4, BlackIsZero: true}},
		{"WhiteIsZero G3 1-D", gen.FaxPage{Image: src, Compression: gen.TIFFG3}},
		{"BlackIsZero G3 1-D", gen.FaxPage{Image: src, Compression: gen.TIFFG3, BlackIsZero: true}},
		{"WhiteIsZero G3 2-D", gen.FaxPage{Image: src, Compression: gen.TIFFG3, T4Options: 1}},
		{"BlackIsZero G3 2-D", gen.FaxPage{Image: src, Compression: gen.TIFFG3, T4Options: 1, BlackIsZero: true}},
		{"G3 2-D in strips of 38 rows", gen.FaxPage{Image: src, Compression: gen.TIFFG3, T4Options: 1, Rows: 38}},
		{"BlackIsZero G4 in strips of 38 rows", gen.FaxPage{Image: src, Compression: gen.TIFFG4, BlackIsZero: true, Rows: 38}},
		{"WhiteIsZero uncompressed", gen.FaxPage{Image: src, Compression: gen.TIFFNone}},
		{"BlackIsZero uncompressed", gen.FaxPage{Image: src, Compression: gen.TIFFNone, BlackIsZero: true}},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := gen.FaxTIFF([]gen.FaxPage{tt.page})
			h, err := p.inspect(data, 0)
			if err != nil {
				t.Fatal(err)
			}
			m, err := h.decode(t.Context(), testPrep, data)(h.reader(data))
			if err != nil {
				t.Fatal(err)
			}
			g, ok := m.(*image.Gray)
			if !ok || g.Rect != src.Rect {
				t.Fatalf("decoded %T of %v, want grey of %v", m, m.Bounds(), src.Rect)
			}
			wrong := 0
			for i, v := range g.Pix {
				if v < 128 != (src.Pix[i] < 128) {
					wrong++
				}
			}
			if wrong > 0 {
				t.Errorf("%d of %d pixels differ from the source", wrong, len(g.Pix))
			}
			pg, err := p.PreparePage(t.Context(), data, 0)
			if err != nil {
				t.Fatal(err)
			}
			out, err := jpeg.Decode(bytes.NewReader(pg.Data))
			if err != nil {
				t.Fatal(err)
			}
			if worst := areaDiff(out, src); worst > 48 {
				t.Errorf("the prepared page: an 8×8 area differs by %d in its mean", worst)
			}
		})
	}
}

// TestTIFFUnsupported: a valid TIFF that uses a feature nothing here decodes is refused as
// unsupported_media_type by the feature's name, from its directory, never as damaged.
func TestTIFFUnsupported(t *testing.T) {
	fax := func(t4 uint32) []byte {
		return gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(64, 64), Compression: gen.TIFFG3, T4Options: t4}})
	}
	// set rewrites one SHORT entry of tiffHeader's directory.
	set := func(b []byte, tag, v uint16) []byte {
		b = bytes.Clone(b)
		for e := 10; e+12 <= len(b); e += 12 {
			if binary.LittleEndian.Uint16(b[e:]) == tag {
				binary.LittleEndian.PutUint16(b[e+8:], v)
				return b
			}
		}
		panic("no such tag")
	}
	rgb := tiffHeader(64, 64, 5, 3, make([]byte, 16), 0)
	grey := tiffHeader(64, 64, 1, 1, make([]byte, 8*64), 0)
	tests := []struct {
		name   string
		data   []byte
		detail string
	}{
		{"G3 uncompressed mode", fax(2), "uncompressed mode"},
		{"G3 fill bits", fax(4), "fill bits"},
		{"CCITT modified Huffman", set(grey, 259, 2), "CCITT modified Huffman (RLE) compression (compression 2)"},
		{"an unknown compression", set(grey, 259, 12345), "compression 12345"},
		{"CIE L*a*b*", set(rgb, 262, 8), "the CIE L*a*b* colour space (PhotometricInterpretation 8)"},
		{"an unknown colour space", set(rgb, 262, 77), "PhotometricInterpretation 77"},
		{"YCbCr, not JPEG", set(rgb, 262, 6), "YCbCr pixels that are not JPEG-compressed"},
		{"CMYK of 3 samples", set(rgb, 262, 5), "separated colour other than CMYK"},
		{"4-bit grey", set(grey, 258, 4), "4 bits per sample"},
		{"grey with alpha", set(grey, 277, 2), "grey or palette pixels with 2 samples"},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.PreparePage(t.Context(), tt.data, 0)
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.UnsupportedMediaType || !strings.Contains(pe.Detail, tt.detail) {
				t.Fatalf("got %v; want unsupported_media_type naming %q", err, tt.detail)
			}
		})
	}
	for _, t4 := range []uint32{0, 1} {
		if _, err := p.PreparePage(t.Context(), fax(t4), 0); err != nil {
			t.Errorf("G3 with T4Options %d: %v", t4, err)
		}
	}
}

// TestTIFFCMYK decodes 8-bit CMYK pages as ImageMagick writes them, through the directory the
// view rewrites for x/image/tiff: every pixel is the page's own four inks, strip by strip, the
// predictor undone; the prepared page shows the colours of the source.
func TestTIFFCMYK(t *testing.T) {
	src := gen.Photo(300, 200)
	tests := []struct {
		name string
		data []byte
	}{
		{"deflate with the predictor, strips of 16 rows", gen.CMYKTIFF(src, 16, true)},
		{"stored, one strip", gen.CMYKTIFF(src, 200, false)},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := p.inspect(tt.data, 0)
			if err != nil {
				t.Fatal(err)
			}
			m, err := h.decode(t.Context(), testPrep, tt.data)(h.reader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			c, ok := m.(*image.CMYK)
			if !ok || c.Rect != src.Rect {
				t.Fatalf("decoded %T of %v, want CMYK of %v", m, m.Bounds(), src.Rect)
			}
			for y := range 200 {
				for x := range 300 {
					if got, want := c.CMYKAt(x, y), color.CMYKModel.Convert(src.At(x, y)); got != want {
						t.Fatalf("pixel (%d, %d) is %v, want %v", x, y, got, want)
					}
				}
			}
			pg, err := p.PreparePage(t.Context(), tt.data, 0)
			if err != nil {
				t.Fatal(err)
			}
			out, err := jpeg.Decode(bytes.NewReader(pg.Data))
			if err != nil {
				t.Fatal(err)
			}
			if worst := areaDiff(out, src); worst > 24 {
				t.Errorf("the prepared page: an 8×8 area differs by %d in a channel's mean", worst)
			}
		})
	}
}
