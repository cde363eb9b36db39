package draft

import (
	"reflect"

	"github.com/ocrdraft/ocrdraft/schema"
	"strconv"
	"strings"
)

// The validator reads a row's tags on every call, and takes a fifth of reading a typical reply.
// Almost every row keeps every rule of its tags, and the rules of a row are all of one kind: a
// string that is required or may be empty, and has at most so many characters. quick knows those
// rules from the same tags, enough to say for certain that a value keeps them; a value it cannot
// vouch for (a string longer in bytes than its limit in characters, a rule of another kind) is
// the validator's to judge, as before. So the tags stay the one statement of the rules.

// quick is what a struct's validate tags ask of its fields, when each is of that kind.
type quick struct {
	fields []quickField
	ok     bool // every field's rules are known to quick; false: always ask the validator
}

// quickField is a string field (or a pointer to one) with its rules.
type quickField struct {
	index    int
	ptr      bool
	required bool
	max      int // in characters; -1 for none
}

// quickRules reads t's validate tags.
func quickRules(t reflect.Type) quick {
	q := quick{ok: true}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, has := f.Tag.Lookup("validate")
		if tag == "-" {
			continue
		}
		ft, ptr := f.Type, false
		if ft.Kind() == reflect.Pointer {
			ft, ptr = ft.Elem(), true
		}
		if !has || ft.Kind() != reflect.String {
			return quick{} // a struct the validator would walk into, or a rule on another kind
		}
		qf := quickField{index: i, ptr: ptr, max: -1}
		for _, rule := range strings.Split(tag, ",") {
			switch name, arg, _ := strings.Cut(rule, "="); name {
			case "omitempty":
			case "required":
				qf.required = true
			case "max":
				n, err := strconv.Atoi(arg)
				if err != nil {
					return quick{}
				}
				qf.max = n
			default:
				return quick{}
			}
		}
		q.fields = append(q.fields, qf)
	}
	return q
}

// keeps reports that v (a pointer to a struct of the type q was read from) keeps every rule for
// certain. False means only that the validator must judge.
func (q quick) keeps(v reflect.Value) bool {
	if !q.ok {
		return false
	}
	v = v.Elem()
	for _, qf := range q.fields {
		f := v.Field(qf.index)
		if qf.ptr {
			if f.IsNil() {
				if qf.required {
					return false
				}
				continue
			}
			f = f.Elem()
		}
		s := f.String()
		if qf.required && s == "" {
			return false
		}
		if qf.max >= 0 && len(s) > qf.max { // bytes ≥ characters: within in bytes is within
			return false
		}
	}
	return true
}

// rowRules are the rules of a row, read from schema.OcrIndicator's tags.
var rowRules = quickRules(reflect.TypeFor[schema.OcrIndicator]())

// validRow is the validator's judgement of a row, asked only when quick cannot vouch for it.
func (b *Builder) validRow(ind *schema.OcrIndicator) error {
	if rowRules.keeps(reflect.ValueOf(ind)) {
		return nil
	}
	return b.validate.Struct(*ind)
}
