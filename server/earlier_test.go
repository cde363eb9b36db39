package server_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

// earlier are requests of earlier versions of the contract, each as the README, the examples or
// openapi.yaml of the commit named beside it has a client send it; testdata/earlier holds the
// files they send, copied from those commits (the commit starts each file's name). The contract
// only grows: every one must still get the answer it got then.
var earlier = []struct {
	from, name string
	req        func(t *testing.T) *http.Request
	// want checks the answer beyond its status, 200; it may be nil.
	want  func(t *testing.T, rec *httptest.ResponseRecorder)
	reply string // the model's reply; the README's when empty
}{
	// b64b333, the first contract: README's "API" commands.
	{from: "b64b333", name: "extract, one image part per page",
		req: func(t *testing.T) *http.Request { return form(t, nil, page, page) }, want: indicators(6)},
	{from: "b64b333", name: "extract as JSON",
		req: func(t *testing.T) *http.Request {
			return jsonReq("/v1/extract", map[string]any{"images": []map[string]string{{"data": b64(page)}}})
		}, want: indicators(6)},
	{from: "2655a00", name: "parse a captured reply as text/plain",
		req: func(t *testing.T) *http.Request {
			req := httptest.NewRequest(http.MethodPost, "/v1/parse", bytes.NewReader(earlierFile(t, "2655a00-readme-lipid-panel.txt")))
			req.Header.Set("Content-Type", "text/plain")
			return req
		}, want: indicators(6)},
	{from: "b64b333", name: "parse as JSON with finishReason",
		req: func(t *testing.T) *http.Request {
			return jsonReq("/v1/parse", map[string]any{"reply": string(earlierFile(t, "2655a00-readme-lipid-panel.txt")), "finishReason": "length"})
		}, want: indicators(6)},
	// dc5d2b8: the confirmed draft of testdata/examples, before the evidence keys.
	{from: "dc5d2b8", name: "validate the example confirmed draft",
		req: func(t *testing.T) *http.Request {
			return rawJSON("/v1/validate", earlierFile(t, "dc5d2b8-confirmed-draft.json"))
		}, want: indicators(4)},
	// 2655a00: the README's extract response; a client sends its draft member back confirmed.
	{from: "2655a00", name: "validate the draft member of the README's response",
		req: func(t *testing.T) *http.Request {
			var res struct{ Draft json.RawMessage }
			if err := json.Unmarshal(earlierFile(t, "2655a00-readme-response.json"), &res); err != nil {
				t.Fatal(err)
			}
			return rawJSON("/v1/validate", res.Draft)
		}, want: indicators(4)},
	{from: "b64b333", name: "healthz", req: get("/healthz")},
	{from: "b64b333", name: "readyz", req: get("/readyz")},
	{from: "b64b333", name: "openapi.yaml", req: get("/openapi.yaml")},
	{from: "2655a00", name: "version", req: get("/version")},
	{from: "2655a00", name: "metrics", req: get("/metrics")},
	{from: "2655a00", name: "healthz HEAD", req: head("/healthz")},
	{from: "2655a00", name: "readyz HEAD", req: head("/readyz")},
	{from: "fdd7a31", name: "version HEAD", req: head("/version")},
	{from: "fdd7a31", name: "metrics HEAD", req: head("/metrics")},
	{from: "fdd7a31", name: "openapi.yaml HEAD", req: head("/openapi.yaml")},
	// 442b42c: the patient's sex as a multipart field after the images (as openapi-generator's
	// Java client of that spec sends it), and as JSON context.sex.
	{from: "442b42c", name: "extract with the multipart field sex",
		req: func(t *testing.T) *http.Request { return form(t, map[string]string{"sex": "female"}, page) }, want: femaleBounds, reply: sexReply},
	{from: "442b42c", name: "extract with JSON context.sex",
		req: func(t *testing.T) *http.Request {
			return jsonReq("/v1/extract", map[string]any{"images": []map[string]string{{"data": b64(page)}}, "context": map[string]string{"sex": "female"}})
		}, want: femaleBounds, reply: sexReply},
	{from: "442b42c", name: "parse with JSON context.sex",
		req: func(t *testing.T) *http.Request {
			return jsonReq("/v1/parse", map[string]any{"reply": sexReply, "context": map[string]string{"sex": "female"}})
		}, want: femaleBounds, reply: sexReply},
}

// TestEarlierRequests replays the requests of earlier contracts against this server: each gets
// the answer it got then (a 200 and what it held), and every operation of today's openapi.yaml is among them.
func TestEarlierRequests(t *testing.T) {
	e := newEnv(t, options{})
	reply := string(earlierFile(t, "2655a00-readme-lipid-panel.txt"))
	routes := map[string]bool{}
	for _, tt := range earlier {
		t.Run(tt.from+" "+tt.name, func(t *testing.T) {
			e.t = t
			if tt.reply != "" {
				e.model.Default(fakeopenai.Reply(tt.reply))
			} else {
				e.model.Default(fakeopenai.Reply(reply))
			}
			req := tt.req(t)
			routes[req.Method+" "+req.URL.Path] = true
			rec := e.do(req) // checks the answer against today's openapi.yaml
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
			}
			if tt.want != nil {
				tt.want(t, rec)
			}
		})
	}
	doc, err := openapi3.NewLoader().LoadFromData(ocrdraft.Spec)
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if strings.HasPrefix(path, "/v1/jobs") {
				continue // new in this contract (issue 23): no earlier request can call it
			}
			if !routes[method+" "+path] {
				t.Errorf("%s %s: no request of an earlier contract replays it", method, path)
			}
		}
	}
}

func earlierFile(t *testing.T, name string) []byte {
	b, err := os.ReadFile("testdata/earlier/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// form is a multipart /v1/extract: an image part per page, then the fields.
func form(t *testing.T, fields map[string]string, pages ...[]byte) *http.Request {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range pages {
		fw, err := w.CreateFormFile("image", "page.png")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(p)
	}
	for k, v := range fields {
		w.WriteField(k, v)
	}
	w.Close()
	req := httptest.NewRequest(http.MethodPost, "/v1/extract", &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return req
}

func rawJSON(path string, b []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func get(path string) func(*testing.T) *http.Request {
	return func(*testing.T) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }
}

func head(path string) func(*testing.T) *http.Request {
	return func(*testing.T) *http.Request { return httptest.NewRequest(http.MethodHead, path, nil) }
}

// indicators wants a draft of n rows (pages of the same reply merge into one draft).
func indicators(n int) func(*testing.T, *httptest.ResponseRecorder) {
	return func(t *testing.T, rec *httptest.ResponseRecorder) {
		var res struct {
			Draft struct{ Indicators []json.RawMessage }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Draft.Indicators) != n {
			t.Errorf("%d indicators, want %d: %s", len(res.Draft.Indicators), n, rec.Body)
		}
	}
}

// femaleBounds wants the woman's printed range of sexReply.
func femaleBounds(t *testing.T, rec *httptest.ResponseRecorder) {
	if lo, hi, sex, ok := bounds(t, rec); ok && (lo != "115" || hi != "150" || sex != "female") {
		t.Errorf("bounds %s–%s, sex %q; want the woman's 115–150", lo, hi, sex)
	}
}
