package intake

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
	"github.com/ocrdraft/ocrdraft/problem"
)

// pngHeader is a PNG of w×h pixels of the given colour type and depth, interlaced or not, whose
// IDAT inflates to raw bytes: what a decoder that trusts the header would start on.
func pngHeader(w, h int, depth, typ byte, interlaced bool, raw []byte) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, depth, typ, 0, 0, 0)
	if interlaced {
		ihdr[12] = 1
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	return cat([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", string(ihdr)), chunk("IDAT", z.String()), chunk("IEND", ""))
}

// webpHeader is a RIFF WebP of the given chunks.
func webpHeader(chunks ...string) []byte {
	body := "WEBP"
	for _, c := range chunks {
		body += c
		if len(c)%2 == 1 {
			body += "\x00"
		}
	}
	return cat([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body))), []byte(body))
}

func riffChunk(id, data string) string {
	return id + string(binary.LittleEndian.AppendUint32(nil, uint32(len(data)))) + data
}

// vp8l is a VP8L chunk whose header declares w×h and whose data is cut short.
func vp8l(w, h int) string {
	v := uint32(w-1) | uint32(h-1)<<14
	return riffChunk("VP8L", string([]byte{0x2f, byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24), 0, 0, 0}))
}

// lossyWebP is a w×h lossy WebP: a VP8 key frame's tag (key frame, version 0, shown, the first
// partition's size), start code and size, then partitions of zeros, which x/image/vp8 decodes as
// grey macroblocks.
func lossyWebP(w, h int) []byte {
	const part = 1 << 18
	tag := uint32(1<<4 | part<<5)
	vp8 := []byte{byte(tag), byte(tag >> 8), byte(tag >> 16), 0x9d, 0x01, 0x2a, byte(w), byte(w >> 8), byte(h), byte(h >> 8)}
	return webpHeader(riffChunk("VP8 ", string(append(vp8, make([]byte, part+1<<20)...))))
}

// TestDecodeBounds: every image whose decode would cost more than the limits is refused from its
// headers, with image_too_large and a detail that says what to do, before any decoding; a costly
// image within them is accepted.
func TestDecodeBounds(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		limits Limits
		code   problem.Code // "" for success
		detail string
	}{
		// The bomb: 13 KB, 6320×6320, 200 refinement scans, 20 s of CPU.
		{name: "200 progressive scans", data: gen.Scans(6320, 6320, 3, 200, true),
			code: problem.ImageTooLarge, detail: "the JPEG has 200 scans; the limit is 64: save it again as a baseline (non-progressive) JPEG"},
		{name: "65 scans on a small image", data: gen.Scans(64, 64, 1, 65, true),
			code: problem.ImageTooLarge, detail: "65 scans; the limit is 64"},
		{name: "64 scans on a small image", data: gen.Scans(64, 64, 1, 64, true)},
		// A few hundred bytes within the pixel limit, which holds 3×40 megapixels of coefficients.
		{name: "progressive coefficients", data: gen.Scans(6320, 6320, 3, 3, true),
			code: problem.ImageTooLarge, detail: "decoding this 6320×6320 progressive JPEG would take 571.4 MiB of memory; the limit is 305.2 MiB: save it again as a baseline (non-progressive) JPEG, or downscale it"},
		{name: "progressive grey at the pixel limit", data: gen.Scans(6320, 6320, 1, 10, true)},
		{name: "progressive scans over the work limit", data: gen.Scans(6320, 6320, 1, 20, true),
			code: problem.ImageTooLarge, detail: "would take 878 million samples of work (20 scans); the limit is 640 million"},
		{name: "baseline scans over the work limit", data: gen.Scans(6320, 6320, 3, 2, false),
			code: problem.ImageTooLarge, detail: "decoding this 6320×6320 JPEG would take 718 million samples of work (2 scans); the limit is 640 million: save it again as a single-scan JPEG, or downscale it"},
		{name: "baseline at the pixel limit", data: gen.Scans(6320, 6320, 3, 1, false)},
		{name: "work limit set lower", data: gen.Scans(640, 480, 3, 10, true), limits: Limits{MaxDecodeWork: 1e6},
			code: problem.ImageTooLarge, detail: "the limit is 1 million"},

		// PNG: 8 bytes a pixel at 16 bits, twice over when interlaced.
		{name: "interlaced 16-bit RGBA PNG", data: pngHeader(6000, 6000, 16, 6, true, nil),
			code: problem.ImageTooLarge, detail: "decoding this 6000×6000 interlaced PNG would take 549.4 MiB of memory; the limit is 305.2 MiB: downscale it, a long edge of 2048 pixels is enough"},
		{name: "16-bit RGBA PNG", data: pngHeader(6000, 6000, 16, 6, false, nil)},
		{name: "grey PNG with tRNS", data: func() []byte {
			b := pngHeader(6000, 6000, 16, 0, true, nil)
			return cat(b[:33], chunk("tRNS", "\x00\x00"), b[33:])
		}(), code: problem.ImageTooLarge, detail: "549.4 MiB"},

		// WebP: a lossless file holds its pixels twice and up to 2600 groups of Huffman tables.
		{name: "lossless WebP", data: webpHeader(vp8l(16000, 2400)),
			code: problem.ImageTooLarge, detail: "decoding this 16000×2400 lossless WebP would take"},
		{name: "animated WebP", data: webpHeader(riffChunk("VP8X", "\x02\x00\x00\x00\x3f\x00\x00\x3f\x00\x00"), riffChunk("ANIM", "\x00\x00\x00\x00\x00\x00"), riffChunk("ANMF", strings.Repeat("\x00", 24))),
			code: problem.ImageUnreadable, detail: "a WebP image but is truncated or corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.limits, testRuntime)
			if tt.code == "" { // accepted: decoding them takes seconds under the race detector
				if _, err := p.inspect(tt.data, 0); err != nil {
					t.Fatalf("%d bytes: got %v, want it accepted", len(tt.data), err)
				}
				return
			}
			decoded := false
			p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) { decoded = true; return next(r) }
			_, err := p.Prepare(t.Context(), tt.data)
			if got := problem.CodeOf(err); err != nil && got != tt.code || err == nil && tt.code != "" {
				t.Fatalf("%d bytes: got %v, want %q", len(tt.data), err, tt.code)
			}
			var pe *problem.Error
			if errors.As(err, &pe) && !strings.Contains(pe.Detail, tt.detail) {
				t.Errorf("detail %q\nwant it to hold %q", pe.Detail, tt.detail)
			}
			if tt.code == problem.ImageTooLarge && decoded {
				t.Errorf("refused after decoding; want it refused from the headers")
			}
		})
	}
}

// countingReader counts the bytes a decoder reads.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += n
	return n, err
}

// TestDecodersStopEarly: what the header does not account for is never read. A PNG's zlib stream
// is inflated only as far as its rows (a 64×64 image with 16 MiB of zeros behind it is refused
// after a few kilobytes), and a GIF is read only to the end of its first frame.
func TestDecodersStopEarly(t *testing.T) {
	var frames gif.GIF
	pal := color.Palette{color.White, color.Black}
	for range 500 {
		frames.Image = append(frames.Image, image.NewPaletted(image.Rect(0, 0, 64, 64), pal))
		frames.Delay = append(frames.Delay, 1)
	}
	var anim bytes.Buffer
	if err := gif.EncodeAll(&anim, &frames); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		code problem.Code
		max  int // bytes the decoder may read
	}{
		{"zlib bomb in a small PNG", pngHeader(64, 64, 8, 0, false, make([]byte, 16<<20)), problem.ImageUnreadable, 64 << 10},
		{"GIF of 500 frames", anim.Bytes(), "", 8 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Limits{}, testRuntime)
			var read int
			p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) {
				c := &countingReader{r: r}
				defer func() { read = c.n }()
				return next(c)
			}
			_, err := p.Prepare(t.Context(), tt.data)
			if problem.CodeOf(err) != tt.code && (err != nil || tt.code != "") {
				t.Fatalf("got %v, want %q", err, tt.code)
			}
			if read > tt.max {
				t.Errorf("the decoder read %d of %d bytes; want at most %d", read, len(tt.data), tt.max)
			}
			t.Logf("read %d of %d bytes", read, len(tt.data))
		})
	}
}

// TestDecodePastDeadline: a decode that outlives its request's deadline does not hold the caller:
// Prepare answers at the deadline with the context's error, which the server maps like any
// request deadline. The abandoned decode keeps its slot until it ends, so that the slots still
// count the memory in use, and gives it back then. The decoder here blocks until released.
func TestDecodePastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Limits{}, testRuntime)
		p.sem = make(chan struct{}, 1)
		release := make(chan struct{})
		var started atomic.Int32
		p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) {
			started.Add(1)
			<-release
			return next(r)
		}
		data := read(t, "alpha.png") // decoded: it must be flattened

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, err := p.Prepare(ctx, data)
		if !errors.Is(err, context.DeadlineExceeded) || problem.CodeOf(err) != problem.Internal {
			t.Fatalf("got %v; want the context's deadline error, for the server to map", err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("answered after %v; want at the deadline, 10s", d)
		}

		// The slot is still held by the abandoned decode: the next upload waits, and is
		// overloaded when its own deadline passes.
		ctx2, cancel2 := context.WithTimeout(t.Context(), time.Second)
		defer cancel2()
		if _, err := p.Prepare(ctx2, data); problem.CodeOf(err) != problem.Overloaded {
			t.Fatalf("while the abandoned decode runs: got %v, want overloaded", err)
		}

		// A caller that leaves is answered at once too.
		close(release) // the first decode ends (at its next read: its context is done)
		synctest.Wait()
		if n := len(p.sem); n != 0 {
			t.Fatalf("%d slots held after the abandoned decode ended", n)
		}
		release = make(chan struct{})
		ctx3, cancel3 := context.WithCancel(t.Context())
		go func() {
			defer cancel3()
			if err := testwait.Until("the second decode to start", func() bool { return started.Load() >= 2 }); err != nil {
				t.Error(err)
			}
		}()
		if _, err := p.Prepare(ctx3, data); !errors.Is(err, context.Canceled) {
			t.Fatalf("caller gone: got %v, want context.Canceled", err)
		}
		close(release)
		synctest.Wait()

		// And a decode that ends in time is answered as usual.
		if _, err := p.Prepare(t.Context(), data); err != nil {
			t.Fatal(err)
		}
		if started.Load() != 3 {
			t.Errorf("%d decodes started; want 3 (the overloaded one never started)", started.Load())
		}
	})
}

// TestCostCoversAllocation checks each decoder's formula against what the decoder allocates,
// measured: the estimate must cover the allocation (with the file and 1 MiB of the decoder's own
// state over) and, where the headers tell all, be no more than twice it, or the bounds would
// refuse images for nothing. A lossless WebP's Huffman tables are known only once decoded, so its
// estimate takes the most x/image/vp8l allows (138 MB), which a 650 KB file can reach.
func TestCostCoversAllocation(t *testing.T) {
	var rgb16 bytes.Buffer
	row := make([]byte, 1+8*300)
	for range 300 {
		rgb16.Write(row)
	}
	var anim bytes.Buffer
	gif.Encode(&anim, image.NewPaletted(image.Rect(0, 0, 500, 400), color.Palette{color.White, color.Black}), nil)
	var photo bytes.Buffer
	jpeg.Encode(&photo, gen.Photo(640, 480), nil)
	tests := []struct {
		name  string
		data  []byte
		loose bool // the estimate is the decoder's worst case
	}{
		{"progressive colour JPEG", gen.Scans(1000, 800, 3, 10, true), false},
		{"progressive grey JPEG", gen.Scans(1000, 800, 1, 10, true), false},
		{"baseline colour JPEG", gen.Scans(1000, 800, 3, 1, false), false},
		{"4:2:0 JPEG", photo.Bytes(), false},
		{"CMYK JPEG", gen.CMYKJPEG(512, 512, func(x, y int) color.CMYK { return color.CMYK{C: uint8(x)} }), false},
		{"16-bit RGBA PNG", pngHeader(300, 300, 16, 6, false, rgb16.Bytes()), false},
		{"GIF", anim.Bytes(), false},
		{"lossy WebP", lossyWebP(640, 480), false},
		{"lossless WebP", gen.WebP(600, 500, func(x, y int) bool { return (x^y)&8 == 0 }), true},
	}
	p := New(Limits{}, testRuntime)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := p.inspect(tt.data, 0)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = decode(h, tt.data)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			got, est := int64(after.TotalAlloc-before.TotalAlloc), h.cost.mem
			if got > est+int64(len(tt.data))+1<<20 || !tt.loose && est > 2*got+1<<20 {
				t.Errorf("allocated %d bytes; the headers said %d", got, est)
			}
			t.Logf("allocated %d bytes; the headers said %d", got, est)
		})
	}
}

// TestDecodeMemory: decodes take their cost from the decode memory before a slot, so two that
// together cost more than Limits.DecodeMemory do not run at once, however many slots are free;
// the second starts when the first ends, and one that waits past its deadline is overloaded.
func TestDecodeMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := read(t, "alpha.png")
		probe := New(Limits{}, testRuntime)
		h, err := probe.inspect(data, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := New(Limits{DecodeMemory: h.cost.mem*2 - 1}, testRuntime) // room for one decode, not two
		p.sem = make(chan struct{}, 4)
		release := make(chan struct{})
		var started atomic.Int32
		p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) {
			started.Add(1)
			<-release
			return next(r)
		}
		errs := make(chan error, 2)
		for range 2 {
			go func() { _, err := p.Prepare(t.Context(), data); errs <- err }()
		}
		synctest.Wait()
		if n := started.Load(); n != 1 {
			t.Fatalf("%d decodes running; want 1, the other waiting for memory", n)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := p.Prepare(ctx, data); problem.CodeOf(err) != problem.Overloaded {
			t.Fatalf("a third past its deadline: got %v, want overloaded", err)
		}
		release <- struct{}{}
		synctest.Wait()
		if n := started.Load(); n != 2 {
			t.Fatalf("%d decodes started after the first ended; want 2", n)
		}
		close(release)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	})
}
