package check

import (
	"regexp"
	"slices"
	"testing"
)

// TestTextsZh: every message has its Chinese text, speaking of the same params.
func TestTextsZh(t *testing.T) {
	ph := regexp.MustCompile(`\{\w+\}`)
	names := func(s string) []string {
		n := ph.FindAllString(s, -1)
		slices.Sort(n)
		return slices.Compact(n)
	}
	for _, x := range texts {
		if x.zh == "" || !slices.Equal(names(x.en), names(x.zh)) {
			t.Errorf("%s %s: zh %q speaks of %v, en of %v", x.code, x.reason, x.zh, names(x.zh), names(x.en))
		}
	}
}
