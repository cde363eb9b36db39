package vision

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

// TestCheck runs `ocrdraft check`'s three questions against each way an endpoint can be wrong.
// want holds, per result, "ok" or "fail" and a part of its message.
func TestCheck(t *testing.T) {
	const model = "qwen-vl-max"
	tests := []struct {
		name   string
		key    string // the client's; "-" for none
		setup  func(f *fakeopenai.Server)
		want   [3]string
		models int // requests to /models
		chats  int // chat completions
	}{
		{"all good", "", func(f *fakeopenai.Server) { f.Models("gpt-4o", model) },
			[3]string{"ok answered at http://127.0.0.1", "ok accepted", `ok "qwen-vl-max" is listed`}, 1, 0},
		{"Ollama's implicit tag", "", func(f *fakeopenai.Server) { f.Models("llava:7b", model+":latest") },
			[3]string{"ok", "ok", `ok "qwen-vl-max" is listed`}, 1, 0},
		{"an empty list: the probe decides", "", func(f *fakeopenai.Server) { f.Models() },
			[3]string{"ok", "ok", `ok "qwen-vl-max" answered a one-token chat completion`}, 1, 1},
		{"no key, none wanted", "-", func(f *fakeopenai.Server) { f.Models(model) },
			[3]string{"ok", "ok no key sent, and none asked for", "ok"}, 1, 0},
		{"unknown model", "", func(f *fakeopenai.Server) { f.Models("gpt-4o", "o3") },
			[3]string{"ok", "ok", `fail "qwen-vl-max" is not among the endpoint's 2 models (such as gpt-4o, o3): set OCR_MODEL`}, 1, 0},
		{"wrong key", "", func(f *fakeopenai.Server) { f.RequireKey("sk-other") },
			[3]string{"ok", "fail the endpoint refused the key (401 Incorrect API key provided.): check OCR_MODEL_API_KEY", "fail not checked: the key was refused"}, 0, 0},
		{"key wanted", "-", func(f *fakeopenai.Server) { f.RequireKey("sk-other") },
			[3]string{"ok", "fail the endpoint wants a key (401", "fail not checked"}, 0, 0},
		{"no /models: a one-token probe", "", func(f *fakeopenai.Server) { f.ModelsAnswer(fakeopenai.NoRoute()) },
			[3]string{"ok", "ok accepted", `ok "qwen-vl-max" answered a one-token chat completion`}, 1, 1},
		{"/models fails: the probe decides", "", func(f *fakeopenai.Server) { f.ModelsAnswer(fakeopenai.ServerError()) },
			[3]string{"ok", "ok", "ok"}, 1, 1},
		{"no /models, and the probe meets an unknown model", "", func(f *fakeopenai.Server) {
			f.ModelsAnswer(fakeopenai.NoRoute())
			f.Default(fakeopenai.Raw(http.StatusNotFound, `{"error":{"message":"model 'qwen-vl-max' not found","type":"invalid_request_error","param":null,"code":null}}`))
		}, [3]string{"ok", "ok", `fail the endpoint does not know "qwen-vl-max" (404 model 'qwen-vl-max' not found): set OCR_MODEL`}, 1, 1},
		{"nothing serves chat completions", "", func(f *fakeopenai.Server) {
			f.ModelsAnswer(fakeopenai.NoRoute())
			f.Default(fakeopenai.NoRoute())
		}, [3]string{"ok", "fail not checked", "fail nothing serves chat completions at http://127.0.0.1"}, 1, 1},
		{"/models hangs up", "", func(f *fakeopenai.Server) { f.ModelsAnswer(fakeopenai.HangUp()) },
			[3]string{"fail the endpoint closed the connection without an answer; check OCR_MODEL_BASE_URL", "fail not checked: the endpoint is not reachable", "fail not checked"}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			k := key
			if tt.key == "-" {
				k = ""
			}
			c, err := New(Config{BaseURL: f.URL, Model: model, APIKey: k})
			if err != nil {
				t.Fatal(err)
			}

			got := c.Check(t.Context())

			checkResults(t, got, tt.want)
			if f.ModelsCalls() != tt.models || f.Calls() != tt.chats {
				t.Errorf("%d /models and %d chat requests, want %d and %d", f.ModelsCalls(), f.Calls(), tt.models, tt.chats)
			}
			for _, r := range f.Requests() {
				if r.Chat.MaxTokens != 1 || len(r.Chat.Messages) != 1 || r.Chat.Messages[0].MultiContent != nil || strings.Contains(string(r.Body), "image") {
					t.Errorf("the probe sent %s, want one text message and max_tokens 1", r.Body)
				}
			}
		})
	}
}

// TestCheckUnreachable: a connection that fails says which way, and the other two are not tried.
func TestCheckUnreachable(t *testing.T) {
	for _, tt := range connCases {
		t.Run(tt.name, func(t *testing.T) {
			base, hc, f := tt.setup(t)
			c, err := New(Config{BaseURL: base, Model: "m", APIKey: key, HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			got := c.Check(t.Context())
			checkResults(t, got, [3]string{"fail " + Endpoint(base) + ": " + tt.kind, "fail not checked: the endpoint is not reachable", "fail not checked"})
			if f != nil && f.Calls()+f.ModelsCalls() != 0 {
				t.Errorf("the fake answered")
			}
		})
	}
}

func checkResults(t *testing.T, got []CheckResult, want [3]string) {
	t.Helper()
	names := []string{CheckReachable, CheckKey, CheckModel}
	if len(got) != 3 {
		t.Fatalf("got %d results, want 3: %+v", len(got), got)
	}
	for i, r := range got {
		ok, msg, _ := strings.Cut(want[i]+" ", " ")
		msg = strings.TrimSpace(msg)
		if r.Name != names[i] || r.OK != (ok == "ok") || !strings.Contains(r.Message, msg) {
			t.Errorf("result %d = %+v, want %s %s …%q…", i, r, names[i], ok, msg)
		}
		if strings.Contains(r.Message, key) || strings.Contains(r.Message, "\n") {
			t.Errorf("result %d message %q holds the key or a newline", i, r.Message)
		}
	}
}
