package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/memnet"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
	"github.com/ocrdraft/ocrdraft/problem"
)

// listen serves e over a real loopback listener with the http.Server settings the command
// runs with (server.HTTPServer), so that what net/http does at the connection is tested too.
func (e *env) listen() string {
	e.t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = e.srv.HTTPServer()
	if e.inBubble {
		ts.Listener.Close()
		e.ln = memnet.Listen()
		ts.Listener = e.ln
	}
	ts.Start()
	e.t.Cleanup(ts.Close)
	e.addr = ts.Listener.Addr().String()
	return e.addr
}

// dial connects to the server listen started, over TCP or in memory as the env runs.
func (e *env) dial(t *testing.T) *rawConn {
	t.Helper()
	if e.ln == nil {
		return dial(t, e.addr)
	}
	c, err := e.ln.Dial(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	return wrap(t, c)
}

// post sends a request to the server listen started, as a client from elsewhere does.
func (e *env) post(path, contentType string, body io.Reader) (*http.Response, error) {
	c := http.DefaultClient
	if e.ln != nil {
		c = e.ln.Client()
		defer c.CloseIdleConnections()
	}
	return c.Post("http://"+e.addr+path, contentType, body)
}

// rawConn is a caller that writes whatever bytes it likes.
type rawConn struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return wrap(t, c)
}

func wrap(t *testing.T, c net.Conn) *rawConn {
	t.Cleanup(func() { c.Close() })
	// A bound on a hang, not on speed: every answer here comes well within it, or never.
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

// response reads one response, its body whole.
func (c *rawConn) response() (*http.Response, []byte) {
	c.t.Helper()
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("no response: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("response body: %v", err)
	}
	return res, b
}

// closed reports whether the server closed the connection (a read sees EOF or a reset).
func (c *rawConn) closed() bool {
	c.t.Helper()
	_, err := c.r.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("the connection is still open")
	}
	return err != nil
}

func codeOf(t *testing.T, b []byte) problem.Code {
	t.Helper()
	var doc problem.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not a problem document: %v: %q", err, b)
	}
	return doc.Code
}

// TestStalledBody: a request that declares a body and never sends it is answered on every
// route — 408 where the body is read, the route's own answer where it is not — and its
// connection is closed, instead of being held past every timeout.
func TestStalledBody(t *testing.T) {
	_, ct := multipartBody(t, page)
	for _, tt := range []struct {
		name, head string
		status     int
		code       problem.Code
	}{
		{"extract, multipart", "POST /v1/extract HTTP/1.1\r\nAuthorization: Bearer k1\r\nContent-Type: " + ct, 408, problem.RequestTimeout},
		{"extract, JSON", "POST /v1/extract HTTP/1.1\r\nAuthorization: Bearer k1\r\nContent-Type: application/json", 408, problem.RequestTimeout},
		{"parse", "POST /v1/parse HTTP/1.1\r\nAuthorization: Bearer k1\r\nContent-Type: text/plain", 408, problem.RequestTimeout},
		{"validate", "POST /v1/validate HTTP/1.1\r\nAuthorization: Bearer k1\r\nContent-Type: application/json", 408, problem.RequestTimeout},
		{"parse without a key", "POST /v1/parse HTTP/1.1\r\nContent-Type: text/plain", 401, problem.Unauthorized},
		{"extract with a wrong key", "POST /v1/extract HTTP/1.1\r\nAuthorization: Bearer nope\r\nContent-Type: " + ct, 401, problem.Unauthorized},
		{"healthz", "GET /healthz HTTP/1.1", 200, ""},
		{"no such route", "POST /nope HTTP/1.1", 404, problem.NotFound},
		{"wrong method", "PUT /v1/extract HTTP/1.1", 405, problem.MethodNotAllowed},
		{"chunked, never a chunk", "POST /v1/parse HTTP/1.1\r\nAuthorization: Bearer k1\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked", 408, problem.RequestTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, options{inBubble: true, apiKeys: []string{"k1"}, bodyIdle: 50 * time.Millisecond})
				e.model.Default(fakeopenai.Reply(lipid))
				e.listen()
				start := time.Now()
				c := e.dial(t)
				head := tt.head + "\r\nHost: x\r\n"
				if !strings.Contains(head, "chunked") {
					head += "Content-Length: 100000\r\n"
				}
				fmt.Fprint(c, head+"\r\n")
				res, b := c.response()
				if res.StatusCode != tt.status {
					t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.status, b)
				}
				if tt.code != "" && codeOf(t, b) != tt.code {
					t.Errorf("code %s, want %s", codeOf(t, b), tt.code)
				}
				if took := time.Since(start); tt.status == 408 && took != 50*time.Millisecond {
					t.Errorf("answered after %v, want after the 50ms idle timeout", took)
				}
				if !c.closed() {
					t.Error("the connection was kept open behind a body never sent")
				}
				if got := e.model.Calls(); got != 0 {
					t.Errorf("model calls = %d, want none", got)
				}
			})
		})
	}
}

// TestStalledBodiesFreeTurns: requests whose bodies never come cannot keep the turns from real
// callers beyond the idle timeout: with the one /v1/extract turn held by a stalled body, the
// next request waits for the turn, gets it when the stalled one is answered 408, and reads.
func TestStalledBodiesFreeTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, options{inBubble: true, maxRequests: 1, textInFlight: 1, queueWait: 10 * time.Second, bodyIdle: time.Second})
		e.model.Default(fakeopenai.Reply(lipid))
		e.listen()
		body, ct := multipartBody(t, page)
		raw, _ := io.ReadAll(body)

		stalled := e.dial(t)
		fmt.Fprintf(stalled, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ct, len(raw))
		stalled.Write(raw[:100])
		testwait.For(t, "the first request in flight", e.metricIs(1, "ocrdraft_extract_requests_in_flight"))

		res, err := e.post("/v1/extract", ct, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("behind a stalled body: %d, want 200 once its turn came free", res.StatusCode)
		}
		if res, b := stalled.response(); res.StatusCode != http.StatusRequestTimeout || codeOf(t, b) != problem.RequestTimeout {
			t.Errorf("the stalled request: %d %s, want 408 request_timeout", res.StatusCode, b)
		}

		// A text body that stalls holds no text turn at all: it is read before the turn is taken.
		stalled = e.dial(t)
		fmt.Fprint(stalled, "POST /v1/parse HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n{")
		res, err = e.post("/v1/parse", "text/plain", strings.NewReader(lipid))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("/v1/parse beside a stalled one: %d, want 200", res.StatusCode)
		}
		if res, _ := stalled.response(); res.StatusCode != http.StatusRequestTimeout {
			t.Errorf("the stalled /v1/parse: %d, want 408", res.StatusCode)
		}
	})
}

// TestRefusedBodyIsRead: a caller that sends its whole body before it reads — as Python's and
// Java's clients do without Expect: 100-continue — gets the 413 (or 401) it was sent, not a
// reset: the rest of the body is read and discarded after the answer, then the connection is
// closed. The body is larger than loopback's socket buffers, so that a server that stopped
// reading would block the caller's writes.
func TestRefusedBodyIsRead(t *testing.T) {
	const size = 24 << 20
	e := newEnv(t, options{apiKeys: []string{"k1"}, maxBytes: 1 << 20, maxRequest: 32 << 20})
	e.model.Default(fakeopenai.Reply(lipid))
	addr := e.listen()
	big := bytes.Repeat([]byte{0xA5}, size)
	for _, tt := range []struct {
		name, auth string
		status     int
		code       problem.Code
	}{
		{"an image over the image limit", "Bearer k1", 413, problem.PayloadTooLarge},
		{"no key", "", 401, problem.Unauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			b.WriteString("--x\r\nContent-Disposition: form-data; name=\"image\"; filename=\"p.jpg\"\r\n\r\n")
			b.Write(big)
			b.WriteString("\r\n--x--\r\n")
			c := dial(t, addr)
			fmt.Fprintf(c, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: %d\r\n\r\n", tt.auth, b.Len())
			if _, err := c.Write(b.Bytes()); err != nil {
				t.Fatalf("the server stopped reading the body: %v", err)
			}
			res, body := c.response()
			if res.StatusCode != tt.status || codeOf(t, body) != tt.code {
				t.Fatalf("%d %s, want %d %s", res.StatusCode, body, tt.status, tt.code)
			}
			if !res.Close || !c.closed() {
				t.Error("the connection was not closed after a refused body")
			}
		})
	}
}

// TestContentLengthAndTransferEncoding: a request with both (RFC 9112 §6.3: a smuggling
// attempt, perhaps) is answered and its connection closed, so nothing after it on the
// connection is read as a request.
func TestContentLengthAndTransferEncoding(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	addr := e.listen()
	c := dial(t, addr)
	reply := lipid
	fmt.Fprintf(c, "POST /v1/parse HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(reply), reply)
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") // smuggled behind it
	res, b := c.response()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, b)
	}
	if !res.Close || !c.closed() {
		t.Error("the connection was kept open after Content-Length with Transfer-Encoding")
	}
}

// TestHugeMethodLogged: net/http takes any token as a method; the log keeps 16 bytes of one.
func TestHugeMethodLogged(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	addr := e.listen()
	c := dial(t, addr)
	method := strings.Repeat("M", 60<<10)
	fmt.Fprintf(c, "%s /healthz HTTP/1.1\r\nHost: x\r\n\r\n", method)
	if res, _ := c.response(); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("status %d, want 405", res.StatusCode)
	}
	line := grep(e.log.String(), `"msg":"request"`)
	if line == "" || len(line) > 1000 || !strings.Contains(line, `"method":"MMMMMMMMMMMMMMMM…"`) {
		t.Errorf("the request line is %d bytes:\n%.300s", len(line), line)
	}
}

// TestUpstreamModelNameNotLogged: the log names the configured model, never the name the
// upstream answers with (a megabyte of it, or report text a proxy echoes).
func TestUpstreamModelNameNotLogged(t *testing.T) {
	e := newEnv(t, options{})
	e.model.Default(fakeopenai.Complete(fakeopenai.Response{Content: lipid, Model: "ZZ-upstream-" + strings.Repeat("x", 1<<20)}))
	if rec := e.do(extractReq(t, page)); rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	logs := e.log.String()
	if strings.Contains(logs, "ZZ-upstream") || !strings.Contains(logs, `"model":"test-vl"`) {
		t.Errorf("the log does not name the configured model alone:\n%.500s", logs)
	}
}

// TestValidateCapsErrors: a draft broken everywhere answers with at most 100 field problems and
// the count of the rest, not an answer many times the draft's size.
func TestValidateCapsErrors(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	var items []any
	for range 3000 {
		items = append(items, map[string]any{"itemName": " ", "valueNum": "x"})
	}
	rec := e.do(jsonReq("/v1/validate", map[string]any{"indicators": items}))
	var doc problem.Document
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != 422 {
		t.Fatalf("%d %v", rec.Code, err)
	}
	if len(doc.Errors) != problem.MaxFields || doc.Omitted < 5000 {
		t.Errorf("%d errors listed, %d omitted; want %d and the rest counted", len(doc.Errors), doc.Omitted, problem.MaxFields)
	}
	if rec.Body.Len() > 32<<10 {
		t.Errorf("the answer is %d bytes", rec.Body.Len())
	}
}
