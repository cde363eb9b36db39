package intake

import (
	"context"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/intake/internal/heif"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// The document benchmarks. cpu-ms/op is the process's CPU time per op (see BenchmarkPrepare);
// maxrss-MB the process's peak resident memory so far.
//
//	go test -bench 'PDF|HEIC' -benchtime 5x -run '^$' ./intake/
//	go test -bench 'Start' -benchtime 1x -run '^$' ./intake/

func maxRSS() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// cpuLoop reports cpu-ms/op as this process's CPU time and its HEIC workers' (testRuntime's:
// the ones that ended and the live ones' so far; a child's own rusage is not the parent's until
// it has ended), and worker-maxrss-MB, the largest resident memory one worker reached, when any
// ran.
func cpuLoop(b *testing.B, f func() error) {
	b.Helper()
	b.ReportAllocs()
	start, ok := cpuTime()
	w0 := testRuntime.heicPool.Stats()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	w1 := testRuntime.heicPool.Stats()
	if end, _ := cpuTime(); ok {
		b.ReportMetric(float64(end-start+w1.CPU-w0.CPU)/1e6/float64(b.N), "cpu-ms/op")
	}
	b.ReportMetric(maxRSS(), "maxrss-MB")
	if w1.Started > 0 {
		b.ReportMetric(float64(w1.PeakRSS)/(1<<20), "worker-maxrss-MB")
		b.ReportMetric(float64(w1.Started-w0.Started)/float64(b.N), "workers/op")
	}
}

// BenchmarkPDFStart is what a process pays once, at its first PDF: compiling PDFium's
// WebAssembly (a fresh compilation cache each op, as a new process has) and its first instance.
func BenchmarkPDFStart(b *testing.B) {
	cpuLoop(b, func() error {
		pool, err := webassembly.Init(webassembly.Config{MaxTotal: 1, FSConfig: wazero.NewFSConfig(), Stdout: discard{}, Stderr: discard{},
			RuntimeConfig: wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
				WithCompilationCache(wazero.NewCompilationCache()).WithCloseOnContextDone(pdfEnsure)})
		if err != nil {
			return err
		}
		inst, err := pool.GetInstanceWithContext(context.Background())
		if err != nil {
			return err
		}
		inst.Close()
		return pool.Close()
	})
}

// BenchmarkHEICStart is the same for the HEIC decoder.
func BenchmarkHEICStart(b *testing.B) {
	cpuLoop(b, func() error {
		d := heif.NewDecoder(wazero.NewCompilationCache())
		defer d.Close(context.Background())
		return d.Compile()
	})
}

// BenchmarkHEICWorkerStart is what a new HEIC worker costs to start, the compiled code already
// in its directory (as after a process's first worker, or with OCR_WASM_CACHE_DIR): this
// executable started again, the module loaded, ready for a job, then ended. cpu-ms/op counts
// the worker's CPU time and this process's.
func BenchmarkHEICWorkerStart(b *testing.B) {
	dir := b.TempDir()
	warm := heif.NewPool(dir, 1)
	if err := warm.Warm(context.Background()); err != nil {
		b.Fatal(err)
	}
	warm.Close()
	var pools []*heif.Pool
	start, ok := cpuTime()
	for b.Loop() {
		p := heif.NewPool(dir, 1)
		if err := p.Warm(context.Background()); err != nil {
			b.Fatal(err)
		}
		p.Close()
		pools = append(pools, p)
	}
	if end, _ := cpuTime(); ok {
		var w time.Duration
		var rss int64
		for _, p := range pools {
			w += p.Stats().CPU
			rss = max(rss, p.Stats().PeakRSS)
		}
		b.ReportMetric(float64(end-start+w)/1e6/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(rss)/(1<<20), "worker-maxrss-MB")
	}
}

// BenchmarkPDFPage: one digital page rendered at a 2048-pixel long edge and its text read, in a
// fresh instance; "render+text" is PDFium's part, "prepare" all of PreparePage (the JPEG
// encode of the page included). The target for PDFium's part is 60 ms of one core.
func BenchmarkPDFPage(b *testing.B) {
	data := readDoc(b, "digital.pdf")
	p := New(Limits{}, testRuntime)
	if _, err := testRuntime.pdf(); err != nil {
		b.Fatal(err)
	}
	_, limit, _ := p.pdfCharge(len(data))
	b.Run("render+text", func(b *testing.B) {
		cpuLoop(b, func() error {
			d, err := openPDF(context.Background(), testRuntime, data, limit, PDFOpenWork)
			if err != nil {
				return err
			}
			defer d.close()
			page := requests.Page{ByIndex: &requests.PageByIndex{Document: d.doc, Index: 0}}
			r, err := d.inst.RenderPageInPixels(&requests.RenderPageInPixels{Page: page, Width: 1447, Height: 2048})
			if err != nil {
				return err
			}
			defer r.CleanupFunc()
			_, err = p.pdfText(d, page, r.Result.Image.Bounds())
			return err
		})
	})
	b.Run("prepare", func(b *testing.B) {
		cpuLoop(b, func() error { _, err := p.PreparePage(context.Background(), data, 0); return err })
	})
	b.Run("scanned-page", func(b *testing.B) {
		scan := readDoc(b, "scanned.pdf")
		cpuLoop(b, func() error { _, err := p.PreparePage(context.Background(), scan, 0); return err })
	})
}

// BenchmarkPDFConcurrent prepares 16 digital pages at once (the slots let NumCPU render at a
// time); maxrss-MB is the process's peak with them.
func BenchmarkPDFConcurrent(b *testing.B) {
	data := readDoc(b, "digital.pdf")
	p := New(Limits{}, testRuntime)
	if _, err := testRuntime.pdf(); err != nil {
		b.Fatal(err)
	}
	before := maxRSS()
	cpuLoop(b, func() error {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := range 16 {
			wg.Go(func() {
				if _, err := p.PreparePage(context.Background(), data, i%2); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	})
	b.ReportMetric(before, "rss-before-MB")
	b.ReportMetric(float64(runtime.NumCPU()), "slots")
}

// BenchmarkHEIC prepares the 12-megapixel iPhone-like photo (irot): the target is 1.5 s of one
// core and 350 MB at the peak (the decoder's WebAssembly memory at its peak: internal/heif's
// BenchmarkDecode).
func BenchmarkHEIC(b *testing.B) {
	data := readDoc(b, "photo-irot.heic")
	p := New(Limits{}, testRuntime)
	if err := testRuntime.startHEIC(); err != nil { // a worker started, as a process starts (Start)
		b.Fatal(err)
	}
	cpuLoop(b, func() error { _, err := p.Prepare(context.Background(), data); return err })
}

// BenchmarkHEICNoise prepares noise.heic, 640×480 of colour noise (about six times a photo's
// decode per pixel); with OCR_BENCH_HEIC set, that file instead (the larger pictures of noise
// in docs/performance.md are made with heif-enc, not kept in the repository). An op refused
// at HEICWork counts as an op: refused says how many were.
func BenchmarkHEICNoise(b *testing.B) {
	data := readDoc(b, "noise.heic")
	if name := os.Getenv("OCR_BENCH_HEIC"); name != "" {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	}
	p := New(Limits{}, testRuntime)
	if err := testRuntime.startHEIC(); err != nil {
		b.Fatal(err)
	}
	refused := 0
	cpuLoop(b, func() error {
		_, err := p.Prepare(context.Background(), data)
		if problem.CodeOf(err) == problem.ImageTooLarge {
			refused++
			return nil
		}
		return err
	})
	b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
}

// BenchmarkPDFStartCached is BenchmarkPDFStart with the compiled code in a directory cache
// that a first op fills: what a restarted process pays with Start(dir).
func BenchmarkPDFStartCached(b *testing.B) {
	dir := b.TempDir()
	start := func() error {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return err
		}
		pool, err := webassembly.Init(webassembly.Config{MaxTotal: 1, FSConfig: wazero.NewFSConfig(), Stdout: discard{}, Stderr: discard{},
			RuntimeConfig: wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
				WithCompilationCache(cache).WithCloseOnContextDone(pdfEnsure)})
		if err != nil {
			return err
		}
		inst, err := pool.GetInstanceWithContext(context.Background())
		if err != nil {
			return err
		}
		inst.Close()
		return pool.Close()
	}
	if err := start(); err != nil {
		b.Fatal(err)
	}
	cpuLoop(b, start)
}

// BenchmarkTIFF prepares one page of an A4 fax in fine mode (1728×2292 at 204×196 dpi, G4), as
// a fax server stores it: decoded by x/image/tiff, stretched to square pixels, shrunk to the long
// edge, re-encoded as JPEG.
func BenchmarkTIFF(b *testing.B) {
	fax := gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(1728, 2292), Compression: gen.TIFFG4, XRes: 204, YRes: 196}})
	p := New(Limits{}, testRuntime)
	cpuLoop(b, func() error { _, err := p.PreparePage(context.Background(), fax, 0); return err })
}

// BenchmarkHEICGrid prepares an iPhone's grid HEIC (gen2brain/heic's test file, nine 512² tiles
// under a 1346×1346 grid): the typical phone photo's path, tile by tile.
func BenchmarkHEICGrid(b *testing.B) {
	data := iphoneGrid(b)
	p := New(Limits{}, testRuntime)
	if err := testRuntime.startHEIC(); err != nil { // a worker started, as a process starts (Start)
		b.Fatal(err)
	}
	cpuLoop(b, func() error { _, err := p.Prepare(context.Background(), data); return err })
}

// BenchmarkHEICGridWorst prepares a costly grid the default limits accept: 8×8 tiles of
// small.heic's 640×480 over 5120×3840 (23.9 million counted of 40; a 10×10 one is refused by
// its memory when it could also be decoded whole, as this one can), each tile decoded from its
// own container.
func BenchmarkHEICGridWorst(b *testing.B) {
	data := gen.Grid(readDoc(b, "small.heic"), 8, 8, 5120, 3840)
	p := New(Limits{}, testRuntime)
	if err := testRuntime.startHEIC(); err != nil { // a worker started, as a process starts (Start)
		b.Fatal(err)
	}
	cpuLoop(b, func() error { _, err := p.Prepare(context.Background(), data); return err })
}

// BenchmarkTIFFTiles prepares the page of the most blocks the default decode work accepts:
// 2552×2552 in 101,761 deflate tiles of 8×8 sharing one stream (638 million units of 640).
func BenchmarkTIFFTiles(b *testing.B) {
	data := gen.SharedTiles(2552, 2552, 8, 1)
	p := New(Limits{}, testRuntime)
	cpuLoop(b, func() error { _, err := p.PreparePage(context.Background(), data, 0); return err })
}
