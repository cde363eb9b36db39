// Package vision sends page photos to an OpenAI-compatible chat-completions endpoint and returns
// the model's reply as text. It knows nothing of drafts: parsing the reply is parse's job.
//
// Everything that can go wrong upstream leaves this package as a *problem.Error with a stable
// code, except a caller's cancellation, which is returned as the wrapped context error. Nothing
// here logs: prompts, images and replies are health data.
package vision

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft/problem"
)

// Output modes: how the reply is held to JSON.
const (
	ModePrompt     = "prompt"      // only the prompt asks for JSON; every server accepts it
	ModeJSONObject = "json_object" // response_format {"type":"json_object"}
	ModeJSONSchema = "json_schema" // response_format json_schema, strict, with Config.Schema
)

// SchemaName is the name sent with the json_schema response format. Some servers show it in
// their logs; none give it meaning.
const SchemaName = "ocr_draft"

// zeroTemperature is what Temperature 0 becomes on the wire. go-openai tags temperature
// omitempty, so a literal 0 is never sent and the server's default (often 0.7 to 1.0) applies,
// which makes the same photo read differently on each call. 0.01 survives omitempty and is
// greedy decoding in all but name.
const zeroTemperature = 0.01

// Config says where the model is and how to ask it.
type Config struct {
	// BaseURL is the endpoint up to and including its version, such as
	// https://api.openai.com/v1 (the default) or http://localhost:8000/v1 for vLLM;
	// /chat/completions is appended.
	BaseURL string
	APIKey  string // sent as a bearer token; empty sends none, as local servers want
	Model   string

	OutputMode string          // ModePrompt (the default), ModeJSONObject or ModeJSONSchema
	Schema     json.RawMessage // the JSON Schema itself, for ModeJSONSchema; sent strict, named SchemaName

	// MaxTokens bounds the reply (0 leaves it to the server). It is sent as max_tokens, the field
	// vLLM, Ollama, DashScope and OpenAI's chat models all know (Ollama ignores
	// max_completion_tokens, so a reply would run unbounded there). Models that refuse
	// max_tokens — OpenAI's reasoning models, by go-openai's own list — get
	// max_completion_tokens instead.
	MaxTokens int

	// Temperature is sent as given, except that 0 is sent as 0.01 (see zeroTemperature), and
	// reasoning models get none at all because they refuse anything but their own.
	Temperature float32

	// Tries is how many times one Complete may call the endpoint when it answers 429 or 5xx, or
	// the connection fails or an attempt times out. 0 means 3.
	Tries int

	// AttemptTimeout bounds each try, inside the context's deadline; 0 leaves only the context.
	// A hung upstream then costs one attempt rather than the whole request.
	AttemptTimeout time.Duration

	// HTTPClient sends the calls; nil means one with Go's default transport settings except
	// IdleConns and a 64 KiB bound on the answer's headers. Deadlines come from contexts. The
	// answer's body is bounded (MaxReplyBytes) whichever client sends.
	HTTPClient *http.Client

	// IdleConns is how many connections to the endpoint are kept open between calls, when
	// HTTPClient is nil. Go's default transport keeps 2, so under load nearly every call would
	// dial (and shake hands over TLS) afresh and leave a socket in TIME_WAIT. 0 means
	// DefaultIdleConns; the server passes its in-flight limit.
	IdleConns int

	// MaxReplyBytes bounds the endpoint's answer, on the wire and unpacked; a longer one fails
	// the call with model_unavailable. 0 means DefaultMaxReplyBytes.
	MaxReplyBytes int64
}

// DefaultBaseURL is Config.BaseURL's default: OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultIdleConns is Config.IdleConns's default.
const DefaultIdleConns = 64

// DefaultMaxReplyBytes is Config.MaxReplyBytes's default: sixteen times parse.MaxReply, which is
// all of a reply that is ever read, so a real completion (with its JSON escaping and usage) fits
// with room to spare, while an endless or 100 MB answer costs at most this much memory.
const DefaultMaxReplyBytes = 4 << 20

// Bounds on what the upstream says, so that nothing it controls leaves this package unbounded.
const (
	// MaxPrevious is the most of an earlier reply sent back when re-asking: parse reads no more
	// (parse.MaxReply), and the model needs no more to mend it.
	MaxPrevious = 256 << 10
	// MaxTokens is the largest token count believed; a usage count outside 0..MaxTokens is
	// clamped, so that sums and metrics stay sane whatever the upstream says.
	MaxTokens = 10_000_000
	maxModel  = 100 // bytes of a model name as the upstream gives it
	// maxHeaderBytes bounds the answer's headers (Go's transport allows 10 MB): a few KB is
	// what any endpoint sends.
	maxHeaderBytes = 64 << 10
	maxFinish      = 40 // bytes of a finish reason
)

// Image is one page photo. It is sent as a data: URL with detail "high": lab reports are dense
// small print, and "low" downsamples them to 512px, where digits blur.
//
// Its bytes come one of two ways. Data is lent: the caller keeps it, and every try of the call
// may send it again. Body is handed over, as an http.Request's Body is to the transport:
// Complete owns it from the call on and closes it after its last byte is written — as soon as a
// request body has carried all of it, since no later try sends it again — or, if no try got that
// far, before Complete returns. A caller that cannot afford to keep a page while the model works
// hands it over and loses the retries after it has gone; one that keeps it lends it, and lets go
// of it when its last call has returned. Body, when set, is what is sent; Data is then ignored.
//
// The Body is closed when Complete returns even if the transport is still writing a try's body
// that the endpoint answered early (or that the context cut off): that write is abandoned, its
// reference to the bytes ends with it moments later, and a Close that waited for it would let
// a request's memory stay counted after the request.
type Image struct {
	MIME string // image/jpeg, image/png, image/webp or image/gif
	Data []byte
	Body Body
	// Sent, if set, is called once, when a request body that carried the image has been written
	// to its end for the first time, maybe on the transport's goroutine: the request, image and
	// prompt, has been sent. It must be cheap and must not block. A call that never got that far
	// does not call it.
	Sent func()
}

// Body is an image handed over to Complete (see Image). *budget.Bytes is one: its Close gives
// the page's memory back.
type Body interface {
	Bytes() []byte // the image; Complete reads it once, when it builds the request
	Close() error  // lets go of the bytes; Complete calls it once, maybe on the transport's goroutine
}

// Bytes is the image's bytes: Body's, when it has one.
func (im Image) Bytes() []byte {
	if im.Body != nil {
		return im.Body.Bytes()
	}
	return im.Data
}

// Request is one question to the model.
//
// On the wire it becomes: a user message with the images and then Prompt as text; then,
// when re-asking after a reply that could not be parsed, Previous as the assistant's turn and
// Retry as the user's. Re-asking in the same conversation lets the model mend its own output
// rather than read the photos afresh and make different mistakes.
type Request struct {
	Prompt   string
	Images   []Image
	Previous string // the model's earlier, unusable reply; sent only with Retry, at most MaxPrevious bytes of it
	Retry    string // a short correction, such as "That was not valid JSON. Reply with one JSON object only."
}

// Close closes the Body of each of r's images. Complete does it on every way out; a Model that
// wraps it and returns without calling it (refusing a call it has no slot for) does it instead.
func (r Request) Close() {
	for _, im := range r.Images {
		if im.Body != nil {
			im.Body.Close()
		}
	}
}

// Reply is the model's answer, unparsed. Every field but Text and Refusal is safe to log:
// checked and capped here. Refusal is capped and escaped, but it is the model's words about the
// page, health data as Text is.
type Reply struct {
	// Text is the message's content; content sent as an array of parts is their text, joined.
	Text string
	// FinishReason is the upstream's: "length" means Text was cut off at MaxTokens; it is not
	// retried, because the caller can often salvage the part that arrived. An empty one, which
	// some servers send, is "stop"; one that is not a short word ([A-Za-z0-9_-]) is "unknown".
	FinishReason string
	// Refusal is OpenAI's refusal field: the model declined, saying this instead of answering.
	// It is capped and escaped for quoting to the caller.
	Refusal string
	// Model is the model that answered, as the upstream names it, if that is a plain name of at
	// most 100 bytes of [A-Za-z0-9._:/@+-]; otherwise Config.Model. Logs should still prefer the
	// configured name: this one is the upstream's word.
	Model            string
	PromptTokens     int // 0..MaxTokens, whatever the upstream said
	CompletionTokens int // 0..MaxTokens
	Tries            int // calls made, including the one that succeeded
}

// Client calls one model. It is safe for concurrent use.
type Client struct {
	api       *openai.Client
	cfg       Config
	reasoning bool
	format    *openai.ChatCompletionResponseFormat

	// sleep waits between tries; tests replace it to record the waits instead of taking them.
	sleep func(ctx context.Context, d time.Duration) error
}

// New checks cfg and returns a client. A bad config is a model_not_configured error naming the
// field, so the service fails at startup rather than on the first photo.
func New(cfg Config) (*Client, error) {
	bad := func(format string, args ...any) (*Client, error) {
		return nil, problem.Errorf(problem.ModelNotConfigured, format, args...)
	}
	if cfg.Model == "" {
		return bad("no model name")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if err := checkBaseURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	if cfg.OutputMode == "" {
		cfg.OutputMode = ModePrompt
	}
	if cfg.Tries == 0 {
		cfg.Tries = 3
	}
	if cfg.MaxReplyBytes == 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	switch {
	case cfg.Tries < 0:
		return bad("tries %d is negative", cfg.Tries)
	case cfg.MaxTokens < 0:
		return bad("max tokens %d is negative", cfg.MaxTokens)
	case cfg.Temperature < 0 || cfg.Temperature > 2:
		return bad("temperature %v is outside 0..2", cfg.Temperature)
	case cfg.AttemptTimeout < 0:
		return bad("attempt timeout %v is negative", cfg.AttemptTimeout)
	case cfg.IdleConns < 0:
		return bad("idle connections %d is negative", cfg.IdleConns)
	case cfg.MaxReplyBytes < 0:
		return bad("max reply bytes %d is negative", cfg.MaxReplyBytes)
	}

	c := &Client{cfg: cfg, reasoning: reasoning(cfg.Model), sleep: sleep}
	switch cfg.OutputMode {
	case ModePrompt:
	case ModeJSONObject:
		c.format = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	case ModeJSONSchema:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(cfg.Schema, &obj); err != nil {
			return bad("output mode json_schema needs a JSON Schema object: %v", err)
		}
		c.format = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: SchemaName, Schema: cfg.Schema, Strict: true,
			},
		}
	default:
		return bad("unknown output mode %q (want %s, %s or %s)", cfg.OutputMode, ModePrompt, ModeJSONObject, ModeJSONSchema)
	}

	hc := cfg.HTTPClient
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = cmp.Or(cfg.IdleConns, DefaultIdleConns)
		t.MaxIdleConnsPerHost = t.MaxIdleConns
		t.MaxResponseHeaderBytes = maxHeaderBytes
		hc = &http.Client{Transport: t}
	}
	hc = noRedirects(hc)
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = doer{hc: hc, max: cfg.MaxReplyBytes}
	c.api = openai.NewClientWithConfig(oc)
	return c, nil
}

// reasoning reports whether go-openai refuses max_tokens for model, which it does for OpenAI's
// reasoning models (o1, o3, o4, gpt-5 …); those also refuse a temperature. Asking its validator
// keeps one list of such models, theirs, and we never build a request it would refuse.
func reasoning(model string) bool {
	err := openai.NewReasoningValidator().Validate(openai.ChatCompletionRequest{Model: model, MaxTokens: 1})
	return errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated)
}

// Complete asks the model, trying again on 429, 5xx, connection failures and attempt timeouts,
// and returns its reply as is, whatever its finish reason. Failures are *problem.Error:
//
//   - model_rate_limited: still 429 after the tries, or its Retry-After ends past the deadline
//     (or beyond a minute); RetryAfter is the upstream's, when it gave one, at most
//     MaxRetryAfter.
//   - model_unavailable: 5xx or connection failures after the tries (a TLS mismatch or an
//     untrusted certificate after one); a 200 that is not a chat
//     completion, has no choices, or is larger than MaxReplyBytes (none of these retried).
//   - image_rejected: a 4xx about the image itself (a format or size the endpoint refuses; see
//     imageSigns), not retried: the caller can send another photo.
//   - model_rejected: any other 4xx (bad key, unknown model, spent quota), not retried.
//
// Each failure that came from the endpoint carries a problem.Upstream (its status and a short
// reason, or which kind of connection failure) for the request's log line.
//   - model_timeout: the context's deadline passed, or every try hit AttemptTimeout.
//
// If the caller cancels ctx, the upstream call is cancelled too and the error is canceled, ctx's
// error wrapped in it (problem.FromContext). No error holds the API key, even when the upstream
// quotes it back.
//
// Complete closes every image Body of req before it returns (see Image). A panic in a Body's
// Close, which may run on the transport's goroutine, is internal_error rather than a crash.
func (c *Client) Complete(ctx context.Context, req Request) (rep Reply, err error) {
	creq, images := c.request(req)
	defer func() {
		letGo(images)
		if p := panicked(images); p != nil {
			rep, err = Reply{}, p
		}
	}()
	for try := 1; ; try++ {
		h := &hint{images: images}
		actx, cancel := c.attempt(ctx, h)
		resp, err := c.api.CreateChatCompletion(actx, creq)
		cancel() // a deadline that fired first still shows in actx.Err()
		if r, ok := reread(h.body, err); ok {
			resp, err = r, nil // only a count or a stamp was no Go int: see lenient.go
		}
		h.body = nil
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		if err == nil {
			if len(resp.Choices) == 0 {
				// A 200 with nothing in it is the endpoint misbehaving, not the model refusing
				// (a refusal still comes as a choice), so it is model_unavailable. Not retried:
				// it is rarely transient, and the tries would only multiply the wait.
				return Reply{}, &problem.Error{
					Code:   problem.ModelUnavailable,
					Detail: "model endpoint answered without any choices",
					Err:    errors.New("vision: chat completion with no choices"),
				}
			}
			return c.reply(resp, try), nil
		}
		if ctx.Err() != nil {
			return Reply{}, c.ctxErr(ctx, try)
		}

		f := c.classify(err, h, timedOut)
		if f.retry && anyGone(images) {
			if f.reason != "" {
				f.reason += "; "
			}
			f.reason += "not retried: the image was sent once, without a copy kept"
			return Reply{}, f.problem(try)
		}
		if !f.retry || try >= c.cfg.Tries {
			return Reply{}, f.problem(try)
		}
		wait := f.retryAfter
		if wait == 0 {
			wait = backoff(try)
		}
		// Waiting past the deadline only to fail then helps no one, and an upstream that asks for
		// minutes is better reported to the caller, whose Retry-After says when to come back.
		if dl, ok := ctx.Deadline(); (ok && time.Until(dl) < wait) || wait > maxWait {
			return Reply{}, f.problem(try)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return Reply{}, c.ctxErr(ctx, try)
		}
	}
}

// reply reads the first choice of resp, checking every number and name the upstream gave.
func (c *Client) reply(resp openai.ChatCompletionResponse, try int) Reply {
	msg := resp.Choices[0].Message
	text := msg.Content
	if text == "" && len(msg.MultiContent) > 0 {
		// Some servers send content as an array of parts, [{"type":"text","text":…}], which
		// go-openai decodes into MultiContent. The text is the parts' text in order.
		var b strings.Builder
		for _, p := range msg.MultiContent {
			if p.ImageURL == nil {
				b.WriteString(p.Text)
			}
		}
		text = b.String()
	}
	finish := string(resp.Choices[0].FinishReason)
	switch {
	case finish == "":
		finish = string(openai.FinishReasonStop)
	case len(finish) > maxFinish || !plain(finish, false):
		finish = "unknown"
	}
	model := resp.Model
	if len(model) > maxModel || !plain(model, true) {
		model = c.cfg.Model
	}
	return Reply{
		Text:             text,
		FinishReason:     finish,
		Refusal:          c.clip(msg.Refusal, maxReason),
		Model:            model,
		PromptTokens:     tokens(resp.Usage.PromptTokens),
		CompletionTokens: tokens(resp.Usage.CompletionTokens),
		Tries:            try,
	}
}

// plain reports whether s is a nonempty word of ASCII letters, digits, '_' and '-', and for a
// name also '.', ':', '/', '@' and '+' (Qwen/Qwen2.5-VL-7B-Instruct, llama3.2-vision:11b).
func plain(s string, name bool) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
		case name && strings.ContainsRune(".:/@+", r):
		default:
			return false
		}
	}
	return true
}

// tokens is an upstream token count clamped to 0..MaxTokens.
func tokens(n int) int { return min(max(n, 0), MaxTokens) }

// attempt returns the context for one try: bounded by AttemptTimeout and carrying h, where the
// transport leaves the response's Retry-After.
func (c *Client) attempt(ctx context.Context, h *hint) (context.Context, context.CancelFunc) {
	ctx = context.WithValue(ctx, hintKey{}, h)
	if c.cfg.AttemptTimeout > 0 {
		return context.WithTimeout(ctx, c.cfg.AttemptTimeout)
	}
	return context.WithCancel(ctx)
}

// ctxErr reports the caller's context ending, as problem.FromContext maps it: its deadline is
// model_timeout, the caller's going away canceled.
func (c *Client) ctxErr(ctx context.Context, tries int) error {
	return problem.FromContext(ctx, "before the model answered ("+plural(tries, "try", "tries")+")")
}

func (c *Client) request(req Request) (openai.ChatCompletionRequest, []*imageSub) {
	// The instructions go in the user turn after the images, not in a system message: some
	// vision chat templates (Llama 3.2 Vision's among them) refuse or ignore a system prompt
	// next to an image, and every OpenAI-compatible server takes text beside images.
	parts := make([]openai.ChatMessagePart, 0, len(req.Images)+1)
	images := make([]*imageSub, len(req.Images))
	for i, im := range req.Images {
		images[i] = &imageSub{token: newToken(), data: im.Bytes(), body: im.Body, onSent: im.Sent} // see stream.go
		parts = append(parts, openai.ChatMessagePart{
			Type: openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{
				URL:    "data:" + im.MIME + ";base64," + images[i].token,
				Detail: openai.ImageURLDetailHigh,
			},
		})
	}
	if req.Prompt != "" {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: req.Prompt})
	}
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, MultiContent: parts}}
	if req.Retry != "" {
		if prev := cut(req.Previous, MaxPrevious); prev != "" {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: prev})
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.Retry})
	}

	r := openai.ChatCompletionRequest{Model: c.cfg.Model, Messages: msgs, ResponseFormat: c.format}
	if c.reasoning {
		r.MaxCompletionTokens = c.cfg.MaxTokens
		return r, images
	}
	r.MaxTokens = c.cfg.MaxTokens
	r.Temperature = c.cfg.Temperature
	if r.Temperature == 0 {
		r.Temperature = zeroTemperature
	}
	return r, images
}

// cut is s cut to at most n bytes, at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// noRedirects returns a copy of hc that never follows a redirect. Go's client would replay a
// 307 or 308 with its body, the page image, to wherever Location points, and keep the
// Authorization header when only the port differs: an upstream, or a proxy in its path, must
// not be able to send a patient's report and our key to another address. A redirect is
// answered as the upstream failing.
func noRedirects(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}
