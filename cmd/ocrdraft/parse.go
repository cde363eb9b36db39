package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/problem"
)

// runParse reads captured replies and prints, per file, the result or the problem document the
// HTTP API would return. One file prints indented JSON; several print one compact document per
// line, in order. It fails (exit 1) if any file failed.
func runParse(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	finish := fs.String("finish-reason", "stop", `the model's finish reason; "length" means the reply was cut at the token limit`)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ocrdraft parse [-finish-reason length] FILE... (- reads stdin)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	b := draft.New()
	failed := false
	for _, name := range fs.Args() {
		reply, err := readFile(name, stdin)
		if err != nil {
			fmt.Fprintln(stderr, "ocrdraft:", err)
			return errUsage
		}
		var doc any
		out, err := b.FromReply(string(reply), *finish == "length")
		if err != nil {
			doc = problem.From(err)
			failed = true
		} else {
			doc = out.Result
		}
		if err := writeJSON(stdout, doc, fs.NArg() == 1); err != nil {
			return err
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

func readFile(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// writeJSON writes v without HTML escaping, so Chinese text and <0.5 stay readable.
func writeJSON(w io.Writer, v any, indent bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeProblem prints err as the problem document the HTTP API would return, and fails.
func writeProblem(w io.Writer, err error) error {
	if werr := writeJSON(w, problem.From(err), true); werr != nil {
		return werr
	}
	return errFailed
}
