// Package prompt renders the instructions sent to the vision model from the contract in package
// schema, so that the field list lives only in the Go types. The rendered text is a golden file
// and its hash is the prompt version reported with every draft.
package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/ocrdraft/ocrdraft/schema"
)

// rules are the instructions that are not about one field. They say what the parser would
// otherwise have to undo, but the parser does not rely on them.
var rules = []string{
	"Use null when the report does not show a value or you cannot read it with certainty. Never guess, never compute, never fill in a typical value.",
	"Numbers are JSON numbers with the digits as printed (5.60 stays 5.60): no units, no thousands separators, no arrows or H/L marks inside a number.",
	"An abnormality mark printed beside a result (↑, ↓, H, L, 高, 低, 偏高, 偏低, *, !) goes in printedFlag as high, low or abnormal, never into valueNum or valueText; a + or - that is the result itself (阳性(+), 2+) is not a mark: it stays in valueText.",
	"A result that is not a plain number (阴性, 阴性(-), +, ±, <0.5, >1000) goes in valueText exactly as printed, with valueNum null.",
	"Copy the reference range exactly as printed into refText (3.9-6.1, <5.2, 阴性, 男：40-50；女：35-45), with its brackets, words and units; null when none is printed.",
	"Also split a numeric range such as 3.9-6.1 into refLow 3.9 and refHigh 6.1; for <5.2 set only refHigh, for >1.04 only refLow; for a range that is not numeric, or that gives different bounds for men and women, set both to null.",
	"Copy names, units and text as printed; do not translate or abbreviate.",
	"List every result row on the page, in printed order, even when its value is unreadable (then the value is null).",
	"Reply with one JSON object and nothing else: no Markdown fence, no comments, no explanation before or after it.",
}

// Render returns the prompt. It is computed once; the contract does not change at run time.
func Render() string { return rendered() }

// Version is a short hash of the prompt, reported as promptVersion so that a draft can be traced
// to the instructions that produced it.
func Version() string { return version() }

var (
	rendered = sync.OnceValue(render)
	version  = sync.OnceValue(func() string {
		sum := sha256.Sum256([]byte(rendered()))
		return hex.EncodeToString(sum[:6])
	})
)

func render() string {
	var b strings.Builder
	b.WriteString("You read one page of a medical laboratory report (化验单 or 体检报告) in the image and transcribe it as JSON.\n\n")
	b.WriteString("The JSON object has exactly these keys, every key always present:\n")
	fields(&b, reflect.TypeFor[schema.OcrDraft](), "")
	b.WriteString("\nRules:\n")
	for _, r := range rules {
		b.WriteString("- " + r + "\n")
	}
	return b.String()
}

// fields writes one line per field of a struct type, and nested lines for a list of objects.
func fields(b *strings.Builder, t reflect.Type, indent string) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !schema.ModelSees(f) {
			continue
		}
		fmt.Fprintf(b, "%s- %s (%s): %s\n", indent, name, typeName(f), f.Tag.Get("desc"))
		if ft := f.Type; ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			fmt.Fprintf(b, "%s  Each element is an object with exactly these keys:\n", indent)
			fields(b, ft.Elem(), indent+"  ")
		}
	}
}

// typeName says a field's JSON type the way the model should write it, from the same schema the
// structured-output mode sends.
func typeName(f reflect.StructField) string {
	s := schema.Generate(f.Type, schema.Strict)
	var base string
	switch {
	case s.Format == "date":
		base = `string "YYYY-MM-DD"`
	case len(s.Enum) > 0:
		base = `one of "` + strings.Join(s.Enum, `", "`) + `"`
	case s.Type[0] == "array":
		base = "array of objects"
	default:
		base = s.Type[0]
	}
	switch {
	case len(s.Type) > 1:
		return base + " or null"
	case strings.Contains(f.Tag.Get("validate"), "required"):
		return base + ", required, never empty"
	}
	return base
}

// Retry is the follow-up sent after a reply that held no usable draft, in the same conversation,
// so that the model mends its answer rather than reading the page afresh.
func Retry() string {
	return "Your reply could not be read as the JSON object described above. Reply again with only that one JSON object: no Markdown fence, no explanation, keys exactly as listed, null for anything you cannot read."
}
