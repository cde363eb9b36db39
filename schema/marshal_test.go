package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestMarshalLeavesEscapingToTheCaller: a draft with <, > and & comes out as written through an
// encoder that does not escape HTML, and escaped through json.Marshal, which does.
func TestMarshalLeavesEscapingToTheCaller(t *testing.T) {
	text, title := "<0.5", "A&B <panel>"
	d := Result{Draft: OcrDraft{Title: &title, Indicators: []OcrIndicator{{ItemName: "C&D", ValueText: &text}}}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"A&B <panel>"`, `"C&D"`, `"<0.5"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("unescaped encoding lacks %s: %s", want, b.String())
		}
	}
	m, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), `"\u003c0.5"`) {
		t.Errorf("json.Marshal should still escape: %s", m)
	}
}
