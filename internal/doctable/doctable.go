// Package doctable keeps the tables in docs/ that mirror the code's own tables (settings,
// problem codes, warning codes, metrics) equal to them. A generated table sits between two
// marker comments in a Markdown file:
//
//	<!-- generated: settings (go test ./cmd/ocrdraft -update) -->
//	| … |
//	<!-- end: settings -->
//
// Each package's test renders its table and calls Check, which fails on a difference and, with
// -update, rewrites the block. The text around the block is written by hand.
package doctable

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Check compares the block called name in the Markdown file at path with body, and rewrites the
// block when update is set.
func Check(t testing.TB, path, name, body string, update bool) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Replace(src, name, body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if bytes.Equal(src, out) {
		return
	}
	if update {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the %s table differs from the code; run the test with -update to rewrite it", path, name)
}

// Replace returns src with the block called name holding body.
func Replace(src []byte, name, body string) ([]byte, error) {
	begin := []byte("<!-- generated: " + name)
	end := []byte("<!-- end: " + name + " -->")
	i := bytes.Index(src, begin)
	if i < 0 {
		return nil, fmt.Errorf("no %q marker", begin)
	}
	nl := bytes.IndexByte(src[i:], '\n')
	if nl < 0 {
		return nil, fmt.Errorf("the %q marker ends the file", begin)
	}
	start := i + nl + 1
	j := bytes.Index(src[start:], end)
	if j < 0 {
		return nil, fmt.Errorf("no %q marker after the start of %s", end, name)
	}
	var b bytes.Buffer
	b.Write(src[:start])
	b.WriteString(strings.TrimRight(body, "\n"))
	b.WriteString("\n")
	b.Write(src[start+j:])
	return b.Bytes(), nil
}

// Row renders one Markdown table row; a | inside a cell is escaped.
func Row(cells ...string) string {
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(cells, " | ") + " |\n"
}
