package intake

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

// format is one row of the signature table. The kind comes from the bytes alone: a file name or a
// declared content type is whatever the sender's phone or browser guessed, and a HEIC called
// "page1.jpg" is common.
type format struct {
	kind  string            // what Sniff returns
	mime  string            // for accepted kinds
	what  string            // completes "the file is …"
	hint  string            // what to do instead, for rejected kinds; "" for the generic advice
	match func([]byte) bool // against the first bytes of the file

	// The decoders, for accepted kinds only: a kind is accepted when it has them. They are
	// called through this table rather than image.Decode so that the kind found here, not the
	// global format registry, decides. For a GIF, decode reads the first frame.
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

// ok reports whether intake accepts the kind.
func (f format) ok() bool { return f.decode != nil || f.kind == "pdf" }

// formats is the one table of what intake recognises, accepted kinds first. Rejected rows exist so
// that the error can name what was sent; anything matching no row is rejected as unrecognised.
var formats = []format{
	{kind: "jpeg", mime: "image/jpeg", what: "a JPEG image", match: prefix("\xff\xd8\xff"),
		config: jpeg.DecodeConfig, decode: jpeg.Decode},
	{kind: "png", mime: "image/png", what: "a PNG image", match: prefix("\x89PNG\r\n\x1a\n"),
		config: png.DecodeConfig, decode: png.Decode},
	{kind: "webp", mime: "image/webp", what: "a WebP image", match: isWebP,
		config: webp.DecodeConfig, decode: webp.Decode},
	{kind: "gif", mime: "image/gif", what: "a GIF image", match: func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}, config: gif.DecodeConfig, decode: gif.Decode},
	// A TIFF (a fax, a scanner's batch) may hold several pages, each its own directory; see Split.
	// Models do not read TIFF or BMP, so these are always re-encoded.
	{kind: "tiff", mime: "image/tiff", what: "a TIFF image", match: func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("II*\x00")) || bytes.HasPrefix(b, []byte("MM\x00*"))
	}, config: tiff.DecodeConfig, decode: tiff.Decode},
	{kind: "bmp", mime: "image/bmp", what: "a BMP image", match: func(b []byte) bool {
		// "BM" alone is too weak; the two reserved header words are zero in every real BMP.
		return len(b) >= 14 && bytes.HasPrefix(b, []byte("BM")) && bytes.Equal(b[6:10], []byte{0, 0, 0, 0})
	}, config: bmp.DecodeConfig, decode: bmp.Decode},

	// An AVIF also lists the generic HEIF brands, so its row comes before heic's.
	{kind: "avif", what: "an AVIF image", match: ftyp("avif", "avis")},
	// A PDF is rendered page by page by PDFium (pdf.go); see Split.
	{kind: "pdf", mime: "application/pdf", what: "a PDF document", match: func(b []byte) bool {
		// PDF readers accept the header anywhere in the first 1024 bytes.
		return bytes.Contains(b[:min(len(b), 1024)], []byte("%PDF-"))
	}},
	// HEIC/HEIF: its size comes from the container (heif.go), not from a config func.
	{kind: "heic", mime: "image/heic", what: "a HEIC/HEIF image", match: ftyp(heifBrands...), decode: decodeHEICReader},
	{kind: "video", what: "an MP4/QuickTime video", match: ftyp(), // any other ISO media file
		hint: "send a still photo of each page as JPEG or PNG, one image per page"},

	{kind: "jxl", what: "a JPEG XL image", match: func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("\xff\x0a")) || bytes.HasPrefix(b, []byte("\x00\x00\x00\x0cJXL \r\n\x87\n"))
	}},
	{kind: "zip", what: "a ZIP archive or Office document", match: prefix("PK\x03\x04")},
}

// heifBrands are the ISO BMFF brands of HEIC and HEIF stills and sequences; mif1, msf1 and mif2
// are the generic HEIF ones.
var heifBrands = []string{"heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1", "mif2"}

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
