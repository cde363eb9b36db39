package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
)

// pipelineCodes are the 5xx a request over the real pipeline may end in: the model's. Anything
// else at 500 or above (internal_error above all) is a bug the fuzzer has found.
var pipelineCodes = map[problem.Code]bool{
	problem.ModelUnavailable: true, problem.ModelRateLimited: true, problem.ModelOutputUnparseable: true,
	problem.ModelRejected: true, problem.ModelTimeout: true,
}

// FuzzPipeline drives the HTTP API over the real pipeline — intake, the go-openai client against
// the fake endpoint, the model-call limiter, extract, the draft builder — varying the request
// (route, content type, body, pages) and the model's reply (its text, finish reason and token
// counts). Every answer must be a 200 that openapi.yaml accepts or a problem document with a
// code of the table and its status; the process must not panic (a panic in a page goroutine
// ends the fuzzer); and the model is called at most pages × attempts times. Run it with
// go test ./server -run '^$' -fuzz FuzzPipeline.
func FuzzPipeline(f *testing.F) {
	const maxPages, maxAttempts = 2, 2
	e := newEnv(f, options{maxPages: maxPages, maxAttempts: maxAttempts, tries: 1, maxBytes: 256 << 10,
		timeout: 5 * time.Second, apiKeys: []string{"k1"}})
	e.model.Forget() // keep no request bodies across a fuzzing run
	f.Add(uint8(0), uint8(1), "", []byte(nil), lipid, "stop", 900, 120)
	f.Add(uint8(0), uint8(2), "", []byte(nil), lipid, "length", 1, 1)
	f.Add(uint8(0), uint8(1), "", []byte(nil), "抱歉，无法识别。", "stop", 10, 10)
	f.Add(uint8(0), uint8(1), "", []byte(nil), `{"indicators":[{"itemName":"a","valueNum":"1e999999"}]}`, "content_filter", 0, 0)
	f.Add(uint8(0), uint8(1), "", []byte(nil), "```json\n{'a'a'a'a'a'a'a'a'a'a'a'a}\n```", "stop", 5, 7)
	// Each of these two panicked in a metrics counter inside a page goroutine and ended the
	// process (issue 9); the fuzzer found them from the seeds above within seconds.
	f.Add(uint8(0), uint8(1), "", []byte(nil), lipid, "stop", 1<<62, 1<<62) // the sums overflow
	f.Add(uint8(0), uint8(1), "", []byte(nil), lipid, "stop", 10, -5)       // negative count
	f.Add(uint8(1), uint8(1), "application/json", []byte(`{"images":[{"data":"iVBORw0KGgo="}]}`), lipid, "stop", 0, 0)
	f.Add(uint8(1), uint8(0), "multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\nGIF89a\r\n--x--"), lipid, "", 0, 0)
	f.Add(uint8(2), uint8(0), "text/plain", []byte(lipid), "", "", 0, 0)
	f.Add(uint8(2), uint8(0), "application/json", []byte(`{"reply":"{\"indicators\":[{\"itemName\":\"a\",\"valueNum\":1}]}","finishReason":"length"}`), "", "", 0, 0)
	f.Add(uint8(3), uint8(0), "application/json", []byte(`{"indicators":[{"itemName":" ","valueNum":"x"}]}`), "", "", 0, 0)
	f.Add(uint8(4), uint8(0), "", []byte("x"), "", "", 0, 0)
	f.Fuzz(func(t *testing.T, route, pages uint8, contentType string, body []byte, reply, finish string, promptTokens, completionTokens int) {
		e.t = t
		before := e.model.Calls()
		e.model.Default(fakeopenai.Complete(fakeopenai.Response{
			Content: reply, FinishReason: finish, PromptTokens: promptTokens, CompletionTokens: completionTokens,
		}))
		var req *http.Request
		n := int(pages) % (maxPages + 2) // one too many, at times
		switch route % 6 {
		case 0: // pages of a real image, so the reply is what varies
			images := make([][]byte, n)
			for i := range images {
				images[i] = page
			}
			req = extractReq(t, images...)
			if n%2 == 1 {
				data := make([]map[string]string, n)
				for i := range data {
					data[i] = map[string]string{"data": base64.StdEncoding.EncodeToString(page)}
				}
				req = jsonReq("/v1/extract", map[string]any{"images": data})
			}
		case 1:
			req = httptest.NewRequest(http.MethodPost, "/v1/extract", bytes.NewReader(body))
		case 2:
			req = httptest.NewRequest(http.MethodPost, "/v1/parse", bytes.NewReader(body))
		case 3:
			req = httptest.NewRequest(http.MethodPost, "/v1/validate", bytes.NewReader(body))
		case 4:
			req = httptest.NewRequest(http.MethodHead, "/healthz", bytes.NewReader(body))
		default:
			req = httptest.NewRequest(http.MethodGet, "/readyz", nil)
		}
		if route%6 >= 1 && route%6 <= 3 {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Authorization", "Bearer k1")
		rec := e.do(req) // checks a 200 against openapi.yaml

		if calls := e.model.Calls() - before; calls > maxPages*maxAttempts {
			t.Fatalf("%d model calls for one request, want at most %d", calls, maxPages*maxAttempts)
		}
		if rec.Code < 400 {
			return
		}
		if req.Method == http.MethodHead {
			return // headers only
		}
		var doc problem.Document
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s %s → %d is not a problem document (%v): %q", req.Method, req.URL.Path, rec.Code, err, rec.Body)
		}
		if info := problem.Lookup(doc.Code); info.Code != doc.Code || info.Status != rec.Code || doc.Status != rec.Code {
			t.Fatalf("%s %s → %d carries code %q with status %d", req.Method, req.URL.Path, rec.Code, doc.Code, doc.Status)
		}
		if rec.Code >= 500 && !pipelineCodes[doc.Code] {
			t.Fatalf("%s %s → %d %s: %s", req.Method, req.URL.Path, rec.Code, doc.Code, doc.Detail)
		}
	})
}
