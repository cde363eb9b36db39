package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/prompt"
)

// TestMain fails the package if any test leaves a goroutine behind: a model call not cancelled,
// a connection not closed, a handler still waiting. Benchmarks may keep fixtures running, so a
// run with -bench is not checked.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.bench").Value.String() == "" {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func withKey(r *http.Request, auth string) *http.Request {
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

func TestAuth(t *testing.T) {
	e := newEnv(t, options{apiKeys: []string{"key-one", "key-two"}})
	e.model.Default(fakeopenai.Reply(lipid))
	parseReq := func() *http.Request { return jsonReq("/v1/parse", map[string]string{"reply": lipid}) }
	tests := []struct {
		name      string
		req       func() *http.Request
		auth      string
		status    int
		challenge string // the WWW-Authenticate header of a 401
	}{
		{name: "no key", req: parseReq, status: 401, challenge: `Bearer realm="ocrdraft"`},
		{name: "wrong key", req: parseReq, auth: "Bearer key-three", status: 401, challenge: `Bearer realm="ocrdraft", error="invalid_token"`},
		{name: "a prefix of a key", req: parseReq, auth: "Bearer key-on", status: 401, challenge: `Bearer realm="ocrdraft", error="invalid_token"`},
		{name: "a key and more", req: parseReq, auth: "Bearer key-one2", status: 401, challenge: `Bearer realm="ocrdraft", error="invalid_token"`},
		{name: "empty bearer", req: parseReq, auth: "Bearer ", status: 401, challenge: `Bearer realm="ocrdraft"`},
		{name: "basic scheme", req: parseReq, auth: "Basic a2V5LW9uZTo=", status: 401, challenge: `Bearer realm="ocrdraft"`},
		{name: "the key without a scheme", req: parseReq, auth: "key-one", status: 401, challenge: `Bearer realm="ocrdraft"`},
		{name: "first key", req: parseReq, auth: "Bearer key-one", status: 200},
		{name: "second key, scheme in lower case", req: parseReq, auth: "bearer key-two", status: 200},
		{name: "extract without a key", req: func() *http.Request { return extractReq(t, page) }, status: 401, challenge: `Bearer realm="ocrdraft"`},
		{name: "extract with a key", req: func() *http.Request { return extractReq(t, page) }, auth: "Bearer key-two", status: 200},
		{name: "validate without a key", req: func() *http.Request { return jsonReq("/v1/validate", map[string]any{}) }, status: 401, challenge: `Bearer realm="ocrdraft"`},
		{name: "healthz is open", req: func() *http.Request { return httptest.NewRequest("GET", "/healthz", nil) }, status: 200},
		{name: "readyz is open", req: func() *http.Request { return httptest.NewRequest("GET", "/readyz", nil) }, status: 200},
		{name: "metrics are open", req: func() *http.Request { return httptest.NewRequest("GET", "/metrics", nil) }, status: 200},
		{name: "the spec is open", req: func() *http.Request { return httptest.NewRequest("GET", "/openapi.yaml", nil) }, status: 200},
	}
	for _, tt := range tests {
		rec := e.do(withKey(tt.req(), tt.auth))
		if rec.Code != tt.status {
			t.Errorf("%s: status = %d, want %d: %s", tt.name, rec.Code, tt.status, rec.Body)
			continue
		}
		if got := rec.Header().Get("WWW-Authenticate"); got != tt.challenge {
			t.Errorf("%s: WWW-Authenticate = %q, want %q", tt.name, got, tt.challenge)
		}
		if tt.status == 401 {
			if doc := problemOf(t, rec); doc.Code != problem.Unauthorized {
				t.Errorf("%s: code = %s, want unauthorized", tt.name, doc.Code)
			}
		}
	}
	if got := e.model.Calls(); got != 1 {
		t.Errorf("model calls = %d, want 1: a refused request must cost no model call", got)
	}
}

// TestOverloaded: with every slot taken — the requests' turns, or the model calls' — a request
// waits OCR_QUEUE_WAIT and gets 503 overloaded with Retry-After, and the model never sees more
// than the limit. Time is synctest's: the wait is exact, on a loaded machine too.
func TestOverloaded(t *testing.T) {
	for _, tt := range []struct {
		queue string
		opts  options
	}{
		{"request", options{maxRequests: 1, queueWait: 100 * time.Millisecond, inBubble: true}},
		{"model", options{maxInFlight: 1, queueWait: 100 * time.Millisecond, inBubble: true}},
	} {
		t.Run(tt.queue, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, tt.opts)
				release := make(chan struct{})
				e.model.Queue(func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-release:
					case <-r.Context().Done():
					}
					fakeopenai.Reply(lipid)(w, r)
				})
				e.model.Default(fakeopenai.Reply(lipid))

				first := make(chan *httptest.ResponseRecorder)
				go func() {
					rec := httptest.NewRecorder()
					e.srv.ServeHTTP(rec, extractReq(t, page))
					first <- rec
				}()
				testwait.For(t, "the first request to reach the model", func() bool { return e.model.Calls() == 1 })

				start := time.Now()
				rec := e.do(extractReq(t, page))
				took := time.Since(start)
				if rec.Code != http.StatusServiceUnavailable {
					t.Fatalf("status = %d, want 503: %s", rec.Code, rec.Body)
				}
				if doc := problemOf(t, rec); doc.Code != problem.Overloaded {
					t.Errorf("code = %s, want overloaded", doc.Code)
				}
				if got := rec.Header().Get("Retry-After"); got != "1" {
					t.Errorf("Retry-After = %q, want 1", got)
				}
				if took != 100*time.Millisecond {
					t.Errorf("overloaded after %v, want after the 100ms queue wait", took)
				}
				if got := e.model.Calls(); got != 1 {
					t.Errorf("model calls = %d, want 1: the refused request must not reach the model", got)
				}

				close(release)
				if rec := <-first; rec.Code != http.StatusOK {
					t.Errorf("the request holding the slot = %d, want 200: %s", rec.Code, rec.Body)
				}
				// A slot is free again.
				if rec := e.do(extractReq(t, page)); rec.Code != http.StatusOK {
					t.Errorf("after the slot came free = %d, want 200: %s", rec.Code, rec.Body)
				}
				for _, m := range []series{
					{1, "ocrdraft_overloaded_total", []string{"queue", tt.queue}},
					{1, "ocrdraft_http_requests_total", []string{"method", "POST", "route", "/v1/extract", "status", "503"}},
					{2, "ocrdraft_model_calls_total", []string{"outcome", "ok"}},
					{0, "ocrdraft_model_calls_in_flight", nil},
					{0, "ocrdraft_extract_requests_in_flight", nil},
					{0, "ocrdraft_queue_waiting", []string{"queue", "request"}},
					{0, "ocrdraft_queue_waiting", []string{"queue", "model"}},
				} {
					m.check(e)
				}
			})
		})
	}
}

// TestUploadMemory: a body that does not fit beside one being read waits, counted in the upload
// queue, until that one has been read, and then goes through.
func TestUploadMemory(t *testing.T) {
	body, ct := multipartBody(t, page)
	raw, _ := io.ReadAll(body)
	e := newEnv(t, options{uploadMemory: int64(len(raw)), queueWait: time.Minute})
	e.model.Default(fakeopenai.Reply(lipid))
	serve := func(r io.Reader, codes chan<- int) {
		req := httptest.NewRequest(http.MethodPost, "/v1/extract", r)
		req.Header.Set("Content-Type", ct)
		req.ContentLength = int64(len(raw))
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		codes <- rec.Code
	}
	first, second := make(chan int, 1), make(chan int, 1)
	pr, pw := io.Pipe()
	go serve(pr, first)
	if _, err := pw.Write(raw[:10]); err != nil { // returns once the server reads: it has its room
		t.Fatal(err)
	}
	go serve(bytes.NewReader(raw), second)
	testwait.For(t, "a request waiting for upload memory", e.metricIs(1, "ocrdraft_queue_waiting", "queue", "upload"))
	select {
	case code := <-second:
		t.Fatalf("the second request finished (%d) while the first body was being read", code)
	default:
	}
	_, _ = pw.Write(raw[10:])
	pw.Close()
	if a, b := <-first, <-second; a != http.StatusOK || b != http.StatusOK {
		t.Fatalf("statuses %d and %d, want 200 and 200", a, b)
	}
	series{0, "ocrdraft_queue_waiting", []string{"queue", "upload"}}.check(e)
	series{1, "ocrdraft_queue_wait_seconds", []string{"queue", "upload"}}.check(e) // observations
}

// TestUploadStalled: behind an upload that has stopped moving, the next one does not wait for
// the deadline: after OCR_QUEUE_WAIT without any upload moving on, it is 503 overloaded. And the
// stalled body itself is cut off at the request's deadline, which gives its memory back.
func TestUploadStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body, ct := multipartBody(t, page)
		raw, _ := io.ReadAll(body)
		e := newEnv(t, options{inBubble: true, uploadMemory: int64(len(raw)), queueWait: 50 * time.Millisecond, timeout: 2 * time.Second})
		e.model.Default(fakeopenai.Reply(lipid))
		e.listen()

		// A caller that sends its headers and the start of its body, then nothing.
		start := time.Now()
		conn := e.dial(t)
		fmt.Fprintf(conn, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ct, len(raw))
		conn.Write(raw[:len(raw)/2])
		testwait.For(t, "the first request in flight", e.metricIs(1, "ocrdraft_extract_requests_in_flight"))

		post := func() *http.Response {
			res, err := e.post("/v1/extract", ct, bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		behind := time.Now()
		if res := post(); res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Errorf("behind a stalled upload: %d, Retry-After %q; want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
		}
		if took := time.Since(behind); took != 50*time.Millisecond {
			t.Errorf("behind a stalled upload: answered after %v, want after the 50ms queue wait", took)
		}

		// The stalled request is answered at its deadline, and its memory is free again.
		res, _ := conn.response()
		if res.StatusCode != http.StatusRequestTimeout {
			t.Errorf("the stalled request: %d, want 408", res.StatusCode)
		}
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("the stalled request answered after %v, want at its 2s deadline", took)
		}
		if res := post(); res.StatusCode != http.StatusOK {
			t.Errorf("after the stalled request ended: %d, want 200", res.StatusCode)
		}
		series{1, "ocrdraft_overloaded_total", []string{"queue", "upload"}}.check(e)
	})
}

// TestCallerGoesAway: a caller that disconnects mid-request cancels the model call.

func TestCallerGoesAway(t *testing.T) {
	e := newEnv(t, options{})
	arrived, cancelled := make(chan struct{}), make(chan struct{})
	e.model.Queue(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(cancelled)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, extractReq(t, page).WithContext(ctx))
		done <- rec
	}()
	<-arrived
	cancel()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the model call was not cancelled when the caller went away")
	}
	rec := <-done
	if rec.Code != 499 {
		t.Errorf("status = %d, want 499 (seen only in logs and metrics)", rec.Code)
	}
	if !strings.Contains(e.log.String(), `"code":"canceled"`) {
		t.Errorf("the log line lacks code canceled:\n%s", e.log)
	}
	series{1, "ocrdraft_model_calls_total", []string{"outcome", "canceled"}}.check(e)
	if got := e.model.Calls(); got != 1 {
		t.Errorf("model calls = %d, want 1: a cancelled call is not retried", got)
	}
}

// TestMetrics: one extraction shows in every family the issue asks for, with bounded labels and
// no request id.
func TestMetrics(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Complete(fakeopenai.Response{Content: lipid, PromptTokens: 900, CompletionTokens: 120}))
	rec := e.do(extractReq(t, page))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	e.do(httptest.NewRequest("GET", "/no/such/route", nil))
	for _, m := range []series{
		{1, "ocrdraft_http_requests_total", []string{"method", "POST", "route", "/v1/extract", "status", "200"}},
		{1, "ocrdraft_http_requests_total", []string{"method", "GET", "route", "unmatched", "status", "404"}},
		{1, "ocrdraft_http_request_duration_seconds", []string{"method", "POST", "route", "/v1/extract"}},
		{1, "ocrdraft_model_calls_total", []string{"outcome", "ok"}},
		{1, "ocrdraft_model_call_duration_seconds", []string{"outcome", "ok"}},
		{0, "ocrdraft_model_calls_in_flight", nil},
		{1, "ocrdraft_pages_total", []string{"outcome", "ok"}},
		{1, "ocrdraft_page_attempts", nil},
		{900, "ocrdraft_model_prompt_tokens_total", nil},
		{120, "ocrdraft_model_completion_tokens_total", nil},
		{1, "ocrdraft_parse_stage_total", []string{"stage", "fenced"}},
		{0, "ocrdraft_parse_stage_total", []string{"stage", "repaired"}},
		{2, "ocrdraft_indicators_total", nil},
		{0, "ocrdraft_indicators_dropped_total", nil},
		{0, "ocrdraft_replies_truncated_total", nil},
		{0, "ocrdraft_pages_sent_once_total", nil},
		{float64(len(page)), "ocrdraft_image_in_bytes_total", nil},
		{float64(len(page)), "ocrdraft_image_sent_bytes_total", nil},
	} {
		m.check(e)
	}
	// The process and Go collectors are registered: their values are the machine's.
	for _, name := range []string{"process_resident_memory_bytes", "go_goroutines"} {
		if _, err := e.lookup(name); err != nil {
			t.Error(err)
		}
	}
	body := e.get("/metrics") // what a scraper reads must hold no request id and no health data
	if id := rec.Header().Get("X-Request-Id"); id == "" || strings.Contains(body, id) {
		t.Errorf("the request id %q is empty or in the metrics", id)
	}
	if strings.Contains(body, "总胆固醇") {
		t.Error("an indicator name in the metrics")
	}
	// A value could only get in as a name, a help text or a label value: sample values are
	// counts, bytes and durations, and a duration such as 5.861e-05 s may well hold "5.86".
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range families {
		texts := []string{name, f.GetHelp()}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				texts = append(texts, l.GetName(), l.GetValue())
			}
		}
		for _, s := range texts {
			if strings.Contains(s, "总胆固醇") || strings.Contains(s, "5.86") {
				t.Errorf("health data in the metrics: %s: %q", name, s)
			}
		}
	}
}

// TestLogsHoldNoHealthData: whatever happens to a request — success, a re-ask, a refusal quoted
// to the caller, an upstream quoting the key back — its log lines (at debug level) hold none of
// the report's names or values, no image bytes, no prompt, and never the model key.
func TestLogsHoldNoHealthData(t *testing.T) {
	const (
		key   = "sk-secret-xyz"
		reply = `{"title":"ZZ独特报告","hospital":"ZZ独特医院","checkupDate":"2026-03-05","reportYear":2026,"indicators":[` +
			`{"itemName":"ZZ独特指标","itemGroup":"ZZ独特组","valueNum":987.6543,"valueText":null,"unit":"zzmol/L","refLow":1.11111,"refHigh":9.99999},` +
			`{"itemName":"ZZ第二指标","itemGroup":null,"valueNum":null,"valueText":"ZZ阳性","unit":null,"refLow":null,"refHigh":null}]}`
		refusal = "抱歉，ZZ独特指标 987.6543 无法识别。"
	)
	secrets := []string{"ZZ独特", "ZZ第二", "独特", "987.6543", "1.11111", "9.99999", "zzmol", "阳性", key,
		base64.StdEncoding.EncodeToString(page[:24]), prompt.Render()[:40]}
	tests := []struct {
		name    string
		answers []fakeopenai.Answer
		req     func() *http.Request
		status  int
	}{
		{name: "success", answers: []fakeopenai.Answer{fakeopenai.Reply(reply)}, status: 200},
		{name: "a refusal, then the answer", answers: []fakeopenai.Answer{fakeopenai.Reply(refusal), fakeopenai.Reply(reply)}, status: 200},
		{name: "refusals quoted to the caller", answers: []fakeopenai.Answer{fakeopenai.Reply(refusal), fakeopenai.Reply(refusal)}, status: 502},
		{name: "cut off", answers: []fakeopenai.Answer{fakeopenai.Truncated(reply[:len(reply)-40])}, status: 200},
		{name: "upstream 401 quoting the key", answers: []fakeopenai.Answer{fakeopenai.Error(401, "Incorrect API key provided: "+key)}, status: 502},
		{name: "upstream 500 quoting the key", answers: []fakeopenai.Answer{fakeopenai.Error(500, "boom "+key), fakeopenai.Error(500, "boom "+key)}, status: 502},
		{name: "parse", req: func() *http.Request { return jsonReq("/v1/parse", map[string]string{"reply": reply}) }, status: 200},
		{name: "parse of a refusal", req: func() *http.Request { return jsonReq("/v1/parse", map[string]string{"reply": refusal}) }, status: 422},
		{name: "validate", req: func() *http.Request {
			return jsonReq("/v1/validate", map[string]any{"title": "ZZ独特报告", "indicators": []any{map[string]any{"itemName": "ZZ独特指标", "valueNum": "987.6543"}}})
		}, status: 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, options{modelKey: key, tries: 2})
			e.model.Queue(tt.answers...)
			req := extractReq(t, page)
			if tt.req != nil {
				req = tt.req()
			}
			rec := e.do(req)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			logs := e.log.String()
			if !strings.Contains(logs, `"msg":"request"`) {
				t.Fatalf("no request line in the log:\n%s", logs)
			}
			for _, s := range secrets {
				if strings.Contains(logs, s) {
					t.Errorf("the log holds %q:\n%s", s, logs)
				}
			}
		})
	}
	// The check can fail: with OCR_DEBUG_LOG_REPLIES the same reply does reach the log.
	e := newEnv(t, options{modelKey: key, logReplies: true})
	e.model.Queue(fakeopenai.Reply(reply))
	rec := e.do(extractReq(t, page))
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	logs := e.log.String()
	line := `"msg":"model reply","requestId":"` + rec.Header().Get("X-Request-Id") + `"`
	if !strings.Contains(logs, "ZZ独特指标") || !strings.Contains(logs, line) {
		t.Errorf("with logReplies the reply is not in the debug log with its request id:\n%s", logs)
	}
	if strings.Contains(logs, key) {
		t.Errorf("the model key is in the log:\n%s", logs)
	}
}

// TestRequestID: a caller's plain X-Request-Id is kept; anything else is replaced, since the id
// goes into every log line.
func TestRequestID(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	for _, tt := range []struct {
		in   string
		keep bool
	}{
		{"abc-123_x.y:z", true},
		{"总胆固醇 5.86", false},
		{strings.Repeat("a", 65), false},
		{"a\"b", false},
	} {
		r := httptest.NewRequest("GET", "/healthz", nil)
		r.Header.Set("X-Request-Id", tt.in)
		rec := e.do(r)
		got := rec.Header().Get("X-Request-Id")
		if (got == tt.in) != tt.keep || got == "" {
			t.Errorf("X-Request-Id %q → %q, keep = %v", tt.in, got, tt.keep)
		}
	}
	if strings.Contains(e.log.String(), "总胆固醇") {
		t.Error("a caller's request id put health data in the log")
	}
}

func (e *env) get(path string) string {
	e.t.Helper()
	rec := e.do(httptest.NewRequest("GET", path, nil))
	if rec.Code != http.StatusOK {
		e.t.Fatalf("GET %s = %d", path, rec.Code)
	}
	return rec.Body.String()
}

func grep(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
