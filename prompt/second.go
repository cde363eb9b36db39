package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

// Boxes is the convention in which the model is asked for each row's box (OCR_MODEL_BOXES):
// BoxesOff asks for none, and the prompt then says nothing of boxes.
type Boxes string

// The conventions, in the order of BoxConventions.
const (
	BoxesOff = Boxes("off")
	// BoxesPixels: bbox_2d [x1, y1, x2, y2] in absolute pixels of the image the model processed
	// (Qwen2.5-VL, after its own resize to multiples of 28).
	BoxesPixels = Boxes("pixels")
	// BoxesThousandths: bbox_2d [x1, y1, x2, y2] in thousandths of the width and height (0–1000,
	// x first): Qwen3-VL, InternVL, GLM-4.5V, MiniCPM-V.
	BoxesThousandths = Boxes("thousandths")
	// BoxesGemini: box_2d [ymin, xmin, ymax, xmax] in thousandths (Gemini).
	BoxesGemini = Boxes("gemini")
)

// BoxConventions is the one table of box conventions, with the rule each adds to the prompt.
var BoxConventions = []struct {
	Boxes Boxes
	Rule  string
}{
	{BoxesOff, ""},
	{BoxesPixels, `Each element of indicators also has the key bbox_2d: the box around that row on the page, [x1, y1, x2, y2] in pixels of the image (x1, y1 its top left corner, x2, y2 its bottom right); null when you cannot place it.`},
	{BoxesThousandths, `Each element of indicators also has the key bbox_2d: the box around that row on the page, [x1, y1, x2, y2] in thousandths of the image's width and height (0 to 1000; x1, y1 its top left corner, x2, y2 its bottom right); null when you cannot place it.`},
	{BoxesGemini, `Each element of indicators also has the key box_2d: the box around that row on the page, [ymin, xmin, ymax, xmax] normalised to 0-1000; null when you cannot place it.`},
}

// ParseBoxes reads OCR_MODEL_BOXES; ok is false for a value that is no convention.
func ParseBoxes(s string) (Boxes, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return BoxesOff, true
	}
	for _, c := range BoxConventions {
		if string(c.Boxes) == s {
			return c.Boxes, true
		}
	}
	return "", false
}

// First is the prompt of the first read: Render, and with boxes on, the one rule that asks for
// each row's box in the model's convention. With boxes off it is Render itself.
func First(b Boxes) string {
	for _, c := range BoxConventions {
		if c.Boxes == b && c.Rule != "" {
			return firsts[b]()
		}
	}
	return Render()
}

var firsts = func() map[Boxes]func() string {
	m := map[Boxes]func() string{}
	for _, c := range BoxConventions {
		m[c.Boxes] = sync.OnceValue(func() string { return Render() + "- " + c.Rule + "\n" })
	}
	return m
}()

// FirstVersion is the promptVersion of First(b): Version when boxes are off.
func FirstVersion(b Boxes) string {
	if b == BoxesOff || b == "" {
		return Version()
	}
	return hash(First(b))
}

// Second is the prompt of the second, independent read of a page (OCR_VERIFY). It is worded
// apart from the first and asks another task — each row's cells exactly as printed, with no
// field list of the contract to echo — so that its mistakes are not the first read's. Its reply
// is read by the same reader as the first's (package draft), which knows these keys.
func Second() string { return second }

// SecondVersion is a short hash of Second, as Version is of the first prompt.
func SecondVersion() string { return secondVersion() }

const second = `Look at the results table of this laboratory report page (a 化验单 or 体检报告 from a clinic or hospital).

Copy it out row by row, from the top of the page to the bottom, as a proof-reader would: for each test row, the four cells as they stand on the paper:
- name: the test's name, character for character;
- result: the result exactly as printed, every digit and decimal place kept (5.60 is 5.60, not 5.6), with any <, >, +, - or word (阴性, 阳性) that is part of it, but without an arrow or H/L mark beside it;
- unit: the unit exactly as printed;
- range: the reference range exactly as printed, brackets and words included.

Do not convert, correct, round, interpret or complete anything. Write null for a cell that is empty or that you cannot read with certainty.

Answer with JSON only, in this shape and nothing else:
{"results": [{"name": "...", "result": "...", "unit": "...", "range": "..."}]}
`

var secondVersion = sync.OnceValue(func() string { return hash(second) })

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
