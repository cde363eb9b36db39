package lexicon

import (
	"strings"
	"unicode/utf8"
)

// Simplify folds each Traditional Chinese character of s to its Simplified form with the OpenCC
// table lookup already uses (標題 → 标题, 參考範圍 → 参考范围), so that other packages can
// match keys and words written in Traditional the way names are matched here. It returns s
// itself, without allocating, when nothing changes (ASCII and Simplified text).
func Simplify(s string) string {
	i := 0
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if t2s(r) != r {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		b.WriteRune(t2s(r))
	}
	return b.String()
}
