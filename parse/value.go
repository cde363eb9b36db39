package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is a JSON value's type.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a decoded JSON value. Numbers keep the literal the model wrote (1.020 stays 1.020),
// object members keep their order, and strings without escapes share the reply's memory, so that
// decoding a typical reply costs a few allocations rather than one per key and value.
type Value struct {
	Kind    Kind
	Text    string   // String: the text; Number: the literal; Bool: "true" or "false"
	Members []Member // Object
	Elems   []Value  // Array
}

// Member is one key and value of an object.
type Member struct {
	Key   string
	Value Value
}

// Get returns the member named key (the last one, as encoding/json would), and whether there is
// one.
func (v Value) Get(key string) (Value, bool) {
	for i := len(v.Members) - 1; i >= 0; i-- {
		if v.Members[i].Key == key {
			return v.Members[i].Value, true
		}
	}
	return Value{}, false
}

// IsContainer reports whether v is an object or an array.
func (v Value) IsContainer() bool { return v.Kind == Object || v.Kind == Array }

// MarshalJSON writes v back as JSON, numbers as written.
func (v Value) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	v.write(&b)
	return b.Bytes(), nil
}

func (v Value) write(b *bytes.Buffer) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool, Number:
		b.WriteString(v.Text)
	case String:
		s, _ := json.Marshal(v.Text)
		b.Write(s)
	case Array:
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(m.Key)
			b.Write(k)
			b.WriteByte(':')
			m.Value.write(b)
		}
		b.WriteByte('}')
	}
}

// FromAny converts a value decoded by encoding/json (with UseNumber, or float64 numbers) into a
// Value; map keys are sorted, since a map has no order.
func FromAny(x any) Value {
	switch t := x.(type) {
	case nil:
		return Value{}
	case bool:
		return Value{Kind: Bool, Text: strconv.FormatBool(t)}
	case json.Number:
		return Value{Kind: Number, Text: t.String()}
	case float64:
		return Value{Kind: Number, Text: strconv.FormatFloat(t, 'f', -1, 64)}
	case string:
		return Value{Kind: String, Text: t}
	case []any:
		v := Value{Kind: Array, Elems: make([]Value, len(t))}
		for i, e := range t {
			v.Elems[i] = FromAny(e)
		}
		return v
	case map[string]any:
		b, _ := json.Marshal(t) // sorted keys
		v, _ := Decode(string(b))
		return v
	}
	return Value{}
}

// maxNesting bounds how deep a document may nest; models write three or four levels.
const maxNesting = 256

var errSyntax = errors.New("parse: not JSON")

// Decode strictly decodes exactly one JSON value (RFC 8259) with surrounding white space.
func Decode(s string) (Value, error) {
	v, _, err := decodeCounted(s)
	return v, err
}

// decodeCounted is Decode, also saying how many objects and lists it built.
func decodeCounted(s string) (Value, int, error) {
	d := decoder{s: s}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return Value{}, 0, err
	}
	d.space()
	if d.i != len(d.s) {
		return Value{}, 0, errSyntax
	}
	return v, d.containers, nil
}

type decoder struct {
	s          string
	i          int
	containers int      // objects and lists begun
	members    []Member // scratch, reused across objects
	elems      []Value  // scratch, reused across arrays
}

func (d *decoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (Value, error) {
	if d.i >= len(d.s) {
		return Value{}, errSyntax
	}
	switch c := d.s[d.i]; {
	case c == '{':
		if depth >= maxNesting {
			return Value{}, errSyntax
		}
		return d.object(depth)
	case c == '[':
		if depth >= maxNesting {
			return Value{}, errSyntax
		}
		return d.array(depth)
	case c == '"':
		s, err := d.str()
		return Value{Kind: String, Text: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return d.literal("true", Value{Kind: Bool, Text: "true"})
	case c == 'f':
		return d.literal("false", Value{Kind: Bool, Text: "false"})
	case c == 'n':
		return d.literal("null", Value{})
	}
	return Value{}, errSyntax
}

func (d *decoder) literal(word string, v Value) (Value, error) {
	if len(d.s)-d.i < len(word) || d.s[d.i:d.i+len(word)] != word {
		return Value{}, errSyntax
	}
	d.i += len(word)
	return v, nil
}

func (d *decoder) object(depth int) (Value, error) {
	d.i++ // {
	d.containers++
	base := len(d.members)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return Value{Kind: Object, Members: []Member{}}, nil
	}
	for {
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return Value{}, errSyntax
		}
		k, err := d.str()
		if err != nil {
			return Value{}, err
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return Value{}, errSyntax
		}
		d.i++
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		d.members = append(d.members, Member{k, v})
		d.space()
		if d.i >= len(d.s) {
			return Value{}, errSyntax
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			continue
		case '}':
			d.i++
			ms := make([]Member, len(d.members)-base)
			copy(ms, d.members[base:])
			d.members = d.members[:base]
			return Value{Kind: Object, Members: ms}, nil
		}
		return Value{}, errSyntax
	}
}

func (d *decoder) array(depth int) (Value, error) {
	d.i++ // [
	d.containers++
	base := len(d.elems)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return Value{Kind: Array, Elems: []Value{}}, nil
	}
	for {
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		if len(d.elems) == cap(d.elems) {
			d.elems = slices.Grow(d.elems, len(d.elems)+8) // double: append grows a long list by a quarter
		}
		d.elems = append(d.elems, v)
		d.space()
		if d.i >= len(d.s) {
			return Value{}, errSyntax
		}
		switch d.s[d.i] {
		case ',':
			d.i++
			continue
		case ']':
			d.i++
			es := make([]Value, len(d.elems)-base)
			copy(es, d.elems[base:])
			d.elems = d.elems[:base]
			return Value{Kind: Array, Elems: es}, nil
		}
		return Value{}, errSyntax
	}
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and keeps it as written.
func (d *decoder) number() (Value, error) {
	s, start := d.s, d.i
	i := start
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
	default:
		return Value{}, errSyntax
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigitByte(s[i]) {
			return Value{}, errSyntax
		}
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigitByte(s[i]) {
			return Value{}, errSyntax
		}
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
	}
	d.i = i
	return Value{Kind: Number, Text: s[start:i]}, nil
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// str reads a string. Without escapes or invalid UTF-8 it is a slice of the input; otherwise it
// is unescaped into a new string, invalid UTF-8 becoming U+FFFD as encoding/json does.
func (d *decoder) str() (string, error) {
	s := d.s
	start := d.i + 1
	i := start
	escaped, high := false, false
	for {
		if i >= len(s) {
			return "", errSyntax
		}
		switch c := s[i]; {
		case c == '"':
			if !escaped && (!high || utf8.ValidString(s[start:i])) {
				d.i = i + 1
				return s[start:i], nil
			}
			return d.unescape(start)
		case c == '\\':
			escaped = true
			i += 2
		case c < 0x20:
			return "", errSyntax
		default:
			high = high || c >= utf8.RuneSelf
			i++
		}
	}
}

func (d *decoder) unescape(start int) (string, error) {
	s := d.s
	b := make([]byte, 0, 64)
	i := start
	for {
		if i >= len(s) {
			return "", errSyntax
		}
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			return string(b), nil
		case c < 0x20:
			return "", errSyntax
		case c == '\\':
			if i+1 >= len(s) {
				return "", errSyntax
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return "", errSyntax
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(s, i+2); ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", errSyntax
			}
			i += 2
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r) // RuneError for invalid bytes
			i += n
		default:
			b = append(b, c)
			i++
		}
	}
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
