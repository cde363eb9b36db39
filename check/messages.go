package check

import (
	"strings"

	"github.com/ocrdraft/ocrdraft/schema"
)

// text is the message of one code for one reason, written for the person confirming the draft:
// which item, what looks wrong, what to check. {name} is replaced by the warning's params[name].
// A language is one more column (zh is to come); the params stay the same.
type text struct {
	code   schema.WarningCode
	reason string
	en     string
}

// texts is the one table of messages, by code and reason.
var texts = []text{
	{schema.FlagMismatch, "high", "{itemName}: the report marks {value} as high, but it is not above the range {range}. Check the value, the range and the mark."},
	{schema.FlagMismatch, "low", "{itemName}: the report marks {value} as low, but it is not below the range {range}. Check the value, the range and the mark."},

	{schema.ValueImplausible, "limits", "{itemName}: {value} {unit} is outside anything a patient's sample can show ({limitLow}–{limitHigh} {unit}). Check the value (a decimal point lost or added) and the unit."},
	{schema.ValueImplausible, "decimal_comma", "{itemName}: {value} cannot be a specific gravity (it lies between {limitLow} and {limitHigh}); it was probably printed as {suggested} with a decimal comma. Check the value."},
	{schema.ValueImplausible, "tenfold", "{itemName}: {value} is {times} times beyond its range {range}, more than this item ever varies. Check the value (a decimal point lost or added) and the range."},

	{schema.RangeImplausible, "other_unit", "{itemName}: the range {refText} is printed in {refUnit}, but the value is in {unit}; its bounds do not apply to the value and were left empty. Check the value's unit and the range."},
	{schema.RangeImplausible, "fits_other_unit", "{itemName}: the range {range} does not fit {unit}; it looks like a range in {expectedUnit}, so its bounds were left empty. Check the unit and the range."},
	{schema.RangeImplausible, "limits", "{itemName}: the range {range} is outside anything possible in {unit} ({limitLow}–{limitHigh}). Check the range and the unit."},

	{schema.UnitUnexpected, "unknown", "{itemName}: {unit} is not a unit this item is measured in (expected {expectedUnit}). Check the unit, and that the item's name was read right."},

	{schema.DuplicateRow, "values", "{itemName} appears twice in the same section with different values ({otherValue} at {otherPath}, and {value} here). Check which is right, or whether a neighbouring row was read twice."},

	{schema.InconsistentValues, "part", "{itemName} ({value}) is higher than {wholeName} ({wholeValue}), of which it is a part. Check both values."},
	{schema.InconsistentValues, "sum", "{itemName} ({value}) should be the sum of {partNames} ({expected}). Check these values."},
	{schema.InconsistentValues, "ratio", "{itemName} ({value}) should be about {expected} from {partNames}. Check these values."},
	{schema.InconsistentValues, "percent", "The percentages of {partNames} add up to {sum}, not 100. Check these values."},

	{schema.RangeSexSpecific, "unknown", "{itemName}: the range {refText} differs for men and women, and the patient's sex was not given, so its bounds were left empty. Check which range applies."},
	{schema.RangeSexSpecific, "chosen", "{itemName}: the range {refText} differs for men and women; the {sex} range {range} was used. Check that the patient's sex is right."},
	{schema.RangeSexSpecific, "confirmed", "{itemName}: the range {refText} differs for men and women, and the bounds {range} are neither. Check the bounds."},

	{schema.ValueNotOnPage, "missing", "{itemName}: {value}, as the model read it, is not printed on page {page} of the PDF. Check it against the page."},
}

// Message is the English message of code for reason, filled from params. {range} is refLow–
// refHigh (≤ refHigh, ≥ refLow with one bound); a missing unit is left out, any other missing
// param renders as "?", so a message never silently says less than it means.
func Message(code schema.WarningCode, reason string, params map[string]string) string {
	for _, t := range texts {
		if t.code == code && t.reason == reason {
			return fill(t.en, params)
		}
	}
	return string(code)
}

func fill(tmpl string, params map[string]string) string {
	var b strings.Builder
	b.Grow(len(tmpl) + 32)
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			break
		}
		b.WriteString(tmpl[:i])
		b.WriteString(param(params, tmpl[i+1:i+j]))
		tmpl = tmpl[i+j+1:]
	}
	s := b.String()
	for _, r := range [][2]string{{"  ", " "}, {" )", ")"}, {" .", "."}, {" ;", ";"}, {" ,", ","}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return strings.TrimSpace(s)
}

func param(params map[string]string, k string) string {
	if k == "range" {
		lo, hi := params["refLow"], params["refHigh"]
		switch {
		case lo != "" && hi != "":
			return lo + "–" + hi
		case hi != "":
			return "≤ " + hi
		case lo != "":
			return "≥ " + lo
		}
		return "?"
	}
	if v := params[k]; v != "" {
		return v
	}
	if k == "unit" || k == "refUnit" {
		return ""
	}
	return "?"
}
