package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/ocrdraft/ocrdraft"
)

// TestNoOptionalFormFields: no multipart request body of openapi.yaml has an optional field. The
// Java client openapi-generator 7 writes with its default options (java, native) adds every
// multipart field it knows of with field.toString() and no null check, so an optional field is a
// NullPointerException for every caller who leaves it out; an optional input goes in a header,
// which that client sends only when given (docs/clients.md, "The patient's sex").
func TestNoOptionalFormFields(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(ocrdraft.Spec)
	if err != nil {
		t.Fatal(err)
	}
	forms := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("multipart/form-data")
			if mt == nil {
				continue
			}
			forms++
			s := mt.Schema.Value
			for name := range s.Properties {
				if !slices.Contains(s.Required, name) {
					t.Errorf("%s %s: the multipart field %q is optional; a generated Java client cannot leave it out (make it a header)", method, path, name)
				}
			}
		}
	}
	if forms == 0 {
		t.Error("no multipart request body in openapi.yaml: this test checks nothing")
	}
}

// TestNoEmptyRequired: no schema of openapi.yaml says required: [], which OpenAPI 3.0 does not
// allow (a required list holds at least one name; Spectral's oas3-schema rule reports it).
func TestNoEmptyRequired(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal(ocrdraft.Spec, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, n *yaml.Node)
	walk = func(path string, n *yaml.Node) {
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if k == "required" && v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				t.Errorf("%s.required is empty; leave it out", path)
			}
			walk(path+"."+k, v)
		}
		if n.Kind != yaml.MappingNode {
			for _, c := range n.Content {
				walk(path, c)
			}
		}
	}
	walk("", &doc)
}

// TestLinters runs the linters API teams hold a spec to, when they are installed (npm:
// @stoplight/spectral-cli and @redocly/cli, on PATH): Spectral with spectral:oas (.spectral.yaml)
// and Redocly with its recommended rules (redocly.yaml), each with no error and no warning. The
// tests need neither; without them this test skips.
func TestLinters(t *testing.T) {
	for _, l := range []struct {
		bin  string
		args []string
		// clean reports whether the output says no problem.
		clean func(out []byte, err error) bool
	}{
		// -F hint: any result at all, whatever its severity, fails the run.
		{"spectral", []string{"lint", "-F", "hint", "-r", ".spectral.yaml", "openapi.yaml"}, func(_ []byte, err error) bool { return err == nil }},
		// Redocly exits 0 on warnings: its totals say.
		{"redocly", []string{"lint", "--format=json"}, func(out []byte, err error) bool {
			var r struct {
				Totals struct{ Errors, Warnings int }
			}
			i := bytes.IndexByte(out, '{')
			return err == nil && i >= 0 && json.Unmarshal(out[i:], &r) == nil && r.Totals.Errors+r.Totals.Warnings == 0
		}},
	} {
		t.Run(l.bin, func(t *testing.T) {
			path, err := exec.LookPath(l.bin)
			if err != nil {
				t.Skipf("%s is not installed (npm install @stoplight/spectral-cli @redocly/cli)", l.bin)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, path, l.args...)
			cmd.Dir = ".." // the configurations sit beside openapi.yaml
			var out bytes.Buffer
			cmd.Stdout = &out
			err = cmd.Run()
			if !l.clean(out.Bytes(), err) {
				t.Errorf("%s %s: %v\n%s", l.bin, strings.Join(l.args, " "), err, out.Bytes())
			}
		})
	}
}
