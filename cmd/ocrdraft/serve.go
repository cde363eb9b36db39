package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/metrics"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/internal/version"
	"github.com/ocrdraft/ocrdraft/internal/webhook"
	"github.com/ocrdraft/ocrdraft/jobs"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/prompt"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/vision"
	"github.com/ocrdraft/ocrdraft/vision/modelcall"
)

// The wiring checks that the pieces fit the interfaces their users own.
var (
	_ extract.Model      = (*vision.Client)(nil)
	_ extract.Model      = (*modelcall.Limiter)(nil)
	_ extract.Preparer   = (*intake.Preparer)(nil)
	_ extract.Observer   = (*metrics.Metrics)(nil)
	_ modelcall.Observer = (*metrics.Metrics)(nil)
	_ server.Extractor   = (*extract.Service)(nil)
)

// listening is where runServe serves: the API, and /metrics when it has a listener of its own
// (else "").
type listening struct{ api, metrics string }

// runServe runs the HTTP API until ctx ends (SIGINT or SIGTERM), then drains in-flight requests
// for up to the shutdown timeout and cancels the rest. A shutdown, timely or not, returns nil:
// exit 0.
func runServe(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(listening)) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, err := loadConfig(cmdServe, fs, args, getenv)
	if err != nil {
		return configErr("serve", err, stderr)
	}
	if err := noArgs(fs, stderr); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	v := version.Read()
	log.Info("starting", "version", v.Version, "revision", v.Revision, "goVersion", v.GoVersion, "modified", v.Modified)

	m := metrics.New()
	// The PDF and HEIC decoders' WebAssembly runtime, one for the process: compiled once (at
	// the first such upload, or in the background below), kept in the cache directory if any.
	wasm := intake.NewRuntime(cfg.WasmCacheDir)
	defer wasm.Close() // its HEIC workers, and their directory when it is its own
	svc, err := service(cfg, m, log, wasm)
	if err != nil {
		return err
	}
	var ext server.Extractor
	if svc != nil {
		ext = svc
		log.Info("model configured", "endpoint", vision.Endpoint(cfg.BaseURL), "model", cfg.Model,
			"outputMode", cfg.OutputMode, "maxInFlight", cfg.MaxInFlight, "queueWait", cfg.QueueWait.String())
		if vision.KeylessDefault(visionConfig(cfg)) {
			log.Warn("OCR_MODEL_API_KEY is not set for OpenAI's own endpoint: every model call will fail with 401; set it, or OCR_MODEL_BASE_URL for a local server")
		}
		if cfg.Verify == extract.VerifyFlagged || cfg.Verify == extract.VerifyAll {
			base := cmp.Or(cfg.VerifyBaseURL, cfg.BaseURL)
			log.Info("second reads configured", "verify", string(cfg.Verify), "endpoint", vision.Endpoint(base), "model", cmp.Or(cfg.VerifyModel, cfg.Model))
		}
		if cfg.Boxes != prompt.BoxesOff {
			log.Info("model boxes asked for", "boxes", string(cfg.Boxes))
		}
	} else {
		log.Warn("no model configured: /v1/extract answers 503 model_not_configured; set OCR_MODEL, OCR_MODEL_BASE_URL and OCR_MODEL_API_KEY")
	}
	if len(cfg.APIKeys) == 0 {
		log.Warn("OCR_API_KEYS is not set: /v1/* is open to anyone who can reach this port; set it outside local development")
	} else {
		log.Info("caller authentication on", "keys", len(cfg.APIKeys))
	}
	if cfg.DebugLogReplies {
		log.Warn("!!! OCR_DEBUG_LOG_REPLIES is on: raw model replies, which are patients' health data, are written to the log at debug level. Local debugging with test images only; never in production !!!")
		if cfg.LogLevel > slog.LevelDebug {
			log.Warn("OCR_DEBUG_LOG_REPLIES has no effect unless OCR_LOG_LEVEL=debug")
		}
	}
	js, jobsOff, err := openJobs(ctx, cfg, svc, log)
	if err != nil {
		return err
	}
	// Pages being read get the shutdown timeout, beside the requests in flight; one cut short
	// goes back to the queue, for another replica or the next start.
	stopJobs := sync.OnceFunc(func() {
		if js == nil {
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		if err := js.Close(sctx); err != nil {
			log.Warn("jobs: pages still being read were stopped; they go back to the queue")
		}
	})
	defer stopJobs()
	srv := server.New(server.Config{
		Extractor:       ext,
		NotConfigured:   notConfigured,
		NoReplyExcerpts: !cfg.ReplyExcerpts,
		NoReview:        !cfg.Review,
		ReviewEmbedders: cfg.ReviewEmbedders,
		Lang:            cfg.Lang,
		MaxImageBytes:   cfg.MaxImageBytes,
		MaxRequestBytes: cfg.MaxRequestBytes,
		MaxPages:        cfg.MaxPages,
		RequestTimeout:  cfg.RequestTimeout,
		MaxInFlight:     cfg.MaxInFlight,
		QueueWait:       cfg.QueueWait,
		UploadMemory:    cfg.UploadMemory,
		ModelName:       cfg.Model,
		TextInFlight:    cfg.TextInFlight,
		TextTimeout:     cfg.TextTimeout,
		BodyIdleTimeout: cfg.BodyIdleTimeout,
		MinBodyRate:     cfg.MinBodyRate,
		DrainTimeout:    cfg.DrainTimeout,
		HeaderTimeout:   cfg.HeaderTimeout,
		IdleTimeout:     cfg.IdleTimeout,
		MaxHeaderBytes:  cfg.MaxHeaderBytes,
		APIKeys:         cfg.APIKeys,
		Spec:            ocrdraft.Spec,
		Logger:          log,
		Metrics:         m,
		Version:         v,
		// With a listener of its own, /metrics is served there alone, never to the API's callers.
		MetricsElsewhere: cfg.MetricsAddr != "",

		// /v1/jobs, when OCR_JOBS_KEY is set.
		Jobs:              jobsOrNil(js),
		JobsNotConfigured: jobsOff,
	})

	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (%s): %w", cfg.ListenAddr, cfg.from["OCR_LISTEN_ADDR"], err)
	}
	var mln net.Listener
	if cfg.MetricsAddr != "" {
		if mln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("listen for /metrics on %s (%s): %w", cfg.MetricsAddr, cfg.from["OCR_METRICS_ADDR"], err)
		}
	}
	// Every request's context derives from base, so that requests still running when the
	// shutdown timeout passes are cancelled (their model calls with them), not just cut off;
	// the cause tells them from a caller's going away (problem.FromContext).
	base, cancelAll := context.WithCancelCause(context.Background())
	defer cancelAll(nil)
	hs := srv.HTTPServer()
	hs.BaseContext = func(net.Listener) context.Context { return base }
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ln) }()
	at := listening{api: ln.Addr().String()}
	var ms *http.Server
	if mln != nil {
		ms = metricsServer(cfg, m, log)
		go func() { errc <- ms.Serve(mln) }()
		at.metrics = mln.Addr().String()
		log.Info("metrics listening", "addr", at.metrics)
	}
	// Only once listening: a start that fails spends nothing on the decoders.
	if cfg.WarmDecoders {
		go func() {
			start := time.Now()
			if err := wasm.Start(); err != nil {
				log.Warn("the PDF and HEIC decoders did not compile; PDF and HEIC uploads will fail", "err", err)
				return
			}
			if err := wasm.HEICInProcess(); err != nil { // a worker is tried again a minute later
				log.Warn("no HEIC worker process could be started: HEICs are decoded in this process, bounded by their pixels but not by their CPU time, until one starts", "err", err)
			}
			log.Info("PDF and HEIC decoders ready", "ms", time.Since(start).Milliseconds(), "cacheDir", cfg.WasmCacheDir)
		}()
	}
	log.Info("listening", "addr", at.api, "version", v.Version)
	if ready != nil {
		ready(at)
	}

	select {
	case err := <-errc:
		hs.Close()
		if ms != nil {
			ms.Close()
		}
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	jobsStopped := make(chan struct{})
	go func() { defer close(jobsStopped); stopJobs() }()
	defer func() { <-jobsStopped }()
	if err := hs.Shutdown(sctx); err != nil {
		cancelAll(problem.Shutdown) // cancel what did not finish in time
		hs.Close()
		log.Warn("shutdown timeout passed; in-flight requests were cancelled")
	}
	if ms != nil { // scraped until the API has drained
		ms.Close()
	}
	log.Info("stopped")
	return nil
}

// openJobs opens the jobs' queue when OCR_JOBS_KEY and a model are set, and else says why not
// (the detail of jobs_not_configured).
func openJobs(ctx context.Context, cfg config, svc *extract.Service, log *slog.Logger) (*jobs.Service, string, error) {
	if cfg.JobsKey == nil {
		log.Info("jobs off: /v1/jobs answers 503 jobs_not_configured; set OCR_JOBS_KEY (openssl rand -base64 32) to read long documents in the background")
		return nil, "the service has no OCR_JOBS_KEY to encrypt what a job stores", nil
	}
	if svc == nil {
		return nil, notConfigured, nil
	}
	dir := cfg.JobsDir
	if dir == "" && cfg.JobsDatabaseURL == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, "", fmt.Errorf("jobs: no OCR_JOBS_DIR and no user cache directory (%v): set OCR_JOBS_DIR", err)
		}
		dir = filepath.Join(cache, "ocrdraft", "jobs")
	}
	jcfg := jobs.Config{
		Reader: svc, Dir: dir, DatabaseURL: cfg.JobsDatabaseURL, Key: cfg.JobsKey,
		Retention: cfg.JobsRetention, MaxPages: cfg.JobMaxPages, Concurrency: cfg.JobConcurrency,
		// A page's reading has a request's deadline; River takes a page running three times
		// that long for the work of a process that died, and runs it again.
		AttemptTimeout: cfg.RequestTimeout, Lang: cfg.Lang, Logger: log,
		ReplicaTimeout: cfg.JobsReplicaWait, // on Postgres, a killed replica's pages sooner
		AllowCallback:  allowCallback(cfg.CallbackHosts),
	}
	if len(cfg.CallbackHosts) > 0 { // not a nil *callbackTry in the interface
		sender := webhook.NewSender(webhook.Config{Secret: cfg.WebhookSecret, Hosts: cfg.CallbackHosts})
		jcfg.Notifier, jcfg.CallbackBackoff = &callbackTry{sender}, sender.Backoff
	}
	js, err := jobs.Open(ctx, jcfg)
	if err != nil {
		return nil, "", err
	}
	where := "sqlite"
	if cfg.JobsDatabaseURL != "" {
		where = "postgres"
	}
	log.Info("jobs on", "database", where, "dir", dir, "maxPages", js.MaxPages(), "concurrency", cfg.JobConcurrency, "retention", cfg.JobsRetention.String())
	return js, "", nil
}

// allowCallback is the jobs' check of a callbackUrl against OCR_CALLBACK_HOSTS; nil, every
// callbackUrl is refused, when none is listed.
func allowCallback(hosts []string) func(string) error {
	if len(hosts) == 0 {
		return nil
	}
	return func(u string) error { return webhook.Allowed(u, hosts) }
}

// callbackTry sends the jobs' callbacks, signed with OCR_WEBHOOK_SECRET, one try of a
// webhook.Sender per River attempt (River's backoff spaces them, and keeps the schedule across a
// restart); its failure is marked refused (jobs.ErrCallbackRefused) when another try would not
// mend it. Hosts are listed only with a secret (loadConfig refuses them without).
type callbackTry struct{ s *webhook.Sender }

func (t *callbackTry) Send(ctx context.Context, url, id string, body []byte) error {
	err := t.s.Attempt(ctx, url, id, body)
	var fail *webhook.Error
	if err != nil && (!errors.As(err, &fail) || !fail.Retry) {
		return fmt.Errorf("%w: %w", jobs.ErrCallbackRefused, err)
	}
	return err
}

// jobsOrNil keeps a nil *jobs.Service a nil server.Jobs.
func jobsOrNil(js *jobs.Service) server.Jobs {
	if js == nil {
		return nil
	}
	return js
}

// metricsServer serves /metrics alone, for OCR_METRICS_ADDR, under the API's connection limits.
func metricsServer(cfg config, m *metrics.Metrics, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: cfg.HeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// configErr is what a command returns when loadConfig fails: nil after -h, else a usage error
// (exit 2), printed here unless the flag package has printed it.
func configErr(name string, err error, stderr io.Writer) error {
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil
	case errors.Is(err, errUsage):
		return errUsage
	}
	fmt.Fprintf(stderr, "ocrdraft %s: %v\n", name, err)
	return errUsage
}

// noArgs refuses arguments after the flags of a command that takes none: "serve extra-arg" is a
// mistake, not something to start anyway.
func noArgs(fs *flag.FlagSet, stderr io.Writer) error {
	if fs.NArg() == 0 {
		return nil
	}
	fmt.Fprintf(stderr, "ocrdraft %s: unexpected argument %q: it takes flags only (ocrdraft %s -h lists them)\n", fs.Name(), fs.Arg(0), fs.Name())
	return errUsage
}

// service builds the extraction pipeline, or nil when no model is configured. m may be nil (the
// CLI keeps no metrics); wasm runs the PDF and HEIC decoders.
func service(cfg config, m *metrics.Metrics, log *slog.Logger, wasm *intake.Runtime) (*extract.Service, error) {
	if cfg.Model == "" {
		return nil, nil
	}
	vc := visionConfig(cfg)
	if cfg.OutputMode == vision.ModeJSONSchema {
		s, err := json.Marshal(schema.Generate(reflect.TypeFor[schema.OcrDraft](), schema.Strict))
		if err != nil {
			return nil, err
		}
		vc.Schema = s
	}
	client, err := vision.New(vc)
	if err != nil {
		return nil, fmt.Errorf("model configuration: %w", err)
	}
	// Every model call passes the process-wide limit; metrics and the opt-in reply log hang on
	// the same decorator.
	mo := modelcall.Options{MaxInFlight: cfg.MaxInFlight, QueueWait: cfg.QueueWait, LogReplies: cfg.DebugLogReplies, Log: log}
	var obs extract.Observer
	if m != nil {
		mo.Observer, obs = m, m
	}
	model := modelcall.New(client, mo)
	verify, err := verifier(cfg, vc, model)
	if err != nil {
		return nil, err
	}
	multiple := 0
	if cfg.Boxes == prompt.BoxesPixels {
		multiple = 28 // Qwen2.5-VL's patch: the model's pixels are then the image's
	}
	return extract.New(extract.Config{
		Model:       model,
		Verify:      verify,
		Boxes:       cfg.Boxes,
		Observer:    obs,
		Prep:        intake.New(intake.Limits{MaxBytes: cfg.MaxImageBytes, MaxPixels: cfg.MaxPixels, MaxEdge: cfg.MaxEdge, DecodeMemory: cfg.DecodeMemory, SideMultiple: multiple}, wasm),
		MaxPages:    cfg.MaxPages,
		Builder:     draft.New(lexicon.Default()),
		ModelName:   cfg.Model,
		OutputMode:  cfg.OutputMode,
		MaxAttempts: cfg.MaxAttempts,
		Concurrency: cfg.PageConcurrency,
		RetryMemory: cfg.RetryMemory,
	}), nil
}

// verifier is the second read's configuration (OCR_VERIFY): its own client, for its own model,
// endpoint and key when they are set, and never in json_schema mode, which would hold its reply
// to the draft's schema that its prompt does not ask for. Its calls pass the same limit as the
// first read's (first.With), so OCR_MAX_INFLIGHT bounds them together.
func verifier(cfg config, vc vision.Config, first *modelcall.Limiter) (extract.Verify, error) {
	v := extract.Verify{Mode: cfg.Verify}
	if cfg.Verify == "" || cfg.Verify == extract.VerifyOff {
		return v, nil
	}
	vc = verifyConfig(cfg, vc)
	c, err := vision.New(vc)
	if err != nil {
		return v, fmt.Errorf("second-read model configuration: %w", err)
	}
	v.Model, v.ModelName = first.With(c), vc.Model
	return v, nil
}

// verifyConfig is the second read's client configuration, from the first's, vc: its model,
// endpoint and key where they are set; never json_schema.
func verifyConfig(cfg config, vc vision.Config) vision.Config {
	vc.Schema = nil
	if vc.OutputMode == vision.ModeJSONSchema {
		vc.OutputMode = vision.ModeJSONObject
	}
	if cfg.VerifyModel != "" {
		vc.Model = cfg.VerifyModel
	}
	if cfg.VerifyBaseURL != "" {
		vc.BaseURL, vc.APIKey = cfg.VerifyBaseURL, cfg.VerifyAPIKey // the first key stays with its endpoint
	} else if cfg.VerifyAPIKey != "" {
		vc.APIKey = cfg.VerifyAPIKey
	}
	return vc
}

// visionConfig is the model client's configuration, for serve, extract and check alike.
func visionConfig(cfg config) vision.Config {
	return vision.Config{
		BaseURL:        cfg.BaseURL,
		APIKey:         cfg.APIKey,
		Model:          cfg.Model,
		OutputMode:     cfg.OutputMode,
		MaxTokens:      cfg.MaxTokens,
		Temperature:    float32(cfg.Temperature),
		Tries:          cfg.ModelTries,
		AttemptTimeout: cfg.AttemptTimeout,
		IdleConns:      cfg.MaxInFlight,
	}
}

// runExtract does from the command line what POST /v1/extract does: the images of one report in,
// the result JSON out, or the problem document and exit 1.
func runExtract(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quiet := fs.Bool("q", false, "show no progress (it is shown on stderr only when stderr is a terminal)")
	server := fs.String("server", "", "run the report as a job on the ocrdraft server at this `URL` (POST /v1/jobs) and wait for it, instead of calling the model from here; Ctrl-C deletes the job")
	keyEnv := fs.String("key-env", "", "the environment `variable` that holds -server's bearer key (default OCR_SERVER_API_KEY); the key itself is never a flag, which a process list would show")
	cfg, err := loadConfig(cmdExtract, fs, args, getenv)
	if err != nil {
		return configErr("extract", err, stderr)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: ocrdraft extract [flags] IMAGE... (one image per page, in order; ocrdraft extract -h lists the flags)")
		return errUsage
	}
	prog := newProgressLine(stderr, *quiet)
	if *server != "" {
		return runRemote(ctx, cfg, *server, *keyEnv, fs.Args(), getenv, stdout, stderr, prog)
	}
	if *keyEnv != "" {
		fmt.Fprintln(stderr, "ocrdraft extract: -key-env is for -server")
		return errUsage
	}
	// One report at a time: its page concurrency bounds the model calls, which never queue.
	cfg.MaxInFlight = cfg.PageConcurrency
	if cfg.Verify == extract.VerifyAll {
		cfg.MaxInFlight *= 2 // a page's two reads at once
	}
	if fs.NArg() > cfg.MaxPages {
		return writeProblem(stdout, extract.TooManyPages(cfg.MaxPages))
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	// A PDF or HEIC loads the compiled decoder from the cache directory, where one run of serve
	// or extract left it, instead of compiling it again.
	wasm := intake.NewRuntime(cfg.WasmCacheDir)
	defer wasm.Close()
	svc, err := service(cfg, nil, log, wasm)
	if err != nil {
		return err
	}
	if svc == nil {
		fmt.Fprintln(stderr, "ocrdraft extract:", notConfigured)
		return errUsage
	}
	// One owned upload per file, counted in no memory (the process reads one report): Extract
	// takes them over and closes them, as the server's.
	var uploads []*budget.Bytes
	for _, name := range fs.Args() {
		b, err := readUpload(name, cfg.MaxImageBytes)
		if err != nil {
			if _, ok := err.(readError); ok {
				return err
			}
			return writeProblem(stdout, err)
		}
		uploads = append(uploads, budget.NewBytes(b, nil, 0))
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
	defer cancel()
	res, err := svc.Extract(extract.WithProgress(ctx, prog.pages), uploads, check.Context{})
	prog.end()
	if err != nil {
		return writeProblem(stdout, err)
	}
	res.Warnings = msg.Localize(res.Warnings, cfg.Lang)
	return writeJSON(stdout, res, true)
}

// readError is a file that could not be opened: said on stderr as it is, not as a problem.
type readError struct{ error }

// readUpload reads one file of a report, bounded by max bytes (a larger file is the problem
// image_too_large).
func readUpload(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, readError{err}
	}
	defer f.Close()
	return intake.ReadAll(f, max)
}

// runRemote is extract -server: the files as a job on the server, waited for.
func runRemote(ctx context.Context, cfg config, server, keyEnv string, names []string, getenv func(string) string, stdout, stderr io.Writer, prog *progressLine) error {
	base, err := serverURL(server)
	if err != nil {
		fmt.Fprintln(stderr, "ocrdraft extract:", err)
		return errUsage
	}
	key := cfg.ServerAPIKey
	if keyEnv != "" {
		if key = getenv(keyEnv); key == "" {
			fmt.Fprintf(stderr, "ocrdraft extract: -key-env %s: the variable is not set\n", keyEnv)
			return errUsage
		}
	}
	// Every file is read before anything is sent; the server bounds the pages (its
	// OCR_JOB_MAX_PAGES), not OCR_MAX_PAGES, which is for one synchronous request.
	files := make([][]byte, len(names))
	for i, name := range names {
		if files[i], err = readUpload(name, cfg.MaxImageBytes); err != nil {
			if _, ok := err.(readError); ok {
				return err
			}
			return writeProblem(stdout, err)
		}
	}
	lang := "zh-CN"
	if cfg.Lang == msg.En {
		lang = "en"
	}
	r := &remote{
		base: base, key: key, lang: lang, uploadTimeout: cfg.RequestTimeout,
		// Redirects are not followed: the bearer key goes to the server named, and nowhere else.
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		stdout: stdout, prog: prog,
	}
	return r.run(ctx, files)
}
