package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Style is a JSON Schema dialect the contract is rendered in.
type Style int

const (
	// OpenAPI is OpenAPI 3.0.3: nullable: true, nested types as $ref to components, and the
	// validate tags as maxLength, minLength, minimum and maximum.
	OpenAPI Style = iota
	// Strict is OpenAI's structured-output strict form: every property required, null as a type
	// in a type list, additionalProperties false, everything inline, and no length or range
	// keywords (strict mode rejects them).
	Strict
)

// Property is one named property, kept in declaration order so that the prompt and the spec list
// fields in the order of the Go types.
type Property struct {
	Name   string
	Schema *JSONSchema
}

// JSONSchema is the subset of JSON Schema the contract needs. Properties keep their order.
type JSONSchema struct {
	Ref         string
	AllOf       []*JSONSchema // a nullable $ref in OpenAPI style: allOf [$ref] beside nullable
	Type        []string      // one type, or a type and "null" in Strict style
	Format      string
	Description string
	Nullable    bool
	Enum        []string
	// Extensible lists the values known today of a code that may gain values (OpenAPI style):
	// rendered as x-extensible-enum beside a plain string, so that a client generated with a
	// generator's default options reads a code added later instead of failing on it.
	Extensible           []string
	Properties           []Property
	Required             []string
	AdditionalProperties *bool
	Values               *JSONSchema // a map's values: additionalProperties as a schema
	Items                *JSONSchema
	MinLength, MaxLength *int
	Minimum, Maximum     *int
}

// MarshalJSON writes the schema with properties in declaration order.
func (s *JSONSchema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	put := func(k string, v any) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(v)
		if err != nil {
			panic(err) // only our own types are marshalled
		}
		b.Write(vb)
	}
	if s.Ref != "" {
		put("$ref", s.Ref)
	}
	if s.AllOf != nil {
		put("allOf", s.AllOf)
	}
	switch len(s.Type) {
	case 0:
	case 1:
		put("type", s.Type[0])
	default:
		put("type", s.Type)
	}
	if s.Format != "" {
		put("format", s.Format)
	}
	if s.Description != "" {
		put("description", s.Description)
	}
	if s.Nullable {
		put("nullable", true)
	}
	if s.Enum != nil {
		put("enum", s.Enum)
	}
	if s.Extensible != nil {
		put("x-extensible-enum", s.Extensible)
	}
	if s.MinLength != nil {
		put("minLength", *s.MinLength)
	}
	if s.MaxLength != nil {
		put("maxLength", *s.MaxLength)
	}
	if s.Minimum != nil {
		put("minimum", *s.Minimum)
	}
	if s.Maximum != nil {
		put("maximum", *s.Maximum)
	}
	if s.Items != nil {
		put("items", s.Items)
	}
	if s.Properties != nil {
		var pb bytes.Buffer
		pb.WriteByte('{')
		for i, p := range s.Properties {
			if i > 0 {
				pb.WriteByte(',')
			}
			kb, _ := json.Marshal(p.Name)
			pb.Write(kb)
			pb.WriteByte(':')
			vb, err := p.Schema.MarshalJSON()
			if err != nil {
				return nil, err
			}
			pb.Write(vb)
		}
		pb.WriteByte('}')
		put("properties", json.RawMessage(pb.Bytes()))
	}
	if s.Required != nil {
		put("required", s.Required)
	}
	if s.AdditionalProperties != nil {
		put("additionalProperties", *s.AdditionalProperties)
	}
	if s.Values != nil {
		put("additionalProperties", s.Values)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ServiceKeyNote ends the description of a key owned by the service (owner:"service"): the same
// schema describes the draft a response returns and the one /v1/validate takes back.
const ServiceKeyNote = "Always present in a response; a request may leave it out (null), as clients built before this key do."

// ExtensibleNote describes every code in openapi.yaml: the values are open.
const ExtensibleNote = "A stable code. The values known to this version are listed in x-extensible-enum; later versions add values, so a client must accept any string and treat an unknown one as the generic case (of its HTTP status, for a problem)."

// Components are the contract's named types, for openapi.yaml's components.schemas.
var Components = []reflect.Type{
	reflect.TypeFor[OcrDraft](),
	reflect.TypeFor[OcrIndicator](),
	reflect.TypeFor[Warning](),
}

// Generator renders Go types as JSON Schema.
type Generator struct {
	Style Style
	// Enums lists the values of named string types, from their tables.
	Enums map[reflect.Type][]string
	// Refs are the types rendered as $ref to components.schemas, by component name (OpenAPI
	// style only); the type being generated is always expanded.
	Refs map[reflect.Type]string
}

// Contract returns the generator for the contract's own types in a style.
func Contract(style Style) Generator {
	codes := make([]string, len(WarningCodes))
	for i, w := range WarningCodes {
		codes[i] = string(w.Code)
	}
	flags := make([]string, len(Flags))
	for i, f := range Flags {
		flags[i] = string(f)
	}
	refs := make(map[reflect.Type]string, len(Components))
	for _, t := range Components {
		refs[t] = t.Name()
	}
	return Generator{
		Style: style,
		Enums: map[reflect.Type][]string{reflect.TypeFor[WarningCode](): codes, reflect.TypeFor[Flag](): flags},
		Refs:  refs,
	}
}

// Generate renders t in a style with the contract's enums and components.
func Generate(t reflect.Type, style Style) *JSONSchema {
	return Contract(style).Schema(t)
}

// Schema renders t.
func (g Generator) Schema(t reflect.Type) *JSONSchema {
	return g.gen(t, true)
}

func (g Generator) gen(t reflect.Type, top bool) *JSONSchema {
	nullable := false
	if t.Kind() == reflect.Pointer {
		nullable = true
		t = t.Elem()
	}
	var s *JSONSchema
	switch {
	case t == reflect.TypeFor[Decimal]():
		s = &JSONSchema{Type: []string{"number"}}
	case t == reflect.TypeFor[Date]():
		s = &JSONSchema{Type: []string{"string"}, Format: "date"}
	case t == reflect.TypeFor[[]byte](): // encoding/json writes it as base64
		s = &JSONSchema{Type: []string{"string"}, Format: "byte"}
	case g.Enums[t] != nil:
		if name, ok := g.Refs[t]; ok && g.Style == OpenAPI && !top {
			s = &JSONSchema{Ref: "#/components/schemas/" + name}
			break
		}
		if g.Style == OpenAPI {
			s = &JSONSchema{Type: []string{"string"}, Extensible: g.Enums[t], Description: ExtensibleNote}
			break
		}
		s = &JSONSchema{Type: []string{"string"}, Enum: g.Enums[t]}
	case t.Kind() == reflect.String:
		s = &JSONSchema{Type: []string{"string"}}
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		s = &JSONSchema{Type: []string{"integer"}}
	case t.Kind() == reflect.Bool:
		s = &JSONSchema{Type: []string{"boolean"}}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		s = &JSONSchema{Type: []string{"object"}, Values: g.gen(t.Elem(), false)}
	case t.Kind() == reflect.Slice:
		s = &JSONSchema{Type: []string{"array"}, Items: g.gen(t.Elem(), false)}
	case t.Kind() == reflect.Struct:
		if name, ok := g.Refs[t]; ok && g.Style == OpenAPI && !top {
			s = &JSONSchema{Ref: "#/components/schemas/" + name}
			break
		}
		s = g.object(t)
	default:
		panic(fmt.Sprintf("schema: no JSON Schema for %v", t))
	}
	if nullable {
		switch {
		case g.Style == Strict:
			s.Type = append(s.Type, "null")
		case s.Ref != "":
			// OpenAPI 3.0 ignores siblings of $ref: the reference goes into an allOf, which
			// nullable may stand beside (a job's result and error, null until it finishes).
			// nullable wants a type beside it (Redocly's nullable-type-sibling).
			typ := "string"
			if t.Kind() == reflect.Struct {
				typ = "object"
			}
			s = &JSONSchema{Type: []string{typ}, AllOf: []*JSONSchema{s}, Nullable: true}
		default:
			s.Nullable = true
		}
	}
	return s
}

// object renders a struct. A field is required unless its json tag says omitempty: the contract
// always writes every key, null when unknown. Embedded structs' fields are inlined.
func (g Generator) object(t reflect.Type) *JSONSchema {
	no := false
	s := &JSONSchema{Type: []string{"object"}, AdditionalProperties: &no, Properties: []Property{}, Required: []string{}}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() || g.Style == Strict && !ModelSees(f) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := g.gen(f.Type, false)
		if p.Ref == "" {
			p.Description = f.Tag.Get("desc")
			if g.Style == OpenAPI && !CallerSends(f) {
				p.Description += " " + ServiceKeyNote
			}
			if fm := f.Tag.Get("format"); fm != "" {
				p.Format = fm // such as byte, for base64
			}
		}
		if g.Style == OpenAPI {
			constrain(p, f.Tag.Get("validate"))
		}
		s.Properties = append(s.Properties, Property{name, p})
		if !strings.Contains(opts, "omitempty") || g.Style == Strict {
			s.Required = append(s.Required, name)
		}
	}
	if len(s.Required) == 0 && g.Style == OpenAPI {
		s.Required = nil // OpenAPI 3.0 wants a required list to hold at least one name
	}
	return s
}

// constrain turns validate tags into OpenAPI keywords.
func constrain(s *JSONSchema, tag string) {
	isString := len(s.Type) > 0 && s.Type[0] == "string"
	for _, rule := range strings.Split(tag, ",") {
		k, v, _ := strings.Cut(rule, "=")
		n, err := strconv.Atoi(v)
		switch {
		case k == "required" && isString:
			one := 1
			s.MinLength = &one
		case err != nil:
		case k == "max" && isString:
			s.MaxLength = &n
		case k == "gte":
			s.Minimum = &n
		case k == "lte":
			s.Maximum = &n
		}
	}
}
