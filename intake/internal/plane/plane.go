// Package plane holds the pixels intake's scaler and turns work on: planes of 8-bit channels,
// one (Y, Cb, Cr, grey) or four (RGBA) interleaved, and the eight EXIF orientations applied to
// them. intake's render and internal/heic's grid (turned as its container says) share it.
package plane

// Plane is pixels of Ch interleaved 8-bit channels: Y, Cb or Cr (1), grey (1), RGBA (4).
type Plane struct {
	Pix    []byte
	Stride int
	W, H   int
	Ch     int
}

// New is a w×h plane of ch channels, zeroed.
func New(w, h, ch int) Plane {
	return Plane{Pix: make([]byte, w*h*ch), Stride: w * ch, W: w, H: h, Ch: ch}
}

// Row is row y of p.
func (p Plane) Row(y int) []byte { return p.Pix[y*p.Stride : y*p.Stride+p.W*p.Ch] }

// Turn applies an EXIF orientation, returning an upright copy (or p itself for 1).
func Turn(p Plane, orient int) Plane {
	if orient < 2 || orient > 8 {
		return p
	}
	ow, oh := p.W, p.H
	if orient >= 5 { // the four that swap width and height
		ow, oh = p.H, p.W
	}
	out := New(ow, oh, p.Ch)
	// Stored pixel (x, y) goes to out.Pix[at + x*dx + y*dy]: each orientation is a start and two
	// steps, in bytes.
	row, px := out.Stride, p.Ch
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
	// Tiles keep the columns being written in cache; row by row, a quarter turn is twice as slow.
	const tile = 32
	for ty := 0; ty < p.H; ty += tile {
		for tx := 0; tx < p.W; tx += tile {
			for y := ty; y < min(ty+tile, p.H); y++ {
				src := p.Pix[y*p.Stride+tx*px : y*p.Stride+min(tx+tile, p.W)*px]
				i := at + y*dy + tx*dx
				if px == 1 {
					for _, v := range src {
						out.Pix[i] = v
						i += dx
					}
					continue
				}
				for x := 0; x < len(src); x += px {
					copy(out.Pix[i:i+px], src[x:x+px])
					i += dx
				}
			}
		}
	}
	return out
}
