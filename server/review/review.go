// Package review is the review page, GET /review: a person chooses a report's pages, sees each
// page beside the rows of its draft with the warnings at their fields, fixes what is wrong and
// confirms through /v1/validate. Plain HTML, CSS and JavaScript embedded in the binary: no build
// step, nothing fetched from another origin, so it works offline on the service's own. It keeps
// nothing: the draft and the images live in the browser tab's memory, the API key in its
// sessionStorage.
package review

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

//go:embed assets
var assets embed.FS

// Config is what the page needs to know of the service.
type Config struct {
	// Embedders are the origins (scheme://host[:port]) allowed to frame the page
	// (OCR_REVIEW_EMBEDDERS): the CSP's frame-ancestors, and the one origin a confirmed draft
	// is posted to. None: no page may frame it.
	Embedders []string
	// Keyed says the API wants a bearer key (OCR_API_KEYS): the page asks for it.
	Keyed bool
}

// Handler serves the page and its two assets. Every answer carries the strict CSP.
type Handler struct {
	csp   string
	index []byte
	js    []byte
	css   []byte
}

// New renders the page for cfg; the embedders must be origins (see Origin).
func New(cfg Config) (*Handler, error) {
	for _, o := range cfg.Embedders {
		if err := Origin(o); err != nil {
			return nil, err
		}
	}
	tpl, err := template.ParseFS(assets, "assets/index.html")
	if err != nil {
		return nil, err
	}
	auth := ""
	if cfg.Keyed {
		auth = "bearer"
	}
	var b bytes.Buffer
	if err := tpl.Execute(&b, struct{ Auth, Embedders string }{auth, strings.Join(cfg.Embedders, " ")}); err != nil {
		return nil, err
	}
	js, err := assets.ReadFile("assets/review.js")
	if err != nil {
		return nil, err
	}
	css, err := assets.ReadFile("assets/review.css")
	if err != nil {
		return nil, err
	}
	return &Handler{csp: CSP(cfg.Embedders), index: b.Bytes(), js: js, css: css}, nil
}

// CSP is the page's Content-Security-Policy: its own origin for everything (no inline script or
// style, no other origin; images also from the blob: URLs the page makes of the page images),
// and frame-ancestors exactly the embedders, or 'none'.
func CSP(embedders []string) string {
	fa := "'none'"
	if len(embedders) > 0 {
		fa = strings.Join(embedders, " ")
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " +
		"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors " + fa
}

// Origin checks that s is an origin as a browser writes it: http or https, a host, an optional
// port, nothing else (no path, no wildcard, no trailing slash), since frame-ancestors and
// postMessage's targetOrigin compare origins exactly.
func Origin(s string) error {
	u, err := url.Parse(s)
	// url.Parse lowers the scheme alone: an origin as a browser writes it is all lower case,
	// and rebuilt from its parts it is itself (no user, path, query or trailing slash).
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		strings.Contains(u.Host, "*") || s != u.Scheme+"://"+u.Host || s != strings.ToLower(s) {
		return fmt.Errorf("want an origin such as https://health.example.com or http://localhost:3000 (lower case, no path, no wildcard), got %q", s)
	}
	return nil
}

// ServeHTTP answers GET and HEAD of /review, /review/review.js and /review/review.css.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	var ct string
	switch r.URL.Path {
	case "/review", "/review/":
		body, ct = h.index, "text/html; charset=utf-8"
	case "/review/review.js":
		body, ct = h.js, "text/javascript; charset=utf-8"
	case "/review/review.css":
		body, ct = h.css, "text/css; charset=utf-8"
	default:
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("Content-Type", ct)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
