package intake

import (
	"fmt"

	"github.com/ocrdraft/ocrdraft/problem"
)

// A valid file may use a feature that no decoder here reads: a G3 fax with fill bits, a TIFF in
// the Lab colour space, a BMP of 16-bit pixels. Such a file is not damaged, and saying so would
// send its sender to export it again the same way; it is refused as unsupported_media_type
// instead, naming the feature and what to send in its place, from the headers and before any
// pixel is decoded. Each kind's features are in one table here; what its decoder still calls
// unsupported (tiff.UnsupportedError, bmp.ErrUnsupported) is refused the same way, by unreadable.

// tiffFeature is one row of the TIFF table: feature names what page d uses that is not read,
// "" when it uses nothing of the kind; instead completes "save it again …".
type tiffFeature struct {
	feature func(d ifd) string
	instead string
}

// tiffFeatures are checked in order; the first that names a feature refuses the page.
var tiffFeatures = []tiffFeature{
	{func(d ifd) string {
		if _, ok := tiffCompressions[d.compression]; ok {
			return ""
		}
		if name, ok := tiffUnread[d.compression]; ok {
			return fmt.Sprintf("%s compression (compression %d)", name, d.compression)
		}
		return fmt.Sprintf("a compression that is not read here (compression %d)", d.compression)
	}, "with LZW, deflate, CCITT G4 or JPEG compression"},
	{func(d ifd) string { // x/image/ccitt reads G3 1-D, decodeTIFFG3 G3 2-D in strips
		switch {
		case d.compression != 3:
		case d.t4&2 != 0:
			return "CCITT G3 uncompressed mode (T4Options bit 1)"
		case d.t4&4 != 0:
			return "CCITT G3 with fill bits before each EOL (T4Options bit 2)"
		case d.t4&1 != 0 && d.tileW > 0:
			return "CCITT G3 2-D coding in tiles"
		}
		return ""
	}, "with CCITT G4 compression (tiffcp -c g4)"},
	{func(d ifd) string {
		switch d.photometric {
		case 0, 1, 2, 3, 5, 6:
			return ""
		}
		if name, ok := tiffColours[d.photometric]; ok {
			return fmt.Sprintf("the %s colour space (PhotometricInterpretation %d)", name, d.photometric)
		}
		return fmt.Sprintf("a colour space that is not read here (PhotometricInterpretation %d)", d.photometric)
	}, "as RGB or grey"},
	{func(d ifd) string {
		if d.photometric == 6 && d.compression != 7 {
			return "YCbCr pixels that are not JPEG-compressed (PhotometricInterpretation 6)"
		}
		return ""
	}, "as RGB, or with JPEG compression"},
	{func(d ifd) string {
		switch {
		case d.photometric != 5:
		case d.compression == 7:
			return "JPEG-compressed CMYK"
		case d.inkSet != 1 || d.samples != 4 || d.bits != 8:
			return fmt.Sprintf("separated colour other than CMYK at 8 bits a sample (InkSet %d, %d samples)", d.inkSet, d.samples)
		}
		return ""
	}, "as RGB, or as CMYK with LZW or deflate compression"},
	{func(d ifd) string {
		switch d.bits {
		case 1, 8, 16:
			return ""
		case -1:
			return "samples of different bit depths"
		}
		return fmt.Sprintf("%d bits per sample", d.bits)
	}, "with 8 bits per sample (or 1 for a bilevel fax)"},
	{func(d ifd) string {
		switch d.format {
		case 1:
			return ""
		case 2:
			return "signed-integer samples (SampleFormat 2)"
		case 3:
			return "floating-point samples (SampleFormat 3)"
		}
		return fmt.Sprintf("samples of SampleFormat %d", d.format)
	}, "with unsigned 8-bit samples"},
	{func(d ifd) string {
		if d.planar == 2 && d.samples > 1 {
			return "separate colour planes (PlanarConfiguration 2)"
		}
		return ""
	}, "with the samples of each pixel together (PlanarConfiguration 1)"},
	{func(d ifd) string {
		switch d.photometric {
		case 0, 1, 3:
			if d.samples > 1 {
				return fmt.Sprintf("grey or palette pixels with %d samples (an alpha channel)", d.samples)
			}
		case 2:
			if d.samples > 4 || d.samples == 4 && d.extra != 1 && d.extra != 2 {
				return fmt.Sprintf("RGB pixels with %d samples", d.samples)
			}
		}
		return ""
	}, "without an alpha channel or extra samples"},
}

// tiffUnread names the compressions met in the field that nothing here decodes.
var tiffUnread = map[int]string{
	2: "CCITT modified Huffman (RLE)", 6: "old-style JPEG", 32771: "CCITT RLEW", 32809: "ThunderScan",
	34661: "JBIG", 34676: "SGI LogL", 34677: "SGI LogLuv", 34712: "JPEG 2000", 34887: "LERC",
	34925: "LZMA", 50000: "Zstandard", 50001: "WebP", 50002: "JPEG XL",
}

// tiffColours names the colour spaces (PhotometricInterpretation) that nothing here decodes.
var tiffColours = map[int]string{
	4: "transparency mask", 8: "CIE L*a*b*", 9: "ICC L*a*b*", 10: "ITU L*a*b*", 32803: "CFA (raw sensor)",
	32844: "LogL", 32845: "LogLuv", 34892: "linear raw",
}

// tiffSupported refuses page i (from 0), whose directory is d, when it uses a feature of the
// table.
func tiffSupported(d ifd, i int) error {
	for _, f := range tiffFeatures {
		if name := f.feature(d); name != "" {
			return problem.Errorf(problem.UnsupportedMediaType,
				"page %d of the TIFF uses %s, which is not read here; save it again %s, or as a PDF", i+1, name, f.instead)
		}
	}
	return nil
}
