package intake

import (
	"image"
	"image/color"

	"golang.org/x/image/draw"
)

// render returns m as an upright 8-bit image, transparency flattened onto white, its long edge
// at most maxEdge. canvas is the image's full area from the header (a GIF frame may cover less of
// it). Grey sources stay grey, which halves the JPEG and keeps a scan a scan.
//
// It scales before it turns: the long edge does not change with orientation, and turning the
// scaled image moves a quarter of the pixels that turning the original would.
func render(m image.Image, canvas image.Rectangle, orient, maxEdge int) image.Image {
	w, h := canvas.Dx(), canvas.Dy()
	if long := max(w, h); long > maxEdge {
		w = max(1, (w*maxEdge+long/2)/long)
		h = max(1, (h*maxEdge+long/2)/long)
	}
	op := draw.Src
	if !opaque(m) || m.Bounds() != canvas {
		op = draw.Over
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if op == draw.Over {
		draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	}
	if w == canvas.Dx() && h == canvas.Dy() {
		draw.Draw(dst, m.Bounds().Sub(canvas.Min), m, m.Bounds().Min, op)
	} else {
		shrink(dst, m, canvas, op)
	}
	out := turn(dst, orient)
	if grey(m) {
		return toGray(out)
	}
	return out
}

// shrink draws the canvas area of src scaled into all of dst with ApproxBiLinear. That filter
// reads a 2×2 neighbourhood, so on its own it would skip pixels when shrinking by more than 2;
// halving first, where ApproxBiLinear at exactly 2× is a 2×2 box filter, keeps every source pixel
// in the average. CatmullRom looks better on paper but its separable pass holds a float64 buffer
// of dst width × src height (200 MB for a 12-megapixel photo) and takes several times as long;
// see BenchmarkScalers.
func shrink(dst *image.RGBA, src image.Image, canvas image.Rectangle, op draw.Op) {
	if src.Bounds() != canvas { // a GIF frame smaller than its canvas: compose it first
		c := image.NewRGBA(canvas)
		draw.Draw(c, canvas, image.White, image.Point{}, draw.Src)
		draw.Draw(c, src.Bounds(), src, src.Bounds().Min, draw.Over)
		src, op = c, draw.Src
	}
	sr := src.Bounds()
	for sr.Dx() > 2*dst.Rect.Dx() && sr.Dy() > 2*dst.Rect.Dy() {
		half := image.NewRGBA(image.Rect(0, 0, sr.Dx()/2, sr.Dy()/2))
		if op == draw.Over {
			draw.Draw(half, half.Rect, image.White, image.Point{}, draw.Src)
		}
		// An even source area makes the scale exactly 2, so each output pixel is one 2×2 block.
		even := image.Rectangle{Min: sr.Min, Max: sr.Min.Add(image.Pt(half.Rect.Dx()*2, half.Rect.Dy()*2))}
		draw.ApproxBiLinear.Scale(half, half.Rect, src, even, op, nil)
		src, sr, op = half, half.Rect, draw.Src
	}
	draw.ApproxBiLinear.Scale(dst, dst.Rect, src, sr, op, nil)
}

// turn applies an EXIF orientation, returning an upright copy (or m itself for 1).
func turn(m *image.RGBA, orient int) *image.RGBA {
	if orient < 2 || orient > 8 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	ow, oh := w, h
	if orient >= 5 { // the four that swap width and height
		ow, oh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	// Stored pixel (x, y) goes to out.Pix[at + x*dx + y*dy]: each orientation is a start and two
	// steps, in bytes.
	row, px := out.Stride, 4
	var at, dx, dy int
	switch orient {
	case 2: // mirrored
		at, dx, dy = (ow-1)*px, -px, row
	case 3: // upside down
		at, dx, dy = (oh-1)*row+(ow-1)*px, -px, -row
	case 4: // mirrored upside down
		at, dx, dy = (oh-1)*row, px, -row
	case 5: // transposed
		at, dx, dy = 0, row, px
	case 6: // lying on its left side: turn clockwise
		at, dx, dy = (ow-1)*px, row, -px
	case 7: // transverse
		at, dx, dy = (oh-1)*row+(ow-1)*px, -row, -px
	case 8: // lying on its right side: turn anticlockwise
		at, dx, dy = (oh-1)*row, -row, px
	}
	for y := range h {
		src := m.Pix[y*m.Stride : y*m.Stride+4*w]
		i := at + y*dy
		for x := 0; x < len(src); x += 4 {
			d := out.Pix[i : i+4 : i+4]
			d[0], d[1], d[2], d[3] = src[x], src[x+1], src[x+2], src[x+3]
			i += dx
		}
	}
	return out
}

// opaque reports whether every pixel of m is opaque, when m can tell cheaply; images that cannot
// are drawn over white, which is right for both.
func opaque(m image.Image) bool {
	if o, ok := m.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// grey reports whether m is a grey image of any depth.
func grey(m image.Image) bool {
	switch m.ColorModel() {
	case color.GrayModel, color.Gray16Model:
		return true
	}
	return false
}

// toGray copies the red channel of an image that is known to be grey.
func toGray(m *image.RGBA) *image.Gray {
	g := image.NewGray(m.Rect)
	for i := range g.Pix {
		g.Pix[i] = m.Pix[4*i]
	}
	return g
}
