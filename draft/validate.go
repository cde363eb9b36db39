package draft

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Validate checks a draft as a person confirmed it and returns it normalised by the same rules
// as a model's reply. Unlike a reply, a confirmed draft is held to the contract: a wrong type, an
// unknown key, a nameless indicator, an impossible date or a broken length rule is an
// invalid_draft error listing every such field, not a warning. A missing key reads as null.
func (b *Builder) Validate(body []byte) (schema.Result, error) {
	v, err := parse.Decode(string(body))
	if err != nil {
		return schema.Result{}, problem.Errorf(problem.InvalidRequest, "the body is not one JSON value")
	}
	var fields []problem.Field
	check(reflect.TypeFor[schema.OcrDraft](), v, "", &fields)
	if len(fields) == 0 {
		// The types are right, so the contract's own decoder takes it; then the tag rules.
		var d schema.OcrDraft
		if err := json.Unmarshal(body, &d); err != nil {
			fields = append(fields, problem.Field{Path: "", Message: err.Error()})
		} else {
			for i, ind := range d.Indicators {
				for _, fe := range asFieldErrors(b.validate.Struct(ind)) {
					fields = append(fields, problem.Field{Path: fmt.Sprintf("indicators[%d].%s", i, fe.Field()), Message: describe(fe)})
				}
			}
			d.Indicators = nil
			for _, fe := range asFieldErrors(b.validate.Struct(d)) {
				fields = append(fields, problem.Field{Path: fe.Field(), Message: describe(fe)})
			}
		}
	}
	if len(fields) > 0 {
		msgs := make([]string, len(fields))
		for i, f := range fields {
			msgs[i] = f.Path + ": " + f.Message
		}
		return schema.Result{}, &problem.Error{
			Code:   problem.InvalidDraft,
			Detail: fmt.Sprintf("the draft breaks the contract in %d place(s): %s", len(fields), strings.Join(msgs, "; ")),
			Fields: fields,
		}
	}
	return b.Build(v), nil
}

// check compares a decoded JSON value with a contract type, recording every mismatch.
func check(t reflect.Type, v parse.Value, path string, out *[]problem.Field) {
	bad := func(format string, args ...any) {
		*out = append(*out, problem.Field{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	nullable := t.Kind() == reflect.Pointer
	if nullable {
		if v.Kind == parse.Null {
			return
		}
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[schema.Decimal]():
		if v.Kind != parse.Number {
			bad("want a number, got %s", kind(v))
		} else if _, err := schema.ParseDecimal(v.Text); err != nil {
			bad("number %s is out of range", v.Text)
		}
	case t == reflect.TypeFor[schema.Date]():
		if v.Kind != parse.String {
			bad("want a \"YYYY-MM-DD\" string, got %s", kind(v))
		} else if _, err := schema.ParseDate(v.Text); err != nil {
			bad("%v", err)
		}
	case t.Kind() == reflect.String:
		switch {
		case v.Kind != parse.String:
			bad("want a string, got %s", kind(v))
		case strings.TrimSpace(v.Text) == "" && !nullable:
			bad("is blank")
		}
	case t.Kind() == reflect.Int:
		if _, err := strconv.Atoi(v.Text); v.Kind != parse.Number || err != nil {
			bad("want an integer, got %s", quote(v))
		}
	case t.Kind() == reflect.Slice:
		if v.Kind == parse.Null {
			return // a missing list is empty
		}
		if v.Kind != parse.Array {
			bad("want a list, got %s", kind(v))
			return
		}
		for i, x := range v.Elems {
			check(t.Elem(), x, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case t.Kind() == reflect.Struct:
		if v.Kind != parse.Object {
			bad("want an object, got %s", kind(v))
			return
		}
		known := make(map[string]bool)
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			known[name] = true
			p := name
			if path != "" {
				p = path + "." + name
			}
			x, present := v.Get(name)
			if !present && f.Type.Kind() != reflect.Pointer && f.Type.Kind() != reflect.Slice {
				*out = append(*out, problem.Field{Path: p, Message: "is missing"})
				continue
			}
			if present {
				check(f.Type, x, p, out)
			}
		}
		for _, m := range v.Members {
			k := m.Key
			if known[k] {
				continue
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			*out = append(*out, problem.Field{Path: p, Message: "is not a field of the contract"})
		}
	}
}
