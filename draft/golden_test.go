package draft

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden is what a captured reply must become: the stage that read it and the result, or the
// problem document for a reply that fails.
type golden struct {
	Stage   parse.Stage       `json:"stage"`
	Result  *schema.Result    `json:"result,omitempty"`
	Problem *problem.Document `json:"problem,omitempty"`
}

// replies returns the captured replies in testdata/replies. A file named *.length.txt was cut at
// the token limit (finish reason "length").
func replies(t testing.TB) []string {
	files, err := filepath.Glob("../testdata/replies/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no replies in testdata/replies")
	}
	return files
}

func readGolden(b *Builder, file string) ([]byte, error) {
	reply, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out, err := b.FromReply(string(reply), strings.HasSuffix(file, ".length.txt"))
	g := golden{Stage: out.Stage}
	if err != nil {
		doc := problem.From(err)
		g.Problem = &doc
	} else {
		g.Result = &out.Result
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err = enc.Encode(g)
	return buf.Bytes(), err
}

// TestGolden reads every captured reply and compares the outcome with its golden file.
// go test ./draft -update rewrites them; review the diff before committing.
func TestGolden(t *testing.T) {
	b := New()
	for _, file := range replies(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			got, err := readGolden(b, file)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("../testdata/drafts", name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./draft -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from its golden file (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
			}
		})
	}
}
