package intake

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/intake/internal/heif"
	"github.com/ocrdraft/ocrdraft/intake/internal/tiff"
	"github.com/ocrdraft/ocrdraft/problem"
)

// FuzzOrientation feeds the EXIF parser arbitrary bytes behind a JPEG start: it must never panic
// and never return anything but 1–8.
func FuzzOrientation(f *testing.F) {
	var buf bytes.Buffer
	jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 8, 8)), nil)
	for o := range 10 {
		f.Add(gen.WithExif(buf.Bytes(), o))
	}
	f.Add([]byte("\xff\xd8\xff\xe1\x00\x10Exif\x00\x00II*\x00\xff\xff\xff\xff"))
	f.Add([]byte("\xff\xd8\xff\xe1\x00\x1eExif\x00\x00II*\x00\x08\x00\x00\x00\xff\xff\x12\x01\x03\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if o := orientation(data); o < 1 || o > 8 {
			t.Fatalf("orientation %d", o)
		}
		if o := tiffOrientation(data); o < 1 || o > 8 {
			t.Fatalf("tiffOrientation %d", o)
		}
	})
}

// FuzzPrepare feeds Prepare arbitrary bytes: it must never panic, every error must be one of
// intake's codes, and every page must be a JPEG or PNG of the size it claims, within the limits.
// The pixel limit is small so that fuzzing explores headers rather than allocating. Every decode
// that runs is counted: the cost its headers gave must be within the decode bounds, the decoder
// must allocate no more than that cost says (measured, plus the file and 1 MiB of the decoders'
// own state), and it must return no more pixels than the header declared; a TIFF's reads of
// its file must be no more than the blocks its cost charged for; an input that costs more fails
// like a crash.
func FuzzPrepare(f *testing.F) {
	for _, name := range []string{"alpha.png", "anim.gif", "bilevel.webp", "cmyk.jpg", "grey16.png",
		"palette.png", "tiny.png", "truncated.png", "bomb.png", "photo.heic", "scan.pdf", "scan.tiff", "fax.tiff", "scan-jpeg.tiff", "scan.bmp"} {
		data, err := os.ReadFile(filepath.Join(images, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	var buf bytes.Buffer
	jpeg.Encode(&buf, gen.Report(40, 60), nil)
	f.Add(gen.WithExif(buf.Bytes(), 6))
	camera, _ := cameraJPEG(f, 1)
	f.Add(camera)
	meta, _ := metaPNG(f, gen.Photo(64, 48))
	f.Add(meta)

	f.Add(gen.Scans(64, 64, 3, 10, true))
	f.Add(gen.Scans(64, 64, 3, 2, false))
	f.Add(gen.Scans(512, 512, 1, 65, true))
	f.Add(pngHeader(64, 64, 16, 6, true, make([]byte, 1<<16)))
	// The decoders beside x/image's: run-length BMP, CMYK TIFF, BlackIsZero faxes.
	f.Add(gen.RLEBMP(quantised(64, 48, 216), false))
	f.Add(gen.RLEBMP(quantised(65, 48, 16), true))
	f.Add(gen.CMYKTIFF(gen.Photo(64, 48), 16, true))
	f.Add(gen.CMYKTIFF(gen.Photo(64, 48), 48, false))
	for _, c := range []int{gen.TIFFG3, gen.TIFFG4} {
		f.Add(gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(64, 80), Compression: c, BlackIsZero: true}}))
	}
	f.Add(gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(64, 80), Compression: gen.TIFFG3, T4Options: 1}}))
	f.Add(gen.SharedTiles(64, 64, 8, 2)) // blocks sharing one stream
	f.Add(gen.SharedTiles(64, 300, 0, 1))

	l := Limits{MaxBytes: 1 << 20, MaxPixels: 1 << 18, MaxEdge: 128, MinSide: 4}
	p := New(l, testRuntime)
	l = p.Limits()
	if err := testRuntime.Start(); err != nil { // the decoders compile before the first input, not in it
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			decoded bool
			alloc   uint64
			px      int
		)
		p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m, err := next(r)
			runtime.ReadMemStats(&after)
			decoded, alloc = true, after.TotalAlloc-before.TotalAlloc
			if m != nil {
				px = m.Bounds().Dx() * m.Bounds().Dy()
			}
			return m, err
		}
		h, herr := p.inspect(data, 0)
		page, err := p.Prepare(context.Background(), data)
		if decoded {
			c := h.cost
			if herr != nil || c.scans > l.MaxScans || c.work > l.MaxDecodeWork || c.mem > l.MaxDecodeBytes {
				t.Fatalf("decoded %+v (header error %v), beyond the limits %+v", c, herr, l)
			}
			slack := uint64(len(data)) + 1<<20
			if n := fuzzBlocks(data); h.f.kind == "tiff" {
				// Each compressed block gets an inflater of its own (about 45 KB), garbage once
				// the block is done: its cost is in the block's work charge, not held at once.
				slack += uint64(n) * 48 << 10
			}
			if alloc > uint64(c.mem)+slack {
				t.Fatalf("the %s decoder allocated %d bytes; its headers said %d", h.f.kind, alloc, c.mem)
			}
			if px > h.w*h.h {
				t.Fatalf("decoded %d pixels; the header said %d×%d", px, h.w, h.h)
			}
			// A TIFF's reads are held to its blocks by internal/tiff's FuzzDecode.
		}
		if err != nil {
			var pe *problem.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			switch pe.Code {
			case problem.PayloadTooLarge, problem.UnsupportedMediaType, problem.ImageUnreadable, problem.ImageTooLarge:
			default:
				t.Fatalf("code %s: %v", pe.Code, err)
			}
			return
		}
		cfg, kind, err := image.DecodeConfig(bytes.NewReader(page.Data))
		if err != nil {
			t.Fatalf("the page does not decode: %v", err)
		}
		if "image/"+kind != page.MIME || (kind != "jpeg" && kind != "png") {
			t.Fatalf("page is %s, says %s", kind, page.MIME)
		}
		if cfg.Width != page.Width || cfg.Height != page.Height {
			t.Fatalf("page is %d×%d, says %d×%d", cfg.Width, cfg.Height, page.Width, page.Height)
		}
		if max(cfg.Width, cfg.Height) > l.MaxEdge || min(cfg.Width, cfg.Height) < 1 {
			t.Fatalf("page is %d×%d, outside the limits", cfg.Width, cfg.Height)
		}
		if page.BytesOut != len(page.Data) || !page.Reencoded && page.BytesIn-page.Stripped != page.BytesOut {
			t.Fatalf("in %d, stripped %d, out %d, for %d bytes sent", page.BytesIn, page.Stripped, page.BytesOut, len(page.Data))
		}
		if again, ok := strip(kind, page.Data); !ok || len(again) != len(page.Data) {
			t.Fatalf("the page still holds metadata (or a layout the walk refuses): ok=%v, %d → %d bytes", ok, len(page.Data), len(again))
		}
	})
}

// FuzzStrip feeds the metadata walks arbitrary bytes as JPEG and as PNG: they must never panic;
// what they return must be no longer than the input and come back unchanged from a second walk;
// and an input that decodes must decode, after stripping, to exactly the same image. Images are
// decoded only up to 2¹⁸ pixels, so that fuzzing explores layouts rather than allocating.
func FuzzStrip(f *testing.F) {
	for _, name := range []string{"upright-exif1.jpg", "cmyk.jpg", "truncated.jpg", "palette.png", "alpha.png", "truncated.png"} {
		f.Add(read(f, name))
	}
	camera, _ := cameraJPEG(f, 1)
	meta, _ := metaPNG(f, gen.Photo(64, 48))
	base := baseJPEG(f)
	f.Add(camera)
	f.Add(meta)
	f.Add(cat(soi, app0, jfxx, base[2:]))
	f.Add(cat(base[:len(base)-2], []byte{0xff, 0xd0, 0xff, 0xff}, com, eoi, []byte("trailer")))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, f := range formats {
			kind := f.kind
			if kind != "jpeg" && kind != "png" { // the kinds strip walks
				continue
			}
			out, ok := strip(kind, data)
			if !ok {
				continue
			}
			if len(out) > len(data) {
				t.Fatalf("%s: %d bytes became %d", kind, len(data), len(out))
			}
			if again, ok := strip(kind, out); !ok || !bytes.Equal(again, out) {
				t.Fatalf("%s: a second walk changed the output (ok=%v, %d → %d bytes)", kind, ok, len(out), len(again))
			}
			cfg, err := decodeConfig(f.config, bytes.NewReader(data))
			if err != nil || int64(cfg.Width)*int64(cfg.Height) > 1<<18 {
				continue
			}
			in, err := decodeWith(f.decode, bytes.NewReader(data))
			if err != nil {
				continue
			}
			got, err := decodeWith(f.decode, bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%s: decodes before stripping, not after: %v", kind, err)
			}
			if !samePixels(in, got) {
				t.Fatalf("%s: stripping changed the decoded image", kind)
			}
		}
	})
}

// FuzzHEIC feeds the HEIC path arbitrary containers: heif.DecodeConfig must never panic, and Prepare must
// answer with a page or one of intake's codes. The pixel limit is small, so every decode that
// runs is of a small picture in a module whose memory is capped (16 MiB at most): each is
// bounded. Every picture handed to libheif is counted, with its pixels: they must stay within
// what the header's cost charged (heif.Plan), which is within the limits; and the decode's CPU
// time (its worker's, metered) within HEICWork: what the pixel limit lets through must stay
// well within it, so an input stopped there is a finding.
func FuzzHEIC(f *testing.F) {
	for _, name := range []string{"small.heic", "small-irot.heic", "bomb-ispe.heic", "truncated.heic"} {
		data, err := os.ReadFile(filepath.Join(documents, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if grid, err := moduleGrid(); err == nil {
		f.Add(grid) // an iPhone's grid: readGrid's walk
	}
	small, err := os.ReadFile(filepath.Join(documents, "small.heic"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(gen.Grid(small, 3, 3, 700, 500))  // tiles past the picture
	f.Add(gen.Grid(small, 2, 2, 1280, 960)) // within the pixel limit
	if noise, err := os.ReadFile(filepath.Join(documents, "noise.heic")); err == nil {
		f.Add(noise) // the costliest picture per pixel: within HEICWork at the pixel limit
	}
	p := New(Limits{MaxPixels: 1 << 19, MaxDecodeBytes: 16 << 20, MaxEdge: 128}, testRuntime)
	if err := testRuntime.Start(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		heif.DecodeConfig(data) // the container's walks: no panic
		if kind, _ := Sniff(data); kind != "heic" {
			return
		}
		var w heif.Work
		_, herr := p.inspect(data, 0)
		pg, err := p.Prepare(heif.WithWork(context.Background(), &w), data)
		if n := w.Pictures.Load(); n > 0 {
			// What was decoded stays within what was charged: the pictures and pixels of the
			// plan the cost was worked out for, a grid's fallback to a whole decode included.
			if herr != nil {
				t.Fatalf("decoded %d pictures of a file refused from its header: %v", n, herr)
			}
			hh, _ := heif.DecodeConfig(data)
			plan := hh.Plan()
			pics, px := plan.MostPictures, plan.MostPixels
			if n > int64(pics) || w.Pixels.Load() > px || px+heif.PerPicture*int64(pics) > int64(p.l.MaxPixels) {
				t.Fatalf("decoded %d pictures of %d pixels; charged %d of %d (limit %d)", n, w.Pixels.Load(), pics, px, p.l.MaxPixels)
			}
		}
		if errors.Is(err, heif.ErrWork) {
			t.Fatalf("the decode took more than %v of CPU time (a half-megapixel limit): %v", HEICWork, err)
		}
		if err != nil {
			switch problem.CodeOf(err) {
			case problem.ImageUnreadable, problem.ImageTooLarge, problem.PayloadTooLarge:
			default:
				t.Fatalf("code %s: %v", problem.CodeOf(err), err)
			}
			return
		}
		if pg.Width > 128 || pg.Height > 128 || pg.MIME != "image/jpeg" {
			t.Fatalf("page %s %d×%d", pg.MIME, pg.Width, pg.Height)
		}
	})
}

// FuzzPDF feeds the PDF path arbitrary documents: Split and PreparePage must answer with pages
// or one of intake's codes, never panic, and never run past their context (each call is given
// 20 seconds, which the instance's kill enforces: a hang fails as a timeout error).
func FuzzPDF(f *testing.F) {
	for _, name := range []string{"digital.pdf", "rotated.pdf", "encrypted.pdf", "truncated.pdf"} {
		data, err := os.ReadFile(filepath.Join(documents, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/MediaBox[0 0 1 100000]>>endobj\ntrailer<</Root 1 0 R>>"))
	{ // the walk's hostile pages (TestPDFBounds), to mutate from
		var r gen.RawPDF
		f.Add(onePage(&r, r.Nested(36, r.Image(20000, 20000, "", nil, false))))
		r = gen.RawPDF{}
		f.Add(onePage(&r, r.Image(100, 100, "/DCTDecode", gen.Scans(60000, 60000, 1, 1, true), true)))
		r = gen.RawPDF{}
		r.Add(gen.RawPage{W: 595, H: 842, Content: gen.Lines(30_000, 595, 842), Flate: true})
		f.Add(r.Bytes())
		f.Add(gen.BrokenXref(2, 1000))
		for _, s := range workShapes { // and what only the page's work bounds (TestPDFPageWork)
			if !raceEnabled { // each is a kill: see TestPDFPageWork
				f.Add(workShape(s.page))
			}
		}
	}
	p := New(Limits{MaxEdge: 256, MaxBytes: 1 << 20}, testRuntime)
	if err := testRuntime.Start(); err != nil { // compiled once per worker, before its first input
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if kind, _ := Sniff(data); kind != "pdf" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ok := func(err error) {
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("ran to its deadline: %v", err)
			}
			switch problem.CodeOf(err) {
			case problem.ImageUnreadable, problem.ImageTooLarge, problem.DocumentEncrypted, problem.PayloadTooLarge:
			default:
				t.Fatalf("code %s: %v", problem.CodeOf(err), err)
			}
		}
		// The counted work of one document: opened once for its count and its pages, its
		// objects walked and its image streams read within the document's bounds (each
		// bound is checked as it is passed, so one more), and the instances alive capped
		// within the decode memory.
		opens, walked, raw := testRuntime.stats.opens.Load(), testRuntime.stats.walked.Load(), testRuntime.stats.raw.Load()
		overruns := testRuntime.stats.overruns.Load()
		testRuntime.stats.livePeak.Store(testRuntime.stats.live.Load())
		testRuntime.stats.worked.Store(0)
		n, err := p.Split(ctx, data)
		ok(err)
		for i := range min(n, 2) {
			pg, err := p.PreparePage(ctx, data, i)
			ok(err)
			if err == nil && (max(pg.Width, pg.Height) > 256 || pg.MIME != "image/jpeg") {
				t.Fatalf("page %d: %s %d×%d", i+1, pg.MIME, pg.Width, pg.Height)
			}
		}
		// Once, and once more after each page stopped at PDFPageWork (its instance killed).
		if got, kills := testRuntime.stats.opens.Load()-opens, testRuntime.stats.overruns.Load()-overruns; got > 1+kills {
			t.Errorf("opened %d times, %d pages stopped for their work", got, kills)
		}
		// Each page's reading and drawing is stopped at PDFPageWork of its thread's CPU time,
		// found within a tick of the meter; the second is slack for a watcher that waits for
		// a core on a loaded machine (it is no assertion of speed: uncut, these run to 135 s).
		if got := time.Duration(testRuntime.stats.worked.Load()); got > PDFPageWork+time.Second {
			t.Errorf("one page was charged %v of CPU time; the bound is %v", got, PDFPageWork)
		}
		if got := testRuntime.stats.walked.Load() - walked; got > pdfDocFactor*maxPageObjects+1 {
			t.Errorf("walked %d objects; the bound is %d", got, pdfDocFactor*maxPageObjects)
		}
		if got := testRuntime.stats.raw.Load() - raw; got > 2*p.l.MaxBytes+int64(len(data)) {
			t.Errorf("read %d bytes of image streams from %d bytes", got, len(data))
		}
		if got := testRuntime.stats.livePeak.Load(); got > p.l.DecodeMemory {
			t.Errorf("instances capped at %s alive at once; the decode memory is %s", mib(got), mib(p.l.DecodeMemory))
		}
	})
}

// fuzzBlocks is the blocks of a TIFF's first page, 0 for any other file.
func fuzzBlocks(data []byte) int64 {
	pages, err := tiff.Pages(data)
	if err != nil {
		return 0
	}
	n, _, _ := pages[0].Blocks()
	return n
}
