package doctable

import "testing"

func TestReplace(t *testing.T) {
	src := "# t\n\n<!-- generated: x (go test -update) -->\n| old |\n<!-- end: x -->\nafter\n"
	got, err := Replace([]byte(src), "x", "| new |\n| two |")
	if err != nil {
		t.Fatal(err)
	}
	want := "# t\n\n<!-- generated: x (go test -update) -->\n| new |\n| two |\n<!-- end: x -->\nafter\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"no markers", "<!-- generated: x -->\nno end", "<!-- generated: x"} {
		if _, err := Replace([]byte(bad), "x", "b"); err == nil {
			t.Errorf("Replace(%q) = nil error", bad)
		}
	}
	if r := Row("a|b", "c"); r != "| a\\|b | c |\n" {
		t.Errorf("Row = %q", r)
	}
}
