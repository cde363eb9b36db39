package ocrdraft

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"gopkg.in/yaml.v3"
)

// apacheSHA256 is the SHA-256 of the Apache License 2.0 as the ASF publishes it
// (https://www.apache.org/licenses/LICENSE-2.0.txt), the bytes Go modules under it ship.
const apacheSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestLicense: LICENSE is the Apache License 2.0 verbatim, and the spec's info.license says so.
func TestLicense(t *testing.T) {
	b, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != apacheSHA256 {
		t.Errorf("LICENSE is not the Apache License 2.0 verbatim (sha256 %x)", sum)
	}
	var doc struct {
		Info struct{ License struct{ Name, URL string } }
	}
	if err := yaml.Unmarshal(Spec, &doc); err != nil {
		t.Fatal(err)
	}
	if l := doc.Info.License; l.Name != "Apache 2.0" || l.URL != "https://www.apache.org/licenses/LICENSE-2.0" {
		t.Errorf("openapi.yaml info.license = %+v, want Apache 2.0", l)
	}
}

// TestNotice: NOTICE names the WebAssembly builds the binary embeds at the versions go.mod pins,
// and every module compiled into the binary that ships a NOTICE file (Apache-2.0 §4(d) asks for
// its attribution notices).
func TestNotice(t *testing.T) {
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	embeds := map[string]bool{"github.com/gen2brain/heic": true, "github.com/klippa-app/go-pdfium": true}
	for _, r := range mf.Require {
		if embeds[r.Mod.Path] {
			delete(embeds, r.Mod.Path)
			if !bytes.Contains(notice, []byte(r.Mod.Path+" "+r.Mod.Version)) {
				t.Errorf("NOTICE does not name %s %s, the version go.mod requires", r.Mod.Path, r.Mod.Version)
			}
		}
	}
	for p := range embeds {
		t.Errorf("go.mod no longer requires %s: update NOTICE and this test", p)
	}

	// The build list of the binary, from the module cache (no network: the tests built it).
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Dir}}{{end}}", "./cmd/ocrdraft").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		path, dir, ok := strings.Cut(line, " ")
		if !ok || seen[path] || dir == "" || path == "github.com/ocrdraft/ocrdraft" {
			continue
		}
		seen[path] = true
		if _, err := os.Stat(filepath.Join(dir, "NOTICE")); err != nil {
			continue
		}
		// The Prometheus modules share one entry: "github.com/prometheus/client_golang, client_model …".
		name := path
		if rest, ok := strings.CutPrefix(path, "github.com/prometheus/"); ok {
			name = rest
		}
		if !bytes.Contains(notice, []byte(name)) {
			t.Errorf("%s ships a NOTICE file that NOTICE does not reproduce", path)
		}
	}
}
