package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/server"
)

// fakeExtractor answers by the number of pages it gets: one page reads, two fail as the model
// endpoint would, three are rate limited. Only those model codes may make a 5xx.
type fakeExtractor struct{}

func (fakeExtractor) ExtractWith(ctx context.Context, uploads []*budget.Bytes, _ check.Context, _ extract.Options) (extract.Response, error) {
	for _, up := range uploads {
		defer up.Close() // they are its to close, as the real one's
	}
	switch len(uploads) {
	case 2:
		return extract.Response{}, problem.Errorf(problem.ModelUnavailable, "fake upstream failure")
	case 3:
		return extract.Response{}, &problem.Error{Code: problem.ModelRateLimited, Detail: "fake 429", RetryAfter: 2 * time.Second}
	}
	return extract.Response{Draft: schema.OcrDraft{Indicators: []schema.OcrIndicator{}}, Warnings: []schema.Warning{}}, nil
}

// fuzzRoutes are what the fuzzer's route byte picks from.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/v1/extract"}, {"POST", "/v1/parse"}, {"POST", "/v1/validate"},
	{"GET", "/healthz"}, {"GET", "/readyz"}, {"PUT", "/v1/extract"}, {"GET", "/metrics"},
}

// modelCodes are the 5xx a response may carry: the fake's, and a reply /v1/parse cannot read.
var modelCodes = map[problem.Code]bool{
	problem.ModelUnavailable: true, problem.ModelRateLimited: true, problem.ModelOutputUnparseable: true,
}

// FuzzServeHTTP throws arbitrary bodies and headers at every route: never a panic, never a 5xx
// other than a model's, and every error a well-formed problem document whose status matches its
// code. Run it with go test ./server -run '^$' -fuzz FuzzServeHTTP.
func FuzzServeHTTP(f *testing.F) {
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	for range 2 {
		fw, _ := w.CreateFormFile("image", "p.png")
		fw.Write(page)
	}
	w.Close()
	jsonBody, _ := json.Marshal(map[string]any{"images": []map[string]string{{"data": base64.StdEncoding.EncodeToString(page)}}})

	f.Add(uint8(0), w.FormDataContentType(), "Bearer k1", "", mp.Bytes())
	f.Add(uint8(0), "application/json", "Bearer k1", "id-1", jsonBody)
	f.Add(uint8(0), "application/json", "Bearer k1", "", []byte(`{"images":[{"data":"AA=="},{"data":"AA=="},{"data":"AA=="}]}`))
	f.Add(uint8(0), "multipart/form-data; boundary=x", "Bearer k1", "", []byte("--x\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\nGIF89a\r\n--x--"))
	f.Add(uint8(1), "text/plain", "bearer k1", "", []byte(lipid))
	f.Add(uint8(1), "application/json", "Bearer k1", "", []byte(`{"reply": 5}`))
	f.Add(uint8(2), "application/json", "Bearer k1", "", []byte(`{"indicators":[{"itemName":"a","valueNum":"x"}]}`))
	f.Add(uint8(0), "application/json", "Bearer wrong", "\n\x00", []byte(`{`))
	f.Add(uint8(5), "", "", "", []byte(nil))

	srv := server.New(server.Config{
		Extractor: fakeExtractor{}, APIKeys: []string{"k1"}, Spec: ocrdraft.Spec,
		MaxImageBytes: 64 << 10, MaxRequestBytes: 256 << 10, MaxPages: 4,
	})
	f.Fuzz(func(t *testing.T, route uint8, contentType, auth, requestID string, body []byte) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		req := httptest.NewRequest(rt.method, rt.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", auth)
		req.Header.Set("X-Request-Id", requestID)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)

		if rec.Code < 400 {
			return
		}
		var doc problem.Document
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s %s → %d is not a problem document (%v): %q", rt.method, rt.path, rec.Code, err, rec.Body)
		}
		if doc.Status != rec.Code || problem.Lookup(doc.Code).Status != rec.Code {
			t.Fatalf("%s %s → %d carries code %s with status %d", rt.method, rt.path, rec.Code, doc.Code, doc.Status)
		}
		if rec.Code >= 500 && !modelCodes[doc.Code] {
			t.Fatalf("%s %s → %d %s: %s", rt.method, rt.path, rec.Code, doc.Code, doc.Detail)
		}
	})
}
