package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/prompt"
)

// result is what the verification tests read of an extract's answer.
type result struct {
	Draft struct {
		Indicators []struct{ ValueNum json.Number }
	}
	Warnings []struct {
		Code   string
		Path   *string
		Params map[string]string
	}
	Meta struct {
		Pages []struct {
			Width, Height int
			Verify        *struct {
				Status string
				Model  string
			}
		}
		Evidence []struct {
			Path, Source string
			Box          struct{ X, Y, W, H int }
		}
	}
}

func extractWith(t *testing.T, env map[string]string, image string) result {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"extract", image}, nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestVerifySettings: OCR_VERIFY with OCR_VERIFY_MODEL sends the second read to that model at the
// same endpoint and key; with OCR_VERIFY_BASE_URL to another endpoint, with OCR_VERIFY_API_KEY
// and never the first endpoint's key; the disagreement is reads_disagree at the field.
func TestVerifySettings(t *testing.T) {
	second := strings.SplitN(prompt.Second(), "\n", 2)[0]
	first := fakeopenai.New(t)
	other := fakeopenai.New(t)
	for _, f := range []*fakeopenai.Server{first, other} {
		f.Route(fakeopenai.Asking(second), fakeopenai.Reply(`{"results":[{"name":"总胆固醇","result":"5.36","unit":"mmol/L"}]}`))
		f.Default(fakeopenai.Reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L"}]}`))
	}
	img := writePNG(t, t.TempDir(), "p.png")
	base := map[string]string{"OCR_MODEL_BASE_URL": first.URL, "OCR_MODEL_API_KEY": "sk-first", "OCR_MODEL": "first-vl", "OCR_VERIFY": "all"}

	env := map[string]string{"OCR_VERIFY_MODEL": "second-vl"}
	for k, v := range base {
		env[k] = v
	}
	res := extractWith(t, env, img)
	var models []string
	for _, r := range first.Requests() {
		models = append(models, r.Chat.Model)
		if fakeopenai.Asking(second)(r) != (r.Chat.Model == "second-vl") || r.Header.Get("Authorization") != "Bearer sk-first" {
			t.Errorf("request to %s with the wrong prompt or key", r.Chat.Model)
		}
	}
	if len(models) != 2 {
		t.Errorf("models asked %v, want first-vl and second-vl", models)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Code != "reads_disagree" || *res.Warnings[0].Path != "indicators[0].valueNum" ||
		res.Warnings[0].Params["first"] != "5.86" || res.Warnings[0].Params["second"] != "5.36" {
		t.Errorf("warnings %+v", res.Warnings)
	}
	if v := res.Meta.Pages[0].Verify; v == nil || v.Status != "disagreed" {
		t.Errorf("meta.pages[0].verify %+v", v)
	}

	env = map[string]string{"OCR_VERIFY_BASE_URL": other.URL, "OCR_VERIFY_API_KEY": "sk-other", "OCR_VERIFY_MODEL": ""}
	for k, v := range base {
		env[k] = v
	}
	extractWith(t, env, img)
	reqs := other.Requests()
	if len(reqs) != 1 || !fakeopenai.Asking(second)(reqs[0]) || reqs[0].Header.Get("Authorization") != "Bearer sk-other" || reqs[0].Chat.Model != "first-vl" {
		t.Errorf("the other endpoint got %d requests (key %q)", len(reqs), reqs[0].Header.Get("Authorization"))
	}
}

// TestBoxesSetting: OCR_MODEL_BOXES=pixels sends the page with sides that are multiples of 28,
// says its size in meta, asks for bbox_2d, and gives the row's box as evidence of the model.
func TestBoxesSetting(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.Reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"bbox_2d":[10,20,80,48]}]}`))
	res := extractWith(t, map[string]string{"OCR_MODEL_BASE_URL": f.URL, "OCR_MODEL": "qwen2.5-vl", "OCR_MODEL_BOXES": "pixels"},
		writePNG(t, t.TempDir(), "p.png")) // 100×140
	if p := res.Meta.Pages[0]; p.Width != 84 || p.Height != 140 {
		t.Errorf("page sent %d×%d, want 84×140", p.Width, p.Height)
	}
	if ev := res.Meta.Evidence; len(ev) != 1 || ev[0].Path != "indicators[0]" || ev[0].Source != "model" || ev[0].Box.X != 10 || ev[0].Box.W != 70 || ev[0].Box.H != 28 {
		t.Errorf("evidence %+v", ev)
	}
	if !strings.Contains(string(f.Requests()[0].Body), "bbox_2d") {
		t.Error("the prompt does not ask for bbox_2d")
	}
}
