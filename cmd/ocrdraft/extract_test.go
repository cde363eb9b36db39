package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
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

// TestExtractWasmCache: ocrdraft extract of a PDF keeps the compiled decoder in
// OCR_WASM_CACHE_DIR, for the next run to load instead of compiling PDFium again. The command
// runs in a process of its own (this test binary, run again): the decoders are compiled once
// per process, and a test before this one may have compiled them without the directory.
func TestExtractWasmCache(t *testing.T) {
	if args := os.Getenv("OCRDRAFT_TEST_RUN"); args != "" {
		if err := run(context.Background(), strings.Split(args, "\n"), nil, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("compiles PDFium: about 6 s of CPU")
	}
	if raced() {
		// The command's process is this binary, and the race detector makes the compile ten
		// times slower, for nothing: the test's own goroutines only wait.
		t.Skip("compiles PDFium, a minute of CPU with -race")
	}
	fake := fakeopenai.New(t)
	fake.Default(fakeopenai.Reply(`{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60}]}`))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^TestExtractWasmCache$")
	cmd.Env = append(os.Environ(),
		"OCRDRAFT_TEST_RUN=extract\n"+filepath.Join("..", "..", "testdata", "documents", "digital.pdf"),
		"OCR_MODEL_BASE_URL="+fake.URL, "OCR_MODEL_API_KEY=sk-test", "OCR_MODEL=test-vl",
		"OCR_WASM_CACHE_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("extract: %v\n%s", err, out)
	}
	var res struct{ Meta struct{ Pages []any } }
	if err := json.Unmarshal(out, &res); err != nil || len(res.Meta.Pages) == 0 || fake.Calls() != len(res.Meta.Pages) {
		t.Fatalf("extract printed %s (%v) after %d model calls", out, err, fake.Calls())
	}
	var files int
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Errorf("%s is empty after extracting a PDF: the compiled decoder was not kept", dir)
	}
}

// raced reports whether this binary was built with -race.
func raced() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"})
}
