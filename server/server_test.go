package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/memnet"
	"github.com/ocrdraft/ocrdraft/internal/metrics"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/prompt"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/vision"
	"github.com/ocrdraft/ocrdraft/vision/modelcall"
)

var update = flag.Bool("update", false, "rewrite the generated part of openapi.yaml")

// TestSpec keeps openapi.yaml's generated part equal to what the Go types render, and checks
// that the whole document is valid OpenAPI 3.0.3.
func TestSpec(t *testing.T) {
	const path = "../openapi.yaml"
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hand, _, ok := strings.Cut(string(file), server.SpecMarker)
	if !ok {
		t.Fatalf("%s lacks the marker line %q", path, server.SpecMarker)
	}
	gen, err := server.SpecComponents()
	if err != nil {
		t.Fatal(err)
	}
	want := hand + server.SpecMarker + string(gen)
	if *update && want != string(file) {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		file = []byte(want)
	}
	if diff := cmp.Diff(want, string(file)); diff != "" {
		t.Errorf("openapi.yaml differs from the Go types (-want +got); run go test ./server -run TestSpec -update:\n%s", diff)
	}
	if !bytes.Equal(file, ocrdraft.Spec) {
		t.Errorf("the embedded spec is stale; rebuild")
	}
	doc, err := openapi3.NewLoader().LoadFromData(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
}

// spec is the loaded openapi.yaml and a router over it, for validating every response.
var spec = sync.OnceValues(func() (routers.Router, error) {
	openapi3filter.RegisterBodyDecoder("application/problem+json", openapi3filter.JSONBodyDecoder)
	doc, err := openapi3.NewLoader().LoadFromData(ocrdraft.Spec)
	if err != nil {
		return nil, err
	}
	doc.Servers = nil // match any host
	return legacy.NewRouter(doc)
})

// env is a server wired as in production — the real go-openai client against a fake
// OpenAI-compatible endpoint behind the model-call limiter, the real intake, extract and draft,
// metrics, a JSON log at debug level — with every response checked against openapi.yaml.
type env struct {
	t       testing.TB
	srv     *server.Server
	model   *fakeopenai.Server
	metrics *metrics.Metrics
	log     *syncBuffer // the server's log lines

	inBubble bool             // options.inBubble
	addr     string           // where listen serves
	ln       *memnet.Listener // in a bubble, what listen serves on
}

type options struct {
	// inBubble runs the fake model over in-memory connections, for a test in a synctest bubble,
	// whose clock moves only while every goroutine of the bubble waits on something in it.
	inBubble        bool
	noModel         bool
	maxPages        int
	maxBytes        int64
	timeout         time.Duration
	maxAttempts     int
	tries           int
	maxInFlight     int           // model calls at once
	maxRequests     int           // /v1/extract requests at once
	queueWait       time.Duration // for both
	apiKeys         []string      // callers' keys; none leaves the API open
	modelKey        string        // the model endpoint's key; "sk-test" when empty
	logReplies      bool
	retryMemory     int64 // bytes of images kept for retries; 0 leaves the default
	uploadMemory    int64 // bytes of bodies read at once; 0 leaves the default
	noReplyExcerpts bool
	bodyIdle        time.Duration
	minBodyRate     int64
	drain           time.Duration
	textInFlight    int
	maxRequest      int64 // bytes of a whole /v1/extract body
	verify          extract.VerifyMode
	boxes           prompt.Boxes
	jobs            bool // /v1/jobs on SQLite in a temporary directory
	allowCallback   func(url string) error
}

func newEnv(t testing.TB, o options) *env {
	t.Helper()
	fake := fakeopenai.New
	if o.inBubble {
		fake = fakeopenai.NewInMemory
	}
	model := fake(t)
	logs := new(syncBuffer)
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := metrics.New()
	cfg := server.Config{
		NotConfigured:   "set OCR_MODEL",
		MaxPages:        o.maxPages,
		MaxImageBytes:   o.maxBytes,
		RequestTimeout:  o.timeout,
		MaxInFlight:     o.maxRequests,
		QueueWait:       o.queueWait,
		UploadMemory:    o.uploadMemory,
		APIKeys:         o.apiKeys,
		ModelName:       "test-vl",
		BodyIdleTimeout: o.bodyIdle,
		MinBodyRate:     o.minBodyRate,
		DrainTimeout:    o.drain,
		TextInFlight:    o.textInFlight,
		MaxRequestBytes: o.maxRequest,
		Spec:            ocrdraft.Spec,
		NoReplyExcerpts: o.noReplyExcerpts,
		Logger:          log,
		Metrics:         m,
	}
	if o.modelKey == "" {
		o.modelKey = "sk-test"
	}
	if !o.noModel {
		vc := vision.Config{BaseURL: model.URL, APIKey: o.modelKey, Model: "test-vl", Tries: o.tries}
		if o.inBubble {
			vc.HTTPClient = model.Client()
		}
		client, err := vision.New(vc)
		if err != nil {
			t.Fatal(err)
		}
		limited := modelcall.New(client, modelcall.Options{
			MaxInFlight: o.maxInFlight, QueueWait: o.queueWait, Observer: m, LogReplies: o.logReplies, Log: log,
		})
		ext := extract.New(extract.Config{
			Model: limited, Prep: intake.New(intake.Limits{MaxBytes: o.maxBytes}, nil), Builder: draft.New(lexicon.Default()),
			ModelName: "test-vl", OutputMode: "prompt", MaxAttempts: o.maxAttempts, Observer: m,
			RetryMemory: o.retryMemory, MaxPages: o.maxPages, Verify: extract.Verify{Mode: o.verify}, Boxes: o.boxes,
		})
		cfg.Extractor = ext
		if o.jobs {
			cfg.Jobs = openJobs(t, ext, o.allowCallback)
		}
	}
	cfg.JobsNotConfigured = "set OCR_JOBS_KEY"
	return &env{t: t, srv: server.New(cfg), model: model, metrics: m, log: logs, inBubble: o.inBubble}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a server's handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// do serves req and validates the response against the spec.
func (e *env) do(req *http.Request) *httptest.ResponseRecorder {
	e.t.Helper()
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)

	router, err := spec()
	if err != nil {
		e.t.Fatal(err)
	}
	vreq := httptest.NewRequest(req.Method, req.URL.String(), bytes.NewReader(body))
	vreq.Header = req.Header.Clone()
	route, params, err := router.FindRoute(vreq)
	if err != nil {
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			e.t.Errorf("%s %s is not in openapi.yaml: %v", req.Method, req.URL.Path, err)
		}
		return rec
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route},
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: req.URL.Path == "/openapi.yaml"},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Errorf("%s %s → %d does not match openapi.yaml: %v\n%s", req.Method, req.URL.Path, rec.Code, err, rec.Body)
	}
	return rec
}

// page is a small valid PNG: a white page with a dark band, enough for intake to accept.
var page = func() []byte {
	m := image.NewGray(image.Rect(0, 0, 120, 160))
	for i := range m.Pix {
		m.Pix[i] = 0xff
	}
	for y := 40; y < 50; y++ {
		for x := 10; x < 110; x++ {
			m.SetGray(x, y, color.Gray{Y: 0x20})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

func multipartBody(t testing.TB, parts ...[]byte) (io.Reader, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i, p := range parts {
		fw, err := w.CreateFormFile("image", "page"+string(rune('1'+i))+".png")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(p)
	}
	w.Close()
	return &b, w.FormDataContentType()
}

func extractReq(t *testing.T, parts ...[]byte) *http.Request {
	body, ct := multipartBody(t, parts...)
	req := httptest.NewRequest(http.MethodPost, "/v1/extract", body)
	req.Header.Set("Content-Type", ct)
	return req
}

func jsonReq(path string, v any) *http.Request {
	b, _ := json.Marshal(v)
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func problemOf(t *testing.T, rec *httptest.ResponseRecorder) problem.Document {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var doc problem.Document
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("problem body: %v\n%s", err, rec.Body)
	}
	if doc.RequestID == "" || doc.RequestID != rec.Header().Get("X-Request-Id") {
		t.Errorf("requestId = %q, header %q", doc.RequestID, rec.Header().Get("X-Request-Id"))
	}
	return doc
}

const lipid = `以下是识别结果：
` + "```json" + `
{"title":"血脂四项","hospital":"杭州市第一人民医院","checkupDate":"2026-03-05","reportYear":null,
 "indicators":[{"itemName":"总胆固醇","itemGroup":null,"valueNum":5.86,"valueText":null,"unit":"mmol/L","refLow":null,"refHigh":5.2},
  {"itemName":"尿蛋白","itemGroup":null,"valueNum":null,"valueText":"阴性(-)","unit":null,"refLow":null,"refHigh":null}]}
` + "```"

func TestExtract(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Complete(fakeopenai.Response{Content: lipid, PromptTokens: 900, CompletionTokens: 120}))
	rec := e.do(extractReq(t, page))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var res extract.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if got := len(res.Draft.Indicators); got != 2 || res.Draft.Indicators[0].ValueNum.String() != "5.86" {
		t.Errorf("indicators = %+v", res.Draft.Indicators)
	}
	if *res.Draft.ReportYear != 2026 {
		t.Errorf("reportYear = %v, want 2026 from checkupDate", *res.Draft.ReportYear)
	}
	m := res.Meta
	if m.Model != "test-vl" || m.OutputMode != "prompt" || m.Attempts != 1 || *m.FinishReason != "stop" ||
		m.Usage.PromptTokens != 900 || m.Usage.CompletionTokens != 120 || len(m.PromptVersion) != 12 || len(m.Pages) != 1 {
		t.Errorf("meta = %+v", m)
	}
	if e.model.Calls() != 1 {
		t.Errorf("model calls = %d, want 1", e.model.Calls())
	}
	// The page went to the model as sent (a small upright PNG), as a data URL.
	parts := e.model.Requests()[0].Chat.Messages[0].MultiContent
	if !strings.HasPrefix(parts[0].ImageURL.URL, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(page[:30])) {
		t.Errorf("image part = %.60s", parts[0].ImageURL.URL)
	}
}

func TestExtractJSONBody(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Reply(lipid))
	rec := e.do(jsonReq("/v1/extract", map[string]any{"images": []map[string]string{{"data": base64.StdEncoding.EncodeToString(page)}}}))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

func TestExtractTwoPages(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Reply(lipid))
	rec := e.do(extractReq(t, page, page))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var res extract.Response
	json.Unmarshal(rec.Body.Bytes(), &res)
	if len(res.Draft.Indicators) != 2 || e.model.Calls() != 2 || len(res.Meta.Pages) != 2 {
		t.Errorf("indicators %d, calls %d, pages %d; want 2, 2, 2", len(res.Draft.Indicators), e.model.Calls(), len(res.Meta.Pages))
	}
	codes := map[string]int{}
	for _, w := range res.Warnings {
		codes[string(w.Code)]++
	}
	if codes["duplicate_indicator"] != 2 {
		t.Errorf("warnings = %+v, want two duplicate_indicator", res.Warnings)
	}
}

// TestExtractFailures: each failure has its status, code and number of model calls.
func TestExtractFailures(t *testing.T) {
	tests := []struct {
		name    string
		opts    options
		answer  []fakeopenai.Answer // queued; the default answers lipid
		req     func(t *testing.T) *http.Request
		status  int
		code    problem.Code
		calls   int
		warning string        // a warning code the 200 must carry
		took    time.Duration // if not 0, how long the request takes in the bubble's time (a retry's backoff is random)
	}{
		{name: "no model configured", opts: options{noModel: true}, status: 503, code: problem.ModelNotConfigured},
		{name: "refusal, then refusal", answer: []fakeopenai.Answer{fakeopenai.Reply("抱歉，图片太模糊，无法识别。"), fakeopenai.Reply("抱歉，无法识别。")},
			status: 502, code: problem.ModelOutputUnparseable, calls: 2},
		{name: "refusal, then an answer", answer: []fakeopenai.Answer{fakeopenai.Reply("抱歉，图片太模糊，无法识别。")}, status: 200, calls: 2},
		{name: "cut before any item is not re-asked", answer: []fakeopenai.Answer{fakeopenai.Truncated(`{"indicators":[{"itemName":"总胆`)},
			status: 502, code: problem.ModelOutputUnparseable, calls: 1},
		{name: "upstream 401", answer: []fakeopenai.Answer{fakeopenai.Unauthorized()}, status: 502, code: problem.ModelRejected, calls: 1},
		{name: "upstream 500 throughout", opts: options{tries: 2}, answer: []fakeopenai.Answer{fakeopenai.ServerError(), fakeopenai.ServerError()},
			status: 502, code: problem.ModelUnavailable, calls: 2},
		{name: "upstream 429 throughout", opts: options{tries: 1}, answer: []fakeopenai.Answer{fakeopenai.RateLimited("7")},
			status: 503, code: problem.ModelRateLimited, calls: 1},
		{name: "no choices", answer: []fakeopenai.Answer{fakeopenai.NoChoices()}, status: 502, code: problem.ModelUnavailable, calls: 1},
		{name: "upstream 429 with Retry-After, then an answer", answer: []fakeopenai.Answer{fakeopenai.RateLimited("1")},
			status: 200, calls: 2, took: time.Second},
		{name: "connection reset, then an answer", answer: []fakeopenai.Answer{fakeopenai.HangUp()}, status: 200, calls: 2},
		{name: "connection reset throughout", opts: options{tries: 2}, answer: []fakeopenai.Answer{fakeopenai.HangUp(), fakeopenai.HangUp()},
			status: 502, code: problem.ModelUnavailable, calls: 2},
		{name: "beyond the retry memory a 500 is not retried", opts: options{retryMemory: 1}, answer: []fakeopenai.Answer{fakeopenai.ServerError()},
			status: 502, code: problem.ModelUnavailable, calls: 1},
		{name: "beyond the retry memory a 429 is passed on", opts: options{retryMemory: 1}, answer: []fakeopenai.Answer{fakeopenai.RateLimited("7")},
			status: 503, code: problem.ModelRateLimited, calls: 1},
		{name: "beyond the retry memory a refusal is not re-asked", opts: options{retryMemory: 1}, answer: []fakeopenai.Answer{fakeopenai.Reply("抱歉，无法识别。")},
			status: 502, code: problem.ModelOutputUnparseable, calls: 1},
		{name: "within the retry memory a 500 is retried", opts: options{retryMemory: int64(len(page))}, answer: []fakeopenai.Answer{fakeopenai.ServerError()},
			status: 200, calls: 2},
		{name: "garbage instead of a completion is not retried", answer: []fakeopenai.Answer{fakeopenai.Garbage()},
			status: 502, code: problem.ModelUnavailable, calls: 1},
		{name: "cut after complete items keeps them", answer: []fakeopenai.Answer{
			fakeopenai.Truncated(`{"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L"},{"itemName":"甘油三`)},
			status: 200, calls: 1, warning: "output_truncated"},
		{name: "slower than the deadline", opts: options{timeout: 50 * time.Millisecond, tries: 1},
			answer: []fakeopenai.Answer{fakeopenai.Slow(time.Minute, fakeopenai.Reply(lipid))}, status: 504, code: problem.ModelTimeout, calls: 1,
			took: 50 * time.Millisecond},
		{name: "too many pages", opts: options{maxPages: 2}, req: func(t *testing.T) *http.Request { return extractReq(t, page, page, page) },
			status: 413, code: problem.TooManyPages},
		{name: "image over the byte limit", opts: options{maxBytes: 100}, status: 413, code: problem.PayloadTooLarge},
		{name: "a ZIP (a Word file)", req: func(t *testing.T) *http.Request {
			return extractReq(t, []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00report.docx"))
		},
			status: 415, code: problem.UnsupportedMediaType},
		{name: "a truncated PNG", req: func(t *testing.T) *http.Request { return extractReq(t, page[:len(page)/2]) },
			status: 422, code: problem.ImageUnreadable},
		{name: "one bad page of two", req: func(t *testing.T) *http.Request { return extractReq(t, page, []byte{}) },
			status: 422, code: problem.ImageUnreadable},
		{name: "no image part", req: func(t *testing.T) *http.Request { return extractReq(t) }, status: 400, code: problem.InvalidRequest},
		{name: "wrong content type", req: func(t *testing.T) *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/v1/extract", strings.NewReader("x"))
			r.Header.Set("Content-Type", "text/plain")
			return r
		}, status: 415, code: problem.UnsupportedMediaType},
		{name: "multipart without a boundary", req: func(t *testing.T) *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/v1/extract", strings.NewReader("--x\r\n"))
			r.Header.Set("Content-Type", "multipart/form-data")
			return r
		}, status: 400, code: problem.InvalidRequest},
		{name: "bad base64", req: func(t *testing.T) *http.Request {
			return jsonReq("/v1/extract", map[string]any{"images": []map[string]string{{"data": "!!!"}}})
		}, status: 400, code: problem.InvalidRequest},
	}
	// Time is synctest's: a Retry-After of a second and a deadline of 50 ms are waited exactly,
	// in none of the machine's time, however loaded it is.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				tt.opts.inBubble = true
				e := newEnv(t, tt.opts)
				e.model.Queue(tt.answer...)
				e.model.Default(fakeopenai.Reply(lipid))
				req := extractReq(t, page)
				if tt.req != nil {
					req = tt.req(t)
				}
				start := time.Now()
				rec := e.do(req)
				if took := time.Since(start); tt.took != 0 && took != tt.took {
					t.Errorf("took %v, want %v", took, tt.took)
				}
				if rec.Code != tt.status {
					t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
				}
				if tt.warning != "" && !strings.Contains(rec.Body.String(), `"code":"`+tt.warning+`"`) {
					t.Errorf("no %s warning: %s", tt.warning, rec.Body)
				}
				if tt.code != "" {
					if doc := problemOf(t, rec); doc.Code != tt.code {
						t.Errorf("code = %s, want %s (%s)", doc.Code, tt.code, doc.Detail)
					}
				}
				if got := e.model.Calls(); got != tt.calls {
					t.Errorf("model calls = %d, want %d", got, tt.calls)
				}
				if tt.code == problem.ModelRateLimited && rec.Header().Get("Retry-After") != "7" {
					t.Errorf("Retry-After = %q, want the upstream's 7", rec.Header().Get("Retry-After"))
				}
			})
		})
	}
}

// TestExtractNeverLeaksKey: whatever the upstream says, the caller never sees the model key.
func TestExtractNeverLeaksKey(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Queue(fakeopenai.Error(http.StatusUnauthorized, "Incorrect API key provided: sk-test"))
	rec := e.do(extractReq(t, page))
	if strings.Contains(rec.Body.String(), "sk-test") {
		t.Errorf("the API key leaked: %s", rec.Body)
	}
}

func TestParse(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	for _, req := range []*http.Request{
		func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/v1/parse", strings.NewReader(lipid))
			r.Header.Set("Content-Type", "text/plain; charset=utf-8")
			return r
		}(),
		jsonReq("/v1/parse", map[string]string{"reply": lipid}),
	} {
		rec := e.do(req)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var res server.ParseResponse
		json.Unmarshal(rec.Body.Bytes(), &res)
		if len(res.Draft.Indicators) != 2 || res.Meta.Stage != "fenced" {
			t.Errorf("parse = %+v", res)
		}
	}
	rec := e.do(jsonReq("/v1/parse", map[string]string{"reply": `{"indicators":[{"itemName":"a","valueNum":1},{"itemName":"b","valueNum":2}]}`, "finishReason": "length"}))
	if !strings.Contains(rec.Body.String(), "output_truncated") {
		t.Errorf("finishReason length gave no output_truncated: %s", rec.Body)
	}
	rec = e.do(jsonReq("/v1/parse", map[string]string{"reply": "抱歉，图片太模糊，无法识别。"}))
	if doc := problemOf(t, rec); rec.Code != 422 || doc.Code != problem.ReplyUnparseable || !strings.Contains(doc.ReplyExcerpt, "图片太模糊") || strings.Contains(doc.Detail, "图片太模糊") {
		t.Errorf("refusal → %+v", doc)
	}
}

func TestValidate(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	good := map[string]any{
		"title": "血脂", "hospital": nil, "checkupDate": "2026-03-05", "reportYear": 2026,
		"indicators": []any{map[string]any{"itemName": "总胆固醇", "itemGroup": nil, "valueNum": 5.86, "valueText": nil, "unit": "mmol/L", "refLow": 5.2, "refHigh": 3.1,
			"printedFlag": nil, "refText": nil, "page": 1, "analyte": nil}},
	}
	rec := e.do(jsonReq("/v1/validate", good))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "reference_range_swapped") {
		t.Errorf("valid draft: %d %s", rec.Code, rec.Body)
	}
	bad := map[string]any{
		"checkupDate": "2026-02-30", "reportYear": "2026", "extra": 1,
		"indicators": []any{map[string]any{"itemName": " ", "valueNum": "5.6"}},
	}
	rec = e.do(jsonReq("/v1/validate", bad))
	doc := problemOf(t, rec)
	if rec.Code != 422 || doc.Code != problem.InvalidDraft {
		t.Fatalf("invalid draft: %d %+v", rec.Code, doc)
	}
	var paths []string
	for _, f := range doc.Errors {
		paths = append(paths, f.Path)
	}
	want := []string{"title", "hospital", "checkupDate", "reportYear", "indicators[0].itemName", "indicators[0].itemGroup", "indicators[0].valueNum",
		"indicators[0].valueText", "indicators[0].unit", "indicators[0].refLow", "indicators[0].refHigh",
		"extra"} // the service's keys (printedFlag, refText, page, analyte) may be left out
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("error paths (-want +got):\n%s", diff)
	}
}

func TestRoutes(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	tests := []struct {
		method, path string
		status       int
		code         problem.Code
	}{
		{"GET", "/healthz", 200, ""},
		{"HEAD", "/healthz", 200, ""},
		{"GET", "/readyz", 503, problem.ModelNotConfigured},
		{"HEAD", "/readyz", 503, ""},
		{"GET", "/openapi.yaml", 200, ""},
		{"HEAD", "/openapi.yaml", 200, ""},
		{"HEAD", "/version", 200, ""},
		{"HEAD", "/metrics", 200, ""},
		{"GET", "/nope", 404, problem.NotFound},
		{"GET", "/v1/extract", 405, problem.MethodNotAllowed},
	}
	for _, tt := range tests {
		rec := e.do(httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, rec.Code, tt.status)
		}
		if tt.code != "" {
			if doc := problemOf(t, rec); doc.Code != tt.code {
				t.Errorf("%s %s code = %s, want %s", tt.method, tt.path, doc.Code, tt.code)
			}
		}
	}
	ready := newEnv(t, options{})
	for _, m := range []string{"GET", "HEAD"} {
		if rec := ready.do(httptest.NewRequest(m, "/readyz", nil)); rec.Code != 200 {
			t.Errorf("%s /readyz with a model = %d", m, rec.Code)
		}
	}
}

// TestBodyLimit: a request body over the whole-request cap is refused with payload_too_large.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	big := strings.Repeat("x", 2<<20)
	r := httptest.NewRequest(http.MethodPost, "/v1/parse", strings.NewReader(big))
	r.Header.Set("Content-Type", "text/plain")
	rec := e.do(r)
	if doc := problemOf(t, rec); rec.Code != 413 || doc.Code != problem.PayloadTooLarge {
		t.Errorf("big body = %d %s", rec.Code, doc.Code)
	}
}

// TestExtractPageImages: include=pageImages, as a multipart field or a JSON member, answers each
// page's image as sent; without it none comes; an unknown name is invalid_request, before any
// model call; no upload memory is left counted once the answer is written.
func TestExtractPageImages(t *testing.T) {
	multi := func(include ...string) *http.Request {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("image", "p.png")
		fw.Write(page)
		for _, v := range include {
			w.WriteField("include", v)
		}
		w.Close()
		req := httptest.NewRequest(http.MethodPost, "/v1/extract", &b)
		req.Header.Set("Content-Type", w.FormDataContentType())
		return req
	}
	js := func(include ...string) *http.Request {
		return jsonReq("/v1/extract", map[string]any{"images": []map[string]string{{"data": base64.StdEncoding.EncodeToString(page)}}, "include": include})
	}
	tests := []struct {
		name   string
		req    *http.Request
		status int
		images int
	}{
		{"multipart", multi("pageImages"), 200, 1},
		{"multipart, listed", multi(" pageImages, "), 200, 1},
		{"multipart, none", multi(), 200, 0},
		{"json", js("pageImages"), 200, 1},
		{"json, none", js(), 200, 0},
		{"unknown", multi("pageimages"), 400, 0},
		{"json, unknown", js("pageImages", "thumbnails"), 400, 0},
	}
	for _, tt := range tests {
		e := newEnv(t, options{})
		e.model.Default(fakeopenai.Reply(lipid))
		rec := e.do(tt.req)
		if rec.Code != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, rec.Code, tt.status, rec.Body)
			continue
		}
		if tt.status != 200 {
			if doc := problemOf(t, rec); doc.Code != problem.InvalidRequest || e.model.Calls() != 0 {
				t.Errorf("%s: %s after %d model calls, want invalid_request before any", tt.name, doc.Code, e.model.Calls())
			}
			continue
		}
		var res extract.Response
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.PageImages) != tt.images {
			t.Errorf("%s: %d page images, want %d", tt.name, len(res.PageImages), tt.images)
		}
		if tt.images > 0 {
			im := res.PageImages[0]
			if !bytes.Equal(im.Data, page) || im.Page != 1 || im.MediaType != "image/png" || im.Width != 120 || im.Height != 160 {
				t.Errorf("%s: page image %d %s %dx%d, %d bytes; want page 1 image/png 120x160 as sent", tt.name, im.Page, im.MediaType, im.Width, im.Height, len(im.Data))
			}
		}
		if tt.images == 0 && strings.Contains(rec.Body.String(), "pageImages") {
			t.Errorf("%s: pageImages in an answer that did not ask for it", tt.name)
		}
		if b64 := base64.StdEncoding.EncodeToString(page)[:40]; strings.Contains(e.log.String(), b64) {
			t.Errorf("%s: the log holds the page image", tt.name)
		}
	}
}
