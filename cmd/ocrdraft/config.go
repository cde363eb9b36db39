package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/modelcall"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/vision"
)

// config is the service's configuration: environment first, flags override.
type config struct {
	ListenAddr      string
	BaseURL         string
	APIKey          string
	Model           string
	OutputMode      string
	MaxAttempts     int
	RequestTimeout  time.Duration
	MaxTokens       int
	Temperature     float64
	ModelTries      int
	AttemptTimeout  time.Duration
	MaxImageBytes   int64
	MaxRequestBytes int64
	MaxPixels       int
	MaxEdge         int
	MaxPages        int
	PageConcurrency int
	RetryMemory     int64
	ShutdownTimeout time.Duration
	LogLevel        slog.Level
	APIKeys         []string
	MaxInFlight     int
	QueueWait       time.Duration
	UploadMemory    int64
	TextInFlight    int
	TextTimeout     time.Duration
	BodyIdleTimeout time.Duration
	DrainTimeout    time.Duration
	HeaderTimeout   time.Duration
	IdleTimeout     time.Duration
	MaxHeaderBytes  int
	DebugLogReplies bool
}

// setting is one configuration value: its environment variables (the first set one wins), the
// flag that overrides it, its default, and how to store it. settings is the one table of them;
// the README's table is checked against it.
type setting struct {
	env   []string
	flag  string
	def   string
	usage string
	set   func(c *config, v string) error
}

var settings = []setting{
	{[]string{"OCR_LISTEN_ADDR"}, "listen", ":8080", "listen address", func(c *config, v string) error { c.ListenAddr = v; return nil }},
	{[]string{"OCR_MODEL_BASE_URL", "OPENAI_BASE_URL"}, "base-url", "https://api.openai.com/v1", "OpenAI-compatible endpoint, up to and including its version path", func(c *config, v string) error {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("want an http or https URL such as https://api.openai.com/v1, got %q", v)
		}
		c.BaseURL = v
		return nil
	}},
	{[]string{"OCR_MODEL_API_KEY", "OPENAI_API_KEY"}, "", "", "key for the model endpoint (environment only, so it never shows in a process list)", func(c *config, v string) error { c.APIKey = v; return nil }},
	{[]string{"OCR_MODEL"}, "model", "", "model name (gpt-4o-mini, qwen-vl-max, llama3.2-vision …); empty leaves /v1/extract answering model_not_configured", func(c *config, v string) error { c.Model = v; return nil }},
	{[]string{"OCR_OUTPUT_MODE"}, "output-mode", "prompt", "prompt, json_object or json_schema", func(c *config, v string) error {
		switch v {
		case vision.ModePrompt, vision.ModeJSONObject, vision.ModeJSONSchema:
			c.OutputMode = v
			return nil
		}
		return fmt.Errorf("want prompt, json_object or json_schema, got %q", v)
	}},
	{[]string{"OCR_MAX_ATTEMPTS"}, "max-attempts", strconv.Itoa(extract.DefaultMaxAttempts), "model calls per page while the reply is unparseable", positiveInt(func(c *config, n int) { c.MaxAttempts = n })},
	{[]string{"OCR_REQUEST_TIMEOUT"}, "request-timeout", "120s", "whole-request deadline", duration(func(c *config, d time.Duration) { c.RequestTimeout = d })},
	{[]string{"OCR_MAX_TOKENS"}, "max-tokens", "4096", "completion token budget per model call", positiveInt(func(c *config, n int) { c.MaxTokens = n })},
	{[]string{"OCR_TEMPERATURE"}, "temperature", "0", "sampling temperature, 0 to 2 (0 is sent as 0.01: go-openai drops a literal 0)", func(c *config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 2 {
			return fmt.Errorf("want a number from 0 to 2, got %q", v)
		}
		c.Temperature = f
		return nil
	}},
	{[]string{"OCR_MODEL_TRIES"}, "model-tries", "3", "tries per model call on 429, 5xx and connection errors", positiveInt(func(c *config, n int) { c.ModelTries = n })},
	{[]string{"OCR_ATTEMPT_TIMEOUT"}, "attempt-timeout", "60s", "deadline of one try, inside the request deadline", duration(func(c *config, d time.Duration) { c.AttemptTimeout = d })},
	{[]string{"OCR_MAX_IMAGE_BYTES"}, "max-image-bytes", strconv.Itoa(intake.DefaultMaxBytes), "largest image file, in bytes", positiveInt(func(c *config, n int) { c.MaxImageBytes = int64(n) })},
	{[]string{"OCR_MAX_REQUEST_BYTES"}, "max-request-bytes", strconv.Itoa(server.DefaultMaxRequestBytes), "largest /v1/extract request body, in bytes", positiveInt(func(c *config, n int) { c.MaxRequestBytes = int64(n) })},
	{[]string{"OCR_MAX_PIXELS"}, "max-pixels", strconv.Itoa(intake.DefaultMaxPixels), "largest image, in pixels, read from its header before decoding", positiveInt(func(c *config, n int) { c.MaxPixels = n })},
	{[]string{"OCR_MAX_EDGE"}, "max-edge", strconv.Itoa(intake.DefaultMaxEdge), "long edge, in pixels, that images are downscaled to", positiveInt(func(c *config, n int) { c.MaxEdge = n })},
	{[]string{"OCR_MAX_PAGES"}, "max-pages", strconv.Itoa(server.DefaultMaxPages), "images per request", positiveInt(func(c *config, n int) { c.MaxPages = n })},
	{[]string{"OCR_PAGE_CONCURRENCY"}, "page-concurrency", strconv.Itoa(extract.DefaultConcurrency), "pages of one request read at once", positiveInt(func(c *config, n int) { c.PageConcurrency = n })},
	{[]string{"OCR_RETRY_MEMORY"}, "retry-memory", strconv.Itoa(extract.DefaultRetryMemory), "bytes of page images kept, across the process, so that model calls can be retried; pages beyond it are sent once", positiveInt(func(c *config, n int) { c.RetryMemory = int64(n) })},
	{[]string{"OCR_SHUTDOWN_TIMEOUT"}, "shutdown-timeout", "30s", "how long in-flight requests may finish after SIGTERM", duration(func(c *config, d time.Duration) { c.ShutdownTimeout = d })},
	{[]string{"OCR_LOG_LEVEL"}, "log-level", "info", "debug, info, warn or error", func(c *config, v string) error {
		return c.LogLevel.UnmarshalText([]byte(v))
	}},
	{[]string{"OCR_API_KEYS"}, "", "", "bearer keys callers must send to /v1/*, comma-separated (environment only); unset leaves the API open, set it must hold only keys", apiKeys},
	{[]string{"OCR_MAX_INFLIGHT"}, "max-inflight", strconv.Itoa(modelcall.DefaultMaxInFlight), "/v1/extract requests worked on at once, and model calls at once, across the process; more wait for a turn", positiveInt(func(c *config, n int) { c.MaxInFlight = n })},
	{[]string{"OCR_QUEUE_WAIT"}, "queue-wait", modelcall.DefaultQueueWait.String(), "longest wait for a turn (a request's or a model call's) before 503 overloaded", duration(func(c *config, d time.Duration) { c.QueueWait = d })},
	{[]string{"OCR_UPLOAD_MEMORY"}, "upload-memory", strconv.Itoa(server.DefaultUploadMemory), "bytes of page images on their way in, across the process: from reading a /v1/extract body until each page is sent to the model; more wait for room while uploads move on", positiveInt(func(c *config, n int) { c.UploadMemory = int64(n) })},
	{[]string{"OCR_TEXT_INFLIGHT"}, "text-inflight", "", "/v1/parse and /v1/validate requests worked on at once; unset, the number of CPUs; more wait OCR_QUEUE_WAIT, then 503 overloaded", func(c *config, v string) error {
		if v == "" {
			c.TextInFlight = runtime.NumCPU()
			return nil
		}
		return positiveInt(func(c *config, n int) { c.TextInFlight = n })(c, v)
	}},
	{[]string{"OCR_TEXT_TIMEOUT"}, "text-timeout", server.DefaultTextTimeout.String(), "deadline of a /v1/parse or /v1/validate request, its body included", duration(func(c *config, d time.Duration) { c.TextTimeout = d })},
	{[]string{"OCR_BODY_IDLE_TIMEOUT"}, "body-idle-timeout", server.DefaultBodyIdleTimeout.String(), "longest a request body may make no progress before 408 request_timeout and a closed connection, on every route", duration(func(c *config, d time.Duration) { c.BodyIdleTimeout = d })},
	{[]string{"OCR_DRAIN_TIMEOUT"}, "drain-timeout", server.DefaultDrainTimeout.String(), "how long the rest of a refused body (up to OCR_MAX_REQUEST_BYTES) is read and discarded after the answer, so the caller sees it", duration(func(c *config, d time.Duration) { c.DrainTimeout = d })},
	{[]string{"OCR_HEADER_TIMEOUT"}, "header-timeout", server.DefaultHeaderTimeout.String(), "deadline for a request's headers", duration(func(c *config, d time.Duration) { c.HeaderTimeout = d })},
	{[]string{"OCR_IDLE_TIMEOUT"}, "idle-timeout", server.DefaultIdleTimeout.String(), "how long a kept-alive connection may sit idle", duration(func(c *config, d time.Duration) { c.IdleTimeout = d })},
	{[]string{"OCR_MAX_HEADER_BYTES"}, "max-header-bytes", strconv.Itoa(server.DefaultMaxHeaderBytes), "largest request line and headers, in bytes (431 beyond)", positiveInt(func(c *config, n int) { c.MaxHeaderBytes = n })},
	{[]string{"OCR_DEBUG_LOG_REPLIES"}, "", "false", "log raw model replies (health data) at debug level; local debugging only (environment only)", func(c *config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.DebugLogReplies = b
		return nil
	}},
}

// apiKeys reads OCR_API_KEYS. Set, it must name keys and nothing else: " " or "a,,b" (a key
// variable left empty in a template, say) would otherwise leave the API open or a key lost
// without a word, so each is refused and the service does not start.
func apiKeys(c *config, v string) error {
	c.APIKeys = nil
	if v == "" {
		return nil
	}
	for i, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		switch {
		case k == "":
			return fmt.Errorf("key %d of the comma-separated list is empty; remove the stray comma or set the key", i+1)
		case strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r == 0x7f }):
			return fmt.Errorf("key %d holds a space or a control character, which no bearer token can", i+1)
		}
		c.APIKeys = append(c.APIKeys, k)
	}
	return nil
}

func positiveInt(set func(*config, int)) func(*config, string) error {
	return func(c *config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			return fmt.Errorf("want a whole number above 0, got %q", v)
		}
		set(c, n)
		return nil
	}
}

func duration(set func(*config, time.Duration)) func(*config, string) error {
	return func(c *config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return fmt.Errorf("want a duration such as 30s or 2m, got %q", v)
		}
		set(c, d)
		return nil
	}
}

// loadConfig reads the environment (getenv), then the flags in args. A bad value is an error
// naming the variable or the flag it came from.
func loadConfig(fs *flag.FlagSet, args []string, getenv func(string) string) (config, error) {
	var c config
	for _, s := range settings {
		v, from := s.def, "default of "+s.env[0]
		for _, name := range s.env {
			if e := getenv(name); e != "" {
				v, from = e, name
				break
			}
		}
		if err := s.set(&c, v); err != nil {
			return config{}, fmt.Errorf("%s: %w", from, err)
		}
		if s.flag != "" {
			fs.Func(s.flag, fmt.Sprintf("%s (env %s, default %q)", s.usage, strings.Join(s.env, " or "), s.def), func(v string) error {
				return s.set(&c, v)
			})
		}
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if c.AttemptTimeout > c.RequestTimeout {
		c.AttemptTimeout = c.RequestTimeout
	}
	return c, nil
}

// notConfigured is the detail of model_not_configured: what to set.
const notConfigured = "no model is configured: set OCR_MODEL (and OCR_MODEL_BASE_URL and OCR_MODEL_API_KEY for your endpoint) and restart"

func environ(name string) string { return os.Getenv(name) }
