package vision

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
)

const key = "sk-secret-test"

var page = Image{MIME: "image/png", Data: []byte("\x89PNG fake page")}

// waits records the pauses Complete asked for instead of taking them, so retry tests run at once
// and can check that Retry-After was honoured.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func (w *waits) got() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// newClient returns a client of the fake whose sleeps are recorded, not taken.
func newClient(t *testing.T, f *fakeopenai.Server, cfg Config) (*Client, *waits) {
	t.Helper()
	cfg.BaseURL = f.URL
	if cfg.Model == "" {
		cfg.Model = "qwen-vl-max"
	}
	if cfg.APIKey == "" {
		cfg.APIKey = key
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	w := new(waits)
	c.sleep = w.sleep
	return c, w
}

func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestCompleteWire checks what goes over the wire for each setting, field by field, including the
// fields that must be left out.
func TestCompleteWire(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"items":{"type":"array"}},"required":["items"],"additionalProperties":false}`)
	tests := []struct {
		name   string
		cfg    Config
		want   map[string]string // top-level field → compact JSON
		absent []string
	}{
		{
			name:   "prompt mode; temperature 0 goes as 0.01",
			cfg:    Config{MaxTokens: 4096},
			want:   map[string]string{"model": `"qwen-vl-max"`, "temperature": `0.01`, "max_tokens": `4096`},
			absent: []string{"max_completion_tokens", "response_format"},
		},
		{
			name: "temperature as given",
			cfg:  Config{Temperature: 0.2},
			want: map[string]string{"temperature": `0.2`},
			// 0 leaves the length to the server.
			absent: []string{"max_tokens", "max_completion_tokens"},
		},
		{
			name: "json_object",
			cfg:  Config{OutputMode: ModeJSONObject},
			want: map[string]string{"response_format": `{"type":"json_object"}`},
		},
		{
			name: "json_schema, strict",
			cfg:  Config{OutputMode: ModeJSONSchema, Schema: schema},
			want: map[string]string{"response_format": `{"json_schema":{"name":"ocr_draft","schema":` + string(schema) + `,"strict":true},"type":"json_schema"}`},
		},
		{
			name:   "reasoning model: max_completion_tokens, no temperature",
			cfg:    Config{Model: "gpt-5-mini", MaxTokens: 4096},
			want:   map[string]string{"model": `"gpt-5-mini"`, "max_completion_tokens": `4096`},
			absent: []string{"max_tokens", "temperature"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			c, _ := newClient(t, f, tt.cfg)
			if _, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}}); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			reqs := f.Requests()
			if len(reqs) != 1 {
				t.Fatalf("calls = %d, want 1", len(reqs))
			}
			for k, want := range tt.want {
				raw, ok := reqs[0].Fields[k]
				if !ok {
					t.Errorf("%s not sent, want %s", k, want)
					continue
				}
				if got := compact(t, raw); got != compact(t, []byte(want)) {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
			for _, k := range tt.absent {
				if raw, ok := reqs[0].Fields[k]; ok {
					t.Errorf("%s = %s, want it left out", k, raw)
				}
			}
		})
	}
}

func TestCompleteMessages(t *testing.T) {
	jpeg := Image{MIME: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff}}
	f := fakeopenai.New(t)
	f.Queue(fakeopenai.Complete(fakeopenai.Response{
		Content: `{"items":[]}`, Model: "qwen-vl-max-2025", PromptTokens: 1234, CompletionTokens: 56,
	}))
	c, _ := newClient(t, f, Config{})

	got, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page, jpeg}})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := Reply{Text: `{"items":[]}`, FinishReason: "stop", Model: "qwen-vl-max-2025", PromptTokens: 1234, CompletionTokens: 56, Tries: 1}
	if got != want {
		t.Errorf("reply = %+v\nwant %+v", got, want)
	}

	// The re-ask: same conversation, the bad reply as the assistant's turn, then the correction.
	if _, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}, Previous: "Sure! {items", Retry: "Reply with one JSON object only."}); err != nil {
		t.Fatalf("Complete (retry): %v", err)
	}

	reqs := f.Requests()
	if h := reqs[0].Header.Get("Authorization"); h != "Bearer "+key {
		t.Errorf("Authorization = %q", h)
	}
	type msg struct{ role, text, images string }
	flat := func(r fakeopenai.Request) []msg {
		var out []msg
		for _, m := range r.Chat.Messages {
			x := msg{role: m.Role, text: m.Content}
			for _, p := range m.MultiContent {
				switch p.Type {
				case openai.ChatMessagePartTypeImageURL:
					x.images += fmt.Sprintf("[%s %s]", p.ImageURL.URL, p.ImageURL.Detail)
				case openai.ChatMessagePartTypeText:
					x.text += p.Text
				}
			}
			out = append(out, x)
		}
		return out
	}
	images := "[data:image/png;base64,iVBORyBmYWtlIHBhZ2U= high][data:image/jpeg;base64,/9j/ high]"
	for i, want := range [][]msg{
		{{role: "user", text: "read it", images: images}},
		{{role: "user", text: "read it", images: "[data:image/png;base64,iVBORyBmYWtlIHBhZ2U= high]"},
			{role: "assistant", text: "Sure! {items"}, {role: "user", text: "Reply with one JSON object only."}},
	} {
		got := flat(reqs[i])
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("request %d messages:\n got %v\nwant %v", i, got, want)
		}
	}
}

// status answers status with a non-JSON body, as proxies do; go-openai reports it as a
// *RequestError rather than an *APIError.
func status(code int, body string) fakeopenai.Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

func TestCompleteFailures(t *testing.T) {
	quota := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`)
	}
	slow := fakeopenai.Slow(time.Minute, fakeopenai.Reply("late"))
	tests := []struct {
		name       string
		cfg        Config
		queue      []fakeopenai.Answer
		def        fakeopenai.Answer // after the queue; nil keeps the fake's normal reply
		code       problem.Code      // "" for success
		calls      int
		waits      []time.Duration // exact waits; nil skips the check (backoff is random)
		nwaits     int
		retryAfter time.Duration
		finish     string
	}{
		// Rate limits.
		{name: "429 with Retry-After, then a reply", queue: []fakeopenai.Answer{fakeopenai.RateLimited("2")},
			calls: 2, waits: []time.Duration{2 * time.Second}, nwaits: 1, finish: "stop"},
		{name: "429 throughout", def: fakeopenai.RateLimited("2"),
			code: problem.ModelRateLimited, calls: 3, waits: []time.Duration{2 * time.Second, 2 * time.Second}, nwaits: 2, retryAfter: 2 * time.Second},
		{name: "429 without Retry-After backs off, and tells the caller a default wait", def: fakeopenai.RateLimited(""),
			code: problem.ModelRateLimited, calls: 3, nwaits: 2, retryAfter: defaultRateLimitWait},
		{name: "429 asking for an hour is passed on at once, capped", def: fakeopenai.RateLimited("3600"),
			code: problem.ModelRateLimited, calls: 1, retryAfter: MaxRetryAfter},
		{name: "429 asking for 100000 s is passed on as MaxRetryAfter", def: fakeopenai.RateLimited("100000"),
			code: problem.ModelRateLimited, calls: 1, retryAfter: MaxRetryAfter},
		{name: "429 for a spent quota is not retried", def: quota, code: problem.ModelRejected, calls: 1},

		// Server errors and connections.
		{name: "500 thrice", def: fakeopenai.ServerError(), code: problem.ModelUnavailable, calls: 3, nwaits: 2},
		{name: "500 once, then a reply", queue: []fakeopenai.Answer{fakeopenai.ServerError()}, calls: 2, nwaits: 1, finish: "stop"},
		{name: "502 HTML page", def: status(http.StatusBadGateway, "<html>bad gateway</html>"), code: problem.ModelUnavailable, calls: 3, nwaits: 2},
		{name: "tries 1 means no retry", cfg: Config{Tries: 1}, def: fakeopenai.ServerError(), code: problem.ModelUnavailable, calls: 1},
		{name: "hang-up, then a reply", queue: []fakeopenai.Answer{fakeopenai.HangUp()}, calls: 2, nwaits: 1, finish: "stop"},
		{name: "hang-up throughout", def: fakeopenai.HangUp(), code: problem.ModelUnavailable, calls: 3, nwaits: 2},

		// Refusals: not retried.
		{name: "401 bad key", def: fakeopenai.Unauthorized(), code: problem.ModelRejected, calls: 1},
		{name: "404 unknown model", def: fakeopenai.Error(http.StatusNotFound, "The model `qwen-vl-max` does not exist."), code: problem.ModelRejected, calls: 1},
		{name: "400 HTML page", def: status(http.StatusBadRequest, "<html>no</html>"), code: problem.ModelRejected, calls: 1},

		// Per-try timeouts.
		{name: "try times out, then a reply", cfg: Config{AttemptTimeout: 20 * time.Millisecond},
			queue: []fakeopenai.Answer{slow}, calls: 2, nwaits: 1, finish: "stop"},
		{name: "every try times out", cfg: Config{AttemptTimeout: 20 * time.Millisecond}, def: slow,
			code: problem.ModelTimeout, calls: 3, nwaits: 2},

		// 200s that are not good replies.
		{name: "garbage body is not retried", def: fakeopenai.Garbage(), code: problem.ModelUnavailable, calls: 1},
		{name: "no choices is not retried", def: fakeopenai.NoChoices(), code: problem.ModelUnavailable, calls: 1},
		{name: "length is returned, not retried", def: fakeopenai.Truncated(`{"items":[{"name":"WB`), calls: 1, finish: "length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Queue(tt.queue...)
			if tt.def != nil {
				f.Default(tt.def)
			}
			c, w := newClient(t, f, tt.cfg)

			got, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}})

			if calls := f.Calls(); calls != tt.calls {
				t.Errorf("calls = %d, want %d", calls, tt.calls)
			}
			gotWaits := w.got()
			if len(gotWaits) != tt.nwaits || (tt.waits != nil && fmt.Sprint(gotWaits) != fmt.Sprint(tt.waits)) {
				t.Errorf("waits = %v, want %d of them %v", gotWaits, tt.nwaits, tt.waits)
			}
			if tt.code == "" {
				if err != nil {
					t.Fatalf("err = %v, want a reply", err)
				}
				if got.Tries != tt.calls || got.FinishReason != tt.finish {
					t.Errorf("reply tries %d finish %q, want %d %q", got.Tries, got.FinishReason, tt.calls, tt.finish)
				}
				return
			}
			var pe *problem.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *problem.Error %s", err, err, tt.code)
			}
			if pe.Code != tt.code || pe.RetryAfter != tt.retryAfter {
				t.Errorf("code %s retry-after %v, want %s %v (detail %q)", pe.Code, pe.RetryAfter, tt.code, tt.retryAfter, pe.Detail)
			}
			if len(pe.Detail) > 300 || pe.Detail == "" {
				t.Errorf("detail %q: want a short reason", pe.Detail)
			}
		})
	}
}

func TestCompleteDeadline(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.Slow(time.Minute, fakeopenai.Reply("late")))
	c, w := newClient(t, f, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()

	_, err := c.Complete(ctx, Request{Prompt: "read it", Images: []Image{page}})

	if code := problem.CodeOf(err); code != problem.ModelTimeout {
		t.Fatalf("code = %s (%v), want %s", code, err, problem.ModelTimeout)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
	}
	if f.Calls() != 1 || len(w.got()) != 0 {
		t.Errorf("calls %d waits %v, want 1 call and no wait", f.Calls(), w.got())
	}
}

// TestCompleteRetryAfterPastDeadline: when the upstream's Retry-After ends after the caller's
// deadline, Complete gives up at once instead of sleeping into a timeout.
func TestCompleteRetryAfterPastDeadline(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.RateLimited("30"))
	c, w := newClient(t, f, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	_, err := c.Complete(ctx, Request{Prompt: "read it", Images: []Image{page}})

	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.ModelRateLimited || pe.RetryAfter != 30*time.Second {
		t.Fatalf("err = %v, want model_rate_limited with Retry-After 30s", err)
	}
	if f.Calls() != 1 || len(w.got()) != 0 {
		t.Errorf("calls %d waits %v, want 1 call and no wait", f.Calls(), w.got())
	}
}

// TestCompleteCancel: a caller who goes away cancels the upstream call too, and gets canceled
// back (problem.FromContext), its context error still in the chain.
func TestCompleteCancel(t *testing.T) {
	arrived, gone := make(chan struct{}), make(chan struct{})
	f := fakeopenai.New(t)
	f.Default(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(gone)
	})
	c, _ := newClient(t, f, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived
		cancel()
	}()

	_, err := c.Complete(ctx, Request{Prompt: "read it", Images: []Image{page}})

	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if code := problem.CodeOf(err); code != problem.Canceled {
		t.Errorf("err is %s, want canceled", code)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the fake never saw the request's context end")
	}
	if f.Calls() != 1 {
		t.Errorf("calls = %d, want 1", f.Calls())
	}
}

// TestCompleteNeverLeaksKey: upstreams quote what they were sent; whatever they say, the key
// stays out of every error, its detail and its cause, and the chain no longer holds the
// go-openai error that carried it.
func TestCompleteNeverLeaksKey(t *testing.T) {
	echo := func(code int, asJSON bool) fakeopenai.Answer {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			if asJSON {
				fakeopenai.Error(code, "Incorrect API key provided: "+auth+" ("+strings.TrimPrefix(auth, "Bearer ")+")")(w, r)
				return
			}
			status(code, "<html>denied "+auth+"</html>")(w, r)
		}
	}
	for _, a := range []struct {
		name string
		a    fakeopenai.Answer
	}{
		{"401 JSON", echo(http.StatusUnauthorized, true)},
		{"429 JSON", echo(http.StatusTooManyRequests, true)},
		{"500 JSON", echo(http.StatusInternalServerError, true)},
		{"403 HTML", echo(http.StatusForbidden, false)},
		{"503 HTML", echo(http.StatusServiceUnavailable, false)},
	} {
		t.Run(a.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Default(a.a)
			c, _ := newClient(t, f, Config{APIKey: key})

			_, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}})

			var pe *problem.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *problem.Error", err)
			}
			if pe.Upstream == nil {
				t.Fatalf("no Upstream")
			}
			for _, s := range []string{err.Error(), pe.Detail, fmt.Sprintf("%+v", err), pe.Upstream.Reason} {
				if strings.Contains(s, key) {
					t.Errorf("key leaked: %s", s)
				}
			}
			var apiErr *openai.APIError
			var reqErr *openai.RequestError
			if errors.As(err, &apiErr) || errors.As(err, &reqErr) {
				t.Errorf("the go-openai error, with the upstream's body, is still in the chain")
			}
		})
	}
}

// TestCompleteConcurrentRetryAfter: each call sees its own response's Retry-After, however many
// run at once through one client.
func TestCompleteConcurrentRetryAfter(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(func(w http.ResponseWriter, r *http.Request) {
		var req openai.ChatCompletionRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		parts := req.Messages[0].MultiContent
		fakeopenai.RateLimited(parts[len(parts)-1].Text)(w, r)
	})
	c, _ := newClient(t, f, Config{Tries: 1})

	var wg sync.WaitGroup
	for i := 1; i <= 20; i++ {
		wg.Go(func() {
			_, err := c.Complete(t.Context(), Request{Prompt: strconv.Itoa(i), Images: []Image{page}})
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.RetryAfter != time.Duration(i)*time.Second {
				t.Errorf("call %d: err = %v, want Retry-After %ds", i, err, i)
			}
		})
	}
	wg.Wait()
}

// body is a Body that counts its Closes.
type body struct {
	data   []byte
	closes atomic.Int32
}

func (b *body) Bytes() []byte { return b.data }
func (b *body) Close() error  { b.closes.Add(1); return nil }

// TestCompleteBody: an image handed over is closed once, after its last byte is written, and
// never tried again after that, whatever the failure.
func TestCompleteBody(t *testing.T) {
	tests := []struct {
		answer fakeopenai.Answer
		code   problem.Code
	}{
		{fakeopenai.Reply(`{}`), ""},
		{fakeopenai.ServerError(), problem.ModelUnavailable},
		{fakeopenai.RateLimited("2"), problem.ModelRateLimited},
		{fakeopenai.HangUp(), problem.ModelUnavailable},
	}
	for _, tt := range tests {
		f := fakeopenai.New(t)
		var closedFirst atomic.Bool // closed by the time the fake had read the request
		b := &body{data: []byte("\x89PNG page")}
		f.Default(func(w http.ResponseWriter, r *http.Request) {
			closedFirst.Store(b.closes.Load() == 1)
			tt.answer(w, r)
		})
		c, w := newClient(t, f, Config{Tries: 3})
		_, err := c.Complete(t.Context(), Request{Prompt: "p", Images: []Image{{MIME: "image/png", Body: b}}})
		if b.closes.Load() != 1 || !closedFirst.Load() {
			t.Errorf("want %q: closed %d times, before the answer %v; want once, before", tt.code, b.closes.Load(), closedFirst.Load())
		}
		if (err == nil) != (tt.code == "") || err != nil && problem.CodeOf(err) != tt.code {
			t.Errorf("want %q: got %v", tt.code, err)
		}
		if tt.code != "" && err != nil && !strings.Contains(err.Error(), "not retried") {
			t.Errorf("want %q: the detail does not say why there was no retry: %v", tt.code, err)
		}
		if calls := f.Calls(); calls != 1 || len(w.got()) != 0 {
			t.Errorf("want %q: %d calls, waits %v; want 1 call and no wait", tt.code, calls, w.got())
		}
		if got := f.Requests(); len(got) == 1 && !strings.Contains(string(got[0].Body), base64.StdEncoding.EncodeToString([]byte("\x89PNG page"))) {
			t.Errorf("want %q: the image was not sent", tt.code)
		}
	}
}

// TestCompleteBodyNotYetSent: a failure before the image has gone (a refused connection) is
// retried even for an image handed over, since the bytes are still there.
func TestCompleteBodyNotYetSent(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.Reply(`{}`))
	refused := false
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if !refused {
			refused = true
			return nil, errors.New("dial tcp: connection refused")
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, w := newClient(t, f, Config{Tries: 3, HTTPClient: hc})
	b := &body{data: page.Data}
	if _, err := c.Complete(t.Context(), Request{Prompt: "p", Images: []Image{{MIME: page.MIME, Body: b}}}); err != nil {
		t.Fatal(err)
	}
	if f.Calls() != 1 || len(w.got()) != 1 || b.closes.Load() != 1 {
		t.Errorf("%d calls at the fake, %d waits, closed %d times; want 1, 1 and 1", f.Calls(), len(w.got()), b.closes.Load())
	}
}

// TestCompleteBodyUnsent: an image handed over is closed by the time Complete returns even when
// no try wrote it: the endpoint unreachable, the caller gone before the call.
func TestCompleteBodyUnsent(t *testing.T) {
	f := fakeopenai.New(t)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("dial tcp: connection refused")
	})}
	c, _ := newClient(t, f, Config{Tries: 2, HTTPClient: hc})
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	for _, ctx := range []context.Context{t.Context(), gone} {
		b := &body{data: page.Data}
		if _, err := c.Complete(ctx, Request{Prompt: "p", Images: []Image{{MIME: page.MIME, Body: b}}}); err == nil {
			t.Fatal("a call that cannot reach the endpoint succeeded")
		}
		if b.closes.Load() != 1 {
			t.Errorf("ctx err %v: closed %d times, want 1", ctx.Err(), b.closes.Load())
		}
	}
	if f.Calls() != 0 {
		t.Errorf("%d calls reached the fake", f.Calls())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCompleteLent: an image lent (Data) is the caller's: every try sends it again.
func TestCompleteLent(t *testing.T) {
	f := fakeopenai.New(t)
	f.Queue(fakeopenai.ServerError(), fakeopenai.ServerError())
	c, _ := newClient(t, f, Config{Tries: 3})
	req := Request{Prompt: "p", Images: []Image{page, page}}
	if _, err := c.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	want := base64.StdEncoding.EncodeToString(page.Data)
	for i, r := range f.Requests() {
		if strings.Count(string(r.Body), want) != 2 {
			t.Errorf("try %d did not carry both images", i+1)
		}
	}
	if f.Calls() != 3 || req.Images[0].Data == nil {
		t.Errorf("%d calls, want 3, and the caller's image kept", f.Calls())
	}
}

// TestIdleConns: connections are kept for the next calls, not only two of them as Go's default
// transport does, so a busy service does not dial (and handshake TLS) for nearly every call.
func TestIdleConns(t *testing.T) {
	const n = 8
	f := fakeopenai.New(t)
	c, _ := newClient(t, f, Config{})
	for round := range 3 {
		// Every call of a round waits for the round's others, so the round needs n connections.
		var mu sync.Mutex
		arrived, all := 0, make(chan struct{})
		f.Default(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if arrived++; arrived == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				fakeopenai.Reply(`{}`)(w, r)
			case <-r.Context().Done():
			}
		})
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := c.Complete(t.Context(), Request{Prompt: "p", Images: []Image{page}}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := f.Conns(); got != n {
			t.Fatalf("after round %d: %d connections opened, want the first round's %d reused", round+1, got, n)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no model", Config{}},
		{"unknown mode", Config{Model: "m", OutputMode: "xml"}},
		{"json_schema without schema", Config{Model: "m", OutputMode: ModeJSONSchema}},
		{"json_schema with a non-object", Config{Model: "m", OutputMode: ModeJSONSchema, Schema: json.RawMessage(`[1]`)}},
		{"temperature too high", Config{Model: "m", Temperature: 2.5}},
		{"negative temperature", Config{Model: "m", Temperature: -1}},
		{"negative tries", Config{Model: "m", Tries: -1}},
		{"negative max tokens", Config{Model: "m", MaxTokens: -1}},
		{"negative idle connections", Config{Model: "m", IdleConns: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if code := problem.CodeOf(err); code != problem.ModelNotConfigured {
				t.Errorf("New(%+v) = %v, want %s", tt.cfg, err, problem.ModelNotConfigured)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"zero", map[string]string{"Retry-After": "0"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
		{"nonsense", map[string]string{"Retry-After": "soon"}, 0},
		{"absurd", map[string]string{"Retry-After": "99999999999999"}, 24 * time.Hour},
		{"beyond int64", map[string]string{"Retry-After": "99999999999999999999999"}, 24 * time.Hour}, // hours: capped, not nonsense
		{"beyond int64, negative", map[string]string{"Retry-After": "-99999999999999999999999"}, 0},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"HTTP date past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"retry-after-ms first", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, 1500 * time.Millisecond},
		{"retry-after-ms nonsense", map[string]string{"Retry-After-Ms": "x", "Retry-After": "2"}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hint{header: http.Header{}}
			for k, v := range tt.header {
				h.header.Set(k, v)
			}
			if got := h.retryAfter(now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	for try := 1; try <= 70; try++ {
		d := min(backoffBase<<min(try-1, 8), backoffMax)
		if got := backoff(try); got < d/2 || got >= d {
			t.Errorf("backoff(%d) = %v, want in [%v, %v)", try, got, d/2, d)
		}
	}
}
