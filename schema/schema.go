// Package schema holds the draft contract: the Go types whose tags drive the prompt, the
// structured-output JSON Schema, validation and openapi.yaml. Nothing else lists these fields.
//
// Every field of OcrDraft and OcrIndicator is always present in JSON: a pointer field is null when
// the report does not show the value or it cannot be read with certainty.
//
// Tags:
//   - json: the camelCase name;
//   - validate: go-playground/validator rules, checked item by item in package draft;
//   - desc: what the field means, written for the model and for API readers alike;
//   - model:"-": filled by code, never by the model: left out of the prompt and of the
//     structured-output schema (see ModelSees);
//   - owner:"service": which side owns the key. Without it a key is the caller's: a draft sent
//     back (/v1/validate) must hold it, null when unknown, so that a client that drops a key by
//     mistake is told rather than read as "unknown". With it the key is the service's to return
//     (what it read or worked out): a request may leave it out, which reads as null. Every key
//     added to the contract after its first version is the service's, so that a client built
//     before the key keeps working (see CallerSends).
package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// OcrDraft is what the model read off one report, for a person to confirm.
type OcrDraft struct {
	Title       *string        `json:"title" validate:"omitempty,max=200" desc:"The report's title as printed, such as 血脂四项 or 体检报告."`
	Hospital    *string        `json:"hospital" validate:"omitempty,max=200" desc:"The hospital or institution that issued the report, as printed."`
	CheckupDate *Date          `json:"checkupDate" validate:"-" desc:"The date of the checkup or sampling, as YYYY-MM-DD."`
	ReportYear  *int           `json:"reportYear" validate:"omitempty,gte=1900,lte=2100" desc:"The year of the report as a four-digit integer."`
	Indicators  []OcrIndicator `json:"indicators" desc:"Every test result row on the page, in the order printed."`
}

// OcrIndicator is one row of a lab report: one measured item.
type OcrIndicator struct {
	ItemName  string   `json:"itemName" validate:"required,max=200" desc:"The item's name as printed, such as 总胆固醇 or ALT."`
	ItemGroup *string  `json:"itemGroup" validate:"omitempty,max=200" desc:"The section or panel the item is printed under, such as 血常规."`
	ValueNum  *Decimal `json:"valueNum" validate:"-" desc:"The result when it is a plain number, with the digits printed (5.60 stays 5.60)."`
	ValueText *string  `json:"valueText" validate:"omitempty,max=200" desc:"The result when it is not a plain number, as printed, such as 阴性(-), +, or <0.5."`
	Unit      *string  `json:"unit" validate:"omitempty,max=50" desc:"The unit as printed, such as mmol/L or ×10^9/L."`
	RefLow    *Decimal `json:"refLow" validate:"-" desc:"The lower bound of the reference range."`
	RefHigh   *Decimal `json:"refHigh" validate:"-" desc:"The upper bound of the reference range."`
	// Evidence: what the report printed beside the value, kept so that code can check it.
	PrintedFlag *Flag   `json:"printedFlag" validate:"-" owner:"service" desc:"The abnormality mark printed beside the result: high (↑, H, 高, 偏高), low (↓, L, 低, 偏低), abnormal (*, !, 异常, a mark with no direction); null when none is printed."`
	RefText     *string `json:"refText" validate:"omitempty,max=200" owner:"service" desc:"The reference range exactly as printed, such as 3.9-6.1, <5.2, 阴性 or 男：40-50；女：35-45."`
	// Page and Analyte are filled by code, never by the model (model:"-" keeps them out of the
	// prompt and the structured-output schema).
	Page    *int    `json:"page" validate:"-" model:"-" owner:"service" desc:"The 1-based page of the report the row came from (1 for /v1/parse)."`
	Analyte *string `json:"analyte" validate:"-" model:"-" owner:"service" desc:"The lexicon's canonical key for the row's item (total_cholesterol …), or null when the name is not one the service knows; never guessed by the model."`
	// Range is what refText says, as the reader read it (nil when it gives no span, or the
	// draft was not built by package draft). Never sent: the checks decide from it which span
	// is the patient's, once.
	Range *RefReading `json:"-" validate:"-" model:"-" owner:"service"`
	// Box is the row's box as the model wrote it beside the row (OCR_MODEL_BOXES), nil when it
	// wrote none. Never sent as data: extract maps it into meta.evidence.
	Box *ModelBox `json:"-" validate:"-" model:"-" owner:"service"`
}

// Flag is an abnormality mark as printed beside a result.
type Flag string

// The flags, in the order of Flags.
const (
	FlagHigh     Flag = "high"
	FlagLow      Flag = "low"
	FlagAbnormal Flag = "abnormal"
)

// Flags is the one list of flags.
var Flags = []Flag{FlagHigh, FlagLow, FlagAbnormal}

// ModelSees reports whether a field is the model's to fill: code-only fields carry model:"-".
func ModelSees(f reflect.StructField) bool { return f.Tag.Get("model") != "-" }

// CallerSends reports whether a request must hold a field's key: the caller's keys, not those
// tagged owner:"service", which a request may leave out (absent is null).
func CallerSends(f reflect.StructField) bool { return f.Tag.Get("owner") != "service" }

// Result is a draft and what the person confirming it should look at.
type Result struct {
	Draft    OcrDraft  `json:"draft"`
	Warnings []Warning `json:"warnings" desc:"What the person confirming the draft should look at, in the order found."`
}

// Warning tells the person confirming a draft that something was dropped, changed or doubtful.
type Warning struct {
	Code    WarningCode `json:"code" desc:"What kind of problem; stable, for programs."`
	Path    *string     `json:"path" desc:"Where: a path starting with indicators[ always points into the returned draft (indicators[3].refLow); a dropped item's path is its place in its page's reply (reply.indicators[2], pages[1].reply.indicators[2]); a page's own field is pages[1].checkupDate; null for the whole draft."`
	Message string      `json:"message" desc:"What happened, for the person confirming the draft: which item, what looks wrong, what to check; in Chinese or English by the request's Accept-Language (zh*, en*), else the server's OCR_LANG (default zh-CN)."`
	Page    *int        `json:"page" desc:"The 1-based page the warning is about; null for the whole report or when unknown."`
	// Params are the facts the message speaks of (the item's name, the value, the range …) as
	// strings, numbers written as printed, so that an app can write its own sentence.
	Params map[string]string `json:"params" desc:"The facts the message speaks of, by name (itemName, value, refLow …), as strings with numbers as printed; {} when none."`
	// Reason names which of its code's messages a warning has: with Code, its row in the one
	// table of messages (internal/msg), from which Message is rendered in the caller's language.
	// Not in JSON: params and code are what an app writes its own sentence from, and a reason
	// on the wire would be a contract of its own (docs/errors.md, "Messages").
	Reason string `json:"-"`
}

// WarningCode is a stable, machine-readable warning code.
type WarningCode string

// The warning codes, in the order of WarningCodes.
const (
	IndicatorDropped      WarningCode = "indicator_dropped"
	OutputTruncated       WarningCode = "output_truncated"
	ReferenceRangeSwapped WarningCode = "reference_range_swapped"
	InvalidDate           WarningCode = "invalid_date"
	InvalidValue          WarningCode = "invalid_value"
	PageConflict          WarningCode = "page_conflict"
	DuplicateIndicator    WarningCode = "duplicate_indicator"
	PageFailed            WarningCode = "page_failed"
	UnitConflict          WarningCode = "unit_conflict"
	OutputInterrupted     WarningCode = "output_interrupted"
	ReplyTooLong          WarningCode = "reply_too_long"
	// The review checks (package check): something the model may have misread.
	FlagMismatch       WarningCode = "flag_mismatch"
	ValueImplausible   WarningCode = "value_implausible"
	RangeImplausible   WarningCode = "range_implausible"
	UnitUnexpected     WarningCode = "unit_unexpected"
	DuplicateRow       WarningCode = "duplicate_row"
	InconsistentValues WarningCode = "inconsistent_values"
	RangeSexSpecific   WarningCode = "range_sex_specific"
	// RangeConditionSpecific: the printed range differs by a condition (age, pregnancy, cycle
	// phase, fasting) or is printed for one; the caller cannot state the condition.
	RangeConditionSpecific WarningCode = "range_condition_specific"
	// NameUnknown: the item's name is none the checks know, but is close to one's: it may be
	// misread, and then that item's checks did not run.
	NameUnknown WarningCode = "name_unknown"
	// The text-layer check (check.OnPage): a number the page's text does not print.
	ValueNotOnPage WarningCode = "value_not_on_page"
	// The second read (OCR_VERIFY): two independent reads of a page that differ.
	ReadsDisagree   WarningCode = "reads_disagree"
	ReadOnce        WarningCode = "read_once"
	PageNotVerified WarningCode = "page_not_verified"
)

// WarningCodes is the one table of warning codes and what each asks of the person confirming.
var WarningCodes = []struct {
	Code    WarningCode
	Meaning string
}{
	{IndicatorDropped, "An item in the model's reply could not be used (no name, not an object, broken beyond repair) and was left out; check the report for it."},
	{OutputTruncated, "The model's reply was cut off; the item being written when it stopped was left out, and later items are missing."},
	{ReferenceRangeSwapped, "The reference range's bounds came in the wrong order and were swapped."},
	{InvalidDate, "A date could not be read as a real calendar date and was set to null."},
	{InvalidValue, "A field's value could not be read with certainty and was set to null."},
	{PageConflict, "A later page showed a different title, hospital or date; the first page's value was kept."},
	{DuplicateIndicator, "An item repeated exactly on a later page and was dropped."},
	{PageFailed, "One page of the report could not be read; its items are missing."},
	{UnitConflict, "A value was written with a unit other than the item's unit; the item's unit was kept: check which is right."},
	{OutputInterrupted, "The model stopped for a reason other than the end of its answer or the token limit (the endpoint's content filter, a tool call); what it wrote was kept, but items may be missing."},
	{ReplyTooLong, "The model's reply was longer than the service reads; only its start was read, and the items after that point are missing."},
	{FlagMismatch, "The abnormality mark printed beside a result (↑, ↓) disagrees with the value and the range, or a value far outside its range has no mark on a page that marks other results outside theirs: check the value, the range and the mark on the report."},
	{ValueImplausible, "A value cannot be right for this item in its unit (beyond what any patient's sample shows, or ten times beyond its range: a lost or added decimal point), or in any unit it is measured in when the unit printed is not one of them: check the value and the unit."},
	{RangeImplausible, "A reference range is in another unit than the value (printed with that unit, or fitting it and not the value's): its bounds were set to null and the range kept as printed; or a range is beyond anything possible in its unit. Check the range and the unit."},
	{UnitUnexpected, "A unit that this item is not measured in: check the unit, or whether the item's name was read right."},
	{DuplicateRow, "The same item appears twice in one section of one page with different values: check which row is right, or whether a neighbouring row was read twice."},
	{InconsistentValues, "Related values cannot all be right (a part above its total, a ratio far from its parts, a differential far from 100 %): check the values named."},
	{RangeSexSpecific, "The printed range differs for men and women, or is printed for one sex only: with the patient's sex, the bounds printed for it were taken (params.sex), or set to null when the range is only the other sex's; without the sex they were set to null. The range is kept as printed: check the sex and the bounds."},
	{RangeConditionSpecific, "The printed range is for a condition (an age group, a pregnancy, a cycle phase, fasting: params.condition) or differs by age, which the caller cannot state: its bounds were set to null and the range kept as printed. Check which range applies."},
	{NameUnknown, "An item's name is none the service knows, but is close to a known item's name (params.nearName): the name may have been misread, and then that item's checks were not made. Check the name on the report."},
	{ValueNotOnPage, "A number the model read (a value or a range bound) is not printed on its page of the PDF, whose text layer holds every printed digit, or a value is printed there only off its row's line, which holds other numbers (another row's value): check it against the page."},
	{ReadsDisagree, "A second, independent read of the page (OCR_VERIFY) gave this field differently (params.first, the value kept, and params.second, each as its read printed it): the value kept is the first read's, never a pick. Look at the row on the report and correct the field if the second reading is what is printed."},
	{ReadOnce, "Only one of the two independent reads of the page found this row (params.read says which): in the draft, check that the row is on the report as read; not in the draft (params.itemName, params.value), check whether the report prints a row the draft lacks."},
	{PageNotVerified, "The page was to be read a second time (OCR_VERIFY) and was not (the second read failed, came back unreadable, ran out of time, or the page's image was not kept for it): the draft is as the first read gave it, without the comparison. Check its values against the report as carefully as an unverified draft."},
}

// MarshalJSON writes indicators as [] when there are none: every key is always present and never
// null where the contract says a list.
func (d OcrDraft) MarshalJSON() ([]byte, error) {
	type plain OcrDraft
	if d.Indicators == nil {
		d.Indicators = []OcrIndicator{}
	}
	return marshal(plain(d))
}

// MarshalJSON writes params as {} when there are none: every key is always present.
func (w Warning) MarshalJSON() ([]byte, error) {
	type plain Warning
	if w.Params == nil {
		w.Params = map[string]string{}
	}
	return marshal(plain(w))
}

// MarshalJSON writes warnings as [] when there are none.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	if r.Warnings == nil {
		r.Warnings = []Warning{}
	}
	return marshal(plain(r))
}

// marshal is json.Marshal without HTML escaping: the caller's encoder decides that (it escapes
// what a Marshaler returns if it escapes at all), and one that does not must get <0.5 as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
