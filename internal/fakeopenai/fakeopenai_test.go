package fakeopenai_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

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
