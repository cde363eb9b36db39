// Package problem defines the service's one error type and the single table that maps its stable
// codes to HTTP statuses. The CLI and the HTTP API both render it as an RFC 9457 problem document,
// so a caller sees the same code whichever way it reached us.
package problem

import (
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"
)

// Code is a stable, machine-readable error code. Callers switch on it; never rename one.
type Code string

// The codes, in the order of the table below.
const (
	InvalidRequest         Code = "invalid_request"
	Unauthorized           Code = "unauthorized"
	NotFound               Code = "not_found"
	MethodNotAllowed       Code = "method_not_allowed"
	RequestTimeout         Code = "request_timeout"
	PayloadTooLarge        Code = "payload_too_large"
	ImageTooLarge          Code = "image_too_large"
	TooManyPages           Code = "too_many_pages"
	PagesTooSlow           Code = "pages_too_slow"
	UnsupportedMediaType   Code = "unsupported_media_type"
	ImageUnreadable        Code = "image_unreadable"
	DocumentEncrypted      Code = "document_encrypted"
	InvalidDraft           Code = "invalid_draft"
	ReplyUnparseable       Code = "reply_unparseable"
	ModelOutputUnparseable Code = "model_output_unparseable"
	ModelUnavailable       Code = "model_unavailable"
	ModelRejected          Code = "model_rejected"
	ImageRejected          Code = "image_rejected"
	Overloaded             Code = "overloaded"
	ModelNotConfigured     Code = "model_not_configured"
	ModelRateLimited       Code = "model_rate_limited"
	ModelTimeout           Code = "model_timeout"
	Canceled               Code = "canceled"
	Internal               Code = "internal_error"
	// The jobs API's (issue 23), after the others: codes are only ever added.
	JobsNotConfigured      Code = "jobs_not_configured"
	JobNotFound            Code = "job_not_found"
	IdempotencyKeyReused   Code = "idempotency_key_reused"
	IdempotencyKeyInFlight Code = "idempotency_key_in_flight"
	CallbackNotAllowed     Code = "callback_not_allowed"
)

// Info is what the table knows about a code.
type Info struct {
	Code    Code
	Status  int
	Title   string
	Meaning string // what a caller or operator should do; used in docs and openapi.yaml
}

// Codes is the one table of error codes. openapi.yaml's enum and the README are checked against it.
var Codes = []Info{
	{InvalidRequest, http.StatusBadRequest, "Invalid request", "The request is malformed (missing image part, bad JSON, bad base64). Fix the request; do not retry as is."},
	{Unauthorized, http.StatusUnauthorized, "Unauthorized", "Missing or wrong bearer key. Check the caller's key."},
	{NotFound, http.StatusNotFound, "Not found", "No such route."},
	{MethodNotAllowed, http.StatusMethodNotAllowed, "Method not allowed", "The route exists but not for this method."},
	{RequestTimeout, http.StatusRequestTimeout, "Request timeout", "The request body stopped arriving (no progress for OCR_BODY_IDLE_TIMEOUT) or was not all there by the route's deadline. Check the client's network and resend; the connection is closed."},
	{PayloadTooLarge, http.StatusRequestEntityTooLarge, "Payload too large", "The request or one image is larger than the configured byte limit. Send a smaller file."},
	{ImageTooLarge, http.StatusRequestEntityTooLarge, "Image too large", "The image has more pixels than the limit (checked before decoding). Downscale it."},
	{TooManyPages, http.StatusRequestEntityTooLarge, "Too many pages", "More pages than the page limit in one request (a PDF or TIFF counts each of its pages). Split the report."},
	{PagesTooSlow, http.StatusRequestEntityTooLarge, "Pages too slow to prepare", "Preparing the request's own pages (drawing PDF pages, decoding images) did not finish within the request deadline: its pages waited on each other for the decoding slots, or one ran past the deadline. This request's work, not the service's load: send fewer pages per request, or a scan or photo in place of a PDF page that is slow to draw; resending it as is will not help."},
	{UnsupportedMediaType, http.StatusUnsupportedMediaType, "Unsupported media type", "The file is not JPEG, PNG, WebP, GIF, HEIC, TIFF, BMP or PDF (by its bytes). Convert it and resend."},
	{ImageUnreadable, http.StatusUnprocessableEntity, "Image unreadable", "The image is empty, truncated, corrupt or too small. Retake or re-export it."},
	{DocumentEncrypted, http.StatusUnprocessableEntity, "Document encrypted", "The PDF needs a password to open. Remove the protection (print it to a new PDF) and resend."},
	{InvalidDraft, http.StatusUnprocessableEntity, "Invalid draft", "The submitted draft breaks the contract; the detail lists each field. Fix those fields."},
	{ReplyUnparseable, http.StatusUnprocessableEntity, "Reply unparseable", "The reply sent to /v1/parse holds no usable JSON (often a refusal, which the detail quotes). Send the reply as the model gave it; retrying as is will not help."},
	{ModelOutputUnparseable, http.StatusBadGateway, "Model output unparseable", "The model's reply held no usable JSON (often a refusal: the image is unreadable to it). Retake the photo or retry later."},
	{ModelUnavailable, http.StatusBadGateway, "Model unavailable", "The model endpoint failed (5xx or connection) after retries. Retry later; operators check the upstream."},
	{ModelRejected, http.StatusBadGateway, "Model rejected the request", "The model endpoint refused the request (4xx such as a bad key or model name). Operators fix the configuration; retrying will not help."},
	{ImageRejected, http.StatusUnprocessableEntity, "Image rejected by the model", "The model endpoint could not use this image (its format, size or content). Re-export it as JPEG or PNG, or retake it; resending it as is will not help."},
	{Overloaded, http.StatusServiceUnavailable, "Overloaded", "Too many requests in flight. Retry after the Retry-After delay."},
	{ModelNotConfigured, http.StatusServiceUnavailable, "Model not configured", "The service has no model configured. Operators set OCR_MODEL (and the endpoint and key)."},
	{ModelRateLimited, http.StatusServiceUnavailable, "Model rate limited", "The model endpoint kept answering 429. Retry after the Retry-After delay."},
	{ModelTimeout, http.StatusGatewayTimeout, "Model timeout", "The request did not finish within its deadline: the model did not answer in time (preparing the pages past the deadline is pages_too_slow). Retry, perhaps with fewer pages."},
	{Canceled, 499, "Client closed request", "The caller went away before the answer; the model call was cancelled. Seen only in logs and metrics."},
	{Internal, http.StatusInternalServerError, "Internal error", "A bug on our side; the request id finds it in the logs."},
	{JobsNotConfigured, http.StatusServiceUnavailable, "Jobs not configured", "The service has no key to encrypt what a job stores. Operators set OCR_JOBS_KEY (32 bytes, base64); /v1/extract works without it."},
	{JobNotFound, http.StatusNotFound, "Job not found", "No such job for this caller: the id is unknown, the job was deleted or its result expired (OCR_JOBS_RETENTION after it finished), or it belongs to another key. Submit the document again."},
	{IdempotencyKeyReused, http.StatusUnprocessableEntity, "Idempotency key reused", "The Idempotency-Key was used before with another request body. Use a fresh key for a new document."},
	{IdempotencyKeyInFlight, http.StatusConflict, "Idempotency key in flight", "A request with this Idempotency-Key is still being accepted. Retry after the Retry-After delay; the same key and body then give the same job."},
	{CallbackNotAllowed, http.StatusUnprocessableEntity, "Callback not allowed", "The callbackUrl's host is not one the operator allows (OCR_CALLBACK_HOSTS), or the URL is not http(s). Leave callbackUrl out and poll, or ask the operator to allow the host."},
}

var byCode = func() map[Code]Info {
	m := make(map[Code]Info, len(Codes))
	for _, i := range Codes {
		m[i.Code] = i
	}
	return m
}()

// Lookup returns the table row for code, and the internal_error row for an unknown code.
func Lookup(code Code) Info {
	if i, ok := byCode[code]; ok {
		return i
	}
	return byCode[Internal]
}

// Error is the service's error: a stable code, a detail safe to show the caller, and the
// underlying cause for the log. Detail must never hold secrets or health data beyond what the
// caller itself sent.
type Error struct {
	Code       Code
	Detail     string
	RetryAfter time.Duration // sent as Retry-After when positive
	Fields     []Field       // for invalid_draft: each field's problem
	Err        error         // cause; logged, never shown
	Upstream   *Upstream     // what the model endpoint said, when it failed; logged, never shown
	// Excerpt is the start of the model's reply (or refusal) that a problem is about. It is
	// report text, so health data: shown to the caller as replyExcerpt (unless the server is
	// told not to), never put in Detail, never logged.
	Excerpt string
}

// Upstream is a model endpoint's failure as the request's log line shows it, so that operators
// see why without the caller's help. It never holds the endpoint's error message: servers quote
// the request back in it, and the request holds the report. An HTTP error answer is its status,
// type and code; Reason is our own words about an answer that was no error object, or about
// none at all.
type Upstream struct {
	Status int    // the endpoint's HTTP status; 0 if none came (the connection failed)
	Type   string // the error object's type, if a name vision lists (invalid_request_error), else "(unlisted)"
	Code   string // the error object's code, likewise: invalid_api_key, model_not_found
	Reason string // such as "connection refused" or "its answer was not a chat completion"
}

// Field is one field's problem in a submitted document.
type Field struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Errorf returns an *Error with a formatted detail.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Detail, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of the first *Error in err's chain, or internal_error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Document is an RFC 9457 problem document with our code and the request id.
type Document struct {
	Type      string  `json:"type"`
	Title     string  `json:"title"`
	Status    int     `json:"status"`
	Detail    string  `json:"detail"`
	Code      Code    `json:"code"`
	RequestID string  `json:"requestId,omitempty"`
	Errors    []Field `json:"errors,omitempty" desc:"For invalid_draft, each field's problem, in order; at most 100 (MaxFields)."`
	Omitted   int     `json:"errorsOmitted,omitempty" desc:"How many more field problems there were beyond those listed."`
	// ReplyExcerpt is Error.Excerpt: kept out of Detail so that Detail is always safe to log.
	ReplyExcerpt string `json:"replyExcerpt,omitempty" desc:"For model_output_unparseable and reply_unparseable: the start of the model's reply (at most 120 characters), to show the person; it is report text, so do not log it. Absent when the service is configured not to send it (OCR_REPLY_EXCERPTS=false)."`
}

// MaxFields bounds the field problems a Document lists: a large draft broken everywhere would
// otherwise answer with an error list many times its own size. The rest are counted in Omitted.
// MaxDetail bounds its detail in bytes, for the same reason (a detail listing every field, a
// long refusal quoted); a longer one is cut at a character and ends in "…".
const (
	MaxFields = 100
	MaxDetail = 4 << 10
)

// TypeURI is the problem type for a code. It is a URN rather than a URL because nothing is served
// there; the code itself is the contract.
func TypeURI(code Code) string { return "urn:ocrdraft:problem:" + string(code) }

// From renders err as a problem document. Errors that are not *Error become internal_error with a
// generic detail, so nothing internal leaks to the caller.
func From(err error) Document {
	var e *Error
	if !errors.As(err, &e) {
		i := Lookup(Internal)
		return Document{Type: TypeURI(i.Code), Title: i.Title, Status: i.Status, Detail: "internal error", Code: i.Code}
	}
	i := Lookup(e.Code)
	d := Document{Type: TypeURI(i.Code), Title: i.Title, Status: i.Status, Detail: cut(e.Detail, MaxDetail), Code: i.Code, Errors: e.Fields, ReplyExcerpt: e.Excerpt}
	if len(d.Errors) > MaxFields {
		d.Errors, d.Omitted = d.Errors[:MaxFields:MaxFields], len(d.Errors)-MaxFields
	}
	copied := false
	for j, f := range d.Errors {
		if len(f.Path) <= MaxFieldText && len(f.Message) <= MaxFieldText {
			continue
		}
		if !copied { // never write into the caller's list
			d.Errors, copied = append([]Field(nil), d.Errors...), true
		}
		d.Errors[j] = Field{Path: cut(f.Path, MaxFieldText), Message: cut(f.Message, MaxFieldText)}
	}
	return d
}

// MaxFieldText bounds a field problem's path and message in bytes: a message may quote the
// caller's value (a 100 000-digit year), which the list must not echo whole.
const MaxFieldText = 300

// cut shortens s to at most max bytes, at a character boundary, marking the cut with "…".
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
