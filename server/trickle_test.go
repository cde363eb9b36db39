package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
)

// TestTrickledBody: a body that makes progress, a byte at a time, but far slower than the
// minimum rate, is answered 408 soon after the grace, not at the request deadline, so that
// trickling sockets cannot hold the /v1/extract turns (taken before the body) for the whole
// deadline; a real upload waiting behind one gets its turn.
func TestTrickledBody(t *testing.T) {
	e := newEnv(t, options{maxRequests: 1, queueWait: 20 * time.Second, timeout: time.Minute,
		bodyIdle: 300 * time.Millisecond, minBodyRate: 16 << 10})
	e.model.Default(fakeopenai.Reply(lipid))
	addr := e.listen()
	body, ct := multipartBody(t, page)
	raw, _ := io.ReadAll(body)

	tr := dial(t, addr)
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
	waitFor(t, func() bool { return strings.Contains(e.get("/metrics"), "ocrdraft_extract_requests_in_flight 1") })

	res, err := http.Post("http://"+addr+"/v1/extract", ct, bytes.NewReader(raw))
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
}
