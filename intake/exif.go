package intake

import (
	"bytes"
	"encoding/binary"
)

// orientation returns the EXIF orientation (1–8) of a JPEG, and 1 when there is none or it cannot
// be read. Phones store photos as the sensor saw them and record the turn in this one tag; a model
// shown the raw pixels reads a lab report lying on its side.
//
// It is a small hand parser rather than a dependency: rwcarlsen/goexif was last released in 2019,
// and dsoprea/go-exif/v3 (last release 2022) brings its own logging and utility modules, geo,
// go-flags and yaml; one tag in IFD0 takes fifty lines. It reads only within data and is fuzzed.
func orientation(data []byte) int {
	o := 1
	walkJPEG(data, func(s jpegSeg) bool {
		switch {
		case s.marker == 0xda || s.marker == 0xd9: // EXIF comes before the first scan
			return false
		case s.marker == 0xe1 && bytes.HasPrefix(s.body, []byte("Exif\x00\x00")):
			o = tiffOrientation(s.body[6:])
			return false
		}
		return true
	})
	return o
}

// tiffOrientation reads tag 0x0112 from IFD0 of a TIFF header, as EXIF embeds one.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	off := uint64(bo.Uint32(t[4:]))
	if off < 8 || off+2 > uint64(len(t)) {
		return 1
	}
	n := uint64(bo.Uint16(t[off:]))
	for k := uint64(0); k < n; k++ {
		e := off + 2 + 12*k
		if e+12 > uint64(len(t)) {
			return 1
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		var v uint32
		switch typ, count := bo.Uint16(t[e+2:]), bo.Uint32(t[e+4:]); {
		case typ == 3 && count == 1: // SHORT, as the standard says
			v = uint32(bo.Uint16(t[e+8:]))
		case typ == 4 && count == 1: // LONG, written by a few tools
			v = bo.Uint32(t[e+8:])
		}
		if v < 1 || v > 8 {
			return 1
		}
		return int(v)
	}
	return 1
}
