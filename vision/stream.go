package vision

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
)

// Pages go into the request body as base64 data URLs. Letting go-openai marshal them costs, for
// a 1 MB photo, a 1.4 MB base64 string plus two more copies while encoding/json validates and
// compacts the output of its types' MarshalJSON methods byte by byte — about 4 ms and 5 MB per
// call, measured. So the message carries a random token in place of each image's base64 text,
// and the transport (doer) streams the base64 in as it sends the body: no copy of the image is
// made, and the body is rebuilt the same way for every try.

// imageSub is an image whose base64 text stands in the request body as token.
type imageSub struct {
	token string
	data  []byte
}

// newToken returns a token that cannot occur in a prompt or a reply by chance.
func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return "ocrdraft-image-" + hex.EncodeToString(b[:])
}

var errTokenMissing = errors.New("vision: image token missing from the request body")

// streamImages replaces r's body with one in which every sub's token is its data in base64.
func streamImages(r *http.Request, subs []imageSub) error {
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
		img []byte
	}
	var segs []segment
	size := int64(0)
	rest := body
	for _, s := range subs {
		i := bytes.Index(rest, []byte(s.token))
		if i < 0 {
			return errTokenMissing
		}
		segs = append(segs, segment{lit: rest[:i]}, segment{img: s.data})
		size += int64(i) + int64(base64.StdEncoding.EncodedLen(len(s.data)))
		rest = rest[i+len(s.token):]
	}
	segs = append(segs, segment{lit: rest})
	size += int64(len(rest))

	open := func() io.ReadCloser {
		rs := make([]io.Reader, len(segs))
		for i, s := range segs {
			if s.img != nil {
				rs[i] = &base64Reader{src: s.img}
			} else {
				rs[i] = bytes.NewReader(s.lit)
			}
		}
		return io.NopCloser(io.MultiReader(rs...))
	}
	r.Body = open()
	r.GetBody = func() (io.ReadCloser, error) { return open(), nil }
	r.ContentLength = size
	return nil
}

// base64Reader reads src as standard base64, a chunk at a time.
type base64Reader struct {
	src []byte
	buf [4096]byte // the base64 of 3072 bytes
	out []byte
}

func (b *base64Reader) Read(p []byte) (int, error) {
	if len(b.out) == 0 {
		if len(b.src) == 0 {
			return 0, io.EOF
		}
		n := min(len(b.src), 3072)
		base64.StdEncoding.Encode(b.buf[:], b.src[:n])
		b.out = b.buf[:base64.StdEncoding.EncodedLen(n)]
		b.src = b.src[n:]
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}
