package vision

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// TestStreamImages: the body sent is the body with each token replaced by its image's base64,
// whatever the sizes and however it is read, and it can be read again for a retry.
func TestStreamImages(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sizes := range [][]int{{0}, {1}, {2}, {3}, {3071}, {3072}, {3073}, {100_000, 7}, {1 << 20}} {
		var subs []*imageSub
		body, want := `{"a":[`, `{"a":[`
		for i, n := range sizes {
			data := make([]byte, n)
			for j := range data {
				data[j] = byte(r.IntN(256))
			}
			s := &imageSub{token: newToken(), data: data}
			subs = append(subs, s)
			if i > 0 {
				body, want = body+",", want+","
			}
			body += `"data:image/jpeg;base64,` + s.token + `"`
			want += `"data:image/jpeg;base64,` + base64.StdEncoding.EncodeToString(data) + `"`
		}
		body, want = body+`]}`, want+`]}`
		req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(body))
		if err := streamImages(req, subs); err != nil {
			t.Fatal(err)
		}
		if req.ContentLength != int64(len(want)) {
			t.Errorf("sizes %v: ContentLength %d, want %d", sizes, req.ContentLength, len(want))
		}
		for try := range 2 {
			rc := req.Body
			if try == 1 {
				rc, _ = req.GetBody()
			}
			got, err := io.ReadAll(io.LimitReader(oddReader{rc, r}, 1<<30))
			if err != nil || !bytes.Equal(got, []byte(want)) {
				t.Errorf("sizes %v try %d: body differs (len %d, want %d), err %v", sizes, try, len(got), len(want), err)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(`{}`))
	if err := streamImages(req, []*imageSub{{token: newToken()}}); err == nil {
		t.Errorf("a body without the token was accepted")
	}
}

// TestStreamImagesOnce: an image handed over is let go of when a body has read it all, and a body
// opened after that fails rather than send something else.
func TestStreamImagesOnce(t *testing.T) {
	for _, n := range []int{0, 1, 5000} {
		b := &body{data: make([]byte, n)}
		s := &imageSub{token: newToken(), data: b.data, body: b}
		req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(`{"u":"`+s.token+`"}`))
		if err := streamImages(req, []*imageSub{s}); err != nil {
			t.Fatal(err)
		}
		// A body opened before the first is read through still has the image.
		early, _ := req.GetBody()
		buf := make([]byte, 3)
		if _, err := io.ReadFull(req.Body, buf); err != nil || s.data == nil && n > 0 {
			t.Fatalf("n=%d: after 3 bytes: data %v, err %v", n, s.data != nil, err)
		}
		if _, err := io.ReadAll(req.Body); err != nil {
			t.Fatal(err)
		}
		if s.data != nil || !s.gone || b.closes.Load() != 1 {
			t.Errorf("n=%d: image still held after it was sent (closed %d times)", n, b.closes.Load())
		}
		if _, err := io.ReadAll(early); err != nil {
			t.Errorf("n=%d: a body opened before the image was sent: %v", n, err)
		}
		late, _ := req.GetBody()
		if _, err := io.ReadAll(late); !errors.Is(err, errImageGone) {
			t.Errorf("n=%d: a body opened after the image was sent: err %v, want errImageGone", n, err)
		}
	}
}

// oddReader reads in random small sizes.
type oddReader struct {
	r   io.Reader
	rnd *rand.Rand
}

func (o oddReader) Read(p []byte) (int, error) {
	return o.r.Read(p[:min(len(p), 1+o.rnd.IntN(5000))])
}

// FuzzBase64Reader holds the streamed encoding to encoding/base64's, whatever the data and
// however small the reads.
func FuzzBase64Reader(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n"), uint16(1))
	f.Add(bytes.Repeat([]byte{0xff, 0, 0x7f}, 100), uint16(31))
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		r := newBase64Reader(&imageSub{data: data})
		var got []byte
		buf := make([]byte, 1+int(size)%5000)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if want := base64.StdEncoding.EncodeToString(data); string(got) != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// TestStreamImagesSent: Image.Sent is called once, when a body has been read to its end the
// first time, lent or handed over, and not before (the prompt after the image is still to go).
func TestStreamImagesSent(t *testing.T) {
	for _, handed := range []bool{false, true} {
		calls := 0
		data := make([]byte, 5000)
		s := &imageSub{token: newToken(), data: data, onSent: func() { calls++ }}
		if handed {
			s.body = &body{data: data}
		}
		req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(`{"u":"`+s.token+`","prompt":"after the image"}`))
		if err := streamImages(req, []*imageSub{s}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(req.Body, make([]byte, 7+base64.StdEncoding.EncodedLen(len(data))+1)); err != nil || calls != 0 {
			t.Fatalf("handed %v: Sent called %d times before the image was read (err %v)", handed, calls, err)
		}
		io.ReadAll(req.Body)
		if again, err := req.GetBody(); err == nil {
			io.ReadAll(again)
		}
		if calls != 1 {
			t.Errorf("handed %v: Sent called %d times, want 1", handed, calls)
		}
	}
}
