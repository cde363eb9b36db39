package intake

import (
	"bytes"
	"image/jpeg"
	"testing"

	"github.com/ocrdraft/ocrdraft/problem"
)

// TestPassThroughIsChecked: an upright JPEG goes as its own bytes without being decoded, so the
// structural walk must refuse it wherever it is cut; and what it lets through still decodes.
func TestPassThroughIsChecked(t *testing.T) {
	data := read(t, "scan.jpg")
	p := New(Limits{})
	page, err := p.Prepare(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	if page.Reencoded {
		t.Fatalf("scan.jpg was re-encoded; want it sent as its own bytes")
	}
	if _, err := jpeg.Decode(bytes.NewReader(page.Data)); err != nil {
		t.Fatalf("the page sent does not decode: %v", err)
	}
	for _, cut := range []int{len(data) / 4, len(data) / 2, len(data) - 100, len(data) - 2, len(data) - 1} {
		_, err := p.Prepare(t.Context(), data[:cut])
		if problem.CodeOf(err) != problem.ImageUnreadable {
			t.Errorf("cut at %d of %d: err = %v, want image_unreadable", cut, len(data), err)
		}
	}
}
