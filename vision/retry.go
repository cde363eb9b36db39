package vision

import (
	"compress/flate"
	"compress/gzip"
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
	"unicode"
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
	// MaxRetryAfter caps the Retry-After passed on to a caller with model_rate_limited. An
	// upstream may ask for hours (a spent daily quota, a misconfigured proxy); a caller told to
	// come back in a minute can act on that and ask again, and is told again if it must wait.
	MaxRetryAfter = time.Minute
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
	status int         // the response's status, 0 if none came
	images []*imageSub // streamed into the body in place of their tokens
	body   []byte      // a 2xx answer's body, for reread
}

type hintKey struct{}

// doer is the HTTP client go-openai calls. It leaves each response's headers in the hint that
// the try put in the request's context. A value per try, rather than a field on Client, keeps
// concurrent calls apart without a lock: the write happens inside CreateChatCompletion, on the
// goroutine that reads it after.
//
// It also bounds what the upstream can make us hold: a completion body past max bytes fails the
// try with a *tooLarge, an error body is cut at maxErrorBody (go-openai quotes it, and we quote
// only maxReason of that), and a gzip body is unpacked here under the same bounds rather than by
// the transport, which would unpack a 250 KB bomb to gigabytes.
type doer struct {
	hc  *http.Client
	max int64 // Config.MaxReplyBytes
}

func (d doer) Do(r *http.Request) (*http.Response, error) {
	h, _ := r.Context().Value(hintKey{}).(*hint)
	if h != nil && len(h.images) > 0 {
		if err := streamImages(r, h.images); err != nil {
			return nil, err
		}
	}
	// Asking for gzip ourselves makes the transport leave the body packed (it unpacks only what
	// it asked for), so that bound below sees the unpacked size.
	if r.Header.Get("Accept-Encoding") == "" {
		r.Header.Set("Accept-Encoding", "gzip")
	}
	res, err := d.hc.Do(r)
	if res == nil {
		return res, err
	}
	if h != nil {
		h.header, h.status = res.Header, res.StatusCode
	}
	if err != nil {
		return res, err
	}
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		// go-openai would read a 3xx as a chat completion; it is a redirect, never followed.
		res.Body.Close()
		return nil, &redirected{status: res.StatusCode, to: res.Header.Get("Location")}
	}
	ok := res.StatusCode >= 200 && res.StatusCode < 300
	if ok && res.ContentLength > d.max {
		res.Body.Close()
		return nil, &tooLarge{d.max}
	}
	var keep *[]byte
	if h != nil {
		keep = &h.body
	}
	res.Body = d.bound(res, ok, keep)
	return res, nil
}

// maxErrorBody is how much of an error answer is read: enough for any real error object; a
// longer one is cut there (its status still counts, and go-openai keeps the cut body as text).
const maxErrorBody = 64 << 10

// bound wraps res's body: on the wire at most d.max bytes, and unpacked at most d.max for a
// completion (ok) or maxErrorBody, cut short, for an error answer. A completion is kept in
// *keep (if keep is not nil) for a lenient second read (see reread).
func (d doer) bound(res *http.Response, ok bool, keep *[]byte) io.ReadCloser {
	body := res.Body
	var r io.Reader = &capped{r: body, left: d.max, limit: d.max}
	if strings.EqualFold(strings.TrimSpace(res.Header.Get("Content-Encoding")), "gzip") {
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
		res.ContentLength, res.Uncompressed = -1, true
		r = &gunzip{src: r}
	}
	if ok {
		r = &capped{r: r, left: d.max, limit: d.max}
		if keep != nil {
			r = &keptBody{src: r, keep: keep}
		}
	} else {
		r = io.LimitReader(r, maxErrorBody)
	}
	return struct {
		io.Reader
		io.Closer
	}{r, body}
}

// redirectTo names a redirect's target for the log by its scheme and host alone: the rest of
// a Location is the upstream's text, and may be anything.
func redirectTo(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" || len(u.Host) > maxModel || !plain(u.Host, true) {
		return "a redirect, not followed"
	}
	return "a redirect to " + u.Scheme + "://" + u.Host + ", not followed"
}

// redirected is the error for an upstream answer that is a redirect (see noRedirects).
type redirected struct {
	status int
	to     string // Location, for the log only
}

func (e *redirected) Error() string {
	return fmt.Sprintf("redirect %d to %q, not followed", e.status, e.to)
}

// tooLarge is the error for an upstream answer of more than limit bytes.
type tooLarge struct{ limit int64 }

func (e *tooLarge) Error() string {
	return "vision: the model endpoint's answer was larger than " + size(e.limit)
}

// capped reads r and fails with *tooLarge once more than limit bytes have come.
type capped struct {
	r     io.Reader
	left  int64
	limit int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, &tooLarge{c.limit}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte past the cap tells a body of exactly limit from a longer one
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n - 1, &tooLarge{c.limit}
	}
	return n, err
}

// gunzip unpacks src, opening it on the first read so that Do does not block on the body.
type gunzip struct {
	src io.Reader
	zr  *gzip.Reader
	err error
}

func (g *gunzip) Read(p []byte) (int, error) {
	if g.zr == nil && g.err == nil {
		g.zr, g.err = gzip.NewReader(g.src)
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.zr.Read(p)
}

// size names n bytes for a person.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
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
	if s, err := strconv.Atoi(v); err == nil || errors.Is(err, strconv.ErrRange) {
		if s <= 0 { // a count past int64 is read as its far end, with its sign
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
	reason     string        // for the caller's detail: our words, or the upstream's status, type and code; may be empty
	words      string        // the upstream's error message, clipped: for `ocrdraft check` alone, never a log or a problem
	cause      error         // for the log, without the key or the upstream's message
	upstream   *problem.Upstream
}

// classify sorts a failed try by what the error is, never by its text. timedOut says this try's
// own timeout ran out (the caller's context was checked before and is still alive).
func (c *Client) classify(err error, h *hint, timedOut bool) failure {
	var (
		redir  *redirected
		bigErr *tooLarge
		apiErr *openai.APIError
		reqErr *openai.RequestError
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
		urlErr *url.Error
		netErr net.Error
		zipErr flate.CorruptInputError
	)
	switch {
	case errors.As(err, &redir):
		// Not retried: it would redirect again. Where it points is for the log, not the caller.
		return failure{
			code: problem.ModelUnavailable, what: "model endpoint failed",
			reason:   fmt.Sprintf("it answered %d, a redirect, which is never followed: set OCR_MODEL_BASE_URL to the endpoint itself", redir.status),
			cause:    c.scrub(err),
			upstream: &problem.Upstream{Status: redir.status, Reason: redirectTo(redir.to)},
		}
	case errors.As(err, &bigErr):
		// Not retried: the endpoint would most likely answer the same again, at the same cost.
		reason := "its answer was larger than " + size(bigErr.limit)
		return failure{
			code: problem.ModelUnavailable, what: "model endpoint failed",
			reason: reason, cause: c.scrub(err), upstream: &problem.Upstream{Status: h.status, Reason: reason},
		}
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0:
		quota := apiErr.Code == "insufficient_quota" || apiErr.Type == "insufficient_quota"
		return c.status(apiErr.HTTPStatusCode, saidAPI(apiErr), true, quota, h)
	case errors.As(err, &reqErr):
		return c.status(reqErr.HTTPStatusCode, saidBody(reqErr.Body), false, false, h)
	case timedOut:
		return failure{
			code: problem.ModelTimeout, retry: true, what: "model did not answer in time",
			cause:    fmt.Errorf("vision: try took over %v: %w", c.cfg.AttemptTimeout, context.DeadlineExceeded),
			upstream: &problem.Upstream{Reason: "no answer within the attempt timeout of " + c.cfg.AttemptTimeout.String()},
		}
	case errors.As(err, &synErr), errors.As(err, &typErr),
		errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, &zipErr):
		// A 200 whose body is not a chat completion: a proxy's HTML page, a wrong BaseURL. That
		// is the endpoint failing, so model_unavailable; not retried, since it answers the same
		// way every time.
		reason := "its answer was not a chat completion"
		return failure{
			code: problem.ModelUnavailable, what: "model endpoint failed",
			reason: reason, cause: c.scrub(err), upstream: &problem.Upstream{Status: h.status, Reason: reason},
		}
	case errors.As(err, &urlErr), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// Only the kind is quoted: connection errors name hosts and addresses the caller has no
		// business seeing. The cause keeps them for the log.
		kind, retry := connKind(err)
		return failure{
			code: problem.ModelUnavailable, retry: retry, what: "model endpoint failed",
			reason: kind, cause: c.scrub(err), upstream: &problem.Upstream{Reason: kind},
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
// spent, which waiting does not fix. A 4xx about the image is image_rejected, which the caller
// can mend; any other is model_rejected, which only operators can. decoded says the answer was
// an {"error":{...}} object; a 404 that was not is a route that does not exist, a wrong base URL.
func (c *Client) status(code int, s said, decoded, quota bool, h *hint) failure {
	up := s.upstream(code)
	f := failure{
		reason:   names(up),
		words:    c.clip(s.text(), maxReason),
		cause:    fmt.Errorf("vision: the endpoint answered %s", names(up)),
		upstream: up,
	}
	switch {
	case code == http.StatusTooManyRequests && !quota:
		f.code, f.retry, f.what = problem.ModelRateLimited, true, "model endpoint is rate limiting us"
		f.retryAfter = h.retryAfter(time.Now())
	case code >= 500:
		f.code, f.retry, f.what = problem.ModelUnavailable, true, "model endpoint failed"
	case code != http.StatusTooManyRequests && s.aboutImage():
		f.code, f.what = problem.ImageRejected, "model endpoint could not use the image"
	case code == http.StatusNotFound && !decoded:
		f.code, f.what = problem.ModelRejected, "model endpoint refused the request"
		f.reason += ": nothing serves chat completions at the base URL; its path should end in the API version, such as /v1"
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
	e := &problem.Error{Code: f.code, Detail: detail, Err: f.cause, Upstream: f.upstream}
	if f.code == problem.ModelRateLimited {
		// The upstream's own Retry-After when it gave one, up to MaxRetryAfter; otherwise a few
		// seconds, so the caller is always told when to come back.
		e.RetryAfter = min(f.retryAfter, MaxRetryAfter)
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

// clip removes the API key from s, folds its whitespace, escapes control and format characters
// (an escape sequence, a bidi override) and invalid UTF-8, and cuts it to at most n bytes. The
// key goes first, so that a cut cannot leave half of it behind. Every piece of upstream text
// that leaves this package goes through it.
func (c *Client) clip(s string, n int) string {
	if k := c.cfg.APIKey; k != "" {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	return clip(s, n)
}

func clip(s string, n int) string {
	if len(s) > 16*n {
		s = s[:16*n] // whatever folding and escaping do, the rest would be cut
	}
	s = strings.Join(strings.Fields(s), " ")
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.In(r, unicode.Cc, unicode.Cf):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	s = b.String()
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
