package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/draft"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/lexicon"
	"github.com/ocrdraft/ocrdraft/problem"
)

// runParse reads captured replies and prints, per file, the result or the problem document the
// HTTP API would return. One file prints indented JSON; several print one compact document per
// line, in order. It fails (exit 1) if any file failed.
func runParse(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	finish := finishReason("stop")
	lang := langFlag{tag: msg.Default, lang: msg.Zh}
	if v := getenv("OCR_LANG"); v != "" {
		if err := lang.Set(v); err != nil {
			fmt.Fprintf(stderr, "ocrdraft parse: OCR_LANG: %v\n", err)
			return errUsage
		}
	}
	fs.Var(&lang, "lang", "language of warnings' messages: zh-CN (zh, zh-TW …) or en (default OCR_LANG, else zh-CN)")
	var who sexFlag
	fs.Var(&who, "sex", "the patient's sex, male or female, for the checks only: a printed range that differs for men and women then gives this sex's bounds (default none: such bounds are null)")
	fs.Var(&finish, "finish-reason", "the model's finish reason: "+strings.Join(finishReasons, ", ")+" or empty; length means the reply was cut at the token limit (default stop)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: ocrdraft parse [flags] FILE...

Read captured model replies (- reads stdin) into drafts and check them, as POST /v1/parse does,
without a model call. One file prints indented JSON; several print one line each, in order. Exit 1 if any failed.
`)
		printFlags(fs)
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
	// Every file is read, and checked to be text, before any is parsed: a mistake in the
	// arguments prints no half of the output.
	replies := make([][]byte, fs.NArg())
	for i, name := range fs.Args() {
		reply, err := readFile(name, stdin)
		if err == nil {
			err = notReply(reply)
		}
		if err != nil {
			fmt.Fprintf(stderr, "ocrdraft parse: %s: %v\n", name, err)
			return errUsage
		}
		replies[i] = reply
	}
	b := draft.New(lexicon.Default())
	failed := false
	for _, reply := range replies {
		var doc any
		out, err := b.FromReply(string(reply), finish == "length")
		if err != nil {
			doc = problem.From(err)
			failed = true
		} else {
			out.Warnings = append(out.Warnings, check.Run(b.Lexicon(), &out.Draft, check.Context{Sex: check.Sex(who)})...)
			out.Warnings = msg.Localize(out.Warnings, lang.lang)
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

// sexFlag is -sex: male, female or empty.
type sexFlag string

func (f *sexFlag) String() string { return string(*f) }

func (f *sexFlag) Set(v string) error {
	sx, ok := check.ParseSex(v)
	if !ok {
		return errors.New("want male, female or empty")
	}
	*f = sexFlag(sx)
	return nil
}

func (f *sexFlag) Type() string { return "sex" }

// langFlag is -lang: a tag msg.Parse accepts, kept as written for -h.
type langFlag struct{ tag, lang string }

func (f *langFlag) String() string { return f.tag }

func (f *langFlag) Set(v string) error {
	l, err := msg.Parse(v)
	if err != nil {
		return err
	}
	f.tag, f.lang = v, l
	return nil
}

func (f *langFlag) Type() string { return "language" }

// finishReasons are the finish reasons an OpenAI-compatible endpoint reports.
var finishReasons = []string{"stop", "length", "content_filter", "tool_calls", "function_call"}

// finishReason is -finish-reason: one of finishReasons, or empty (an endpoint that reports none).
type finishReason string

func (f *finishReason) String() string { return string(*f) }

func (f *finishReason) Set(v string) error {
	if v != "" && !slices.Contains(finishReasons, v) {
		return fmt.Errorf("want %s or empty", strings.Join(finishReasons, ", "))
	}
	*f = finishReason(v)
	return nil
}

func (f *finishReason) Type() string { return "reason" }

// notReply tells a file that cannot be a captured reply: an image (meant for extract), or
// another binary format intake recognises.
func notReply(b []byte) error {
	kind, ok := intake.Sniff(b)
	switch {
	case ok && kind == "pdf":
		return errors.New("this is a pdf file, not a model's reply: use ocrdraft extract")
	case ok || strings.HasPrefix(http.DetectContentType(b), "image/"):
		return errors.New("this is an image, not a model's reply: use ocrdraft extract")
	case kind != "":
		return fmt.Errorf("this is a %s file, not a model's reply", kind)
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
