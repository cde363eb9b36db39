package intake

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	// The HEIC decoder is libheif and libde265 compiled to WebAssembly (gen2brain/heic's build,
	// copied into internal/heif), run here by wazero. That module's own Decode switches to a
	// system libheif.so whenever one can be loaded, with different behaviour and no bounds, so
	// intake never calls it and does not link it.
	"github.com/ocrdraft/ocrdraft/intake/internal/heif"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// heicFormat is HEIC's row: the size from the container's boxes (heif.go), decoded by libheif.
var heicFormat = format{kind: "heic", mime: "image/heic", what: "a HEIC/HEIF image", match: ftyp(heifBrands...),
	read: readHEIC, failed: heicRefusal}

// readHEIC is the HEIC row's read: the container's primary image, upright, the largest image any
// of its items declares, and its decoder (decodeHEICFile, the module's memory capped).
func readHEIC(_ format, data []byte, i int, l Limits) (header, error) {
	if i != 0 {
		return header{}, pastOnePage(i)
	}
	cfg, hh, err := heicConfig(data)
	if err != nil {
		return header{}, err
	}
	return header{w: cfg.Width, h: cfg.Height, model: cfg.ColorModel, orient: 1, lw: hh.lw, lh: hh.lh,
		price: func() (cost, error) { return heicCost(hh, len(data)), nil },
		decode: func(ctx context.Context, data []byte) decoder { // in its own bounded memory, without a copy of the file
			return func(io.Reader) (image.Image, error) { return decodeHEICFile(ctx, data, hh, l.MaxDecodeBytes) }
		},
	}, nil
}

// heicRefusal is the refusal of a HEIC whose decode reached the module's memory bound.
func heicRefusal(h header, err error) error {
	if !errors.Is(err, errHEICMemory) {
		return nil
	}
	return &problem.Error{Code: problem.ImageTooLarge, Err: err, Detail: fmt.Sprintf(
		"decoding this HEIC needs more than the %s of memory its headers allow for (its picture is larger than they say): export it as JPEG", mib(h.cost.mem))}
}

// heifModule is the compiled HEIC decoder, made on first use: compiling costs about a second,
// once per process.
var heifModule = sync.OnceValues(func() (*heifRuntime, error) {
	ctx := context.Background()
	code, err := heifCode()
	if err != nil {
		return nil, err
	}
	// Not WithCloseOnContextDone: its checks make the decoder several times slower
	// (docs/performance.md). A picture nobody waits for runs on to its end, holding its slot,
	// like Go's decoders (a grid stops at its next tile); its memory and pixels are bounded.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(wasmCache()))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, err
	}
	cm, err := rt.CompileModule(ctx, code)
	if err != nil {
		return nil, err
	}
	return &heifRuntime{rt: rt, cm: cm}, nil
})

// heifCode is the decoder's WebAssembly, unpacked.
func heifCode() ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(heif.Wasm))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

type heifRuntime struct {
	rt wazero.Runtime
	cm wazero.CompiledModule
}

// capped is a WebAssembly memory that cannot grow past max bytes: past it, the module's malloc
// fails and the decode with it. It is the hard bound on what one decode holds, whatever its
// headers said (an HEVC stream may declare a larger picture than its container). Where it can,
// it reserves max bytes of address space once (reserve), so that growing never copies and
// freeing returns the pages to the system at once; else it grows a slice.
type capped struct {
	buf     []byte
	max     uint64
	mapped  bool
	refused bool   // a growth past max was asked for
	peak    uint64 // the largest size it grew to
}

func newCapped(initial, max uint64) *capped {
	c := &capped{max: max}
	if b := reserve(max); b != nil {
		c.buf, c.mapped = b, true
		// Unmapped only once unreachable: wazero's memory holds c while any call may touch it.
		runtime.AddCleanup(c, release, b)
	} else {
		c.buf = make([]byte, 0, min(initial, max))
	}
	return c
}

func (c *capped) Reallocate(size uint64) []byte {
	if size > c.max {
		c.refused = true
		return nil
	}
	c.peak = max(c.peak, size)
	if size <= uint64(cap(c.buf)) {
		c.buf = c.buf[:size]
		return c.buf
	}
	next := make([]byte, size, min(c.max, max(size, uint64(cap(c.buf))*3/2)))
	copy(next, c.buf)
	c.buf = next
	return c.buf
}

// Free gives the pages back to the system at once; the mapping goes with c (see newCapped).
func (c *capped) Free() {
	if c.mapped {
		drop(c.buf)
		c.buf = c.buf[:0]
		return
	}
	c.buf = nil
}

// errHEICMemory is a decode stopped at the memory bound.
var errHEICMemory = errors.New("the decoder reached its memory bound")

// decodeHEIC decodes the primary image of a HEIC, upright (libheif applies irot and imir), in a
// fresh instance of the module whose memory may grow to limit bytes; the instance and its memory
// are let go of before it returns, and the pixels copied out. ctx ends it at once.
func decodeHEIC(ctx context.Context, data []byte, limit int64) (image.Image, error) {
	var mem *capped
	return decodeHEICProbe(ctx, data, limit, &mem)
}

// decodeHEICProbe is decodeHEIC that also returns the module's memory, for tests.
func decodeHEICProbe(ctx context.Context, data []byte, limit int64, memp **capped) (image.Image, error) {
	d, err := newHEIFDecoder(ctx, data, 0, limit)
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
	mem            *capped
	malloc, decode api.Function
	free           api.Function
	in, out        uint64 // the head bytes and the file in the module's memory; 20 bytes of results
	n, room        int    // bytes decoded from in; head
}

func newHEIFDecoder(ctx context.Context, data []byte, head int, limit int64) (*heifDecoder, error) {
	hr, err := heifModule()
	if err != nil {
		return nil, fmt.Errorf("heic: start: %w", err)
	}
	d := &heifDecoder{n: head + len(data), room: head}
	ictx := experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(c, _ uint64) experimental.LinearMemory {
		d.mem = newCapped(c, uint64(limit))
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
		err = errHEICMemory
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
func heicFailed(err error, mem *capped) error {
	switch {
	case mem != nil && mem.refused:
		return errHEICMemory
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
// tiles 20–35 ms), counted as heicPerPicture pixels; pixels and that count together are held
// to OCR_MAX_PIXELS, and the pictures to MaxHEICPictures. A phone's 12-megapixel grid is 48
// tiles of 512² (15.7 million counted), a 24-megapixel one 108 (35.4 million).
const (
	MaxHEICPictures = 256
	heicPerPicture  = 65536
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

// heicCost: the module's memory and the planes copied out of it (for a grid, each tile's and
// the picture put together, turned), or a whole decode's if that is more, since a grid whose
// tiles turn out unequal is decoded whole; and the bounds on the pictures it decodes.
func heicCost(h heifHeader, size int) cost {
	pic := int64(h.w) * int64(h.h)
	pictures, px, at1 := heicPlan(h, false)
	c := cost{mem: heicWasm(h, size, true) + heicCopyPerPixel*pic, what: "HEIC"}
	if h.grid != nil {
		c.mem = heicWasm(h, size, false) + heicCopyPerPixel*(at1+2*pic)
		if wholeOK(h) {
			c.mem = max(c.mem, heicWasm(h, size, true)+heicCopyPerPixel*pic)
		}
	}
	c.over = func(l Limits) error {
		units := px + heicPerPicture*int64(pictures)
		tiles := ""
		if h.derived {
			tiles = fmt.Sprintf(" (its tiles: %d×%d at most)", h.tw, h.th)
			if h.grid != nil {
				tiles = fmt.Sprintf(" (the tiles of %d×%d that cover it)", h.grid.tw, h.grid.th)
			}
		}
		switch {
		case h.entries > MaxHEIFItems:
			return problem.Errorf(problem.ImageTooLarge,
				"the HEIC's container lists %d items; the limit is %d: export it as JPEG", h.entries, MaxHEIFItems)
		case pictures > MaxHEICPictures:
			return problem.Errorf(problem.ImageTooLarge,
				"decoding this %d×%d HEIC means decoding %d pictures%s; the limit is %d: export it as JPEG", h.w, h.h, pictures, tiles, MaxHEICPictures)
		case h.grid == nil && h.derived && h.px > (int64(h.w)+int64(h.tw))*(int64(h.h)+int64(h.th)):
			return problem.Errorf(problem.ImageTooLarge,
				"the HEIC's %d tiles%s hold %.1f megapixels for a %d×%d picture, more than the picture needs: export it as JPEG",
				h.pictures, tiles, float64(h.px)/1e6, h.w, h.h)
		case units > int64(l.MaxPixels):
			return problem.Errorf(problem.ImageTooLarge,
				"decoding this %d×%d HEIC means decoding %d pictures%s of %.1f megapixels, counted as %.1f with each picture's set-up; the limit is %.1f megapixels: export it as JPEG",
				h.w, h.h, pictures, tiles, float64(px)/1e6, float64(units)/1e6, float64(l.MaxPixels)/1e6)
		}
		return nil
	}
	return c
}

// decodeHEICReader is the format table's decode for HEIC, for callers without a context: a grid
// tile by tile, within the default limits' bounds on what libheif decodes.
func decodeHEICReader(r io.Reader) (image.Image, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	_, h, err := heicConfig(b)
	if err != nil {
		return nil, err
	}
	if err := heicCost(h, len(b)).over(Limits{}.withDefaults()); err != nil {
		return nil, err
	}
	return decodeHEICFile(context.Background(), b, h, DefaultMemPerPixel*DefaultMaxPixels)
}

// heicWork counts the pictures a HEIC decode hands to libheif and their pixels (a tile's, or the
// primary's as libheif reports it), for the oracles of the tests and fuzzers: what is decoded
// must stay within what was charged for it. Atomic: a decode may run on after its caller.
type heicWork struct{ pictures, px atomic.Int64 }

type heicWorkKey struct{}

// withHEICWork returns ctx carrying w, which every decode under it counts into.
func withHEICWork(ctx context.Context, w *heicWork) context.Context {
	return context.WithValue(ctx, heicWorkKey{}, w)
}

func countWork(ctx context.Context, px int64) {
	if w, ok := ctx.Value(heicWorkKey{}).(*heicWork); ok {
		w.pictures.Add(1)
		w.px.Add(px)
	}
}
