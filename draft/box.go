package draft

import (
	"math"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/schema"
)

// boxKeys are the keys under which vision models write a row's box beside it: Qwen's and
// InternVL's bbox_2d ([x1, y1, x2, y2]) and Gemini's box_2d ([ymin, xmin, ymax, xmax]). What the
// numbers mean (pixels or thousandths) is the endpoint's convention, which the service is told
// (OCR_MODEL_BOXES), not read here.
var boxKeys = []string{"bbox_2d", "box_2d"}

// boxOf is the box written beside a row, as written: evidence of where the row is, never data. A
// box that is not four finite numbers is no box; nothing else of the row depends on it. It
// allocates only when a row has one.
func boxOf(members []parse.Member) *schema.ModelBox {
	for _, m := range members {
		key := strings.TrimSpace(m.Key) // EqualFold: a lower-cased copy of every key would cost an allocation a row
		switch {
		case strings.EqualFold(key, boxKeys[0]):
			key = boxKeys[0]
		case strings.EqualFold(key, boxKeys[1]):
			key = boxKeys[1]
		default:
			continue
		}
		v := m.Value
		if v.Kind == parse.Array && len(v.Elems) == 1 && v.Elems[0].Kind == parse.Array {
			v = v.Elems[0] // [[x1, y1, x2, y2]]
		}
		if v.Kind != parse.Array || len(v.Elems) != 4 {
			return nil
		}
		var b schema.ModelBox
		b.Key = key
		for i, e := range v.Elems {
			if e.Kind != parse.Number && e.Kind != parse.String {
				return nil
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(e.Text), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil
			}
			b.V[i] = f
		}
		return &b
	}
	return nil
}
