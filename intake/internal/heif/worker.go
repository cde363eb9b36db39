package heif

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/tetratelabs/wazero"
)

// A HEIC is decoded in a worker process (Pool, pool.go): the same executable, started again with
// workerEnv set. This file is the worker's side: its init hook, which every binary that links
// this package runs (ocrdraft and every test binary of a package that imports intake), serves
// decode jobs on stdin and stdout, then exits, before any other package's init or main runs.
const (
	workerEnv      = "OCRDRAFT_HEIF_WORKER" // "1": this process is a worker
	workerCacheEnv = "OCRDRAFT_HEIF_CACHE"  // the directory of the compiled module
	workerExitWork = 3                      // the exit code of a worker stopped by its RLIMIT_CPU
)

func init() {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(serve(os.Stdin, os.Stdout, os.Getenv(workerCacheEnv)))
	}
}

// The messages between the two, little-endian. A job is jobDecode, the module's memory cap
// (u64), the CPU budget in ns (u64, for the worker's own RLIMIT_CPU), the file's length (u32)
// and the file. The worker answers msgReady once its module is compiled (or msgFailed, a u32
// length and text, and exits), then to each job any number of msgPicture (a picture handed to
// libheif, its pixels as u64: Work), then msgError (a code and a u32 length and text) or
// msgImage: its kind, subsample ratio, width, height, two strides and three plane lengths (u32
// each) and the planes.
const (
	jobDecode  = 'J'
	msgReady   = 'R'
	msgFailed  = 'F'
	msgPicture = 'P'
	msgError   = 'E'
	msgImage   = 'I'

	errMemory   = 1
	errPictures = 2
	errOther    = 3

	kindYCbCr = 1
	kindGray  = 2
	kindRGBA  = 3
	kindNRGBA = 4
)

// serve is a worker's life: compile (from dir, a load), say so, then decode each job with a fresh
// instance of the module, as the process's own Decoder does, until stdin ends.
func serve(in io.Reader, out io.Writer, dir string) int {
	cache := wazero.NewCompilationCache()
	if dir != "" {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			cache = c
		}
	}
	d := NewDecoder(cache)
	w := bufio.NewWriterSize(out, 64<<10)
	if err := d.Compile(); err != nil {
		w.WriteByte(msgFailed)
		writeText(w, err.Error())
		w.Flush()
		return 1
	}
	w.WriteByte(msgReady)
	if w.Flush() != nil {
		return 1
	}
	stopAtCPULimit()
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		var head [21]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return 0 // the parent closed stdin, or is gone
		}
		if head[0] != jobDecode {
			return 1
		}
		limit := int64(binary.LittleEndian.Uint64(head[1:]))
		budget := time.Duration(binary.LittleEndian.Uint64(head[9:]))
		data := make([]byte, binary.LittleEndian.Uint32(head[17:]))
		if _, err := io.ReadFull(r, data); err != nil {
			return 1
		}
		limitCPU(budget)
		ctx := context.WithValue(context.Background(), progressKey{}, func(px int64) {
			w.WriteByte(msgPicture)
			w.Write(binary.LittleEndian.AppendUint64(nil, uint64(px)))
			w.Flush()
		})
		m, err := d.Decode(ctx, data, limit)
		if err := writeAnswer(w, m, err); err != nil {
			return 1
		}
		data, m = nil, nil
		debug.FreeOSMemory() // an idle worker holds its module's code, not the last picture
	}
}

// progressKey carries, in a worker, the function that tells the parent of each picture decoded.
type progressKey struct{}

func writeText(w *bufio.Writer, s string) {
	w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
	w.WriteString(s)
}

// writeAnswer writes a job's answer: the image, or why there is none.
func writeAnswer(w *bufio.Writer, m image.Image, err error) error {
	if err != nil {
		code := byte(errOther)
		switch {
		case errors.Is(err, ErrMemory):
			code = errMemory
		case errors.Is(err, ErrPictures):
			code = errPictures
		}
		w.WriteByte(msgError)
		w.WriteByte(code)
		writeText(w, err.Error())
		return w.Flush()
	}
	var kind, ratio byte
	var planes [3][]byte
	var strides [2]int
	switch m := m.(type) {
	case *image.YCbCr:
		kind, ratio, planes, strides = kindYCbCr, byte(m.SubsampleRatio), [3][]byte{m.Y, m.Cb, m.Cr}, [2]int{m.YStride, m.CStride}
	case *image.Gray:
		kind, planes[0], strides[0] = kindGray, m.Pix, m.Stride
	case *image.RGBA:
		kind, planes[0], strides[0] = kindRGBA, m.Pix, m.Stride
	case *image.NRGBA:
		kind, planes[0], strides[0] = kindNRGBA, m.Pix, m.Stride
	default:
		return writeAnswer(w, nil, fmt.Errorf("heic: a decoded %T", m))
	}
	r := m.Bounds()
	b := []byte{msgImage, kind, ratio}
	for _, v := range []int{r.Dx(), r.Dy(), strides[0], strides[1], len(planes[0]), len(planes[1]), len(planes[2])} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	w.Write(b)
	for _, p := range planes {
		w.Write(p)
	}
	return w.Flush()
}

// readAnswer reads a job's answer, counting each picture into ctx's Work as it comes, and checks
// the image's sizes against its planes before it trusts them: its planes hold limit bytes at
// most, each exactly its rows at its stride. answered is whether any message came.
func readAnswer(ctx context.Context, r *bufio.Reader, limit int64) (m image.Image, answered bool, err error) {
	for {
		t, err := r.ReadByte()
		if err != nil {
			return nil, answered, err
		}
		answered = true
		switch t {
		case msgPicture:
			var b [8]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return nil, true, err
			}
			countWork(ctx, int64(binary.LittleEndian.Uint64(b[:])))
		case msgError:
			code, err := r.ReadByte()
			if err != nil {
				return nil, true, err
			}
			text, err := readText(r, 1<<12)
			if err != nil {
				return nil, true, err
			}
			switch code {
			case errMemory:
				return nil, true, ErrMemory
			case errPictures:
				return nil, true, ErrPictures
			}
			return nil, true, decodeError(text)
		case msgImage:
			return readImage(r, limit)
		default:
			return nil, true, fmt.Errorf("heic: the worker said %q", t)
		}
	}
}

// decodeError is a decode's failure as the worker told it: the file's fault, the worker fine.
type decodeError string

func (e decodeError) Error() string { return string(e) }

func readText(r *bufio.Reader, most uint32) (string, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	n := binary.LittleEndian.Uint32(b[:])
	if n > most {
		return "", errors.New("heic: the worker's text is too long")
	}
	s := make([]byte, n)
	_, err := io.ReadFull(r, s)
	return string(s), err
}

// errAnswer is an answer whose sizes do not agree with its planes.
var errAnswer = errors.New("heic: the worker's image does not hold together")

func readImage(r *bufio.Reader, limit int64) (image.Image, bool, error) {
	var b [2 + 7*4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, true, err
	}
	kind, ratio := b[0], image.YCbCrSubsampleRatio(b[1])
	var v [7]int64
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint32(b[2+4*i:]))
	}
	w, h, s0, s1, n0, n1, n2 := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	if w <= 0 || h <= 0 || w > 1<<24 || h > 1<<24 || n0+n1+n2 > limit {
		return nil, true, errAnswer
	}
	rect := image.Rect(0, 0, int(w), int(h))
	rowBytes, cw, ch := w, int64(0), int64(0)
	switch kind {
	case kindYCbCr:
		switch ratio {
		case image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio444:
		default:
			return nil, true, errAnswer
		}
		_, _, c, d := yCbCrSize(rect, ratio)
		cw, ch = int64(c), int64(d)
		if s1 < cw || n1 != s1*ch || n2 != n1 {
			return nil, true, errAnswer
		}
	case kindGray:
	case kindRGBA, kindNRGBA:
		rowBytes = 4 * w
	default:
		return nil, true, errAnswer
	}
	if s0 < rowBytes || n0 != s0*h || (kind != kindYCbCr && n1+n2 != 0) {
		return nil, true, errAnswer
	}
	pix := make([]byte, n0+n1+n2)
	if _, err := io.ReadFull(r, pix); err != nil {
		return nil, true, err
	}
	i0, i1 := int(n0), int(n0+n1)
	switch kind {
	case kindYCbCr:
		return &image.YCbCr{Y: pix[:i0:i0], Cb: pix[i0:i1:i1], Cr: pix[i1:], YStride: int(s0), CStride: int(s1), SubsampleRatio: ratio, Rect: rect}, true, nil
	case kindGray:
		return &image.Gray{Pix: pix, Stride: int(s0), Rect: rect}, true, nil
	case kindRGBA:
		return &image.RGBA{Pix: pix, Stride: int(s0), Rect: rect}, true, nil
	}
	return &image.NRGBA{Pix: pix, Stride: int(s0), Rect: rect}, true, nil
}

// writeJob sends the worker one file to decode.
func writeJob(w io.Writer, data []byte, limit int64, budget time.Duration) error {
	b := []byte{jobDecode}
	b = binary.LittleEndian.AppendUint64(b, uint64(limit))
	b = binary.LittleEndian.AppendUint64(b, uint64(budget))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}
