package intake

import (
	"context"
	"errors"
	"image"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ocrdraft/ocrdraft/intake/internal/heif"
	"github.com/ocrdraft/ocrdraft/intake/internal/wasmmem"
)

// Runtime is what runs intake's WebAssembly: HEIC's decoder (libheif), PDF's (PDFium), and the
// compilation cache their wazero runtimes share, so that each module is compiled once per
// Runtime, and, with a directory, once per machine. Each module is compiled at its
// first use, or by Start: PDFium's WebAssembly takes about 6 s of one core and 300 MB at its
// peak to compile, libheif's 0.7 s (BenchmarkPDFStart, BenchmarkHEICStart). main builds one
// and hands it to every Preparer; a test builds its own. Its methods are safe for concurrent
// use.
type Runtime struct {
	cache wazero.CompilationCache
	heic  *heif.Decoder // in this process, where no worker can be started (heicOff)
	// heicPool decodes HEICs in worker processes, each decode's CPU time held to HEICWork.
	heicPool *heif.Pool
	heicOff  struct {
		sync.Mutex
		err    error     // why HEICs are decoded in this process: a worker could not start
		at     time.Time // when; a worker is tried again heicRetry after
		closed bool      // for good: the runtime is closed
	}
	pdf   func() (pdfium.Pool, error) // the PDFium pool, started on first use (pdf.go)
	stats pdfCounters                 // its PDFium work, for tests to hold to their bounds

	// next hands the memory cap of the PDFium instance being made to the allocator, and the
	// allocator's memory back: go-pdfium makes an instance inside GetInstance, on the caller's
	// goroutine, and the allocator is told nothing of whose instance it is. Held from before
	// the GetInstance call to after it, so that each instance gets the cap of its own document.
	next struct {
		sync.Mutex
		limit uint64
		mem   *wasmmem.Capped
	}
}

// NewRuntime returns a Runtime whose compiled code is kept in dir (created if need be) across
// processes, so that a later process loads it instead of compiling; "" keeps it in memory only,
// and so does a directory that cannot be used. Nothing is compiled yet.
//
// HEICs are decoded in worker processes (heif.Pool: this executable started again), at most
// one idle worker per CPU kept between files; their compiled code is kept in dir too, or,
// without one, in a private temporary directory that Close removes.
func NewRuntime(dir string) *Runtime {
	cache := wazero.NewCompilationCache()
	if dir != "" {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			cache = c
		} else {
			dir = "" // the workers' code in a directory of their own
		}
	}
	r := &Runtime{cache: cache, heic: heif.NewDecoder(cache), heicPool: heif.NewPool(dir, runtime.NumCPU())}
	r.pdf = sync.OnceValues(r.startPDF)
	return r
}

// Start starts a HEIC worker (or, if none can start, compiles the HEIC decoder in this process:
// HEICInProcess says why) and compiles the PDF decoder, now rather than at the first upload that
// needs them. Call it before serving (in the background if the start must not wait).
func (r *Runtime) Start() error {
	if err := r.startHEIC(); err != nil {
		return err
	}
	_, err := r.pdf()
	return err
}

// startHEIC starts a HEIC worker, or compiles the decoder here if none can start.
func (r *Runtime) startHEIC() error {
	if !r.heicInProcess() {
		err := r.heicPool.Warm(context.Background())
		r.heicStarted(err)
		if err == nil {
			return nil
		}
	}
	return r.heic.Compile()
}

// heicRetry is how long HEICs are decoded in this process after a worker could not be started,
// before one is tried again: a start that failed for a while (no memory, no process slot left)
// does not leave HEICs unbounded by HEICWork for the rest of the process.
var heicRetry = time.Minute

// HEICInProcess is why HEICs are decoded in this process rather than in worker processes (a
// worker could not be started: its error, which holds no upload's data), nil while they are
// not. HEICs are decoded here, bounded by their pixels and memory but not by HEICWork, which
// needs a worker to kill, until a worker is tried again heicRetry later and starts.
func (r *Runtime) HEICInProcess() error {
	r.heicOff.Lock()
	defer r.heicOff.Unlock()
	return r.heicOff.err
}

// heicInProcess says whether the next HEIC is decoded in this process: the runtime is closed,
// or a worker failed to start less than heicRetry ago.
func (r *Runtime) heicInProcess() bool {
	r.heicOff.Lock()
	defer r.heicOff.Unlock()
	return r.heicOff.closed || r.heicOff.err != nil && time.Since(r.heicOff.at) < heicRetry
}

// heicStarted records whether a worker could be used (err nil) or not.
func (r *Runtime) heicStarted(err error) {
	r.heicOff.Lock()
	defer r.heicOff.Unlock()
	if !r.heicOff.closed {
		r.heicOff.err, r.heicOff.at = err, time.Now()
	}
}

// decodeHEIC decodes a HEIC in a worker, its CPU time held to budget (heif.ErrWork past it), or
// in this process while no worker can be started.
func (r *Runtime) decodeHEIC(ctx context.Context, data []byte, limit int64, budget time.Duration) (image.Image, error) {
	if !r.heicInProcess() {
		m, err := r.heicPool.Decode(ctx, data, limit, budget)
		if !errors.Is(err, heif.ErrStart) {
			if r.HEICInProcess() != nil {
				r.heicStarted(nil) // workers start again
			}
			return m, err
		}
		r.heicStarted(err)
	}
	return r.heic.Decode(ctx, data, limit)
}

// PDFOpens is how many times a PDF document has been opened (by PDFium, each in an instance of
// its own) since the Runtime began: once for its count and all its pages, unless it was parked
// and evicted, or its instance killed. For tests and measurements.
func (r *Runtime) PDFOpens() int64 { return r.stats.opens.Load() }

// Close ends the HEIC workers and removes their private directory, if any. Decodes after it
// run in this process.
func (r *Runtime) Close() error {
	r.heicOff.Lock()
	r.heicOff.err, r.heicOff.closed = errors.New("intake: the runtime is closed"), true
	r.heicOff.Unlock()
	return r.heicPool.Close()
}

// pdfMemory is the PDFium runtime's memory allocator: a memory capped at next.limit, the
// instance's charge in the decode memory, and never more (0 when no instance is being made
// through pdfInstance: such an instance gets no memory at all and fails to start).
func (r *Runtime) pdfMemory(c, _ uint64) experimental.LinearMemory {
	m := wasmmem.New(c, max(c, r.next.limit)) // wazero panics on a memory that cannot hold its start
	r.next.mem = m
	return m
}

// pdfInstance takes a fresh PDFium instance whose WebAssembly memory cannot grow past limit
// bytes, and that memory, whose peak and refusal tell what a page needed.
func (r *Runtime) pdfInstance(ctx context.Context, pool pdfium.Pool, limit uint64) (pdfium.Pdfium, *wasmmem.Capped, error) {
	r.next.Lock()
	defer r.next.Unlock()
	r.next.limit, r.next.mem = limit, nil
	inst, err := pool.GetInstanceWithContext(ctx)
	mem := r.next.mem
	r.next.limit, r.next.mem = 0, nil
	if err != nil {
		return nil, nil, err
	}
	if mem == nil { // an instance made elsewhere: its cap is unknown, so it is not used
		inst.Kill()
		return nil, nil, errors.New("intake: a PDFium instance without its memory")
	}
	return inst, mem, nil
}

// pdfCounters count a Runtime's PDFium work, which tests and fuzzers hold to a bound: documents
// opened (once for all their pages), objects walked before drawing, image stream bytes read, and
// the memory caps of the instances alive, with their peak sum, which the decode memory bounds.
type pdfCounters struct {
	opens          atomic.Int64
	live, livePeak atomic.Int64
	peak           atomic.Int64 // the most one instance's memory grew to
	walked, raw    atomic.Int64 // objects looked at before drawing, image stream bytes read
	worked         atomic.Int64 // the most CPU time (ns) one page's reading or drawing was charged
	overruns       atomic.Int64 // pages whose instance was killed at PDFPageWork
}

// work records one phase's charged CPU time.
func (c *pdfCounters) work(d time.Duration) {
	for {
		p := c.worked.Load()
		if int64(d) <= p || c.worked.CompareAndSwap(p, int64(d)) {
			return
		}
	}
}

// gone records an instance's end: its cap is no longer alive, and its peak counts.
func (c *pdfCounters) gone(m *wasmmem.Capped) {
	c.alive(-int64(m.Max))
	for {
		p := c.peak.Load()
		if g := int64(m.Grown()); g <= p || c.peak.CompareAndSwap(p, g) {
			return
		}
	}
}

// alive adds n bytes of cap to the instances alive.
func (c *pdfCounters) alive(n int64) {
	v := c.live.Add(n)
	for {
		p := c.livePeak.Load()
		if v <= p || c.livePeak.CompareAndSwap(p, v) {
			return
		}
	}
}
