package extract

import (
	"context"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/vision"
)

// wasm is the tests' PDF and HEIC runtime, shared so that PDFium is compiled once for them.
var wasm = intake.NewRuntime("")

// fakeDocs is a Splitter: an upload "doc:a,b,c" is a document of pages a, b and c (each page's
// bytes are its name, padded to pad bytes), "doc!" fails to split, "doc:" followed by a bad page
// name "x" fails to prepare; anything else is one page, as fakePrep.
type fakeDocs struct {
	pad      int
	prepared atomic.Int32
}

func (f *fakeDocs) Prepare(ctx context.Context, data []byte) (intake.Page, error) {
	return f.PreparePage(ctx, data, 0)
}

func (f *fakeDocs) Split(_ context.Context, data []byte) (int, error) {
	s := string(data)
	switch {
	case s == "doc!":
		return 0, problem.Errorf(problem.ImageUnreadable, "the document is damaged")
	case strings.HasPrefix(s, "doc:"):
		return len(strings.Split(s[4:], ",")), nil
	}
	return 1, nil
}

func (f *fakeDocs) PreparePage(ctx context.Context, data []byte, i int) (intake.Page, error) {
	f.prepared.Add(1)
	s := string(data)
	if !strings.HasPrefix(s, "doc:") {
		return fakePrep{}.Prepare(ctx, data)
	}
	name := strings.Split(s[4:], ",")[i]
	if name == "x" {
		return intake.Page{}, problem.Errorf(problem.ImageUnreadable, "the page is damaged")
	}
	b := []byte(name + strings.Repeat(" ", max(0, f.pad-len(name))))
	return intake.Page{MIME: "image/png", Data: b, BytesIn: len(data), BytesOut: len(b),
		Text: []intake.Word{{Text: name, Box: image.Rect(0, 0, 10, 10)}}}, nil
}

// byName answers each page with one indicator named after the page.
func byName() *fakeModel {
	return &fakeModel{answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
		return reply(`{"indicators":[{"itemName":"` + strings.TrimSpace(page) + `","valueNum":1}]}`), nil
	}}
}

// TestDocuments: an upload of several pages becomes several pages of the report, in order,
// mixed with single images; MaxPages counts pages, not uploads, and is refused before any page
// is prepared or any model call made; a document that cannot be split or a page that cannot be
// prepared is its problem, naming the page, with no model call. Response.Pages counts the pages,
// failure or not, once the uploads are split.
func TestDocuments(t *testing.T) {
	tests := []struct {
		name    string
		uploads []string
		max     int
		want    string // indicator names, in order
		code    problem.Code
		detail  string
		prepare bool // pages were prepared before the refusal
		pages   int  // Response.Pages
	}{
		{name: "a document between two photos", uploads: []string{"p1", "doc:a,b,c", "p2"}, want: "p1,a,b,c,p2", pages: 5},
		{name: "pages at the limit", uploads: []string{"doc:a,b", "p"}, max: 3, want: "a,b,p", pages: 3},
		{name: "pages over the limit", uploads: []string{"doc:a,b,c", "p"}, max: 3,
			code: problem.TooManyPages, detail: "the files hold 4 pages; send at most 3 pages per request", pages: 4},
		{name: "uploads over the limit", uploads: []string{"p1", "p2"}, max: 1,
			code: problem.TooManyPages, detail: "more than 1 images", pages: 2},
		{name: "a document that cannot be split", uploads: []string{"p1", "doc!"},
			code: problem.ImageUnreadable, detail: "page 2: the document is damaged"},
		{name: "a page of a document that cannot be prepared", uploads: []string{"p1", "doc:a,x"},
			code: problem.ImageUnreadable, detail: "page 3: the page is damaged", prepare: true, pages: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, prep := byName(), &fakeDocs{}
			images := make([][]byte, len(tt.uploads))
			for i, u := range tt.uploads {
				images[i] = []byte(u)
			}
			res, err := New(Config{Model: m, Prep: prep, MaxPages: tt.max}).Extract(t.Context(), owned(images), check.Context{})
			if res.Pages != tt.pages {
				t.Errorf("Response.Pages %d, want %d", res.Pages, tt.pages)
			}
			if tt.code != "" {
				pe, ok := err.(*problem.Error)
				if !ok || pe.Code != tt.code || !strings.Contains(pe.Detail, tt.detail) {
					t.Fatalf("got %v, want %s holding %q", err, tt.code, tt.detail)
				}
				if len(m.reqs) != 0 {
					t.Errorf("%d model calls for a refused request", len(m.reqs))
				}
				if !tt.prepare && prep.prepared.Load() != 0 {
					t.Errorf("%d pages prepared before the refusal", prep.prepared.Load())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res.Draft); got != tt.want {
				t.Errorf("indicators %s, want %s", got, tt.want)
			}
			if n := strings.Count(tt.want, ",") + 1; len(res.Meta.Pages) != n || len(res.Text) != n {
				t.Errorf("%d pages in meta, %d texts; want %d", len(res.Meta.Pages), len(res.Text), n)
			}
			for i, name := range strings.Split(tt.want, ",") {
				doc := !strings.HasPrefix(name, "p")
				if got := res.Text[i]; doc != (got != nil) || doc && got[0].Text != name {
					t.Errorf("page %d: text %v", i+1, got)
				}
			}
		})
	}
}

// TestDocumentShares: an upload's hold is shared among its pages; what its pages do not need is
// given back once they are prepared, and all of it once the model calls have carried them.
func TestDocumentShares(t *testing.T) {
	for _, pad := range []int{10, 1000} { // pages smaller than the upload, and larger
		t.Run(strconv.Itoa(pad), func(t *testing.T) {
			doc := []byte("doc:a,b,c")
			size := int64(len(doc))
			uploads := budget.New(1 << 20)
			held, _ := uploads.TryTake(size)
			gate := make(chan struct{})
			var heldDuring int64
			var calls atomic.Int32
			m := &fakeModel{answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
				if calls.Add(1) == 1 {
					heldDuring = held.Held()
					close(gate)
				}
				return reply(`{"indicators":[{"itemName":"` + strings.TrimSpace(page) + `","valueNum":1}]}`), nil
			}}
			res, err := New(Config{Model: m, Prep: &fakeDocs{pad: pad}, Concurrency: 1}).Extract(t.Context(), counted(held, [][]byte{doc}), check.Context{})
			if err != nil {
				t.Fatal(err)
			}
			<-gate
			if got := names(res.Draft); got != "a,b,c" {
				t.Errorf("indicators %s", got)
			}
			if want := min(size, 3*int64(pad)); heldDuring > want {
				t.Errorf("held %d bytes during the first call; the pages need at most %d of the %d", heldDuring, want, size)
			}
			if h, ok := uploads.TryTake(1 << 20); !ok {
				t.Errorf("upload memory still held after Extract returned")
			} else {
				h.Close()
			}
		})
	}
}

// TestFaxPagesInOrder: the real Preparer splits the committed three-page fax, and its pages
// reach the model in order, one call each (each page has its own size).
func TestFaxPagesInOrder(t *testing.T) {
	fax, err := os.ReadFile(filepath.Join("..", "testdata", "images", "fax.tiff"))
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
		cfg, err := jpeg.DecodeConfig(strings.NewReader(page))
		if err != nil {
			return vision.Reply{}, err
		}
		return reply(`{"indicators":[{"itemName":"` + strconv.Itoa(cfg.Width) + `","valueNum":1}]}`), nil
	}}
	res, err := New(Config{Model: m, Prep: intake.New(intake.Limits{}, wasm), MaxPages: 3}).Extract(t.Context(), owned([][]byte{fax}), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Draft); got != "864,800,432" {
		t.Errorf("pages by width %s, want 864,800,432", got)
	}
	_, err = New(Config{Model: m, Prep: intake.New(intake.Limits{}, wasm), MaxPages: 2}).Extract(t.Context(), owned([][]byte{fax}), check.Context{})
	if problem.CodeOf(err) != problem.TooManyPages || len(m.reqs) != 3 {
		t.Errorf("3 pages over a limit of 2: %v after %d calls; want too_many_pages and no new call", err, len(m.reqs))
	}
}

// TestDocumentsEndToEnd runs the real Preparer: a digital PDF's pages and a photo reach the
// model in order, each page's text layer comes back in Response.Text (the PDF's pages hold
// their values, the photo none), and every bad document is its clear 4xx with no model call.
func TestDocumentsEndToEnd(t *testing.T) {
	doc := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "documents", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	photo, err := os.ReadFile(filepath.Join("..", "testdata", "images", "scan.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{answer: func(_ context.Context, page string, _ int) (vision.Reply, error) {
		cfg, err := jpeg.DecodeConfig(strings.NewReader(page))
		if err != nil {
			return vision.Reply{}, err
		}
		return reply(`{"indicators":[{"itemName":"` + strconv.Itoa(cfg.Width) + "x" + strconv.Itoa(cfg.Height) + `","valueNum":1}]}`), nil
	}}
	prep := intake.New(intake.Limits{}, wasm)
	res, err := New(Config{Model: m, Prep: prep, MaxPages: 10}).Extract(t.Context(), owned([][]byte{photo, doc("digital.pdf"), doc("rotated.pdf")}), check.Context{})
	if err != nil {
		t.Fatal(err)
	}
	// The PDF's two pages answer alike and merge into one row; meta keeps all four pages.
	if got, want := names(res.Draft), "1240x1754,1447x2048,2048x1447"; got != want || len(res.Meta.Pages) != 4 {
		t.Errorf("pages %s (%d in meta), want %s (4)", got, len(res.Meta.Pages), want)
	}
	// The photo has no text layer; the PDF's first page and the same page turned have the same.
	if len(res.Text) != 4 || res.Text[0] != nil || len(res.Text[1]) == 0 || len(res.Text[1]) != len(res.Text[3]) {
		t.Errorf("text layers: %d pages; words %v", len(res.Text), func() (n []int) {
			for _, t := range res.Text {
				n = append(n, len(t))
			}
			return
		}())
	}
	calls := len(m.reqs)
	for _, tt := range []struct {
		file string
		code problem.Code
	}{
		{"encrypted.pdf", problem.DocumentEncrypted},
		{"truncated.pdf", problem.ImageUnreadable},
		{"bomb-ispe.heic", problem.ImageTooLarge},
		{"truncated.heic", problem.ImageUnreadable},
	} {
		_, err := New(Config{Model: m, Prep: prep}).Extract(t.Context(), owned([][]byte{photo, doc(tt.file)}), check.Context{})
		if problem.CodeOf(err) != tt.code {
			t.Errorf("%s: got %v, want %s", tt.file, err, tt.code)
		}
	}
	if len(m.reqs) != calls {
		t.Errorf("%d model calls for refused documents", len(m.reqs)-calls)
	}
}
