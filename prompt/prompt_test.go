package prompt

import (
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGolden pins every rendered prompt: the first read's, with each box convention, and the
// second read's. A change to the contract or the rules shows up here as a diff to review, and
// changes the prompt version.
func TestGolden(t *testing.T) {
	cases := map[string]string{"testdata/prompt.golden.txt": Render(), "testdata/second.golden.txt": Second()}
	for _, c := range BoxConventions[1:] {
		cases["testdata/prompt-boxes-"+string(c.Boxes)+".golden.txt"] = First(c.Boxes)
	}
	for path, got := range cases {
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("prompt differs from %s (-want +got):\n%s", path, diff)
		}
	}
}

// TestEveryField fails when a contract field the model fills is missing from the prompt, with
// its description, or when one that code fills (model:"-") is in it.
func TestEveryField(t *testing.T) {
	p := Render()
	for _, typ := range []reflect.Type{reflect.TypeFor[schema.OcrDraft](), reflect.TypeFor[schema.OcrIndicator]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue // not in the JSON, so not in the contract (OcrIndicator.Range)
			}
			desc := f.Tag.Get("desc")
			if desc == "" {
				t.Errorf("%s.%s has no desc tag", typ.Name(), f.Name)
			}
			sees := strings.Contains(p, "- "+name+" (")
			switch {
			case !schema.ModelSees(f) && sees:
				t.Errorf("prompt asks the model for %s, which code fills", name)
			case schema.ModelSees(f) && (!sees || !strings.Contains(p, desc)):
				t.Errorf("prompt lacks field %s or its description", name)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	v := Version()
	if len(v) != 12 || strings.Trim(v, "0123456789abcdef") != "" {
		t.Errorf("Version() = %q, want 12 hex digits", v)
	}
}

// TestBoxesOnlyWhenOn: with boxes off the prompt says nothing of boxes, and its version is the
// plain prompt's; with a convention on, it names that convention's key and nothing else; the
// second read never asks for boxes nor echoes the contract's fields.
func TestBoxesOnlyWhenOn(t *testing.T) {
	for _, p := range []string{First(BoxesOff), First(""), Second()} {
		if l := strings.ToLower(p); strings.Contains(l, "box") || strings.Contains(l, "bbox") {
			t.Errorf("a prompt without boxes mentions boxes:\n%s", p)
		}
	}
	if FirstVersion(BoxesOff) != Version() {
		t.Error("the version with boxes off is not the plain prompt's")
	}
	for _, c := range BoxConventions[1:] {
		p := First(c.Boxes)
		key, other := "bbox_2d", "box_2d"
		if c.Boxes == BoxesGemini {
			key, other = other, key
		}
		if !strings.Contains(p, key) || strings.Contains(strings.ReplaceAll(p, key, ""), other) {
			t.Errorf("%s: the prompt does not ask for %s alone", c.Boxes, key)
		}
		if FirstVersion(c.Boxes) == Version() {
			t.Errorf("%s: the version does not change with boxes", c.Boxes)
		}
	}
	for _, f := range []string{"valueNum", "refLow", "printedFlag", "indicators"} {
		if strings.Contains(Second(), f) {
			t.Errorf("the second prompt echoes the contract's field %s", f)
		}
	}
	if SecondVersion() == Version() {
		t.Error("the second prompt has the first's version")
	}
}
