package intake

import (
	"testing"

	"github.com/ocrdraft/ocrdraft/problem"
)

// TestRefuse: what PreparePage refuses from the bytes alone, Refuse refuses the same way, and
// nothing else: a file it accepts, or one whose checks need its headers, is left to PreparePage.
func TestRefuse(t *testing.T) {
	p := New(Limits{MaxBytes: 1 << 10}, testRuntime)
	tests := []struct {
		name string
		data []byte
		want problem.Code // "" for none
	}{
		{"ZIP", []byte("PK\x03\x04 an office document"), problem.UnsupportedMediaType},
		{"unknown", []byte("hello"), problem.UnsupportedMediaType},
		{"empty", nil, problem.ImageUnreadable},
		{"too many bytes", append([]byte("\xff\xd8\xff"), make([]byte, 2<<10)...), problem.PayloadTooLarge},
		{"a JPEG's start", []byte("\xff\xd8\xff\xe0 truncated"), ""},
		{"a PDF's start", []byte("%PDF-1.7 truncated"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Refuse(tt.data)
			if tt.want == "" && err != nil || tt.want != "" && problem.CodeOf(err) != tt.want {
				t.Fatalf("Refuse = %v, want %q", err, tt.want)
			}
			if tt.want == "" {
				return
			}
			_, perr := p.PreparePage(t.Context(), tt.data, 0)
			if perr == nil || perr.Error() != err.Error() {
				t.Errorf("PreparePage refuses with %v, Refuse with %v", perr, err)
			}
		})
	}
}
