package tiff

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"io"
	"testing"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
)

// defaultWork is intake's default decode work (16 × 40 megapixels), the bound TestJPEGTables
// holds a page's work to.
const defaultWork int64 = 16 * 40_000_000

// TestJPEGTables: decodeJPEG puts JPEGTables before every block and reads both twice, so a
// page's work counts the tables once a block: shared tables of 60 KB over 15,625 tiles are over
// the default decode work (as 60 KB copied and parsed 15,625 times would take seconds), the
// same tiles with a JPEG encoder's 600 bytes are not. The directory's count is what is charged.
func TestJPEGTables(t *testing.T) {
	data := gen.JPEGTIFF(gen.Photo(256, 256), 64, true, true)
	pages, err := chain(data)
	if err != nil {
		t.Fatal(err)
	}
	bo, _, _ := order(data)
	_, tables, _ := tagValues(data, bo, pages[0].at, 347)
	if pages[0].tables != len(tables) || len(tables) < 100 {
		t.Fatalf("JPEGTables of %d bytes read as %d", len(tables), pages[0].tables)
	}
	page := ifd{w: 2000, h: 2000, tileW: 16, tileH: 16, compression: 7, bits: 8, samples: 3}
	for _, tt := range []struct {
		tables int
		over   bool
	}{{600, false}, {60_000, true}} {
		page.tables = tt.tables
		if w := (Page{page}).Work(); (w > defaultWork) != tt.over {
			t.Errorf("tables of %d bytes: work %d million, over %d million: %v", tt.tables, w/1e6, defaultWork/1e6, !tt.over)
		}
	}
}

// TestView: the view of page n reads as the file with the header pointing at n, byte for byte.
func TestView(t *testing.T) {
	data := gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(64, 64)}, {Image: gen.Report(32, 32)}})
	pages, err := chain(data)
	if err != nil || len(pages) != 2 {
		t.Fatal(pages, err)
	}
	got, err := io.ReadAll(newView(data, pages[1].at))
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(data)
	binary.LittleEndian.PutUint32(want[4:], uint32(pages[1].at))
	if !bytes.Equal(got, want) {
		t.Fatalf("the view differs from the patched file")
	}
	if string(data[4:8]) == string(want[4:8]) {
		t.Fatalf("the test is not testing: page 2 is at the first offset")
	}
}

// readCounter counts a decoder's reads of its file, for FuzzDecode's oracle.
type readCounter struct {
	r            io.Reader
	ra           io.ReaderAt
	calls, bytes int64
}

func (c *readCounter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.calls, c.bytes = c.calls+1, c.bytes+int64(n)
	return n, err
}

func (c *readCounter) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.ra.ReadAt(b, off)
	c.calls, c.bytes = c.calls+1, c.bytes+int64(n)
	return n, err
}

// FuzzDecode feeds the page decoders arbitrary TIFFs: none may panic, and a page within a small
// work bound is read no more than its blocks say: a block (strip or tile) in 4 KiB pieces at
// most, the directory in a few.
func FuzzDecode(f *testing.F) {
	f.Add(gen.CMYKTIFF(gen.Photo(64, 48), 16, true))
	f.Add(gen.CMYKTIFF(gen.Photo(64, 48), 48, false))
	for _, c := range []int{gen.TIFFG3, gen.TIFFG4} {
		f.Add(gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(64, 80), Compression: c, BlackIsZero: true}}))
	}
	f.Add(gen.FaxTIFF([]gen.FaxPage{{Image: gen.Report(64, 80), Compression: gen.TIFFG3, T4Options: 1}}))
	f.Add(gen.SharedTiles(64, 64, 8, 2)) // blocks sharing one stream
	f.Add(gen.SharedTiles(64, 300, 0, 1))
	f.Add(gen.JPEGTIFF(gen.Photo(64, 48), 16, false, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		pages, err := Pages(data)
		if err != nil {
			return
		}
		for _, pg := range pages[:min(len(pages), 4)] {
			cfg, err := pg.DecodeConfig(data)
			if err != nil || int64(cfg.Width)*int64(cfg.Height) > 1<<18 || pg.Work() > 1<<24 {
				continue
			}
			if pg.Cost(cfg, len(data)).Mem > 64<<20 {
				continue
			}
			view := reader(data, pg.d)
			reads := &readCounter{r: view, ra: view}
			m, err := pg.decode(context.Background(), data, reads)
			if err == nil && !m.Bounds().In(image.Rect(0, 0, cfg.Width, cfg.Height)) {
				t.Fatalf("decoded %v; the header said %d×%d", m.Bounds(), cfg.Width, cfg.Height)
			}
			if n, _, _ := pg.Blocks(); reads.calls > n+reads.bytes/4096+64 {
				t.Fatalf("%d reads of %d bytes for a page of %d blocks", reads.calls, reads.bytes, n)
			}
		}
	})
}
