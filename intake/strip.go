package intake

import (
	"encoding/binary"
)

// appKeep names, by APPn number, the only application segments a JPEG keeps, each by the
// identifier its payload starts with: those that change how the pixels are shown. Every other
// APPn (APP1 Exif and XMP, APP13 IPTC and Photoshop, MPF and FlashPix in APP2, Canon CIFF and
// JFXX thumbnails in APP0, …) and every COM segment is dropped; every segment that is not APPn or
// COM (tables, frame, scan, restart interval) is kept.
var appKeep = [16]string{
	0:  "JFIF\x00",        // APP0: YCbCr rather than RGB, and the pixel density
	2:  "ICC_PROFILE\x00", // APP2: the colour profile, in as many segments as it takes
	14: "Adobe",           // APP14: the colour transform (YCbCr or RGB, YCCK or CMYK)
}

// stripJPEG and stripPNG return a JPEG or PNG without its metadata, losslessly: whole segments or chunks are left
// out, nothing is decoded, and every byte kept is copied as it is. out is data itself when there
// is nothing to remove. ok is false when the file is not laid out as the walk expects (bytes
// between segments, a length past the end, no end of image, an unknown critical PNG chunk); the
// caller then re-encodes rather than send bytes it has not read.
//
// It removes what cameras, phones and editors write. It is not a defence against data hidden on
// purpose inside the compressed pixels, which a sender could as well write on the page.
//
// stripJPEG walks every marker segment, before the first scan and between scans, drops those
// appKeep does not keep, and ends the file at EOI: phones append a second image (a depth or gain
// map, with EXIF of its own) or a maker's trailer after it. Entropy-coded data is copied
// verbatim. Junk between segments, which decoders skip, makes it refuse: the file is re-encoded.
func stripJPEG(data []byte) ([]byte, bool) {
	k := keeper{data: data}
	k.keep(0, 2)
	jfif, bad := false, false
	eoi := walkJPEG(data, func(s jpegSeg) bool {
		m, p := s.marker, s.body
		if s.fill < s.at {
			k.keep(s.fill, s.at)
		}
		switch {
		case s.junk || m == 0x00:
			bad = true
		case m == 0xe0 && hasPrefix(p, appKeep[0]):
			jfif = true
			k.keep(s.at, s.end)
		case m == 0xe0 && jfif:
			// Go's decoder lets the last APP0 decide whether the file is JFIF (and so YCbCr);
			// dropping this one could change the colours it decodes.
			bad = true
		case m >= 0xe0 && m <= 0xef:
			if id := appKeep[m-0xe0]; id != "" && hasPrefix(p, id) {
				k.keep(s.at, s.end)
			}
		case m == 0xfe: // COM
		default: // tables, frame, scans with their data, RSTn, EOI
			k.keep(s.at, s.end)
		}
		return !bad
	})
	if !eoi || bad {
		return nil, false
	}
	return k.bytes(), true
}

func hasPrefix(p []byte, id string) bool {
	return len(p) >= len(id) && string(p[:len(id)]) == id
}

// pngKeep is the set of chunks a PNG keeps: the critical ones and the ancillary ones that change
// how its pixels are shown. Every other ancillary chunk is dropped: tEXt, zTXt and iTXt (author,
// software, comments, often a full XMP packet), eXIf, tIME, APNG frames (the model is sent the
// still image that intake decoded), and private chunks nobody here can read. An unknown critical
// chunk stops the walk: decoders that follow the standard refuse the file.
var pngKeep = map[string]bool{
	"IHDR": true, "PLTE": true, "IDAT": true, "IEND": true,
	"tRNS": true, "gAMA": true, "cHRM": true, "sRGB": true, "iCCP": true, "sBIT": true, "bKGD": true, "pHYs": true,
	"cICP": true, "mDCV": true, "cLLI": true, // colour space and HDR levels (PNG third edition)
}

// stripPNG walks the chunks, drops those pngKeep does not keep, and ends the file at IEND. It
// does not check CRCs: the decoder that accepted the file did, and every chunk kept is copied
// whole, CRC included.
func stripPNG(data []byte) ([]byte, bool) {
	const sig = "\x89PNG\r\n\x1a\n"
	if !hasPrefix(data, sig) {
		return nil, false
	}
	k := keeper{data: data}
	k.keep(0, len(sig))
	for i := len(sig); ; {
		if i+12 > len(data) {
			return nil, false
		}
		n := uint64(binary.BigEndian.Uint32(data[i:]))
		if n > 1<<31-1 || uint64(i)+12+n > uint64(len(data)) {
			return nil, false
		}
		end, typ := i+12+int(n), data[i+4:i+8]
		switch {
		case pngKeep[string(typ)]:
			k.keep(i, end)
			if string(typ) == "IEND" { // what follows is no part of this image
				return k.bytes(), true
			}
		case typ[0]&0x20 == 0: // critical
			return nil, false
		}
		i = end
	}
}

// keeper collects the byte ranges of data to keep, merging neighbours, so that a file with
// nothing to remove comes back as itself, without a copy.
type keeper struct {
	data []byte
	runs [][2]int
}

func (k *keeper) keep(from, to int) {
	if n := len(k.runs); n > 0 && k.runs[n-1][1] == from {
		k.runs[n-1][1] = to
		return
	}
	k.runs = append(k.runs, [2]int{from, to})
}

func (k *keeper) bytes() []byte {
	if len(k.runs) == 1 && k.runs[0] == [2]int{0, len(k.data)} {
		return k.data
	}
	n := 0
	for _, r := range k.runs {
		n += r[1] - r[0]
	}
	out := make([]byte, 0, n)
	for _, r := range k.runs {
		out = append(out, k.data[r[0]:r[1]]...)
	}
	return out
}
