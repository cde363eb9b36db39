package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/cpuclock"
	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/problem"
)

// workShapes are pages whose cost PDFium's API does not show before drawing, each followed by
// an ordinary page; uncut, each costs 1.5 s to over 10 s of one core (BenchmarkPDFWork).
var workShapes = []struct {
	name string
	page func(r *gen.RawPDF)
	what string // the phase refused: "draw", or "read" (the parse)
}{
	{"a soft mask of 8000×8000 under a 10×10 image", func(r *gen.RawPDF) { r.AddSoftMasked(8000) }, "draw"},
	{"40 Type3 glyphs of 20 000 lines each", func(r *gen.RawPDF) { r.AddType3(40, 20_000) }, "draw"},
	{"a tiling pattern of 0.3-point cells", func(r *gen.RawPDF) { r.AddTiling(0.3) }, "draw"},
	{"a function shading of 1000 operators a pixel", func(r *gen.RawPDF) { r.AddShading(1000) }, "draw"},
	{"a content stream of a million lines to parse", func(r *gen.RawPDF) {
		r.Add(gen.RawPage{W: 595, H: 842, Content: gen.Lines(1_000_000, 595, 842), Flate: true})
	}, "read"},
}

func workShape(page func(r *gen.RawPDF)) []byte {
	var r gen.RawPDF
	page(&r)
	r.Add(gen.RawPage{W: 595, H: 842, Content: []byte("0 0 100 100 re f\n")})
	return r.Bytes()
}

// workKills skips a test that has PDFium killed past a CPU budget where that cannot be run: under
// the race detector, since wazero's close of the killed module races the call's own memory
// growth (in the dependency, not here: docs/development.md; CI runs these in its pass without
// it), and without a thread CPU clock (systems other than Linux: only PDFPageTime and the
// request's deadline bound PDFium there).
func workKills(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("kills PDFium in the middle of its calls (docs/development.md); CI runs this in its pass without the race detector")
	}
	if _, ok := cpuclock.Thread(); !ok {
		t.Skip("no thread CPU clock: only PDFPageTime and the request's deadline bound PDFium here")
	}
}

// TestPDFPageWork: a page whose drawing (or reading) takes more than PDFPageWork of one core,
// here shortened to 300 ms, is refused at it, 413, in what the walk cannot see; the document's
// next page is drawn (in a new instance: the one that drew too long was killed).
func TestPDFPageWork(t *testing.T) {
	workKills(t)
	for _, tt := range workShapes {
		t.Run(tt.name, func(t *testing.T) {
			data := workShape(tt.page)
			p := New(Limits{}, testRuntime)
			p.pageWork = 300 * time.Millisecond
			if _, err := p.Split(t.Context(), data); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := p.PreparePage(t.Context(), data, 0)
			took := time.Since(start)
			var pe *problem.Error
			want := "page 1 of the PDF takes more than 300ms of one processor core to " + tt.what
			if !errors.As(err, &pe) || pe.Code != problem.ImageTooLarge || !strings.Contains(pe.Detail, want) {
				t.Fatalf("got %v after %v; want image_too_large saying %q", err, took, want)
			}
			if tt.what == "draw" {
				if _, err := p.PreparePage(t.Context(), data, 1); err != nil {
					t.Fatalf("the next page: %v", err)
				}
				return
			}
			// A page refused in its reading refuses the pages after it, as the walk's bounds
			// do, without the document opened again.
			opens := testRuntime.stats.opens.Load()
			if _, err := p.PreparePage(t.Context(), data, 1); !errors.As(err, &pe) || !strings.Contains(pe.Detail, want) {
				t.Fatalf("the next page: got %v; want image_too_large saying %q", err, want)
			}
			if got := testRuntime.stats.opens.Load() - opens; got != 0 {
				t.Errorf("opened %d times for a page refused already", got)
			}
		})
	}
}

// flatePage is a page of one w×h Flate image of colour space cs (comps bytes a pixel) over it:
// a scan as a PDF writer stores one losslessly, the costliest image PDFium draws that the walk
// lets through at the pixel limit.
func flatePage(w, h int, cs string, comps int) func(r *gen.RawPDF) {
	return func(r *gen.RawPDF) {
		im := r.Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /%s /BitsPerComponent 8", w, h, cs),
			make([]byte, w*h*comps), true)
		r.Add(gen.RawPage{W: 595, H: 842, Content: gen.Draw(1, 595, 842), XObjects: []int{im}})
	}
}

// BenchmarkPDFWork: the CPU time of one page of each workShape and of the largest Flate scans,
// refused at PDFPageWork ("cut") and, for comparison, drawn to the end ("uncut": PDFPageWork
// and PDFPageTime an hour); refused is 1 when the page was refused; and the opening of a broken
// cross-reference table, at PDFOpenWork and uncut. Run with -benchtime=1x.
func BenchmarkPDFWork(b *testing.B) {
	if _, err := testRuntime.pdf(); err != nil {
		b.Fatal(err)
	}
	shapes := append([]struct {
		name string
		page func(r *gen.RawPDF)
		what string
	}{}, workShapes...)
	shapes = append(shapes, []struct {
		name string
		page func(r *gen.RawPDF)
		what string
	}{
		{"grey Flate 6300×6300", flatePage(6300, 6300, "DeviceGray", 1), "draw"},
		{"RGB Flate 6000×6000", flatePage(6000, 6000, "DeviceRGB", 3), "draw"},
		{"CMYK Flate 6300×6300", flatePage(6300, 6300, "DeviceCMYK", 4), "draw"},
	}...)
	for _, s := range shapes {
		data := workShape(s.page)
		for _, cut := range []bool{true, false} {
			name := s.name + "/uncut"
			if cut {
				name = s.name + "/cut"
			}
			b.Run(name, func(b *testing.B) {
				p := New(Limits{}, testRuntime)
				if !cut {
					p.pageWork, p.pageTime = time.Hour, time.Hour
				}
				refused := 0.0
				cpuLoop(b, func() error {
					if _, err := p.PreparePage(context.Background(), data, 0); err != nil {
						refused = 1
					}
					return nil
				})
				b.ReportMetric(refused, "refused")
			})
		}
	}
	broken := gen.BrokenXref(3, 300_000) // its opening, at Split
	for _, cut := range []bool{true, false} {
		name := "a broken xref of 300 000 objects/uncut"
		if cut {
			name = "a broken xref of 300 000 objects/cut"
		}
		b.Run(name, func(b *testing.B) {
			p := New(Limits{}, testRuntime)
			if !cut {
				p.openWork = time.Hour
			}
			refused := 0.0
			cpuLoop(b, func() error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel() // lets go of the document
				if _, err := p.Split(ctx, broken); err != nil {
					refused = 1
				}
				return nil
			})
			b.ReportMetric(refused, "refused")
		})
	}
}

// TestPDFOpenWork: a document whose opening takes more than PDFOpenWork of one core, here
// shortened to 300 ms (a broken cross-reference table of 200 000 objects to rebuild, about
// 1.5 s), is refused at it, 413, at its count and at a page of its own; an ordinary broken one
// (1000 objects) is opened.
func TestPDFOpenWork(t *testing.T) {
	workKills(t)
	p := New(Limits{}, testRuntime)
	p.openWork = 300 * time.Millisecond
	want := "opening the PDF takes more than 300ms of one processor core"
	data := gen.BrokenXref(2, 200_000)
	_, err := p.Split(t.Context(), data)
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.ImageTooLarge || !strings.Contains(pe.Detail, want) {
		t.Fatalf("Split: got %v; want image_too_large saying %q", err, want)
	}
	if _, err := p.PreparePage(t.Context(), data, 1); !errors.As(err, &pe) || !strings.Contains(pe.Detail, want) {
		t.Fatalf("PreparePage: got %v; want image_too_large saying %q", err, want)
	}
	small := gen.BrokenXref(2, 1000)
	if n, err := p.Split(t.Context(), small); err != nil || n != 2 {
		t.Fatalf("a small broken table: %d pages, %v", n, err)
	}
}

// TestPDFDocumentWork: a document's openings and its pages share pages × PDFPageWork, so that
// no page costs more than that with its share of the opening: one page whose broken
// cross-reference table takes longer than that to rebuild (here within PDFOpenWork, raised) is
// refused at its page, however light the page; the opening alone is not refused, and with room
// for both the page is drawn (B17b: a broken table of 170,000 objects and a
// 40-megapixel page, 3.5–4.7 s of one core in all, were accepted).
func TestPDFDocumentWork(t *testing.T) {
	workKills(t)
	p := New(Limits{}, testRuntime)
	p.openWork, p.pageWork = time.Hour, 100*time.Millisecond
	data := gen.BrokenXref(1, 100_000) // its opening: about a second of one core
	if n, err := p.Split(t.Context(), data); err != nil || n != 1 {
		t.Fatalf("Split: %d, %v", n, err)
	}
	want := "the PDF takes more than 100ms of one processor core a page to open and draw"
	_, err := p.PreparePage(t.Context(), data, 0)
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.ImageTooLarge || !strings.Contains(pe.Detail, want) {
		t.Fatalf("got %v; want image_too_large saying %q", err, want)
	}
	p.pageWork = time.Hour // room for both: drawn
	if _, err := p.PreparePage(t.Context(), gen.BrokenXref(1, 100_000), 0); err != nil {
		t.Fatal(err)
	}
}

// TestPDFPageTimeWaits: PDFPageTime counts a page's own time once it holds a decode slot. A page
// that waited longer than that for a slot the service's other work held is drawn once it gets
// one, not refused as a page that takes too long to draw (B17: under 16 requests at once, pages
// that were 200 alone were 413 image_too_large).
func TestPDFPageTimeWaits(t *testing.T) {
	p := New(Limits{}, testRuntime)
	p.pageTime = 200 * time.Millisecond
	data := gen.PDF([]gen.PDFPage{{W: 595, H: 842, Content: gen.LabPage(0)}}, "")
	if _, err := p.Split(t.Context(), data); err != nil { // opened once, outside the wait below
		t.Fatal(err)
	}
	for range cap(p.sem) {
		p.sem <- struct{}{}
	}
	go func() {
		time.Sleep(4 * p.pageTime)
		for range cap(p.sem) {
			<-p.sem
		}
	}()
	if _, err := p.PreparePage(t.Context(), data, 0); err != nil {
		t.Fatalf("a page that waited for a slot longer than PDFPageTime: %v", err)
	}
}

// TestPageTimeRefusal: a page that held its slot for PDFPageTime is refused as its own work
// (image_too_large) when its thread was on a core for at least half of it, and as the
// machine's load (overloaded, with Retry-After) when it mostly waited for one.
func TestPageTimeRefusal(t *testing.T) {
	m := newMeter(time.Hour, &pdfCounters{}, func() {})
	m.begin()
	defer m.stop()
	if _, ok := m.used(); !ok {
		t.Skip("no thread CPU clock on this system: every such page is image_too_large")
	}
	time.Sleep(50 * time.Millisecond) // the thread holds no core while it sleeps
	if err := pageTimeRefusal(0, 50*time.Millisecond, m); problem.CodeOf(err) != problem.Overloaded {
		t.Errorf("a page that waited: %v, want overloaded", err)
	}
	for used, _ := m.used(); used < 30*time.Millisecond; used, _ = m.used() {
	}
	if err := pageTimeRefusal(0, 50*time.Millisecond, m); problem.CodeOf(err) != problem.ImageTooLarge {
		t.Errorf("a page that worked: %v, want image_too_large", err)
	}
	var none pdfMeter // no thread clock: nothing tells it was the load
	if err := pageTimeRefusal(0, time.Second, &none); problem.CodeOf(err) != problem.ImageTooLarge {
		t.Errorf("without a clock: %v, want image_too_large", err)
	}
}
