package intake

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gen2brain/heic"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/intake/internal/heif"
	"github.com/ocrdraft/ocrdraft/internal/testwait"

	"github.com/ocrdraft/ocrdraft/problem"
)

// documents is testdata/documents at the repository root, made by intake/internal/gen.
var documents = filepath.Join("..", "testdata", "documents")

func readDoc(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(documents, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHEIC covers HEIC intake: decoded upright as the container turns it, refused from the
// container's ispe before decoding when too large, stopped at the decoder's memory bound when
// the coded picture is larger than the container says.
func TestHEIC(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		limits  Limits
		code    problem.Code
		detail  string
		w, h    int
		decoded bool // the decoder ran
	}{
		{name: "12-megapixel photo with irot", file: "photo-irot.heic", w: 1536, h: 2048, decoded: true},
		{name: "as the sensor saw it", file: "photo-sideways.heic", w: 2048, h: 1536, decoded: true},
		{name: "small, irot 1", file: "small-irot.heic", w: 480, h: 640, decoded: true},
		{name: "ispe over the pixel limit", file: "bomb-ispe.heic", code: problem.ImageTooLarge,
			detail: "the image is 8192×8192 pixels (67.1 megapixels); the limit is 40.0 megapixels"},
		{name: "over the memory bound by its ispe", file: "photo-irot.heic", limits: Limits{MaxDecodeBytes: 100 << 20},
			code: problem.ImageTooLarge, detail: "decoding this 3024×4032 HEIC would take 143.6 MiB of memory; the limit is 100 MiB"},
		// The module's memory is capped at what the ispe's picture takes: the 4096² coded
		// picture stops there, before it is decoded.
		{name: "coded picture larger than its ispe", file: "lying-ispe.heic", code: problem.ImageTooLarge, decoded: true,
			detail: "decoding this HEIC needs more than the 4.1 MiB of memory its headers allow for"},
		{name: "truncated", file: "truncated.heic", code: problem.ImageUnreadable, decoded: true},
		{name: "no meta box", file: "", code: problem.ImageUnreadable, detail: "a HEIC/HEIF image but is truncated or corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")
			if tt.file != "" {
				data = readDoc(t, tt.file)
			}
			p := New(tt.limits, testRuntime)
			decoded := false
			p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) {
				decoded = true
				return next(r)
			}
			pg, err := p.Prepare(t.Context(), data)
			if decoded != tt.decoded {
				t.Errorf("decoded %v, want %v", decoded, tt.decoded)
			}
			if tt.code != "" {
				pe, ok := err.(*problem.Error)
				if !ok || pe.Code != tt.code || !strings.Contains(pe.Detail, tt.detail) {
					t.Fatalf("got %v, want %s holding %q", err, tt.code, tt.detail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pg.Width != tt.w || pg.Height != tt.h || pg.MIME != "image/jpeg" || pg.Kind != "heic" || !pg.Reencoded {
				t.Errorf("got %s %s %d×%d, want a JPEG of %d×%d", pg.Kind, pg.MIME, pg.Width, pg.Height, tt.w, tt.h)
			}
		})
	}
}

// TestHEICUpright: the iPhone-like photo, stored sideways with irot, comes out as the same
// upright picture as the JPEG of that photo stored sideways with EXIF orientation 6; turned
// half way it would not.
func TestHEICUpright(t *testing.T) {
	p := New(Limits{MaxEdge: 256}, testRuntime)
	grey := func(data []byte) *image.Gray {
		pg, err := p.Prepare(t.Context(), data)
		if err != nil {
			t.Fatal(err)
		}
		m, err := jpeg.Decode(bytes.NewReader(pg.Data))
		if err != nil {
			t.Fatal(err)
		}
		g := image.NewGray(m.Bounds())
		for y := range g.Rect.Dy() {
			for x := range g.Rect.Dx() {
				g.Set(x, y, color.GrayModel.Convert(m.At(x, y)))
			}
		}
		return g
	}
	h, j := grey(readDoc(t, "photo-irot.heic")), grey(read(t, "phone-exif6.jpg"))
	if h.Rect != j.Rect {
		t.Fatalf("HEIC %v, JPEG %v", h.Rect, j.Rect)
	}
	diff := func(flip bool) int {
		sum := 0
		for y := range h.Rect.Dy() {
			for x := range h.Rect.Dx() {
				hx, hy := x, y
				if flip {
					hx, hy = h.Rect.Dx()-1-x, h.Rect.Dy()-1-y
				}
				d := int(h.GrayAt(hx, hy).Y) - int(j.GrayAt(x, y).Y)
				sum += max(d, -d)
			}
		}
		return sum / (h.Rect.Dx() * h.Rect.Dy())
	}
	if same, turned := diff(false), diff(true); same > 12 || turned < 2*same+10 {
		t.Errorf("mean difference from the upright JPEG %d, turned half way %d: the HEIC is not upright", same, turned)
	}
}

// TestHEICEmbedded: intake decodes HEIC only in the embedded WebAssembly module
// (internal/heif, whose TestEmbedded checks the decode runs in the module's capped memory),
// never through gen2brain/heic's Decode, which switches to a system libheif.so when one loads:
// no file of the package imports that module.
func TestHEICEmbedded(t *testing.T) {
	t.Logf("system libheif on this machine: %v", heic.Dynamic())
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(f, "_test.go") && bytes.Contains(src, []byte(`"github.com/gen2brain/heic"`)) {
			t.Errorf("%s imports gen2brain/heic, whose decoder may use a system libheif", f)
		}
	}
}

// TestHEICGrid reads the iPhone-style grid HEIC that gen2brain/heic tests with (nine 512×512
// tiles under a 1346×1346 grid item, with EXIF): the size is the grid's, not a tile's, and it
// decodes whole.
func TestHEICGrid(t *testing.T) {
	data := iphoneGrid(t)
	h, err := heif.DecodeConfig(data)
	if err != nil || h.Width != 1346 || h.Height != 1346 {
		t.Fatalf("header %+v, %v; want the grid's 1346×1346", h, err)
	}
	pg, err := New(Limits{}, testRuntime).Prepare(t.Context(), data)
	if err != nil || pg.Width != 1346 || pg.Height != 1346 {
		t.Fatalf("got %d×%d, %v", pg.Width, pg.Height, err)
	}
	t.Logf("%d bytes sent", pg.BytesOut)
}

// rbox is an ISO BMFF box of typ holding body.
func rbox(typ string, body ...[]byte) []byte {
	n := 8
	for _, b := range body {
		n += len(b)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(n))
	out = append(out, typ...)
	for _, b := range body {
		out = append(out, b...)
	}
	return out
}

// iphoneGrid is gen2brain/heic's test file, an iPhone's grid HEIC, from the module cache; the
// test is skipped when the go tool cannot find it.
func iphoneGrid(tb testing.TB) []byte {
	tb.Helper()
	data, err := moduleGrid()
	if err != nil {
		tb.Skip(err)
	}
	return data
}

func moduleGrid() ([]byte, error) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gen2brain/heic").Output()
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "testdata", "test.heic"))
}

// TestHEICGridBounds: a grid decodes only the tiles that cover its picture, and what it would
// make libheif decode (tiles, their pixels, the container's items) is bounded before any
// decode, refused as image_too_large by what is over the limit. Each case's grid is made from
// small.heic's one 640×480 picture, every tile sharing it, as a hostile grid does in a few KB.
// Before, a 10×10 grid over 640×480 decoded all 100 tiles (5.4 CPU-s), a 40×40 one ran to the
// deadline, and a tile or thumbnail of 60000² was named by the picture's 640×480.
func TestHEICGridBounds(t *testing.T) {
	small := readDoc(t, "small.heic")
	imir := rbox("imir", []byte{0})
	tests := []struct {
		name       string
		data       []byte
		limits     Limits
		code       problem.Code
		detail     string
		w, h       int
		tiles      int64 // decoded, counted
		tileBudget int   // tiles decoded tile by tile at most (heif.Plan)
	}{
		{name: "one tile", data: gen.Grid(small, 1, 1, 640, 480), w: 640, h: 480, tiles: 1},
		{name: "4×4 tiles over their picture", data: gen.Grid(small, 4, 4, 2560, 1920), limits: Limits{MaxEdge: 640}, w: 640, h: 480, tiles: 16},
		{name: "a last column and row cut", data: gen.Grid(small, 2, 2, 700, 500), w: 700, h: 500, tiles: 4},
		{name: "10×10 tiles over one tile's picture", data: gen.Grid(small, 10, 10, 640, 480), w: 640, h: 480, tiles: 1},
		{name: "30×30 tiles over one tile's picture", data: gen.Grid(small, 30, 30, 640, 480), w: 640, h: 480, tiles: 1},
		{name: "40×40 tiles: too many items", data: gen.Grid(small, 40, 40, 640, 480), code: problem.ImageTooLarge,
			detail: "the HEIC's container lists 1601 items; the limit is 1024"},
		{name: "17×17 tiles over their picture: too many pictures", data: gen.Grid(small, 17, 17, 10880, 8160), limits: Limits{MaxPixels: 100e6},
			code: problem.ImageTooLarge, detail: "decoding this 10880×8160 HEIC means decoding 289 pictures (the tiles of 640×480 that cover it); the limit is 256"},
		{name: "8×8 tiles over their picture: too many pixels", data: gen.Grid(small, 8, 8, 5120, 3840), limits: Limits{MaxPixels: 20e6},
			code: problem.ImageTooLarge, detail: "means decoding 64 pictures (the tiles of 640×480 that cover it) of 19.7 megapixels, counted as 23.9 with each picture's set-up; the limit is 20.0 megapixels"},
		// A mirrored grid goes to libheif whole, which would decode every tile.
		{name: "mirrored, whole: 10×10 tiles over one tile's picture", data: gen.Grid(small, 10, 10, 640, 480, imir), code: problem.ImageTooLarge,
			detail: "the HEIC's 100 tiles (its tiles: 640×480 at most) hold 30.7 megapixels for a 640×480 picture, more than the picture needs"},
		{name: "mirrored, whole: 2×2 tiles over their picture", data: gen.Grid(small, 2, 2, 1280, 960, imir), w: 1280, h: 960, tiles: 1},
		// Sides of 2³²−1 made the pixels' product overflow into a negative number, under every limit.
		{name: "a picture of (2³²−1)² declared", data: gen.WithISPE(small, 1<<32-1, 1<<32-1), code: problem.ImageTooLarge,
			detail: "the image is 16777216×16777216 pixels"},
		{name: "tiles of 60000² declared", data: gen.WithISPE(gen.Grid(small, 1, 1, 640, 480), 60000, 60000), code: problem.ImageTooLarge,
			detail: "the image is 640×480 pixels, but the HEIC holds an image (a tile, thumbnail or auxiliary image) of 60000×60000 pixels (3600.0 megapixels)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w heif.Work
			p := New(tt.limits, testRuntime)
			pg, err := p.Prepare(heif.WithWork(t.Context(), &w), tt.data)
			if tt.code != "" {
				pe, ok := err.(*problem.Error)
				if !ok || pe.Code != tt.code || !strings.Contains(pe.Detail, tt.detail) {
					t.Fatalf("got %v, want %s holding %q", err, tt.code, tt.detail)
				}
				if n := w.Pictures.Load(); n != 0 {
					t.Errorf("refused after %d pictures decoded", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pg.Width != tt.w || pg.Height != tt.h {
				t.Errorf("got %d×%d, want %d×%d", pg.Width, pg.Height, tt.w, tt.h)
			}
			if n := w.Pictures.Load(); n != tt.tiles {
				t.Errorf("%d pictures decoded, want %d", n, tt.tiles)
			}
		})
	}
}

// TestHEICStarvation: two callers' HEIC grids cannot hold both decode slots once their callers
// have hung up, and an ordinary PNG from a third caller is answered. Before, a 100×100 grid
// over 640×480 (446 KB) was decoded, libheif reading its container in about 8 s for each of
// its tiles: both slots were held for minutes and the PNG was refused as overloaded at its
// deadline. Now it is refused from its header, and an accepted grid whose caller hangs up
// decodes at most the tile in hand: each tile is a small container of its own, decoded in
// 30 ms or so, and ctx is looked at before the next.
func TestHEICStarvation(t *testing.T) {
	small := readDoc(t, "small.heic")
	png := read(t, "palette.png")
	if err := testRuntime.startHEIC(); err != nil { // compiled as a process starts (Start), not in a request
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"100×100 tiles over 640×480", gen.Grid(small, 100, 100, 640, 480)},
		{"8×8 tiles over 5120×3840", gen.Grid(small, 8, 8, 5120, 3840)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Limits{}, testRuntime)
			p.sem = make(chan struct{}, 2)
			var wg sync.WaitGroup
			works := make([]*heif.Work, 2)
			at := make([]int64, 2) // pictures counted when the caller hung up
			for i := range works {
				works[i] = &heif.Work{}
				ctx, cancel := context.WithCancel(heif.WithWork(context.Background(), works[i]))
				wg.Add(1)
				go func() {
					defer wg.Done()
					done := make(chan struct{})
					go func() { p.Prepare(ctx, tt.data); close(done) }()
					// The caller hangs up once its decode is under way, or after 200 ms.
					wait := time.After(200 * time.Millisecond)
				poll:
					for works[i].Pictures.Load() == 0 {
						select {
						case <-done:
							cancel()
							return
						case <-wait:
							break poll
						case <-time.After(time.Millisecond):
						}
					}
					at[i] = works[i].Pictures.Load()
					cancel()
					<-done
				}()
			}
			wg.Wait()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			t0 := time.Now()
			_, err := p.Prepare(ctx, png)
			t.Logf("the PNG answered %v after the hang-ups, %d slots still held", time.Since(t0), len(p.sem))
			if err != nil {
				t.Fatalf("an ordinary PNG beside two abandoned grids: %v", err)
			}
			for range cap(p.sem) { // every slot back: the abandoned decodes have ended
				select {
				case p.sem <- struct{}{}:
				case <-time.After(time.Minute):
					t.Fatal("the abandoned decodes still hold their slots after a minute")
				}
			}
			for i, w := range works {
				if after := w.Pictures.Load() - at[i]; after > 1 {
					t.Errorf("caller %d: %d pictures decoded after its caller hung up; want the one in hand at most", i, after)
				}
			}
		})
	}
}

// TestHEICWork: a HEIC's decode is held to its CPU time (HEICWork), metered in its worker and
// killed past it; a picture of noise is what takes a decoder longest per pixel, which no
// header says. Before, noise.heic's decode (about 0.1 s) ran to its end whatever its cost, as a
// 12-megapixel picture of noise (about 4 s) would have.
func TestHEICWork(t *testing.T) {
	noise := readDoc(t, "noise.heic")
	tests := []struct {
		name   string
		data   []byte
		work   time.Duration
		refuse bool
	}{
		{name: "noise within HEICWork", data: noise},
		{name: "noise past 20ms", data: noise, work: 20 * time.Millisecond, refuse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(Limits{}, testRuntime)
			p.heicWork = tt.work
			pg, err := p.Prepare(t.Context(), tt.data)
			if !tt.refuse {
				if err != nil || pg.Kind != "heic" {
					t.Fatalf("got %s, %v", pg.Kind, err)
				}
				return
			}
			pe, ok := err.(*problem.Error)
			want := "the HEIC takes more than 20ms of one processor core to decode: export it as JPEG"
			if !ok || pe.Code != problem.ImageTooLarge || pe.Detail != want || !errors.Is(err, heif.ErrWork) {
				t.Fatalf("got %v, want image_too_large: %q", err, want)
			}
		})
	}
	if err := testRuntime.HEICInProcess(); err != nil {
		t.Fatalf("decoded in this process: %v", err)
	}
}

// TestHEICCancel: a HEIC whose caller hangs up mid-decode has its worker killed, so its decode
// slot is free at once, not when libheif would have finished; a PNG and a HEIC after it are
// answered, with the one slot. Before, a single picture (here a mirrored grid, which libheif
// decodes whole: 16 pictures of noise, about 1.5 s) ran on to its end holding the slot.
func TestHEICCancel(t *testing.T) {
	noise := readDoc(t, "noise.heic")
	data := gen.Grid(noise, 4, 4, 2560, 1920, rbox("imir", []byte{0}))
	p := New(Limits{}, testRuntime)
	p.sem = make(chan struct{}, 1)
	p.heicWork = time.Minute // the hang-up, not the budget, stops it
	var decoded struct {
		sync.Mutex
		done bool
		err  error
	}
	p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) {
		m, err := next(r)
		decoded.Lock()
		decoded.done, decoded.err = true, err
		decoded.Unlock()
		return m, err
	}
	var w heif.Work
	ctx, cancel := context.WithCancel(heif.WithWork(t.Context(), &w))
	answered := make(chan error, 1)
	go func() { _, err := p.Prepare(ctx, data); answered <- err }()
	testwait.For(t, "the decode to be under way", func() bool { return w.Pictures.Load() > 0 })
	cancel()
	if err := <-answered; !errors.Is(err, context.Canceled) {
		t.Fatalf("the hung-up HEIC answered %v", err)
	}
	testwait.For(t, "the decode slot to be free", func() bool { return len(p.sem) == 0 })
	decoded.Lock()
	done, err := decoded.done, decoded.err
	decoded.Unlock()
	if !done || !errors.Is(err, context.Canceled) {
		t.Fatalf("the slot was held until the decode ended with %v; want it stopped, with the hang-up", err)
	}
	p.dec = nil
	for _, next := range [][]byte{read(t, "palette.png"), readDoc(t, "small.heic")} {
		if _, err := p.Prepare(t.Context(), next); err != nil {
			t.Fatalf("after the hang-up: %v", err)
		}
	}
}

// TestHEICInProcess: where no worker can be started, a HEIC is decoded in this process, as
// before workers, and HEICInProcess says why (what main logs once); a grid as well.
func TestHEICInProcess(t *testing.T) {
	rt := NewRuntime("")
	rt.heicPool.Close() // a closed pool starts no worker
	if err := rt.HEICInProcess(); err != nil {
		t.Fatalf("in process before any HEIC: %v", err)
	}
	p := New(Limits{}, rt)
	for _, data := range [][]byte{readDoc(t, "small-irot.heic"), gen.Grid(readDoc(t, "small.heic"), 2, 2, 700, 500)} {
		if pg, err := p.Prepare(t.Context(), data); err != nil || pg.Kind != "heic" {
			t.Fatalf("got %s, %v", pg.Kind, err)
		}
	}
	if err := rt.HEICInProcess(); !errors.Is(err, heif.ErrStart) {
		t.Fatalf("HEICInProcess %v, want the worker's start error", err)
	}
}

// TestHEICWorkerAgain: a worker that could not start is tried again heicRetry later, and once
// one starts HEICs are decoded in workers again (held to HEICWork), rather than in this process
// for the rest of its life.
func TestHEICWorkerAgain(t *testing.T) {
	defer func(d time.Duration) { heicRetry = d }(heicRetry)
	heicRetry = 0
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(dir, nil, 0o600); err != nil { // a file where the workers' directory should be
		t.Fatal(err)
	}
	rt := NewRuntime("")
	rt.heicPool.Close()
	rt.heicPool = heif.NewPool(dir, 1)
	defer rt.Close()
	p := New(Limits{}, rt)
	data := readDoc(t, "small-irot.heic")
	if _, err := p.Prepare(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	if err := rt.HEICInProcess(); !errors.Is(err, heif.ErrStart) {
		t.Fatalf("HEICInProcess %v, want the worker's start error", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Prepare(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	if err := rt.HEICInProcess(); err != nil {
		t.Fatalf("a worker could start again, but: %v", err)
	}
	if rt.heicPool.Stats().Started == 0 {
		t.Error("no worker was started")
	}
}
