// Command ocrdraft turns photos of lab reports into drafts for a person to confirm.
//
//	ocrdraft serve [flags]               run the HTTP API
//	ocrdraft parse [flags] FILE...       read captured model replies (- for stdin)
//	ocrdraft extract [flags] IMAGE...    send report images to the model (or, with -server, a server's jobs API), print the draft
//	ocrdraft check                       try the model endpoint: reachable, key, model
//	ocrdraft healthcheck [flags]         ask the running server's /healthz (Docker's HEALTHCHECK)
//	ocrdraft version                     print the build
//
// Configuration comes from the environment (OCR_*); flags override it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage marks a command-line mistake: exit 2, as the flag package does.
var errUsage = errors.New("usage")

// errFailed marks a run that printed its failure as a problem document: exit 1, nothing more to say.
var errFailed = errors.New("failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		os.Exit(2)
	case errors.Is(err, errFailed):
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "ocrdraft:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  ocrdraft serve [flags]                run the HTTP API (configuration: OCR_* environment variables)
  ocrdraft parse [flags] FILE...        read captured model replies; - reads stdin
  ocrdraft extract [flags] IMAGE...     send report images to the model (-server URL: as a job to a server) and print the draft
  ocrdraft check [flags]                try the model endpoint: reachable, key accepted, model known
  ocrdraft healthcheck [flags]          ask the running server's /healthz: exit 0 when healthy, else 1
  ocrdraft version                      print the build (also --version)
Run "ocrdraft COMMAND -h" for a command's flags and settings.
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], environ, stderr, nil)
	case "extract":
		return runExtract(ctx, args[1:], environ, stdout, stderr)
	case "parse":
		return runParse(args[1:], environ, stdin, stdout, stderr)
	case "check":
		return runCheck(ctx, args[1:], environ, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args[1:], environ, stdout, stderr)
	case "version", "-version", "--version":
		return runVersion(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "ocrdraft: unknown command %q\n%s", args[0], usage)
		return errUsage
	}
}
