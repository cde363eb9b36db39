package intake_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/problem"
)

// A phone photo stored sideways comes out upright, shrunk and re-encoded; a PDF is split into
// its pages, each rendered with its text layer; a PDF that needs a password is turned away with
// a code and a detail the caller can act on.
func ExamplePreparer_Prepare() {
	// The defaults: 20 MiB, 40 megapixels, 2048-pixel long edge; the WebAssembly decoders in a
	// Runtime of the process (compiled in memory, at the first HEIC or PDF).
	p := intake.New(intake.Limits{}, intake.NewRuntime(""))

	photo, err := os.ReadFile("../testdata/images/phone-exif6.jpg")
	if err != nil {
		panic(err)
	}
	page, err := p.Prepare(context.Background(), photo)
	if err != nil {
		panic(err)
	}
	fmt.Println(page.Kind, "→", page.MIME, page.Width, "×", page.Height, "reencoded:", page.Reencoded)

	report, err := os.ReadFile("../testdata/documents/digital.pdf")
	if err != nil {
		panic(err)
	}
	n, err := p.Split(context.Background(), report)
	if err != nil {
		panic(err)
	}
	for i := range n {
		page, err := p.PreparePage(context.Background(), report, i)
		if err != nil {
			panic(err)
		}
		fmt.Println(page.Kind, i+1, "→", page.MIME, page.Width, "×", page.Height, "words:", len(page.Text))
	}

	locked, err := os.ReadFile("../testdata/documents/encrypted.pdf")
	if err != nil {
		panic(err)
	}
	_, err = p.Prepare(context.Background(), locked)
	fmt.Println(problem.CodeOf(err))
	fmt.Println(problem.From(err).Detail)
	// Output:
	// jpeg → image/jpeg 1536 × 2048 reencoded: true
	// pdf 1 → image/jpeg 1447 × 2048 words: 35
	// pdf 2 → image/jpeg 1447 × 2048 words: 30
	// document_encrypted
	// the PDF is protected by a password; remove the protection (print it to a new PDF) and send it again
}
