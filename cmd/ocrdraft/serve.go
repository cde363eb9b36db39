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
	"net/http"
	"os"
	"reflect"
	"time"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/server"
	"github.com/ocrdraft/ocrdraft/vision"
)

// The wiring checks that the pieces fit the interfaces their users own.
var (
	_ extract.Model    = (*vision.Client)(nil)
	_ extract.Preparer = (*intake.Preparer)(nil)
	_ server.Extractor = (*extract.Service)(nil)
)

// runServe runs the HTTP API until ctx ends (SIGINT or SIGTERM), then drains in-flight requests
// for up to the shutdown timeout.
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

	svc, err := service(cfg)
	if err != nil {
		return err
	}
	var ext server.Extractor
	if svc != nil {
		ext = svc
		log.Info("model configured", "model", cfg.Model, "outputMode", cfg.OutputMode)
	} else {
		log.Warn("no model configured: /v1/extract answers 503 model_not_configured; set OCR_MODEL, OCR_MODEL_BASE_URL and OCR_MODEL_API_KEY")
	}
	srv := server.New(server.Config{
		Extractor:       ext,
		NotConfigured:   notConfigured,
		MaxImageBytes:   cfg.MaxImageBytes,
		MaxRequestBytes: cfg.MaxRequestBytes,
		MaxPages:        cfg.MaxPages,
		RequestTimeout:  cfg.RequestTimeout,
		Spec:            ocrdraft.Spec,
		Logger:          log,
	})

	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (OCR_LISTEN_ADDR): %w", cfg.ListenAddr, err)
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
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
		hs.Close() // cancel what did not finish in time
		log.Warn("shutdown timeout passed; in-flight requests were cancelled")
	}
	log.Info("stopped")
	return nil
}

// service builds the extraction pipeline, or nil when no model is configured.
func service(cfg config) (*extract.Service, error) {
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
	return extract.New(extract.Config{
		Model:       client,
		Prep:        intake.New(intake.Limits{MaxBytes: cfg.MaxImageBytes, MaxPixels: cfg.MaxPixels, MaxEdge: cfg.MaxEdge}),
		Builder:     draft.New(),
		ModelName:   cfg.Model,
		OutputMode:  cfg.OutputMode,
		MaxAttempts: cfg.MaxAttempts,
		Concurrency: cfg.PageConcurrency,
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
		return writeProblem(stdout, tooMany(cfg.MaxPages))
	}
	svc, err := service(cfg)
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
	res, err := svc.Extract(ctx, images)
	if err != nil {
		return writeProblem(stdout, err)
	}
	return writeJSON(stdout, res, true)
}
