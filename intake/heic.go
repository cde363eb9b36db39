package intake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/heif"
	"github.com/ocrdraft/ocrdraft/problem"
)

// The bounds on what a HEIC may make libheif decode, beside its memory (internal/heif): more
// items in its container than MaxHEIFItems, or more pictures than MaxHEICPictures, is
// image_too_large, and so are pictures whose pixels, each counted with its set-up
// (heif.PerPicture), are more than MaxPixels.
const (
	MaxHEIFItems    = heif.MaxItems
	MaxHEICPictures = heif.MaxPictures
)

// HEICWork is the most CPU time a HEIC's decode may take: libheif's work in a worker process
// (heif.Pool), metered from outside, the worker killed past it and the file refused as
// image_too_large, as PDFPageWork bounds a PDF page and for the same reason: what the decode
// costs cannot be known from the headers. The pixel count (MaxPixels) bounds a photo's decode
// to well under it (a 12-megapixel photo 0.7 s, the costliest grid the limits accept 1.6 s;
// docs/performance.md), but not a picture of noise, which libde265 decodes at about six times
// a photo's cost per pixel: 3 megapixels of it took 0.9–1.0 s, so 12 would take about 4 s and
// 40 about 13. It is the worker's own CPU time, so a loaded machine does not bring an ordinary
// photo near it. Where no worker can be started (HEICInProcess), the decode runs in this
// process unmetered, bounded by its pixels only, as before workers.
const HEICWork = 2 * time.Second

// heicFormat is HEIC's row: the size from the container's boxes, decoded by internal/heif.
var heicFormat = format{kind: "heic", mime: "image/heic", what: "a HEIC/HEIF image", match: ftyp(heifBrands...),
	read: readHEIC, failed: heicRefusal}

// heifBrands are the ISO BMFF brands of HEIC and HEIF stills and sequences; mif1, msf1 and mif2
// are the generic HEIF ones.
var heifBrands = []string{"heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1", "mif2"}

// readHEIC is the HEIC row's read: the container's primary image, upright, the largest image any
// of its items declares, and its decoder, the module's memory capped.
func readHEIC(_ format, data []byte, i int, l Limits) (header, error) {
	if i != 0 {
		return header{}, pastOnePage(i)
	}
	hh, err := heif.DecodeConfig(data)
	if err != nil {
		return header{}, err
	}
	return header{w: hh.Width, h: hh.Height, model: hh.ColorModel, orient: 1, lw: hh.Largest.X, lh: hh.Largest.Y,
		price: func() (cost, error) {
			return cost{mem: hh.Cost(len(data)), what: "HEIC", over: func(l Limits) error { return heicOver(hh.Plan(), l) }}, nil
		},
		decode: func(ctx context.Context, p *Preparer, data []byte) decoder { // in a worker, in its own bounded memory
			return func(io.Reader) (image.Image, error) {
				budget := cmp.Or(p.heicWork, HEICWork)
				m, err := p.rt.decodeHEIC(ctx, data, l.MaxDecodeBytes, budget)
				if errors.Is(err, heif.ErrWork) {
					return nil, &problem.Error{Code: problem.ImageTooLarge, Err: err, Detail: fmt.Sprintf(
						"the HEIC takes more than %s of one processor core to decode: export it as JPEG", budget)}
				}
				return m, err
			}
		},
	}, nil
}

// heicOver refuses a HEIC that would make libheif decode more than the bounds allow.
func heicOver(p heif.Plan, l Limits) error {
	units := p.Pixels + heif.PerPicture*int64(p.Pictures)
	tiles := ""
	if p.Derived {
		tiles = fmt.Sprintf(" (its tiles: %d×%d at most)", p.TileW, p.TileH)
		if p.Grid {
			tiles = fmt.Sprintf(" (the tiles of %d×%d that cover it)", p.TileW, p.TileH)
		}
	}
	switch {
	case p.Items > MaxHEIFItems:
		return problem.Errorf(problem.ImageTooLarge,
			"the HEIC's container lists %d items; the limit is %d: export it as JPEG", p.Items, MaxHEIFItems)
	case p.Pictures > MaxHEICPictures:
		return problem.Errorf(problem.ImageTooLarge,
			"decoding this %d×%d HEIC means decoding %d pictures%s; the limit is %d: export it as JPEG", p.W, p.H, p.Pictures, tiles, MaxHEICPictures)
	case p.Waste:
		return problem.Errorf(problem.ImageTooLarge,
			"the HEIC's %d tiles%s hold %.1f megapixels for a %d×%d picture, more than the picture needs: export it as JPEG",
			p.Tiles, tiles, float64(p.TilePixels)/1e6, p.W, p.H)
	case units > int64(l.MaxPixels):
		return problem.Errorf(problem.ImageTooLarge,
			"decoding this %d×%d HEIC means decoding %d pictures%s of %.1f megapixels, counted as %.1f with each picture's set-up; the limit is %.1f megapixels: export it as JPEG",
			p.W, p.H, p.Pictures, tiles, float64(p.Pixels)/1e6, float64(units)/1e6, float64(l.MaxPixels)/1e6)
	}
	return nil
}

// heicRefusal is the refusal of a HEIC whose decode reached the module's memory bound, or its
// work (HEICWork), which the decoder refused as it is.
func heicRefusal(h header, err error) error {
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe
	}
	if !errors.Is(err, heif.ErrMemory) {
		return nil
	}
	return &problem.Error{Code: problem.ImageTooLarge, Err: err, Detail: fmt.Sprintf(
		"decoding this HEIC needs more than the %s of memory its headers allow for (its picture is larger than they say): export it as JPEG", mib(h.cost.mem))}
}
