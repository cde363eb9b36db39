package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/internal/webhook"
	"github.com/ocrdraft/ocrdraft/jobs"
	"github.com/ocrdraft/ocrdraft/prompt"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/server/review"
	"github.com/ocrdraft/ocrdraft/vision"
	"github.com/ocrdraft/ocrdraft/vision/modelcall"
)

// config is the service's configuration: environment first, flags override.
type config struct {
	ListenAddr      string
	MetricsAddr     string
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
	MinBodyRate     int64
	DrainTimeout    time.Duration
	HeaderTimeout   time.Duration
	IdleTimeout     time.Duration
	MaxHeaderBytes  int
	DebugLogReplies bool
	ReplyExcerpts   bool
	Lang            string // msg.Zh or msg.En
	DecodeMemory    int64
	WasmCacheDir    string
	WarmDecoders    bool
	Review          bool
	ReviewEmbedders []string
	WebhookSecret   webhook.Secret // signs job callbacks; zero when unset
	CallbackHosts   []string       // hosts a job's callbackUrl may name; none: callbacks refused
	ServerAPIKey    string         // ocrdraft extract -server's bearer key
	Verify          extract.VerifyMode
	VerifyModel     string
	VerifyBaseURL   string
	VerifyAPIKey    string
	Boxes           prompt.Boxes
	JobsDir         string // "" is os.UserCacheDir()/ocrdraft/jobs
	JobsDatabaseURL string
	JobsKey         []byte // nil: /v1/jobs answers jobs_not_configured
	JobsRetention   time.Duration
	JobMaxPages     int
	JobConcurrency  int
	JobsReplicaWait time.Duration // OCR_JOBS_REPLICA_TIMEOUT

	// from names where each setting's value came from, by its first variable: the flag
	// ("-listen"), the variable, or its default; errors found after loading name it.
	from map[string]string
}

// setting is one configuration value: its environment variables (the first set one wins), the
// flag that overrides it (none: environment only), its default, the kind of value -h shows, how to
// store it, and the commands that read it. settings is the one table of them;
// docs/configuration.md's table is generated from it.
type setting struct {
	env   []string
	flag  string
	def   string
	kind  string
	usage string
	set   func(c *config, v string) error
	cmds  command
}

// command is a set of the commands a setting is for: each command's -h lists, and its run
// reads, only its own.
type command uint8

const (
	cmdServe command = 1 << iota
	cmdExtract
	cmdHealthcheck
	cmdCheck

	both     = cmdServe | cmdExtract
	endpoint = both | cmdCheck // the model endpoint: where, with which key, which model
)

var settings = []setting{
	{[]string{"OCR_LISTEN_ADDR"}, "listen", ":8080", "address", "listen address, host:port; ocrdraft healthcheck asks it", address(false, func(c *config, v string) { c.ListenAddr = v }), cmdServe | cmdHealthcheck},
	{[]string{"OCR_METRICS_ADDR"}, "metrics-addr", "", "address", "listen address for /metrics alone, host:port; unset, /metrics is on the listen address with the API", address(true, func(c *config, v string) { c.MetricsAddr = v }), cmdServe},
	{[]string{"OCR_MODEL_BASE_URL", "OPENAI_BASE_URL"}, "base-url", "https://api.openai.com/v1", "URL", "OpenAI-compatible endpoint, up to and including its version path", func(c *config, v string) error {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("want an http or https URL such as https://api.openai.com/v1, got %q", v)
		}
		c.BaseURL = v
		return nil
	}, endpoint},
	{[]string{"OCR_MODEL_API_KEY", "OPENAI_API_KEY"}, "", "", "string", "key for the model endpoint (environment only, so it never shows in a process list)", func(c *config, v string) error { c.APIKey = v; return nil }, endpoint},
	{[]string{"OCR_MODEL"}, "model", "", "string", "model name (gpt-4o-mini, qwen-vl-max, llama3.2-vision …); empty leaves /v1/extract answering model_not_configured", func(c *config, v string) error { c.Model = v; return nil }, endpoint},
	{[]string{"OCR_OUTPUT_MODE"}, "output-mode", "prompt", "mode", "prompt, json_object or json_schema", func(c *config, v string) error {
		switch v {
		case vision.ModePrompt, vision.ModeJSONObject, vision.ModeJSONSchema:
			c.OutputMode = v
			return nil
		}
		return fmt.Errorf("want prompt, json_object or json_schema, got %q", v)
	}, both},
	{[]string{"OCR_VERIFY"}, "verify", string(extract.VerifyOff), "mode", "a second, independent read of each page with its own prompt, every field the two reads give differently a reads_disagree warning: off; flagged (only pages where the reader or the checks warned about a row); all (every page, the two calls at once: about twice the tokens, the wall time of the slower)", func(c *config, v string) error {
		for _, m := range extract.VerifyModes {
			if strings.EqualFold(strings.TrimSpace(v), string(m)) {
				c.Verify = m
				return nil
			}
		}
		return fmt.Errorf("want off, flagged or all, got %q", v)
	}, both},
	{[]string{"OCR_VERIFY_MODEL"}, "verify-model", "", "string", "model of the second read (OCR_VERIFY), at OCR_VERIFY_BASE_URL; unset, OCR_MODEL: another model disagrees more usefully than one model twice", func(c *config, v string) error { c.VerifyModel = strings.TrimSpace(v); return nil }, both | cmdCheck},
	{[]string{"OCR_VERIFY_BASE_URL"}, "verify-base-url", "", "URL", "endpoint of the second read's model, when it is another than OCR_MODEL_BASE_URL; unset, the same endpoint (and key)", func(c *config, v string) error {
		if v == "" {
			c.VerifyBaseURL = ""
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("want an http or https URL such as http://qwen:8000/v1, got %q", v)
		}
		c.VerifyBaseURL = v
		return nil
	}, both | cmdCheck},
	{[]string{"OCR_VERIFY_API_KEY"}, "", "", "string", "key for OCR_VERIFY_BASE_URL (environment only); unset, none is sent there: OCR_MODEL_API_KEY goes only to its own endpoint", func(c *config, v string) error { c.VerifyAPIKey = v; return nil }, both | cmdCheck},
	{[]string{"OCR_MODEL_BOXES"}, "model-boxes", string(prompt.BoxesOff), "convention", "ask the model for each row's box, in its own convention, and give it in meta.evidence (source model): off; pixels (bbox_2d in pixels, Qwen2.5-VL; pages are then sent with sides that are multiples of 28); thousandths (bbox_2d in 0-1000, Qwen3-VL, InternVL, GLM-4.5V, MiniCPM-V); gemini (box_2d, [ymin, xmin, ymax, xmax] in 0-1000)", func(c *config, v string) error {
		b, ok := prompt.ParseBoxes(v)
		if !ok {
			return fmt.Errorf("want off, pixels, thousandths or gemini, got %q", v)
		}
		c.Boxes = b
		return nil
	}, both},
	{[]string{"OCR_MAX_ATTEMPTS"}, "max-attempts", strconv.Itoa(extract.DefaultMaxAttempts), "integer", "model calls per page while the reply is unparseable", positiveInt(func(c *config, n int) { c.MaxAttempts = n }), both},
	{[]string{"OCR_REQUEST_TIMEOUT"}, "request-timeout", "120s", "duration", "whole-request deadline", duration(func(c *config, d time.Duration) { c.RequestTimeout = d }), both},
	{[]string{"OCR_MAX_TOKENS"}, "max-tokens", "4096", "integer", "completion token budget per model call", positiveInt(func(c *config, n int) { c.MaxTokens = n }), both},
	{[]string{"OCR_TEMPERATURE"}, "temperature", "0", "number", "sampling temperature, 0 to 2 (0 is sent as 0.01: go-openai drops a literal 0)", func(c *config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 2 {
			return fmt.Errorf("want a number from 0 to 2, got %q", v)
		}
		c.Temperature = f
		return nil
	}, both},
	{[]string{"OCR_MODEL_TRIES"}, "model-tries", "3", "integer", "tries per model call on 429, 5xx and connection errors", positiveInt(func(c *config, n int) { c.ModelTries = n }), both},
	{[]string{"OCR_ATTEMPT_TIMEOUT"}, "attempt-timeout", "60s", "duration", "deadline of one try, inside the request deadline", duration(func(c *config, d time.Duration) { c.AttemptTimeout = d }), both},
	{[]string{"OCR_MAX_IMAGE_BYTES"}, "max-image-bytes", strconv.Itoa(intake.DefaultMaxBytes), "bytes", "largest image file, in bytes", positiveInt(func(c *config, n int) { c.MaxImageBytes = int64(n) }), both},
	{[]string{"OCR_MAX_REQUEST_BYTES"}, "max-request-bytes", strconv.Itoa(server.DefaultMaxRequestBytes), "bytes", "largest /v1/extract request body, in bytes", positiveInt(func(c *config, n int) { c.MaxRequestBytes = int64(n) }), cmdServe},
	{[]string{"OCR_MAX_PIXELS"}, "max-pixels", strconv.Itoa(intake.DefaultMaxPixels), "integer", "largest image, in pixels, read from its header before decoding", positiveInt(func(c *config, n int) { c.MaxPixels = n }), both},
	{[]string{"OCR_MAX_EDGE"}, "max-edge", strconv.Itoa(intake.DefaultMaxEdge), "integer", "long edge, in pixels, that images are downscaled to", positiveInt(func(c *config, n int) { c.MaxEdge = n }), both},
	{[]string{"OCR_MAX_PAGES"}, "max-pages", strconv.Itoa(server.DefaultMaxPages), "integer", "images per request", positiveInt(func(c *config, n int) { c.MaxPages = n }), both},
	{[]string{"OCR_PAGE_CONCURRENCY"}, "page-concurrency", strconv.Itoa(extract.DefaultConcurrency), "integer", "pages of one request read at once; their model calls start in page order (with 1, one after another)", positiveInt(func(c *config, n int) { c.PageConcurrency = n }), both},
	{[]string{"OCR_RETRY_MEMORY"}, "retry-memory", strconv.Itoa(extract.DefaultRetryMemory), "bytes", "bytes of page images kept, across the process, so that model calls can be retried; pages beyond it are sent once", positiveInt(func(c *config, n int) { c.RetryMemory = int64(n) }), both},
	{[]string{"OCR_SHUTDOWN_TIMEOUT"}, "shutdown-timeout", "30s", "duration", "how long in-flight requests may finish after SIGTERM", duration(func(c *config, d time.Duration) { c.ShutdownTimeout = d }), cmdServe},
	{[]string{"OCR_LOG_LEVEL"}, "log-level", "info", "level", "debug, info, warn or error", func(c *config, v string) error {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("want debug, info, warn or error, got %q", v)
		}
		return nil
	}, both},
	{[]string{"OCR_API_KEYS"}, "", "", "keys", "bearer keys callers must send to /v1/*, comma-separated (environment only); unset leaves the API open, set it must hold only keys", apiKeys, cmdServe},
	{[]string{"OCR_MAX_INFLIGHT"}, "max-inflight", strconv.Itoa(modelcall.DefaultMaxInFlight), "integer", "/v1/extract requests worked on at once, and model calls at once, across the process; more wait for a turn", positiveInt(func(c *config, n int) { c.MaxInFlight = n }), cmdServe},
	{[]string{"OCR_QUEUE_WAIT"}, "queue-wait", modelcall.DefaultQueueWait.String(), "duration", "longest wait for a turn (a request's or a model call's) before 503 overloaded", duration(func(c *config, d time.Duration) { c.QueueWait = d }), cmdServe},
	{[]string{"OCR_UPLOAD_MEMORY"}, "upload-memory", strconv.Itoa(server.DefaultUploadMemory), "bytes", "bytes of page images on their way in, across the process: from reading a /v1/extract body until each page is sent to the model; more wait for room while uploads move on", positiveInt(func(c *config, n int) { c.UploadMemory = int64(n) }), cmdServe},
	{[]string{"OCR_TEXT_INFLIGHT"}, "text-inflight", "", "integer", "/v1/parse and /v1/validate requests worked on at once; unset, the number of CPUs; more wait OCR_QUEUE_WAIT, then 503 overloaded", func(c *config, v string) error {
		if v == "" {
			c.TextInFlight = runtime.NumCPU()
			return nil
		}
		return positiveInt(func(c *config, n int) { c.TextInFlight = n })(c, v)
	}, cmdServe},
	{[]string{"OCR_TEXT_TIMEOUT"}, "text-timeout", server.DefaultTextTimeout.String(), "duration", "deadline of a /v1/parse or /v1/validate request, its body included", duration(func(c *config, d time.Duration) { c.TextTimeout = d }), cmdServe},
	{[]string{"OCR_BODY_MIN_RATE"}, "body-min-rate", strconv.Itoa(server.DefaultMinBodyRate), "bytes", "slowest average rate, in bytes a second, a request body may arrive at once OCR_BODY_IDLE_TIMEOUT has passed; slower is 408 request_timeout (a body trickled a byte at a time would otherwise hold its /v1/extract turn to the deadline)", positiveInt(func(c *config, n int) { c.MinBodyRate = int64(n) }), cmdServe},
	{[]string{"OCR_BODY_IDLE_TIMEOUT"}, "body-idle-timeout", server.DefaultBodyIdleTimeout.String(), "duration", "longest a request body may make no progress before 408 request_timeout and a closed connection, on every route", duration(func(c *config, d time.Duration) { c.BodyIdleTimeout = d }), cmdServe},
	{[]string{"OCR_DRAIN_TIMEOUT"}, "drain-timeout", server.DefaultDrainTimeout.String(), "duration", "how long the rest of a refused body (up to OCR_MAX_REQUEST_BYTES) is read and discarded after the answer, so the caller sees it", duration(func(c *config, d time.Duration) { c.DrainTimeout = d }), cmdServe},
	{[]string{"OCR_HEADER_TIMEOUT"}, "header-timeout", server.DefaultHeaderTimeout.String(), "duration", "deadline for a request's headers", duration(func(c *config, d time.Duration) { c.HeaderTimeout = d }), cmdServe},
	{[]string{"OCR_IDLE_TIMEOUT"}, "idle-timeout", server.DefaultIdleTimeout.String(), "duration", "how long a kept-alive connection may sit idle", duration(func(c *config, d time.Duration) { c.IdleTimeout = d }), cmdServe},
	{[]string{"OCR_MAX_HEADER_BYTES"}, "max-header-bytes", strconv.Itoa(server.DefaultMaxHeaderBytes), "bytes", "largest request line and headers, in bytes (431 beyond)", positiveInt(func(c *config, n int) { c.MaxHeaderBytes = n }), cmdServe},
	{[]string{"OCR_DECODE_MEMORY"}, "decode-memory", "", "bytes", "bytes all image and document decodes in progress may hold together, each counted from its headers before it starts; more wait; unset, twice the memory one decode may take (8 bytes per OCR_MAX_PIXELS pixel)", func(c *config, v string) error {
		if strings.TrimSpace(v) == "" {
			c.DecodeMemory = 0
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a whole number of bytes above 0, got %q", v)
		}
		c.DecodeMemory = n
		return nil
	}, both},
	{[]string{"OCR_WASM_CACHE_DIR"}, "wasm-cache-dir", "", "directory", "where the compiled PDF and HEIC decoders (WebAssembly) are kept between runs, so that a start, or an ocrdraft extract of a PDF, takes 0.2 s instead of 6 s of CPU; the HEIC worker processes load theirs from it; unset, they are compiled in memory each run (the HEIC workers' in a private temporary directory, removed at exit)", func(c *config, v string) error { c.WasmCacheDir = v; return nil }, both},
	{[]string{"OCR_WARM_DECODERS"}, "warm-decoders", "true", "bool", "compile the PDF and HEIC decoders in the background at start, instead of at the first PDF or HEIC upload", func(c *config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.WarmDecoders = b
		return nil
	}, cmdServe},
	{[]string{"OCR_REVIEW"}, "review", "on", "on|off", "GET /review, the page where a person checks and confirms a draft in a browser; off answers 404 there", func(c *config, v string) error {
		switch strings.TrimSpace(v) {
		case "on":
			c.Review = true
		case "off":
			c.Review = false
		default:
			return fmt.Errorf("want on or off, got %q", v)
		}
		return nil
	}, cmdServe},
	{[]string{"OCR_REVIEW_EMBEDDERS"}, "review-embedders", "", "origins", "origins allowed to frame /review, space- or comma-separated (https://health.example.com): its CSP frame-ancestors, and the one origin a confirmed draft is posted to; unset, no page may frame it", func(c *config, v string) error {
		c.ReviewEmbedders = nil
		for _, o := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			if err := review.Origin(o); err != nil {
				return err
			}
			c.ReviewEmbedders = append(c.ReviewEmbedders, o)
		}
		return nil
	}, cmdServe},
	{[]string{"OCR_LANG"}, "lang", msg.Default, "language", "language of warnings' messages: zh-CN (zh, zh-TW … all Chinese) or en; for serve, the default when a caller's Accept-Language names neither", func(c *config, v string) error {
		l, err := msg.Parse(v)
		c.Lang = l
		return err
	}, both},
	{[]string{"OCR_REPLY_EXCERPTS"}, "reply-excerpts", "true", "bool", "send the start of an unusable model reply to the caller as a problem's replyExcerpt (report text: never in detail, never logged); false leaves it out", func(c *config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.ReplyExcerpts = b
		return nil
	}, cmdServe},
	{[]string{"OCR_WEBHOOK_SECRET"}, "", "", "secret", "key that signs job callbacks as Standard Webhooks do: whsec_ and the base64 of 24 to 64 random bytes (environment only; make one with echo whsec_$(openssl rand -base64 32)); needed when OCR_CALLBACK_HOSTS is set", func(c *config, v string) error {
		c.WebhookSecret = webhook.Secret{}
		if v == "" {
			return nil
		}
		s, err := webhook.ParseSecret(v)
		c.WebhookSecret = s
		return err
	}, cmdServe},
	{[]string{"OCR_CALLBACK_HOSTS"}, "callback-hosts", "", "hosts", "hosts a job's callbackUrl may name, comma-separated, each host or host:port (without a port, any port), compared as written, without regard to case: the guard against a callback into your own network; unset, a job with a callbackUrl is refused (callback_not_allowed)", func(c *config, v string) error {
		c.CallbackHosts = nil
		if strings.TrimSpace(v) == "" {
			return nil
		}
		for _, h := range strings.Split(v, ",") {
			c.CallbackHosts = append(c.CallbackHosts, strings.TrimSpace(h))
		}
		return webhook.CheckHosts(c.CallbackHosts)
	}, cmdServe},
	{[]string{"OCR_SERVER_API_KEY"}, "", "", "string", "bearer key ocrdraft extract -server sends to the server (environment only; -key-env names another variable)", func(c *config, v string) error { c.ServerAPIKey = v; return nil }, cmdExtract},
	{[]string{"OCR_DEBUG_LOG_REPLIES"}, "", "false", "bool", "log raw model replies (health data) at debug level; local debugging only (environment only)", func(c *config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.DebugLogReplies = b
		return nil
	}, both},
	{[]string{"OCR_JOBS_KEY"}, "", "", "key", "the key that encrypts what /v1/jobs stores (pages, readings, results): base64 of 32 bytes, such as openssl rand -base64 32 prints (environment only); unset, /v1/jobs answers jobs_not_configured", func(c *config, v string) error {
		c.JobsKey = nil
		if strings.TrimSpace(v) == "" {
			return nil
		}
		k, err := jobs.ParseKey(v)
		c.JobsKey = k
		return err
	}, cmdServe},
	{[]string{"OCR_JOBS_DIR"}, "jobs-dir", "", "directory", "where the jobs' SQLite database is kept when OCR_JOBS_DATABASE_URL is unset; unset, ocrdraft/jobs under the user's cache directory", func(c *config, v string) error { c.JobsDir = v; return nil }, cmdServe},
	{[]string{"OCR_JOBS_DATABASE_URL"}, "", "", "URL", "a postgres:// URL: the jobs' queue and tables in Postgres, shared by every replica (environment only: it may hold a password); unset, SQLite in OCR_JOBS_DIR, for one replica", func(c *config, v string) error {
		if v != "" && !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") {
			return errors.New("want a postgres:// or postgresql:// URL")
		}
		c.JobsDatabaseURL = v
		return nil
	}, cmdServe},
	{[]string{"OCR_JOBS_RETENTION"}, "jobs-retention", jobs.DefaultRetention.String(), "duration", "how long a finished job and its result are kept before they are deleted", duration(func(c *config, d time.Duration) { c.JobsRetention = d }), cmdServe},
	{[]string{"OCR_JOB_MAX_PAGES"}, "job-max-pages", strconv.Itoa(jobs.DefaultMaxPages), "integer", "pages of one /v1/jobs document (OCR_MAX_PAGES stays the limit of /v1/extract)", positiveInt(func(c *config, n int) { c.JobMaxPages = n }), cmdServe},
	{[]string{"OCR_JOBS_REPLICA_TIMEOUT"}, "jobs-replica-timeout", jobs.DefaultReplicaTimeout.String(), "duration", "on Postgres, how long a replica may go without its heartbeat (written every sixth of it) before another takes up the pages it was reading: a killed replica's pages wait this long, not three request timeouts", duration(func(c *config, d time.Duration) { c.JobsReplicaWait = d }), cmdServe},
	{[]string{"OCR_JOB_CONCURRENCY"}, "job-concurrency", strconv.Itoa(jobs.DefaultConcurrency), "integer", "pages of jobs read at once by this process, across jobs (their model calls also pass OCR_MAX_INFLIGHT)", positiveInt(func(c *config, n int) { c.JobConcurrency = n }), cmdServe},
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

// loadConfig reads cmd's settings: each from its flag in args if given, else from the first of
// its variables that getenv has, else its default. A bad value is an error naming the flag or the
// variable it came from; a mistake in args, which the flag package has printed, wraps errUsage,
// and -h returns flag.ErrHelp.
func loadConfig(cmd command, fs *flag.FlagSet, args []string, getenv func(string) string) (config, error) {
	given := map[string]*flagValue{}
	for i := range settings {
		s := &settings[i]
		if s.cmds&cmd == 0 || s.flag == "" {
			continue
		}
		v := &flagValue{kind: s.kind, v: s.def}
		fs.Var(v, s.flag, fmt.Sprintf("%s (default %s; env %s)", s.usage, shown(s.def), strings.Join(s.env, " or ")))
		given[s.env[0]] = v
	}
	fs.Usage = func() { printUsage(fs, cmd) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	c := config{from: map[string]string{}}
	for _, s := range settings {
		if s.cmds&cmd == 0 {
			continue
		}
		v, from := s.def, "the default of "+s.env[0]
		if f := given[s.env[0]]; f != nil && f.set {
			v, from = f.v, "-"+s.flag
		} else {
			for _, name := range s.env {
				if e := getenv(name); e != "" {
					v, from = e, name
					break
				}
			}
		}
		if err := s.set(&c, v); err != nil {
			return config{}, fmt.Errorf("%s: %w", from, err)
		}
		c.from[s.env[0]] = from
	}
	if c.AttemptTimeout > c.RequestTimeout {
		c.AttemptTimeout = c.RequestTimeout
	}
	// A callback is never sent unsigned: hosts to call without the key to sign is a mistake to
	// say at start, not at the first job's end.
	if len(c.CallbackHosts) > 0 && c.WebhookSecret.IsZero() {
		return config{}, fmt.Errorf("%s is set but OCR_WEBHOOK_SECRET is not: job callbacks must be signed; set it (whsec_…) or unset the hosts", c.from["OCR_CALLBACK_HOSTS"])
	}
	return c, nil
}

func shown(def string) string {
	if def == "" {
		return "unset"
	}
	return def
}

// flagValue is a setting's flag: it keeps the value given, which loadConfig checks and stores
// with the rest, and names its kind for -h.
type flagValue struct {
	kind string
	v    string
	set  bool
}

func (f *flagValue) String() string {
	if f == nil {
		return ""
	}
	return f.v
}

func (f *flagValue) Set(v string) error { f.v, f.set = v, true; return nil }

// Type is what -h shows after the flag's name: duration, bytes, integer …
func (f *flagValue) Type() string { return f.kind }

// printUsage writes cmd's -h: its usage line, its flags with the kind of value each takes, and
// the settings it reads from the environment only.
func printUsage(fs *flag.FlagSet, cmd command) {
	w := fs.Output()
	fmt.Fprint(w, commandUsage[fs.Name()])
	printFlags(fs)
	first := true
	for _, s := range settings {
		if s.cmds&cmd == 0 || s.flag != "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nenvironment only:")
			first = false
		}
		def := ""
		if s.def != "" {
			def = " (default " + s.def + ")"
		}
		fmt.Fprintf(w, "  %s %s\n    \t%s%s\n", strings.Join(s.env, " or "), s.kind, s.usage, def)
	}
}

// printFlags lists fs's flags, each with the kind of value it takes: a flagValue's Type, or what
// the flag package makes of the flag (a backquoted word in its usage, or its type).
func printFlags(fs *flag.FlagSet) {
	w := fs.Output()
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if t, ok := f.Value.(interface{ Type() string }); ok {
			kind = t.Type()
		}
		if kind != "" { // a bool flag takes none
			kind = " " + kind
		}
		fmt.Fprintf(w, "  -%s%s\n    \t%s\n", f.Name, kind, usage)
	})
}

// commandUsage is each command's usage line and what it does, for its -h.
var commandUsage = map[string]string{
	"serve": `usage: ocrdraft serve [flags]

Run the HTTP API until SIGTERM or SIGINT. Settings come from the environment (OCR_*); a flag
overrides its variable.
`,
	"extract": `usage: ocrdraft extract [flags] IMAGE...

Send the images of one report (one per page, in order) to the model and print the result as
POST /v1/extract answers it, or its problem document and exit 1. Settings come from the
environment (OCR_*); a flag overrides its variable. With -server URL, run the report as a job on
that ocrdraft server instead (its bearer key from OCR_SERVER_API_KEY) and wait for it. On a
terminal, stderr shows the pages read (-q: not).
`,
	"check": `usage: ocrdraft check [flags]

Try the configured model endpoint once (OCR_MODEL_BASE_URL, OCR_MODEL_API_KEY, OCR_MODEL) and say,
one line each, whether it is reachable, the key accepted and the model known; exit 0 when all
three are, else 1; the second read's model too, when OCR_VERIFY_MODEL or OCR_VERIFY_BASE_URL is
set. It sends no image and nothing from any report.
`,
	"healthcheck": `usage: ocrdraft healthcheck [flags]

Ask the server on the listen address (OCR_LISTEN_ADDR) for GET /healthz, over loopback when it
listens on every address: exit 0 when it answers 200, else 1. For Docker's HEALTHCHECK, in an
image without a shell or curl.
`,
}

// address checks a listen address: host:port, the host optional (every address). optional lets
// it be empty.
func address(optional bool, set func(*config, string)) func(*config, string) error {
	return func(c *config, v string) error {
		if v == "" && optional {
			set(c, v)
			return nil
		}
		_, port, err := net.SplitHostPort(v)
		if err != nil || port == "" {
			return fmt.Errorf("want host:port such as :8080 or 127.0.0.1:8080, got %q", v)
		}
		set(c, v)
		return nil
	}
}

// notConfigured is the detail of model_not_configured: what to set.
const notConfigured = "no model is configured: set OCR_MODEL (and OCR_MODEL_BASE_URL and OCR_MODEL_API_KEY for your endpoint) and restart"

func environ(name string) string { return os.Getenv(name) }
