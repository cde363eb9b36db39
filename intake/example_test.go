package intake_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/problem"
)

// A phone photo stored sideways comes out upright, shrunk and re-encoded; a PDF is turned away
// with a code and a detail the caller can act on.
func ExamplePreparer_Prepare() {
	p := intake.New(intake.Limits{}) // the defaults: 20 MiB, 40 megapixels, 2048-pixel long edge

	photo, err := os.ReadFile("../testdata/images/phone-exif6.jpg")
	if err != nil {
		panic(err)
	}
	page, err := p.Prepare(context.Background(), photo)
	if err != nil {
		panic(err)
	}
	fmt.Println(page.Kind, "→", page.MIME, page.Width, "×", page.Height, "reencoded:", page.Reencoded)

	pdf, err := os.ReadFile("../testdata/images/scan.pdf")
	if err != nil {
		panic(err)
	}
	_, err = p.Prepare(context.Background(), pdf)
	fmt.Println(problem.CodeOf(err))
	fmt.Println(problem.From(err).Detail)
	// Output:
	// jpeg → image/jpeg 1536 × 2048 reencoded: true
	// unsupported_media_type
	// the file is a PDF document; send each page as a JPEG or PNG image, one image per page
}
