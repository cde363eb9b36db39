package review_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/server/review"
)

// TestOrigin: an embedder is an origin exactly as a browser writes it, since frame-ancestors
// and postMessage's targetOrigin compare them so.
func TestOrigin(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"https://health.example.com", true},
		{"http://localhost:3000", true},
		{"https://health.example.com/", false},
		{"https://health.example.com/app", false},
		{"https://*.example.com", false},
		{"*", false},
		{"HTTPS://Health.example.com", false},
		{"https://user@health.example.com", false},
		{"ftp://health.example.com", false},
		{"health.example.com", false},
		{"https://health.example.com?x=1", false},
	} {
		if err := review.Origin(tt.in); (err == nil) != tt.ok {
			t.Errorf("Origin(%q) = %v, want ok %v", tt.in, err, tt.ok)
		}
	}
}

// TestRoute: the page and its assets come with the strict CSP, frame-ancestors exactly the
// embedders ('none' without), the page says whether a key is asked for; OCR_REVIEW=off is 404.
func TestRoute(t *testing.T) {
	tests := []struct {
		name   string
		cfg    server.Config
		path   string
		status int
		ct     string
		csp    string // a part of the CSP
		body   string // a part of the body
	}{
		{"page", server.Config{}, "/review", 200, "text/html; charset=utf-8", "frame-ancestors 'none'", `name="ocrdraft-auth" content=""`},
		{"script", server.Config{}, "/review/review.js", 200, "text/javascript; charset=utf-8", "script-src 'self'", "ocrdraft.confirmed"},
		{"style", server.Config{}, "/review/review.css", 200, "text/css; charset=utf-8", "style-src 'self'", ":focus-visible"},
		{"embedders", server.Config{ReviewEmbedders: []string{"https://a.example", "http://localhost:3000"}}, "/review", 200, "text/html; charset=utf-8",
			"frame-ancestors https://a.example http://localhost:3000", `content="https://a.example http://localhost:3000"`},
		{"keyed", server.Config{APIKeys: []string{"k"}}, "/review", 200, "text/html; charset=utf-8", "default-src 'self'", `name="ocrdraft-auth" content="bearer"`},
		{"off", server.Config{NoReview: true}, "/review", 404, "application/problem+json", "", ""},
		{"no such asset", server.Config{}, "/review/x.js", 404, "application/problem+json", "", ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		server.New(tt.cfg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		h := rec.Header()
		if rec.Code != tt.status || h.Get("Content-Type") != tt.ct {
			t.Errorf("%s: %d %s, want %d %s", tt.name, rec.Code, h.Get("Content-Type"), tt.status, tt.ct)
			continue
		}
		if tt.status != 200 {
			continue
		}
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, tt.csp) || !strings.HasPrefix(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: Content-Security-Policy %q, want it to hold %q", tt.name, csp, tt.csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("%s: nosniff %q, body without %q", tt.name, h.Get("X-Content-Type-Options"), tt.body)
		}
	}
	// No inline script or style for a strict CSP to block.
	rec := httptest.NewRecorder()
	server.New(server.Config{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/review", nil))
	for _, bad := range []string{"<script>", "<style", "style=", "javascript:", " onclick=", " onload=", " onsubmit=", " onchange="} {
		if strings.Contains(strings.ToLower(rec.Body.String()), bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
}
