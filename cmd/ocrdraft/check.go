package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ocrdraft/ocrdraft/vision"
)

// checkTimeout bounds the whole check: at most two small requests to the endpoint.
const checkTimeout = 30 * time.Second

// runCheck tries the configured model endpoint once and prints one line per result: reachable,
// key accepted, model known. Exit 1 when any is not, or the configuration itself is wrong.
func runCheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, err := loadConfig(cmdCheck, fs, args, getenv)
	if err != nil {
		return configErr("check", err, stderr)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ocrdraft check: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if cfg.Model == "" {
		fmt.Fprintln(stdout, "FAIL model configured: set OCR_MODEL (and OCR_MODEL_BASE_URL and OCR_MODEL_API_KEY)")
		return errFailed
	}
	c, err := vision.New(visionConfig(cfg))
	if err != nil {
		fmt.Fprintln(stdout, "FAIL configuration:", err)
		return errFailed
	}
	fmt.Fprintf(stdout, "endpoint %s, model %s\n", vision.Endpoint(cfg.BaseURL), cfg.Model)
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	failed := false
	for _, r := range c.Check(ctx) {
		mark := "ok  "
		if !r.OK {
			mark, failed = "FAIL", true
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", mark, r.Name, r.Message)
	}
	if failed {
		return errFailed
	}
	return nil
}
