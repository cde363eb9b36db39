package intake

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"
)

// BenchmarkPrepare times the whole of Prepare for one upload: decode, shrink, turn and encode for
// the 12-megapixel photos, decode and check for the scan that goes as it is. The target for a
// photo is 300 ms of one core; cpu-ms/op is the process's CPU time per op, GC included, which a
// busy machine disturbs less than ns/op.
//
//	go test -bench . -benchmem -run '^$' ./intake/
func BenchmarkPrepare(b *testing.B) {
	cases := []struct{ name, path string }{
		{"sample-12MP-exif6", filepath.Join(samples, "lipid-panel-phone-exif6.jpg")},
		{"generated-12MP-exif6", filepath.Join(images, "phone-exif6.jpg")},
		{"scan-as-is", filepath.Join(images, "scan.jpg")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			data, err := os.ReadFile(c.path)
			if err != nil {
				b.Skip(err)
			}
			p := New(Limits{})
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
