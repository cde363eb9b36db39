// Package fakeopenai is a fake OpenAI-compatible chat-completions server for tests, in the spirit
// of go-openai's own internal/test/server.go: the real client talks HTTP to it, so tests exercise
// the same bytes, headers and failures a real upstream produces, with no network and no key.
//
// A test scripts the answers — a queue used once each, in order, then a default — and reads back
// every request the server received:
//
//	f := fakeopenai.New(t)
//	f.Queue(fakeopenai.RateLimited("1"), fakeopenai.Reply(`{"items":[]}`))
//	client := vision.New(vision.Config{BaseURL: f.URL, Model: "m"})
//	...
//	got := f.Requests()
//
// It also serves GET /v1/models and /v1/models/{id} (see Models and ModelsAnswer), and can want
// a key (RequireKey), for tests of `ocrdraft check`.
package fakeopenai

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ocrdraft/ocrdraft/internal/memnet"
)

// Server is a running fake. It is safe for concurrent use, so load tests can share one.
type Server struct {
	// URL is the base URL to give a client, ending in /v1 as real endpoints do; the client appends
	// /chat/completions. The fake also answers /chat/completions without the /v1, so a base URL
	// configured without it works too.
	URL string

	srv   *httptest.Server
	stop  context.CancelFunc
	pipes *memnet.Listener // nil over TCP

	mu     sync.Mutex
	queue  []Answer
	def    Answer
	routes []*route
	reqs   []Request
	forget bool
	calls  int
	conns  int

	models      []string // served on /v1/models
	modelsAns   Answer   // if not nil, answers /v1/models and /v1/models/{id} instead
	key         string   // if not empty, the bearer token every route wants
	modelsCalls int

	written atomic.Int64
}

// Forget makes the fake keep and decode nothing of the requests it gets — only their count —
// so that benchmarks and load runs measure the service, not the fake's bookkeeping of
// megabyte-sized bodies. Requests then returns nothing.
func (s *Server) Forget() {
	s.mu.Lock()
	s.forget = true
	s.mu.Unlock()
}

// Request is one request as the fake received it.
type Request struct {
	Header http.Header
	Body   []byte                       // raw, as sent
	Chat   openai.ChatCompletionRequest // Body decoded; zero if Body is not JSON
	// Fields holds Body's top-level fields undecoded, so a test can tell a field that was left out
	// (omitempty) from one sent as zero: _, sent := r.Fields["temperature"].
	Fields map[string]json.RawMessage
}

// Answer writes one response. It is an http.HandlerFunc in all but name, so any handler works as
// an escape hatch: fakeopenai.Answer(func(w http.ResponseWriter, r *http.Request) { ... }).
// The request's context is cancelled when the client goes away or the fake shuts down.
type Answer func(w http.ResponseWriter, r *http.Request)

// New starts a fake that answers every request with Reply("{}") until told otherwise, and closes
// it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	return start(t, nil)
}

// NewInMemory is New over in-memory connections (net.Pipe) in place of a TCP socket, for a test
// in a testing/synctest bubble: there a goroutine waiting on a socket is not durably blocked, so
// the bubble's clock would not move while a call is at the fake. Only the client from Client
// reaches it; URL names no real host.
func NewInMemory(t testing.TB) *Server {
	t.Helper()
	return start(t, memnet.Listen())
}

// Client is an *http.Client that reaches the fake, over TCP or its in-memory connections; the
// fake closes its connections when the test ends.
func (s *Server) Client() *http.Client {
	if s.pipes == nil {
		return s.srv.Client()
	}
	return s.pipes.Client()
}

func start(t testing.TB, p *memnet.Listener) *Server {
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{def: Reply("{}"), stop: stop, models: []string{"fake-model"}, pipes: p}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if p != nil {
		s.srv.Listener.Close()
		s.srv.Listener = p
	}
	// Every request context derives from ctx, so a Slow answer still waiting when the test ends
	// returns at once instead of holding Close up.
	s.srv.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	s.srv.Start()
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(func() {
		stop()
		s.srv.Close()
	})
	return s
}

// Queue appends answers that are used once each, in order, before the default.
func (s *Server) Queue(answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, answers...)
}

// Match says which requests a route answers (see Route).
type Match func(Request) bool

// ForModel matches the requests for the model named.
func ForModel(name string) Match {
	return func(r Request) bool { return r.Chat.Model == name }
}

// Asking matches the requests whose text (the prompt, any part of any message) holds s: a test
// tells a first read from a second by a line of its prompt.
func Asking(s string) Match {
	return func(r Request) bool {
		for _, m := range r.Chat.Messages {
			if strings.Contains(m.Content, s) {
				return true
			}
			for _, p := range m.MultiContent {
				if strings.Contains(p.Text, s) {
					return true
				}
			}
		}
		return false
	}
}

// Both matches the requests both m and n match.
func Both(m, n Match) Match { return func(r Request) bool { return m(r) && n(r) } }

type route struct {
	match   Match
	answers []Answer
}

// Route answers the requests that m matches with answers, in order, the last one again and again
// once the others are used; routes are tried in the order they were set, before the queue, which
// then answers only the requests no route matches. Scripting by model or by prompt keeps a test
// deterministic when calls arrive in any order (a page's two reads run at once). A request the
// fake does not decode (Forget) matches no route.
func (s *Server) Route(m Match, answers ...Answer) {
	if len(answers) == 0 {
		panic("fakeopenai: Route without an answer")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes = append(s.routes, &route{match: m, answers: answers})
}

// routeOf is the first route that matches rec; s.mu is held.
func (s *Server) routeOf(rec Request) *route {
	if s.forget {
		return nil
	}
	for _, rt := range s.routes {
		if rt.match(rec) {
			return rt
		}
	}
	return nil
}

// Default sets the answer used whenever the queue is empty.
func (s *Server) Default(a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = a
}

// Requests returns a copy of every chat-completion request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Calls is the number of chat-completion requests received so far.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Written is the number of body bytes the answers have written so far, as sent (compressed, for
// GzipBomb). Writes block once the connection's buffers are full, so for an answer without end it
// shows how much the client took: what it read plus what the buffers hold.
func (s *Server) Written() int64 { return s.written.Load() }

// Conns is the number of connections clients have opened to the fake so far.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Models sets the models the fake serves, as GET /v1/models lists them and GET
// /v1/models/{id} finds them (404 model_not_found otherwise). By default it serves only
// "fake-model". Chat completions answer whatever the model.
func (s *Server) Models(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// ModelsAnswer makes GET /v1/models and /v1/models/{id} answer with a: a failure such as
// Unauthorized(), ServerError(), HangUp(), or NoRoute() for a server that has no such routes.
// nil restores the list.
func (s *Server) ModelsAnswer(a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modelsAns = a
}

// RequireKey makes every route answer 401 as OpenAI does ("Incorrect API key provided")
// unless the request's bearer token is key. Refused chat completions are not counted or kept.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// ModelsCalls is the number of requests to /v1/models and /v1/models/{id} so far.
func (s *Server) ModelsCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modelsCalls
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		_, _ = io.Copy(io.Discard, r.Body)
		Unauthorized()(w, r)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/v1")
	if p == "/models" || strings.HasPrefix(p, "/models/") {
		s.serveModels(w, r, strings.TrimPrefix(strings.TrimPrefix(p, "/models"), "/"))
		return
	}
	if p != "/chat/completions" {
		Error(http.StatusNotFound, "no such route: "+r.URL.Path)(w, r)
		return
	}
	if r.Method != http.MethodPost {
		Error(http.StatusMethodNotAllowed, "chat completions take POST")(w, r)
		return
	}
	s.mu.Lock()
	forget := s.forget
	s.mu.Unlock()
	if forget {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
	}
	var body []byte
	var rec Request
	if !forget {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return // the client went away mid-body; there is nobody to answer
		}
		rec = Request{Header: r.Header.Clone(), Body: body}
		if json.Unmarshal(body, &rec.Fields) == nil {
			_ = json.Unmarshal(body, &rec.Chat)
		}
	}

	s.mu.Lock()
	s.calls++
	if !forget {
		s.reqs = append(s.reqs, rec)
	}
	a := s.def
	if rt := s.routeOf(rec); rt != nil {
		a = rt.answers[0]
		if len(rt.answers) > 1 {
			rt.answers = rt.answers[1:]
		}
	} else if len(s.queue) > 0 {
		a = s.queue[0]
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()

	// Answers see the request as sent: the body again from the start, and the model at hand.
	r = r.WithContext(context.WithValue(r.Context(), modelKey{}, rec.Chat.Model))
	r.Body = io.NopCloser(bytes.NewReader(body))
	a(&counter{ResponseWriter: w, n: &s.written}, r)
}

// serveModels answers GET /v1/models (id empty) and /v1/models/{id} as OpenAI does.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	s.modelsCalls++
	a, models := s.modelsAns, s.models
	s.mu.Unlock()
	if a != nil {
		a(&counter{ResponseWriter: w, n: &s.written}, r)
		return
	}
	if r.Method != http.MethodGet {
		Error(http.StatusMethodNotAllowed, "models take GET")(w, r)
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	if id == "" {
		data := make([]model, len(models))
		for i, m := range models {
			data[i] = model{m, "model", 1700000000, "fake"}
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
		return
	}
	for _, m := range models {
		if m == id {
			writeJSON(w, http.StatusOK, model{m, "model", 1700000000, "fake"})
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"message": "The model '" + id + "' does not exist", "type": "invalid_request_error", "param": "model", "code": "model_not_found",
	}})
}

// NoRoute answers 404 with Go's plain-text "404 page not found", as a server answers a path it
// does not serve: what a base URL that already ends in /chat/completions meets.
func NoRoute() Answer {
	return func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }
}

// counter counts the body bytes written through it.
type counter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// Unwrap lets http.NewResponseController reach the connection (HangUp hijacks it).
func (c *counter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Response is a successful completion with one choice.
type Response struct {
	Content      string
	FinishReason string // "stop" when empty
	Model        string // the request's model when empty, as real endpoints echo it
	PromptTokens int
	// CompletionTokens defaults to a rough count of Content so usage is never all zeros.
	CompletionTokens int

	// Parts, if not nil, is sent as content in place of Content: an array of text parts, as
	// some servers write it.
	Parts []string
	// Refusal is sent as the message's refusal field, as OpenAI does when the model declines.
	Refusal string
}

// Complete answers 200 with r as a chat.completion object.
func Complete(r Response) Answer {
	return func(w http.ResponseWriter, req *http.Request) {
		model := r.Model
		if model == "" {
			model = requestModel(req)
		}
		finish := r.FinishReason
		if finish == "" {
			finish = string(openai.FinishReasonStop)
		}
		out := r.CompletionTokens
		if out == 0 {
			out = len(r.Content)/4 + 1
		}
		in := r.PromptTokens
		if in == 0 {
			in = 1000
		}
		msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: r.Content, Refusal: r.Refusal}
		if r.Parts != nil {
			msg.Content = ""
			for _, p := range r.Parts {
				msg.MultiContent = append(msg.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: p})
			}
		}
		writeJSON(w, http.StatusOK, openai.ChatCompletionResponse{
			ID:      "chatcmpl-fake",
			Object:  "chat.completion",
			Created: time.Now().Unix(),
			Model:   model,
			Choices: []openai.ChatCompletionChoice{{
				Message:      msg,
				FinishReason: openai.FinishReason(finish),
			}},
			Usage: openai.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out},
		})
	}
}

// Reply answers 200 with content and finish_reason "stop".
func Reply(content string) Answer { return Complete(Response{Content: content}) }

// Truncated answers 200 with content and finish_reason "length", as when max_tokens ran out.
func Truncated(content string) Answer {
	return Complete(Response{Content: content, FinishReason: string(openai.FinishReasonLength)})
}

// NoChoices answers 200 with a well-formed completion whose choices array is empty.
func NoChoices() Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(),
			"model": requestModel(r), "choices": []any{},
			"usage": map[string]int{"prompt_tokens": 1000, "completion_tokens": 0, "total_tokens": 1000},
		})
	}
}

// Error answers status with an OpenAI-style error body: {"error":{"message":...,"type":...}}.
func Error(status int, message string) Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, status, message)
	}
}

// ServerError answers 500 with an OpenAI-style error body.
func ServerError() Answer {
	return Error(http.StatusInternalServerError, "The server had an error while processing your request.")
}

// Unauthorized answers 401 as OpenAI does for a wrong key.
func Unauthorized() Answer {
	return Error(http.StatusUnauthorized, "Incorrect API key provided.")
}

// RateLimited answers 429 with an OpenAI-style error body and, unless retryAfter is empty, a
// Retry-After header holding it verbatim (seconds such as "2", or an HTTP date).
func RateLimited(retryAfter string) Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		writeError(w, http.StatusTooManyRequests, "Rate limit reached for requests.")
	}
}

// Garbage answers 200 with a body that is not JSON, like a proxy's HTML page.
func Garbage() Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "<html><body>Gateway says hello</body></html>")
	}
}

// Slow waits d, then answers with then; if the request's context ends first (the client gave up
// or the test ended) it returns without answering.
func Slow(d time.Duration, then Answer) Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			then(w, r)
		case <-r.Context().Done():
		}
	}
}

// HangUp closes the connection without a response, as a crashing upstream or a dropped
// connection does; the client sees EOF.
func HangUp() Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic("fakeopenai: HangUp cannot hijack: " + err.Error())
		}
		_ = conn.Close()
	}
}

// Raw answers status with body exactly as given, as application/json: for replies no well-behaved
// server writes (an empty finish_reason, negative usage, a model name a megabyte long).
func Raw(status int, body string) Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// Huge answers status with a body of n bytes and more (n rounded up to 32 KiB), made as it is
// written: for 200, a chat completion whose content is that many bytes of "a"; otherwise an
// OpenAI-style error whose message is.
// Read whole, it is a valid answer; only the fake's buffers are held, never n bytes.
func Huge(status int, n int64) Answer { return big(status, n, false) }

// Endless answers status with a body that never ends: a chat completion (an error, for a status
// other than 200) whose text goes on until the client hangs up.
func Endless(status int) Answer { return big(status, -1, false) }

// Trickle answers 200 with a chat completion that never ends, one byte of content every d: a
// body that a cap on its size alone would take forever to stop.
func Trickle(d time.Duration) Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"id":"chatcmpl-fake","object":"chat.completion","choices":[{"message":{"role":"assistant","content":"`)
		rc := http.NewResponseController(w)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			if _, err := io.WriteString(w, "a"); err != nil || rc.Flush() != nil {
				return
			}
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
	}
}

// GzipBomb answers 200 with Content-Encoding gzip and a chat completion whose content unpacks to
// n bytes of "a", about 1 KB on the wire per MiB unpacked: a body of concatenated gzip members,
// one precompressed MiB each, so that making it costs the fake nothing.
func GzipBomb(n int64) Answer { return big(http.StatusOK, n, true) }

const bombMember = 1 << 20

// bombChunk is one gzip member of bombMember bytes of "a".
var bombChunk = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = zw.Write(bytes.Repeat([]byte("a"), bombMember))
	_ = zw.Close()
	return b.Bytes()
})

func big(status int, n int64, gz bool) Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		head := `{"error":{"type":"server_error","message":"`
		tail := `"}}`
		if status == http.StatusOK {
			head = `{"id":"chatcmpl-fake","object":"chat.completion","model":"` + requestModel(r) +
				`","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`
			tail = `"}}],"usage":{"prompt_tokens":1000,"completion_tokens":1,"total_tokens":1001}}`
		}
		w.Header().Set("Content-Type", "application/json")
		if gz {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.WriteHeader(status)
		piece := func(s string) []byte {
			if !gz {
				return []byte(s)
			}
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = io.WriteString(zw, s)
			_ = zw.Close()
			return b.Bytes()
		}
		fill := bytes.Repeat([]byte("a"), 32<<10)
		step := int64(len(fill))
		if gz {
			fill, step = bombChunk(), bombMember
		}
		if _, err := w.Write(piece(head)); err != nil {
			return
		}
		for left := n; n < 0 || left > 0; left -= step {
			if r.Context().Err() != nil {
				return
			}
			if _, err := w.Write(fill); err != nil {
				return
			}
		}
		_, _ = w.Write(piece(tail))
	}
}

func requestModel(r *http.Request) string {
	if m, ok := r.Context().Value(modelKey{}).(string); ok && m != "" {
		return m
	}
	return "fake-model"
}

type modelKey struct{}

func writeError(w http.ResponseWriter, status int, message string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": nil,
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
