package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Defaults of Config's zero fields. With them a message is tried 8 times over about an hour:
// at once, then after 5 s, 15 s, 45 s, 2 min 15 s, 6 min 45 s, 20 min 15 s and 30 min (each
// wait within a fifth either way, at random, so that receivers that fail together are not
// called again together).
const (
	DefaultTries     = 8
	DefaultBaseDelay = 5 * time.Second
	DefaultMaxDelay  = 30 * time.Minute
	DefaultTimeout   = 30 * time.Second // one try, connection to answer: the specification's 15 to 30 s
)

// maxAnswer bounds the receiver's answer read (and thrown away) so that the connection can
// be used again; a longer answer is cut and its connection closed.
const maxAnswer = 64 << 10

// Config assembles a Sender.
type Config struct {
	Secret Secret   // signs every try; a Sender without one refuses to send
	Hosts  []string // the allowlist (OCR_CALLBACK_HOSTS), checked on every Send: see Allowed
	// Tries bounds the tries of one message, the first included; 0 means DefaultTries.
	Tries int
	// BaseDelay is the wait after the first failed try; each next wait is three times the
	// last, up to MaxDelay. A receiver's Retry-After longer than the wait is waited instead,
	// up to MaxDelay. 0 means the defaults.
	BaseDelay, MaxDelay time.Duration
	// Timeout bounds one try, from dialling to the end of the answer's headers and the
	// bounded read of its body; 0 means DefaultTimeout.
	Timeout time.Duration
	// Transport carries the requests; nil means a transport of the Sender's own (the
	// environment's proxy, as net/http's default). Tests use it to count connections.
	Transport http.RoundTripper
}

// Sender posts signed messages to allowed callback URLs, trying again as Config says. It is
// safe for concurrent use.
type Sender struct {
	cfg    Config
	client *http.Client
	now    func() time.Time
}

// NewSender returns a Sender.
func NewSender(cfg Config) *Sender {
	if cfg.Tries <= 0 {
		cfg.Tries = DefaultTries
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = DefaultBaseDelay
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = DefaultMaxDelay
	}
	cfg.MaxDelay = max(cfg.MaxDelay, cfg.BaseDelay)
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	tr := cfg.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	return &Sender{
		cfg: cfg,
		client: &http.Client{
			Transport: tr,
			Timeout:   cfg.Timeout,
			// A redirect could lead anywhere, the allowlist's hosts' neighbours included: the
			// 3xx is the answer, and a failure (the receiver should give its new URL instead).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		now: time.Now,
	}
}

// Error is a message not delivered: the host it was for, the tries made, and the last try's
// status (0 when it got no answer) or error, whether another try may succeed, and how long the
// receiver asked to wait before it (Retry-After, 0 when it said nothing). It never holds a
// body or the URL's path.
type Error struct {
	Host   string
	Tries  int
	Status int
	Err    error // the last try's own error, when it got no answer; nil else
	Retry  bool  // a network error, a timeout, 408, 429 or 5xx: worth another try
	After  time.Duration
}

func (e *Error) Error() string {
	tries := "tries"
	if e.Tries == 1 {
		tries = "try"
	}
	s := fmt.Sprintf("callback to %s not delivered after %d %s: ", e.Host, e.Tries, tries)
	switch {
	case e.Status != 0:
		return s + "the receiver answered " + strconv.Itoa(e.Status) + " " + http.StatusText(e.Status)
	case e.Err != nil:
		return s + e.Err.Error()
	}
	return s + "no answer"
}

func (e *Error) Unwrap() error { return e.Err }

// Send posts body to rawURL as message msgID until a try is answered 2xx (nil), or with a
// status that asks for no retry (3xx, 4xx but 408 and 429: an *Error at once), or the tries
// run out (an *Error), or ctx ends (an *Error wrapping ctx's error). Every try carries the same
// webhook-id and a fresh timestamp and signature. A URL that Allowed refuses is refused before
// any try. Send waits between tries (about an hour in all, by default); a caller that keeps
// its own schedule, durable across restarts, calls Attempt and Backoff instead.
func (s *Sender) Send(ctx context.Context, rawURL, msgID string, body []byte) error {
	for try := 1; ; try++ {
		err := s.Attempt(ctx, rawURL, msgID, body)
		var fail *Error
		if !errors.As(err, &fail) {
			return err // nil, or refused before any try
		}
		fail.Tries = try
		if !fail.Retry || try >= s.cfg.Tries {
			return fail
		}
		t := time.NewTimer(s.Backoff(try, fail.After))
		select {
		case <-ctx.Done():
			t.Stop()
			fail.Status, fail.Err, fail.Retry = 0, ctx.Err(), false
			return fail
		case <-t.C:
		}
	}
}

// Attempt makes one try: nil when it was answered 2xx, an *Error (Tries 1) when it was not,
// saying whether another may succeed, or the refusal of a URL that Allowed refuses, of a
// Sender without a secret, or of a bad msgID.
func (s *Sender) Attempt(ctx context.Context, rawURL, msgID string, body []byte) error {
	if err := Allowed(rawURL, s.cfg.Hosts); err != nil {
		return err
	}
	if s.cfg.Secret.IsZero() {
		return errors.New("webhook: OCR_WEBHOOK_SECRET is not set: a callback is never sent unsigned")
	}
	if err := checkID(msgID); err != nil {
		return err
	}
	u, _ := url.Parse(rawURL) // Allowed has read it
	status, after, err := s.try(ctx, rawURL, msgID, body)
	if err == nil && status/100 == 2 {
		return nil
	}
	return &Error{Host: u.Host, Tries: 1, Status: status, Err: err, Retry: err != nil || retryable(status), After: after}
}

// Tries is the bound on a message's tries (Config.Tries or its default).
func (s *Sender) Tries() int { return s.cfg.Tries }

// Backoff is the wait after failed try n (1 for the first): BaseDelay tripled n-1 times, up
// to MaxDelay, within a fifth either way at random, so that receivers that failed together
// are not called again together; or, when the receiver asked for longer (after, its
// Retry-After: Error.After), that, up to MaxDelay. Send waits it, and so does a caller that
// keeps its own schedule.
func (s *Sender) Backoff(n int, after time.Duration) time.Duration {
	d := s.cfg.BaseDelay
	for i := 1; i < n && d < s.cfg.MaxDelay; i++ {
		d *= 3
	}
	d = jitter(min(d, s.cfg.MaxDelay))
	if after > d {
		d = min(after, s.cfg.MaxDelay)
	}
	return d
}

// RetryAfter is how long the receiver asked to wait before the next try (its Retry-After), 0
// when it said nothing: for a caller that schedules the next try itself (Backoff).
func (e *Error) RetryAfter() time.Duration { return e.After }

// retryable says whether an answer asks to be tried again: 408, 429 and 5xx.
func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// jitter is d within a fifth either way.
func jitter(d time.Duration) time.Duration {
	return d - d/5 + rand.N(2*d/5+1)
}

// try posts once: the answer's status and Retry-After, or the error of a try that got none.
// The answer's body is read to maxAnswer and thrown away, never looked at.
func (s *Sender) try(ctx context.Context, rawURL, msgID string, body []byte) (int, time.Duration, error) {
	now := s.now()
	sig, err := s.cfg.Secret.Sign(msgID, now, body)
	if err != nil {
		return 0, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, errors.New("the request cannot be made")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ocrdraft-webhook")
	req.Header.Set(HeaderID, msgID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, whose path or query may hold the receiver's token
		}
		return 0, 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After"), now), nil
}

// retryAfter reads a Retry-After header, seconds or an HTTP date, as a wait from now (0 when
// absent, unreadable or past).
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
