package intake

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"reflect"
	"slices"
	"testing"

	"github.com/ocrdraft/ocrdraft/intake/internal/gen"
)

// secrets are the identifying strings the test files carry in their metadata; none may reach a
// page.
var secrets = []string{"Jane Doe", "SN-4711", "Exif", "xmpmeta", "8BIM", "MPF\x00", "1970-01-01"}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// seg is one JPEG marker segment.
func seg(m byte, payload string) []byte {
	return cat([]byte{0xff, m, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)}, []byte(payload))
}

// exifGPS is an APP1 Exif payload as a phone writes one: IFD0 with the orientation, the owner as
// Artist and pointers to an Exif IFD (the body serial number) and a GPS IFD (latitude and
// longitude).
func exifGPS(orient int) string {
	le := binary.LittleEndian
	const (
		ifd0   = 8
		exif   = ifd0 + 2 + 4*12 + 4
		gps    = exif + 2 + 1*12 + 4
		data   = gps + 2 + 4*12 + 4
		artist = "Jane Doe\x00"
		serial = "SN-4711-0042\x00"
	)
	b := []byte("II\x2a\x00\x08\x00\x00\x00")
	entry := func(tag, typ uint16, count, value uint32) {
		b = le.AppendUint16(b, tag)
		b = le.AppendUint16(b, typ)
		b = le.AppendUint32(b, count)
		b = le.AppendUint32(b, value)
	}
	b = le.AppendUint16(b, 4)
	entry(0x0112, 3, 1, uint32(orient))           // Orientation, SHORT
	entry(0x013b, 2, uint32(len(artist)), data)   // Artist, ASCII
	entry(0x8769, 4, 1, exif)                     // Exif IFD
	entry(0x8825, 4, 1, gps)                      // GPS IFD
	b = le.AppendUint32(b, 0)                     // no IFD1
	b = le.AppendUint16(b, 1)                     // Exif IFD:
	entry(0xa431, 2, uint32(len(serial)), data+9) // BodySerialNumber
	b = le.AppendUint32(b, 0)
	b = le.AppendUint16(b, 4) // GPS IFD:
	entry(1, 2, 2, 'N')       // GPSLatitudeRef, inline
	entry(2, 5, 3, data+9+uint32(len(serial)))
	entry(3, 2, 2, 'E') // GPSLongitudeRef
	entry(4, 5, 3, data+9+uint32(len(serial))+24)
	b = le.AppendUint32(b, 0)
	b = append(b, artist+serial...)
	for _, r := range []uint32{30, 1, 15, 1, 3012, 100, 120, 1, 9, 1, 4407, 100} { // 30°15'30.12"N 120°9'44.07"E
		b = le.AppendUint32(b, r)
	}
	return "Exif\x00\x00" + string(b)
}

// baseJPEG is a 96×64 colour JPEG as Go writes it: SOI, tables, frame, one scan, EOI; no APPn.
func baseJPEG(t testing.TB) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, gen.Photo(96, 64), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The segments of a camera JPEG: those kept, then those dropped.
var (
	soi   = []byte{0xff, 0xd8}
	eoi   = []byte{0xff, 0xd9}
	app0  = seg(0xe0, "JFIF\x00\x01\x02\x01\x00\x48\x00\x48\x00\x00")
	icc   = seg(0xe2, "ICC_PROFILE\x00\x01\x01\x00\x00\x02\x30lcms\x02\x10\x00\x00mntrRGB XYZ ")
	adobe = seg(0xee, "Adobe\x00\x64\x00\x00\x00\x00\x01") // transform 1: YCbCr

	xmp   = seg(0xe1, "http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta><dc:creator>Jane Doe</dc:creator></x:xmpmeta>")
	mpf   = seg(0xe2, "MPF\x00MM\x00\x2a\x00\x00\x00\x08")
	jfxx  = seg(0xe0, "JFXX\x00\x13Jane Doe")
	ciff  = seg(0xe0, "\x1a\x00HEAPCCDROwner: Jane Doe")
	iptc  = seg(0xed, "Photoshop 3.0\x008BIM\x04\x04\x00\x00\x00\x00\x00\x0c\x1c\x02\x50\x00\x08Jane Doe")
	ducky = seg(0xec, "Ducky\x00\x01\x00\x04\x00\x00\x00\x5a")
	app15 = seg(0xef, "Jane Doe")
	com   = seg(0xfe, "Patient: Jane Doe, born 1970-01-01")
)

// cameraJPEG is baseJPEG with everything a phone and an editor add: metadata before the frame,
// a comment between the scan and EOI, a second image after EOI. want is what stripping leaves.
func cameraJPEG(t testing.TB, orient int) (in, want []byte) {
	base := baseJPEG(t)
	exif := seg(0xe1, exifGPS(orient))
	trailer := cat(soi, exif, []byte("a depth map"), eoi)
	body := base[2 : len(base)-2] // tables, frame, scan
	in = cat(soi, app0, exif, xmp, icc, mpf, iptc, ducky, adobe, app15, com, body, seg(0xe1, exifGPS(orient)), com, eoi, trailer)
	want = cat(soi, app0, icc, adobe, body, eoi)
	return in, want
}

// chunk is one PNG chunk, CRC included.
func chunk(typ, data string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ+data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// metaPNG is a PNG of m with what phones and editors add after IHDR: colour chunks (kept), text,
// EXIF, time and a private chunk (dropped), and bytes after IEND. want is what stripping leaves.
func metaPNG(t testing.TB, m image.Image, extra ...[]byte) (in, want []byte) {
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	base := b.Bytes()
	head, rest := base[:8+25], base[8+25:] // signature and IHDR; then IDAT, IEND
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("Patient Jane Doe, born 1970-01-01"))
	zw.Close()
	colour := cat(chunk("gAMA", "\x00\x00\xb1\x8f"), chunk("sRGB", "\x00"), chunk("pHYs", "\x00\x00\x0b\x13\x00\x00\x0b\x13\x01"))
	meta := cat(
		chunk("tEXt", "Author\x00Jane Doe"),
		chunk("zTXt", "Comment\x00\x00"+z.String()),
		chunk("iTXt", "XML:com.adobe.xmp\x00\x00\x00\x00\x00<x:xmpmeta>Jane Doe</x:xmpmeta>"),
		chunk("eXIf", exifGPS(1)[6:]),
		chunk("tIME", "\x07\xea\x03\x05\x09\x1e\x00"),
		chunk("prVt", "Jane Doe"),
	)
	in = cat(head, colour, meta, cat(extra...), rest, []byte("Jane Doe"))
	want = cat(head, colour, rest)
	return in, want
}

// TestStrip covers the walks on their own: what is kept, what is dropped, and the layouts they
// refuse (nil want), which Prepare re-encodes instead.
func TestStrip(t *testing.T) {
	base := baseJPEG(t)
	body := base[2 : len(base)-2]
	camera, cameraWant := cameraJPEG(t, 1)
	opaque, opaqueWant := metaPNG(t, gen.Photo(64, 48))
	var plainPNG bytes.Buffer
	png.Encode(&plainPNG, gen.Paletted(40, 30))
	tests := []struct {
		name string
		kind string
		in   []byte
		want []byte // nil: refused
	}{
		// JPEG: kept and dropped.
		{"camera JPEG", "jpeg", camera, cameraWant},
		{"Go's own JPEG: nothing to remove", "jpeg", base, base},
		{"APP0 other than JFIF", "jpeg", cat(soi, ciff, jfxx, body, eoi), base},
		{"fill bytes before a dropped segment", "jpeg", cat(soi, []byte{0xff, 0xff}, xmp, body, eoi), cat(soi, []byte{0xff, 0xff}, body, eoi)},
		{"stray RST after the scan", "jpeg", cat(soi, body, []byte{0xff, 0xd3}, eoi), cat(soi, body, []byte{0xff, 0xd3}, eoi)},
		{"APP1 between the scan and EOI", "jpeg", cat(soi, body, xmp, eoi), base},
		{"trailer after EOI", "jpeg", cat(base, []byte("SEFH Jane Doe")), base},

		// JPEG: refused.
		{"not a JPEG", "jpeg", []byte("GIF89a"), nil},
		{"empty", "jpeg", nil, nil},
		{"SOI only", "jpeg", soi, nil},
		{"bytes between segments", "jpeg", cat(soi, app0, []byte{0, 0}, body, eoi), nil},
		{"segment past the end", "jpeg", cat(soi, []byte{0xff, 0xe1, 0xff, 0xff}, []byte("Exif\x00\x00")), nil},
		{"length below 2", "jpeg", cat(soi, []byte{0xff, 0xe1, 0x00, 0x01}, body, eoi), nil},
		{"second SOI", "jpeg", cat(soi, soi, body, eoi), nil},
		{"no EOI", "jpeg", base[:len(base)-2], nil},
		{"cut at a marker", "jpeg", cat(soi, app0, []byte{0xff}), nil},
		{"JFXX after JFIF", "jpeg", cat(soi, app0, jfxx, body, eoi), nil}, // Go would read it as not JFIF

		// PNG.
		{"PNG with text, EXIF and time", "png", opaque, opaqueWant},
		{"Go's own PNG: nothing to remove", "png", plainPNG.Bytes(), plainPNG.Bytes()},
		{"PNG cut in a chunk", "png", opaque[:100], nil},
		{"PNG without IEND", "png", opaque[:len(opaque)-len("Jane Doe")-12], nil},
		{"unknown critical chunk", "png", func() []byte { b, _ := metaPNG(t, gen.Photo(64, 48), chunk("CRIT", "")); return b }(), nil},
		{"chunk longer than 2³¹-1", "png", cat(opaque[:33], []byte{0x80, 0, 0, 0}, []byte("tEXt")), nil},

		{"WebP", "webp", read(t, "bilevel.webp"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := strip(tt.kind, tt.in)
			if tt.want == nil {
				if ok {
					t.Fatalf("got %d bytes, want the file refused", len(got))
				}
				return
			}
			if !ok {
				t.Fatal("refused")
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %d bytes, want %d\ngot  %q\nwant %q", len(got), len(tt.want), head(got), head(tt.want))
			}
			if len(got) == len(tt.in) && &got[0] != &tt.in[0] {
				t.Error("nothing removed, but the file was copied")
			}
			for _, s := range secrets {
				if bytes.Contains(got, []byte(s)) {
					t.Errorf("output holds %q", s)
				}
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 64)] }

// TestPrepareStrips sends uploads that go as their own bytes: the page holds no metadata, keeps
// the segments and chunks that set its colours, and decodes to exactly the upload's pixels.
func TestPrepareStrips(t *testing.T) {
	camera, cameraWant := cameraJPEG(t, 1)
	opaque, opaqueWant := metaPNG(t, gen.Photo(64, 48))
	tests := []struct {
		name    string
		in      []byte
		want    []byte
		markers []byte // of the JPEG header, SOI to SOS
		chunks  []string
	}{
		{name: "camera JPEG", in: camera, want: cameraWant, markers: []byte{0xe0, 0xe2, 0xee, 0xdb, 0xc0, 0xc4, 0xda}},
		{name: "PNG", in: opaque, want: opaqueWant, chunks: []string{"IHDR", "gAMA", "sRGB", "pHYs", "IDAT", "IEND"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if o := orientation(tt.in); o != 1 {
				t.Fatalf("orientation %d, want 1", o)
			}
			page, err := New(Limits{}, testRuntime).Prepare(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if page.Reencoded || page.Stripped != len(tt.in)-len(tt.want) || page.BytesOut != len(page.Data) || page.BytesIn != len(tt.in) {
				t.Fatalf("reencoded=%v stripped=%d in=%d out=%d; want as its own bytes, %d stripped",
					page.Reencoded, page.Stripped, page.BytesIn, page.BytesOut, len(tt.in)-len(tt.want))
			}
			if !bytes.Equal(page.Data, tt.want) {
				t.Fatalf("page is not the upload without its metadata:\n got %q\nwant %q", head(page.Data), head(tt.want))
			}
			if tt.markers != nil {
				if got := headerMarkers(t, page.Data); !bytes.Equal(got, tt.markers) {
					t.Errorf("segments % x, want % x", got, tt.markers)
				}
			}
			if tt.chunks != nil {
				if got := chunkTypes(t, page.Data); !slices.Equal(got, tt.chunks) {
					t.Errorf("chunks %q, want %q", got, tt.chunks)
				}
			}
			for _, s := range secrets {
				if bytes.Contains(page.Data, []byte(s)) {
					t.Errorf("page holds %q", s)
				}
			}
			in, _, err := image.Decode(bytes.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := image.Decode(bytes.NewReader(page.Data))
			if err != nil {
				t.Fatalf("the page does not decode: %v", err)
			}
			if !samePixels(in, out) {
				t.Error("the page's pixels differ from the upload's")
			}
		})
	}
}

// TestReencodedCarriesNoMetadata checks the other way to the model: a page that is re-encoded
// (turned, shrunk, flattened, or refused by the walk) holds no APPn or COM segment and nothing
// after EOI, whatever the upload held.
func TestReencodedCarriesNoMetadata(t *testing.T) {
	turned, _ := cameraJPEG(t, 6)
	upright, _ := cameraJPEG(t, 1)
	junk := bytes.Replace(upright, icc, cat(icc, []byte{0, 0}), 1) // Go skips bytes between segments; the walk refuses them
	alpha := image.NewNRGBA(image.Rect(0, 0, 64, 48))
	for i := range alpha.Pix {
		alpha.Pix[i] = byte(i)
	}
	withAlpha, _ := metaPNG(t, alpha)
	critical, _ := metaPNG(t, gen.Photo(64, 48), chunk("CRIT", ""))
	tests := []struct {
		name   string
		in     []byte
		limits Limits
		w, h   int
	}{
		{"JPEG with orientation 6 and GPS", turned, Limits{}, 64, 96},
		{"JPEG shrunk", upright, Limits{MaxEdge: 48}, 48, 32},
		{"JPEG the walk refuses", junk, Limits{}, 96, 64},
		{"PNG with alpha", withAlpha, Limits{}, 64, 48},
		{"PNG with an unknown critical chunk", critical, Limits{}, 64, 48},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := New(tt.limits, testRuntime).Prepare(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !page.Reencoded || page.Stripped != 0 || page.MIME != "image/jpeg" || page.Width != tt.w || page.Height != tt.h {
				t.Fatalf("got %s %d×%d reencoded=%v stripped=%d, want a re-encoded %d×%d JPEG",
					page.MIME, page.Width, page.Height, page.Reencoded, page.Stripped, tt.w, tt.h)
			}
			for _, m := range headerMarkers(t, page.Data) {
				if m >= 0xe0 && m <= 0xef || m == 0xfe {
					t.Errorf("page has a %#x segment", m)
				}
			}
			if !bytes.HasSuffix(page.Data, eoi) {
				t.Error("page does not end at EOI")
			}
			for _, s := range secrets {
				if bytes.Contains(page.Data, []byte(s)) {
					t.Errorf("page holds %q", s)
				}
			}
			if _, err := jpeg.Decode(bytes.NewReader(page.Data)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// headerMarkers lists the markers of a JPEG's segments after SOI, up to and including SOS: a
// walk written apart from the one under test.
func headerMarkers(t *testing.T, b []byte) []byte {
	t.Helper()
	var ms []byte
	for i := 2; i+4 <= len(b) && b[i] == 0xff; i += 2 + int(binary.BigEndian.Uint16(b[i+2:])) {
		ms = append(ms, b[i+1])
		if b[i+1] == 0xda {
			return ms
		}
	}
	t.Fatalf("no SOS after % x", ms)
	return nil
}

// chunkTypes lists a PNG's chunk types.
func chunkTypes(t *testing.T, b []byte) []string {
	t.Helper()
	var types []string
	for i := 8; i+12 <= len(b); i += 12 + int(binary.BigEndian.Uint32(b[i:])) {
		types = append(types, string(b[i+4:i+8]))
	}
	return types
}

// samePixels reports whether two decodings are identical, colour model included.
func samePixels(a, b image.Image) bool { return reflect.DeepEqual(a, b) }

// strip is the strip of the row of kind, for the tests: ok is false for a kind without one.
func strip(kind string, data []byte) ([]byte, bool) {
	for _, f := range formats {
		if f.kind == kind && f.strip != nil {
			return f.strip(data)
		}
	}
	return nil, false
}
