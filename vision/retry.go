package vision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft/problem"
)

const (
	backoffBase = 500 * time.Millisecond
	backoffMax  = 8 * time.Second
	// maxWait is the longest pause between tries. An upstream asking for more is reported at once,
	// with its Retry-After passed on, rather than holding a request (and a client) for minutes.
	maxWait = time.Minute
	// maxReason caps the upstream's words quoted in a Detail; maxCause caps the logged cause.
	maxReason = 200
	maxCause  = 1000
)

// hint holds what the transport saw of one try's response that go-openai does not pass on: its
// *APIError and *RequestError keep the status and body but drop the headers, Retry-After among
// them. (In v1.43.0 the response returned beside the error happens to carry them; nothing
// promises that.)
type hint struct {
	header http.Header
	images []*imageSub // streamed into the body in place of their tokens
}

type hintKey struct{}

// doer is the HTTP client go-openai calls. It leaves each response's headers in the hint that
// the try put in the request's context. A value per try, rather than a field on Client, keeps
// concurrent calls apart without a lock: the write happens inside CreateChatCompletion, on the
// goroutine that reads it after.
type doer struct{ hc *http.Client }

func (d doer) Do(r *http.Request) (*http.Response, error) {
	if h, ok := r.Context().Value(hintKey{}).(*hint); ok && len(h.images) > 0 {
		if err := streamImages(r, h.images); err != nil {
			return nil, err
		}
	}
	res, err := d.hc.Do(r)
	if res != nil {
		if h, ok := r.Context().Value(hintKey{}).(*hint); ok {
			h.header = res.Header
		}
	}
	return res, err
}

// retryAfter is how long the upstream asked us to wait, or 0. It reads OpenAI's retry-after-ms
// first, as OpenAI's own SDKs do, then Retry-After as seconds or an HTTP date.
func (h *hint) retryAfter(now time.Time) time.Duration {
	if h.header == nil {
		return 0
	}
	const most = 24 * time.Hour // also keeps a silly value from overflowing Duration
	if ms, err := strconv.ParseFloat(h.header.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return min(time.Duration(min(ms, float64(most/time.Millisecond))*float64(time.Millisecond)), most)
	}
	v := strings.TrimSpace(h.header.Get("Retry-After"))
	if s, err := strconv.Atoi(v); err == nil {
		if s <= 0 {
			return 0
		}
		return min(time.Duration(min(s, int(most/time.Second)))*time.Second, most)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), most)
	}
	return 0
}

// backoff is the pause before try+1 when the upstream gave no Retry-After: exponential from
// backoffBase, capped, with jitter so that many requests failing together do not return together.
func backoff(try int) time.Duration {
	d := backoffMax
	if try < 8 {
		d = min(backoffBase<<(try-1), backoffMax)
	}
	return d/2 + rand.N(d/2)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failure is one failed try, classified.
type failure struct {
	code       problem.Code
	retry      bool
	retryAfter time.Duration // the upstream's Retry-After, if it gave one
	what       string        // Detail's start, e.g. "model endpoint failed"
	reason     string        // the upstream's words, short and without the key; may be empty
	cause      error         // for the log, without the key
}

// classify sorts a failed try by what the error is, never by its text. timedOut says this try's
// own timeout ran out (the caller's context was checked before and is still alive).
func (c *Client) classify(err error, h *hint, timedOut bool) failure {
	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
		urlErr *url.Error
		netErr net.Error
	)
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0:
		quota := apiErr.Code == "insufficient_quota" || apiErr.Type == "insufficient_quota"
		return c.status(apiErr.HTTPStatusCode, apiErr.Message, quota, h, err)
	case errors.As(err, &reqErr):
		return c.status(reqErr.HTTPStatusCode, string(reqErr.Body), false, h, err)
	case timedOut:
		return failure{
			code: problem.ModelTimeout, retry: true, what: "model did not answer in time",
			cause: fmt.Errorf("vision: try took over %v: %w", c.cfg.AttemptTimeout, context.DeadlineExceeded),
		}
	case errors.As(err, &synErr), errors.As(err, &typErr):
		// A 200 whose body is not a chat completion: a proxy's HTML page, a wrong BaseURL. That
		// is the endpoint failing, so model_unavailable; not retried, since it answers the same
		// way every time.
		return failure{
			code: problem.ModelUnavailable, what: "model endpoint failed",
			reason: "its answer was not a chat completion", cause: c.scrub(err),
		}
	case errors.As(err, &urlErr), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// No quoting here: connection errors name hosts and addresses the caller has no business
		// seeing. The cause keeps them for the log.
		return failure{
			code: problem.ModelUnavailable, retry: true, what: "model endpoint failed",
			reason: "connection failed", cause: c.scrub(err),
		}
	default:
		// go-openai refused to build or send the request (its model checks, say): a
		// configuration problem that no retry mends.
		return failure{
			code: problem.ModelRejected, what: "model request refused before sending",
			reason: c.clip(err.Error(), maxReason), cause: c.scrub(err),
		}
	}
}

// defaultRateLimitWait is the Retry-After given for a 429 that named none.
const defaultRateLimitWait = 5 * time.Second

// status classifies an HTTP error answer. 429 means "slow down" unless it says the quota is
// spent, which waiting does not fix.
func (c *Client) status(code int, msg string, quota bool, h *hint, err error) failure {
	f := failure{reason: c.clip(fmt.Sprintf("%d %s", code, msg), maxReason), cause: c.scrub(err)}
	switch {
	case code == http.StatusTooManyRequests && !quota:
		f.code, f.retry, f.what = problem.ModelRateLimited, true, "model endpoint is rate limiting us"
		f.retryAfter = h.retryAfter(time.Now())
	case code >= 500:
		f.code, f.retry, f.what = problem.ModelUnavailable, true, "model endpoint failed"
	default:
		f.code, f.what = problem.ModelRejected, "model endpoint refused the request"
	}
	return f
}

// problem is f as the caller sees it, after tries calls.
func (f failure) problem(tries int) *problem.Error {
	detail := fmt.Sprintf("%s (%s)", f.what, plural(tries, "try", "tries"))
	if f.reason != "" {
		detail += ": " + f.reason
	}
	e := &problem.Error{Code: f.code, Detail: detail, Err: f.cause}
	if f.code == problem.ModelRateLimited {
		// The upstream's own Retry-After when it gave one; otherwise a few seconds, so the
		// caller is always told when to come back.
		e.RetryAfter = f.retryAfter
		if e.RetryAfter <= 0 {
			e.RetryAfter = defaultRateLimitWait
		}
	}
	return e
}

// scrub turns an upstream error into a cause fit for the log: its text without the key, capped,
// and no chain, since the wrapped go-openai errors hold the upstream body, which may quote the
// key back (errors.As would hand it out again).
func (c *Client) scrub(err error) error {
	return errors.New("vision: " + c.clip(err.Error(), maxCause))
}

// clip removes the API key from s, folds its whitespace and cuts it to at most n bytes. The key
// goes first, so that a cut cannot leave half of it behind.
func (c *Client) clip(s string, n int) string {
	if k := c.cfg.APIKey; k != "" {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
