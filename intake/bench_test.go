package intake

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
)

// BenchmarkPrepare times the whole of Prepare for one upload: decode, shrink, turn and encode for
// the 12-megapixel photos, decode and check for the scan that goes as it is. The target for a
// photo is 300 ms of one core; cpu-ms/op is the process's CPU time per op, GC included, which a
// busy machine disturbs less than ns/op.
//
//	go test -bench . -benchmem -run '^$' ./intake/
func BenchmarkPrepare(b *testing.B) {
	file := func(path string) func(testing.TB) ([]byte, error) {
		return func(testing.TB) ([]byte, error) { return os.ReadFile(path) }
	}
	cases := []struct {
		name string
		load func(testing.TB) ([]byte, error)
	}{
		{"sample-12MP-exif6", file(filepath.Join(samples, "lipid-panel-phone-exif6.jpg"))},
		{"generated-12MP-exif6", file(filepath.Join(images, "phone-exif6.jpg"))},
		{"scan-as-is", file(filepath.Join(images, "scan.jpg"))},
		{"photo-3MP-as-is-stripped", func(tb testing.TB) ([]byte, error) { return photo1MB(tb, true), nil }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data, err := c.load(b)
			if err != nil {
				b.Skip(err)
			}
			p := New(Limits{}, testRuntime)
			b.ReportAllocs()
			start, ok := cpuTime()
			for b.Loop() {
				if _, err := p.Prepare(context.Background(), data); err != nil {
					b.Fatal(err)
				}
			}
			if end, _ := cpuTime(); ok {
				b.ReportMetric(float64(end-start)/1e6/float64(b.N), "cpu-ms/op")
			}
		})
	}
}

// BenchmarkScalers compares the x/image/draw scalers with intake's area average on the step that
// differs between them: a decoded 4032×3024 photo to 2048×1536.
func BenchmarkScalers(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(images, "phone-exif6.jpg"))
	if err != nil {
		b.Fatal(err)
	}
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	scalers := []struct {
		name string
		s    draw.Scaler
	}{
		{"NearestNeighbor", draw.NearestNeighbor},
		{"ApproxBiLinear", draw.ApproxBiLinear},
		{"BiLinear", draw.BiLinear},
		{"CatmullRom", draw.CatmullRom},
	}
	for _, s := range scalers {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst := image.NewRGBA(image.Rect(0, 0, 2048, 1536))
				s.s.Scale(dst, dst.Rect, src, src.Bounds(), draw.Src, nil)
			}
		})
	}
	b.Run("area", func(b *testing.B) { // what Prepare uses: YCbCr planes to 4:2:0
		ycc := src.(*image.YCbCr)
		cw, ch, _ := chroma(ycc)
		b.ReportAllocs()
		for b.Loop() {
			ycbcr(ycc, cw, ch, 2048, 1536, 1)
		}
	})
}

// BenchmarkStrip times the metadata walk alone on a 1 MB-class upright photo, the largest that
// goes as its own bytes: with a phone's metadata (a copy without it is made), and without any
// (the walk only, no copy).
//
//	go test -bench Strip -benchmem -run '^$' ./intake/
func BenchmarkStrip(b *testing.B) {
	for _, meta := range []bool{true, false} {
		data := photo1MB(b, meta)
		b.Run(fmt.Sprintf("jpeg-%dKiB-metadata=%v", len(data)>>10, meta), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := strip("jpeg", data); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}

// photo1MB is a 1536×2048 phone photo of a report with sensor noise, at quality 90: about 1 MB,
// upright and within DefaultMaxEdge, so it goes as its own bytes. With meta it carries what a
// phone writes: EXIF with GPS and a thumbnail, XMP, an ICC profile, MPF, and a second image after
// EOI.
func photo1MB(tb testing.TB, meta bool) []byte {
	m := gen.Photo(1536, 2048)
	r := uint32(1)
	for i := range m.Pix {
		if i%4 == 3 {
			continue
		}
		r = r*1664525 + 1013904223
		m.Pix[i] = byte(min(255, max(0, int(m.Pix[i])+int(r>>27)-16)))
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		tb.Fatal(err)
	}
	data := buf.Bytes()
	if !meta {
		return cat(soi, app0, icc, data[2:])
	}
	var thumb bytes.Buffer
	jpeg.Encode(&thumb, gen.Photo(120, 160), nil)
	exif := seg(0xe1, exifGPS(1)+thumb.String())
	return cat(soi, app0, exif, xmp, icc, mpf, data[2:], cat(soi, exif, []byte("a gain map"), eoi))
}

// BenchmarkWorstJPEG times the decode of the costliest JPEGs the default limits accept, which
// bounds how long an abandoned decode can hold its slot: gen.Scans files that make the decoder
// visit every block of every scan, at the most scans the limits allow for the largest image, and
// at the largest image for the most scans allowed. cpu-ms/op is the figure to state.
//
//	go test -bench WorstJPEG -benchtime 3x -run '^$' ./intake/
func BenchmarkWorstJPEG(b *testing.B) {
	p := New(Limits{}, testRuntime)
	for _, c := range []struct {
		name        string
		comps       int
		progressive bool
		scans       int // 0: the most the limits allow at the largest size
	}{
		{"progressive-grey-max-scans", 1, true, DefaultMaxScans},
		{"progressive-grey-max-size", 1, true, 0},
		{"progressive-colour-max-scans", 3, true, DefaultMaxScans},
		{"baseline-colour-max-scans", 3, false, DefaultMaxScans},
		{"baseline-colour-max-size", 3, false, 0},
	} {
		data, h := worstJPEG(b, p, c.comps, c.progressive, c.scans)
		b.Run(fmt.Sprintf("%s-%dx%d-%dscans", c.name, h.w, h.h, h.cost.scans), func(b *testing.B) {
			b.ReportMetric(float64(h.cost.work)/1e6, "Msamples")
			start, ok := cpuTime()
			for b.Loop() {
				if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			if end, _ := cpuTime(); ok {
				b.ReportMetric(float64(end-start)/1e6/float64(b.N), "cpu-ms/op")
			}
		})
	}
}

// worstJPEG returns the gen.Scans file with the most work that p accepts: with scans scans, the
// largest square; with scans 0, the largest image p accepts with the most scans.
func worstJPEG(tb testing.TB, p *Preparer, comps int, progressive bool, scans int) ([]byte, header) {
	tb.Helper()
	accepted := func(side, scans int) ([]byte, header, bool) {
		data := gen.Scans(side, side, comps, scans, progressive)
		h, err := p.inspect(data, 0)
		return data, h, err == nil
	}
	largest := 8 * int(math.Sqrt(float64(p.l.MaxPixels))/8)
	if scans == 0 {
		for scans = 1; ; scans++ {
			if _, _, ok := accepted(largest, scans+1); !ok {
				break
			}
		}
		data, h, ok := accepted(largest, scans)
		if !ok {
			tb.Fatalf("%d×%d refused with one scan", largest, largest)
		}
		return data, h
	}
	lo, hi := 8, largest // lo is accepted, hi+8 is not
	for lo < hi {
		mid := (lo + hi + 8) / 16 * 8
		if _, _, ok := accepted(mid, scans); ok {
			lo = mid
		} else {
			hi = mid - 8
		}
	}
	data, h, ok := accepted(lo, scans)
	if !ok {
		tb.Fatalf("nothing accepted with %d scans", scans)
	}
	return data, h
}

// BenchmarkWorstDecode times the costliest PNG, GIF and WebP decodes the default limits accept: a
// 16-bit RGBA PNG of 6300×6300 (8 bytes a pixel, just under MaxDecodeBytes) whose every row uses
// the Paeth filter, an interlaced GIF at the pixel limit, and a lossy WebP at the pixel limit
// (its partitions all zeros). These formats cost in proportion to their pixels.
//
//	go test -bench WorstDecode -benchtime 3x -run '^$' ./intake/
func BenchmarkWorstDecode(b *testing.B) {
	const side = 6300
	row := make([]byte, 1+8*side)
	row[0] = 4 // Paeth
	var raw bytes.Buffer
	for range side {
		raw.Write(row)
	}
	bigPNG := pngHeader(side, side, 16, 6, false, raw.Bytes())
	raw = bytes.Buffer{}

	var g bytes.Buffer
	m := image.NewPaletted(image.Rect(0, 0, 6320, 6320), color.Palette{color.White, color.Black})
	if err := gif.Encode(&g, m, nil); err != nil {
		b.Fatal(err)
	}
	bigGIF := g.Bytes()
	i := 13 + 3*2           // after the header and a 2-colour global table
	for bigGIF[i] == 0x21 { // extensions: introducer, label, sub-blocks
		for i += 2; bigGIF[i] != 0; i += 1 + int(bigGIF[i]) {
		}
		i++
	}
	bigGIF[i+9] |= 0x40 // the image descriptor's interlace flag
	bigWebP := lossyWebP(6320, 6320)

	p := New(Limits{}, testRuntime)
	for _, c := range []struct {
		name string
		data []byte
	}{{"png-16bit-rgba-paeth-6300x6300", bigPNG}, {"gif-interlaced-6320x6320", bigGIF}, {"webp-lossy-6320x6320", bigWebP}} {
		b.Run(c.name, func(b *testing.B) {
			h, err := p.inspect(c.data, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(h.cost.mem)/(1<<20), "MiB")
			start, ok := cpuTime()
			for b.Loop() {
				if _, err := decode(h, c.data); err != nil {
					b.Fatal(err)
				}
			}
			if end, _ := cpuTime(); ok {
				b.ReportMetric(float64(end-start)/1e6/float64(b.N), "cpu-ms/op")
			}
		})
	}
}
