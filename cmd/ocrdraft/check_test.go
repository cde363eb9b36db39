package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

// TestCheck: ocrdraft check says, one line each, whether the endpoint is reachable, the key
// accepted and the model known, and exits 1 when one is not.
func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeopenai.Server)
		env   map[string]string // beside the fake's URL, key sk-test and model test-vl
		want  []string
		fails bool
	}{
		{name: "all good", setup: func(f *fakeopenai.Server) { f.Models("test-vl") },
			want: []string{"ok   reachable", "ok   key accepted", "ok   model known", "endpoint http://127.0.0.1"}},
		{name: "wrong key", setup: func(f *fakeopenai.Server) { f.Models("test-vl"); f.RequireKey("sk-other") },
			want: []string{"ok   reachable", "FAIL key accepted"}, fails: true},
		{name: "unknown model", setup: func(f *fakeopenai.Server) { f.Models("gpt-4o") },
			want: []string{"ok   key accepted", "FAIL model known"}, fails: true},
		{name: "no model", env: map[string]string{"OCR_MODEL": ""}, want: []string{"FAIL model configured"}, fails: true},
		{name: "second read's model known", setup: func(f *fakeopenai.Server) { f.Models("test-vl", "qwen-vl") }, env: map[string]string{"OCR_VERIFY_MODEL": "qwen-vl"},
			want: []string{"ok   model known", "second read: endpoint http://127.0.0.1", ", model qwen-vl", "ok   second read: model known"}},
		{name: "second read's model unknown", setup: func(f *fakeopenai.Server) { f.Models("test-vl") }, env: map[string]string{"OCR_VERIFY_MODEL": "qwen-vI"},
			want: []string{"ok   model known", "FAIL second read: model known"}, fails: true},
		{name: "second read's endpoint unreachable", setup: func(f *fakeopenai.Server) { f.Models("test-vl") }, env: map[string]string{"OCR_VERIFY_BASE_URL": "http://127.0.0.1:1/v1"},
			want: []string{"ok   model known", "FAIL second read: reachable"}, fails: true},
		{name: "base URL naming the route", env: map[string]string{"OCR_MODEL_BASE_URL": "http://127.0.0.1:1/v1/chat/completions"},
			want: []string{"FAIL configuration", "without /chat/completions"}, fails: true},
		{name: "nothing listening", env: map[string]string{"OCR_MODEL_BASE_URL": "http://127.0.0.1:1/v1"},
			want: []string{"FAIL reachable", "connection refused"}, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			env := map[string]string{"OCR_MODEL_BASE_URL": f.URL, "OCR_MODEL_API_KEY": "sk-test", "OCR_MODEL": "test-vl"}
			for k, v := range tt.env {
				env[k] = v
			}
			var out, errb bytes.Buffer
			err := runCheck(t.Context(), nil, func(k string) string { return env[k] }, &out, &errb)
			if tt.fails != errors.Is(err, errFailed) || !tt.fails && err != nil {
				t.Errorf("err = %v, want failed=%v", err, tt.fails)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String()+errb.String(), "sk-test") {
				t.Errorf("the key was printed:\n%s", out.String())
			}
		})
	}
	var errb bytes.Buffer
	if err := runCheck(t.Context(), []string{"extra"}, func(string) string { return "" }, &bytes.Buffer{}, &errb); !errors.Is(err, errUsage) {
		t.Errorf("a stray argument: err = %v, want a usage error", err)
	}
}

// TestStartLogVerify: the start log says the second reads' mode, endpoint and model, and the
// box convention, when they are on.
func TestStartLogVerify(t *testing.T) {
	log := new(syncBuffer)
	_, stop := servingArgs(t, map[string]string{"OCR_MODEL": "gpt-4o-mini", "OCR_MODEL_API_KEY": "sk-x", "OCR_LISTEN_ADDR": "127.0.0.1:0",
		"OCR_VERIFY": "flagged", "OCR_VERIFY_BASE_URL": "http://qwen.internal:8000/v1", "OCR_VERIFY_MODEL": "qwen-vl", "OCR_MODEL_BOXES": "gemini"}, nil, log)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"verify":"flagged","endpoint":"http://qwen.internal:8000","model":"qwen-vl"`, `"boxes":"gemini"`} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("start log lacks %s:\n%s", w, log.String())
		}
	}
}

// TestStartLogNamesEndpoint: the start log names the model endpoint (scheme and host only) and
// warns when OpenAI's own endpoint is configured without a key.
func TestStartLogNamesEndpoint(t *testing.T) {
	log := new(syncBuffer)
	_, stop := servingArgs(t, map[string]string{"OCR_MODEL": "gpt-4o-mini", "OCR_LISTEN_ADDR": "127.0.0.1:0"}, nil, log)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"endpoint":"https://api.openai.com"`, "OCR_MODEL_API_KEY is not set"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("start log lacks %s:\n%s", w, log.String())
		}
	}
}
