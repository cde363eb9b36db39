package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// golden returns the result or problem recorded for a captured reply in draft/testdata/golden.
func golden(t *testing.T, name string) (result, problem json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile("../../draft/testdata/golden/" + name + ".golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct{ Result, Problem json.RawMessage }
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g.Result, g.Problem
}

// sameJSON compares two JSON documents by value, numbers as written.
func sameJSON(t *testing.T, want, got []byte) {
	t.Helper()
	var w, g any
	dw := json.NewDecoder(bytes.NewReader(want))
	dw.UseNumber()
	dg := json.NewDecoder(bytes.NewReader(got))
	dg.UseNumber()
	if err := dw.Decode(&w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if err := dg.Decode(&g); err != nil {
		t.Fatalf("got: %v\n%s", err, got)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestParseCLI: the CLI prints what the golden files record, for one file, several, and stdin.
func TestParseCLI(t *testing.T) {
	const dir = "../../testdata/replies/"
	t.Run("one file", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), []string{"parse", dir + "qwen-units-in-values.txt"}, nil, &out, &errOut); err != nil {
			t.Fatalf("run: %v (%s)", err, errOut.String())
		}
		want, _ := golden(t, "qwen-units-in-values")
		sameJSON(t, want, out.Bytes())
		if !strings.Contains(out.String(), "\n  ") {
			t.Errorf("one file should print indented JSON")
		}
	})
	t.Run("several files, one failing", func(t *testing.T) {
		var out bytes.Buffer
		err := run(t.Context(), []string{"parse", dir + "gpt4o-clean.txt", dir + "fail-refusal-blurry-zh.txt", dir + "gemini-crlf.txt"}, nil, &out, &bytes.Buffer{})
		if !errors.Is(err, errFailed) {
			t.Errorf("err = %v, want errFailed (exit 1)", err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 {
			t.Fatalf("got %d lines, want 3:\n%s", len(lines), out.String())
		}
		r0, _ := golden(t, "gpt4o-clean")
		_, p1 := golden(t, "fail-refusal-blurry-zh")
		r2, _ := golden(t, "gemini-crlf")
		for i, want := range [][]byte{r0, p1, r2} {
			sameJSON(t, want, []byte(lines[i]))
		}
	})
	t.Run("stdin and finish reason", func(t *testing.T) {
		reply, _ := os.ReadFile(dir + "gpt4o-clean.txt")
		var out bytes.Buffer
		if err := run(t.Context(), []string{"parse", "-finish-reason", "length", "-"}, bytes.NewReader(reply), &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"output_truncated"`) {
			t.Errorf("finish reason length gave no output_truncated:\n%s", out.String())
		}
	})
	t.Run("refusal", func(t *testing.T) {
		var out bytes.Buffer
		err := run(t.Context(), []string{"parse", "-"}, strings.NewReader("抱歉，图片太模糊，无法识别。"), &out, &bytes.Buffer{})
		if !errors.Is(err, errFailed) {
			t.Errorf("err = %v, want errFailed", err)
		}
		var doc struct{ Code string }
		json.Unmarshal(out.Bytes(), &doc)
		if doc.Code != "model_output_unparseable" {
			t.Errorf("code = %q\n%s", doc.Code, out.String())
		}
	})
	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{}, {"parse"}, {"parse", "no-such-file.txt"}, {"frobnicate"}} {
			if err := run(t.Context(), args, nil, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, errUsage) {
				t.Errorf("run(%q) = %v, want errUsage (exit 2)", args, err)
			}
		}
	})
}

// TestParseSex: -sex takes male or female, for the checks; anything else is a usage error.
func TestParseSex(t *testing.T) {
	const reply = "../../testdata/replies/qwen-units-in-values.txt"
	for _, sex := range []string{"male", "female", ""} {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), []string{"parse", "-sex", sex, reply}, nil, &out, &errOut); err != nil {
			t.Errorf("-sex %q: %v (%s)", sex, err, errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"parse", "-sex", "m", reply}, nil, &out, &errOut); !errors.Is(err, errUsage) {
		t.Errorf("-sex m: %v, want a usage error", err)
	}
}

// TestParseLang: warnings are in Chinese unless -lang (or OCR_LANG) says en; a language the
// service does not write is a usage error.
func TestParseLang(t *testing.T) {
	const reply = "../../testdata/replies/field-gpt4o-unit-conflict.txt"
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, "请核对"},
		{"", []string{"-lang", "en"}, "Check the value"},
		{"en", nil, "Check the value"},
		{"en", []string{"-lang", "zh-TW"}, "请核对"},
	} {
		getenv := func(k string) string {
			if k == "OCR_LANG" {
				return c.env
			}
			return ""
		}
		var out, errOut bytes.Buffer
		if err := runParse(append(c.args, reply), getenv, nil, &out, &errOut); err != nil {
			t.Fatalf("OCR_LANG %q %q: %v (%s)", c.env, c.args, err, errOut.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("OCR_LANG %q %q: no %q in\n%s", c.env, c.args, c.want, out.String())
		}
	}
	for _, env := range []string{"fr", ""} {
		args := []string{"-lang", "klingon", reply}
		if env != "" {
			args = []string{reply}
		}
		if err := runParse(args, func(string) string { return env }, nil, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, errUsage) {
			t.Errorf("OCR_LANG %q %q: %v, want a usage error", env, args, err)
		}
	}
}
