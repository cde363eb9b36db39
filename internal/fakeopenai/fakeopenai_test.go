package fakeopenai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestServer(t *testing.T) {
	f := fakeopenai.New(t)
	f.Queue(fakeopenai.ServerError(), fakeopenai.Reply("first"))
	f.Default(fakeopenai.Reply("always"))
	base := strings.TrimSuffix(f.URL, "/v1")

	tests := []struct {
		url        string
		wantStatus int
		wantBody   string
	}{
		{f.URL + "/chat/completions", 500, `"type":"server_error"`},
		{base + "/chat/completions", 200, `"content":"first"`}, // no /v1 works too
		{f.URL + "/chat/completions", 200, `"content":"always"`},
		{f.URL + "/chat/completions", 200, `"model":"m1"`}, // the request's model, echoed
		{f.URL + "/embeddings", 404, `no such route`},
	}
	for i, tt := range tests {
		status, body := post(t, tt.url, `{"model":"m1","temperature":0.01,"messages":[{"role":"user","content":"hi"}]}`)
		if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
			t.Errorf("#%d: got %d %s, want %d containing %s", i, status, body, tt.wantStatus, tt.wantBody)
		}
	}

	reqs := f.Requests()
	if len(reqs) != 4 || f.Calls() != 4 {
		t.Fatalf("recorded %d requests (Calls %d), want 4: the 404 is not a chat completion", len(reqs), f.Calls())
	}
	r := reqs[0]
	if r.Chat.Model != "m1" || string(r.Fields["temperature"]) != "0.01" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("recorded %+v", r)
	}
	if _, sent := r.Fields["max_tokens"]; sent {
		t.Errorf("Fields has max_tokens, which was not sent")
	}
}

// TestBigAnswers: the answers made as they are written are what they say when read whole.
func TestBigAnswers(t *testing.T) {
	tests := []struct {
		name    string
		answer  fakeopenai.Answer
		status  int
		content int // bytes of content, for a 200
	}{
		{"huge", fakeopenai.Huge(http.StatusOK, 100<<10), 200, 128 << 10}, // rounded up to 32 KiB
		{"huge error", fakeopenai.Huge(http.StatusBadGateway, 1), 502, 0},
		{"gzip bomb", fakeopenai.GzipBomb(3 << 20), 200, 3 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Default(tt.answer)
			status, body := post(t, f.URL+"/chat/completions", `{"model":"m1"}`) // the transport unpacks gzip
			var c openai.ChatCompletionResponse
			if status != tt.status || json.Unmarshal([]byte(body), &c) != nil && tt.status == 200 {
				t.Fatalf("status %d, body %.80s", status, body)
			}
			if tt.status == 200 && (len(c.Choices) != 1 || len(c.Choices[0].Message.Content) != tt.content || c.Model != "m1") {
				t.Errorf("content %d bytes, model %q", len(c.Choices[0].Message.Content), c.Model)
			}
			if tt.status != 200 && !strings.Contains(body, `"error"`) {
				t.Errorf("body %.80s", body)
			}
			if f.Written() == 0 {
				t.Error("Written is 0")
			}
		})
	}
}

func TestRawPartsRefusal(t *testing.T) {
	f := fakeopenai.New(t)
	f.Queue(fakeopenai.Raw(http.StatusTeapot, `{"x":1}`),
		fakeopenai.Complete(fakeopenai.Response{Parts: []string{"a", "b"}, Refusal: "no"}))
	if status, body := post(t, f.URL+"/chat/completions", `{}`); status != http.StatusTeapot || body != `{"x":1}` {
		t.Errorf("raw: %d %s", status, body)
	}
	_, body := post(t, f.URL+"/chat/completions", `{}`)
	if !strings.Contains(body, `"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]`) || !strings.Contains(body, `"refusal":"no"`) {
		t.Errorf("parts and refusal: %s", body)
	}
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestModels(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(f *fakeopenai.Server)
		path, key  string
		wantStatus int
		wantBody   string
	}{
		{"default list", nil, "/models", "", 200, `"id":"fake-model"`},
		{"set list", func(f *fakeopenai.Server) { f.Models("a", "b") }, "/models", "", 200, `"data":[{"id":"a","object":"model"`},
		{"one known", func(f *fakeopenai.Server) { f.Models("a/b:1") }, "/models/a/b:1", "", 200, `"id":"a/b:1"`},
		{"one unknown", nil, "/models/nope", "", 404, `"code":"model_not_found"`},
		{"no such routes", func(f *fakeopenai.Server) { f.ModelsAnswer(fakeopenai.NoRoute()) }, "/models", "", 404, "404 page not found"},
		{"key wanted", func(f *fakeopenai.Server) { f.RequireKey("k") }, "/models", "", 401, "Incorrect API key"},
		{"key wrong", func(f *fakeopenai.Server) { f.RequireKey("k") }, "/models", "x", 401, "Incorrect API key"},
		{"key right", func(f *fakeopenai.Server) { f.RequireKey("k") }, "/models", "k", 200, `"fake-model"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			status, body := get(t, f.URL+tt.path, tt.key)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s = %d %s, want %d with %s", tt.path, status, body, tt.wantStatus, tt.wantBody)
			}
			if f.ModelsCalls() != 1 && tt.wantStatus != 401 {
				t.Errorf("ModelsCalls = %d, want 1", f.ModelsCalls())
			}
		})
	}
}

func TestRequireKeyChat(t *testing.T) {
	f := fakeopenai.New(t)
	f.RequireKey("k")
	if status, _ := post(t, f.URL+"/chat/completions", `{"model":"m"}`); status != 401 {
		t.Errorf("chat without the key = %d, want 401", status)
	}
	if f.Calls() != 0 {
		t.Errorf("a refused call was counted")
	}
}

// TestInMemory: in a synctest bubble, the in-memory fake answers its client, a Slow answer
// takes the bubble's time and none of the machine's, and a hang-up reaches the client as one.
func TestInMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeopenai.NewInMemory(t)
		f.Queue(fakeopenai.Slow(time.Minute, fakeopenai.Reply("late")), fakeopenai.HangUp())
		c := f.Client()
		post := func() (string, error) {
			res, err := c.Post(f.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m1"}`))
			if err != nil {
				return "", err
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			return string(b), err
		}
		start := time.Now()
		body, err := post()
		if err != nil || !strings.Contains(body, `"content":"late"`) {
			t.Fatalf("got %q, %v", body, err)
		}
		if took := time.Since(start); took != time.Minute {
			t.Errorf("a minute's Slow answer took %v of the bubble's time", took)
		}
		if _, err := post(); err == nil {
			t.Error("a hang-up answered")
		}
		if f.Calls() != 2 {
			t.Errorf("%d calls, want 2", f.Calls())
		}
		c.CloseIdleConnections()
	})
}

// TestRoute: requests go to the first route that matches, each route's answers in order and its
// last again; the rest to the queue and the default.
func TestRoute(t *testing.T) {
	f := fakeopenai.New(t)
	f.Route(fakeopenai.Both(fakeopenai.ForModel("b"), fakeopenai.Asking("second")), fakeopenai.Reply(`"b2"`))
	f.Route(fakeopenai.ForModel("b"), fakeopenai.Reply(`"b1"`), fakeopenai.Reply(`"b1 again"`))
	f.Queue(fakeopenai.Reply(`"queued"`))
	f.Default(fakeopenai.Reply(`"default"`))
	ask := func(model, text string) string {
		c := openai.NewClientWithConfig(func() openai.ClientConfig {
			cfg := openai.DefaultConfig("k")
			cfg.BaseURL, cfg.HTTPClient = f.URL, f.Client()
			return cfg
		}())
		r, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{Model: model,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Choices[0].Message.Content
	}
	for _, tt := range [][3]string{
		{"b", "first", `"b1"`}, {"a", "first", `"queued"`}, {"b", "the second read", `"b2"`},
		{"b", "first", `"b1 again"`}, {"b", "first", `"b1 again"`}, {"a", "second", `"default"`},
	} {
		if got := ask(tt[0], tt[1]); got != tt[2] {
			t.Errorf("%s %q: got %s, want %s", tt[0], tt[1], got, tt[2])
		}
	}
}
