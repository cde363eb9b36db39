package parse

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode holds our decoder to encoding/json: it accepts exactly what json.Valid accepts (up
// to its nesting bound), and what it decodes re-encodes to the same value, numbers as written.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null],"c":"x\"y\\u00e9\ud83d\ude00"}`, `[1.020, -0, 1e3, 5.60]`, `"\u0000"`,
		`{"总胆固醇":"5.86↑"}`, "\"\xff\"", `{"a":}`, `[1,]`, `01`, `1.`, `"\ud800"`, ` {} `, `{"a":1}{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Count(s, "[")+strings.Count(s, "{") > maxNesting {
			return
		}
		v, err := Decode(s)
		if valid := json.Valid([]byte(s)); valid != (err == nil) {
			t.Fatalf("Decode(%q) err = %v, json.Valid = %v", s, err, valid)
		}
		if err != nil {
			return
		}
		got, _ := v.MarshalJSON()
		var a, b any
		da := json.NewDecoder(strings.NewReader(s))
		da.UseNumber()
		db := json.NewDecoder(bytes.NewReader(got))
		db.UseNumber()
		if err := da.Decode(&a); err != nil {
			t.Fatal(err)
		}
		if err := db.Decode(&b); err != nil {
			t.Fatalf("re-encoded %q is not JSON: %v", got, err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("Decode(%q) differs from encoding/json (-json +ours):\n%s", s, diff)
		}
	})
}
