package intake

import (
	"bytes"
	"context"
	"errors"
	"image"
	"io"

	"github.com/ocrdraft/ocrdraft/intake/internal/bmp"
	"github.com/ocrdraft/ocrdraft/problem"
)

// bmpFormat is BMP's row, decoded by internal/bmp.
var bmpFormat = format{kind: "bmp", mime: "image/bmp", what: "a BMP image", match: func(b []byte) bool {
	// "BM" alone is too weak; the two reserved header words are zero in every real BMP.
	return len(b) >= 14 && bytes.HasPrefix(b, []byte("BM")) && bytes.Equal(b[6:10], []byte{0, 0, 0, 0})
}, read: readBMP}

// readBMP is the BMP row's read: its headers, refused when they use a feature not read here
// (internal/bmp's table), and its decoder, internal/bmp's.
func readBMP(_ format, data []byte, i int, l Limits) (header, error) {
	if i != 0 {
		return header{}, pastOnePage(i)
	}
	cfg, err := bmp.DecodeConfig(data)
	var ue *bmp.UnsupportedError
	if errors.As(err, &ue) {
		return header{}, problem.Errorf(problem.UnsupportedMediaType,
			"the BMP uses %s, which is not read here; save it again %s, or as PNG", ue.Feature, ue.Instead)
	}
	if err != nil {
		return header{}, err
	}
	return header{w: cfg.Width, h: cfg.Height, model: cfg.ColorModel, orient: 1,
		price: func() (cost, error) { return cost{mem: bmp.Cost(cfg), what: "BMP"}, nil },
		decode: func(ctx context.Context, _ *Preparer, data []byte) decoder {
			return func(io.Reader) (image.Image, error) { return bmp.Decode(ctx, data, l.MaxDecodeBytes) }
		},
	}, nil
}
