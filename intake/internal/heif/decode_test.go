package heif

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
	"github.com/ocrdraft/ocrdraft/intake/internal/wasmmem"
)

// testDecoder is the tests' decoder, compiled once for all of them.
var testDecoder = NewDecoder(wazero.NewCompilationCache())

// documents is testdata/documents at the repository root, made by intake/internal/gen.
var documents = filepath.Join("..", "..", "..", "testdata", "documents")

func readDoc(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(documents, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
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

// areaDiff is the largest difference of an 8×8 area's mean between a and b, in any channel.
func areaDiff(a, b image.Image) int {
	worst := 0
	r := a.Bounds()
	for y := r.Min.Y; y+8 <= r.Max.Y; y += 8 {
		for x := r.Min.X; x+8 <= r.Max.X; x += 8 {
			var sa, sb [3]int
			for j := range 8 {
				for i := range 8 {
					ar, ag, ab, _ := a.At(x+i, y+j).RGBA()
					br, bg, bb, _ := b.At(x+i, y+j).RGBA()
					sa[0], sa[1], sa[2] = sa[0]+int(ar>>8), sa[1]+int(ag>>8), sa[2]+int(ab>>8)
					sb[0], sb[1], sb[2] = sb[0]+int(br>>8), sb[1]+int(bg>>8), sb[2]+int(bb>>8)
				}
			}
			for c := range 3 {
				d := sa[c] - sb[c]
				worst = max(worst, max(d, -d)/64)
			}
		}
	}
	return worst
}

// TestEmbedded: the decode runs in the embedded module, in its capped memory, whatever libheif
// is installed on this machine; and nothing here imports gen2brain/heic, whose Decode may use a
// system libheif.
func TestEmbedded(t *testing.T) {
	var mem *wasmmem.Capped
	m, err := testDecoder.wholeProbe(t.Context(), readDoc(t, "small.heic"), 256<<20, &mem)
	if err != nil || m.Bounds().Dx() != 640 {
		t.Fatalf("decode: %v, %v", m, err)
	}
	if mem == nil || mem.Peak == 0 {
		t.Fatalf("the decode did not run in the module's memory")
	}
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

// TestDecodeBounds: Decode, for a caller without bounds of its own, takes the grid path and
// refuses what would make libheif decode too much: a grid of more items than libheif reads in
// good time is refused, not handed to libheif whole.
func TestDecodeBounds(t *testing.T) {
	small := readDoc(t, "small.heic")
	m, err := testDecoder.Decode(t.Context(), gen.Grid(small, 10, 10, 640, 480), 1<<30)
	if err != nil || m.Bounds() != image.Rect(0, 0, 640, 480) {
		t.Fatalf("10×10 tiles over 640×480: %v, %v", m, err)
	}
	if _, err := testDecoder.Decode(t.Context(), gen.Grid(small, 100, 100, 640, 480), 1<<30); !errors.Is(err, ErrPictures) {
		t.Fatalf("100×100 tiles over 640×480: %v, want ErrPictures", err)
	}
}

// BenchmarkDecode decodes the 12-megapixel iPhone-like photo (irot) whole; module-MB is the
// decoder's WebAssembly memory at its peak.
//
//	go test -bench Decode -benchtime 5x -run '^$' ./intake/internal/heif/
func BenchmarkDecode(b *testing.B) {
	data := readDoc(b, "photo-irot.heic")
	var mem *wasmmem.Capped
	for b.Loop() {
		if _, err := testDecoder.wholeProbe(b.Context(), data, 320<<20, &mem); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(mem.Peak)/(1<<20), "module-MB")
}

// TestGridHeader: the iPhone-style grid HEIC that gen2brain/heic tests with (nine 512×512 tiles
// under a 1346×1346 grid item, with EXIF) has the grid's size, not a tile's, among its 2 ispe.
func TestGridHeader(t *testing.T) {
	h, err := readHEIF(iphoneGrid(t))
	if err != nil || h.w != 1346 || h.h != 1346 || h.items != 2 {
		t.Fatalf("header %+v, %v; want the grid's 1346×1346 among 2 ispe", h, err)
	}
}

// TestHeader covers readHEIF on hand-made containers.
func TestHeader(t *testing.T) {
	h, err := readHEIF(readDoc(t, "photo-irot.heic"))
	if err != nil || h.w != 4032 || h.h != 3024 || h.rotate != 3 || h.items != 1 {
		t.Fatalf("photo-irot: %+v, %v", h, err)
	}
	cfg, err := DecodeConfig(readDoc(t, "photo-irot.heic"))
	if err != nil || cfg.Width != 3024 || cfg.Height != 4032 {
		t.Fatalf("config %+v, %v; want upright 3024×4032", cfg, err)
	}
	small := readDoc(t, "small.heic")
	for n := range len(small) { // every cut: an error or a size, never a panic
		readHEIF(small[:n])
	}
}

// TestMemoryBound: the module's memory cannot grow past the bound, whatever the file; the
// decode fails as ErrMemory (which intake answers as image_too_large).
func TestMemoryBound(t *testing.T) {
	data := readDoc(t, "photo-irot.heic")
	var mem *wasmmem.Capped
	_, err := testDecoder.wholeProbe(t.Context(), data, 32<<20, &mem)
	if !errors.Is(err, ErrMemory) || mem.Peak > 32<<20 {
		t.Fatalf("got %v, peak %d; want ErrMemory within 32 MiB", err, mem.Peak)
	}
	_, err = testDecoder.wholeProbe(t.Context(), data, 256<<20, &mem)
	if err != nil || mem.Peak < 32<<20 {
		t.Fatalf("got %v, peak %d; want it decoded in more than 32 MiB", err, mem.Peak)
	}
	t.Logf("a 12-megapixel HEIC peaks at %d bytes of module memory (%.1f a pixel)", mem.Peak, float64(mem.Peak)/(4032*3024))
}

// TestGridTiles: an iPhone's grid HEIC (gen2brain/heic's test file, nine 512×512 tiles under
// a 1346×1346 grid) is decoded tile by tile and put together, and comes out as libheif's own
// decode of the grid does, area by area (luma to the pixel but for the cut edge; libheif's
// chroma differs by a little); a file that is not a grid is not read as one.
func TestGridTiles(t *testing.T) {
	data := iphoneGrid(t)
	h, err := readHEIF(data)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := readGrid(data, h)
	if !ok || g.rows != 3 || g.cols != 3 || g.w != 1346 || g.h != 1346 {
		t.Fatalf("grid %+v, %v; want 3×3 tiles of a 1346×1346 picture", g, ok)
	}
	whole, err := testDecoder.whole(t.Context(), data, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	tiles, ok, err := testDecoder.decodeGrid(t.Context(), data, g, h.rotate, 1<<30)
	if err != nil || !ok || tiles.Bounds() != whole.Bounds() {
		t.Fatalf("tiles: %v, %v, %v; want %v", tiles.Bounds(), ok, err, whole.Bounds())
	}
	if d := areaDiff(whole, tiles); d > 16 {
		t.Errorf("an 8×8 area differs from libheif's by %d", d)
	}
	small := readDoc(t, "small.heic")
	sh, err := readHEIF(small)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := readGrid(small, sh); ok {
		t.Error("a single picture read as a grid")
	}
}

// TestGridILOCBound: an iloc whose extents take no bytes of the file (every size 0, 0xffff
// extents an item, 150,000 items in 1.5 MB) cannot make the walk's work grow past its budget
// of extents: the grid is not read (and the file goes to libheif whole, which refuses it).
// Before, this walk took about 25 minutes, deaf to the deadline; it would now hang the test.
func TestGridILOCBound(t *testing.T) {
	data := hostileILOC(150_000)
	h, err := readHEIF(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := readGrid(data, h); ok {
		t.Fatal("a grid read from an iloc past the budget")
	}
	meta, _ := child(boxes(data), "meta")
	if _, ok := ilocAll(data, boxes(meta.body[4:]))[1]; ok {
		t.Fatal("item data found past the budget")
	}
}

// rbox and hostileILOC are from an independent review's proof of the unbounded walk.
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

// hostileILOC: a grid primary whose iloc has `items` entries of 0xffff zero-byte extents each.
func hostileILOC(items int) []byte {
	ftyp := rbox("ftyp", []byte("heic\x00\x00\x00\x00mif1heic"))
	pitm := rbox("pitm", []byte{0, 0, 0, 0, 0, 1})
	infe := rbox("infe", []byte{2, 0, 0, 0, 0, 1, 0, 0}, []byte("grid"))
	iinf := rbox("iinf", []byte{0, 0, 0, 0, 0, 1}, infe)
	iref := rbox("iref", []byte{0, 0, 0, 0})
	ispe := rbox("ispe", []byte{0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 3, 0})
	ipco := rbox("ipco", ispe)
	ipma := rbox("ipma", []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0x81})
	iprp := rbox("iprp", ipco, ipma)
	// iloc v2, all sizes 0; count, then per item: id(4) method(2) dref(2) extents(2)
	il := []byte{2, 0, 0, 0, 0x00, 0x00}
	il = binary.BigEndian.AppendUint32(il, uint32(items))
	for range items {
		il = append(il, 0, 0, 0, 2, 0, 0, 0, 0, 0xff, 0xff)
	}
	iloc := rbox("iloc", il)
	meta := rbox("meta", []byte{0, 0, 0, 0}, pitm, iinf, iref, iprp, iloc)
	return append(ftyp, meta...)
}

// FuzzGrid feeds the container walks arbitrary bytes: no panic, and a grid they accept is one
// decodeGrid can lay out (every tile's data inside the file, a tile for every cell), whose
// tiles decoded are bounded by the picture and are what heicCost charges, each read from a
// container of one picture of its size.
func FuzzGrid(f *testing.F) {
	for _, name := range []string{"small.heic", "small-irot.heic", "bomb-ispe.heic"} {
		data, err := os.ReadFile(filepath.Join(documents, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if grid, err := moduleGrid(); err == nil {
		f.Add(grid)
	}
	small, err := os.ReadFile(filepath.Join(documents, "small.heic"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(gen.Grid(small, 4, 4, 700, 500))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := readHEIF(data)
		if err != nil {
			return
		}
		g, ok := readGrid(data, h)
		if !ok {
			return
		}
		if len(g.tiles) != g.rows*g.cols {
			t.Fatalf("grid %+v of a %d-byte file", g, len(data))
		}
		for _, tl := range g.tiles {
			if tl.at < 0 || tl.n <= 0 || tl.at+tl.n > len(data) {
				t.Fatalf("a tile at %d+%d of a %d-byte file", tl.at, tl.n, len(data))
			}
		}
		// The tiles decoded are those that cover the picture, no more: their count and pixels
		// are bounded by the picture's, and what heicCost charges is what they are.
		n, px := g.decodes()
		if across, down := (g.w+g.tw-1)/g.tw, (g.h+g.th-1)/g.th; n > across*down ||
			px > (int64(g.w)+int64(g.tw))*(int64(g.h)+int64(g.th)) {
			t.Fatalf("%d tiles of %d×%d decoded for a %d×%d picture", n, g.tw, g.th, g.w, g.h)
		}
		h.grid = &g
		if pics, ppx, _ := heicPlan(h, false); pics != n || ppx != px {
			t.Fatalf("charged %d pictures of %d pixels, decodes %d of %d", pics, ppx, n, px)
		}
		// Each tile's container is one picture of the tile's size, within the room kept for it
		// (kept only for grids Decode does not refuse for their pictures).
		if n > MaxPictures {
			return
		}
		across, _ := g.needed()
		file := append(tileHead(g.tiles[0], g.head, len(data)), data...)
		if len(file) != g.head+len(data) || across < 1 {
			t.Fatalf("a tile's container of %d bytes for %d", len(file)-len(data), g.head)
		}
		th, err := readHEIF(file)
		if err != nil || th.w != g.tw || th.h != g.th || th.pictures != 1 || th.derived {
			t.Fatalf("a tile's container reads as %+v, %v; want one %d×%d picture", th, err, g.tw, g.th)
		}
	})
}
