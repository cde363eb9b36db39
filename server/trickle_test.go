package server_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
	"github.com/ocrdraft/ocrdraft/problem"
)

// TestTrickledBody: a body that makes progress, a byte at a time, but far slower than the
// minimum rate, is answered 408 soon after the grace, not at the request deadline, so that
// trickling sockets cannot hold the /v1/extract turns (taken before the body) for the whole
// deadline; a real upload waiting behind one gets its turn.
func TestTrickledBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, options{inBubble: true, maxRequests: 1, queueWait: 20 * time.Second, timeout: time.Minute,
			bodyIdle: 300 * time.Millisecond, minBodyRate: 16 << 10})
		e.model.Default(fakeopenai.Reply(lipid))
		e.listen()
		body, ct := multipartBody(t, page)
		raw, _ := io.ReadAll(body)

		tr := e.dial(t)
		fmt.Fprintf(tr, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ct, len(raw))
		stop := make(chan struct{})
		go func() { // a byte every 100 ms: progress within the idle timeout, 10 bytes a second
			for i := 0; i < len(raw); i++ {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := tr.Write(raw[i : i+1]); err != nil {
					return
				}
			}
		}()
		defer close(stop)
		testwait.For(t, "the trickled request in flight", e.metricIs(1, "ocrdraft_extract_requests_in_flight"))

		res, err := e.post("/v1/extract", ct, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("behind a trickled body: %d, want 200 once its turn came free", res.StatusCode)
		}
		r, b := tr.response()
		if r.StatusCode != http.StatusRequestTimeout || codeOf(t, b) != problem.RequestTimeout || !bytes.Contains(b, []byte("slower than 16 KiB/s")) {
			t.Errorf("the trickled request: %d %s, want 408 request_timeout saying it was too slow", r.StatusCode, b)
		}
	})
}

// TestTricklesHoldWhatArrived: uploads that declare a large body and send it slowly, but above
// the minimum rate, hold the upload memory of what has arrived, not of what they declare: two of
// them, declaring half the memory each, leave room for an ordinary request, which is answered
// 200, not 503 overloaded behind them.
func TestTricklesHoldWhatArrived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget = 2 << 20
		e := newEnv(t, options{inBubble: true, uploadMemory: budget, queueWait: 300 * time.Millisecond, timeout: time.Minute,
			bodyIdle: 2 * time.Second, minBodyRate: 8 << 10})
		e.model.Default(fakeopenai.Reply(lipid))
		e.listen()

		// Each trickle: a multipart body of one image part declaring budget/2 bytes in all, sent
		// at 40 KiB/s, five times the minimum rate.
		start := func(stop <-chan struct{}) *rawConn {
			var head bytes.Buffer
			w := multipart.NewWriter(&head)
			if _, err := w.CreateFormFile("image", "page.png"); err != nil {
				t.Fatal(err)
			}
			c := e.dial(t)
			fmt.Fprintf(c, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", w.FormDataContentType(), budget/2)
			c.Write(head.Bytes())
			go func() {
				chunk := bytes.Repeat([]byte{0x5a}, 4<<10)
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
			return c
		}
		stop := make(chan struct{})
		defer close(stop)
		start(stop)
		start(stop)
		testwait.For(t, "both trickles in flight", e.metricIs(2, "ocrdraft_extract_requests_in_flight"))
		time.Sleep(500 * time.Millisecond) // both have been reading for a while

		body, ct := multipartBody(t, page)
		raw, _ := io.ReadAll(body)
		res, err := e.post("/v1/extract", ct, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("beside two trickling uploads: %d %s, want 200", res.StatusCode, b)
		}

		if n := e.metric("ocrdraft_queue_waiting", "queue", "upload"); n != 0 {
			t.Errorf("%v requests wait for upload memory, want none", n)
		}
	})
}

// TestRateFromFirstRead: the minimum rate counts from when the body is first read, not from the
// request's arrival: a request that waited for its turn with its body ready is read, not
// cut as "slower than" for the time it spent waiting.
func TestRateFromFirstRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, options{inBubble: true, maxRequests: 1, queueWait: 5 * time.Second, bodyIdle: 300 * time.Millisecond, minBodyRate: 16 << 10})
		e.model.Queue(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second) // the first request holds the only turn for a second
			fakeopenai.Reply(lipid)(w, r)
		})
		e.model.Default(fakeopenai.Reply(lipid))
		e.listen()

		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("image", "page.png")
		fw.Write(page)
		w.WriteField("padding", strings.Repeat("x", 512<<10)) // many reads: counted from its arrival, the first are below the rate
		w.Close()
		raw := b.Bytes()

		first := make(chan int, 1)
		go func() {
			body, ct := multipartBody(t, page)
			res, err := e.post("/v1/extract", ct, body)
			if err != nil {
				first <- 0
				return
			}
			res.Body.Close()
			first <- res.StatusCode
		}()
		testwait.For(t, "the trickled request in flight", e.metricIs(1, "ocrdraft_extract_requests_in_flight"))

		res, err := e.post("/v1/extract", w.FormDataContentType(), bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("after waiting for its turn: %d %s, want 200", res.StatusCode, got)
		}
		if code := <-first; code != http.StatusOK {
			t.Errorf("the first request: %d", code)
		}
	})
}

// TestFastUploadsQueue: uploads that arrive at speed and together need more than the upload
// memory are read one after another, each sure of its room, and all answered 200: none is
// refused because the others each took part of the memory and all wait for more.
func TestFastUploadsQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, options{inBubble: true, uploadMemory: 1 << 20, queueWait: 300 * time.Millisecond})
		e.model.Default(fakeopenai.Reply(lipid))
		e.listen()
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("image", "page.png")
		fw.Write(page)
		w.WriteField("padding", strings.Repeat("x", 600<<10))
		w.Close()
		raw := b.Bytes()

		codes := make(chan int, 6)
		for range cap(codes) {
			go func() {
				res, err := e.post("/v1/extract", w.FormDataContentType(), bytes.NewReader(raw))
				if err != nil {
					codes <- 0
					return
				}
				res.Body.Close()
				codes <- res.StatusCode
			}()
		}
		for range cap(codes) {
			if code := <-codes; code != http.StatusOK {
				t.Errorf("status %d, want 200", code)
			}
		}
	})
}
