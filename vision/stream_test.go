package vision

import (
	"bytes"
	"encoding/base64"
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
		var subs []imageSub
		body, want := `{"a":[`, `{"a":[`
		for i, n := range sizes {
			data := make([]byte, n)
			for j := range data {
				data[j] = byte(r.IntN(256))
			}
			s := imageSub{token: newToken(), data: data}
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
	if err := streamImages(req, []imageSub{{token: newToken()}}); err == nil {
		t.Errorf("a body without the token was accepted")
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
