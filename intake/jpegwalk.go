package intake

import "bytes"

// jpegSeg is one step of walkJPEG: a marker and what belongs to it.
type jpegSeg struct {
	marker  byte
	fill    int    // where the 0xFF fill bytes before the marker begin (at when there are none)
	at, end int    // from the marker to the end of its segment; for SOS, of its entropy-coded data
	body    []byte // the payload after the length, for markers that have one
	junk    bool   // bytes that are not a marker where one should be, which decoders skip
}

// walkJPEG visits a JPEG's markers from SOI on, and is the one place intake reads JPEG structure:
// the metadata strip, the EXIF orientation and the decode bounds all walk with it. It finds
// markers where Go's decoder does, so that every scan the decoder will run is visited: a byte
// other than 0xFF, or FF 00, where a marker should be is junk that the decoder skips (so does
// libjpeg), 0xFF fill bytes belong to the marker that follows them, and an SOS segment runs on
// through its entropy-coded data to the first marker that is not RSTn. A walk that finds the data
// cut short visits what it found and stops. It reports whether it ended at EOI; it stops earlier
// when visit returns false or at a second SOI.
func walkJPEG(data []byte, visit func(s jpegSeg) bool) (eoi bool) {
	if len(data) < 2 || data[0] != 0xff || data[1] != 0xd8 {
		return false
	}
	for i := 2; i < len(data); {
		if data[i] != 0xff || i+1 < len(data) && data[i+1] == 0x00 {
			end := i + 2
			if data[i] != 0xff { // up to the next 0xFF
				end = len(data)
				if j := bytes.IndexByte(data[i:], 0xff); j >= 0 {
					end = i + j
				}
			}
			if !visit(jpegSeg{fill: i, at: i, end: end, junk: true}) {
				return false
			}
			i = end
			continue
		}
		fill := i
		for i < len(data) && data[i] == 0xff {
			i++
		}
		if i == len(data) {
			return false
		}
		at, m := i-1, data[i]
		i++
		switch {
		case m == 0xd8:
			return false
		case m == 0xd9: // EOI: what follows is no part of this image
			visit(jpegSeg{marker: m, fill: fill, at: at, end: i})
			return true
		case m >= 0xd0 && m <= 0xd7 || m == 0x01: // RSTn (a stray one after the last scan is common), TEM
			if !visit(jpegSeg{marker: m, fill: fill, at: at, end: i}) {
				return false
			}
			continue
		}
		if i+2 > len(data) {
			return false
		}
		n := int(data[i])<<8 | int(data[i+1])
		end := i + n
		if n < 2 || end > len(data) {
			return false
		}
		s := jpegSeg{marker: m, fill: fill, at: at, end: end, body: data[i+2 : end]}
		cut := false
		if m == 0xda { // entropy-coded data follows, up to the next marker that is not RSTn
			if s.end = entropyEnd(data, end); s.end < 0 {
				s.end, cut = len(data), true
			}
		}
		if !visit(s) || cut {
			return false
		}
		i = s.end
	}
	return false
}

// entropyEnd returns the offset of the first marker at or after i in entropy-coded data, where a
// 0xFF byte is stuffed as 0xFF00 and restart markers belong to the data; -1 if there is none.
func entropyEnd(data []byte, i int) int {
	for {
		j := bytes.IndexByte(data[i:], 0xff)
		if j < 0 || i+j+1 >= len(data) {
			return -1
		}
		i += j
		if m := data[i+1]; m != 0x00 && (m < 0xd0 || m > 0xd7) {
			return i
		}
		i += 2
	}
}
