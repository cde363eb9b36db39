package memnet

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestServe: an HTTP server on the listener answers its client in a synctest bubble, where a
// handler's sleep takes the bubble's time exactly; once closed, dials fail.
func TestServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Listen()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Hour)
			io.WriteString(w, "late")
		})}
		go srv.Serve(l)
		c := l.Client()
		start := time.Now()
		res, err := c.Get("http://" + l.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != "late" || time.Since(start) != time.Hour {
			t.Errorf("got %q after %v, want late after 1h", b, time.Since(start))
		}
		c.CloseIdleConnections()
		srv.Close()
		if _, err := l.Dial(t.Context(), "", ""); !errors.Is(err, net.ErrClosed) {
			t.Errorf("dial after close: %v", err)
		}
	})
}
