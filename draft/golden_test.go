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

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden is what a captured reply must become: the stage that read it and the result, or the
// problem document for a reply that fails.
type golden struct {
	Stage   schema.ParseStage `json:"stage"`
	Found   string            `json:"found,omitempty"`
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

// generated are replies too large to commit, made by the test; their golden files sit beside
// the others. *.length names were cut at the token limit, as for files.
var generated = map[string]func() string{
	// A complete reply longer than parse.MaxReply: three rows, a remark to past the cap, one
	// more row. Only the first three are read, with reply_too_long, not output_truncated.
	"generated-over-cap": func() string { return overCap(3) },
	// The same, and the model said it stopped at its token limit: both warnings.
	"generated-over-cap.length": func() string { return overCap(3) },
	// Three rows, a flood of white space to past the cap, one more row: a flood is no content,
	// and all four are read, without reply_too_long.
	"generated-flood": func() string { return flood(3) },
}

func readGolden(b *Builder, file string) ([]byte, error) {
	var reply []byte
	if gen, ok := generated[file]; ok {
		reply = []byte(gen())
	} else {
		var err error
		if reply, err = os.ReadFile(file); err != nil {
			return nil, err
		}
	}
	cut := strings.HasSuffix(file, ".length.txt") || strings.HasSuffix(file, ".length")
	out, err := b.FromReply(string(reply), cut)
	g := golden{Stage: out.Stage, Found: out.Found}
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
	b := New(lexicon.Default())
	files := replies(t)
	for name := range generated {
		files = append(files, name)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			got, err := readGolden(b, file)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata/golden", name+".golden.json")
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
