package intake

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/klippa-app/go-pdfium"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ocrdraft/ocrdraft/intake/internal/wasmmem"
)

// cacheDir is where compiled WebAssembly is kept across processes; set by Start before the
// first use, "" for memory only.
var (
	cacheMu  sync.Mutex
	cacheDir string
)

// wasmCache is shared by the WebAssembly runtimes of the process (HEIC and PDF), so that each
// module is compiled once per process however many runtimes use it, and, with a directory,
// once per machine.
var wasmCache = sync.OnceValue(func() wazero.CompilationCache {
	cacheMu.Lock()
	dir := cacheDir
	cacheMu.Unlock()
	if dir != "" {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
})

// Start compiles the HEIC and PDF decoders now rather than at the first upload that needs
// them: PDFium's WebAssembly takes about 6 s of one core and 300 MB at its peak to compile,
// libheif's 0.7 s (BenchmarkPDFStart, BenchmarkHEICStart), once per process. With a cache
// directory (created if need be) the compiled code is kept on disk, and a later process loads
// it instead of compiling. Call it once, before serving (in the background if the start must
// not wait); a directory given after the decoders have started is not used.
func Start(dir string) error {
	UseCache(dir)
	if err := heicDecoder().Compile(); err != nil {
		return err
	}
	_, err := pdfPool()
	return err
}

// UseCache sets the directory where compiled WebAssembly is kept across processes, without
// compiling anything now; it must be called before the first PDF or HEIC upload.
func UseCache(dir string) {
	cacheMu.Lock()
	cacheDir = dir
	cacheMu.Unlock()
}

// pdfNext hands the memory cap of the PDFium instance being made to the allocator, and the
// allocator's memory back: go-pdfium makes an instance inside GetInstance, on the caller's
// goroutine, and the allocator is told nothing of whose instance it is. Held from before the
// GetInstance call to after it, so that each instance gets the cap of its own document.
var pdfNext struct {
	sync.Mutex
	limit uint64
	mem   *wasmmem.Capped
}

// pdfMemory is the PDFium runtime's memory allocator: a memory capped at pdfNext.limit, the
// instance's charge in the decode memory, and never more (0 when no instance is being made
// through pdfInstance: such an instance gets no memory at all and fails to start).
func pdfMemory(c, _ uint64) experimental.LinearMemory {
	m := wasmmem.New(c, max(c, pdfNext.limit)) // wazero panics on a memory that cannot hold its start
	pdfNext.mem = m
	return m
}

// pdfInstance takes a fresh PDFium instance whose WebAssembly memory cannot grow past limit
// bytes, and that memory, whose peak and refusal tell what a page needed.
func pdfInstance(ctx context.Context, pool pdfium.Pool, limit uint64) (pdfium.Pdfium, *wasmmem.Capped, error) {
	pdfNext.Lock()
	defer pdfNext.Unlock()
	pdfNext.limit, pdfNext.mem = limit, nil
	inst, err := pool.GetInstanceWithContext(ctx)
	mem := pdfNext.mem
	pdfNext.limit, pdfNext.mem = 0, nil
	if err != nil {
		return nil, nil, err
	}
	if mem == nil { // an instance made elsewhere: its cap is unknown, so it is not used
		inst.Kill()
		return nil, nil, errors.New("intake: a PDFium instance without its memory")
	}
	return inst, mem, nil
}

// pdfStats counts PDFium's work that tests and fuzzers hold to a bound: documents opened (once
// for all their pages), and the memory caps of the instances alive, with their peak sum, which
// the decode memory bounds.
var pdfStats struct {
	opens          atomic.Int64
	live, livePeak atomic.Int64
	peak           atomic.Int64 // the most one instance's memory grew to
	walked, raw    atomic.Int64 // objects looked at before drawing, image stream bytes read
}

// pdfGone records an instance's end: its cap is no longer alive, and its peak counts.
func pdfGone(m *wasmmem.Capped) {
	pdfLive(-int64(m.Max))
	for {
		p := pdfStats.peak.Load()
		if int64(m.Peak) <= p || pdfStats.peak.CompareAndSwap(p, int64(m.Peak)) {
			return
		}
	}
}

// pdfLive adds n bytes of cap to the instances alive.
func pdfLive(n int64) {
	v := pdfStats.live.Add(n)
	for {
		p := pdfStats.livePeak.Load()
		if v <= p || pdfStats.livePeak.CompareAndSwap(p, v) {
			return
		}
	}
}
