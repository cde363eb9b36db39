package schema

import (
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/internal/doctable"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestStrictGolden pins the response_format schema sent in json_schema mode.
func TestStrictGolden(t *testing.T) {
	const path = "testdata/strict.golden.json"
	got, err := json.MarshalIndent(Generate(reflect.TypeFor[OcrDraft](), Strict), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("strict schema differs from %s (-want +got):\n%s", path, diff)
	}
}

// TestStrictForm checks the rules of OpenAI's strict mode on the generated schema: every object
// lists every property as required and forbids others; nullable fields are a type list with
// "null"; no keyword strict mode rejects.
func TestStrictForm(t *testing.T) {
	var walk func(path string, s *JSONSchema)
	walk = func(path string, s *JSONSchema) {
		if s.Ref != "" || s.Nullable || s.MaxLength != nil || s.MinLength != nil || s.Minimum != nil || s.Maximum != nil {
			t.Errorf("%s: keyword not allowed in strict mode: %+v", path, s)
		}
		if s.Type[0] == "object" {
			if s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("%s: additionalProperties must be false", path)
			}
			if len(s.Required) != len(s.Properties) {
				t.Errorf("%s: required %v, want every property", path, s.Required)
			}
			for _, p := range s.Properties {
				walk(path+"."+p.Name, p.Schema)
			}
		}
		if s.Items != nil {
			walk(path+"[]", s.Items)
		}
	}
	walk("OcrDraft", Generate(reflect.TypeFor[OcrDraft](), Strict))

	ind := Generate(reflect.TypeFor[OcrIndicator](), Strict)
	types := map[string][]string{}
	for _, p := range ind.Properties {
		types[p.Name] = p.Schema.Type
	}
	want := map[string][]string{
		"itemName": {"string"}, "itemGroup": {"string", "null"}, "valueNum": {"number", "null"},
		"valueText": {"string", "null"}, "unit": {"string", "null"}, "refLow": {"number", "null"}, "refHigh": {"number", "null"},
		"printedFlag": {"string", "null"}, "refText": {"string", "null"}, // page and analyte are code's
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("indicator types (-want +got):\n%s", diff)
	}
}

// TestOpenAPIForm: nullable fields are nullable: true with one type; decimals are numbers.
func TestOpenAPIForm(t *testing.T) {
	ind := Generate(reflect.TypeFor[OcrIndicator](), OpenAPI)
	for _, p := range ind.Properties {
		if len(p.Schema.Type) != 1 {
			t.Errorf("%s: type %v, want one type", p.Name, p.Schema.Type)
		}
		if p.Name == "valueNum" && (p.Schema.Type[0] != "number" || !p.Schema.Nullable || p.Schema.Format != "") {
			t.Errorf("valueNum = %+v, want type number, nullable, no format (BigDecimal in Java)", p.Schema)
		}
	}
}

// TestDocs: docs/errors.md's table of warning codes is generated from WarningCodes.
func TestDocs(t *testing.T) {
	var b strings.Builder
	b.WriteString(doctable.Row("warning", "what it asks of the person confirming"))
	b.WriteString("|---|---|\n")
	for _, w := range WarningCodes {
		b.WriteString(doctable.Row("`"+string(w.Code)+"`", w.Meaning))
	}
	doctable.Check(t, "../docs/errors.md", "warnings", b.String(), *update)
}
