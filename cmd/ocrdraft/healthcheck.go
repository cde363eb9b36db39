package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/version"
)

// runHealthcheck asks the server on the configured listen address for GET /healthz: exit 0 on
// 200, 1 otherwise. It is Docker's HEALTHCHECK for an image that has no shell and no curl.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "longest wait for the answer (default 2s)")
	cfg, err := loadConfig(cmdHealthcheck, fs, args, getenv)
	if err != nil {
		return configErr("healthcheck", err, stderr)
	}
	if err := noArgs(fs, stderr); err != nil {
		return err
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "ocrdraft healthcheck: -timeout: want a duration above 0, got %v\n", *timeout)
		return errUsage
	}
	url, err := healthURL(cfg.ListenAddr)
	if err != nil {
		fmt.Fprintf(stderr, "ocrdraft healthcheck: %s: %v\n", cfg.from["OCR_LISTEN_ADDR"], err)
		return errUsage
	}
	// No proxy (HTTP_PROXY names the way out, not to ourselves) and no connection kept.
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "ocrdraft healthcheck: %v\n", err)
		return errFailed
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "ocrdraft healthcheck: GET %s answered %s\n", url, res.Status)
		return errFailed
	}
	fmt.Fprintf(stdout, "GET %s answered %s\n", url, res.Status)
	return nil
}

// healthURL is /healthz on the listen address, over loopback when the server listens on every
// address (":8080", "0.0.0.0:8080", "[::]:8080").
func healthURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	if port == "0" {
		return "", fmt.Errorf("the listen address %q has no fixed port to ask", listen)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// runVersion prints the running build: one line, or with -json what GET /version answers.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the JSON that GET /version answers")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: ocrdraft version [-json]\n\nPrint the build: its version, commit and Go toolchain, from what the toolchain recorded.\n")
		printFlags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if err := noArgs(fs, stderr); err != nil {
		return err
	}
	v := version.Read()
	if *asJSON {
		return writeJSON(stdout, v, false)
	}
	_, err := fmt.Fprintln(stdout, v)
	return err
}
