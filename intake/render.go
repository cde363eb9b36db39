package intake

import (
	"image"
	"image/draw"

	"github.com/ocrdraft/ocrdraft/intake/internal/plane"
)

// render returns m as an upright 8-bit image, transparency flattened onto white, its long edge
// at most maxEdge, and its sides whole multiples of multiple (1: any). canvas is the image's full area from the header (a GIF frame may cover less of
// it).
//
// The common cases never convert a pixel they do not keep: a YCbCr JPEG or WebP is shrunk plane by
// plane and handed to the JPEG encoder as YCbCr 4:2:0, and a grey scan stays a one-channel grey
// image. Everything else (CMYK, 16-bit, palette, alpha) is converted to RGBA one source row at a
// time as the scaler reads it, so no full-size copy is made. It scales before it turns: the long
// edge does not change with orientation, and turning the small image is cheaper.
func render(m image.Image, canvas image.Rectangle, orient, maxEdge, multiple int) image.Image {
	sw, sh := canvas.Dx(), canvas.Dy()
	w, h := sw, sh
	if long := max(w, h); long > maxEdge {
		w = max(1, (w*maxEdge+long/2)/long)
		h = max(1, (h*maxEdge+long/2)/long)
	}
	w, h = roundDown(w, multiple), roundDown(h, multiple)
	if m.Bounds() == canvas {
		switch src := m.(type) {
		case *image.YCbCr:
			if cw, ch, ok := chroma(src); ok {
				return ycbcr(src, cw, ch, w, h, orient)
			}
		case *image.Gray:
			g := plane.New(w, h, 1)
			shrinkPlane(g, sw, sh, func(y int) []byte { return src.Pix[y*src.Stride : y*src.Stride+sw] })
			return gray(plane.Turn(g, orient))
		case *image.Gray16:
			g, row := plane.New(w, h, 1), make([]byte, sw)
			shrinkPlane(g, sw, sh, func(y int) []byte {
				for x := range row {
					row[x] = src.Pix[y*src.Stride+2*x] // the high byte
				}
				return row
			})
			return gray(plane.Turn(g, orient))
		}
	}

	flat := m.Bounds() == canvas && opaque(m)
	var row func(y int) []byte
	if src, ok := m.(*image.RGBA); ok && flat {
		row = func(y int) []byte { return src.Pix[y*src.Stride : y*src.Stride+4*sw] }
	} else {
		buf := image.NewRGBA(image.Rect(0, 0, sw, 1))
		op := draw.Src
		if !flat {
			op = draw.Over
		}
		row = func(y int) []byte {
			if !flat {
				draw.Draw(buf, buf.Rect, image.White, image.Point{}, draw.Src)
			}
			draw.Draw(buf, buf.Rect, m, image.Pt(canvas.Min.X, canvas.Min.Y+y), op)
			return buf.Pix
		}
	}
	p := plane.New(w, h, 4)
	shrinkPlane(p, sw, sh, row)
	p = plane.Turn(p, orient)
	return &image.RGBA{Pix: p.Pix, Stride: p.Stride, Rect: image.Rect(0, 0, p.W, p.H)}
}

// chroma returns the size of src's Cb and Cr planes, for the subsampling ratios that are whole
// multiples of the output's 4:2:0; the rare 4:1:1 and 4:1:0 take the RGBA path.
func chroma(src *image.YCbCr) (w, h int, ok bool) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	switch src.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
		return sw, sh, true
	case image.YCbCrSubsampleRatio422:
		return (sw + 1) / 2, sh, true
	case image.YCbCrSubsampleRatio420:
		return (sw + 1) / 2, (sh + 1) / 2, true
	case image.YCbCrSubsampleRatio440:
		return sw, (sh + 1) / 2, true
	}
	return 0, 0, false
}

// ycbcr shrinks and turns each plane of src into a w×h 4:2:0 image, the JPEG encoder's own form.
func ycbcr(src *image.YCbCr, cw, ch, w, h, orient int) *image.YCbCr {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	y := plane.New(w, h, 1)
	shrinkPlane(y, sw, sh, func(r int) []byte { return src.Y[r*src.YStride : r*src.YStride+sw] })
	cb, cr := plane.New((w+1)/2, (h+1)/2, 1), plane.New((w+1)/2, (h+1)/2, 1)
	shrinkPlane(cb, cw, ch, func(r int) []byte { return src.Cb[r*src.CStride : r*src.CStride+cw] })
	shrinkPlane(cr, cw, ch, func(r int) []byte { return src.Cr[r*src.CStride : r*src.CStride+cw] })
	y, cb, cr = plane.Turn(y, orient), plane.Turn(cb, orient), plane.Turn(cr, orient)
	return &image.YCbCr{
		Y: y.Pix, Cb: cb.Pix, Cr: cr.Pix, YStride: y.Stride, CStride: cb.Stride,
		SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: image.Rect(0, 0, y.W, y.H),
	}
}

func gray(p plane.Plane) *image.Gray {
	return &image.Gray{Pix: p.Pix, Stride: p.Stride, Rect: image.Rect(0, 0, p.W, p.H)}
}

// opaque reports whether every pixel of m is opaque, when m can tell cheaply; images that cannot
// are drawn over white, which is right for both.
func opaque(m image.Image) bool {
	if o, ok := m.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// roundDown is n rounded down to a whole multiple of m (m itself when n is smaller; n when m is
// 1 or less): a side the model will not resize again.
func roundDown(n, m int) int {
	if m <= 1 {
		return n
	}
	return max(m, n/m*m)
}
