// Package server is the HTTP API: echo routes, middleware, and the one error handler that maps
// every error to an RFC 9457 problem document. Handlers return errors; only handleError writes
// them.
package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/gate"
	"github.com/ocrdraft/ocrdraft/internal/metrics"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/internal/reqid"
	"github.com/ocrdraft/ocrdraft/internal/version"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/server/review"
)

// Extractor reads a report's page images into a draft.
type Extractor interface {
	// Extract reads a report's uploads, one owned budget.Bytes each, which it takes over and
	// closes, their shares of the upload memory moving to its pages and given back as they
	// leave its hands (see extract.Service.Extract); who is for the checks only.
	// opts asks for more than the draft (the page images: include=pageImages); the caller
	// closes the Response once written.
	ExtractWith(ctx context.Context, uploads []*budget.Bytes, who check.Context, opts extract.Options) (extract.Response, error)
}

// Config is what the server needs. Zero limits take their defaults.
type Config struct {
	// Extractor is nil when no model is configured: the server still runs, and /v1/extract
	// answers model_not_configured with NotConfigured as its detail.
	Extractor     Extractor
	NotConfigured string

	Builder *draft.Builder

	// ModelName is the configured model, for the log: the name the upstream answers with is
	// its text, and is never logged.
	ModelName string

	MaxImageBytes   int64         // one image; default 20 MiB
	MaxRequestBytes int64         // a whole /v1/extract request; default 50 MiB
	MaxPages        int           // images in one request; default 10
	RequestTimeout  time.Duration // whole-request deadline for /v1/extract; default 120s

	// MaxInFlight bounds the /v1/extract requests worked on at once (default 32); one more waits
	// at most QueueWait (default 1s) for its turn, then gets 503 overloaded. The turn is taken
	// before the body is read, so a burst is refused at once, before it costs memory for its
	// images or CPU for decoding them. (Model calls have their own bound, in the Extractor.)
	MaxInFlight int
	QueueWait   time.Duration

	// TextInFlight bounds the /v1/parse and /v1/validate requests worked on at once (default
	// the number of CPUs): their work is CPU alone. The turn is taken once the body is read,
	// so a slow body never holds one; a request waits at most QueueWait for it, then gets 503
	// overloaded. TextTimeout (default 10s) is their deadline, body included.
	TextInFlight int
	TextTimeout  time.Duration

	// BodyIdleTimeout (default 5s) is the longest a request body may make no progress: a read
	// that waits longer ends the request with 408 request_timeout and closes the connection,
	// on every route. DrainTimeout (default 10s) bounds how long the rest of a refused body is
	// read and discarded after the answer (at most MaxRequestBytes of it) so that a caller
	// that sends the whole body before reading sees the answer; see refuseBody.
	BodyIdleTimeout time.Duration
	// MinBodyRate (default 16 KiB/s) is the slowest a request body may arrive on average, from
	// its first read (waits for a turn or upload memory not counted), after a first
	// BodyIdleTimeout of grace: a body trickling in a byte every few seconds makes
	// progress, and without a rate it would hold its /v1/extract turn (taken before the body)
	// for the whole request deadline; 32 such sockets would shut real callers out.
	MinBodyRate  int64
	DrainTimeout time.Duration

	// The connection's limits, for HTTPServer: the request's headers must all be in within
	// HeaderTimeout (default 10s) and hold at most MaxHeaderBytes (default 64 KiB; net/http
	// answers 431 beyond); a kept-alive connection is closed after IdleTimeout (default 2m).
	HeaderTimeout  time.Duration
	IdleTimeout    time.Duration
	MaxHeaderBytes int

	// UploadMemory bounds the bytes of page images on their way in, across the process
	// (default 64 MiB): from the moment a /v1/extract body starts being read until each page has
	// been written into its model request (or taken over by the Extractor's retry memory). A
	// request whose body does not fit waits for room while the uploads ahead of it move on, and
	// gets 503 overloaded after QueueWait without any moving (see readTurn). Otherwise a burst
	// of 500 uploads of 1 MB is read, prepared and sent all at once, holding 500 MB together,
	// and the page faults of so much fresh memory more than double the CPU each one takes
	// (measured: 7.3 against 3 ms); a few at a time, the same memory is reused. A body counts
	// as its Content-Length when its reading starts, trimmed while it is read to what has
	// arrived and what its rate brings soon (see upload: a caller trickling its body in holds
	// what has come of it), then as its images (a JSON body costs up to about twice that while
	// it is decoded); one of unknown length counts as MaxRequestBytes; none counts as more than
	// UploadMemory. /v1/parse and /v1/validate bodies take their share too (at
	// most 1 MiB each). Reading a body ends at the request's deadline, or when it makes no
	// progress for BodyIdleTimeout, so one trickling in cannot keep its share past either.
	UploadMemory int64

	// NoReplyExcerpts leaves replyExcerpt out of problems: the start of a model's unusable reply
	// is report text, which a deployment may not want to send back (OCR_REPLY_EXCERPTS=false).
	NoReplyExcerpts bool

	// APIKeys are the bearer keys callers may send to /v1/*. Empty leaves the API open (the
	// probes, /version, /metrics and /openapi.yaml are open either way).
	APIKeys []string

	Spec    []byte // openapi.yaml, served at /openapi.yaml
	Logger  *slog.Logger
	Metrics *metrics.Metrics // served at /metrics; nil makes a fresh registry

	// MetricsElsewhere leaves /metrics off this server's routes (404 here): the caller serves
	// Metrics.Handler on a listener of its own (OCR_METRICS_ADDR), off the callers' network.
	MetricsElsewhere bool

	// Version is served at /version; empty, the running build's (version.Read).
	Version version.Info

	// NoReview leaves GET /review off (OCR_REVIEW=off): 404 there.
	NoReview bool
	// ReviewEmbedders are the origins that may frame /review (OCR_REVIEW_EMBEDDERS), each one as
	// review.Origin accepts (cmd/ocrdraft checks them; New panics on one that is not).
	ReviewEmbedders []string
	// Jobs runs /v1/jobs; nil answers jobs_not_configured with JobsNotConfigured as its detail.
	Jobs              Jobs
	JobsNotConfigured string

	// Lang is the language of warnings' messages for a caller whose Accept-Language names
	// none the service writes (zh, en): a tag msg.Parse accepts (OCR_LANG); empty is
	// msg.Default, zh-CN. Problem details stay English.
	Lang string
}

// Defaults for Config's zero fields.
const (
	DefaultMaxImageBytes   = 20 << 20
	DefaultMaxRequestBytes = 50 << 20
	DefaultMaxPages        = 10
	DefaultRequestTimeout  = 120 * time.Second
	DefaultMaxInFlight     = gate.DefaultLimit
	DefaultQueueWait       = gate.DefaultWait
	DefaultUploadMemory    = 64 << 20
	DefaultTextTimeout     = 10 * time.Second
	DefaultBodyIdleTimeout = 5 * time.Second
	DefaultMinBodyRate     = 16 << 10
	DefaultDrainTimeout    = 10 * time.Second
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultIdleTimeout     = 2 * time.Minute
	DefaultMaxHeaderBytes  = 64 << 10
	// maxTextBody bounds /v1/parse and /v1/validate bodies: a reply or a draft is small.
	maxTextBody = 1 << 20
)

// Server is the HTTP API.
type Server struct {
	cfg     Config
	echo    *echo.Echo
	keys    [][sha256.Size]byte // digests of cfg.APIKeys
	turns   *gate.Gate          // one per /v1/extract request being worked on
	texts   *gate.Gate          // one per /v1/parse or /v1/validate request at work
	uploads *budget.Budget      // UploadMemory
	version version.Info        // served at /version
}

// New returns a Server with its routes.
func New(cfg Config) *Server {
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = DefaultMaxImageBytes
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = DefaultMaxPages
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.Builder == nil {
		cfg.Builder = draft.New(lexicon.Default())
	}
	if l, err := msg.Parse(cfg.Lang); err == nil {
		cfg.Lang = l
	} else {
		cfg.Lang = msg.Zh // an unknown tag is the caller's (cmd/ocrdraft validates OCR_LANG)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = DefaultQueueWait
	}
	if cfg.UploadMemory <= 0 {
		cfg.UploadMemory = DefaultUploadMemory
	}
	if cfg.TextInFlight <= 0 {
		cfg.TextInFlight = runtime.NumCPU()
	}
	cfg.TextTimeout = orDefault(cfg.TextTimeout, DefaultTextTimeout)
	cfg.BodyIdleTimeout = orDefault(cfg.BodyIdleTimeout, DefaultBodyIdleTimeout)
	if cfg.MinBodyRate <= 0 {
		cfg.MinBodyRate = DefaultMinBodyRate
	}
	cfg.DrainTimeout = orDefault(cfg.DrainTimeout, DefaultDrainTimeout)
	cfg.HeaderTimeout = orDefault(cfg.HeaderTimeout, DefaultHeaderTimeout)
	cfg.IdleTimeout = orDefault(cfg.IdleTimeout, DefaultIdleTimeout)
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	s := &Server{
		cfg: cfg, echo: echo.New(),
		turns:   gate.New(cfg.MaxInFlight, cfg.QueueWait, "requests"),
		texts:   gate.New(cfg.TextInFlight, cfg.QueueWait, "text requests"),
		uploads: budget.New(cfg.UploadMemory),
		version: buildVersion(cfg),
	}
	for _, k := range cfg.APIKeys {
		s.keys = append(s.keys, sha256.Sum256([]byte(k)))
	}
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.JSONSerializer = jsonSerializer{}

	// Order matters: the request id first, so that every later line and problem carries it; the
	// log line wraps everything after it, recovered panics included.
	e.Use(dropOddRequestID, middleware.RequestIDWithConfig(middleware.RequestIDConfig{
		RequestIDHandler: func(c echo.Context, id string) {
			c.SetRequest(c.Request().WithContext(reqid.With(c.Request().Context(), id)))
		},
	}))
	e.Use(s.guardBody, s.logRequests)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.cfg.Logger.Error("panic", "requestId", requestID(c), "err", err, "stack", string(stack))
			return &problem.Error{Code: problem.Internal, Detail: "internal error", Err: err}
		},
	}))

	// Every GET answers HEAD too (headers alone: net/http drops the body), as probes and
	// monitors ask.
	get := func(path string, h echo.HandlerFunc) {
		e.GET(path, h)
		e.HEAD(path, h)
	}
	get("/healthz", s.healthz)
	get("/readyz", s.readyz)
	get("/openapi.yaml", s.spec)
	get("/version", s.versionInfo)
	if !cfg.MetricsElsewhere {
		get("/metrics", echo.WrapHandler(cfg.Metrics.Handler()))
	}
	if !cfg.NoReview {
		h, err := review.New(review.Config{Embedders: cfg.ReviewEmbedders, Keyed: len(cfg.APIKeys) > 0})
		if err != nil {
			panic("server: " + err.Error())
		}
		for _, p := range []string{"/review", "/review/review.js", "/review/review.css"} {
			get(p, echo.WrapHandler(h))
		}
	}

	timeout := func(d time.Duration) echo.MiddlewareFunc {
		return middleware.ContextTimeoutWithConfig(middleware.ContextTimeoutConfig{
			Timeout: d,
			// echo's own would answer a deadline 503.
			ErrorHandler: func(err error, _ echo.Context) error { return problem.Ended(err, unfinished) },
		})
	}
	e.POST("/v1/extract", s.extract, s.auth, s.admit, bodyLimit(cfg.MaxRequestBytes), timeout(cfg.RequestTimeout))
	e.POST("/v1/jobs", s.submitJob, s.auth, s.admit, bodyLimit(cfg.MaxRequestBytes), timeout(cfg.RequestTimeout))
	e.GET("/v1/jobs/:id", s.getJob, s.auth, timeout(cfg.TextTimeout))
	e.DELETE("/v1/jobs/:id", s.deleteJob, s.auth, timeout(cfg.TextTimeout))
	e.POST("/v1/parse", s.parse, s.auth, bodyLimit(maxTextBody), timeout(cfg.TextTimeout))
	e.POST("/v1/validate", s.validate, s.auth, bodyLimit(maxTextBody), timeout(cfg.TextTimeout))
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// auth lets a request through when it carries one of the configured keys as a bearer token, or
// when none are configured. The presented key is hashed and compared with every configured
// key's hash in constant time, without stopping at a match, so that neither the time taken nor
// the length compared tells a caller how close it came or which key matched.
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.keys) == 0 {
			return next(c)
		}
		token, given := bearer(c.Request().Header.Get(echo.HeaderAuthorization))
		d := sha256.Sum256([]byte(token))
		match := 0
		for _, k := range s.keys {
			match |= subtle.ConstantTimeCompare(d[:], k[:])
		}
		if given && match == 1 {
			return next(c)
		}
		challenge := `Bearer realm="ocrdraft"`
		detail := "send Authorization: Bearer <key>"
		if given {
			challenge += `, error="invalid_token"`
			detail = "the bearer key is not one this service accepts"
		}
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, challenge)
		return problem.Errorf(problem.Unauthorized, "%s", detail)
	}
}

// admit gives a request its turn, waiting at most QueueWait for one: never an unbounded queue.
func (s *Server) admit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.turns.Enter(c.Request().Context(), s.cfg.Metrics.RequestQueued); err != nil {
			return err
		}
		defer s.turns.Leave()
		defer s.cfg.Metrics.Extracting()()
		return next(c)
	}
}

// readTurn takes the request's share of UploadMemory for its body (its length, at most limit)
// and has it kept to what the body fills (see upload), and returns the hold. The share waits,
// first come first served, as long as the uploads ahead of it move on (one is read and sent, or
// trimmed to what it really holds, giving some back), up to the request's deadline, but gives
// up after QueueWait without any moving with 503 overloaded, as any wait for a turn does; so
// does a body's wait for more when it has filled its share. A deadline passing while it waits
// is model_timeout, as for the other turns; a caller going away is its context's error.
func (s *Server) readTurn(c echo.Context, limit int64) (*budget.Hold, error) {
	r := c.Request()
	n := r.ContentLength // 0 is an empty body; -1 is unknown
	if n < 0 || n > limit {
		n = limit
	}
	n = min(max(n, 1), s.uploads.Size())
	h, err := s.uploads.TakeMoving(r.Context(), n, s.cfg.QueueWait, s.cfg.Metrics.UploadQueued)
	if err != nil {
		return nil, s.uploadErr(c, err)
	}
	if b, ok := c.Get(ctxBody).(*body); ok {
		b.up = newUpload(h, n, func(more int64) (int64, error) {
			got, err := h.Grow(r.Context(), more, s.cfg.QueueWait, s.cfg.Metrics.UploadQueued)
			if err != nil {
				return 0, s.uploadErr(c, err)
			}
			return got, nil
		}, max(s.cfg.QueueWait/4, 10*time.Millisecond))
	}
	return h, nil
}

// uploadErr is the error for a wait for upload memory that failed with err.
func (s *Server) uploadErr(c echo.Context, err error) error {
	if errors.Is(err, budget.ErrStalled) {
		return gate.Refused(fmt.Sprintf("the service holds as many uploads as its upload memory allows, and none moved on within %v", s.cfg.QueueWait), s.cfg.QueueWait)
	}
	return problem.Ended(err, "while waiting for room to read the body")
}

// bearer returns the token of an "Authorization: Bearer <token>" header; the scheme's case does
// not matter (RFC 9110 §11.1).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// dropOddRequestID drops a caller's X-Request-Id that is long or holds anything but letters,
// digits and -_.:, so that a fresh one is made: the id goes into every log line, and a caller
// must not be able to put arbitrary text (or health data) there.
func dropOddRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		if id := h.Get(echo.HeaderXRequestID); id != "" && !plainID(id) {
			h.Del(echo.HeaderXRequestID)
		}
		return next(c)
	}
}

func plainID(id string) bool {
	if len(id) > 64 {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '_' || r == '.' || r == ':'
		if !ok {
			return false
		}
	}
	return true
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

func bodyLimit(n int64) echo.MiddlewareFunc {
	return middleware.BodyLimit(strconv.FormatInt(n, 10) + "B")
}

func (s *Server) healthz(c echo.Context) error { return status(c, "ok") }

func (s *Server) readyz(c echo.Context) error {
	if s.cfg.Extractor == nil {
		return s.notConfigured()
	}
	return status(c, "ready")
}

// status answers a probe; HEAD, which load balancers probe with, gets the headers alone.
func status(c echo.Context, v string) error {
	if c.Request().Method == http.MethodHead {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		return c.NoContent(http.StatusOK)
	}
	return c.JSON(http.StatusOK, map[string]string{"status": v})
}

func (s *Server) notConfigured() error {
	return &problem.Error{Code: problem.ModelNotConfigured, Detail: s.cfg.NotConfigured}
}

func (s *Server) spec(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", s.cfg.Spec)
}

// handleError is the one place errors become responses.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	refuseBody(c)
	pe := toProblem(err)
	doc := problem.From(pe)
	doc.RequestID = requestID(c)
	if s.cfg.NoReplyExcerpts {
		doc.ReplyExcerpt = ""
	}
	c.Set(ctxCode, doc.Code)
	if pe.Upstream != nil {
		c.Set(ctxUpstream, pe.Upstream)
	}
	if doc.Code == problem.Internal {
		s.cfg.Logger.Error("internal error", "requestId", doc.RequestID, "err", err)
	}
	h := c.Response().Header()
	if pe.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((pe.RetryAfter+time.Second-1)/time.Second)))
	}
	h.Set(echo.HeaderContentType, "application/problem+json")
	c.Response().WriteHeader(doc.Status)
	if c.Request().Method == http.MethodHead {
		return
	}
	_ = encodeJSON(c.Response(), doc, "")
}

// toProblem maps any error to a *problem.Error: ours as they are, echo's by status, a context's
// end by its cause.
func toProblem(err error) *problem.Error {
	if pe, ok := bodyTimeout(err); ok {
		return pe
	}
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code, ok := echoCodes[he.Code]
		if !ok {
			code = problem.Internal
		}
		detail := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && code != problem.Internal {
			detail = m
		}
		if he.Code == http.StatusRequestEntityTooLarge {
			detail = "the request body is larger than the limit"
		}
		return &problem.Error{Code: code, Detail: detail, Err: err}
	}
	if errors.As(problem.Ended(err, unfinished), &pe) { // a context's end
		return pe
	}
	return &problem.Error{Code: problem.Internal, Detail: "internal error", Err: err}
}

// unfinished is where a request's end stopped its work, for a context's end that no code
// nearer the work mapped (problem.FromContext).
const unfinished = "before the answer was ready"

// echoCodes maps the statuses echo itself answers with (routing, body limit) to our codes.
var echoCodes = map[int]problem.Code{
	http.StatusBadRequest:            problem.InvalidRequest,
	http.StatusUnauthorized:          problem.Unauthorized,
	http.StatusNotFound:              problem.NotFound,
	http.StatusMethodNotAllowed:      problem.MethodNotAllowed,
	http.StatusRequestEntityTooLarge: problem.PayloadTooLarge,
	http.StatusUnsupportedMediaType:  problem.UnsupportedMediaType,
	http.StatusServiceUnavailable:    problem.Overloaded,
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
