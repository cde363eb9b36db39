package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/doctable"
)

func TestLoadConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	load := func(m map[string]string, args ...string) (config, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return loadConfig(cmdServe, fs, args, env(m))
	}

	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ListenAddr != ":8080" || c.OutputMode != "prompt" || c.MaxAttempts != 2 || c.RequestTimeout != 120*time.Second || c.MaxTokens != 4096 || c.MaxPages != 10 {
		t.Errorf("defaults = %+v", c)
	}

	c, err = load(map[string]string{"OPENAI_API_KEY": "k1", "OPENAI_BASE_URL": "http://b", "OCR_MODEL": "m", "OCR_MAX_PAGES": "3"}, "-max-pages", "5")
	if err != nil {
		t.Fatal(err)
	}
	if c.APIKey != "k1" || c.BaseURL != "http://b" || c.Model != "m" || c.MaxPages != 5 {
		t.Errorf("env and flags = %+v", c)
	}
	c, _ = load(map[string]string{"OPENAI_API_KEY": "k1", "OCR_MODEL_API_KEY": "k2"})
	if c.APIKey != "k2" {
		t.Errorf("OCR_MODEL_API_KEY should win over OPENAI_API_KEY, got %q", c.APIKey)
	}

	c, err = load(map[string]string{"OCR_API_KEYS": " k1 , k2\t"})
	if err != nil || len(c.APIKeys) != 2 || c.APIKeys[0] != "k1" || c.APIKeys[1] != "k2" {
		t.Errorf("OCR_API_KEYS trimmed = %q, %v; want [k1 k2]", c.APIKeys, err)
	}

	c, err = load(map[string]string{"OCR_REVIEW_EMBEDDERS": "https://a.example, http://localhost:3000"})
	if err != nil || !c.Review || strings.Join(c.ReviewEmbedders, " ") != "https://a.example http://localhost:3000" {
		t.Errorf("review on %v, embedders %q, %v; want on and both", c.Review, c.ReviewEmbedders, err)
	}
	if c, err = load(map[string]string{"OCR_REVIEW": "off"}); err != nil || c.Review {
		t.Errorf("OCR_REVIEW=off: review on %v, %v", c.Review, err)
	}
	c, err = load(map[string]string{"OCR_WEBHOOK_SECRET": testSecret, "OCR_CALLBACK_HOSTS": " Hooks.Example.com , 10.0.0.7:8443"})
	if err != nil || c.WebhookSecret.IsZero() || len(c.CallbackHosts) != 2 || c.CallbackHosts[0] != "Hooks.Example.com" || c.CallbackHosts[1] != "10.0.0.7:8443" {
		t.Errorf("callbacks = %v %q, %v", c.WebhookSecret, c.CallbackHosts, err)
	}
	if s := fmt.Sprintf("%+v", c); strings.Contains(s, testSecret[6:12]) {
		t.Errorf("the config shows the webhook secret: %s", s)
	}
	c, err = load(map[string]string{"OCR_VERIFY": "all", "OCR_VERIFY_MODEL": "qwen-vl-max", "OCR_MODEL_BOXES": "gemini"}, "-verify", "flagged")
	if err != nil || c.Verify != "flagged" || c.VerifyModel != "qwen-vl-max" || c.Boxes != "gemini" || c.VerifyBaseURL != "" {
		t.Errorf("verify and boxes = %q %q %q, %v", c.Verify, c.VerifyModel, c.Boxes, err)
	}
	if c, _ = load(nil); c.Verify != "off" || c.Boxes != "off" {
		t.Errorf("verify and boxes by default = %q %q, want off", c.Verify, c.Boxes)
	}

	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env: map[string]string{"OCR_VERIFY": "twice"}, want: "OCR_VERIFY"},
		{env: map[string]string{"OCR_MODEL_BOXES": "yolo"}, want: "OCR_MODEL_BOXES"},
		{env: map[string]string{"OCR_VERIFY_BASE_URL": "qwen:8000"}, want: "OCR_VERIFY_BASE_URL"},
		{env: map[string]string{"OCR_MAX_PAGES": "abc"}, want: "OCR_MAX_PAGES"},
		{env: map[string]string{"OCR_REQUEST_TIMEOUT": "soon"}, want: "OCR_REQUEST_TIMEOUT"},
		{env: map[string]string{"OCR_OUTPUT_MODE": "yaml"}, want: "OCR_OUTPUT_MODE"},
		{env: map[string]string{"OCR_LANG": "fr-FR"}, want: "OCR_LANG"},
		{args: []string{"-lang", "chinese"}, want: "lang"},
		{env: map[string]string{"OCR_TEMPERATURE": "3"}, want: "OCR_TEMPERATURE"},
		{env: map[string]string{"OCR_MODEL_BASE_URL": "notaurl"}, want: "OCR_MODEL_BASE_URL"},
		{env: map[string]string{"OPENAI_BASE_URL": "localhost:8000/v1"}, want: "OPENAI_BASE_URL"},
		{args: []string{"-max-tokens", "0"}, want: "max-tokens"},
		// Keys that are not there must not leave the API open.
		{env: map[string]string{"OCR_API_KEYS": " "}, want: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_API_KEYS": ","}, want: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_API_KEYS": " , "}, want: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_API_KEYS": "\t\n"}, want: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_API_KEYS": "k1,,k2"}, want: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_API_KEYS": "k1,"}, want: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_API_KEYS": "k1\x00k2"}, want: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_REVIEW": "no"}, want: "OCR_REVIEW"},
		// frame-ancestors and postMessage compare origins exactly: no path, no wildcard.
		{env: map[string]string{"OCR_REVIEW_EMBEDDERS": "https://health.example.com/app"}, want: "OCR_REVIEW_EMBEDDERS"},
		{env: map[string]string{"OCR_REVIEW_EMBEDDERS": "*"}, want: "OCR_REVIEW_EMBEDDERS"},
		{env: map[string]string{"OCR_WEBHOOK_SECRET": "whsec_short"}, want: "OCR_WEBHOOK_SECRET"},
		{env: map[string]string{"OCR_WEBHOOK_SECRET": "hunter2-not-base64!"}, want: "OCR_WEBHOOK_SECRET"},
		{env: map[string]string{"OCR_WEBHOOK_SECRET": testSecret, "OCR_CALLBACK_HOSTS": "https://hooks.example.com"}, want: "OCR_CALLBACK_HOSTS"},
		{env: map[string]string{"OCR_WEBHOOK_SECRET": testSecret, "OCR_CALLBACK_HOSTS": "a.example,,b.example"}, want: "OCR_CALLBACK_HOSTS"},
		// Hosts to call back without the key to sign: refused at start.
		{env: map[string]string{"OCR_CALLBACK_HOSTS": "hooks.example.com"}, want: "OCR_WEBHOOK_SECRET"},
		{args: []string{"-callback-hosts", "hooks.example.com"}, want: "-callback-hosts"},
	} {
		_, err := load(tt.env, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("env %v args %v: err = %v, want one naming %s", tt.env, tt.args, err, tt.want)
		}
		if v := tt.env["OCR_WEBHOOK_SECRET"]; err != nil && v != "" && strings.Contains(err.Error(), v) {
			t.Errorf("the error shows the webhook secret: %v", err)
		}
	}
}

// testSecret is the Standard Webhooks libraries' example secret.
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var update = flag.Bool("update", false, "rewrite the generated tables in docs/")

// TestDocs: docs/configuration.md's settings table is generated from the settings table.
func TestDocs(t *testing.T) {
	var b strings.Builder
	b.WriteString(doctable.Row("variable", "flag", "default", "meaning"))
	b.WriteString("|---|---|---|---|\n")
	for _, s := range settings {
		names := make([]string, len(s.env))
		for i, e := range s.env {
			names[i] = "`" + e + "`"
		}
		fl, def := "—", "—"
		if s.flag != "" {
			fl = "`-" + s.flag + "`"
		}
		if s.def != "" {
			def = "`" + s.def + "`"
		}
		b.WriteString(doctable.Row(strings.Join(names, " or "), fl, def, s.usage))
	}
	doctable.Check(t, "../../docs/configuration.md", "settings", b.String(), *update)
}
