package vision

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"sync"

	asmbase64 "github.com/segmentio/asm/base64"

	"github.com/ocrdraft/ocrdraft/problem"
)

// Pages go into the request body as base64 data URLs. Letting go-openai marshal them costs, for
// a 1 MB photo, a 1.4 MB base64 string plus two more copies while encoding/json validates and
// compacts the output of its types' MarshalJSON methods byte by byte — about 4 ms and 5 MB per
// call, measured. So the message carries a random token in place of each image's base64 text,
// and the transport (doer) streams the base64 in as it sends the body: no copy of the image is
// made, and the body is rebuilt the same way for every try.

// imageSub is an image whose base64 text stands in the request body as token. An image handed
// over (body set) is let go of when a body has read its last byte for the first time: body is
// closed, data becomes nil, and a body made after that (by GetBody, for a retry) fails with
// errImageGone. A lent one (body nil) is the caller's, and every body sends it.
type imageSub struct {
	token string
	body  Body

	onSent func() // Image.Sent, called once

	mu    sync.Mutex // a body may be read while the transport opens another with GetBody
	data  []byte
	gone  bool
	fired bool  // onSent was called
	oops  error // body.Close's panic, recovered: it may have run on the transport's goroutine
}

var errImageGone = errors.New("vision: the image was sent once and not kept for a retry")

// take returns the image's bytes for a new body, or errImageGone.
func (s *imageSub) take() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return nil, errImageGone
	}
	return s.data, nil
}

// len is the image's size; 0 once it is gone.
func (s *imageSub) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.data)
}

// anyGone reports whether any of subs has been sent once and let go of.
func anyGone(subs []*imageSub) bool {
	for _, s := range subs {
		s.mu.Lock()
		gone := s.gone
		s.mu.Unlock()
		if gone {
			return true
		}
	}
	return false
}

// sent is called when a body has read the whole image: its last byte is written, and an image
// handed over is let go of.
func (s *imageSub) sent() { s.letGo() }

// bodySent is called when a body that carried the image has been read to its end: the request
// is sent, prompt and all. It calls onSent the first time.
func (s *imageSub) bodySent() {
	if s.onSent == nil {
		return
	}
	s.mu.Lock()
	fire := !s.fired
	s.fired = true
	s.mu.Unlock()
	if fire {
		s.onSent()
	}
}

// letGo closes the image's Body, if it was handed over and is not closed yet, and drops the
// reference to its bytes.
func (s *imageSub) letGo() {
	s.mu.Lock()
	if s.body == nil || s.gone {
		s.mu.Unlock()
		return
	}
	s.data, s.gone = nil, true
	s.mu.Unlock()
	// Close is the caller's code, maybe run on the transport's goroutine, where no recover of
	// the caller's reaches: a panic there would end the process. It is kept instead, and
	// Complete returns it as internal_error (panicked).
	defer func() {
		if v := recover(); v != nil {
			err := &problem.Error{Code: problem.Internal, Detail: "internal error",
				Err: fmt.Errorf("vision: panic in Body.Close: %v\n%s", v, debug.Stack())}
			s.mu.Lock()
			s.oops = err
			s.mu.Unlock()
		}
	}()
	s.body.Close()
}

// letGo lets go of every image of a call that is over: a try that failed before its body was
// read through leaves its image to be closed here.
func letGo(subs []*imageSub) {
	for _, s := range subs {
		s.letGo()
	}
}

// panicked returns the first panic of a Body's Close among subs, if any.
func panicked(subs []*imageSub) error {
	for _, s := range subs {
		s.mu.Lock()
		err := s.oops
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// newToken returns a token that cannot occur in a prompt or a reply by chance.
func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return "ocrdraft-image-" + hex.EncodeToString(b[:])
}

var errTokenMissing = errors.New("vision: image token missing from the request body")

// streamImages replaces r's body with one in which every sub's token is its data in base64.
func streamImages(r *http.Request, subs []*imageSub) error {
	if r.Body == nil {
		return errTokenMissing
	}
	body, err := io.ReadAll(r.Body) // the JSON without the images: a few KB
	r.Body.Close()
	if err != nil {
		return err
	}
	type segment struct {
		lit []byte
		img *imageSub
	}
	var segs []segment
	size := int64(0)
	rest := body
	for _, s := range subs {
		i := bytes.Index(rest, []byte(s.token))
		if i < 0 {
			return errTokenMissing
		}
		segs = append(segs, segment{lit: rest[:i]}, segment{img: s})
		size += int64(i) + int64(base64.StdEncoding.EncodedLen(s.len()))
		rest = rest[i+len(s.token):]
	}
	segs = append(segs, segment{lit: rest})
	size += int64(len(rest))

	open := func() io.ReadCloser {
		rs := make([]io.Reader, len(segs))
		for i, s := range segs {
			if s.img != nil {
				rs[i] = newBase64Reader(s.img)
			} else {
				rs[i] = bytes.NewReader(s.lit)
			}
		}
		return io.NopCloser(&atEOF{r: io.MultiReader(rs...), subs: subs})
	}
	r.Body = open()
	r.GetBody = func() (io.ReadCloser, error) { return open(), nil }
	r.ContentLength = size
	return nil
}

// atEOF is a request body that tells its images, at its end, that the request has been sent
// (imageSub.bodySent).
type atEOF struct {
	r    io.Reader
	subs []*imageSub
	done bool
}

func (a *atEOF) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if err == io.EOF && !a.done {
		a.done = true
		for _, s := range a.subs {
			s.bodySent()
		}
	}
	return n, err
}

// base64Reader reads src as standard base64, with segmentio/asm's AVX2 encoder (15 GB/s here
// against encoding/base64's 1 GB/s: a millisecond of CPU saved per megabyte sent; it falls back
// to encoding/base64 on CPUs without AVX2). It encodes straight into the caller's buffer, as much
// as fits: the transport copies the body with a 32 KB buffer and writes each read to the
// socket, so a reader that returned one small chunk per call would cost a write system call per
// chunk (350 for a 1 MB photo at 4 KB, against 45 at 32 KB).
type base64Reader struct {
	sub  *imageSub
	src  []byte // what is left to send
	err  error
	tail [4]byte // the encoding of the next 3 bytes, when p had room for less than 4
	out  []byte  // what is left of tail
}

func newBase64Reader(sub *imageSub) *base64Reader {
	src, err := sub.take()
	return &base64Reader{sub: sub, src: src, err: err}
}

func (b *base64Reader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(b.out) > 0 {
		n := copy(p, b.out)
		b.out = b.out[n:]
		return n, nil
	}
	if len(b.src) == 0 {
		b.sub.sent()
		return 0, io.EOF
	}
	if n := min(len(b.src), len(p)/4*3); n > 0 {
		asmbase64.StdEncoding.Encode(p, b.src[:n])
		b.advance(n)
		return base64.StdEncoding.EncodedLen(n), nil
	}
	n := min(len(b.src), 3)
	asmbase64.StdEncoding.Encode(b.tail[:], b.src[:n])
	b.advance(n)
	b.out = b.tail[:]
	return b.Read(p)
}

// advance moves past n bytes of src; at its end the reader keeps no pointer into the image.
func (b *base64Reader) advance(n int) {
	b.src = b.src[n:]
	if len(b.src) == 0 {
		b.src = nil
		b.sub.sent()
	}
}
