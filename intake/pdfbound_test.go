package intake

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/problem"
)

// jpxHeader is the start of a JPEG 2000 codestream that says it is w×h pixels of one
// component: all the walk reads of it.
func jpxHeader(w, h uint32) []byte {
	b := []byte{0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0}
	for _, v := range []uint32{w, h, 0, 0, w, h, 0, 0} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return append(b, 0, 1, 7, 1, 1, 0xff, 0xd9)
}

// onePage is a PDF of one A4 page drawing the XObject x over the page.
func onePage(r *gen.RawPDF, x ...int) []byte {
	r.Add(gen.RawPage{W: 595, H: 842, Content: gen.Draw(len(x), 595, 842), XObjects: x})
	return r.Bytes()
}

// annotPage is a PDF of one empty A4 page with the annotations as.
func annotPage(r *gen.RawPDF, as ...int) []byte {
	r.Add(gen.RawPage{W: 595, H: 842, Content: []byte("\n"), Annots: as})
	return r.Bytes()
}

// TestPDFBounds: each page that asks PDFium for work that no header shows is refused before it
// is drawn, 413 with the bound in its detail: as deep in nested forms as PDFium draws, with
// images sized from their own streams (a JPEG or JPEG 2000 larger than its dictionary says, a
// progressive JPEG of too many scans or too much work), a page's path segments and a page's
// and a document's image pixels in all. Each is refused in the walk, in the one instance the
// document was opened in.
func TestPDFBounds(t *testing.T) {
	zeros := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name   string
		data   func() []byte
		limits Limits
		page   int
		detail string
	}{
		{"an image of 400 megapixels in forms nested 36 deep", func() []byte {
			var r gen.RawPDF
			return onePage(&r, r.Nested(36, r.Image(20000, 20000, "", nil, false)))
		}, Limits{}, 0, "holds an image of 20000×20000 pixels"},
		{"40 000 objects in a form 34 deep", func() []byte {
			var r gen.RawPDF
			r.Add(gen.RawPage{W: 595, H: 842, Content: []byte("/X0 Do\n"), // at the form's own scale, each line a point long
				XObjects: []int{r.Nested(33, r.Form(bytes.Repeat([]byte("0 0 m 1 1 l S\n"), 40_000), true))}})
			return r.Bytes()
		}, Limits{}, 0, "more than 25000 drawing objects"},
		{"a JPEG of 60000×60000 whose dictionary says 100×100", func() []byte {
			var r gen.RawPDF
			return onePage(&r, r.Image(100, 100, "/DCTDecode", gen.Scans(60000, 60000, 1, 1, true), false))
		}, Limits{}, 0, "holds a JPEG of 60000×60000 pixels"},
		{"the same JPEG under FlateDecode", func() []byte {
			var r gen.RawPDF
			return onePage(&r, r.Image(100, 100, "/DCTDecode", gen.Scans(60000, 60000, 1, 1, true), true))
		}, Limits{}, 0, "holds a JPEG of 60000×60000 pixels"},
		{"a progressive JPEG of 100 scans", func() []byte {
			var r gen.RawPDF
			return onePage(&r, r.Image(4000, 4000, "/DCTDecode", gen.Scans(4000, 4000, 1, 100, true), false))
		}, Limits{}, 0, "holds a JPEG of 100 scans; the limit is 64"},
		{"a progressive JPEG of 60 scans over 36 megapixels", func() []byte {
			var r gen.RawPDF
			return onePage(&r, r.Image(6000, 6000, "/DCTDecode", gen.Scans(6000, 6000, 1, 60, true), false))
		}, Limits{}, 0, "million samples of work to decode (60 scans)"},
		{"a JPEG 2000 of 60000×60000 whose dictionary says 100×100", func() []byte {
			var r gen.RawPDF
			return onePage(&r, r.Image(100, 100, "/JPXDecode", jpxHeader(60000, 60000), false))
		}, Limits{}, 0, "holds a JPEG 2000 image of 60000×60000 pixels"},
		{"a path of a million lines in a few kilobytes", func() []byte {
			var r gen.RawPDF
			r.Add(gen.RawPage{W: 595, H: 842, Content: gen.Lines(1_000_000, 595, 842), Flate: true})
			return r.Bytes()
		}, Limits{}, 0, "more than 50000 path segments"},
		{"5000 lines zigzagging across the page", func() []byte {
			var r gen.RawPDF
			r.Add(gen.RawPage{W: 595, H: 842, Content: gen.Lines(5000, 595, 842), Flate: true})
			return r.Bytes()
		}, Limits{}, 0, "draws more than 10.0 million pixels of paths"},
		{"four images of 39.7 megapixels on a page", func() []byte {
			var r gen.RawPDF
			im := r.Image(6300, 6300, "", zeros(6300*6300), true)
			return onePage(&r, im, im, im, im)
		}, Limits{}, 0, "holds images of more than 40.0 megapixels in all"},
		{"ten pages of 4 megapixels each where the limit is 4", func() []byte {
			var r gen.RawPDF
			im := r.Image(2000, 2000, "", zeros(2000*2000), true)
			for range 10 {
				r.Add(gen.RawPage{W: 595, H: 842, Content: gen.Draw(1, 595, 842), XObjects: []int{im}})
			}
			return r.Bytes()
		}, Limits{MaxPixels: 4_000_000, DecodeMemory: 1 << 30}, 4, "page 5 of the PDF brings the document's images to more than 16 megapixels"},
		{"an image of 49 megapixels in a stamp's appearance", func() []byte {
			var r gen.RawPDF
			ap := r.Form(gen.Draw(1, 1000, 1000), false, r.Image(7000, 7000, "", zeros(7000*7000), true))
			return annotPage(&r, r.Annot("Stamp", [4]float64{100, 100, 300, 200}, ap))
		}, Limits{}, 0, "holds an image of 7000×7000 pixels"},
		{"an image of 49 megapixels in a form field's appearance, two forms deep", func() []byte {
			var r gen.RawPDF
			ap := r.Form(gen.Draw(1, 1000, 1000), false, r.Nested(2, r.Image(7000, 7000, "", zeros(7000*7000), true)))
			return annotPage(&r, r.Annot("Widget", [4]float64{100, 100, 300, 200}, ap))
		}, Limits{}, 0, "holds an image of 7000×7000 pixels"},
		{"900 stamps of 5000 lines each", func() []byte {
			var r gen.RawPDF
			ap := r.Form(gen.Lines(5000, 1000, 1000), true)
			var as []int
			for range 900 {
				as = append(as, r.Annot("Stamp", [4]float64{100, 100, 110, 110}, ap))
			}
			return annotPage(&r, as...)
		}, Limits{}, 0, "more than 50000 path segments"},
		{"a stamp of 5000 lines across a page-sized rectangle", func() []byte {
			var r gen.RawPDF
			// the appearance is 1×1 units, stretched to the whole page by its rectangle
			ap := r.Stream("/Type /XObject /Subtype /Form /BBox [0 0 1 1]", gen.Lines(5000, 1, 1), true)
			return annotPage(&r, r.Annot("Stamp", [4]float64{0, 0, 595, 842}, ap))
		}, Limits{}, 0, "draws more than 10.0 million pixels of paths"},
		{"an ink annotation of 100 000 points and no appearance", func() []byte {
			var r gen.RawPDF
			return annotPage(&r, r.Ink([4]float64{0, 0, 595, 842}, 100_000))
		}, Limits{}, 0, "more than 50000 path segments"},
		{"an ink annotation of 5000 points across the page and no appearance", func() []byte {
			var r gen.RawPDF
			return annotPage(&r, r.Ink([4]float64{0, 0, 595, 842}, 5000))
		}, Limits{}, 0, "draws more than 10.0 million pixels of paths"},
		{"forms 34 deep, each drawing the next twice (2³⁴ draws of 8 squares)", func() []byte {
			var r gen.RawPDF
			x := r.Form(bytes.Repeat([]byte("0 0 2 2 re f\n"), 8), false)
			for range 34 {
				x = r.Form([]byte("/X0 Do /X0 Do\n"), false, x)
			}
			return onePage(&r, x)
		}, Limits{}, 0, "needs more than"}, // PDFium's parse of them, as it loads the page
		{"1001 annotations", func() []byte {
			var r gen.RawPDF
			ap := r.Form([]byte("0 0 1 1 re f\n"), false)
			var as []int
			for range 1001 {
				as = append(as, r.Annot("Stamp", [4]float64{100, 100, 110, 110}, ap))
			}
			return annotPage(&r, as...)
		}, Limits{}, 0, "more than 1000 annotations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data()
			p := New(tt.limits, testRuntime)
			// The walk's bounds, each refused by its own detail: the page's work (TestPDFPageWork)
			// is raised, since the walk of 25 000 objects and the parse of a million lines come
			// near PDFPageWork (past it under the race detector).
			p.pageWork = time.Hour
			opens := testRuntime.stats.opens.Load()
			n, err := p.Split(t.Context(), data)
			if err != nil {
				t.Fatal(err)
			}
			if tt.page >= n {
				t.Fatalf("%d pages", n)
			}
			_, err = p.PreparePage(t.Context(), data, tt.page)
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.ImageTooLarge || !strings.Contains(pe.Detail, tt.detail) {
				t.Fatalf("got %v; want image_too_large saying %q", err, tt.detail)
			}
			if got := testRuntime.stats.opens.Load() - opens; got != 1 {
				t.Errorf("opened %d times, want once for its count and its page", got)
			}
		})
	}
}

// TestPDFOpenedOnce: a document whose cross-reference table must be rebuilt (200 000 objects
// scanned) is opened once for its count and all its pages, however they come.
func TestPDFOpenedOnce(t *testing.T) {
	data := gen.BrokenXref(3, 50_000)
	p := New(Limits{}, testRuntime)
	opens := testRuntime.stats.opens.Load()
	n, err := p.Split(t.Context(), data)
	if err != nil || n != 3 {
		t.Fatalf("Split: %d, %v", n, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = p.PreparePage(t.Context(), data, i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := testRuntime.stats.opens.Load() - opens; got != 1 {
		t.Errorf("opened %d times for %d pages, want once", got, n)
	}
	if p.docs.get(data) != nil {
		t.Error("the document is still kept after its last page")
	}
	if got := p.mem.TryAcquire(p.l.DecodeMemory); !got {
		t.Error("its decode memory was not given back")
	}
}

// TestPDFMemoryCharged: a PDF is charged in the decode memory what its instance may grow to
// (the cap, plus what the Go side holds of a page), so that 16 PDFs at once, within a decode
// memory of 160 MiB, hold at most that: they wait for each other instead. Every page is drawn.
func TestPDFMemoryCharged(t *testing.T) {
	const budget = 160 << 20
	p := New(Limits{DecodeMemory: budget}, testRuntime)
	digital := readDoc(t, "digital.pdf")
	charge, limit, _ := p.pdfCharge(len(digital))
	if charge > budget || int64(limit) > charge {
		t.Fatalf("charge %d, cap %d, within %d", charge, limit, budget)
	}
	testRuntime.stats.livePeak.Store(testRuntime.stats.live.Load())
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range 16 {
		data := bytes.Clone(digital) // 16 uploads, 16 documents
		wg.Go(func() {
			if _, err := p.Split(t.Context(), data); err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = p.PreparePage(t.Context(), data, i%2)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if peak := testRuntime.stats.livePeak.Load(); peak > budget {
		t.Errorf("the instances alive at once were capped at %s in all; the decode memory is %s", mib(peak), mib(budget))
	}
	t.Logf("charge %s, cap %s; the largest instance grew to %s", mib(charge), mib(int64(limit)), mib(testRuntime.stats.peak.Load()))
}

// TestPDFReusedBuffer: a document kept between its Split and its pages is found only for the
// same bytes while its Split's request lives: an upload that comes later in the same memory
// (the first request over, or the bytes changed) is its own document, never a page drawn from
// the one before.
func TestPDFReusedBuffer(t *testing.T) {
	a := gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: gen.LabPage(0)}, {W: 595, H: 842, Content: gen.LabPage(1)}, {W: 595, H: 842, Content: gen.LabPage(0)}}, "")
	b := gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: gen.Text("F1", 12, 72, 700, "Second upload 12345")}}, "")
	if len(b) > len(a) {
		t.Fatal("b is longer")
	}
	b = append(b, "\n%"+strings.Repeat(" ", len(a)-len(b)-2)...) // as long as a: the same key
	for _, end := range []bool{false, true} {
		p := New(Limits{}, testRuntime)
		buf := bytes.Clone(a)
		ctx1, cancel := context.WithCancel(t.Context())
		if n, err := p.Split(ctx1, buf); err != nil || n != 3 {
			t.Fatalf("Split: %d, %v", n, err)
		}
		if _, err := p.PreparePage(ctx1, buf, 0); err != nil { // pages 2 and 3 left: kept
			t.Fatal(err)
		}
		if end {
			cancel()
		}
		copy(buf, b)
		n, err := p.Split(t.Context(), buf)
		if err != nil || n != 1 {
			t.Fatalf("request over %v: Split of the second upload: %d pages, %v; want 1", end, n, err)
		}
		pg, err := p.PreparePage(t.Context(), buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Text) == 0 || pg.Text[0].Text != "Second" {
			t.Errorf("request over %v: drew %v, not the second upload", end, pg.Text)
		}
		cancel()
	}
}

// TestPDFParkedDocuments: two PDFs of one request, with decode memory for one document at a
// time: the first, kept open between its count and its pages, is closed for the second's
// count, and opened again for its pages, instead of both waiting for each other until the
// deadline (a request's uploads are all counted before any page is prepared).
func TestPDFParkedDocuments(t *testing.T) {
	digital := readDoc(t, "digital.pdf")
	p := New(Limits{}, testRuntime)
	charge, _, _ := p.pdfCharge(len(digital))
	p = New(Limits{DecodeMemory: charge + charge/2}, testRuntime)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	docs := [][]byte{bytes.Clone(digital), bytes.Clone(digital)}
	counts := make([]int, len(docs))
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	for i, d := range docs {
		wg.Go(func() { counts[i], errs[i] = p.Split(ctx, d) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var pageErrs []error
	var mu sync.Mutex
	for i, d := range docs {
		for j := range counts[i] {
			wg.Go(func() {
				_, err := p.PreparePage(ctx, d, j)
				mu.Lock()
				pageErrs = append(pageErrs, err)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if err := errors.Join(pageErrs...); err != nil {
		t.Fatal(err)
	}
}
