package intake

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/problem"
)

// images is testdata/images at the repository root, made by intake/internal/gen.
var images = filepath.Join("..", "testdata", "images")

// samples is shared/samples beside the repository (the real sample photos); tests that use it
// skip when it is absent.
var samples = filepath.Join("..", "..", "shared", "samples")

// testRuntime is the tests' WebAssembly runtime, shared so that PDFium and libheif are compiled
// once for the package's tests, as main's is for the process.
var testRuntime = NewRuntime("")

// testPrep is a Preparer of the default limits on testRuntime, for the decoders' own tests.
var testPrep = New(Limits{}, testRuntime)

// TestMain closes testRuntime once the tests are done: its HEIC workers end and their private
// directory goes.
func TestMain(m *testing.M) {
	code := m.Run()
	testRuntime.Close()
	os.Exit(code)
}

// decode decodes the whole image h describes, without a deadline; for a GIF, the first frame.
func decode(h header, data []byte) (image.Image, error) {
	return decodeWith(h.decode(context.Background(), testPrep, data), h.reader(data))
}

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(images, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPrepare covers every intake rule with one upload each.
func TestPrepare(t *testing.T) {
	scan := read(t, "scan.jpg")
	corrupt := bytes.Clone(read(t, "palette.png"))
	corrupt[len(corrupt)-20] ^= 0xff // inside IDAT: the checksum no longer matches
	tests := []struct {
		name   string
		data   []byte
		limits Limits

		code   problem.Code // "" for success
		detail string       // a substring of the error's detail

		mime      string
		w, h      int
		reencoded bool
		stripped  int // bytes of metadata left out
	}{
		// As their own bytes: JPEG or PNG, upright, 8-bit, within the limits; metadata left out.
		{name: "grey scan JPEG", data: scan, mime: "image/jpeg", w: 1240, h: 1754},
		{name: "JPEG with orientation 1", data: read(t, "upright-exif1.jpg"), mime: "image/jpeg", w: 600, h: 800, stripped: 36}, // its APP1
		{name: "opaque palette PNG", data: read(t, "palette.png"), mime: "image/png", w: 200, h: 300},

		// Re-encoded as JPEG.
		{name: "phone photo, orientation 6", data: read(t, "phone-exif6.jpg"), mime: "image/jpeg", w: 1536, h: 2048, reencoded: true},
		{name: "PNG with alpha", data: read(t, "alpha.png"), mime: "image/jpeg", w: 300, h: 200, reencoded: true},
		{name: "16-bit grey PNG", data: read(t, "grey16.png"), mime: "image/jpeg", w: 200, h: 300, reencoded: true},
		{name: "CMYK JPEG", data: read(t, "cmyk.jpg"), mime: "image/jpeg", w: 128, h: 96, reencoded: true},
		{name: "lossless WebP", data: read(t, "bilevel.webp"), mime: "image/jpeg", w: 160, h: 120, reencoded: true},
		{name: "GIF", data: read(t, "anim.gif"), mime: "image/jpeg", w: 64, h: 64, reencoded: true},
		{name: "TIFF", data: read(t, "scan.tiff"), mime: "image/jpeg", w: 64, h: 90, reencoded: true},
		{name: "fax TIFF, its first page", data: read(t, "fax.tiff"), mime: "image/jpeg", w: 864, h: 1100, reencoded: true},
		{name: "fax in normal mode, rows doubled", data: read(t, "fax-normal.tiff"), mime: "image/jpeg", w: 864, h: 1100, reencoded: true},
		{name: "BMP", data: read(t, "scan.bmp"), mime: "image/jpeg", w: 64, h: 90, reencoded: true},
		{name: "scan longer than MaxEdge", data: scan, limits: Limits{MaxEdge: 1000}, mime: "image/jpeg", w: 707, h: 1000, reencoded: true},

		// unsupported_media_type: the detail names the file and what to send.
		{name: "HEIC header only", data: read(t, "photo.heic"), code: problem.ImageUnreadable, detail: "a HEIC/HEIF image but is truncated or corrupt"},
		{name: "ZIP", data: []byte("PK\x03\x04\x14\x00\x00\x00"), code: problem.UnsupportedMediaType, detail: "the file is a ZIP archive or Office document; send each page as a JPEG or PNG image, or the report as a PDF"},
		{name: "text", data: []byte("总胆固醇 5.86 mmol/L"), code: problem.UnsupportedMediaType, detail: "not a JPEG, PNG, WebP, GIF, HEIC, TIFF or BMP image or a PDF"},
		{name: "JPEG named by extension only", data: []byte("not really\xff\xd8\xff"), code: problem.UnsupportedMediaType},

		// image_unreadable.
		{name: "empty", data: read(t, "empty.jpg"), code: problem.ImageUnreadable, detail: "empty"},
		{name: "truncated JPEG", data: read(t, "truncated.jpg"), code: problem.ImageUnreadable, detail: "a JPEG image but is truncated or corrupt"},
		{name: "truncated PNG", data: read(t, "truncated.png"), code: problem.ImageUnreadable, detail: "truncated or corrupt"},
		{name: "PNG with bad checksum", data: corrupt, code: problem.ImageUnreadable, detail: "truncated or corrupt"},
		{name: "JPEG signature only", data: []byte("\xff\xd8\xff\xe0"), code: problem.ImageUnreadable},
		{name: "WebP header only", data: []byte("RIFF\x04\x00\x00\x00WEBP"), code: problem.ImageUnreadable},
		{name: "8×8 image", data: read(t, "tiny.png"), code: problem.ImageUnreadable, detail: "only 8×8 pixels; each side must be at least 32"},

		// payload_too_large and image_too_large.
		{name: "over the byte limit", data: scan, limits: Limits{MaxBytes: 10_000}, code: problem.PayloadTooLarge, detail: "is 77.3 KiB; that is more than the 9.8 KiB limit"},
		{name: "PNG bomb", data: read(t, "bomb.png"), code: problem.ImageTooLarge, detail: "40000×40000 pixels (1600.0 megapixels); the limit is 40.0 megapixels"},
		{name: "over MaxPixels", data: scan, limits: Limits{MaxPixels: 2_000_000}, code: problem.ImageTooLarge, detail: "1240×1754"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := New(tt.limits, testRuntime).Prepare(context.Background(), tt.data)
			if tt.code != "" {
				var pe *problem.Error
				if !errors.As(err, &pe) {
					t.Fatalf("got %v (%T), want a *problem.Error %s", err, err, tt.code)
				}
				if pe.Code != tt.code || !strings.Contains(pe.Detail, tt.detail) {
					t.Fatalf("got %s %q, want %s containing %q", pe.Code, pe.Detail, tt.code, tt.detail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if page.MIME != tt.mime || page.Width != tt.w || page.Height != tt.h || page.Reencoded != tt.reencoded || page.Stripped != tt.stripped {
				t.Fatalf("got %s %d×%d reencoded=%v stripped=%d, want %s %d×%d reencoded=%v stripped=%d",
					page.MIME, page.Width, page.Height, page.Reencoded, page.Stripped, tt.mime, tt.w, tt.h, tt.reencoded, tt.stripped)
			}
			if page.BytesIn != len(tt.data) || page.BytesOut != len(page.Data) {
				t.Errorf("BytesIn, BytesOut = %d, %d; want %d, %d", page.BytesIn, page.BytesOut, len(tt.data), len(page.Data))
			}
			if !tt.reencoded {
				want := tt.data
				if tt.stripped > 0 { // the fixtures hold their metadata right after SOI
					want = append(tt.data[:2:2], tt.data[2+tt.stripped:]...)
				} else if &page.Data[0] != &tt.data[0] {
					t.Error("an upload with nothing to remove was copied")
				}
				if !bytes.Equal(page.Data, want) {
					t.Error("an upload that needs no change was re-encoded")
				}
			}
			m, kind, err := image.Decode(bytes.NewReader(page.Data))
			if err != nil {
				t.Fatalf("the output does not decode: %v", err)
			}
			if "image/"+kind != page.MIME || m.Bounds().Dx() != page.Width || m.Bounds().Dy() != page.Height {
				t.Errorf("output is %s %v; Page says %s %d×%d", kind, m.Bounds(), page.MIME, page.Width, page.Height)
			}
		})
	}
}

// TestBombNotDecoded checks that a PNG declaring 40000×40000 pixels is turned away for the
// price of its header: decoding it would allocate 4.8 GB.
func TestBombNotDecoded(t *testing.T) {
	p, bomb := New(Limits{}, testRuntime), read(t, "bomb.png")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := p.Prepare(context.Background(), bomb)
	runtime.ReadMemStats(&after)
	if problem.CodeOf(err) != problem.ImageTooLarge {
		t.Fatalf("got %v, want image_too_large", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("rejecting the bomb allocated %d bytes; it must not reach the decoder", n)
	}
}

// quadrants is a 96×48 image (48×96 when tall) whose four quadrants have the given colours.
func quadrants(w, h int, tl, tr, bl, br color.RGBA) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for _, q := range []struct {
		r image.Rectangle
		c color.RGBA
	}{
		{image.Rect(0, 0, w/2, h/2), tl}, {image.Rect(w/2, 0, w, h/2), tr},
		{image.Rect(0, h/2, w/2, h), bl}, {image.Rect(w/2, h/2, w, h), br},
	} {
		draw.Draw(m, q.r, image.NewUniform(q.c), image.Point{}, draw.Src)
	}
	return m
}

// TestOrientations stores one upright picture (red, green over blue, yellow) as a camera would
// for each EXIF orientation and checks that intake turns it upright. The stored corners are
// written out from the EXIF definitions, not computed, so that this test does not share a
// mistake with the code: orientation 6 ("right-top") stores the upright right edge as row 0.
func TestOrientations(t *testing.T) {
	r, g, b, y := color.RGBA{220, 30, 30, 255}, color.RGBA{30, 200, 30, 255}, color.RGBA{30, 30, 220, 255}, color.RGBA{230, 220, 30, 255}
	tests := []struct {
		o              int
		tl, tr, bl, br color.RGBA // of the stored image
	}{
		{1, r, g, b, y},
		{2, g, r, y, b}, // mirrored
		{3, y, b, g, r}, // upside down
		{4, b, y, r, g}, // mirrored upside down
		{5, r, b, g, y}, // transposed
		{6, g, y, r, b}, // turned anticlockwise: turn clockwise to view
		{7, y, g, b, r}, // transverse
		{8, b, r, y, g}, // turned clockwise: turn anticlockwise to view
		{0, r, g, b, y}, // out of range: ignored
		{9, r, g, b, y},
	}
	for _, tt := range tests {
		w, h := 96, 48
		if tt.o >= 5 && tt.o <= 8 {
			w, h = h, w
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, quadrants(w, h, tt.tl, tt.tr, tt.bl, tt.br), &jpeg.Options{Quality: 95}); err != nil {
			t.Fatal(err)
		}
		page, err := New(Limits{}, testRuntime).Prepare(context.Background(), gen.WithExif(buf.Bytes(), tt.o))
		if err != nil {
			t.Fatalf("orientation %d: %v", tt.o, err)
		}
		if wantRe := tt.o >= 2 && tt.o <= 8; page.Reencoded != wantRe {
			t.Errorf("orientation %d: reencoded = %v, want %v", tt.o, page.Reencoded, wantRe)
		}
		m, err := jpeg.Decode(bytes.NewReader(page.Data))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Bounds(); got != image.Rect(0, 0, 96, 48) {
			t.Fatalf("orientation %d: output %v, want 96×48 upright", tt.o, got)
		}
		for _, c := range []struct {
			x, y int
			want color.RGBA
		}{{24, 12, r}, {72, 12, g}, {24, 36, b}, {72, 36, y}} {
			if got := m.At(c.x, c.y); !near(got, c.want) {
				t.Errorf("orientation %d: pixel (%d,%d) = %v, want about %v", tt.o, c.x, c.y, got, c.want)
			}
		}
	}
}

// near reports whether c is within a JPEG round trip of want.
func near(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { return max(a>>8, uint32(b))-min(a>>8, uint32(b)) <= 40 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// TestPixels checks what normalisation does to the pixels, one property per fixture.
func TestPixels(t *testing.T) {
	white, ink := color.RGBA{255, 255, 255, 255}, color.RGBA{0x10, 0x10, 0x10, 255}
	tests := []struct {
		file  string
		x, y  int
		want  color.RGBA
		model color.Model // of the decoded output
	}{
		{"alpha.png", 1, 1, white, color.YCbCrModel},                              // transparent → white
		{"alpha.png", 150, 195, color.RGBA{127, 127, 255, 255}, color.YCbCrModel}, // half-transparent blue over white
		{"alpha.png", 430 * 300 / 1240, 100 * 300 / 1240, ink, color.YCbCrModel},  // the title bar stays ink
		{"grey16.png", 1, 1, color.RGBA{0xf0, 0xf0, 0xf0, 255}, color.GrayModel},  // 16 → 8 bits, still grey
		{"cmyk.jpg", 8, 8, color.RGBA{0, 255, 255, 255}, color.YCbCrModel},        // cyan ink
		{"cmyk.jpg", 56, 8, color.RGBA{0, 0, 0, 255}, color.YCbCrModel},           // black ink
		{"cmyk.jpg", 72, 8, white, color.YCbCrModel},                              // no ink
		{"bilevel.webp", 1, 1, color.RGBA{0x20, 0x20, 0x20, 255}, color.YCbCrModel},
		{"bilevel.webp", 50, 16, color.RGBA{0xf0, 0xf0, 0xf0, 255}, color.YCbCrModel},
		{"anim.gif", 32, 32, color.RGBA{0, 0, 0, 255}, color.YCbCrModel}, // first frame: black square
		{"anim.gif", 4, 4, white, color.YCbCrModel},
	}
	for _, tt := range tests {
		page, err := New(Limits{}, testRuntime).Prepare(context.Background(), read(t, tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		m, err := jpeg.Decode(bytes.NewReader(page.Data))
		if err != nil {
			t.Fatal(err)
		}
		if m.ColorModel() != tt.model {
			t.Errorf("%s: output colour model %v, want %v", tt.file, m.ColorModel(), tt.model)
		}
		if got := m.At(tt.x, tt.y); !near(got, tt.want) {
			t.Errorf("%s: pixel (%d,%d) = %v, want about %v", tt.file, tt.x, tt.y, got, tt.want)
		}
	}
}

// TestShrinkAverages shrinks one-pixel stripes by about 2× or more: every output pixel must be
// near the mean grey. A scaler that samples rather than averages (x/image/draw's ApproxBiLinear,
// at 1.97× as well as beyond 2×) makes anything from black to white of them, which is what
// happens to the thin strokes of small print.
func TestShrinkAverages(t *testing.T) {
	stripes := image.NewGray(image.Rect(0, 0, 256, 256))
	for i := range stripes.Pix {
		if i%2 == 0 {
			stripes.Pix[i] = 0xff
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, stripes); err != nil {
		t.Fatal(err)
	}
	for _, edge := range []int{130, 128, 64, 33} { // 1.97× (a 12-megapixel photo), 2×, 4×, 7.8×
		page, err := New(Limits{MaxEdge: edge}, testRuntime).Prepare(context.Background(), buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		m, err := jpeg.Decode(bytes.NewReader(page.Data))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := m.(*image.Gray)
		if !ok || g.Rect.Dx() != edge {
			t.Fatalf("MaxEdge %d: got %T %v, want a grey %d×%d", edge, m, m.Bounds(), edge, edge)
		}
		lo, hi := byte(255), byte(0)
		for _, v := range g.Pix {
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo < 0x60 || hi > 0xa0 {
			t.Errorf("MaxEdge %d: pixels range %d–%d, want all near 128", edge, lo, hi)
		}
	}
}

// TestGIFFrame checks a GIF whose first frame covers only part of its canvas: the rest of the
// canvas is white, as a viewer shows it.
func TestGIFFrame(t *testing.T) {
	frame := image.NewPaletted(image.Rect(16, 16, 48, 48), color.Palette{color.Black})
	var buf bytes.Buffer
	err := gif.EncodeAll(&buf, &gif.GIF{
		Image: []*image.Paletted{frame}, Delay: []int{0},
		Config: image.Config{ColorModel: frame.Palette, Width: 64, Height: 64},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		limits         Limits
		size           int // of the output, square
		corner, centre int // a white and a black pixel on the diagonal
	}{
		{Limits{}, 64, 4, 32},            // as it is
		{Limits{MaxEdge: 32}, 32, 2, 16}, // shrunk
	}
	for _, tt := range tests {
		page, err := New(tt.limits, testRuntime).Prepare(context.Background(), buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		m, err := jpeg.Decode(bytes.NewReader(page.Data))
		if err != nil {
			t.Fatal(err)
		}
		if m.Bounds() != image.Rect(0, 0, tt.size, tt.size) {
			t.Fatalf("MaxEdge %d: output %v, want %d×%d", tt.limits.MaxEdge, m.Bounds(), tt.size, tt.size)
		}
		c, k := m.At(tt.corner, tt.corner), m.At(tt.centre, tt.centre)
		if !near(c, color.RGBA{255, 255, 255, 255}) || !near(k, color.RGBA{0, 0, 0, 255}) {
			t.Errorf("MaxEdge %d: corner %v, centre %v; want white around a black frame", tt.limits.MaxEdge, c, k)
		}
	}
}

// TestPhoto checks the generated phone photo comes out upright: the page is lit from the top
// left, and its title bar is near the top in the middle.
func TestPhoto(t *testing.T) {
	page, err := New(Limits{}, testRuntime).Prepare(context.Background(), read(t, "phone-exif6.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := jpeg.Decode(bytes.NewReader(page.Data))
	if err != nil {
		t.Fatal(err)
	}
	lum := func(x, y int) uint32 { r, g, b, _ := m.At(x, y).RGBA(); return (r + g + b) / 3 >> 8 }
	if tl, br := lum(200, 150), lum(1330, 1900); tl <= br+10 {
		t.Errorf("top left of the page (%d) is not brighter than the bottom right (%d): not upright", tl, br)
	}
	if l := lum(768, 210); l > 0x60 {
		t.Errorf("no title bar at the top middle (luminance %d): not upright", l)
	}
}

// TestSample prepares the real sample phone photo from shared/samples when it is there.
func TestSample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(samples, "lipid-panel-phone-exif6.jpg"))
	if err != nil {
		t.Skip("shared/samples not beside the repository:", err)
	}
	page, err := New(Limits{}, testRuntime).Prepare(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if page.Width != 1536 || page.Height != 2048 || !page.Reencoded {
		t.Errorf("got %d×%d reencoded=%v, want 1536×2048 re-encoded (portrait)", page.Width, page.Height, page.Reencoded)
	}
}

// TestNothingRetained checks that the decoded pixels (18 MB for the 12-megapixel photo) are
// garbage once Prepare returns: only the output page may stay.
func TestNothingRetained(t *testing.T) {
	p, data := New(Limits{}, testRuntime), read(t, "phone-exif6.jpg")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	page, err := p.Prepare(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > int64(4*len(page.Data))+4<<20 {
		t.Errorf("heap grew by %d bytes across Prepare; pixels were kept", grew)
	}
	runtime.KeepAlive(page)
}

// TestQueue checks the semaphore: with every slot taken, Prepare waits, gives up with overloaded
// when its context ends, and goes ahead when a slot frees.
func TestQueue(t *testing.T) {
	p, data := New(Limits{}, testRuntime), read(t, "cmyk.jpg")
	for range cap(p.sem) {
		p.sem <- struct{}{}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Prepare(ctx, data)
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.Overloaded || pe.RetryAfter <= 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while queued: got %v, want overloaded wrapping context.Canceled", err)
	}

	done := make(chan error)
	go func() {
		_, err := p.Prepare(context.Background(), data)
		done <- err
	}()
	<-p.sem // free one slot
	if err := <-done; err != nil {
		t.Fatalf("after a slot freed: %v", err)
	}

	// A header error needs no slot, so it is not queued behind the busy decoders.
	if _, err := p.Prepare(ctx, []byte("PK\x03\x04\x14\x00")); problem.CodeOf(err) != problem.UnsupportedMediaType {
		t.Fatalf("ZIP while busy: got %v", err)
	}
}

// TestConcurrent runs many small uploads at once, for the race detector.
func TestConcurrent(t *testing.T) {
	p := New(Limits{}, testRuntime)
	names := []string{"alpha.png", "cmyk.jpg", "bilevel.webp", "anim.gif", "grey16.png", "palette.png", "tiny.png"}
	var wg sync.WaitGroup
	for i := range 4 * len(names) {
		data := read(t, names[i%len(names)])
		wg.Go(func() { p.Prepare(context.Background(), data) })
	}
	wg.Wait()
}

// TestSniff covers the signature table, including the kinds only named in errors.
func TestSniff(t *testing.T) {
	tests := []struct {
		in   string
		kind string
		ok   bool
	}{
		{"\xff\xd8\xff\xe0", "jpeg", true},
		{"\x89PNG\r\n\x1a\n", "png", true},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "webp", true},
		{"GIF87a", "gif", true},
		{"GIF89a", "gif", true},
		{"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic", "heic", true},
		{"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1heic", "heic", true},
		{"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf", "avif", false},
		{"\x00\x00\x00\x1cftypmif1\x00\x00\x00\x00mif1avif", "avif", false}, // AVIF under a generic brand
		{"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom", "video", false},
		{"\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00qt  ", "video", false},
		{"%PDF-1.7\n", "pdf", true},
		{"\xef\xbb\xbf\n%PDF-1.4", "pdf", true}, // header after junk, as readers allow
		{"II*\x00\x08\x00\x00\x00", "tiff", true},
		{"MM\x00*\x00\x00\x00\x08", "tiff", true},
		{"BM\x36\x00\x0c\x00\x00\x00\x00\x00\x36\x00\x00\x00", "bmp", true},
		{"BMW is not a bitmap", "", false},
		{"\xff\x0a\xfa\x7f", "jxl", false},
		{"PK\x03\x04\x14\x00", "zip", false},
		{"GIF8", "", false},
		{"RIFF\x00\x00\x00\x00WAVE", "", false},
		{"", "", false},
	}
	for i, tt := range tests {
		if kind, ok := Sniff([]byte(tt.in)); kind != tt.kind || ok != tt.ok {
			t.Errorf("#%d %q: got %q, %v; want %q, %v", i, tt.in, kind, ok, tt.kind, tt.ok)
		}
	}
}

// endless is a reader that never ends, counting what it hands out.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestReadAll(t *testing.T) {
	boom := errors.New("connection reset")
	tests := []struct {
		name string
		r    io.Reader
		max  int64
		n    int // bytes wanted back
		code problem.Code
	}{
		{name: "empty", r: strings.NewReader(""), max: 10},
		{name: "under", r: strings.NewReader("123456789"), max: 10, n: 9},
		{name: "at the limit", r: strings.NewReader("1234567890"), max: 10, n: 10},
		{name: "one over", r: strings.NewReader("12345678901"), max: 10, code: problem.PayloadTooLarge},
		{name: "one byte at a time", r: iotest.OneByteReader(strings.NewReader(strings.Repeat("x", 100_000))), max: 100_000, n: 100_000},
		{name: "default limit", r: io.LimitReader(&endless{}, DefaultMaxBytes), max: 0, n: DefaultMaxBytes},
		{name: "default limit, one over", r: io.LimitReader(&endless{}, DefaultMaxBytes+1), max: 0, code: problem.PayloadTooLarge},
		{name: "read error", r: io.MultiReader(strings.NewReader("abc"), errReader{boom}), max: 10, code: problem.InvalidRequest},
		{name: "http.MaxBytesReader", r: http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("12345")), 3), max: 10, code: problem.PayloadTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ReadAll(tt.r, tt.max)
			if problem.CodeOf(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("got %v, want code %q", err, tt.code)
			}
			if tt.code == "" && len(b) != tt.n {
				t.Fatalf("got %d bytes, want %d", len(b), tt.n)
			}
		})
	}
}

// TestReadAllBounded checks that an endless upload is cut at max+1 bytes, read and held.
func TestReadAllBounded(t *testing.T) {
	const max = 1 << 20
	e := &endless{}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadAll(e, max)
	runtime.ReadMemStats(&after)
	if problem.CodeOf(err) != problem.PayloadTooLarge {
		t.Fatalf("got %v, want payload_too_large", err)
	}
	if e.n > max+1 {
		t.Errorf("read %d bytes from the upload; want at most %d", e.n, max+1)
	}
	// Growing by doubling up to max+1 allocates under 2×max in all.
	if n := after.TotalAlloc - before.TotalAlloc; n > 2*max+64<<10 {
		t.Errorf("allocated %d bytes for a %d-byte limit", n, max)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestMiB(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{20 << 20, "20 MiB"},
		{20<<20 + 1<<19, "20.5 MiB"},
		{900 << 10, "900 KiB"},
		{1500, "1.5 KiB"},
		{12, "12 bytes"},
	}
	for _, tt := range tests {
		if got := mib(tt.n); got != tt.want {
			t.Errorf("mib(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
