package bmp

import (
	"encoding/binary"
	"image"
	"strings"
	"testing"
)

// TestBMPRLEStreams decodes hand-written RLE8 streams of a 4×2 bitmap (rows from the bottom,
// palette of 4): moves, runs cut at the end of their row, stretches and their padding, and the
// streams that end too soon.
func TestBMPRLEStreams(t *testing.T) {
	tests := []struct {
		name    string
		stream  []byte
		topDown bool
		want    string // the indices, top row first; "" for an error
	}{
		{"runs and ends of line", []byte{4, 1, 0, 0, 2, 2, 2, 3, 0, 1}, false, "2233" + "1111"},
		{"top down", []byte{4, 1, 0, 0, 2, 2, 2, 3, 0, 1}, true, "1111" + "2233"},
		{"a run cut at the row's end", []byte{9, 1, 0, 0, 4, 2, 0, 1}, false, "2222" + "1111"},
		{"a stretch of 3, padded", []byte{0, 3, 1, 2, 3, 0, 1, 1, 0, 0, 4, 2, 0, 1}, false, "2222" + "1231"},
		{"a move over skipped pixels", []byte{1, 3, 0, 2, 2, 1, 1, 3, 0, 1}, false, "0003" + "3000"},
		{"no end of bitmap after the last row", []byte{4, 1, 0, 0, 4, 2, 0, 0}, false, "2222" + "1111"},
		{"what follows the bitmap is not read", []byte{4, 1, 0, 0, 4, 2, 0, 1, 0xff}, false, "2222" + "1111"},
		{"ends before the bitmap", []byte{4, 1, 0, 0}, false, ""},
		{"ends in a stretch", []byte{0, 4, 1, 2}, false, ""},
		{"an index past the palette", []byte{4, 9, 0, 1}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := 2
			if tt.topDown {
				h = -2
			}
			le := binary.LittleEndian
			data := []byte("BM\x00\x00\x00\x00\x00\x00\x00\x00")
			data = le.AppendUint32(data, 14+40+16)
			for _, v := range []uint32{40, 4, uint32(h)} {
				data = le.AppendUint32(data, v)
			}
			data = le.AppendUint16(le.AppendUint16(data, 1), 8)
			for _, v := range []uint32{1, uint32(len(tt.stream)), 0, 0, 4, 0} {
				data = le.AppendUint32(data, v)
			}
			data = append(data, make([]byte, 16)...)
			data = append(data, tt.stream...)
			b, err := readBMP(data)
			if err != nil || !b.rle() {
				t.Fatalf("readBMP: %+v, %v", b, err)
			}
			m, err := decodeRLE(data, b)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, v := range m.(*image.Paletted).Pix {
				got.WriteByte('0' + v)
			}
			if got.String() != tt.want {
				t.Errorf("got %s, want %s", got.String(), tt.want)
			}
		})
	}
}
