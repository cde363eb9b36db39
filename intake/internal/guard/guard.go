// Package guard holds what every Go image decode in intake runs under: a reader that ends the
// decode once nobody waits for it, and the recovery that turns a decoder's panic into an error.
// intake and its decoder packages (internal/tiff, internal/bmp) share it.
package guard

import (
	"context"
	"fmt"
	"io"
)

// Reader returns r, ending the decode that reads it at its next read once ctx ends. Go's
// decoders cannot be stopped, but they read as they go, 4 KiB at a time through their own
// buffers (the reader has no ReadByte, so that the check is per read, not per byte): what is
// left after ctx ends is the work in the bytes already read, which the decode bounds cap. An
// *io.SectionReader keeps its ReadAt (x/image/tiff reads through it when it is there, and
// copies the whole file first when it is not).
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if ra, ok := r.(*io.SectionReader); ok {
		return &readerAt{reader{ctx, r}, ra}
	}
	return &reader{ctx, r}
}

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c *reader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

type readerAt struct {
	reader
	ra io.ReaderAt
}

func (c *readerAt) ReadAt(b []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.ra.ReadAt(b, off)
}

// Recover, deferred, turns a decoder panic into *err, named for what decoded: the decoders are
// fuzzed upstream, but they read bytes from strangers, and one bad upload must cost one
// request, not the process.
func Recover(what string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: decoder panic: %v", what, r)
	}
}
