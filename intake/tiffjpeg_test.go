package intake

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"io"
	"testing"

	"github.com/ocrdraft/ocrdraft/problem"
)

// TestTIFFHugeTile: a tile declared 2³¹×2³¹ on a 64×64 page (from an independent review: its
// cost wrapped to nothing, and a block of any size was then decoded, 868 MB for a 10 MB file)
// is damage, refused from the header before anything is decoded.
func TestTIFFHugeTile(t *testing.T) {
	decoded := false
	p := New(Limits{}, testRuntime)
	p.dec = func(f format, r io.Reader, next decoder) (image.Image, error) { decoded = true; return next(r) }
	_, err := p.Prepare(t.Context(), hugeTileTIFF(64))
	if problem.CodeOf(err) != problem.ImageUnreadable || decoded {
		t.Fatalf("got %v (decoded %v); want image_unreadable before decoding", err, decoded)
	}
}

// A 64×64 JPEG-compressed TIFF page whose one tile is declared 2^31×2^31: the cost's 8*bw*bh
// wraps to 0, and the JPEG-block decoder took a block of any size up to that "place".
func hugeTileTIFF(side int) []byte {
	var jb bytes.Buffer
	jpeg.Encode(&jb, image.NewGray(image.Rect(0, 0, side, side)), &jpeg.Options{Quality: 10})
	j := jb.Bytes()
	le := binary.LittleEndian
	out := []byte("II*\x00")
	out = le.AppendUint32(out, 8)
	type ent struct {
		tag, typ uint16
		v        uint32
	}
	ents := []ent{{256, 4, 64}, {257, 4, 64}, {258, 3, 8}, {259, 3, 7}, {262, 3, 1}, {277, 3, 1},
		{322, 4, 1 << 31}, {323, 4, 1 << 31}, {324, 4, 0}, {325, 4, uint32(len(j))}}
	dataAt := uint32(8 + 2 + 12*len(ents) + 4)
	ents[8].v = dataAt
	out = le.AppendUint16(out, uint16(len(ents)))
	for _, e := range ents {
		out = le.AppendUint16(out, e.tag)
		out = le.AppendUint16(out, e.typ)
		out = le.AppendUint32(out, 1)
		if e.typ == 3 {
			out = le.AppendUint16(out, uint16(e.v))
			out = le.AppendUint16(out, 0)
		} else {
			out = le.AppendUint32(out, e.v)
		}
	}
	out = le.AppendUint32(out, 0)
	return append(out, j...)
}
