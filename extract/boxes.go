package extract

import (
	"math"
	"strconv"

	"github.com/ocrdraft/ocrdraft/prompt"
	"github.com/ocrdraft/ocrdraft/schema"
)

// modelEvidence maps the boxes the model wrote beside the rows of the merged draft d
// (OCR_MODEL_BOXES) into meta.evidence: one entry per row, path indicators[N], in the pixels of
// its page's image as sent (metas give each page's size). A box is evidence, never data: one that
// is written in another convention's key, off the page, inverted or of zero area is dropped, and
// its row stays as it is.
func modelEvidence(conv prompt.Boxes, d *schema.OcrDraft, metas []schema.PageMeta) []schema.Evidence {
	if conv == prompt.BoxesOff || conv == "" {
		return nil
	}
	var ev []schema.Evidence
	for i, ind := range d.Indicators {
		if ind.Box == nil || ind.Page == nil || *ind.Page < 1 || *ind.Page > len(metas) {
			continue
		}
		m := metas[*ind.Page-1]
		if b, ok := mapBox(conv, *ind.Box, m.Width, m.Height); ok {
			ev = append(ev, schema.Evidence{Path: "indicators[" + strconv.Itoa(i) + "]", Page: *ind.Page, Box: b, Source: schema.SourceModel})
		}
	}
	return ev
}

// mapBox is a model's box in the pixels of a w×h image, by its convention (see
// prompt.BoxConventions), and whether it is one: written under the convention's key, on the
// page, its corners in order, and of some area once in whole pixels.
func mapBox(conv prompt.Boxes, mb schema.ModelBox, w, h int) (schema.Box, bool) {
	if w <= 0 || h <= 0 {
		return schema.Box{}, false
	}
	v := mb.V
	var x1, y1, x2, y2, sx, sy float64
	switch conv {
	case prompt.BoxesPixels:
		x1, y1, x2, y2, sx, sy = v[0], v[1], v[2], v[3], 1, 1
	case prompt.BoxesThousandths:
		x1, y1, x2, y2, sx, sy = v[0], v[1], v[2], v[3], float64(w)/1000, float64(h)/1000
	case prompt.BoxesGemini:
		y1, x1, y2, x2, sx, sy = v[0], v[1], v[2], v[3], float64(w)/1000, float64(h)/1000
	default:
		return schema.Box{}, false
	}
	key := "bbox_2d"
	if conv == prompt.BoxesGemini {
		key = "box_2d"
	}
	if mb.Key != key {
		return schema.Box{}, false
	}
	x1, x2, y1, y2 = x1*sx, x2*sx, y1*sy, y2*sy
	if x1 < 0 || y1 < 0 || x2 > float64(w) || y2 > float64(h) || x2 <= x1 || y2 <= y1 {
		return schema.Box{}, false
	}
	l, t, r, b := int(math.Round(x1)), int(math.Round(y1)), int(math.Round(x2)), int(math.Round(y2))
	if r <= l || b <= t {
		return schema.Box{}, false
	}
	return schema.Box{X: l, Y: t, W: r - l, H: b - t}, true
}

// verifyTotal sums the pages' second reads for meta.verify; nil when verification is off.
func (s *Service) verifyTotal(metas []schema.PageMeta) *schema.VerifyTotal {
	if !s.cfg.Verify.on() {
		return nil
	}
	t := &schema.VerifyTotal{Mode: string(s.cfg.Verify.Mode)}
	for _, m := range metas {
		if m.Verify == nil || m.Verify.Attempts == 0 {
			continue
		}
		t.Pages++
		t.Attempts += m.Verify.Attempts
		t.Usage = add(t.Usage, m.Verify.Usage)
	}
	return t
}
