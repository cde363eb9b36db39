package heif

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sum is heif.wasm.gz's SHA-256 as gen2brain/heic v0.4.5 ships it.
const sum = "3634a6447ea3915633667f39e01ff540a60f4e2f837a8391d044d76dfd8a0435"

func TestSum(t *testing.T) {
	got := sha256.Sum256(Wasm)
	if hex.EncodeToString(got[:]) != sum {
		t.Fatalf("heif.wasm.gz has SHA-256 %x, want %s (gen2brain/heic v0.4.5's)", got, sum)
	}
}

// TestSameAsModule: the copy is the module's file at the version go.mod pins (the module stays
// required: intake's tests compare with its decoder and read its test pictures). When go.mod
// moves to another version, this fails until the files here are copied from it.
func TestSameAsModule(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gen2brain/heic").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root := strings.TrimSpace(string(dir))
	for _, f := range []string{"heif.wasm.gz", "LICENSE.libheif", "LICENSE.libde265", "heif.c", "Makefile"} {
		want, err := os.ReadFile(filepath.Join(root, "lib", f))
		if err != nil {
			t.Fatal(err)
		}
		local := f
		if strings.HasSuffix(f, ".c") || f == "Makefile" {
			local = filepath.Join("src", f)
		}
		got, err := os.ReadFile(local)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from gen2brain/heic's lib/%s: copy it again", f, f)
		}
	}
}
