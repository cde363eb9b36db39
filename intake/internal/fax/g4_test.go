package fax

import (
	"bytes"
	"image"
	"math/bits"
	"testing"

	"golang.org/x/image/ccitt"
)

// TestG4 rewrites hand-written G3 2-D strips of 8-pixel rows and decodes the result with
// x/image/ccitt; the strips that break the format are errors, not pictures.
func TestG4(t *testing.T) {
	one, zero := Code{1, 1}, Code{0, 1}
	v0, vr1 := Code{1, 1}, Code{3, 3}
	strip := func(codes ...any) []byte {
		w := NewWriter(nil)
		for _, c := range codes {
			switch c := c.(type) {
			case Code:
				w.Put(c)
			case int: // a run, white when positive, black when negative
				w.Run(max(c, -c), c < 0)
			}
		}
		return w.Bytes()
	}
	tests := []struct {
		name string
		src  []byte
		rows int
		want string // rows of # (black) and . (white); "" for an error
	}{
		{"1-D then 2-D", strip(EOL, one, 3, -2, 3, EOL, zero, v0, v0, v0), 2, "...##..." + "...##..."},
		{"2-D shifted right", strip(EOL, one, 3, -2, 3, EOL, zero, vr1, vr1, v0), 2, "...##..." + "....##.."},
		{"2-D then 1-D, and RTC", strip(EOL, one, 8, EOL, zero, Horizontal, 0, -8, EOL, one, 8, EOL, one, EOL, one), 3, "........" + "########" + "........"},
		{"the last row without EOL", strip(EOL, one, 0, -8, EOL, zero, v0, v0), 2, "########" + "########"},
		{"no EOL at the start", strip(one, 8), 1, ""},
		{"a run past the width", strip(EOL, one, 9), 1, ""},
		{"no EOL between rows", strip(EOL, one, 8, one, 8), 2, ""},
		{"ends in a row before the last", strip(EOL, one, 8, EOL, zero, v0), 3, ""},
		{"ends in a run", strip(EOL, one, 4), 1, ""},
	}
	for _, tt := range tests {
		for _, lsb := range []bool{false, true} {
			src := bytes.Clone(tt.src)
			if lsb { // FillOrder 2: each byte's bits the other way round
				for i, b := range src {
					src[i] = bits.Reverse8(b)
				}
			}
			g4, err := G4(nil, src, lsb, 8, tt.rows)
			if tt.want == "" {
				if err == nil {
					t.Errorf("%s: no error", tt.name)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s (lsb %v): %v", tt.name, lsb, err)
			}
			if len(g4) > 2*len(src)+16 {
				t.Errorf("%s: %d bytes from %d", tt.name, len(g4), len(src))
			}
			m := image.NewGray(image.Rect(0, 0, 8, tt.rows))
			if err := ccitt.DecodeIntoGray(m, bytes.NewReader(g4), ccitt.MSB, ccitt.Group4, nil); err != nil {
				t.Fatalf("%s: the G4 does not decode: %v", tt.name, err)
			}
			got := make([]byte, len(m.Pix))
			for i, v := range m.Pix {
				got[i] = map[bool]byte{true: '.', false: '#'}[v == 0xff]
			}
			if string(got) != tt.want {
				t.Errorf("%s (lsb %v): got %s, want %s", tt.name, lsb, got, tt.want)
			}
		}
	}
}

// FuzzG4 feeds G4 arbitrary strips: it must never panic, its counted work (bits read, codes
// written) stays linear in the strip, and what it returns is at most twice the strip and 16
// bytes, and decodes or fails without panicking.
func FuzzG4(f *testing.F) {
	w := NewWriter(nil)
	for _, c := range []Code{EOL, {1, 1}} {
		w.Put(c)
	}
	w.Run(3, false)
	w.Run(2, true)
	w.Run(3, false)
	w.Put(EOL)
	w.Put(Code{0, 1})
	w.Put(Code{1, 1})
	f.Add(w.Bytes(), 8, 2)
	f.Add([]byte{0, 0x10, 0xff, 0}, 8, 3)
	f.Fuzz(func(t *testing.T, src []byte, width, rows int) {
		width, rows = 1+abs(width)%64, abs(rows)%16
		g4, work, err := g4(nil, src, false, width, rows)
		// The work is linear in the strip: every bit is read once, and every code written stands
		// for a run or mode read in a bit or more (a run codes in three codes at most), two
		// bits a row and the strip's end aside.
		if limit := 40*len(src) + 2*rows + 8; work > limit {
			t.Fatalf("%d steps of work for %d bytes and %d rows; the bound is %d", work, len(src), rows, limit)
		}
		if err != nil {
			return
		}
		if len(g4) > 2*len(src)+16 {
			t.Fatalf("%d bytes from %d", len(g4), len(src))
		}
		m := image.NewGray(image.Rect(0, 0, width, rows))
		ccitt.DecodeIntoGray(m, bytes.NewReader(g4), ccitt.MSB, ccitt.Group4, nil)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
