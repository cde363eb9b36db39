package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The specification's libraries' own example (libraries/go/webhook_test.go, TestWebhookSign,
// the same in every language's tests).
const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS     = 1614265330
	specBody   = `{"test": 2432232314}`
	specSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func mustSecret(t *testing.T, s string) Secret {
	t.Helper()
	sec, err := ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func TestSignSpecVector(t *testing.T) {
	for _, s := range []string{specSecret, strings.TrimPrefix(specSecret, "whsec_")} {
		got, err := mustSecret(t, s).Sign(specID, time.Unix(specTS, 0), []byte(specBody))
		if err != nil || got != specSig {
			t.Errorf("Sign with %q = %q, %v; want %q", s, got, err, specSig)
		}
	}
}

func TestParseSecret(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{specSecret, true},
		{"whsec_" + strings.Repeat("A", 88), false}, // 66 bytes: over 64
		{"whsec_" + strings.Repeat("A", 44), true},  // 33 bytes
		{"whsec_not base64!", false},
		{"whsec_AAAA", false}, // 3 bytes
		{"", false},
	} {
		_, err := ParseSecret(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseSecret(%q) = %v, want ok %v", tt.in, err, tt.ok)
		}
		if err != nil && len(tt.in) > 8 && strings.Contains(err.Error(), tt.in[6:]) {
			t.Errorf("ParseSecret's error repeats the value: %v", err)
		}
	}
	sec := mustSecret(t, specSecret)
	for _, s := range []string{sec.String(), fmt.Sprintf("%v %+v %#v %s", sec, sec, sec, sec), sec.LogValue().String()} {
		if strings.Contains(s, "MfKQ") {
			t.Errorf("a secret shows its key: %q", s)
		}
	}
}

func TestVerify(t *testing.T) {
	sec := mustSecret(t, specSecret)
	now := time.Unix(specTS, 0)
	header := func(edit func(http.Header)) http.Header {
		h := http.Header{}
		h.Set(HeaderID, specID)
		h.Set(HeaderTimestamp, strconv.Itoa(specTS))
		h.Set(HeaderSignature, specSig)
		if edit != nil {
			edit(h)
		}
		return h
	}
	other := "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
	for _, tt := range []struct {
		name string
		h    http.Header
		body string
		now  time.Time
		want error
	}{
		{"the spec's example", header(nil), specBody, now, nil},
		{"within tolerance", header(nil), specBody, now.Add(DefaultTolerance - time.Second), nil},
		{"several signatures, one good", header(func(h http.Header) {
			h.Set(HeaderSignature, other+" v1a,"+other[3:]+" "+specSig+" v2,"+other[3:])
		}), specBody, now, nil},
		{"no id", header(func(h http.Header) { h.Del(HeaderID) }), specBody, now, ErrMissingHeaders},
		{"no timestamp", header(func(h http.Header) { h.Del(HeaderTimestamp) }), specBody, now, ErrMissingHeaders},
		{"no signature", header(func(h http.Header) { h.Del(HeaderSignature) }), specBody, now, ErrMissingHeaders},
		{"another signature", header(func(h http.Header) { h.Set(HeaderSignature, other) }), specBody, now, ErrSignature},
		{"the signature under another scheme", header(func(h http.Header) { h.Set(HeaderSignature, "v1a,"+specSig[3:]) }), specBody, now, ErrSignature},
		{"another body", header(nil), `{"test": 2432232315}`, now, ErrSignature},
		{"the body written again", header(nil), `{"test":2432232314}`, now, ErrSignature},
		{"another id", header(func(h http.Header) { h.Set(HeaderID, specID+"x") }), specBody, now, ErrSignature},
		{"too old", header(nil), specBody, now.Add(DefaultTolerance + time.Second), ErrTimestamp},
		{"too new", header(nil), specBody, now.Add(-DefaultTolerance - time.Second), ErrTimestamp},
		{"timestamp not seconds", header(func(h http.Header) { h.Set(HeaderTimestamp, "2021-02-25") }), specBody, now, ErrTimestamp},
	} {
		if err := sec.Verify(tt.h, []byte(tt.body), tt.now, 0); !errors.Is(err, tt.want) {
			t.Errorf("%s: Verify = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestSignRefusesIDs(t *testing.T) {
	sec := mustSecret(t, specSecret)
	for _, id := range []string{"", "msg.1", "msg 1", strings.Repeat("a", maxID+1)} {
		if _, err := sec.Sign(id, time.Now(), nil); err == nil {
			t.Errorf("Sign(%q) signed", id)
		}
	}
}

func TestAllowed(t *testing.T) {
	hosts := []string{"hooks.example.com", "Local.Test:8443", "10.0.0.7", "[::1]:9000"}
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"https://hooks.example.com/cb?token=x", true},
		{"http://HOOKS.example.COM:8080/cb", true}, // any port: listed without one
		{"https://local.test:8443/", true},
		{"https://local.test/", false},       // 443, not 8443
		{"http://local.test:8444/", false},   // another port
		{"http://10.0.0.7/x", true},          // an address, as listed
		{"http://[::1]:9000/x", true},        // IPv6 with its port
		{"http://[::1]:9001/x", false},       // another port
		{"https://evil.example.com/", false}, // not listed
		{"https://hooks.example.com.evil.test/", false},
		{"https://user:pw@hooks.example.com/", false},
		{"ftp://hooks.example.com/", false},
		{"hooks.example.com/cb", false},
		{"//hooks.example.com/cb", false},
		{"https:hooks.example.com", false},
		{"https://hooks.example.com/" + strings.Repeat("a", MaxURL), false},
		{"http://127.0.0.1/", false},
		{"http://169.254.169.254/latest/meta-data/", false},
	} {
		err := Allowed(tt.url, hosts)
		if (err == nil) != tt.ok {
			t.Errorf("Allowed(%q) = %v, want ok %v", tt.url, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "token") {
			t.Errorf("Allowed's error shows the query: %v", err)
		}
	}
	if err := Allowed("https://hooks.example.com/", nil); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("no list: %v, want ErrNotAllowed", err)
	}
}

func TestCheckHosts(t *testing.T) {
	if err := CheckHosts([]string{"a.example", "b.example:8080", "10.0.0.1", "[::1]:80", "::1"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"https://a.example", "a.example/cb", "*.example", "a.example:http", " "} {
		if err := CheckHosts([]string{bad}); err == nil {
			t.Errorf("CheckHosts(%q) accepted it", bad)
		}
	}
}

// receiver is an httptest server answering each try with the next of answers (the last one
// again when they run out), keeping what each try brought.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	answers []func(w http.ResponseWriter)
	got     []http.Header
	bodies  []string
}

func newReceiver(t *testing.T, answers ...func(w http.ResponseWriter)) *receiver {
	rv := &receiver{answers: answers}
	rv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rv.mu.Lock()
		n := len(rv.got)
		rv.got = append(rv.got, r.Header.Clone())
		rv.bodies = append(rv.bodies, string(b))
		a := rv.answers[min(n, len(rv.answers)-1)]
		rv.mu.Unlock()
		a(w)
	}))
	t.Cleanup(rv.Close)
	return rv
}

func status(code int, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		io.WriteString(w, "the receiver's own words, never to be repeated")
	}
}

func (rv *receiver) host(t *testing.T) string {
	u, err := url.Parse(rv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func fastSender(t *testing.T, hosts ...string) *Sender {
	return NewSender(Config{Secret: mustSecret(t, specSecret), Hosts: hosts, Tries: 4, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond, Timeout: 5 * time.Second})
}

// body stands for a job's result: health data, which no error may show.
const body = `{"id":"job_1","status":"succeeded","result":{"draft":{"title":"血脂四项"}}}`

func TestSendRetriesThenDelivers(t *testing.T) {
	rv := newReceiver(t, status(503, "Retry-After", "1"), status(429), status(204))
	s := fastSender(t, rv.host(t))
	start := time.Now()
	if err := s.Send(t.Context(), rv.URL+"/cb?token=abc", "msg_job_1", []byte(body)); err != nil {
		t.Fatal(err)
	}
	if len(rv.got) != 3 {
		t.Fatalf("tries = %d, want 3 (503, 429, then 204)", len(rv.got))
	}
	// Retry-After: 1 is honoured within MaxDelay (20 ms), not for a whole second.
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("took %v: Retry-After was not bounded by MaxDelay", d)
	}
	sec := mustSecret(t, specSecret)
	for i, h := range rv.got {
		if h.Get(HeaderID) != "msg_job_1" {
			t.Errorf("try %d: webhook-id %q, want the same id on every try", i+1, h.Get(HeaderID))
		}
		if rv.bodies[i] != body {
			t.Errorf("try %d: body %q", i+1, rv.bodies[i])
		}
		if err := sec.Verify(h, []byte(rv.bodies[i]), time.Now(), 0); err != nil {
			t.Errorf("try %d: %v", i+1, err)
		}
		if h.Get("Content-Type") != "application/json" {
			t.Errorf("try %d: Content-Type %q", i+1, h.Get("Content-Type"))
		}
	}
}

func TestSendFreshSignatureEachTry(t *testing.T) {
	rv := newReceiver(t, status(500), status(200))
	s := fastSender(t, rv.host(t))
	ts := time.Unix(specTS, 0)
	s.now = func() time.Time { ts = ts.Add(time.Second); return ts }
	if err := s.Send(t.Context(), rv.URL, "msg_1", []byte(body)); err != nil {
		t.Fatal(err)
	}
	a, b := rv.got[0], rv.got[1]
	if a.Get(HeaderTimestamp) == b.Get(HeaderTimestamp) || a.Get(HeaderSignature) == b.Get(HeaderSignature) {
		t.Errorf("tries share a timestamp or signature: %q %q / %q %q", a.Get(HeaderTimestamp), a.Get(HeaderSignature), b.Get(HeaderTimestamp), b.Get(HeaderSignature))
	}
}

func TestSendEnds(t *testing.T) {
	for _, tt := range []struct {
		name    string
		answers []func(http.ResponseWriter)
		tries   int
		status  int
	}{
		{"4xx ends at once", []func(http.ResponseWriter){status(400)}, 1, 400},
		{"410 ends at once", []func(http.ResponseWriter){status(410)}, 1, 410},
		{"408 is tried again", []func(http.ResponseWriter){status(408), status(200)}, 2, 0},
		{"tries run out", []func(http.ResponseWriter){status(502)}, 4, 502},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rv := newReceiver(t, tt.answers...)
			err := fastSender(t, rv.host(t)).Send(t.Context(), rv.URL+"/cb?token=abc", "msg_1", []byte(body))
			if len(rv.got) != tt.tries {
				t.Errorf("tries = %d, want %d", len(rv.got), tt.tries)
			}
			if tt.status == 0 {
				if err != nil {
					t.Errorf("Send = %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tt.status || e.Tries != tt.tries {
				t.Fatalf("Send = %#v, want an *Error with status %d after %d tries", err, tt.status, tt.tries)
			}
			noHealthData(t, err)
		})
	}
}

// noHealthData fails when err shows a body (sent or received) or the URL's query.
func noHealthData(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{"血脂", "succeeded", "receiver's own words", "token", "/cb"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q shows %q", err, s)
		}
	}
}

func TestSendNoRedirect(t *testing.T) {
	target := newReceiver(t, status(200))
	rv := newReceiver(t, status(http.StatusTemporaryRedirect, "Location", target.URL+"/elsewhere"))
	err := fastSender(t, rv.host(t), target.host(t)).Send(t.Context(), rv.URL, "msg_1", []byte(body))
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusTemporaryRedirect {
		t.Errorf("Send = %v, want the 307 as a failure", err)
	}
	if len(target.got) != 0 {
		t.Errorf("the redirect was followed: %d requests at its target", len(target.got))
	}
	if len(rv.got) != 1 {
		t.Errorf("tries = %d, want 1: a redirect is not tried again", len(rv.got))
	}
}

func TestSendRefusesUnlisted(t *testing.T) {
	rv := newReceiver(t, status(200))
	s := fastSender(t, "hooks.example.com")
	err := s.Send(t.Context(), rv.URL+"/cb?token=abc", "msg_1", []byte(body))
	if !errors.Is(err, ErrNotAllowed) || len(rv.got) != 0 {
		t.Errorf("Send to an unlisted host = %v after %d requests, want ErrNotAllowed and none", err, len(rv.got))
	}
	noHealthData(t, err)
	unsigned := NewSender(Config{Hosts: []string{rv.host(t)}})
	if err := unsigned.Send(t.Context(), rv.URL, "msg_1", []byte(body)); err == nil || len(rv.got) != 0 {
		t.Errorf("Send without a secret = %v after %d requests, want a refusal", err, len(rv.got))
	}
}

func TestSendNetworkErrorAndCancel(t *testing.T) {
	rv := newReceiver(t, status(200))
	addr, host := rv.URL, rv.host(t)
	rv.Close() // nothing listens there now
	err := fastSender(t, host).Send(t.Context(), addr+"/cb?token=abc", "msg_1", []byte(body))
	var e *Error
	if !errors.As(err, &e) || e.Tries != 4 || e.Status != 0 || e.Err == nil {
		t.Fatalf("Send to a closed port = %#v, want 4 tries without an answer", err)
	}
	noHealthData(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	busy := newReceiver(t, status(503))
	s := NewSender(Config{Secret: mustSecret(t, specSecret), Hosts: []string{busy.host(t)}, BaseDelay: time.Hour})
	go func() {
		for {
			busy.mu.Lock()
			n := len(busy.got)
			busy.mu.Unlock()
			if n > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	err = s.Send(ctx, busy.URL, "msg_1", []byte(body))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Send cancelled during its wait = %v, want context.Canceled", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"0", 0}, {"-3", 0}, {"soon", 0}, {"120", 2 * time.Minute},
		{"99999999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := retryAfter(tt.v, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestDefaultSchedule(t *testing.T) {
	s := NewSender(Config{Secret: mustSecret(t, specSecret)})
	var lo, hi time.Duration
	for n := 1; n < s.Tries(); n++ {
		d := s.Backoff(n, 0)
		lo, hi = lo+d, hi+d
	}
	// The sum of seven waits each within a fifth of 5 s, 15 s, … 30 min (60 min 20 s in all).
	if s.Tries() != 8 || lo < 48*time.Minute || hi > 73*time.Minute {
		t.Errorf("the default schedule is %d tries over %v, want 8 over about an hour", s.Tries(), lo)
	}
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{1, 5 * time.Second}, {2, 15 * time.Second}, {6, 1215 * time.Second}, {7, 30 * time.Minute}, {100, 30 * time.Minute}} {
		if d := s.Backoff(tt.n, 0); d < tt.want*4/5 || d > tt.want*6/5 {
			t.Errorf("Backoff(%d) = %v, want %v within a fifth", tt.n, d, tt.want)
		}
	}
	// A receiver's Retry-After longer than the wait is waited instead, up to MaxDelay; a
	// shorter one changes nothing.
	for _, tt := range []struct {
		n         int
		after, lo time.Duration
		hi        time.Duration
	}{
		{1, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute},
		{1, 2 * time.Hour, 30 * time.Minute, 30 * time.Minute},
		{2, time.Second, 12 * time.Second, 18 * time.Second},
	} {
		if d := s.Backoff(tt.n, tt.after); d < tt.lo || d > tt.hi {
			t.Errorf("Backoff(%d, %v) = %v, want %v to %v", tt.n, tt.after, d, tt.lo, tt.hi)
		}
	}
	for range 1000 {
		if d := jitter(time.Minute); d < 48*time.Second || d > 72*time.Second {
			t.Fatalf("jitter(1m) = %v, outside a fifth either way", d)
		}
	}
}

// TestAttempt: one try, which says whether another may succeed and what the receiver asked.
func TestAttempt(t *testing.T) {
	rv := newReceiver(t, status(503, "Retry-After", "120"), status(404), status(200))
	s := fastSender(t, rv.host(t))
	var e *Error
	err := s.Attempt(t.Context(), rv.URL, "msg_1", []byte(body))
	if !errors.As(err, &e) || !e.Retry || e.After != 2*time.Minute || e.Status != 503 || e.Tries != 1 {
		t.Errorf("503: %#v", err)
	}
	err = s.Attempt(t.Context(), rv.URL, "msg_1", []byte(body))
	if !errors.As(err, &e) || e.Retry || e.Status != 404 {
		t.Errorf("404: %#v", err)
	}
	if err := s.Attempt(t.Context(), rv.URL, "msg_1", []byte(body)); err != nil {
		t.Errorf("200: %v", err)
	}
}

// BenchmarkSign: a callback's signature over a large job (1 MiB of result), per try.
func BenchmarkSign(b *testing.B) {
	sec, _ := ParseSecret(specSecret)
	body := []byte(strings.Repeat(`{"itemName":"总胆固醇","valueNum":5.60},`, 1<<20/45))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := sec.Sign("msg_job_1", time.Unix(specTS, 0), body); err != nil {
			b.Fatal(err)
		}
	}
}
