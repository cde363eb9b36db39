package draft

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Validate checks a draft as a person confirmed it and returns it normalised by the same rules
// as a model's reply. Unlike a reply, a confirmed draft is held to the contract: a missing key of
// the caller's (every such key is always present), a wrong type, an unknown key, a nameless
// indicator, an impossible date, a flag other than the three, or a broken length or range rule is
// an invalid_draft error, and one answer lists every such field at once. The service's keys
// (owner:"service" in schema: the evidence) may be left out, as clients built before them do;
// absent is null.
//
// The evidence, when sent back: refText and printedFlag are as the person confirmed them; refLow
// and refHigh given beside a refText are kept as given (the person may have corrected them), not
// split again from it. page is kept as given (code cannot know it). analyte is accepted as given
// only in type and filled again from the lexicon: it is code's reading of the name, not a fact a
// person confirms.
func (b *Builder) Validate(body []byte) (schema.Result, error) {
	v, err := parse.Decode(string(body))
	if err != nil {
		return schema.Result{}, problem.Errorf(problem.InvalidRequest, "the body is not one JSON value")
	}
	if isResponse(v) {
		return schema.Result{}, &problem.Error{
			Code:   problem.InvalidDraft,
			Detail: "the body is an extract or parse response, not a draft: send its draft member",
			Fields: []problem.Field{{Path: "draft", Message: "send this member as the body, not the whole response"}},
		}
	}
	c := checker{b: b}
	c.check(reflect.TypeFor[schema.OcrDraft](), "", v, "")
	if fields := c.fields; len(fields) > 0 {
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
	return b.build(v, confirmedRows{}, false), nil
}

// isResponse reports whether v is a whole response ({"draft": …, "warnings": …, "meta": …})
// rather than its draft: a client's likeliest mistake.
func isResponse(v parse.Value) bool {
	if v.Kind != parse.Object {
		return false
	}
	d, ok := v.Get("draft")
	if !ok || d.Kind != parse.Object {
		return false
	}
	_, w := v.Get("warnings")
	_, m := v.Get("meta")
	_, ind := v.Get("indicators")
	return (w || m) && !ind
}

// checker compares a decoded JSON value with a contract type, recording every mismatch: the
// types first, then each well-typed field's validate rules, so that one answer lists them all.
type checker struct {
	b      *Builder
	fields []problem.Field
}

func (c *checker) bad(path, format string, args ...any) {
	c.fields = append(c.fields, problem.Field{Path: path, Message: fmt.Sprintf(format, args...)})
}

// check checks v against type t at path; rule is the field's validate tag.
func (c *checker) check(t reflect.Type, rule string, v parse.Value, path string) {
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
			c.bad(path, "want a number, got %s", kind(v))
		} else if _, err := schema.ParseDecimal(v.Text); err != nil {
			c.bad(path, "number %s is out of range", v.Text)
		}
	case t == reflect.TypeFor[schema.Date]():
		if v.Kind != parse.String {
			c.bad(path, "want a \"YYYY-MM-DD\" string, got %s", kind(v))
		} else if _, err := schema.ParseDate(v.Text); err != nil {
			c.bad(path, "%v", err)
		}
	case t == reflect.TypeFor[schema.Flag]():
		if v.Kind != parse.String || !slices.Contains(schema.Flags, schema.Flag(v.Text)) {
			c.bad(path, "want one of %q, got %s", schema.Flags, quote(v))
		}
	case t.Kind() == reflect.String:
		switch {
		case v.Kind != parse.String:
			c.bad(path, "want a string, got %s", kind(v))
		case strings.TrimSpace(v.Text) == "" && !nullable:
			c.bad(path, "is blank")
		default:
			c.rule(path, rule, v.Text)
		}
	case t.Kind() == reflect.Int:
		n, err := strconv.Atoi(v.Text)
		switch {
		case v.Kind != parse.Number || err != nil:
			c.bad(path, "want an integer, got %s", quote(v))
		case strings.HasSuffix(path, ".page") && n < 1:
			c.bad(path, "is less than 1: pages count from 1")
		default:
			c.rule(path, rule, n)
		}
	case t.Kind() == reflect.Slice:
		if v.Kind != parse.Array {
			c.bad(path, "want a list, got %s", kind(v))
			return
		}
		for i, x := range v.Elems {
			c.check(t.Elem(), "", x, fmt.Sprintf("%s[%d]", path, i))
		}
	case t.Kind() == reflect.Struct:
		if v.Kind != parse.Object {
			c.bad(path, "want an object, got %s", kind(v))
			return
		}
		known := make(map[string]bool)
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue // code's own (the reading of a range), never in JSON
			}
			known[name] = true
			p := name
			if path != "" {
				p = path + "." + name
			}
			x, present := v.Get(name)
			if !present {
				// The service's keys (owner:"service") are ours to return, not the caller's to
				// send back: a client built before them leaves them out, which is null.
				if schema.CallerSends(f) {
					c.bad(p, "is missing (every key is always present: null when unknown)")
				}
				continue
			}
			c.check(f.Type, f.Tag.Get("validate"), x, p)
		}
		for _, m := range v.Members {
			if known[m.Key] {
				continue
			}
			p := m.Key
			if path != "" {
				p = path + "." + m.Key
			}
			c.bad(p, "is not a field of the contract")
		}
	}
}

// rule applies a field's validate tag (max=200, gte=1900 …) to a well-typed value.
func (c *checker) rule(path, rule string, x any) {
	if rule == "" || rule == "-" {
		return
	}
	for _, fe := range asFieldErrors(c.b.validate.Var(x, rule)) {
		c.bad(path, "%s", describe(fe))
	}
}
