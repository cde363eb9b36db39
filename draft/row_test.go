package draft

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/schema"
)

// TestNullTables: every field of the contract with a validate rule has a row in nullIndicator or
// nullDraft (itemName, which drops its row, and the list aside), and that row nulls that field
// and no other.
func TestNullTables(t *testing.T) {
	check := func(typ reflect.Type, table map[string]func(reflect.Value)) {
		for f := range typ.Fields() {
			tag := f.Tag.Get("validate")
			if tag == "" || tag == "-" || f.Name == "ItemName" || f.Name == "Indicators" {
				continue
			}
			null, ok := table[f.Name]
			if !ok {
				t.Errorf("%s.%s has the rule %q but no row to null it", typ.Name(), f.Name, tag)
				continue
			}
			v := reflect.New(typ).Elem()
			for g := range typ.Fields() { // every pointer field set
				if g.Type.Kind() == reflect.Pointer {
					v.FieldByIndex(g.Index).Set(reflect.New(g.Type.Elem()))
				}
			}
			null(v.Addr())
			for g := range typ.Fields() {
				if g.Type.Kind() == reflect.Pointer && v.FieldByIndex(g.Index).IsNil() != (g.Name == f.Name) {
					t.Errorf("%s.%s's row nulls %s", typ.Name(), f.Name, g.Name)
				}
			}
		}
		if len(table) == 0 {
			t.Errorf("%s: no rows", typ.Name())
		}
	}
	ind := map[string]func(reflect.Value){}
	for k, f := range nullIndicator {
		ind[k] = func(v reflect.Value) { f(v.Interface().(*schema.OcrIndicator)) }
	}
	check(reflect.TypeFor[schema.OcrIndicator](), ind)
	dr := map[string]func(reflect.Value){}
	for k, f := range nullDraft {
		dr[k] = func(v reflect.Value) { f(v.Interface().(*schema.OcrDraft)) }
	}
	check(reflect.TypeFor[schema.OcrDraft](), dr)
}

// TestSettle: a row that is dropped says only why, never the findings of its fields; a kept
// row's findings name its place in the draft; a model's bounds yield to the printed range's, a
// person's do not.
func TestSettle(t *testing.T) {
	long := strings.Repeat("名", 201)
	b := New(lexicon.Default())
	tests := []struct {
		name, in  string
		confirmed bool
		warn      []string
		low       string
	}{
		{name: "a dropped row says only its drop", in: `{"indicators":[{"itemName":"` + long + `","unit":{"a":1},"refLow":"3.5 5.5 7","valueNum":{"v":5.6}}]}`,
			warn: []string{"indicator_dropped@reply.indicators[0]"}},
		{name: "a kept row's findings, in order", in: `{"indicators":[{"itemName":"A","unit":{"a":1},"refLow":"3.5 5.5 7","valueNum":{"v":5.6}}]}`,
			warn: []string{"invalid_value@indicators[0].unit", "invalid_value@indicators[0].valueNum", "invalid_value@indicators[0].refLow"}},
		{name: "after a dropped row, the next is indicators[0]", in: `{"indicators":[{"valueNum":1},{"itemName":"A","unit":{"a":1}}]}`,
			warn: []string{"indicator_dropped@reply.indicators[0]", "invalid_value@indicators[0].unit"}},
		{name: "model: the printed range wins", in: `{"indicators":[{"itemName":"A","valueNum":1,"refText":"3.5-5.5","refLow":3.4}]}`, low: "3.5"},
		{name: "confirmed: the person's bound wins", in: `{"indicators":[{"itemName":"A","valueNum":1,"refText":"3.5-5.5","refLow":3.4}]}`, confirmed: true, low: "3.4"},
		{name: "model: a range not read is said", in: `{"indicators":[{"itemName":"A","valueNum":1,"refText":"3.5 5.5 7"}]}`,
			warn: []string{"invalid_value@indicators[0].refLow"}},
		{name: "confirmed: a range not read is the person's", in: `{"indicators":[{"itemName":"A","valueNum":1,"refText":"3.5 5.5 7"}]}`, confirmed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var src rowSource = modelRows{}
			if tt.confirmed {
				src = confirmedRows{}
			}
			res := b.build(decodeValue(t, tt.in), src, false)
			var got []string
			for _, w := range res.Warnings {
				got = append(got, string(w.Code)+"@"+deref(w.Path))
			}
			if strings.Join(got, " ") != strings.Join(tt.warn, " ") {
				t.Errorf("warnings %v, want %v", got, tt.warn)
			}
			if tt.low != "" {
				if len(res.Draft.Indicators) != 1 || res.Draft.Indicators[0].RefLow == nil || res.Draft.Indicators[0].RefLow.String() != tt.low {
					t.Errorf("indicators %+v, want refLow %s", res.Draft.Indicators, tt.low)
				}
			}
		})
	}
}
