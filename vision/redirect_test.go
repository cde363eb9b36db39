package vision

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ocrdraft/ocrdraft/problem"
)

// TestNoRedirects: an upstream answering 307 or 308 never gets the page or the key sent on to
// where it points, on another port of the same host or anywhere else; the call fails as the
// upstream failing, once, not retried.
func TestNoRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}]}`))
	}))
	defer sink.Close()
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		var calls atomic.Int32
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			http.Redirect(w, r, sink.URL+"/v1/chat/completions", code)
		}))
		c, err := New(Config{BaseURL: up.URL + "/v1", APIKey: key, Model: "qwen-vl-max", Tries: 3})
		if err != nil {
			t.Fatal(err)
		}
		c.sleep = new(waits).sleep
		_, err = c.Complete(t.Context(), Request{Prompt: "p", Images: []Image{{MIME: "image/png", Data: []byte("img")}}})
		var pe *problem.Error
		if !errors.As(err, &pe) || pe.Code != problem.ModelUnavailable || !strings.Contains(pe.Detail, "redirect") {
			t.Errorf("%d: err = %v, want model_unavailable saying redirect", code, err)
		}
		if pe != nil && (pe.Upstream == nil || pe.Upstream.Status != code) {
			t.Errorf("%d: upstream = %+v", code, pe.Upstream)
		}
		if calls.Load() != 1 {
			t.Errorf("%d: %d calls to the upstream, want 1 (a redirect is not retried)", code, calls.Load())
		}
		up.Close()
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests, want none", n)
	}
}
