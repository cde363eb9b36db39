package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"

	"github.com/ocrdraft/ocrdraft/intake/internal/tiff"
	"github.com/ocrdraft/ocrdraft/problem"
)

// MaxTIFFPages is the most directories a TIFF's chain is followed for; more is too_many_pages.
const MaxTIFFPages = tiff.MaxPages

// tiffFormat is TIFF's row: every page a directory, each read, costed and decoded by
// internal/tiff; its bounds on the work of a page and of the document are here.
var tiffFormat = format{kind: "tiff", mime: "image/tiff", what: "a TIFF image", match: func(b []byte) bool {
	return bytes.HasPrefix(b, []byte("II*\x00")) || bytes.HasPrefix(b, []byte("MM\x00*"))
}, read: readTIFF, pages: tiffPageCount}

// tiffPageCount is the TIFF row's pages: its directories, each page's work counted toward the
// document's.
func tiffPageCount(f format, p *Preparer, _ context.Context, data []byte) (int, error) {
	pages, err := tiff.Pages(data)
	if errors.Is(err, tiff.ErrTooManyPages) {
		return 0, problem.Errorf(problem.TooManyPages, "the TIFF has more than %d pages; send at most that many per request", MaxTIFFPages)
	}
	if err != nil {
		return 0, unreadable(f, err)
	}
	if err := tiffDocument(pages, p.l); err != nil {
		return 0, err
	}
	return len(pages), nil
}

// readTIFF is the TIFF row's read of page i: its directory, refused when it uses a feature not
// read here, its size and colours, and its decoder.
func readTIFF(_ format, data []byte, i int, l Limits) (header, error) {
	pages, err := tiff.Pages(data)
	if err != nil {
		return header{}, err
	}
	if i >= len(pages) {
		return header{}, pageError{fmt.Sprintf("intake: page %d of a TIFF of %d pages", i+1, len(pages))}
	}
	if err := tiffDocument(pages, l); err != nil {
		return header{}, err
	}
	pg := pages[i]
	cfg, err := pg.DecodeConfig(data)
	var fe *tiff.FeatureError
	if errors.As(err, &fe) {
		return header{}, problem.Errorf(problem.UnsupportedMediaType,
			"page %d of the TIFF uses %s, which is not read here; save it again %s, or as a PDF", i+1, fe.Feature, fe.Instead)
	}
	if err != nil {
		return header{}, err
	}
	return header{w: cfg.Width, h: cfg.Height, model: cfg.ColorModel, orient: pg.Orientation(), stretch: pg.Stretch(),
		price: func() (cost, error) {
			c := pg.Cost(cfg, len(data))
			return cost{mem: c.Mem, work: c.Work, what: c.What, over: func(l Limits) error { return tiffOver(pg, l) }}, nil
		},
		decode: func(ctx context.Context, _ *Preparer, data []byte) decoder {
			return func(io.Reader) (image.Image, error) { return pg.Decode(ctx, data, l.MaxDecodeBytes) }
		},
	}, nil
}

// stretchRows repeats each row of g n times: a page of tall pixels made square.
func stretchRows(g *image.Gray, n int) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	out := image.NewGray(image.Rect(0, 0, w, h*n))
	for y := range h {
		row := g.Pix[y*g.Stride : y*g.Stride+w]
		for k := range n {
			copy(out.Pix[(y*n+k)*out.Stride:], row)
		}
	}
	return out
}

// tiffOver refuses a page whose blocks would take more than the decode work allows.
func tiffOver(pg tiff.Page, l Limits) error {
	work := pg.Work()
	if work <= l.MaxDecodeWork {
		return nil
	}
	n, bw, bh := pg.Blocks()
	w, h := pg.Size()
	return problem.Errorf(problem.ImageTooLarge,
		"decoding this %d×%d TIFF page means decoding %d blocks of %d×%d, %d million units of work; the limit is %d million: save it again with fewer, larger strips or tiles (or as PNG or PDF)",
		w, h, n, bw, bh, work/1e6, l.MaxDecodeWork/1e6)
}

// MaxTIFFWork is how much more than one page's decode work all the pages of one TIFF may take
// together: ten pages that each take what one may would be 20 s of one core.
const MaxTIFFWork = 4

// tiffDocument refuses a TIFF whose pages together would take more than MaxTIFFWork pages'
// decode work, from their directories, before any is decoded.
func tiffDocument(pages []tiff.Page, l Limits) error {
	var sum int64
	for _, pg := range pages {
		if w, h := pg.Size(); int64(w)*int64(h) > int64(l.MaxPixels) {
			continue // refused on its own, before its blocks are counted
		}
		sum += pg.Work() // 0 for damaged tiles, refused on their own
	}
	if limit := MaxTIFFWork * l.MaxDecodeWork; sum > limit {
		return problem.Errorf(problem.ImageTooLarge,
			"decoding the TIFF's %d pages means %d million units of work; the limit for one document is %d million: send fewer pages per request, or pages with fewer, larger strips or tiles",
			len(pages), sum/1e6, limit/1e6)
	}
	return nil
}
