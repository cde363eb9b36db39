package ocrdraft

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
)

// TestREADMEPaths: every repository file the README and docs/ name in a command or a link
// exists, so that every command works as written on a fresh clone.
func TestREADMEPaths(t *testing.T) {
	docs, _ := filepath.Glob("docs/*.md")
	files := append([]string{"README.md"}, docs...)
	// testdata/…, docs/…, cmd/… paths in commands (after @ or a space), and relative links.
	pathRe := regexp.MustCompile(`(?:^|[\s@(])((?:testdata|docs|cmd|internal)/[A-Za-z0-9_./-]+\.[a-z]+)`)
	linkRe := regexp.MustCompile(`\]\(([^)#:]+)(?:#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(f)
		for _, m := range pathRe.FindAllStringSubmatch(string(b), -1) {
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("%s names %s, which does not exist", f, m[1])
			}
		}
		for _, m := range linkRe.FindAllStringSubmatch(string(b), -1) {
			p := filepath.Join(dir, m[1])
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}

// TestREADMELength: the README stays a front page; the rest belongs in docs/.
func TestREADMELength(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 200 {
		t.Errorf("README.md has %d lines; keep it at most 200 and move detail to docs/", n)
	}
}

// TestREADMEAnalytes: the README's count of the lexicon's analytes is the lexicon's.
func TestREADMEAnalytes(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`a lexicon of (\d+) analytes`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`README.md no longer says "a lexicon of N analytes": update this test`)
	}
	if n := len(lexicon.Default().Analytes()); string(m[1]) != strconv.Itoa(n) {
		t.Errorf("README.md says %s analytes; the lexicon has %d", m[1], n)
	}
}
