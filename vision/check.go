package vision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft/problem"
)

// routeSuffixes are paths the client appends itself. A base URL that already ends in one gets
// it twice (…/chat/completions/chat/completions) and a bare "404 page not found" on every call,
// so New refuses it with the fix instead.
var routeSuffixes = []string{"/chat/completions", "/completions", "/chat"}

// checkBaseURL refuses a base URL that is not http(s) or that already names a route.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return problem.Errorf(problem.ModelNotConfigured, "the base URL is not an http or https URL such as %s", DefaultBaseURL)
	}
	p := strings.TrimRight(u.Path, "/")
	for _, s := range routeSuffixes {
		if strings.HasSuffix(p, s) {
			fix := u.Scheme + "://" + u.Host + strings.TrimSuffix(p, s)
			return problem.Errorf(problem.ModelNotConfigured,
				"the base URL %s ends in %s, which the client appends itself: set OCR_MODEL_BASE_URL to %s, without %s",
				Endpoint(raw)+p, s, fix, s)
		}
	}
	return nil
}

// Endpoint is a base URL as the start log and `ocrdraft check` show it: scheme and host only,
// with no user info, path or query, which may hold secrets. "" is the default endpoint.
func Endpoint(baseURL string) string {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	return u.Scheme + "://" + u.Host
}

// KeylessDefault reports whether cfg sends no key to OpenAI's own API, which never answers
// without one: worth a warning at start, since every call would fail with 401.
func KeylessDefault(cfg Config) bool {
	if cfg.APIKey != "" {
		return false
	}
	return Endpoint(cfg.BaseURL) == Endpoint(DefaultBaseURL)
}

// CheckResult is one line of `ocrdraft check`.
type CheckResult struct {
	Name    string // CheckReachable, CheckKey or CheckModel
	OK      bool
	Message string // one line; when not OK, what to fix (or why it was not checked)
}

// The names of Check's results, in their order.
const (
	CheckReachable = "reachable"
	CheckKey       = "key accepted"
	CheckModel     = "model known"
)

// Check tries the endpoint, without retries, and says whether it is reachable, the key
// accepted and the model known, in that order, one result each.
//
// It asks GET {base}/models, which OpenAI, vLLM, Ollama, llama.cpp and DashScope answer with
// the models they serve, and looks for Config.Model in it (Ollama's "name" also as
// "name:latest"). An endpoint that does not answer /models with a list of models (no such
// route, an error, an empty list) is asked instead, in a second request, for a chat
// completion of one token to a one-line text prompt: no image and nothing from any report, at
// the cost of a few tokens. Messages name the settings to change (OCR_MODEL_BASE_URL,
// OCR_MODEL_API_KEY, OCR_MODEL) and hold no key. Each request is bounded by AttemptTimeout,
// if set, and by ctx, which should carry a deadline.
func (c *Client) Check(ctx context.Context) []CheckResult {
	at := Endpoint(c.cfg.BaseURL)
	h := &hint{}
	actx, cancel := c.attempt(ctx, h)
	list, err := c.api.ListModels(actx)
	timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
	cancel()
	if err == nil && len(list.Models) > 0 {
		return []CheckResult{
			{CheckReachable, true, "answered at " + at},
			c.keyOK(),
			c.listed(list.Models),
		}
	}
	if err != nil {
		f := c.classify(err, h, timedOut)
		if r, done := c.unanswered(ctx, f, at); done {
			return r
		}
		if st := f.upstream.Status; st == http.StatusUnauthorized || st == http.StatusForbidden {
			return []CheckResult{{CheckReachable, true, "answered at " + at}, c.keyRefused(f), notChecked(CheckModel, "the key was refused")}
		}
	}
	return c.probe(ctx, at)
}

// probe asks for a one-token chat completion, for endpoints without a usable /models.
func (c *Client) probe(ctx context.Context, at string) []CheckResult {
	req := openai.ChatCompletionRequest{
		Model:    c.cfg.Model,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Reply with the word OK."}},
	}
	if c.reasoning {
		req.MaxCompletionTokens = 1
	} else {
		req.MaxTokens = 1
	}
	h := &hint{}
	actx, cancel := c.attempt(ctx, h)
	_, err := c.api.CreateChatCompletion(actx, req)
	if _, ok := reread(h.body, err); ok {
		err = nil // only a count or a stamp was no Go int: see lenient.go
	}
	timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
	cancel()
	if err == nil {
		return []CheckResult{
			{CheckReachable, true, "answered at " + at},
			c.keyOK(),
			{CheckModel, true, fmt.Sprintf("%q answered a one-token chat completion (the endpoint lists no models)", c.cfg.Model)},
		}
	}
	f := c.classify(err, h, timedOut)
	if r, done := c.unanswered(ctx, f, at); done {
		return r
	}
	reached := CheckResult{CheckReachable, true, "answered at " + at}
	st := f.upstream.Status
	switch {
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return []CheckResult{reached, c.keyRefused(f), notChecked(CheckModel, "the key was refused")}
	case st == http.StatusNotFound && f.code == problem.ModelRejected && strings.Contains(f.reason, "nothing serves"):
		return []CheckResult{reached, notChecked(CheckKey, "no chat completions at the base URL"),
			{CheckModel, false, fmt.Sprintf("nothing serves chat completions at %s: set OCR_MODEL_BASE_URL to the endpoint up to its version, such as %s/v1", at, at)}}
	case st == http.StatusNotFound || (st == http.StatusBadRequest && containsFold(f.words, "model")):
		return []CheckResult{reached, c.keyOK(),
			{CheckModel, false, fmt.Sprintf("the endpoint does not know %q (%d %s): set OCR_MODEL to a model it serves", c.cfg.Model, st, f.words)}}
	}
	return []CheckResult{reached, notChecked(CheckKey, fmt.Sprintf("the endpoint answered %d", st)),
		{CheckModel, false, fmt.Sprintf("a one-token chat completion failed (%s): %s", f.code, cmp.Or(f.words, f.reason))}}
}

// unanswered is the results for a try that got no HTTP answer at all, if that is what f is.
func (c *Client) unanswered(ctx context.Context, f failure, at string) ([]CheckResult, bool) {
	why := ""
	switch {
	case ctx.Err() != nil:
		why = "no answer before the check's deadline"
	case f.upstream == nil:
		why = f.reason // refused before sending: not a connection at all
	case f.upstream.Status == 0:
		why = f.upstream.Reason
	default:
		return nil, false
	}
	return []CheckResult{
		{CheckReachable, false, fmt.Sprintf("%s: %s; check OCR_MODEL_BASE_URL and that the server is up", at, why)},
		notChecked(CheckKey, "the endpoint is not reachable"),
		notChecked(CheckModel, "the endpoint is not reachable"),
	}, true
}

func (c *Client) keyOK() CheckResult {
	if c.cfg.APIKey == "" {
		return CheckResult{CheckKey, true, "no key sent, and none asked for"}
	}
	return CheckResult{CheckKey, true, "accepted"}
}

func (c *Client) keyRefused(f failure) CheckResult {
	if c.cfg.APIKey == "" {
		return CheckResult{CheckKey, false, fmt.Sprintf("the endpoint wants a key (%d %s): set OCR_MODEL_API_KEY", f.upstream.Status, f.words)}
	}
	return CheckResult{CheckKey, false, fmt.Sprintf("the endpoint refused the key (%d %s): check OCR_MODEL_API_KEY", f.upstream.Status, f.words)}
}

// listed says whether the configured model is among models, naming a few of them if not. The
// names are the upstream's: each is shown only if plain, and clipped.
func (c *Client) listed(models []openai.Model) CheckResult {
	var some []string
	for _, m := range models {
		if m.ID == c.cfg.Model || (!strings.Contains(c.cfg.Model, ":") && m.ID == c.cfg.Model+":latest") {
			return CheckResult{CheckModel, true, fmt.Sprintf("%q is listed by the endpoint", c.cfg.Model)}
		}
		if len(some) < 3 && len(m.ID) <= maxModel && plain(m.ID, true) {
			some = append(some, m.ID)
		}
	}
	msg := fmt.Sprintf("%q is not among the endpoint's %d models", c.cfg.Model, len(models))
	if len(some) > 0 {
		msg += " (such as " + strings.Join(some, ", ") + ")"
	}
	return CheckResult{CheckModel, false, msg + ": set OCR_MODEL to one it serves"}
}

func notChecked(name, why string) CheckResult {
	return CheckResult{Name: name, Message: "not checked: " + why}
}
