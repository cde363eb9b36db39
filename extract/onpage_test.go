package extract

import (
	"context"
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// textPrep prepares a page "text:w1 w2 …" with those words as its text layer (one line, each
// word 40 px wide); any other page has none.
type textPrep struct{}

func (textPrep) Prepare(ctx context.Context, data []byte) (intake.Page, error) {
	pg, err := fakePrep{}.Prepare(ctx, data)
	if s, ok := strings.CutPrefix(string(data), "text:"); ok {
		for i, w := range strings.Fields(s) {
			pg.Text = append(pg.Text, intake.Word{Text: w, Box: image.Rect(50*i, 0, 50*i+40, 12)})
		}
	}
	return pg, err
}

// answers replies to page p with answers[p].
func answers(a map[string]string) *fakeModel {
	return &fakeModel{answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
		return reply(a[page]), nil
	}}
}

func notOnPage(ws []schema.Warning) (paths []string) {
	for _, w := range ws {
		if w.Code == schema.ValueNotOnPage {
			paths = append(paths, *w.Path)
		}
	}
	return paths
}

// TestValueNotOnPage: a number the model read for a page with a text layer is looked for among
// the page's printed numbers, as a decimal; a page without one is not checked.
func TestValueNotOnPage(t *testing.T) {
	const page = "text:白细胞计数 WBC 6.12 10^9/L 3.50-9.50 血红蛋白 HGB 148↑ g/L 130-175"
	for _, tt := range []struct {
		name  string
		pages []string
		reply map[string]string
		want  string // paths of value_not_on_page, comma-separated
	}{
		{"one on the page, one not", []string{page}, map[string]string{page: `{"indicators":[
			{"itemName":"白细胞计数","valueNum":6.12,"unit":"10^9/L","refText":"3.50-9.50"},
			{"itemName":"血红蛋白","valueNum":146,"unit":"g/L","refText":"130-175"}]}`},
			"indicators[1].valueNum"},
		{"read as 5.2 where 5.20 is printed", []string{"text:TC 5.20 mmol/L 0.00-5.20"}, map[string]string{"text:TC 5.20 mmol/L 0.00-5.20": "```json\n" +
			`{"indicators":[{"itemName":"TC","valueNum":"5.2","unit":"mmol/L","refLow":0,"refHigh":5.2}]}` + "\n```"},
			""},
		{"a bound misread", []string{page}, map[string]string{page: `{"indicators":[
			{"itemName":"白细胞计数","valueNum":6.12,"refLow":3.5,"refHigh":5.95}]}`},
			"indicators[0].refHigh"},
		{"no text layer", []string{"photo"}, map[string]string{"photo": `{"indicators":[{"itemName":"HGB","valueNum":999}]}`},
			""},
		{"only the page with text", []string{"photo", page}, map[string]string{
			"photo": `{"indicators":[{"itemName":"ALT","valueNum":77}]}`,
			page:    `{"indicators":[{"itemName":"HGB","valueNum":184}]}`},
			"indicators[1].valueNum"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			imgs := make([][]byte, len(tt.pages))
			for i, p := range tt.pages {
				imgs[i] = []byte(p)
			}
			res, err := New(Config{Model: answers(tt.reply), Prep: textPrep{}}).Extract(t.Context(), owned(imgs), check.Context{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(notOnPage(res.Warnings), ","); got != tt.want {
				t.Errorf("value_not_on_page at %q, want %q (warnings %+v)", got, tt.want, res.Warnings)
			}
			for _, w := range res.Warnings {
				if w.Code == schema.ValueNotOnPage && (w.Page == nil || w.Params["value"] == "" || w.Params["itemName"] == "") {
					t.Errorf("warning without page or params: %+v", w)
				}
			}
			if res.Meta.Evidence == nil {
				t.Error("meta.evidence is null, want []")
			}
		})
	}
}

// digitalReplies are testdata/documents/digital.pdf's two pages as a model reads them right
// (digital.replies.json, which the review page's tests read too).
func digitalReplies(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "documents", "digital.replies.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pages []json.RawMessage
	if err := json.Unmarshal(b, &pages); err != nil || len(pages) != 2 {
		t.Fatalf("digital.replies.json: %d pages, %v", len(pages), err)
	}
	return []string{string(pages[0]), string(pages[1])}
}

// TestValueNotOnPageDigitalPDF runs the real Preparer on testdata/documents/digital.pdf (made by
// intake/internal/gen: LabRows) with a model that reads it right, then with one value misread.
func TestValueNotOnPageDigitalPDF(t *testing.T) {
	pdf, err := os.ReadFile(filepath.Join("..", "testdata", "documents", "digital.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	// The two pages as gen.LabRows prints them, as a model would read them.
	right := digitalReplies(t)
	misread := strings.Replace(right[1], "1.21", "1.27", 1)
	prep := intake.New(intake.Limits{}, wasm)
	// The pages are told apart by their images: page 1's, as the Preparer renders it.
	pg, err := prep.PreparePage(t.Context(), pdf, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := string(pg.Data)
	for _, tt := range []struct {
		name    string
		replies []string
		want    string
	}{
		{"read right", right, ""},
		{"one value misread", []string{right[0], misread}, "indicators[7].valueNum"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
				if page == first {
					return reply(tt.replies[0]), nil
				}
				return reply(tt.replies[1]), nil
			}}
			res, err := New(Config{Model: m, Prep: prep}).Extract(t.Context(), owned([][]byte{pdf}), check.Context{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Draft.Indicators) != 9 {
				t.Fatalf("%d indicators, want 9", len(res.Draft.Indicators))
			}
			if got := strings.Join(notOnPage(res.Warnings), ","); got != tt.want {
				t.Errorf("value_not_on_page at %q, want %q", got, tt.want)
			}
			// Every value found is printed once on its page: each has its box, inside the page.
			boxes := map[string]schema.Box{}
			for _, e := range res.Meta.Evidence {
				boxes[e.Path] = e.Box
			}
			for i, ind := range res.Draft.Indicators {
				p := "indicators[" + strconv.Itoa(i) + "].valueNum"
				if p == tt.want {
					continue
				}
				b, ok := boxes[p]
				if !ok || b.W <= 0 || b.H <= 0 || b.X < 0 || b.Y < 0 || b.X+b.W > 1447 || b.Y+b.H > 2048 {
					t.Errorf("%s (%s): box %v, %v", p, ind.ItemName, b, ok)
				}
			}
			// Rows are printed 24 pt apart, top to bottom: their values' boxes are in that order.
			for i := 1; i < 5; i++ {
				a, b := boxes["indicators["+strconv.Itoa(i-1)+"].valueNum"], boxes["indicators["+strconv.Itoa(i)+"].valueNum"]
				if b.Y <= a.Y+a.H/2 || a.X != b.X && abs(a.X-b.X) > 5 {
					t.Errorf("rows %d and %d: boxes %v and %v", i-1, i, a, b)
				}
			}
		})
	}
}

func abs(i int) int { return max(i, -i) }

// TestValueNotOnPageCIDFonts: on a page whose digits too are in a CID font it does not embed
// (testdata/documents/cid-fonts.pdf, gen.CIDRows: Simplified and Traditional rows), the values
// are read from the text layer like any others: a model that reads them right gets no warning,
// one that misreads a Traditional row's value and a bound gets one for each.
func TestValueNotOnPageCIDFonts(t *testing.T) {
	pdf, err := os.ReadFile(filepath.Join("..", "testdata", "documents", "cid-fonts.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	right := `{"title":"检验报告单","indicators":[
		{"itemName":"丙氨酸氨基转移酶","valueNum":56.4,"unit":"U/L","refText":"9-50","printedFlag":"high"},
		{"itemName":"肌酐","valueNum":71,"unit":"µmol/L","refText":"57-111"},
		{"itemName":"白细胞计数","valueNum":3.12,"unit":"×10^9/L","refText":"3.50-9.50","printedFlag":"low"},
		{"itemName":"總膽固醇","valueNum":6.05,"unit":"mmol/L","refText":"<5.20","printedFlag":"high"},
		{"itemName":"糖化血紅蛋白","valueNum":5.4,"unit":"%","refText":"4.0-6.0"}]}`
	misread := strings.NewReplacer("6.05", "6.65", `"4.0-6.0"`, `"4.0-8.0"`).Replace(right)
	for _, tt := range []struct {
		name, reply, want string
	}{
		{"read right", right, ""},
		{"a value and a bound misread", misread, "indicators[3].valueNum,indicators[4].refHigh"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := New(Config{Model: answersAll(tt.reply), Prep: intake.New(intake.Limits{}, wasm)}).Extract(t.Context(), owned([][]byte{pdf}), check.Context{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(notOnPage(res.Warnings), ","); got != tt.want {
				t.Errorf("value_not_on_page at %q, want %q", got, tt.want)
			}
			if len(res.Meta.Evidence) < 5 {
				t.Errorf("%d numbers placed, want every value at least: %+v", len(res.Meta.Evidence), res.Meta.Evidence)
			}
		})
	}
}

// answersAll replies to every page with a.
func answersAll(a string) *fakeModel {
	return &fakeModel{answer: func(context.Context, string, int) (vision.Reply, error) { return reply(a), nil }}
}

// TestPDFOpenedOnce: a PDF of two pages is opened once through Extract, for its count and both
// its pages: the Split's instance outlives the Split, to the end of the pages' preparing (a
// context ended after the splits killed it, and every page opened the document again: a broken
// cross-reference table rebuilt twice).
func TestPDFOpenedOnce(t *testing.T) {
	pdf, err := os.ReadFile(filepath.Join("..", "testdata", "documents", "digital.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var mu sync.Mutex
	m := &fakeModel{answer: func(context.Context, string, int) (vision.Reply, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return reply(digitalReplies(t)[(n+1)%2]), nil // either page's reading: the count is what matters
	}}
	opens := wasm.PDFOpens()
	res, err := New(Config{Model: m, Prep: intake.New(intake.Limits{}, wasm)}).Extract(t.Context(), owned([][]byte{pdf}), check.Context{})
	if err != nil || len(res.Draft.Indicators) != 9 {
		t.Fatalf("%d rows, %v", len(res.Draft.Indicators), err)
	}
	if got := wasm.PDFOpens() - opens; got != 1 {
		t.Errorf("opened %d times for its count and its 2 pages, want once", got)
	}
}
