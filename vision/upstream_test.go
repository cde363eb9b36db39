package vision

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/problem"
)

// TestImageRejected: a 400 about the image is image_rejected, which the caller can mend with
// another photo; a 400 that names images but means the model or our request stays
// model_rejected. The bodies are the shapes each server really writes.
func TestImageRejected(t *testing.T) {
	tests := []struct {
		name string
		body string
		want problem.Code
	}{
		// The image.
		{"OpenAI unsupported image", `{"error":{"message":"You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].","type":"invalid_request_error","param":null,"code":"invalid_image_format"}}`, problem.ImageRejected},
		{"OpenAI sanitizer code, image message", `{"error":{"message":"You uploaded an unsupported image. Please make sure your image is below 20 MB in size.","type":"invalid_request_error","param":null,"code":"sanitizer_server_error"}}`, problem.ImageRejected},
		{"OpenAI invalid_image", `{"error":{"message":"Invalid image.","type":"invalid_request_error","param":null,"code":"invalid_image"}}`, problem.ImageRejected},
		{"OpenAI image_parse_error", `{"error":{"message":"Unable to process the image.","type":"invalid_request_error","param":null,"code":"image_parse_error"}}`, problem.ImageRejected},
		{"OpenAI param names the image", `{"error":{"message":"Bad data.","type":"invalid_request_error","param":"messages[0].content[0].image_url","code":null}}`, problem.ImageRejected},
		{"Azure", `{"error":{"code":"BadRequest","message":"Invalid image (base64) data.","param":null,"type":null}}`, problem.ImageRejected},
		{"DashScope", `{"error":{"code":"invalid_parameter_error","param":null,"message":"<400> InternalError.Algo.InvalidParameter: The image length and width do not meet the model restrictions. [height:1 or width:1 must be larger than 10]","type":"invalid_request_error"},"id":"chatcmpl-1","request_id":"r1"}`, problem.ImageRejected},
		{"DashScope illegal format", `{"error":{"code":"invalid_parameter_error","param":null,"message":"<400> InternalError.Algo.InvalidParameter: The image format is illegal and cannot be opened","type":"invalid_request_error"}}`, problem.ImageRejected},
		{"Volcengine", `{"error":{"code":"InvalidParameter.UnsupportedImageFormat","message":"The request failed because the image format is not supported by the API.","param":"image_url","type":"BadRequest"}}`, problem.ImageRejected},
		{"vLLM top-level", `{"object":"error","message":"cannot identify image file <_io.BytesIO object at 0x7f0c>","type":"BadRequestError","param":null,"code":400}`, problem.ImageRejected},
		{"vLLM nested", `{"error":{"message":"cannot identify image file <_io.BytesIO object at 0x7f0c>","type":"BadRequestError","param":null,"code":400}}`, problem.ImageRejected},
		{"Ollama OpenAI-compatible", `{"error":{"message":"failed to process inputs: image: unknown format","type":"invalid_request_error","param":null,"code":null}}`, problem.ImageRejected},
		{"Ollama native", `{"error":"unsupported image format"}`, problem.ImageRejected},

		// Not the image.
		{"OpenAI model without vision", `{"error":{"message":"Invalid content type. image_url is only supported by certain models.","type":"invalid_request_error","param":"messages.[0].content.[0].type","code":null}}`, problem.ModelRejected},
		{"OpenAI our request's shape", `{"error":{"message":"Invalid type for 'messages[0].content[0].image_url': expected an object, but got a string instead.","type":"invalid_request_error","param":"messages[0].content[0].image_url","code":"invalid_type"}}`, problem.ModelRejected},
		{"vLLM image limit", `{"object":"error","message":"At most 1 image(s) may be provided in one request.","type":"BadRequestError","param":null,"code":400}`, problem.ModelRejected},
		{"unknown parameter", `{"error":{"message":"Unknown parameter: 'response_format'.","type":"invalid_request_error","param":"response_format","code":"unknown_parameter"}}`, problem.ModelRejected},
		{"FastAPI validation", `{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required","input":{"messages":[{"content":"Hb 13.5 g/dL image"}]}}]}`, problem.ModelRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Default(fakeopenai.Raw(http.StatusBadRequest, tt.body))
			c, _ := newClient(t, f, Config{})

			_, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}})

			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			if f.Calls() != 1 {
				t.Errorf("calls = %d, want 1: a refusal is not retried", f.Calls())
			}
			if pe.Upstream == nil || pe.Upstream.Status != http.StatusBadRequest {
				t.Errorf("Upstream = %+v, want 400", pe.Upstream)
			}
			if strings.Contains(fmt.Sprint(*pe.Upstream)+pe.Detail, "13.5") {
				t.Errorf("the request quoted back reached the log or the detail: %+v / %q", *pe.Upstream, pe.Detail)
			}
		})
	}
}

// TestUpstream: every failure that came from the endpoint carries, for the log line, its
// status and its error's type and code, or our own words for an answer that was no error
// object; never the endpoint's message, which may quote the request (the report) back, nor
// the key. The caller's detail names the same and no more.
func TestUpstream(t *testing.T) {
	const echoed = "总胆固醇 987.654" // report text an endpoint quotes back from the request
	tests := []struct {
		name   string
		answer fakeopenai.Answer
		code   problem.Code
		want   problem.Upstream
		detail string // the end of the caller's detail
	}{
		{"401", fakeopenai.Error(http.StatusUnauthorized, "Incorrect API key provided: "+key+". "+echoed), problem.ModelRejected,
			problem.Upstream{Status: 401, Type: "invalid_request_error"}, "(1 try): 401 invalid_request_error"},
		{"401 with code", fakeopenai.Raw(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: `+echoed+`","type":"invalid_request_error","code":"invalid_api_key"}}`), problem.ModelRejected,
			problem.Upstream{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key"}, "(1 try): 401 invalid_request_error invalid_api_key"},
		{"code that is not a name", fakeopenai.Raw(http.StatusBadRequest, `{"error":{"message":"bad","type":"`+echoed+`","code":"`+echoed+`"}}`), problem.ModelRejected,
			problem.Upstream{Status: 400, Type: unlisted, Code: unlisted}, "(1 try): 400"},
		{"code that names the patient", fakeopenai.Raw(http.StatusBadRequest, `{"error":{"message":"bad","type":"HbA1c_high","code":"for_Wang_Xiuying"}}`), problem.ModelRejected,
			problem.Upstream{Status: 400, Type: unlisted, Code: unlisted}, "(1 try): 400"},
		{"404 model", fakeopenai.Raw(http.StatusNotFound, `{"error":{"message":"The model '`+echoed+`' does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}`), problem.ModelRejected,
			problem.Upstream{Status: 404, Type: "invalid_request_error", Code: "model_not_found"}, "(1 try): 404 invalid_request_error model_not_found"},
		{"404 no route", fakeopenai.NoRoute(), problem.ModelRejected, problem.Upstream{Status: 404, Reason: "its error answer was not JSON"}, "such as /v1"},
		{"500", fakeopenai.ServerError(), problem.ModelUnavailable, problem.Upstream{Status: 500, Type: "server_error"}, "(1 try): 500 server_error"},
		{"429", fakeopenai.RateLimited("1"), problem.ModelRateLimited, problem.Upstream{Status: 429, Type: "invalid_request_error"}, "(1 try): 429 invalid_request_error"},
		{"502 HTML", status(http.StatusBadGateway, "<html>bad\x1b[31m gateway "+echoed+"</html>"), problem.ModelUnavailable, problem.Upstream{Status: 502, Reason: "its error answer was not JSON"}, "(1 try): 502"},
		{"vLLM top level", fakeopenai.Raw(http.StatusBadRequest, `{"object":"error","message":"`+echoed+`","type":"BadRequestError","param":null,"code":400}`), problem.ModelRejected,
			problem.Upstream{Status: 400, Type: "BadRequestError", Code: "400"}, "(1 try): 400 BadRequestError"},
		{"FastAPI", fakeopenai.Raw(http.StatusUnprocessableEntity, `{"detail":[{"msg":"`+echoed+`"}]}`), problem.ModelRejected, problem.Upstream{Status: 422}, "(1 try): 422"},
		{"200 garbage", fakeopenai.Garbage(), problem.ModelUnavailable, problem.Upstream{Status: 200, Reason: "its answer was not a chat completion"}, "not a chat completion"},
		{"200 too large", fakeopenai.Huge(http.StatusOK, 8<<20), problem.ModelUnavailable, problem.Upstream{Status: 200, Reason: "its answer was larger than 4 MiB"}, "larger than 4 MiB"},
		{"hang-up", fakeopenai.HangUp(), problem.ModelUnavailable, problem.Upstream{Reason: "the endpoint closed the connection without an answer"}, "without an answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeopenai.New(t)
			f.Default(tt.answer)
			c, _ := newClient(t, f, Config{Tries: 1})

			_, err := c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}})

			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != tt.code {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			if pe.Upstream == nil || *pe.Upstream != tt.want {
				t.Errorf("Upstream = %+v, want %+v", pe.Upstream, tt.want)
			}
			if !strings.HasSuffix(pe.Detail, tt.detail) {
				t.Errorf("detail = %q, want it to end in %q", pe.Detail, tt.detail)
			}
			if s := err.Error(); strings.Contains(s, "987.654") || strings.Contains(s, "Incorrect") || strings.Contains(s, key) {
				t.Errorf("the error, cause included, quotes the upstream's message: %s", s)
			}
		})
	}
}

// TestNoRouteAdvice: a bare 404 is a wrong base URL, and the caller's detail says where to look.
func TestNoRouteAdvice(t *testing.T) {
	f := fakeopenai.New(t)
	f.Default(fakeopenai.NoRoute())
	c, _ := newClient(t, f, Config{})
	_, err := c.Complete(t.Context(), Request{Prompt: "read it"})
	var pe *problem.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Detail, "should end in the API version, such as /v1") {
		t.Errorf("err = %v, want advice on the base URL", err)
	}
}

// refusedURL is a loopback URL where nothing listens: a port opened and closed again.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// resetServer accepts a connection, reads the request and resets the connection.
func resetServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
				_, _ = io.Copy(io.Discard, req.Body) // all of it, so that the client waits for the answer
			}
			_ = conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
	}()
	return "http://" + l.Addr().String() + "/v1"
}

// dnsFails is a client whose every dial fails as a lookup of a name that does not exist does,
// so that the test needs no resolver.
func dnsFails() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: "model.invalid", IsNotFound: true}}
	}
	return &http.Client{Transport: t}
}

// connCase is one way of failing to reach the endpoint: a base URL, perhaps a client, and the
// kind of failure it must be reported as.
type connCase struct {
	name  string
	setup func(t *testing.T) (baseURL string, hc *http.Client, f *fakeopenai.Server)
	kind  string
	tries int // calls made with Tries 3
}

var connCases = []connCase{
	{"refused", func(t *testing.T) (string, *http.Client, *fakeopenai.Server) { return refusedURL(t), nil, nil },
		"connection refused", 3},
	{"reset", func(t *testing.T) (string, *http.Client, *fakeopenai.Server) { return resetServer(t), nil, nil },
		"connection reset", 3},
	{"https to a plain-HTTP server", func(t *testing.T) (string, *http.Client, *fakeopenai.Server) {
		f := fakeopenai.New(t)
		return strings.Replace(f.URL, "http://", "https://", 1), nil, f
	}, "the endpoint does not speak TLS: is the scheme http?", 1},
	{"untrusted certificate", func(t *testing.T) (string, *http.Client, *fakeopenai.Server) {
		s := httptest.NewUnstartedServer(http.NotFoundHandler())
		s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake error it would print is the point
		s.StartTLS()
		t.Cleanup(s.Close)
		return s.URL + "/v1", nil, nil
	}, "TLS certificate is signed by an unknown authority", 1},
	{"DNS", func(t *testing.T) (string, *http.Client, *fakeopenai.Server) {
		return "http://model.invalid/v1", dnsFails(), nil
	}, "host not found (DNS)", 3},
}

// TestConnectionKinds: each connection failure says which it is, in the detail without host or
// address, and the ones that fail alike every time are not retried.
func TestConnectionKinds(t *testing.T) {
	for _, tt := range connCases {
		t.Run(tt.name, func(t *testing.T) {
			base, hc, f := tt.setup(t)
			c, err := New(Config{BaseURL: base, Model: "m", APIKey: key, HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			w := new(waits)
			c.sleep = w.sleep

			_, err = c.Complete(t.Context(), Request{Prompt: "read it", Images: []Image{page}})

			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.ModelUnavailable {
				t.Fatalf("err = %v, want model_unavailable", err)
			}
			if pe.Upstream == nil || pe.Upstream.Status != 0 || pe.Upstream.Reason != tt.kind {
				t.Errorf("Upstream = %+v, want {0 %q} (cause %v)", pe.Upstream, tt.kind, pe.Err)
			}
			if !strings.HasSuffix(pe.Detail, ": "+tt.kind) {
				t.Errorf("detail %q does not end in the kind %q", pe.Detail, tt.kind)
			}
			host := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(base, "/v1"), "http://"), "https://")
			if strings.Contains(pe.Detail, host) || strings.Contains(pe.Detail, "127.0.0.1") {
				t.Errorf("detail %q names the host", pe.Detail)
			}
			if tries := len(w.got()) + 1; tries != tt.tries {
				t.Errorf("%d tries, want %d", tries, tt.tries)
			}
			if f != nil && f.Calls() != 0 {
				t.Errorf("the fake answered %d calls", f.Calls())
			}
		})
	}
}

func TestNewBaseURL(t *testing.T) {
	tests := []struct {
		url  string
		fix  string // "" if accepted
		with string
	}{
		{"https://api.example.com/v1", "", ""},
		{"http://localhost:8000/v1/", "", ""},
		{"https://example.com/openai/v1", "", ""},
		{"https://api.example.com/v1/chat/completions", "set OCR_MODEL_BASE_URL to https://api.example.com/v1, without /chat/completions", ""},
		{"https://api.example.com/v1/chat/completions/", "set OCR_MODEL_BASE_URL to https://api.example.com/v1, without /chat/completions", ""},
		{"http://localhost:8000/v1/completions", "set OCR_MODEL_BASE_URL to http://localhost:8000/v1, without /completions", ""},
		{"http://localhost:8000/v1/chat", "set OCR_MODEL_BASE_URL to http://localhost:8000/v1, without /chat", ""},
		{"https://user:hunter2@api.example.com/v1/chat/completions?key=s3cret", "set OCR_MODEL_BASE_URL to https://api.example.com/v1", "hunter2"},
		{"localhost:8000/v1", "not an http or https URL", ""},
		{"ftp://example.com/v1", "not an http or https URL", ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := New(Config{BaseURL: tt.url, Model: "m"})
			if tt.fix == "" {
				if err != nil {
					t.Errorf("New = %v, want it accepted", err)
				}
				return
			}
			if problem.CodeOf(err) != problem.ModelNotConfigured || !strings.Contains(err.Error(), tt.fix) {
				t.Fatalf("New = %v, want model_not_configured saying %q", err, tt.fix)
			}
			if tt.with != "" && (strings.Contains(err.Error(), tt.with) || strings.Contains(err.Error(), "s3cret")) {
				t.Errorf("New = %v: it quotes a secret of the URL", err)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      "https://api.openai.com",
		"http://localhost:8000/v1":              "http://localhost:8000",
		"https://u:p@h.example:8443/v1?key=s#f": "https://h.example:8443",
		"https://dashscope.aliyuncs.com/compatible-mode/v1": "https://dashscope.aliyuncs.com",
		"::": "(not a URL)",
	} {
		if got := Endpoint(in); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeylessDefault(t *testing.T) {
	tests := []struct {
		cfg  Config
		want bool
	}{
		{Config{}, true},
		{Config{BaseURL: "https://api.openai.com/v1"}, true},
		{Config{BaseURL: "https://api.openai.com/v1", APIKey: "k"}, false},
		{Config{BaseURL: "http://localhost:11434/v1"}, false},
	}
	for _, tt := range tests {
		if got := KeylessDefault(tt.cfg); got != tt.want {
			t.Errorf("KeylessDefault(%+v) = %v, want %v", tt.cfg, got, tt.want)
		}
	}
}

func ExampleEndpoint() {
	fmt.Println(Endpoint("https://user:secret@llm.example.com:8443/v1?api-version=1"))
	// Output: https://llm.example.com:8443
}

// FuzzSaidBody: whatever an error answer holds, reading it never panics, and of a JSON answer
// only the known message fields are taken, never what it quotes of the request.
func FuzzSaidBody(f *testing.F) {
	f.Add(`{"error":"unsupported image format"}`)
	f.Add(`{"object":"error","message":"m","code":400}`)
	f.Add(`{"detail":[{"msg":"Field required","input":"SECRET"}]}`)
	f.Add(`{"detail":"Not Found"}`)
	f.Add(`<html>502</html>`)
	f.Fuzz(func(t *testing.T, body string) {
		s := saidBody([]byte(body))
		_ = s.aboutImage()
		if strings.Contains(body, `"input":"SECRET"`) && json.Valid([]byte(body)) && strings.Contains(s.text(), "SECRET") &&
			!strings.Contains(strings.Replace(body, `"input":"SECRET"`, "", 1), "SECRET") {
			t.Errorf("saidBody(%q) took the quoted input: %+v", body, s)
		}
	})
}

// TestToken: an upstream's error code or type is logged only when it is a name the service
// lists (knownNames); any other, a value or a name quoted from the report in its place
// included, is "(unlisted)", whatever its shape.
func TestToken(t *testing.T) {
	for _, tt := range []struct {
		in     string
		status int
		want   string
	}{
		{"invalid_api_key", 401, "invalid_api_key"},
		{"InvalidParameter.UnsupportedImageFormat", 400, "InvalidParameter.UnsupportedImageFormat"},
		{"invalid_request_error", 400, "invalid_request_error"},
		{"Throttling.RateQuota", 429, "Throttling.RateQuota"},
		{"400", 400, "400"}, // vLLM's code is its status
		{"", 400, ""},
		{"E1001", 400, unlisted},
		{"HbA1c_high_for_Wang_Xiuying", 400, unlisted}, // a name of the shape of a code
		{"seven_point_three", 400, unlisted},
		{"654.321", 400, unlisted}, // a value from the report
		{"128", 400, unlisted},     // digits that are not the status
		{"总胆固醇", 400, unlisted},
		{"Invalid_Api_Key", 401, unlisted}, // names match whole, as written
		{strings.Repeat("a", 100), 400, unlisted},
	} {
		if got := token(tt.in, tt.status); got != tt.want {
			t.Errorf("token(%q, %d) = %q, want %q", tt.in, tt.status, got, tt.want)
		}
	}
}

// TestImageCodesListed: every error code imageSigns reads is one knownNames lists, so that the
// code which decides a refusal is about the image is also the one the log and the detail show.
func TestImageCodesListed(t *testing.T) {
	for _, r := range imageSigns {
		if r.field == "code" && !knownNames[r.match] {
			t.Errorf("imageSigns reads the code %q, which knownNames does not list", r.match)
		}
	}
}
