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
	p := New(Limits{}, testRuntime)
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

// TestReadAllSized: a hint sizes the buffer; a wrong hint changes nothing but the cost, and a
// large hint's slack is not kept.
func TestReadAllSized(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 50_000) // 500 KB
	for _, hint := range []int64{0, 1, int64(len(data)) - 1, int64(len(data)), int64(len(data)) + 300, 10 << 20} {
		got, err := ReadAllSized(bytes.NewReader(data), 1<<20, hint)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("hint %d: %d bytes, %v", hint, len(got), err)
		}
		if slack := cap(got) - len(got); slack > 64<<10 && slack > len(got)/8 {
			t.Errorf("hint %d: kept %d bytes of slack", hint, slack)
		}
	}
	if _, err := ReadAllSized(bytes.NewReader(data), 1000, 10<<20); problem.CodeOf(err) != problem.PayloadTooLarge {
		t.Errorf("over max with a large hint: %v", err)
	}
}
