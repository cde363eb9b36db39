package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

func writePNG(t *testing.T, dir, name string) string {
	t.Helper()
	m := image.NewGray(image.Rect(0, 0, 100, 140))
	for i := range m.Pix {
		m.Pix[i] = 0xf0
	}
	var b bytes.Buffer
	png.Encode(&b, m)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExtractCLI runs ocrdraft extract against a fake OpenAI-compatible endpoint.
func TestExtractCLI(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Default(fakeopenai.Reply(`{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60,"unit":"mmol/L"}]}`))
	t.Setenv("OCR_MODEL_BASE_URL", fake.URL)
	t.Setenv("OCR_MODEL_API_KEY", "sk-test")
	t.Setenv("OCR_MODEL", "test-vl")
	dir := t.TempDir()
	p1, p2 := writePNG(t, dir, "p1.png"), writePNG(t, dir, "p2.png")

	var out bytes.Buffer
	if err := run(t.Context(), []string{"extract", p1, p2}, nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	var res struct {
		Draft struct {
			Title      string
			Indicators []struct{ ValueNum json.Number }
		}
		Meta struct{ Pages []any }
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Draft.Title != "血脂四项" || len(res.Draft.Indicators) != 1 || res.Draft.Indicators[0].ValueNum != "5.60" || len(res.Meta.Pages) != 2 {
		t.Errorf("result = %s", out.String())
	}
	if fake.Calls() != 2 {
		t.Errorf("model calls = %d, want 2 (one per page)", fake.Calls())
	}

	// A file that is not an image: the problem document, exit 1, no model call.
	bad := filepath.Join(dir, "report.docx")
	os.WriteFile(bad, []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00report.docx"), 0o644)
	out.Reset()
	err := run(t.Context(), []string{"extract", bad}, nil, &out, &bytes.Buffer{})
	var doc struct{ Code string }
	json.Unmarshal(out.Bytes(), &doc)
	if !errors.Is(err, errFailed) || doc.Code != "unsupported_media_type" || fake.Calls() != 2 {
		t.Errorf("docx: err %v, code %q, calls %d", err, doc.Code, fake.Calls())
	}
}
