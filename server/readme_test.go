package server_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/ocrdraft/ocrdraft/extract"
)

// TestREADMEResponse: the README's full /v1/extract response is one the code could send: it
// decodes into extract.Response with no unknown key, and has every key the code writes.
func TestREADMEResponse(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README has no ```json block")
	}
	dec := json.NewDecoder(bytes.NewReader(m[1]))
	dec.DisallowUnknownFields()
	var res extract.Response
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("README's response does not decode as extract.Response: %v", err)
	}
	again, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(t, m[1]), keys(t, again); !slices.Equal(got, want) {
		t.Errorf("README's response has keys\n%v\nthe code writes\n%v", got, want)
	}
}

// keys lists every object key path in a JSON document, arrays folded to [].
func keys(t *testing.T, doc []byte) []string {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				out = append(out, prefix+"."+k)
				walk(prefix+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(prefix+"[]", x)
			}
		}
	}
	walk("", v)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestConfirmedExample: the README's example of a confirmed draft passes /v1/validate as is.
func TestConfirmedExample(t *testing.T) {
	b, err := os.ReadFile("../testdata/examples/confirmed-draft.json")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, options{noModel: true})
	req := httptest.NewRequest("POST", "/v1/validate", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if rec := e.do(req); rec.Code != 200 {
		t.Errorf("confirmed-draft.json: %d %s", rec.Code, rec.Body)
	}
}
