package vision

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
)

// reading counts the body bytes the client takes off the wire.
type reading struct {
	n  atomic.Int64
	rt http.RoundTripper
}

func (c *reading) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := c.rt.RoundTrip(r)
	if res != nil {
		res.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(res.Body, writerFunc(func(p []byte) { c.n.Add(int64(len(p))) })), res.Body}
	}
	return res, err
}

type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

// TestCompleteBoundsAnswer: an answer without end, of 100 MB, or a gzip bomb costs at most the
// cap, counted in bytes taken off the wire and written by the fake, never the whole body.
func TestCompleteBoundsAnswer(t *testing.T) {
	const limit = 1 << 20
	const most = 32 << 20 // what the fake may have written: the cap plus the connection's buffers
	tests := []struct {
		name   string
		answer fakeopenai.Answer
		code   problem.Code
		reason string // in the detail
		read   int64  // most bytes the client may take off the wire
	}{
		{"100 MB completion", fakeopenai.Huge(http.StatusOK, 100<<20), problem.ModelUnavailable, "larger than 1 MiB", limit + 1},
		{"endless completion", fakeopenai.Endless(http.StatusOK), problem.ModelUnavailable, "larger than 1 MiB", limit + 1},
		{"gzip bomb of 4 GiB", fakeopenai.GzipBomb(4 << 30), problem.ModelUnavailable, "larger than 1 MiB", 64 << 10},
		{"100 MB error is cut and keeps its status", fakeopenai.Huge(http.StatusInternalServerError, 100<<20), problem.ModelUnavailable, "): 500", maxErrorBody},
		{"endless 429 keeps its status", fakeopenai.Endless(http.StatusTooManyRequests), problem.ModelRateLimited, "): 429", maxErrorBody},
		{"endless 400 keeps its status", fakeopenai.Endless(http.StatusBadRequest), problem.ModelRejected, "): 400", maxErrorBody},
		{"declared 100 MB is refused unread", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "104857600")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"id":`))
		}, problem.ModelUnavailable, "larger than 1 MiB", 0},
		{"gzip that is not", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, `{"id":"x"}`)
		}, problem.ModelUnavailable, "not a chat completion", 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Default(tt.answer)
			rd := &reading{rt: http.DefaultTransport.(*http.Transport).Clone()}
			c, _ := newClient(t, f, Config{Tries: 1, MaxReplyBytes: limit, HTTPClient: &http.Client{Transport: rd}})

			_, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}})

			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != tt.code || !strings.Contains(pe.Detail, tt.reason) {
				t.Fatalf("err = %v, want %s with %q", err, tt.code, tt.reason)
			}
			if len(pe.Detail) > 300 {
				t.Errorf("detail is %d bytes", len(pe.Detail))
			}
			if n := rd.n.Load(); n > tt.read {
				t.Errorf("client read %d bytes, want at most %d", n, tt.read)
			}
			if n := f.Written(); n > most {
				t.Errorf("fake wrote %d bytes, want at most %d", n, most)
			}
		})
	}
}

// TestCompleteGzip: a gzip answer within the cap is read as the transport would have read it.
func TestCompleteGzip(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding = %q, want gzip", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, `{"model":"m","choices":[{"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}]}`)
		zw.Close()
	})
	c, _ := newClient(t, f, Config{})
	got, err := c.Complete(t.Context(), Request{Prompt: "read it"})
	if err != nil || got.Text != "{}" {
		t.Fatalf("got %+v, %v; want text {}", got, err)
	}
}

// TestBoundUnpacked reads a gzip bomb through the doer's bound and counts what comes out.
func TestBoundUnpacked(t *testing.T) {
	var wire bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&wire, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte("a"), 64<<20)) // 64 MiB in about 64 KB
	zw.Close()
	for _, ok := range []bool{true, false} {
		res := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(bytes.NewReader(wire.Bytes()))}
		var keep []byte
		body := doer{max: 1 << 20}.bound(res, ok, &keep)
		n, err := io.Copy(io.Discard, body)
		var big *tooLarge
		switch {
		case ok && (!errors.As(err, &big) || n != 0):
			// A completion is read whole (its counts read leniently) before it is passed on.
			t.Errorf("completion: read %d, %v; want nothing and tooLarge", n, err)
		case !ok && (err != nil || n != maxErrorBody):
			t.Errorf("error body: read %d, %v; want %d and no error", n, err, maxErrorBody)
		}
	}
}

// TestCompleteReply: what the upstream says about the reply is checked before it is passed on.
func TestCompleteReply(t *testing.T) {
	completion := func(model, finish, message, usage string) string {
		return `{"id":"x","object":"chat.completion","model":` + model + `,"choices":[{"index":0,"finish_reason":` + finish +
			`,"message":` + message + `}],"usage":` + usage + `}`
	}
	msg := `{"role":"assistant","content":"{}"}`
	usage := `{"prompt_tokens":10,"completion_tokens":5}`
	long := strings.Repeat("m", 1<<20)
	tests := []struct {
		name string
		body string
		want Reply
	}{
		{"plain", completion(`"gpt-4o"`, `"stop"`, msg, usage),
			Reply{Text: "{}", FinishReason: "stop", Model: "gpt-4o", PromptTokens: 10, CompletionTokens: 5}},
		{"negative usage is 0", completion(`"gpt-4o"`, `"stop"`, msg, `{"prompt_tokens":-5,"completion_tokens":-9223372036854775808}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "gpt-4o"}},
		{"huge usage is capped", completion(`"gpt-4o"`, `"stop"`, msg, `{"prompt_tokens":9223372036854775807,"completion_tokens":4611686018427387904}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "gpt-4o", PromptTokens: MaxTokens, CompletionTokens: MaxTokens}},
		// Counts are only counts: a number of any form is read as one, anything else ignored,
		// and the reply goes on whatever they say.
		{"integral float counts", completion(`"m"`, `"stop"`, msg, `{"prompt_tokens":1289.0,"completion_tokens":17.0,"total_tokens":1306.0}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 1289, CompletionTokens: 17}},
		{"exponents", completion(`"m"`, `"stop"`, msg, `{"prompt_tokens":1e3,"completion_tokens":2.5E1}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 1000, CompletionTokens: 25}},
		{"beyond int64 and float64", completion(`"m"`, `"stop"`, msg, `{"prompt_tokens":99999999999999999999999,"completion_tokens":1e400,"total_tokens":-1e400}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: MaxTokens, CompletionTokens: MaxTokens}},
		{"a fraction is its integer part", completion(`"m"`, `"stop"`, msg, `{"prompt_tokens":12.9,"completion_tokens":-0.5}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 12}},
		{"counts that are no numbers are ignored", completion(`"m"`, `"stop"`, msg, `{"prompt_tokens":"12","completion_tokens":true,"total_tokens":{"n":1}}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "m"}},
		{"odd details", completion(`"m"`, `"stop"`, msg, `{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1e2},"completion_tokens_details":"n/a"}`),
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"usage that is no object", completion(`"m"`, `"stop"`, msg, `"lots"`),
			Reply{Text: "{}", FinishReason: "stop", Model: "m"}},
		{"float stamp and index", `{"id":"x","object":"chat.completion","created":1.7e9,"model":"m","choices":[{"index":0.0,"finish_reason":"stop","message":` + msg + `}],"usage":` + usage + `}`,
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"stamp that is no number", `{"id":"x","object":"chat.completion","created":"today","model":"m","choices":[{"index":"first","finish_reason":"stop","message":` + msg + `}],"usage":` + usage + `}`,
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"a path-like model name is kept", completion(`"Qwen/Qwen2.5-VL-7B-Instruct"`, `"stop"`, msg, usage),
			Reply{Text: "{}", FinishReason: "stop", Model: "Qwen/Qwen2.5-VL-7B-Instruct", PromptTokens: 10, CompletionTokens: 5}},
		{"a 1 MB model name is the configured one", completion(`"`+long+`"`, `"stop"`, msg, usage),
			Reply{Text: "{}", FinishReason: "stop", Model: "qwen-vl-max", PromptTokens: 10, CompletionTokens: 5}},
		{"an echoed report as model name is the configured one", completion(`"WBC 5.2\n{\"name\":\"Zhang San\"}"`, `"stop"`, msg, usage),
			Reply{Text: "{}", FinishReason: "stop", Model: "qwen-vl-max", PromptTokens: 10, CompletionTokens: 5}},
		{"no model is the configured one", completion(`""`, `"stop"`, msg, usage),
			Reply{Text: "{}", FinishReason: "stop", Model: "qwen-vl-max", PromptTokens: 10, CompletionTokens: 5}},
		{"empty finish reason is stop", completion(`"m"`, `""`, msg, usage),
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"null finish reason is stop", completion(`"m"`, `null`, msg, usage),
			Reply{Text: "{}", FinishReason: "stop", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"content_filter is passed on", completion(`"m"`, `"content_filter"`, msg, usage),
			Reply{Text: "{}", FinishReason: "content_filter", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"a finish reason that is not a word is unknown", completion(`"m"`, `"stop\nINFO fake log line"`, msg, usage),
			Reply{Text: "{}", FinishReason: "unknown", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"content as parts is their text", completion(`"m"`, `"stop"`,
			`{"role":"assistant","content":[{"type":"text","text":"{\"items\":"},{"type":"text","text":"[]}"}]}`, usage),
			Reply{Text: `{"items":[]}`, FinishReason: "stop", Model: "m", PromptTokens: 10, CompletionTokens: 5}},
		{"a refusal is passed on, escaped", completion(`"m"`, `"stop"`,
			`{"role":"assistant","content":null,"refusal":"I can't help\n\u001b[31mwith that.\u202e"}`, usage),
			Reply{FinishReason: "stop", Refusal: `I can't help \u001b[31mwith that.\u202e`, Model: "m", PromptTokens: 10, CompletionTokens: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Default(fakeopenai.Raw(http.StatusOK, tt.body))
			c, _ := newClient(t, f, Config{})
			got, err := c.Complete(t.Context(), Request{Prompt: "read it"})
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			tt.want.Tries = 1
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestCompleteLongRefusal: a refusal is quoted at most maxReason bytes.
func TestCompleteLongRefusal(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.Complete(fakeopenai.Response{Refusal: strings.Repeat("no ", 100000)}))
	c, _ := newClient(t, f, Config{})
	got, err := c.Complete(t.Context(), Request{Prompt: "read it"})
	if err != nil || len(got.Refusal) > maxReason+len("…") || !strings.HasPrefix(got.Refusal, "no no") {
		t.Fatalf("refusal %d bytes, %v", len(got.Refusal), err)
	}
}

// TestReaskPreviousCut: a re-ask sends back at most MaxPrevious bytes of the earlier reply.
func TestReaskPreviousCut(t *testing.T) {
	f := fakeopenai.New(t)
	c, _ := newClient(t, f, Config{})
	prev := strings.Repeat("é", MaxPrevious) // two bytes each: the cut must fall between runes
	if _, err := c.Complete(t.Context(), Request{Prompt: "read it", Previous: prev, Retry: "JSON only"}); err != nil {
		t.Fatal(err)
	}
	msgs := f.Requests()[0].Chat.Messages
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3", len(msgs))
	}
	if got := msgs[1].Content; len(got) > MaxPrevious || len(got) < MaxPrevious-1 || !strings.HasPrefix(prev, got) {
		t.Errorf("previous sent as %d bytes, want %d at most, a prefix of the reply", len(got), MaxPrevious)
	}
}

// TestCompleteClosePanics: a panic in a Body's Close, which runs on the transport's goroutine
// where no recover of the caller's reaches, is internal_error with the panic and its stack as
// the cause.
func TestCompleteClosePanics(t *testing.T) {
	f := fakeopenai.New(t)
	c, _ := newClient(t, f, Config{})
	_, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{{MIME: page.MIME, Body: panicky(page.Data)}}})
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.Internal {
		t.Fatalf("err = %v, want internal_error", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "boom") || !strings.Contains(msg, "goroutine") {
		t.Errorf("err = %q, want the panic value and its stack", msg)
	}
}

type panicky []byte

func (p panicky) Bytes() []byte { return p }
func (panicky) Close() error    { panic("boom") }

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"plain words", 100, "plain words"},
		{"new\nlines\r\nand\ttabs", 100, "new lines and tabs"},
		{"esc \x1b[2J and nul \x00", 100, `esc \u001b[2J and nul \u0000`},
		{"bidi \u202eevil", 100, `bidi \u202eevil`},
		{"bad utf-8 \xff\xfe", 100, `bad utf-8 \xff\xfe`},
		{"中文 stays", 100, "中文 stays"},
		{strings.Repeat("x", 300), 20, strings.Repeat("x", 20) + "…"},
		{strings.Repeat("中", 300), 20, strings.Repeat("中", 6) + "…"},
		{strings.Repeat("x", 10<<20), 20, strings.Repeat("x", 20) + "…"},
	}
	for _, tt := range tests {
		if got := clip(tt.in, tt.n); got != tt.want {
			t.Errorf("clip(%.40q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestCompleteTrickle: an answer that never ends but comes too slowly to reach the cap is
// stopped by the attempt timeout.
func TestCompleteTrickle(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.Trickle(time.Millisecond))
	c, _ := newClient(t, f, Config{Tries: 1, AttemptTimeout: 50 * time.Millisecond})
	_, err := c.Complete(t.Context(), Request{Prompt: "read it"})
	if code := problem.CodeOf(err); code != problem.ModelTimeout {
		t.Fatalf("err = %v, want %s", err, problem.ModelTimeout)
	}
}

// TestCompleteHugeHeader: the default transport reads at most maxHeaderBytes of headers.
func TestCompleteHugeHeader(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(func(w http.ResponseWriter, r *http.Request) {
		for i := range 64 {
			w.Header().Set(fmt.Sprintf("X-Junk-%d", i), strings.Repeat("j", 16<<10))
		}
		fakeopenai.Reply("{}")(w, r)
	})
	c, _ := newClient(t, f, Config{Tries: 1})
	_, err := c.Complete(t.Context(), Request{Prompt: "read it"})
	if code := problem.CodeOf(err); code != problem.ModelUnavailable {
		t.Fatalf("err = %v, want %s", err, problem.ModelUnavailable)
	}
}

// FuzzClip: whatever the upstream writes, a clipped quote is valid UTF-8 on one line, with no
// control or format character, and at most n bytes and an ellipsis.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb", "\x1b[31m", "\xff", "\u202e", strings.Repeat("中", 100)} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n%500 + 1
		if n <= 0 {
			n += 500
		}
		got := clip(s, n)
		if !utf8.ValidString(got) || len(got) > n+len("…") {
			t.Fatalf("clip(%q, %d) = %q", s, n, got)
		}
		for _, r := range got {
			if unicode.In(r, unicode.Cc, unicode.Cf) {
				t.Fatalf("clip(%q, %d) = %q holds %U", s, n, got, r)
			}
		}
	})
}
