//go:build unix

package heif

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
)

// testPool is the tests' worker pool (this test binary, started again, is the worker).
func testPool(t *testing.T) *Pool {
	t.Helper()
	p := NewPool(t.TempDir(), 2)
	t.Cleanup(func() { p.Close() })
	return p
}

// TestPoolSame: a worker decodes every kind of file as this process's Decoder does, pixel for
// pixel: a photo turned by irot, a grid tile by tile and cut, a grid that goes to libheif
// whole, what the memory cap stops, what is refused before any decode; and the pictures it
// hands libheif are counted here, as they are decoded. One worker does them all, one after
// another.
func TestPoolSame(t *testing.T) {
	small := readDoc(t, "small.heic")
	p := testPool(t)
	cases := []struct {
		name  string
		data  []byte
		limit int64
	}{
		{"photo with irot", readDoc(t, "photo-irot.heic"), 1 << 30},
		{"small", small, 1 << 30},
		{"small with irot", readDoc(t, "small-irot.heic"), 1 << 30},
		{"grid, a last column and row cut", gen.Grid(small, 2, 2, 700, 500), 1 << 30},
		{"mirrored grid, whole", gen.Grid(small, 2, 2, 1280, 960, rbox("imir", []byte{0})), 1 << 30},
		{"grid turned", gen.Grid(small, 2, 2, 1280, 960, rbox("irot", []byte{1})), 1 << 30},
		{"coded picture larger than its ispe", readDoc(t, "lying-ispe.heic"), 1 << 30},
		{"over the memory cap", small, 1 << 20},
		{"truncated", readDoc(t, "truncated.heic"), 1 << 30},
		{"too many tiles", gen.Grid(small, 100, 100, 640, 480), 1 << 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var inW, outW Work
			want, werr := testDecoder.Decode(WithWork(t.Context(), &inW), c.data, c.limit)
			got, err := p.Decode(WithWork(t.Context(), &outW), c.data, c.limit, time.Minute)
			if (werr == nil) != (err == nil) || errors.Is(werr, ErrMemory) != errors.Is(err, ErrMemory) || errors.Is(werr, ErrPictures) != errors.Is(err, ErrPictures) {
				t.Fatalf("worker: %v; in this process: %v", err, werr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("the worker's %T %v differs from this process's %T %v", got, got.Bounds(), want, want.Bounds())
			}
			if inW.Pictures.Load() != outW.Pictures.Load() || inW.Pixels.Load() != outW.Pixels.Load() {
				t.Errorf("counted %d pictures of %d pixels; in this process %d of %d",
					outW.Pictures.Load(), outW.Pixels.Load(), inW.Pictures.Load(), inW.Pixels.Load())
			}
		})
	}
	if s := p.Stats(); s.Started != 1 {
		t.Errorf("%d workers started; want one, reused", s.Started)
	}
}

// TestWorkerEnv: a worker gets none of this process's environment (OCR_API_KEY and the model's
// key are in it), only the two variables that make it a worker. Before (had it been started as
// os/exec starts a command), the canary was there.
func TestWorkerEnv(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc here")
	}
	t.Setenv("OCR_API_KEY", "canary-6f1c")
	p := testPool(t)
	if err := p.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	pid := p.idle[0].cmd.Process.Pid
	p.mu.Unlock()
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(strings.TrimRight(string(env), "\x00"), "\x00")
	if bytes.Contains(env, []byte("canary")) || len(vars) != 2 || vars[0] != workerEnv+"=1" || !strings.HasPrefix(vars[1], workerCacheEnv+"=") {
		var names []string // not their values: this process's secrets are among them
		for _, v := range vars {
			name, _, _ := strings.Cut(v, "=")
			names = append(names, name)
		}
		t.Fatalf("the worker's environment holds %q", names)
	}
}

// TestWorkerGone: an idle worker that has died (killed from outside) costs its next job
// nothing: the job runs in a new worker.
func TestWorkerGone(t *testing.T) {
	p := testPool(t)
	if err := p.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.idle[0].cmd.Process.Kill()
	p.mu.Unlock()
	if m, err := p.Decode(t.Context(), readDoc(t, "small.heic"), 1<<30, time.Minute); err != nil || m.Bounds().Dx() != 640 {
		t.Fatalf("after its worker died: %v, %v", m, err)
	}
	if s := p.Stats(); s.Started != 2 {
		t.Errorf("%d workers started, want 2", s.Started)
	}
}

// TestPoolClose: Close removes the pool's own directory, and a pool closed starts no worker.
func TestPoolClose(t *testing.T) {
	p := NewPool("", 1)
	if err := p.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	dir := p.dir
	if !strings.HasPrefix(filepath.Base(dir), privatePrefix+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("its directory %s", dir)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", dir, err)
	}
	if _, err := p.Decode(t.Context(), readDoc(t, "small.heic"), 1<<30, time.Minute); !errors.Is(err, ErrStart) {
		t.Errorf("a closed pool decoded: %v", err)
	}
}

// TestReadAnswer: the image a worker sends is trusted only when its sizes agree with its planes
// and the memory it was allowed; anything else is refused before a byte of it is allocated.
func TestReadAnswer(t *testing.T) {
	u32 := func(b []byte, v ...int) []byte {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
		return b
	}
	// kind, ratio, w, h, stride, cstride, n0, n1, n2 (and no planes: a refusal must not need them)
	img := func(kind, ratio byte, v ...int) []byte { return u32([]byte{msgImage, kind, ratio}, v...) }
	tests := []struct {
		name  string
		msg   []byte
		limit int64
		ok    bool
	}{
		{"4:2:0, 4×2", append(img(kindYCbCr, byte(image.YCbCrSubsampleRatio420), 4, 2, 4, 2, 8, 2, 2), make([]byte, 12)...), 1 << 20, true},
		{"grey, 3×3 at a stride of 16", append(img(kindGray, 0, 3, 3, 16, 0, 48, 0, 0), make([]byte, 48)...), 1 << 20, true},
		{"RGBA 2×2", append(img(kindRGBA, 0, 2, 2, 8, 0, 16, 0, 0), make([]byte, 16)...), 1 << 20, true},
		{"luma shorter than its rows", img(kindYCbCr, byte(image.YCbCrSubsampleRatio420), 4, 2, 4, 2, 7, 2, 2), 1 << 20, false},
		{"chroma shorter than its rows", img(kindYCbCr, byte(image.YCbCrSubsampleRatio420), 4, 4, 4, 2, 16, 2, 2), 1 << 20, false},
		{"stride under the width", img(kindGray, 0, 16, 2, 8, 0, 16, 0, 0), 1 << 20, false},
		{"RGBA stride under 4 bytes a pixel", img(kindRGBA, 0, 4, 1, 4, 0, 4, 0, 0), 1 << 20, false},
		{"over the memory allowed", img(kindGray, 0, 1024, 1024, 1024, 0, 1<<20, 0, 0), 1<<20 - 1, false},
		{"4 GiB claimed, 1 GiB allowed", img(kindGray, 0, 65536, 65535, 65536, 0, 65536*65535, 0, 0), 1 << 30, false},
		{"a subsample ratio unknown", img(kindYCbCr, 9, 4, 2, 4, 4, 8, 8, 8), 1 << 20, false},
		{"a kind unknown", img(9, 0, 4, 2, 4, 0, 8, 0, 0), 1 << 20, false},
		{"no width", img(kindGray, 0, 0, 2, 0, 0, 0, 0, 0), 1 << 20, false},
		{"grey with chroma", img(kindGray, 0, 2, 2, 2, 2, 4, 2, 2), 1 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := readAnswer(t.Context(), bufio.NewReader(bytes.NewReader(tt.msg)), tt.limit)
			if tt.ok != (err == nil) {
				t.Fatalf("got %v, %v; want accepted %v", m, err, tt.ok)
			}
			if !tt.ok && !errors.Is(err, errAnswer) {
				t.Errorf("refused with %v, want errAnswer", err)
			}
		})
	}
}

// BenchmarkPool decodes the 12-megapixel photo (irot) in this process and in a worker, each op's
// CPU time this process's and its worker's (cpu-ms/op): what a worker adds, its 18 MB of planes
// handed over a pipe included.
//
//	go test -bench Pool -benchtime 5x -count 3 -run '^$' ./intake/internal/heif/
func BenchmarkPool(b *testing.B) {
	data := readDoc(b, "photo-irot.heic")
	p := NewPool(b.TempDir(), 1)
	defer p.Close()
	if err := p.Warm(b.Context()); err != nil {
		b.Fatal(err)
	}
	if err := testDecoder.Compile(); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		decode func() error
	}{
		{"in-process", func() error { _, err := testDecoder.Decode(b.Context(), data, 1<<30); return err }},
		{"worker", func() error { _, err := p.Decode(b.Context(), data, 1<<30, time.Minute); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu := func() time.Duration {
				var ru syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) + p.Stats().CPU
			}
			start := cpu()
			for b.Loop() {
				if err := c.decode(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpu()-start)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// TestWorkerCPULimit: where the parent cannot read a worker's CPU time (no /proc), the worker's
// own RLIMIT_CPU stops a decode past its budget (rounded up to the second, and one more): the
// worker exits at SIGXCPU, which Go would otherwise ignore, and the decode is ErrWork. A
// mirrored grid of 36 noise tiles, decoded whole, takes about 3.5 s of one core; it is stopped
// after 1–2 s of it.
func TestWorkerCPULimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of CPU")
	}
	data := gen.Grid(readDoc(t, "noise.heic"), 6, 6, 3840, 2880, rbox("imir", []byte{0}))
	p := testPool(t)
	p.unmetered = true
	if err := p.Warm(t.Context()); err != nil { // its compile's CPU time is before the job's limit
		t.Fatal(err)
	}
	var w Work
	_, err := p.Decode(WithWork(t.Context(), &w), data, 1<<30, 10*time.Millisecond)
	if !errors.Is(err, ErrWork) {
		t.Fatalf("got %v, want ErrWork", err)
	}
	t.Logf("stopped after %v of the worker's CPU time", p.Stats().CPU)
}
