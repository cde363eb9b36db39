package intake

import (
	"sync"

	"github.com/tetratelabs/wazero"
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
	if _, err := heifModule(); err != nil {
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
