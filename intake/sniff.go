package intake

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// format is one row of the table of what intake recognises: how to know it from its first
// bytes, and for an accepted kind everything intake does that depends on the kind — what its
// headers say of a page (read), how many pages it holds (pages), what decoding one costs and
// how to decode it (in the header read returns), and whether an upload may go as its own bytes
// (strip, plain). The kind comes from the bytes alone: a file name or a declared content type
// is whatever the sender's phone or browser guessed, and a HEIC called "page1.jpg" is common.
// Nothing outside the rows asks which kind a file is.
type format struct {
	kind  string            // what Sniff returns
	mime  string            // for accepted kinds
	what  string            // completes "the file is …"
	hint  string            // what to do instead, for rejected kinds; "" for the generic advice
	match func([]byte) bool // against the first bytes of the file

	// config and decode are the row's Go image decoder (image/jpeg's, x/image/webp's …),
	// called through this table rather than image.Decode so that the kind found here, not the
	// global format registry, decides. For a GIF, decode reads the first frame. nil for the
	// kinds whose decoders take more than a reader (TIFF, HEIC, BMP, PDF).
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)

	// read reads page i (from 0) of data from its headers, checked against l: the header of
	// an image to decode, with its cost and its decoder. Its errors are problems, or plain
	// errors that inspect takes for damage (unreadable). nil for rejected kinds and for
	// documents drawn whole (prepare).
	read func(f format, data []byte, i int, l Limits) (header, error)
	// pages counts an upload's pages from its headers; nil for an image of one page.
	pages func(f format, p *Preparer, ctx context.Context, data []byte) (int, error)
	// prepare prepares page i of a document that is drawn, not decoded (a PDF, by PDFium):
	// it takes the place of read and the decode. nil for images.
	prepare func(p *Preparer, ctx context.Context, data []byte, i int) (Page, error)
	// failed turns what the row's decoder said of a file into a refusal other than
	// unreadable (a HEIC past its memory bound), or returns nil; nil for most rows.
	failed func(h header, err error) error

	// strip returns an upload without its metadata (strip.go), for a kind that models read
	// as it is; nil for the kinds that are always re-encoded. plain says whether a decoded
	// upload's pixels may go as its own bytes; asIs that an upright YCbCr or grey upload within
	// the edge goes as its own bytes without being decoded (its structure walked instead).
	strip func([]byte) ([]byte, bool)
	plain func(image.Image) bool
	asIs  bool
}

// ok reports whether intake accepts the kind.
func (f format) ok() bool { return f.read != nil || f.prepare != nil }

// formats is the one table of what intake recognises, accepted kinds first. Rejected rows exist so
// that the error can name what was sent; anything matching no row is rejected as unrecognised.
// It is made in init because the PDF row's functions reach inspect, which reads the table.
var formats []format

func init() {
	formats = []format{
		jpegFormat,
		pngFormat,
		{kind: "webp", mime: "image/webp", what: "a WebP image", match: isWebP,
			config: webp.DecodeConfig, decode: webp.Decode, read: codec(webpCost)},
		{kind: "gif", mime: "image/gif", what: "a GIF image", match: func(b []byte) bool {
			return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
		}, config: gif.DecodeConfig, decode: gif.Decode, read: codec(gifCost)},
		// A TIFF (a fax, a scanner's batch) may hold several pages, each its own directory; see
		// Split. Models do not read TIFF or BMP, so these are always re-encoded.
		tiffFormat,
		bmpFormat,

		// An AVIF also lists the generic HEIF brands, so its row comes before heic's.
		{kind: "avif", what: "an AVIF image", match: ftyp("avif", "avis")},
		// A PDF is rendered page by page by PDFium (pdf.go); see Split.
		pdfFormat,
		// HEIC/HEIF: its size comes from the container (internal/heif), not from a config func.
		heicFormat,
		{kind: "video", what: "an MP4/QuickTime video", match: ftyp(), // any other ISO media file
			hint: "send a still photo of each page as JPEG or PNG, one image per page"},

		{kind: "jxl", what: "a JPEG XL image", match: func(b []byte) bool {
			return bytes.HasPrefix(b, []byte("\xff\x0a")) || bytes.HasPrefix(b, []byte("\x00\x00\x00\x0cJXL \r\n\x87\n"))
		}},
		{kind: "zip", what: "a ZIP archive or Office document", match: prefix("PK\x03\x04")},
	}
}

// The rows of JPEG and PNG, the two kinds that may go to the model as their own bytes.
var (
	jpegFormat = format{kind: "jpeg", mime: "image/jpeg", what: "a JPEG image", match: prefix("\xff\xd8\xff"),
		config: jpeg.DecodeConfig, decode: jpeg.Decode, read: jpegHeader,
		strip: stripJPEG, plain: plainJPEG, asIs: true}
	pngFormat = format{kind: "png", mime: "image/png", what: "a PNG image", match: prefix("\x89PNG\r\n\x1a\n"),
		config: png.DecodeConfig, decode: png.Decode, read: codec(pngCost),
		strip: stripPNG, plain: plainPNG}
)

// codec is the read of a row whose Go decoder reads the header (config) and decodes the image
// from a reader (decode), price being what decoding it costs (cost.go).
func codec(price func(data []byte, cfg image.Config) (cost, error)) func(format, []byte, int, Limits) (header, error) {
	return func(f format, data []byte, i int, _ Limits) (header, error) {
		if i != 0 {
			return header{}, pastOnePage(i)
		}
		cfg, err := decodeConfig(f.config, bytes.NewReader(data))
		if err != nil {
			return header{}, err
		}
		h := header{w: cfg.Width, h: cfg.Height, model: cfg.ColorModel, orient: 1}
		h.price = func() (cost, error) { return price(data, cfg) }
		h.decode = func(context.Context, *Preparer, []byte) decoder { return f.decode }
		return h, nil
	}
}

// jpegHeader is codec's read with the EXIF orientation.
func jpegHeader(f format, data []byte, i int, l Limits) (header, error) {
	h, err := codec(func(data []byte, cfg image.Config) (cost, error) { return jpegCost(data, cfg.ColorModel) })(f, data, i, l)
	h.orient = orientation(data)
	return h, err
}

// pastOnePage is the error of a page past the first of an image of one page: the caller's
// mistake, not the file's.
func pastOnePage(i int) error {
	return pageError{fmt.Sprintf("intake: page %d of an image of one page", i+1)}
}

// pageError is a page asked for that the upload does not have (Split counts them).
type pageError struct{ s string }

func (e pageError) Error() string { return e.s }

var unknown = format{what: "not a JPEG, PNG, WebP, GIF, HEIC, TIFF or BMP image or a PDF (its first bytes match none of them)"}

// lookup returns the row whose signature matches data, or unknown.
func lookup(data []byte) format {
	for _, f := range formats {
		if f.match(data) {
			return f
		}
	}
	return unknown
}

// Sniff names the file type from its first bytes ("jpeg", "png", "webp", "gif", or a rejected kind
// such as "heic" or "pdf"; "" when nothing matches). ok is true only for the kinds intake accepts.
func Sniff(data []byte) (kind string, ok bool) {
	f := lookup(data)
	return f.kind, f.ok()
}

func prefix(sig string) func([]byte) bool {
	return func(b []byte) bool { return bytes.HasPrefix(b, []byte(sig)) }
}

func isWebP(b []byte) bool {
	return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"
}

// ftyp matches an ISO base media file (HEIF, AVIF, MP4) whose ftyp box lists one of the brands,
// major or compatible; with no brands it matches any ftyp box.
func ftyp(brands ...string) func([]byte) bool {
	return func(b []byte) bool {
		if len(b) < 12 || string(b[4:8]) != "ftyp" {
			return false
		}
		if len(brands) == 0 {
			return true
		}
		size := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		if size < 12 || size > len(b) {
			size = min(len(b), 64) // a short or odd box still names the major brand
		}
		// The box holds the major brand, a minor version, then the compatible brands.
		for i := 8; i+4 <= size; i += 4 {
			if i == 12 {
				continue
			}
			for _, want := range brands {
				if string(b[i:i+4]) == want {
					return true
				}
			}
		}
		return false
	}
}
