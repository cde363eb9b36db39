package guard

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader("abcdef"))
	b := make([]byte, 3)
	if n, err := r.Read(b); n != 3 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	cancel()
	if _, err := r.Read(b); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v, want context.Canceled", err)
	}
	// A section reader keeps ReadAt, which is guarded too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	ra, ok := Reader(ctx2, io.NewSectionReader(strings.NewReader("abcdef"), 0, 6)).(io.ReaderAt)
	if !ok {
		t.Fatal("a SectionReader lost its ReadAt")
	}
	if n, err := ra.ReadAt(b, 3); n != 3 || err != nil || string(b) != "def" {
		t.Fatalf("ReadAt: %d %q %v", n, b, err)
	}
	cancel2()
	if _, err := ra.ReadAt(b, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadAt after cancel: %v", err)
	}
}

func TestRecover(t *testing.T) {
	f := func() (err error) {
		defer Recover("tiff", &err)
		panic("index out of range")
	}
	if err := f(); err == nil || err.Error() != "tiff: decoder panic: index out of range" {
		t.Fatalf("err = %v", err)
	}
}
