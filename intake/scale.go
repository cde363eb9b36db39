package intake

import "github.com/ocrdraft/ocrdraft/intake/internal/plane"

// An area-average scaler: each output pixel is the mean of the source area it covers, partial
// pixels weighted by how much of them it covers. It is the right filter for shrinking text (no
// source pixel is skipped, so a one-pixel stroke fades rather than vanishes or turns into a
// band), and it is cheap: separable, integer, and one pass over the source.
//
// It replaces golang.org/x/image/draw here after measuring (BenchmarkScalers, TestShrinkAverages):
// ApproxBiLinear samples a 2×2 neighbourhood, so between 1× and 2× (a 12-megapixel photo to 2048
// pixels is 1.97×) one-pixel detail comes out as anything from black to white; BiLinear and
// CatmullRom filter properly but hold a float64 buffer of output width × source height (211 MB
// for that photo) and take 0.7–1 s.

// span says where one source pixel goes: weight a to output pixel i and b to i+1, in 256ths of an
// output pixel. A pixel covers at most two outputs because the scaler only shrinks.
type span struct {
	i    int32
	a, b uint16
}

// spans maps n source pixels onto m ≤ n output pixels. Source pixel j covers [j·m/n, (j+1)·m/n)
// in output units; rounding both ends to 256ths the same way keeps each output's weights
// summing to exactly 256.
func spans(n, m int) []span {
	s := make([]span, n)
	for j := range n {
		p0 := int((int64(j)*256*int64(m) + int64(n)/2) / int64(n))
		p1 := int((int64(j+1)*256*int64(m) + int64(n)/2) / int64(n))
		i, end := p0/256, (p0/256+1)*256
		if p1 <= end {
			s[j] = span{int32(i), uint16(p1 - p0), 0}
		} else {
			s[j] = span{int32(i), uint16(end - p0), uint16(p1 - end)}
		}
	}
	return s
}

// shrinkPlane scales the source rows, given one at a time by row, into dst (dst.W ≤ sw,
// dst.H ≤ sh). Rows are combined first, over the whole source width with the simplest possible
// loop, and then each finished row is narrowed; only two rows of sums are held.
func shrinkPlane(dst plane.Plane, sw, sh int, row func(y int) []byte) {
	ch := dst.Ch
	xs, ys := spans(sw, dst.W), spans(sh, dst.H)
	cur, next := make([]uint32, sw*ch), make([]uint32, sw*ch) // ≤ 255·256 each
	out := make([]uint32, dst.W*ch)                           // ≤ 255·256·256
	emit := func(i int, acc []uint32) {
		clear(out)
		switch ch {
		case 1:
			for j, s := range xs {
				v := acc[j]
				out[s.i] += v * uint32(s.a)
				if s.b != 0 {
					out[s.i+1] += v * uint32(s.b)
				}
			}
		default:
			for j, s := range xs {
				o, v := int(s.i)*ch, acc[j*ch:j*ch+ch]
				for c := range ch {
					out[o+c] += v[c] * uint32(s.a)
				}
				if s.b != 0 {
					for c := range ch {
						out[o+ch+c] += v[c] * uint32(s.b)
					}
				}
			}
		}
		d := dst.Row(i)
		for k, v := range out {
			d[k] = byte((v + 1<<15) >> 16)
		}
	}
	i := 0
	for y := range sh {
		s := ys[y]
		if int(s.i) > i { // output row i has all its source rows
			emit(i, cur)
			cur, next = next, cur
			clear(next)
			i++
		}
		r := row(y)
		addRow(cur, r, uint32(s.a))
		if s.b != 0 {
			addRow(next, r, uint32(s.b))
		}
	}
	emit(i, cur)
}

func addRow(acc []uint32, r []byte, w uint32) {
	acc = acc[:len(r)]
	for x, v := range r {
		acc[x] += uint32(v) * w
	}
}
