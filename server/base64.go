package server

import (
	"fmt"
	"strings"

	"github.com/ocrdraft/ocrdraft/problem"
)

// b64 maps a character of either base64 alphabet (RFC 4648 §4 standard, §5 URL-safe) to its
// value, and every other byte to 0xff.
var b64 = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(std) {
		t[std[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

// decodeImage decodes a page image sent as base64 text, as clients send it: the standard or the
// URL-safe alphabet, padded or not, broken into lines (MIME) or indented, or as a data: URL.
// A text that is none of these is named exactly: the byte where it goes wrong, or what is
// missing. The image is decoded into one buffer of its final size, in two passes over the text
// (check and count, then decode), so the work is linear and the size is refused before any of
// it is spent. The error's detail reads after "images[i].data ".
func decodeImage(s string, max int64) ([]byte, *problem.Error) {
	start := 0
	if strings.HasPrefix(s, "data:") { // a data URL: the type is sniffed anyway
		if i := strings.IndexByte(s, ','); i >= 0 {
			start = i + 1
		}
	}
	n, pad := 0, 0 // characters of the alphabet, and of padding
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case b64[c] != 0xff && pad == 0:
			n++
		case b64[c] != 0xff:
			return nil, notBase64("byte %d, %s, comes after the = padding, which may only end the text", i, show(c))
		case c == '=':
			if pad++; pad > 2 {
				return nil, notBase64("byte %d is a third = of padding; there are at most two", i)
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			return nil, notBase64("byte %d is %s, which is in neither base64 alphabet (A-Z a-z 0-9 + / or - _, then = padding)", i, show(c))
		}
	}
	if n%4 == 1 {
		return nil, notBase64("has %d characters, one more than whole bytes take: a character is missing or one is extra", n)
	}
	size := n/4*3 + [4]int{0, 0, 1, 2}[n%4]
	if int64(size) > max {
		return nil, problem.Errorf(problem.PayloadTooLarge, "is larger than the %d-byte limit (%d bytes)", max, size)
	}
	out := make([]byte, size)
	var acc uint32
	k, j := 0, 0
	for i := start; i < len(s); i++ {
		v := b64[s[i]]
		if v == 0xff { // white space or padding, checked above
			continue
		}
		acc = acc<<6 | uint32(v)
		if k++; k == 4 {
			out[j], out[j+1], out[j+2] = byte(acc>>16), byte(acc>>8), byte(acc)
			j, k, acc = j+3, 0, 0
		}
	}
	switch k {
	case 2:
		out[j] = byte(acc >> 4)
	case 3:
		out[j], out[j+1] = byte(acc>>10), byte(acc>>2)
	}
	return out, nil
}

func notBase64(format string, args ...any) *problem.Error {
	return problem.Errorf(problem.InvalidRequest, "is not base64: "+format, args...)
}

// show names a byte for a detail: a printable one quoted, any other by its value, so that
// nothing the caller sent is echoed raw.
func show(c byte) string {
	if c > ' ' && c < 0x7f {
		return fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("0x%02x", c)
}
