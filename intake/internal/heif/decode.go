package heif

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/ocrdraft/ocrdraft/intake/internal/wasmmem"
)

// ErrMemory is a decode stopped at its memory bound: the coded picture is larger than the
// container says.
var ErrMemory = errors.New("heic: the decoder reached its memory bound")

// ErrPictures is Decode's refusal of a file that would make libheif decode more than it can in
// good time: more than MaxItems items, more than MaxPictures pictures, or tiles holding more
// pixels than their picture needs. A caller with bounds of its own refuses it first (Plan).
var ErrPictures = errors.New("heic: the file would make libheif decode too much")

// Decoder is the HEIC decoder: the module, compiled on first use (about a second of one core,
// once; with a directory cache, a load), and run in a fresh instance for each file, whose
// memory is capped. A Decoder is safe for concurrent use; Close ends its runtime.
type Decoder struct {
	cache  wazero.CompilationCache
	module func() (*heifRuntime, error)
	mu     sync.Mutex
	rt     wazero.Runtime // once compiled, for Close
}

type heifRuntime struct {
	rt wazero.Runtime
	cm wazero.CompiledModule
}

// NewDecoder returns a decoder that compiles the module into cache (shared with other runtimes
// of the process, so that it is compiled once however many use it), at its first Compile or
// Decode.
func NewDecoder(cache wazero.CompilationCache) *Decoder {
	d := &Decoder{cache: cache}
	d.module = sync.OnceValues(d.compile)
	return d
}

// Compile compiles the module now, rather than at the first file.
func (d *Decoder) Compile() error {
	_, err := d.module()
	return err
}

func (d *Decoder) compile() (*heifRuntime, error) {
	ctx := context.Background()
	z, err := gzip.NewReader(bytes.NewReader(Wasm))
	if err != nil {
		return nil, err
	}
	code, err := io.ReadAll(z)
	if err != nil {
		return nil, err
	}
	// Not WithCloseOnContextDone: its checks make the decoder several times slower
	// (docs/performance.md). In this process a picture nobody waits for runs on to its end,
	// holding its slot, like Go's decoders (a grid stops at its next tile); its memory and pixels
	// are bounded. A Pool runs this decoder in a worker process instead, which it kills.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(d.cache))
	d.mu.Lock()
	d.rt = rt
	d.mu.Unlock()
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, err
	}
	cm, err := rt.CompileModule(ctx, code)
	if err != nil {
		return nil, err
	}
	return &heifRuntime{rt: rt, cm: cm}, nil
}

// Close ends the decoder's runtime, if it was compiled; decodes in progress fail.
func (d *Decoder) Close(ctx context.Context) error {
	d.mu.Lock()
	rt := d.rt
	d.mu.Unlock()
	if rt == nil {
		return nil
	}
	return rt.Close(ctx)
}

// Decode decodes a HEIC's primary image, upright (as irot and imir turn it): a grid tile by tile
// where it can, else whole, in an instance whose memory is capped at what Cost charges for the
// module, limit bytes at most (past it, ErrMemory). A grid stops at its next tile once ctx ends;
// a single picture runs to its end (Pool.Decode, in a worker, stops either at once). It refuses
// what Plan says is too much (ErrPictures).
func (d *Decoder) Decode(ctx context.Context, data []byte, limit int64) (image.Image, error) {
	h, err := DecodeConfig(data)
	if err != nil {
		return nil, err
	}
	if p := h.Plan(); p.Items > MaxItems || p.Pictures > MaxPictures || p.Waste {
		return nil, ErrPictures
	}
	return d.decodeFile(ctx, data, h.h, limit)
}

// whole decodes the primary image of a HEIC, upright (libheif applies irot and imir), in a
// fresh instance of the module whose memory may grow to limit bytes; the instance and its memory
// are let go of before it returns, and the pixels copied out. ctx ends it at once.
func (dd *Decoder) whole(ctx context.Context, data []byte, limit int64) (image.Image, error) {
	var mem *wasmmem.Capped
	return dd.wholeProbe(ctx, data, limit, &mem)
}

// wholeProbe is whole that also returns the module's memory, for tests.
func (dd *Decoder) wholeProbe(ctx context.Context, data []byte, limit int64, memp **wasmmem.Capped) (image.Image, error) {
	d, err := dd.instance(ctx, data, 0, limit)
	if d != nil {
		*memp = d.mem
		defer d.close()
	}
	if err != nil {
		return nil, err
	}
	return d.picture(ctx)
}

// heifDecoder is one instance of the module holding one file, whose primary image it decodes,
// as many times as asked. Before the file it keeps room for a small container of head bytes:
// a grid's tiles are decoded one by one, each from a container of its own written there
// (tileFile), whose tile's data is in the file, without copying the file again.
type heifDecoder struct {
	mod            api.Module
	mem            *wasmmem.Capped
	malloc, decode api.Function
	free           api.Function
	in, out        uint64 // the head bytes and the file in the module's memory; 20 bytes of results
	n, room        int    // bytes decoded from in; head
}

func (dd *Decoder) instance(ctx context.Context, data []byte, head int, limit int64) (*heifDecoder, error) {
	hr, err := dd.module()
	if err != nil {
		return nil, fmt.Errorf("heic: start: %w", err)
	}
	d := &heifDecoder{n: head + len(data), room: head}
	ictx := experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(c, _ uint64) experimental.LinearMemory {
		d.mem = wasmmem.New(c, uint64(limit))
		return d.mem
	}))
	mod, err := hr.rt.InstantiateModule(ictx, hr.cm, wazero.NewModuleConfig().WithName("").WithStdout(io.Discard).WithStderr(io.Discard))
	if err != nil {
		return nil, fmt.Errorf("heic: instantiate: %w", err)
	}
	d.mod = mod
	d.malloc, d.decode, d.free = mod.ExportedFunction("malloc"), mod.ExportedFunction("decode"), mod.ExportedFunction("free")
	if d.in, err = d.alloc(ctx, d.n); err != nil {
		return d, err
	}
	if !mod.Memory().Write(uint32(d.in)+uint32(head), data) {
		return d, errors.New("heic: write")
	}
	if d.out, err = d.alloc(ctx, 20); err != nil {
		return d, err
	}
	return d, nil
}

func (d *heifDecoder) close() { d.mod.Close(context.Background()) }

func (d *heifDecoder) call(ctx context.Context, f api.Function, args ...uint64) (uint64, error) {
	r, err := f.Call(ctx, args...)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, err
	}
	if len(r) == 0 { // free returns nothing
		return 0, nil
	}
	return r[0], nil
}

func (d *heifDecoder) alloc(ctx context.Context, n int) (uint64, error) {
	p, err := d.call(ctx, d.malloc, uint64(n))
	if err == nil && p == 0 {
		err = ErrMemory
	}
	if err != nil {
		return 0, heicFailed(err, d.mem)
	}
	return p, nil
}

// head writes the container to decode before the file, b being head bytes.
func (d *heifDecoder) head(b []byte) bool {
	return len(b) == d.room && d.mod.Memory().Write(uint32(d.in), b)
}

// picture decodes the file's primary image, its pixels copied out of the module's memory.
func (d *heifDecoder) picture(ctx context.Context) (image.Image, error) {
	mem := d.mod.Memory()
	u32 := func(i uint64) uint32 { v, _ := mem.ReadUint32Le(uint32(d.out + 4*i)); return v }
	args := func(configOnly, dst uint64) []uint64 {
		o := d.out
		return []uint64{d.in, uint64(d.n), configOnly, o, o + 4, o + 8, o + 12, o + 16, dst}
	}
	if ok, err := d.call(ctx, d.decode, args(1, 0)...); err != nil || ok == 0 {
		return nil, heicFailed(err, d.mem)
	}
	w, h, space, chroma := int(u32(0)), int(u32(1)), u32(2), u32(3)
	countWork(ctx, int64(w)*int64(h))
	rect := image.Rect(0, 0, w, h)
	var size, ys, cs int
	var ratio image.YCbCrSubsampleRatio
	switch space {
	case heifColorspaceYCbCr:
		switch chroma {
		case heifChroma420:
			ratio = image.YCbCrSubsampleRatio420
		case heifChroma422:
			ratio = image.YCbCrSubsampleRatio422
		case heifChroma444:
			ratio = image.YCbCrSubsampleRatio444
		default:
			return nil, fmt.Errorf("heic: chroma %d", chroma)
		}
		_, _, cw, ch := yCbCrSize(rect, ratio)
		ys, cs = align16(w), align16(cw)
		size = ys*h + 2*cs*ch
	case heifColorspaceMonochrome:
		ys = align16(w)
		size = ys * h
	case heifColorspaceRGB:
		ys = align16(4 * w)
		size = ys * h
	default:
		return nil, fmt.Errorf("heic: colour space %d", space)
	}
	dst, err := d.alloc(ctx, size)
	if err != nil {
		return nil, err
	}
	defer d.call(context.Background(), d.free, dst)
	if ok, err := d.call(ctx, d.decode, args(0, dst)...); err != nil || ok == 0 {
		return nil, heicFailed(err, d.mem)
	}
	view, ok := mem.Read(uint32(dst), uint32(size))
	if !ok {
		return nil, errors.New("heic: read")
	}
	pix := bytes.Clone(view) // the module's memory goes with it
	switch space {
	case heifColorspaceYCbCr:
		_, _, _, ch := yCbCrSize(rect, ratio)
		i0, i1 := ys*h, ys*h+cs*ch
		return &image.YCbCr{Y: pix[:i0:i0], Cb: pix[i0:i1:i1], Cr: pix[i1:size:size], YStride: ys, CStride: cs, SubsampleRatio: ratio, Rect: rect}, nil
	case heifColorspaceMonochrome:
		return &image.Gray{Pix: pix, Stride: ys, Rect: rect}, nil
	}
	if u32(4) == 1 {
		return &image.RGBA{Pix: pix, Stride: ys, Rect: rect}, nil
	}
	return &image.NRGBA{Pix: pix, Stride: ys, Rect: rect}, nil
}

// heicFailed names why a decode failed: the memory bound, the deadline, or the file.
func heicFailed(err error, mem *wasmmem.Capped) error {
	switch {
	case mem != nil && mem.Refused:
		return ErrMemory
	case err != nil:
		return err
	}
	return errors.New("heic: libheif could not decode the file")
}

// The values heif.c (gen2brain/heic's glue) reports, from libheif's heif.h.
const (
	heifColorspaceYCbCr      = 0
	heifColorspaceRGB        = 1
	heifColorspaceMonochrome = 2
	heifChroma420            = 1
	heifChroma422            = 2
	heifChroma444            = 3
)

func align16(n int) int { return (n + 15) &^ 15 }

// yCbCrSize is image.YCbCr's plane sizes for r and ratio, as the glue lays the planes out.
func yCbCrSize(r image.Rectangle, ratio image.YCbCrSubsampleRatio) (w, h, cw, ch int) {
	w, h = r.Dx(), r.Dy()
	switch ratio {
	case image.YCbCrSubsampleRatio422:
		cw, ch = (r.Max.X+1)/2-r.Min.X/2, h
	case image.YCbCrSubsampleRatio420:
		cw, ch = (r.Max.X+1)/2-r.Min.X/2, (r.Max.Y+1)/2-r.Min.Y/2
	default:
		cw, ch = w, h
	}
	return
}

// The memory a HEIC decode holds per pixel of what libheif decodes at once (the picture, or one
// tile): the module's memory peaks at 6.9 bytes a pixel for a 12-megapixel photo, 8.9 when the
// container turns it (the coded picture, libheif's copy and its turned copy, the glue's output,
// the file; TestHEICMemoryBound), plus what it holds whatever the picture (small.heic, 640×480,
// peaks at 2.0 MB); the planes copied out of it take 1.5, and a grid's picture put together
// here 1.5 again (and once more turned). The module's memory is capped at what is charged for
// it, so a coded picture larger than its header says stops there. At the default limits a
// single HEIC picture of up to 26 megapixels is decoded (an iPhone's 24-megapixel photo is).
const (
	heicWasmPerPixel = 10
	heicCopyPerPixel = 2
	heicModuleBase   = 4 << 20
)

// What a HEIC may make libheif decode, beside its memory. Each picture (a tile) costs about
// 12 ms of one core whatever its size (libde265's set-up; 128² tiles take 12–15 ms each, 512²
// tiles 20–35 ms), counted as PerPicture pixels; pixels and that count together are held
// to the caller's pixel limit, and the pictures to MaxPictures. A phone's 12-megapixel grid is 48
// tiles of 512² (15.7 million counted), a 24-megapixel one 108 (35.4 million).
const (
	MaxPictures = 256   // the most pictures a decode hands libheif; Decode refuses more
	PerPicture  = 65536 // what a picture's set-up counts for, in pixels
)

// heicPlan is what decoding h will do: decodeGrid's tiles, or (whole, or without a grid)
// libheif's decode of the primary, tiles, alpha and all; and the most pixels it holds at once.
func heicPlan(h heifHeader, whole bool) (pictures int, px, at1 int64) {
	if g := h.grid; g != nil && !whole {
		n, px := g.decodes()
		return n, px, int64(g.tw) * int64(g.th)
	}
	pic := int64(h.w) * int64(h.h)
	return max(h.pictures, 1), max(h.px, pic), max(h.px, pic)
}

// wholeOK is whether a grid whose tiles turn out to differ may go to libheif whole: only when
// that decodes no more pictures, and no more pixels, than its tiles that cover the picture.
func wholeOK(h heifHeader) bool {
	n, px, _ := heicPlan(h, false)
	wn, wpx, _ := heicPlan(h, true)
	return wn <= n && wpx <= px
}

// heicWasm is the module memory a decode of h may take, and is capped at: per pixel of what it
// holds at once, the module's own, and the file (and a tile's container before it).
func heicWasm(h heifHeader, size int, whole bool) int64 {
	_, px, at1 := heicPlan(h, whole)
	wasm := heicWasmPerPixel*at1 + heicModuleBase + int64(size)
	if h.grid != nil && !whole {
		// The glue never releases a decoded picture: each tile leaves its planes in the
		// module's memory (1.5 bytes a pixel for the 4:2:0 tiles decodeGrid takes after its
		// first; TestHEICGridMemory).
		wasm += heicCopyPerPixel*px + int64(h.grid.head)
	}
	return wasm
}

// Cost is the most bytes decoding the file holds: the module's memory and the planes copied out
// of it (for a grid, each tile's and the picture put together, turned), or a whole decode's if
// that is more, since a grid whose tiles turn out unequal is decoded whole. size is the file's.
func (h Header) Cost(size int) int64 {
	hh := h.h
	pic := int64(hh.w) * int64(hh.h)
	_, _, at1 := heicPlan(hh, false)
	mem := heicWasm(hh, size, true) + heicCopyPerPixel*pic
	if hh.grid != nil {
		mem = heicWasm(hh, size, false) + heicCopyPerPixel*(at1+2*pic)
		if wholeOK(hh) {
			mem = max(mem, heicWasm(hh, size, true)+heicCopyPerPixel*pic)
		}
	}
	return mem
}

// Plan is what decoding a HEIC hands libheif, beside its memory: what a caller holds to its
// bounds (and Decode to MaxItems and MaxPictures) before any decode.
type Plan struct {
	W, H     int   // the primary image as coded, before irot
	Items    int   // items in the container, which libheif reads in time growing with their square
	Pictures int   // coded pictures decoded: a grid's tiles that cover it, or libheif's whole decode
	Pixels   int64 // their pixels
	Derived  bool  // the primary is made of tiles (a grid, an overlay)
	Grid     bool  // decoded tile by tile
	// TileW, TileH is a derived primary's largest tile; for a grid decoded tile by tile, its tiles.
	TileW, TileH int
	// Waste is a derived primary decoded whole whose tiles hold more pixels than it needs:
	// Tiles of them, TilePixels in all.
	Waste      bool
	Tiles      int
	TilePixels int64
	// Most is the most pictures and pixels a decode may hand libheif: Pictures and Pixels, or a
	// whole decode's when a grid whose tiles turn out to differ may fall back to it.
	MostPictures int
	MostPixels   int64
}

// Plan is what decoding the file will hand libheif.
func (h Header) Plan() Plan {
	hh := h.h
	n, px, _ := heicPlan(hh, false)
	p := Plan{W: hh.w, H: hh.h, Items: hh.entries, Pictures: n, Pixels: px, Derived: hh.derived,
		Grid: hh.grid != nil, TileW: hh.tw, TileH: hh.th, Tiles: hh.pictures, TilePixels: hh.px,
		MostPictures: n, MostPixels: px}
	if g := hh.grid; g != nil {
		p.TileW, p.TileH = g.tw, g.th
		if wholeOK(hh) {
			wn, wpx, _ := heicPlan(hh, true)
			p.MostPictures, p.MostPixels = max(n, wn), max(px, wpx)
		}
	}
	p.Waste = hh.grid == nil && hh.derived && hh.px > (int64(hh.w)+int64(hh.tw))*(int64(hh.h)+int64(hh.th))
	return p
}

// Work counts the pictures a HEIC decode hands to libheif and their pixels (a tile's, or the
// primary's as libheif reports it), for the oracles of the tests and fuzzers: what is decoded
// must stay within what was charged for it. Atomic: a decode may run on after its caller.
type Work struct{ Pictures, Pixels atomic.Int64 }

type workKey struct{}

// WithWork returns ctx carrying w, which every decode under it counts into.
func WithWork(ctx context.Context, w *Work) context.Context {
	return context.WithValue(ctx, workKey{}, w)
}

func countWork(ctx context.Context, px int64) {
	if w, ok := ctx.Value(workKey{}).(*Work); ok {
		w.Pictures.Add(1)
		w.Pixels.Add(px)
	}
	if tell, ok := ctx.Value(progressKey{}).(func(int64)); ok { // in a worker: the parent counts it
		tell(px)
	}
}
