package server_test

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

// photo1MB is an upright 1600×1200 JPEG of about 1 MB: a page-like image with enough texture
// that it does not compress to nothing. It goes to the model as its own bytes.
func photo1MB(tb testing.TB) []byte {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	m := image.NewGray(image.Rect(0, 0, 1600, 1200))
	for y := range 1200 {
		for x := range 1600 {
			v := 235 + r.IntN(20)
			if y%40 < 14 && x%120 < 90 { // lines of "text"
				v = 30 + r.IntN(60)
			}
			m.SetGray(x, y, color.Gray{Y: uint8(min(v, 255))})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 92}); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkExtractOverhead measures what the service adds to a single-page request with a 1 MB
// JPEG when the model answers at once: multipart reading, intake, the go-openai request (base64,
// HTTP to the fake on loopback), parsing and drafting, the response. Target: ≤ 5 ms at p50.
func BenchmarkExtractOverhead(b *testing.B) {
	photo := photo1MB(b)
	e := newEnv(b, options{})
	e.model.Forget() // the fake's own JSON decoding of the 1.4 MB request is model time
	e.model.Default(fakeopenai.Reply(lipid))
	body, ct := multipartBody(b, photo)
	raw := body.(*bytes.Buffer).Bytes()
	b.SetBytes(int64(len(photo)))
	b.ReportAllocs()
	b.ReportMetric(float64(len(photo))/1e6, "MB-photo")
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/extract", bytes.NewReader(raw))
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
