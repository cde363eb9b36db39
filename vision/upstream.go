package vision

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft/problem"
)

// said is what an error answer said, whichever shape the endpoint writes it in: OpenAI's and
// Azure's {"error":{...}}, vLLM's older top-level {"object":"error","message":...}, Ollama's
// {"error":"..."}, FastAPI's {"detail":...}, or a proxy's text or HTML page.
type said struct {
	typ, code, param, message string
	plainText                 bool // not JSON at all: a proxy's page, a bare "404 page not found"
}

// saidAPI reads go-openai's decoding of an {"error":{...}} answer.
func saidAPI(e *openai.APIError) said {
	s := said{typ: e.Type, message: e.Message}
	switch c := e.Code.(type) {
	case string:
		s.code = c
	case int:
		if c != 0 { // go-openai decodes "code": null as 0
			s.code = fmt.Sprint(c)
		}
	}
	if e.Param != nil {
		s.param = *e.Param
	}
	return s
}

// saidBody reads an error answer that go-openai could not decode as {"error":{...}}. Of JSON
// it takes only the message fields it knows, never the rest: FastAPI's validation errors, for
// one, quote the request back ("input"), and the request holds the report. Text that is not
// JSON (a proxy's page) is taken whole, to be clipped.
func saidBody(body []byte) said {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return said{message: string(body), plainText: true}
	}
	str := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String()
		}
		return ""
	}
	s := said{message: str(top["message"]), typ: str(top["type"]), code: str(top["code"]), param: str(top["param"])}
	if e, ok := top["error"]; ok && s.message == "" {
		s.message = str(e) // Ollama's native {"error":"..."}
	}
	if d, ok := top["detail"]; ok && s.message == "" {
		if s.message = str(d); s.message == "" {
			var items []struct {
				Msg string `json:"msg"`
			}
			_ = json.Unmarshal(d, &items)
			for i, it := range items {
				if i > 0 {
					s.message += "; "
				}
				s.message += it.Msg
			}
		}
	}
	return s
}

// text is s for `ocrdraft check`'s lines alone: the endpoint's code, then its message. The
// message may quote our request back (an OpenAI-compatible server echoing the prompt, or a
// proxy the whole body), and a request to read a page holds the report: it never goes into a
// log line or a problem (see upstream), only into the check, whose one-token request holds no
// report.
func (s said) text() string {
	if s.code != "" && !strings.Contains(s.message, s.code) {
		return s.code + ": " + s.message
	}
	return s.message
}

// unlisted stands for an error type or code that is not in knownNames.
const unlisted = "(unlisted)"

// knownNames are the error types and codes of the OpenAI-compatible endpoints the service is
// used with, the only ones logged and shown. A type or code is a name an endpoint chose from its
// own list, but one not on ours could be anything: an endpoint that quotes the request may put
// a value or a patient's name there too (HbA1c_high_for_Wang_Xiuying, 654.321), and the request
// is the report. The shape of a name cannot tell them apart; a list can. An endpoint's other
// codes show as "(unlisted)": the status still says what failed, and `ocrdraft check` shows an
// endpoint's own words to its operator.
var knownNames = func() map[string]bool {
	m := map[string]bool{}
	for _, group := range [][]string{
		// OpenAI: platform.openai.com/docs/guides/error-codes and the error objects of its API
		// reference (type, code), as go-openai's APIError decodes them.
		{"invalid_request_error", "authentication_error", "permission_error", "not_found_error", "rate_limit_error",
			"server_error", "api_error", "insufficient_quota", "tokens", "requests", "invalid_api_key", "invalid_organization",
			"model_not_found", "context_length_exceeded", "rate_limit_exceeded", "billing_hard_limit_reached",
			"invalid_value", "invalid_type", "unsupported_value", "unsupported_parameter", "unknown_parameter",
			"missing_required_parameter", "invalid_image", "invalid_image_format", "invalid_image_url", "image_parse_error",
			"image_too_large", "content_policy_violation", "engine_overloaded", "unsupported_country_region_territory"},
		// Azure OpenAI: learn.microsoft.com/azure/ai-services/openai (REST reference, content
		// filtering, quotas): its codes beside OpenAI's.
		{"content_filter", "DeploymentNotFound", "OperationNotSupported", "InvalidRequest", "Unauthorized", "Forbidden",
			"NotFound", "TooManyRequests", "InternalServerError", "ServiceUnavailable", "Timeout", "invalid_payload"},
		// Alibaba Cloud Model Studio / DashScope: help.aliyun.com/zh/model-studio/error-code
		// (its native codes, and those of its OpenAI-compatible mode).
		{"InvalidParameter", "InvalidParameter.DataInspection", "DataInspectionFailed", "data_inspection_failed",
			"BadRequest.EmptyInput", "BadRequest.EmptyParameters", "BadRequest.EmptyModel", "BadRequest.TooLarge",
			"BadRequest.InputDownloadFailed", "BadRequest.UnsupportedFileFormat", "InvalidURL", "Arrearage",
			"UnsupportedOperation", "InvalidApiKey", "AccessDenied", "AccessDenied.Unpurchased", "RequestTimeOut",
			"Throttling", "Throttling.RateQuota", "Throttling.AllocationQuota", "Throttling.BurstRate", "InternalError",
			"InternalError.Algo", "InternalError.Timeout", "ModelNotFound", "invalid_parameter_error", "arrearage",
			"limit_requests", "insufficient_quota", "internal_error", "mismatched_model"},
		// Volcengine Ark: www.volcengine.com/docs/82379/1299023 (error codes).
		{"InvalidParameter.UnsupportedImageFormat", "AuthenticationError", "InvalidEndpointOrModel.NotFound",
			"ModelNotOpen", "RateLimitExceeded", "RateLimitExceeded.EndpointRPMExceeded", "RateLimitExceeded.EndpointTPMExceeded",
			"ServerOverloaded", "QuotaExceeded", "InternalServiceError", "SensitiveContentDetected", "AccountOverdueError"},
		// vLLM's OpenAI-compatible server (vllm/entrypoints/openai/protocol.py ErrorResponse: the
		// exception's class name as type, the status as code), Ollama's (openai/openai.go:
		// api_error, invalid_request_error), and Google's status names (google.rpc.Code), which
		// Gemini's OpenAI-compatible endpoint answers.
		{"BadRequestError", "NotFoundError", "InternalServerError", "NotImplementedError", "ValueError", "TypeError",
			"INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE", "UNAUTHENTICATED", "PERMISSION_DENIED",
			"NOT_FOUND", "RESOURCE_EXHAUSTED", "INTERNAL", "UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED", "UNKNOWN"},
	} {
		for _, n := range group {
			m[n] = true
		}
	}
	return m
}()

// token is an upstream's error type or code as it may be logged and shown: a name knownNames
// lists, or a code of digits alone (vLLM's 400) when it is the answer's status again;
// unlisted for any other, and nothing for none.
func token(s string, status int) string {
	switch {
	case s == "":
		return ""
	case knownNames[s] || s == strconv.Itoa(status):
		return s
	}
	return unlisted
}

// upstream is the problem.Upstream of an HTTP error answer: its status, type and code, never
// its message (see text).
func (s said) upstream(status int) *problem.Upstream {
	u := &problem.Upstream{Status: status, Type: token(s.typ, status), Code: token(s.code, status)}
	if s.plainText {
		u.Reason = "its error answer was not JSON"
	}
	return u
}

// names is u's status, type and code for a caller's detail: "401 invalid_request_error
// invalid_api_key".
func names(u *problem.Upstream) string {
	st := strconv.Itoa(u.Status)
	out := st
	for _, w := range []string{u.Type, u.Code} {
		if w != "" && w != unlisted && w != st && !strings.HasSuffix(out, " "+w) {
			out += " " + w
		}
	}
	return out
}

// imageSigns tells an endpoint's refusal of the image itself (a format it cannot decode, a size
// it will not take), which the caller can mend with another photo, from a refusal of our request
// or configuration, which only operators can mend. The first row that matches decides; the rows
// that say "not the image" come first, for messages that name images but mean the model (one
// without vision) or our request's shape. Codes match whole, params and messages in part, all
// without regard to case.
var imageSigns = []struct {
	field string // "code", "param" or "message"
	match string
	image bool
}{
	// The model takes no images, or not this many: configuration.
	{"message", "only supported by certain models", false}, // OpenAI, Azure: a model without vision
	{"message", "does not support image", false},
	{"message", "not a multimodal model", false},
	{"message", "may be provided in one request", false}, // vLLM's --limit-mm-per-prompt
	{"code", "invalid_type", false},                      // OpenAI: our request's shape
	{"code", "model_not_found", false},

	// The image.
	{"code", "invalid_image", true}, // OpenAI
	{"code", "invalid_image_format", true},
	{"code", "image_parse_error", true},
	{"code", "InvalidParameter.UnsupportedImageFormat", true}, // Volcengine
	{"message", "unsupported image", true},                    // OpenAI: "You uploaded an unsupported image."
	{"message", "invalid image", true},                        // Azure: "Invalid image (base64) data."
	{"message", "could not process image", true},
	{"message", "cannot identify image file", true}, // vLLM, from PIL
	{"message", "image: unknown format", true},      // Ollama, from Go's image package
	{"message", "failed to decode image", true},
	{"message", "image format", true},           // DashScope: "The image format is illegal", Ollama: "unsupported image format"
	{"message", "image length and width", true}, // DashScope: "… do not meet the model restrictions"
	{"message", "image size", true},
	{"message", "image is too large", true},
	{"message", "image is too small", true},
	{"param", "image_url", true}, // OpenAI: messages[0].content[0].image_url
}

// aboutImage reports whether an error answer refuses the image rather than the request.
func (s said) aboutImage() bool {
	for _, r := range imageSigns {
		var hit bool
		switch r.field {
		case "code":
			hit = strings.EqualFold(s.code, r.match)
		case "param":
			hit = containsFold(s.param, r.match)
		case "message":
			hit = containsFold(s.message, r.match)
		}
		if hit {
			return r.image
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// connSigns names a connection failure by the error's type, never its text, so that an operator
// can tell a refused port from a wrong scheme. The names hold no host or address (the caller sees
// them); the logged cause keeps those. retry says whether another try may help: a TLS mismatch
// or an untrusted certificate fails the same way every time.
var connSigns = []struct {
	is    func(error) bool
	name  string
	retry bool
}{
	{func(err error) bool {
		var e tls.RecordHeaderError // net/http turns one that starts "HTTP/" into ErrSchemeMismatch
		return errors.Is(err, http.ErrSchemeMismatch) || errors.As(err, &e)
	}, "the endpoint does not speak TLS: is the scheme http?", false},
	{func(err error) bool { var e x509.HostnameError; return errors.As(err, &e) },
		"TLS certificate is not for this host", false},
	{func(err error) bool { var e x509.UnknownAuthorityError; return errors.As(err, &e) },
		"TLS certificate is signed by an unknown authority", false},
	{func(err error) bool { var e x509.CertificateInvalidError; return errors.As(err, &e) },
		"TLS certificate is invalid or expired", false},
	{func(err error) bool { var e *tls.CertificateVerificationError; return errors.As(err, &e) },
		"TLS certificate not accepted", false},
	{func(err error) bool { var e *net.DNSError; return errors.As(err, &e) && e.IsNotFound },
		"host not found (DNS)", true},
	{func(err error) bool { var e *net.DNSError; return errors.As(err, &e) },
		"DNS lookup failed", true},
	{func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }, "connection refused", true},
	{func(err error) bool { return errors.Is(err, syscall.ECONNRESET) }, "connection reset", true},
	{func(err error) bool {
		return errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
	}, "host unreachable", true},
	{func(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) },
		"the endpoint closed the connection without an answer", true},
	{func(err error) bool { var e net.Error; return errors.As(err, &e) && e.Timeout() },
		"connection timed out", true},
}

// connKind names a connection failure, or says "connection failed" for one of no known kind.
func connKind(err error) (name string, retry bool) {
	for _, s := range connSigns {
		if s.is(err) {
			return s.name, s.retry
		}
	}
	return "connection failed", true
}
