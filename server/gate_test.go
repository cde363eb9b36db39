package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/problem"
)

// TestTextGate: with every text turn taken, /v1/parse and /v1/validate wait QueueWait and get
// 503 overloaded with Retry-After, as /v1/extract does; a turn given back lets them through.
func TestTextGate(t *testing.T) {
	s := New(Config{TextInFlight: 1, QueueWait: 20 * time.Millisecond})
	if err := s.texts.Enter(t.Context(), nil); err != nil { // the one turn, held
		t.Fatal(err)
	}
	req := func(path, ct, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec
	}
	for _, path := range []string{"/v1/parse", "/v1/validate"} {
		rec := req(path, "application/json", `{"reply":"{}"}`)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), string(problem.Overloaded)) || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("%s with no text turn free: %d %s, Retry-After %q", path, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
	}
	s.texts.Leave()
	if rec := req("/v1/parse", "text/plain", `{"indicators":[{"itemName":"a","valueNum":1}]}`); rec.Code != http.StatusOK {
		t.Errorf("with the turn back: %d %s", rec.Code, rec.Body)
	}
}
