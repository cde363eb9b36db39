package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"reflect"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/metrics"
	"github.com/ocrdraft/ocrdraft/internal/modelcall"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/vision"
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

// runServe runs the HTTP API until ctx ends (SIGINT or SIGTERM), then drains in-flight requests
// for up to the shutdown timeout and cancels the rest. A shutdown, timely or not, returns nil:
// exit 0.
func runServe(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		fmt.Fprintln(stderr, "ocrdraft serve:", err)
		return errUsage
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))

	m := metrics.New()
	svc, err := service(cfg, m, log)
	if err != nil {
		return err
	}
	var ext server.Extractor
	if svc != nil {
		ext = svc
		log.Info("model configured", "model", cfg.Model, "outputMode", cfg.OutputMode,
			"maxInFlight", cfg.MaxInFlight, "queueWait", cfg.QueueWait.String())
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
	srv := server.New(server.Config{
		Extractor:       ext,
		NotConfigured:   notConfigured,
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
		DrainTimeout:    cfg.DrainTimeout,
		HeaderTimeout:   cfg.HeaderTimeout,
		IdleTimeout:     cfg.IdleTimeout,
		MaxHeaderBytes:  cfg.MaxHeaderBytes,
		APIKeys:         cfg.APIKeys,
		Spec:            ocrdraft.Spec,
		Logger:          log,
		Metrics:         m,
	})

	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (OCR_LISTEN_ADDR): %w", cfg.ListenAddr, err)
	}
	// Every request's context derives from base, so that requests still running when the
	// shutdown timeout passes are cancelled (their model calls with them), not just cut off.
	base, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	hs := srv.HTTPServer()
	hs.BaseContext = func(net.Listener) context.Context { return base }
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String())
	if ready != nil {
		ready(ln.Addr().String())
	}

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		cancelAll() // cancel what did not finish in time
		hs.Close()
		log.Warn("shutdown timeout passed; in-flight requests were cancelled")
	}
	log.Info("stopped")
	return nil
}

// service builds the extraction pipeline, or nil when no model is configured. m may be nil (the
// CLI keeps no metrics).
func service(cfg config, m *metrics.Metrics, log *slog.Logger) (*extract.Service, error) {
	if cfg.Model == "" {
		return nil, nil
	}
	vc := vision.Config{
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
	return extract.New(extract.Config{
		Model:       modelcall.New(client, mo),
		Observer:    obs,
		Prep:        intake.New(intake.Limits{MaxBytes: cfg.MaxImageBytes, MaxPixels: cfg.MaxPixels, MaxEdge: cfg.MaxEdge}),
		Builder:     draft.New(),
		ModelName:   cfg.Model,
		OutputMode:  cfg.OutputMode,
		MaxAttempts: cfg.MaxAttempts,
		Concurrency: cfg.PageConcurrency,
		RetryMemory: cfg.RetryMemory,
	}), nil
}

// runExtract does from the command line what POST /v1/extract does: the images of one report in,
// the result JSON out, or the problem document and exit 1.
func runExtract(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		fmt.Fprintln(stderr, "ocrdraft extract:", err)
		return errUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: ocrdraft extract [flags] IMAGE... (one image per page, in order)")
		return errUsage
	}
	if fs.NArg() > cfg.MaxPages {
		return writeProblem(stdout, extract.TooManyPages(cfg.MaxPages))
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	svc, err := service(cfg, nil, log)
	if err != nil {
		return err
	}
	if svc == nil {
		fmt.Fprintln(stderr, "ocrdraft extract:", notConfigured)
		return errUsage
	}
	var images [][]byte
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		b, err := intake.ReadAll(f, cfg.MaxImageBytes)
		f.Close()
		if err != nil {
			return writeProblem(stdout, err)
		}
		images = append(images, b)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
	defer cancel()
	res, err := svc.Extract(ctx, images, nil)
	if err != nil {
		return writeProblem(stdout, err)
	}
	return writeJSON(stdout, res, true)
}
