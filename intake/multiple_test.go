package intake

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"os"
	"testing"
)

// TestSideMultiple: with SideMultiple 28 (OCR_MODEL_BOXES=pixels), every page is sent with both
// sides whole multiples of 28 within MaxEdge, upright JPEGs that are already such go as their own
// bytes, and the size Page says is the size sent.
func TestSideMultiple(t *testing.T) {
	photo := func(w, h int) []byte {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420), nil); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	pdf, err := os.ReadFile("../testdata/documents/digital.pdf")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		data   []byte
		limits Limits
		asIs   bool
	}{
		{"within the edge", photo(1000, 707), Limits{MaxEdge: 2048, SideMultiple: 28}, false},
		{"already multiples", photo(560, 840), Limits{MaxEdge: 2048, SideMultiple: 28}, true},
		{"downscaled", photo(3000, 4000), Limits{MaxEdge: 1000, SideMultiple: 28}, false},
		{"a PDF page", pdf, Limits{MaxEdge: 1000, SideMultiple: 28}, false},
	} {
		p := New(tt.limits, testRuntime)
		n, err := p.Split(context.Background(), tt.data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			pg, err := p.PreparePage(context.Background(), tt.data, i)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(pg.Data))
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if cfg.Width != pg.Width || cfg.Height != pg.Height || cfg.Width%28 != 0 || cfg.Height%28 != 0 || max(cfg.Width, cfg.Height) > tt.limits.MaxEdge {
				t.Errorf("%s: sent %d×%d (page says %d×%d), want multiples of 28 within %d", tt.name, cfg.Width, cfg.Height, pg.Width, pg.Height, tt.limits.MaxEdge)
			}
			if pg.Reencoded == tt.asIs {
				t.Errorf("%s: re-encoded %v", tt.name, pg.Reencoded)
			}
		}
	}
}
