package intake

import (
	"math"
	"testing"

	"github.com/ocrdraft/ocrdraft/intake/internal/plane"
)

// TestShrinkPlane compares the integer scaler with a float area average computed the slow way,
// over many sizes and both channel counts.
func TestShrinkPlane(t *testing.T) {
	r := uint32(1)
	rand := func(n int) int { r = r*1664525 + 1013904223; return int(r>>8) % n }
	for range 300 {
		sw, sh, ch := 1+rand(40), 1+rand(40), []int{1, 4}[rand(2)]
		dw, dh := 1+rand(sw), 1+rand(sh)
		src := plane.New(sw, sh, ch)
		for i := range src.Pix {
			src.Pix[i] = byte(rand(256))
		}
		dst := plane.New(dw, dh, ch)
		shrinkPlane(dst, sw, sh, src.Row)
		fx, fy := float64(sw)/float64(dw), float64(sh)/float64(dh)
		for y := range dh {
			for x := range dw {
				for c := range ch {
					var sum float64
					for sy := range sh {
						oy := overlap(float64(sy), float64(sy+1), float64(y)*fy, float64(y+1)*fy)
						for sx := range sw {
							ox := overlap(float64(sx), float64(sx+1), float64(x)*fx, float64(x+1)*fx)
							sum += ox * oy * float64(src.Pix[sy*src.Stride+sx*ch+c])
						}
					}
					want := sum / (fx * fy)
					if got := float64(dst.Pix[y*dst.Stride+x*ch+c]); math.Abs(got-want) > 2 {
						t.Fatalf("%d×%d→%d×%d ch %d: pixel (%d,%d,%d) = %v, want %.1f", sw, sh, dw, dh, ch, x, y, c, got, want)
					}
				}
			}
		}
	}
}

func overlap(a0, a1, b0, b1 float64) float64 { return max(0, min(a1, b1)-max(a0, b0)) }

// TestSpans checks that every output pixel's weights add up to exactly 256.
func TestSpans(t *testing.T) {
	for _, c := range [][2]int{{4032, 2048}, {3024, 1536}, {7, 3}, {1, 1}, {5, 5}, {40000, 2048}, {2049, 2048}} {
		sum := make([]int, c[1])
		for _, s := range spans(c[0], c[1]) {
			sum[s.i] += int(s.a)
			if s.b != 0 {
				sum[s.i+1] += int(s.b)
			}
		}
		for i, v := range sum {
			if v != 256 {
				t.Fatalf("%d→%d: output %d has weight %d", c[0], c[1], i, v)
			}
		}
	}
}
