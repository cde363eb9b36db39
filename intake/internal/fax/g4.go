package fax

import (
	"errors"
	"fmt"
)

// Writer writes codes, most significant bit first.
type Writer struct {
	buf  []byte
	acc  uint64
	n    uint
	puts int // codes written, the work FuzzG4 counts
}

// NewWriter returns a Writer that appends to buf.
func NewWriter(buf []byte) *Writer { return &Writer{buf: buf} }

// Put writes one code.
func (w *Writer) Put(c Code) {
	w.puts++
	w.acc = w.acc<<c.N | uint64(c.Bits&(1<<c.N-1))
	w.n += uint(c.N)
	for w.n >= 8 {
		w.buf = append(w.buf, byte(w.acc>>(w.n-8)))
		w.n -= 8
	}
}

// Run writes a run of n pixels: makeup codes for the multiples of 64, then a terminating code.
func (w *Writer) Run(n int, black bool) {
	term, makeup := WhiteTerm[:], WhiteMakeup[:]
	if black {
		term, makeup = BlackTerm[:], BlackMakeup[:]
	}
	for n >= 2560 {
		w.Put(makeup[len(makeup)-1])
		n -= 2560
	}
	if n >= 64 {
		w.Put(makeup[n/64-1])
		n %= 64
	}
	w.Put(term[n])
}

// Bytes fills the last byte with 0 bits and returns the stream.
func (w *Writer) Bytes() []byte {
	if w.n > 0 {
		w.Put(Code{0, uint32(8 - w.n)})
	}
	return w.buf
}

// runs maps each run code, by colour (0 white, 1 black), to its length.
var runs = func() [2]map[Code]int {
	m := [2]map[Code]int{{}, {}}
	for c, t := range [2][]Code{WhiteTerm[:], BlackTerm[:]} {
		for n, code := range t {
			m[c][code] = n
		}
	}
	for c, t := range [2][]Code{WhiteMakeup[:], BlackMakeup[:]} {
		for k, code := range t {
			m[c][code] = 64 * (k + 1)
		}
	}
	return m
}()

// bitReader reads a strip bit by bit, in either fill order.
type bitReader struct {
	src []byte
	at  int // bits read
	lsb bool
}

func (r *bitReader) bit() (uint32, bool) {
	if r.at >= 8*len(r.src) {
		return 0, false
	}
	b, k := r.src[r.at/8], r.at%8
	r.at++
	if r.lsb {
		return uint32(b>>k) & 1, true
	}
	return uint32(b>>(7-k)) & 1, true
}

// eol reads an EOL: eleven 0 bits or more, then a 1.
func (r *bitReader) eol() bool {
	zeros := 0
	for {
		b, ok := r.bit()
		if !ok {
			return false
		}
		if b == 1 {
			return zeros >= 11
		}
		zeros++
	}
}

// run reads one run of a colour: makeup codes, then a terminating code (at most 13 bits each).
func (r *bitReader) run(black bool) (int, error) {
	table := runs[0]
	if black {
		table = runs[1]
	}
	total := 0
	for {
		var c Code
		for {
			b, ok := r.bit()
			if !ok {
				return 0, errors.New("fax: the strip ends in a run")
			}
			c = Code{c.Bits<<1 | b, c.N + 1}
			if n, ok := table[c]; ok {
				total += n
				if n < 64 {
					return total, nil
				}
				break
			}
			if c.N == 13 {
				return 0, errors.New("fax: invalid run code")
			}
		}
	}
}

// G4 rewrites one strip of CCITT Group 3 2-D (T.4 modified READ: T4Options bit 0, no fill bits,
// no uncompressed mode), rows rows of width pixels, as a Group 4 (T.6) stream of the same
// pixels, appended to dst. Each row of the strip follows an EOL and a tag bit: a 2-D row (tag 0)
// is coded in the modes Group 4 codes in, against the row above as in Group 4, and is copied
// code for code up to the next EOL; a 1-D row (tag 1) is white and black runs, rewritten as
// pairs of runs in horizontal mode. lsb is TIFF's FillOrder 2. The result is at most twice the
// strip and 16 bytes; G4 itself holds 8 bytes a pixel of a row.
func G4(dst, src []byte, lsb bool, width, rows int) ([]byte, error) {
	out, _, err := g4(dst, src, lsb, width, rows)
	return out, err
}

// g4 is G4 that also counts its work: bits read and codes written.
func g4(dst, src []byte, lsb bool, width, rows int) (_ []byte, work int, err error) {
	r := &bitReader{src: src, lsb: lsb}
	w := NewWriter(dst)
	defer func() { work = r.at + w.puts }()
	if !r.eol() {
		return nil, 0, errors.New("fax: no EOL at the start of the strip")
	}
	rs := make([]int, 0, width+2) // a 1-D row's runs
	for row := range rows {
		last := row == rows-1
		tag, ok := r.bit()
		if !ok {
			return nil, 0, fmt.Errorf("fax: the strip ends before row %d", row+1)
		}
		if tag == 1 { // 1-D
			rs = rs[:0]
			for x, black := 0, false; x < width; black = !black {
				n, err := r.run(black)
				if err != nil {
					return nil, 0, err
				}
				if x += n; x > width || len(rs) > width { // runs of no pixels are no more than one a pixel
					return nil, 0, fmt.Errorf("fax: row %d runs past its width", row+1)
				}
				rs = append(rs, n)
			}
			if len(rs)%2 != 0 {
				rs = append(rs, 0)
			}
			for i := 0; i < len(rs); i += 2 {
				w.Put(Horizontal)
				w.Run(rs[i], false)
				w.Run(rs[i+1], true)
			}
			if !last && !r.eol() {
				return nil, 0, fmt.Errorf("fax: no EOL after row %d", row+1)
			}
			continue
		}
		// 2-D: a run of eleven 0 bits or more followed by a 1 is the EOL (no code holds one);
		// the 0 bits before its eleven end the row's last code.
		for zeros := 0; ; {
			b, ok := r.bit()
			if !ok && !last {
				return nil, 0, fmt.Errorf("fax: the strip ends in row %d", row+1)
			}
			if b == 0 && ok {
				zeros++
				continue
			}
			eol := ok && zeros >= 11
			if eol {
				zeros -= 11
			}
			for zeros > 0 {
				k := min(zeros, 24)
				w.Put(Code{0, uint32(k)})
				zeros -= k
			}
			if eol || !ok { // the last row needs no EOL
				break
			}
			w.Put(Code{1, 1})
		}
	}
	w.Put(EOL) // the end of facsimile block
	w.Put(EOL)
	return w.Bytes(), 0, nil
}
