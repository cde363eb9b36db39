package schema

import (
	"time"

	"github.com/ocrdraft/ocrdraft/problem"
)

// The types of this file are the contract of a response's meta: how a draft was made, page by
// page, and where its numbers are printed. They hold no health data. They live here, with the
// draft, so that every package that speaks of them (extract fills them, the server answers
// them, the metrics count them) depends on the contract and not on one another.

// Meta describes how a draft was made.
type Meta struct {
	Model         string `json:"model" desc:"The model that answered, as the endpoint names it."`
	OutputMode    string `json:"outputMode" desc:"How the reply was held to JSON: prompt, json_object or json_schema."`
	PromptVersion string `json:"promptVersion" desc:"A hash of the prompt, to trace a draft to the instructions that produced it."`
	// Attempts is the model calls made for all pages, re-asks included (transport retries of
	// one call are not counted).
	Attempts int `json:"attempts" desc:"Model calls for all pages."`
	// FinishReason is "length" if any page was cut at the token limit, else the first page's.
	FinishReason *string    `json:"finishReason" desc:"length if any page was cut at the token limit, else the first page's finish reason."`
	Usage        Usage      `json:"usage" desc:"Tokens for all pages."`
	DurationMs   int64      `json:"durationMs" desc:"Time spent on the request, model calls included."`
	Pages        []PageMeta `json:"pages" desc:"Per page, in order."`
	// Evidence is kept in meta rather than the draft: it is where the page printed a number,
	// not what the report says.
	Evidence []Evidence `json:"evidence" desc:"Where each number of the draft is printed, for a page with a text layer (a digital PDF): one entry per valueNum, refLow or refHigh found there whose place is certain (source text_layer); a number not printed on its page is a value_not_on_page warning instead. With OCR_MODEL_BOXES, also one entry per row whose box the model gave (path indicators[N], source model): approximate, a place to look, never a proof. [] when there is neither."`
	// Verify sums the second reads of all pages (OCR_VERIFY); absent when verification is off.
	Verify *VerifyTotal `json:"verify,omitempty" desc:"The second, independent reads of the pages (OCR_VERIFY), summed: what verification cost. Absent when verification is off."`
}

// VerifyTotal is what the second reads of a report cost, summed over its pages.
type VerifyTotal struct {
	Mode     string `json:"mode" desc:"OCR_VERIFY: flagged (only pages with a warning about a value) or all."`
	Pages    int    `json:"pages" desc:"Pages read a second time."`
	Attempts int    `json:"attempts" desc:"Model calls of the second reads."`
	Usage    Usage  `json:"usage" desc:"Tokens of the second reads (not in meta.usage, which is the first reads')."`
}

// VerifyStatus is how a page's second read ended. Metrics count them, so the names are stable.
type VerifyStatus string

// The statuses, in the order of VerifyStatuses.
const (
	VerifyAgreed    VerifyStatus = "agreed"    // the two reads agree on every row
	VerifyDisagreed VerifyStatus = "disagreed" // reads_disagree or read_once warnings say where
	VerifyFailed    VerifyStatus = "failed"    // no second read to compare: page_not_verified
	VerifySkipped   VerifyStatus = "skipped"   // flagged, and nothing on the page was
)

// VerifyStatuses is the one table of verification statuses, for openapi.yaml and the metrics.
var VerifyStatuses = []VerifyStatus{VerifyAgreed, VerifyDisagreed, VerifyFailed, VerifySkipped}

// PageVerify is what happened to one page's second read.
type PageVerify struct {
	Status   VerifyStatus `json:"status" desc:"agreed, disagreed (see the reads_disagree and read_once warnings), failed (see page_not_verified) or skipped (OCR_VERIFY=flagged and nothing on the page was flagged)."`
	Model    string       `json:"model,omitempty" desc:"The model of the second read, as the endpoint names it."`
	Attempts int          `json:"attempts" desc:"Model calls of the second read (0 when skipped)."`
	Usage    Usage        `json:"usage" desc:"Tokens of the second read."`
	Error    problem.Code `json:"error,omitempty" desc:"Why the second read failed, when it did."`
}

// PageMeta is what happened to one page. It holds no health data.
type PageMeta struct {
	Attempts     int           `json:"attempts" desc:"Model calls for this page, re-asks after an unusable reply included."`
	FinishReason *string       `json:"finishReason" desc:"The model's finish reason for the last call; length means the reply was cut at the token limit; null when no reply came."`
	Usage        Usage         `json:"usage" desc:"Tokens for this page."`
	BytesIn      int           `json:"bytesIn" desc:"Size of the uploaded image."`
	BytesSent    int           `json:"bytesSent" desc:"Size of the image sent to the model, after orientation and downscaling."`
	Stage        ParseStage    `json:"stage" desc:"How the reply was read: strict JSON, from a fence, extracted from chatter, repaired, or failed."`
	Found        string        `json:"found,omitempty" desc:"Where in the reply's JSON the draft was found, for a reply that held it rather than being it: an API body's choices[0].message.content, a tool call's [0].arguments, a wrapper's data. Absent when the reply itself was the draft."`
	Indicators   int           `json:"indicators" desc:"Indicators read from this page."`
	Dropped      int           `json:"dropped" desc:"Items of the reply left out (see the indicator_dropped warnings)."`
	Truncated    bool          `json:"truncated" desc:"The model cut its reply off (at the token limit, or mid-JSON)."`
	TooLong      bool          `json:"tooLong" desc:"The reply was longer than the service reads (256 KiB); only its start was read."`
	Error        problem.Code  `json:"error,omitempty" desc:"Why this page failed, when it did."`
	Width        int           `json:"width,omitempty" desc:"The width in pixels of the image sent to the model, upright: what every box of meta.evidence on this page is in."`
	Height       int           `json:"height,omitempty" desc:"The height in pixels of the image sent to the model, upright."`
	Verify       *PageVerify   `json:"verify,omitempty" desc:"The page's second, independent read (OCR_VERIFY); absent when verification is off."`
	Duration     time.Duration `json:"-"`
	SentOnce     bool          `json:"-"` // no copy was kept for a retry (the retry memory was in use)
}

// Usage is the model's token count.
type Usage struct {
	PromptTokens     int `json:"promptTokens" desc:"Tokens the model counted in the prompt, images included."`
	CompletionTokens int `json:"completionTokens" desc:"Tokens the model wrote."`
}

// ParseStage names how a reply's JSON was found (package parse finds it). Metrics count them,
// so the names are stable.
type ParseStage string

// The stages, in the order they are tried (the order of ParseStages).
const (
	StageStrict    ParseStage = "strict"
	StageFenced    ParseStage = "fenced"
	StageExtracted ParseStage = "extracted"
	StageRepaired  ParseStage = "repaired"
	StageFailed    ParseStage = "failed"
)

// ParseStages is the one table of parse stages, for openapi.yaml's enum and the metrics' labels.
var ParseStages = []ParseStage{StageStrict, StageFenced, StageExtracted, StageRepaired, StageFailed}

// Evidence is where a number of the draft is printed on its page, for a confirm screen to
// highlight it.
type Evidence struct {
	Path string `json:"path" desc:"The field whose number was found, as in a warning's path: indicators[3].valueNum, refLow or refHigh."`
	Page int    `json:"page" desc:"The 1-based page it is printed on."`
	Box  Box    `json:"box" desc:"Where it is printed, in the pixels of that page's image as sent to the model."`
	// Source says who placed the box: the page's text layer (exact) or the model (approximate).
	Source EvidenceSource `json:"source,omitempty" desc:"Who placed the box: text_layer (the PDF's own text, exact) or model (the model's box for the row, approximate)."`
}

// EvidenceSource is who placed an evidence box.
type EvidenceSource string

// The sources, in the order of EvidenceSources.
const (
	SourceTextLayer EvidenceSource = "text_layer"
	SourceModel     EvidenceSource = "model"
)

// EvidenceSources is the one table of evidence sources, for openapi.yaml.
var EvidenceSources = []EvidenceSource{SourceTextLayer, SourceModel}

// Box is a rectangle in an image's pixels, x to the right and y down from its top left corner.
type Box struct {
	X int `json:"x" desc:"The left edge, in pixels from the image's left."`
	Y int `json:"y" desc:"The top edge, in pixels from the image's top."`
	W int `json:"w" desc:"The width in pixels."`
	H int `json:"h" desc:"The height in pixels."`
}

// SentImage is a page's image as it was sent to the model, returned only when the caller asks
// (include=pageImages), for a screen that shows the page beside its rows: a browser shows it
// whatever the upload was (a PDF page, a HEIC, a TIFF). It is health data, never logged.
type SentImage struct {
	Page      int    `json:"page" desc:"The 1-based page."`
	MediaType string `json:"mediaType" desc:"image/jpeg or image/png."`
	Width     int    `json:"width" desc:"In pixels, upright: the pixels of meta.evidence boxes."`
	Height    int    `json:"height" desc:"In pixels, upright."`
	Data      []byte `json:"data" format:"byte" desc:"The image, base64."`
}

// ModelBox is a row's box as the model wrote it: the key it used (bbox_2d or box_2d) and its
// four numbers, in the order written. What they mean is the endpoint's convention
// (OCR_MODEL_BOXES); extract maps them to a Box in the pixels of the image sent.
type ModelBox struct {
	Key string
	V   [4]float64
}
