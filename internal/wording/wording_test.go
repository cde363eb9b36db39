package wording

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
	for _, x := range Texts {
		if x.Zh == "" || !slices.Equal(names(x.En), names(x.Zh)) {
			t.Errorf("%s %s: zh %q speaks of %v, en of %v", x.Code, x.Reason, x.Zh, names(x.Zh), names(x.En))
		}
	}
}
