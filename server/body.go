package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ocrdraft/ocrdraft/problem"
)

// HTTPServer is the http.Server to run s with: the header, idle and size limits are Config's.
// The command and the tests both serve through it, so that the tests see the settings that run.
// The caller may set BaseContext and the like; it must not set ReadTimeout or WriteTimeout,
// which would cut off a long /v1/extract (the body's own deadlines are set per request).
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
}

// body is a request body under the server's deadlines. net/http has none once the headers are
// in: a request that declares a body and never sends it would hold its connection, and the
// turn it took, forever. So each read must make progress within BodyIdleTimeout, and the whole
// body must be in by the route's deadline (limit); a read that fails either is request_timeout.
// It also tells the error path whether the body was read to its end (see handleError).
type body struct {
	io.ReadCloser
	rc    *http.ResponseController
	idle  time.Duration
	limit time.Time // the whole body's deadline
	what  string    // the limit's name, for the detail
	start time.Time // the first Read, moved on by any wait for upload memory since
	rate  int64     // bytes a second the body must average once idle has passed since start

	up *upload // its share of the upload memory, while charged (see readTurn)

	reads int   // calls to Read: the first one sends a 100 Continue the caller may wait for
	n     int64 // bytes read
	eof   bool
	err   error // the first read error other than EOF
	drain bool  // answered before the body was read: discard what comes, then close
}

func (b *body) Read(p []byte) (int, error) {
	if b.eof || b.err != nil {
		return 0, b.failed()
	}
	if b.reads == 0 {
		// The rate is the caller's from the moment the body is read: before that the request
		// may have waited for its turn, and bytes it sent then wait in the socket's buffers.
		b.start = time.Now()
	}
	b.reads++
	if b.up != nil {
		var waited time.Duration
		var err error
		p, waited, err = b.up.room(p, b.n)
		b.start = b.start.Add(waited)
		if err != nil {
			b.up = nil // what is left of it may be drained without holding memory
			return 0, err
		}
	}
	_ = b.rc.SetReadDeadline(b.deadline()) // unsupported by recorders
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		// Past the body, net/http reads on in the background to see the caller go away; a
		// deadline firing there would cancel the request, so none is left for it.
		b.eof = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		detail := fmt.Sprintf("the request body made no progress for %v", b.idle)
		switch now := time.Now(); {
		case !now.Before(b.limit):
			detail = fmt.Sprintf("the request body was not all there by the %s", b.what)
		case b.rate > 0 && !now.Before(b.slowBy()):
			detail = fmt.Sprintf("the request body arrived slower than %d KiB/s", b.rate>>10)
		}
		err = &problem.Error{Code: problem.RequestTimeout, Detail: detail + "; the connection is closed", Err: err}
		b.err = err
	case err != nil:
		b.err = err
	}
	return n, err
}

// deadline is the next read's: idle from now, but never past the limit, nor past the moment
// the bytes read so far fall below the minimum rate.
func (b *body) deadline() time.Time {
	d := time.Now().Add(b.idle)
	if b.rate > 0 {
		d = minTime(d, b.slowBy())
	}
	return minTime(d, b.limit)
}

// slowBy is when the body, at the bytes read so far, falls below its minimum rate: after a
// grace of idle, each rate bytes buy one more second.
func (b *body) slowBy() time.Time {
	return b.start.Add(b.idle + time.Duration(float64(b.n)/float64(b.rate)*float64(time.Second)))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// endCharge stops charging the body in the upload memory: it is read, or will not be.
func (b *body) endCharge() {
	b.up.end()
	b.up = nil
}

// failed is what a read returns once the body has ended.
func (b *body) failed() error {
	if b.err != nil {
		return b.err
	}
	return io.EOF
}

// guardBody puts a request's body under its deadlines, and closes the connection after a
// request whose framing is in doubt or whose body was not read. It runs before anything that
// reads the body.
//
// RFC 9112 §6.3: a request with both Content-Length and Transfer-Encoding may be an attempt at
// request smuggling, and the connection must be closed after it. net/http drops the
// Content-Length before a handler sees the request, so the two cannot be told from
// Transfer-Encoding alone here: every request with a Transfer-Encoding closes its connection.
// That costs a chunked uploader a new connection per request, nothing more.
func (s *Server) guardBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength == 0 { // no body: net/http's own background read watches the caller
			return next(c)
		}
		if len(r.TransferEncoding) > 0 {
			c.Response().Header().Set(echo.HeaderConnection, "close")
		}
		limit, what := s.cfg.TextTimeout, "request deadline of "+s.cfg.TextTimeout.String()
		if c.Path() == "/v1/extract" {
			limit, what = s.cfg.RequestTimeout, "request deadline of "+s.cfg.RequestTimeout.String()
		}
		b := &body{
			ReadCloser: r.Body, rc: http.NewResponseController(c.Response()),
			idle: s.cfg.BodyIdleTimeout, limit: time.Now().Add(limit), what: what,
			start: time.Now(), rate: s.cfg.MinBodyRate,
		}
		// Even a route that never reads the body has net/http read up to 256 KB of it after
		// the handler, to keep the connection; this bounds that read too.
		_ = b.rc.SetReadDeadline(b.deadline())
		r.Body = b
		c.Set(ctxBody, b)
		err := next(c)
		b.endCharge()
		if b.drain {
			b.discard(s.cfg.MaxRequestBytes-b.n, time.Now().Add(s.cfg.DrainTimeout))
		}
		return err
	}
}

// refuseBody prepares the answer to a request refused before its body was read to the end:
// the connection is closed after it, and, unless the body has already failed or the caller
// waits for a 100 Continue it will now never get, the rest of the body is read and discarded
// after the answer is sent (see discard). A caller that sends its whole body before it reads
// the answer (most do, without Expect: 100-continue) would otherwise be cut off mid-upload,
// its socket reset, and never see the 413 or 401 it was sent.
func refuseBody(c echo.Context) {
	b, ok := c.Get(ctxBody).(*body)
	if !ok || b.eof {
		return
	}
	c.Response().Header().Set(echo.HeaderConnection, "close")
	waits := strings.EqualFold(c.Request().Header.Get("Expect"), "100-continue") && b.reads == 0
	if b.err == nil && !waits {
		// Reading the body after the answer is written needs full duplex on HTTP/1.
		b.drain = b.rc.EnableFullDuplex() == nil
	}
}

// discard reads and drops up to max more bytes of the body, each read within the idle
// timeout, all by until. The answer is flushed first, so the caller can read it while it
// finishes sending. Whatever is left when it stops is cut off with the connection.
func (b *body) discard(max int64, until time.Time) {
	_ = b.rc.Flush()
	b.endCharge() // what is discarded is held nowhere
	if max <= 0 {
		return
	}
	b.limit, b.what = until, "drain deadline"
	_, _ = io.CopyN(io.Discard, struct{ io.Reader }{b}, max)
}

// bodyTimeout finds the body's request_timeout in err's chain, under any wrapping (the
// multipart reader's, intake's): it is the cause, whatever the reader made of it.
func bodyTimeout(err error) (*problem.Error, bool) {
	for ; err != nil; err = errors.Unwrap(err) {
		if pe, ok := err.(*problem.Error); ok && pe.Code == problem.RequestTimeout {
			return pe, true
		}
	}
	return nil, false
}

// logToken bounds a caller's token (a method, say) for the log: net/http accepts any token as
// a method, a megabyte of one included. The standard ones are kept; others are cut to 16 bytes,
// with an ellipsis to say so. (The JSON log escapes what is left.)
func logToken(s string) string {
	switch s {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return s
	}
	const max = 16
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
