package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
)

// TestLogPages: the request line's pages are the report's pages once its uploads are split (what
// OCR_MAX_PAGES counts), not the files uploaded, whether the request succeeds or fails; with
// uploads that cannot be split there is no count to give.
func TestLogPages(t *testing.T) {
	fax, err := os.ReadFile(filepath.Join("..", "testdata", "images", "fax.tiff")) // three pages
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		uploads  [][]byte
		maxPages int
		answer   fakeopenai.Answer
		status   int
		pages    int // 0: no pages in the line
	}{
		{name: "a photo", uploads: [][]byte{page}, status: 200, pages: 1},
		{name: "a three-page fax and a photo", uploads: [][]byte{fax, page}, status: 200, pages: 4},
		{name: "more pages than allowed once split", uploads: [][]byte{fax, page}, maxPages: 3, status: 413, pages: 4},
		{name: "every page's model call fails", uploads: [][]byte{fax}, answer: fakeopenai.ServerError(), status: 502, pages: 3},
		{name: "a file that is no image", uploads: [][]byte{page, []byte("PK\x03\x04 not a page")}, status: 415, pages: 2},
		{name: "a fax cut short", uploads: [][]byte{page, fax[:200]}, status: 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, options{maxPages: tt.maxPages, tries: 1})
			e.model.Default(fakeopenai.Reply(lipid))
			if tt.answer != nil {
				e.model.Default(tt.answer)
			}
			if rec := e.do(extractReq(t, tt.uploads...)); rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			line := grep(e.log.String(), `"msg":"request"`)
			var got struct {
				Route string
				Pages *int
			}
			if err := json.Unmarshal([]byte(line), &got); err != nil || got.Route != "/v1/extract" {
				t.Fatalf("the request line %q: %v", line, err)
			}
			switch {
			case tt.pages == 0 && got.Pages != nil:
				t.Errorf("pages %d in %s, want none", *got.Pages, line)
			case tt.pages != 0 && (got.Pages == nil || *got.Pages != tt.pages):
				t.Errorf("want pages %d in %s", tt.pages, line)
			}
			// Not in the time, duration or request id: a timestamp may spell 5.86 (02:49:05.868).
			rest := machine.ReplaceAllString(line, "")
			if strings.Contains(rest, "总胆固醇") || strings.Contains(rest, "5.86") {
				t.Errorf("health data in the log: %s", line)
			}
		})
	}
}

// machine matches the request line's fields that the service makes itself and that may spell any
// digits: its time, duration and request id.
var machine = regexp.MustCompile(`"(time|durationMs|requestId)":("[^"]*"|[0-9.]+)`)
