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
	failed := report(ctx, c, "", stdout)
	if cfg.VerifyModel != "" || cfg.VerifyBaseURL != "" {
		// The second read's model (OCR_VERIFY_MODEL, OCR_VERIFY_BASE_URL), which a typo would
		// leave every page unverified.
		vc := verifyConfig(cfg, visionConfig(cfg))
		v, err := vision.New(vc)
		if err != nil {
			fmt.Fprintln(stdout, "FAIL second read: configuration:", err)
			return errFailed
		}
		fmt.Fprintf(stdout, "second read: endpoint %s, model %s\n", vision.Endpoint(vc.BaseURL), vc.Model)
		failed = report(ctx, v, "second read: ", stdout) || failed
	}
	if failed {
		return errFailed
	}
	return nil
}

// report prints c's checks, one line each, and reports whether one failed.
func report(ctx context.Context, c *vision.Client, prefix string, stdout io.Writer) bool {
	failed := false
	for _, r := range c.Check(ctx) {
		mark := "ok  "
		if !r.OK {
			mark, failed = "FAIL", true
		}
		fmt.Fprintf(stdout, "%s %s%s: %s\n", mark, prefix, r.Name, r.Message)
	}
	return failed
}
