package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/internal/version"
)

// flagLine is a flag as -h lists it: "  -name kind".
var flagLine = regexp.MustCompile(`(?m)^  -([a-z-]+) (\S+)$`)

// boolLine is a bool flag as -h lists it, without a kind: "  -name".
var boolLine = regexp.MustCompile(`(?m)^  -([a-z-]+)$`)

// envLine is an environment-only setting as -h lists it: "  OCR_X[ or OTHER] kind".
var envLine = regexp.MustCompile(`(?m)^  ([A-Z_]+)(?: or [A-Z_]+)* \S+$`)

// ownFlags is what -h of cmd must list: its settings' flags with their kinds, plus extra; and
// its environment-only settings.
func ownFlags(cmd command, extra map[string]string) (flags map[string]string, env []string) {
	flags = map[string]string{}
	for _, s := range settings {
		switch {
		case s.cmds&cmd == 0:
		case s.flag != "":
			flags[s.flag] = s.kind
		default:
			env = append(env, s.env[0])
		}
	}
	for k, v := range extra {
		flags[k] = v
	}
	return flags, env
}

// TestHelp: each command's -h lists exactly its own flags, each with the kind of value it takes
// (never the flag package's "value"), and the settings it reads from the environment only; -h
// is not a failure.
func TestHelp(t *testing.T) {
	serveFlags, serveEnv := ownFlags(cmdServe, nil)
	extractFlags, extractEnv := ownFlags(cmdExtract, map[string]string{"server": "URL", "key-env": "variable", "q": ""})
	hcFlags, hcEnv := ownFlags(cmdHealthcheck, map[string]string{"timeout": "duration"})
	tests := []struct {
		args      []string
		usage     string // the usage line
		flags     map[string]string
		env       []string
		mustHave  map[string]string // a few kinds checked by name, not only through the table
		mustLack  []string
		mustHaveE []string
	}{
		{args: []string{"serve", "-h"}, usage: "usage: ocrdraft serve [flags]", flags: serveFlags, env: serveEnv,
			mustHave:  map[string]string{"request-timeout": "duration", "max-image-bytes": "bytes", "max-inflight": "integer", "listen": "address", "metrics-addr": "address", "model": "string"},
			mustHaveE: []string{"OCR_MODEL_API_KEY", "OCR_API_KEYS"}},
		{args: []string{"extract", "-h"}, usage: "usage: ocrdraft extract [flags] IMAGE...", flags: extractFlags, env: extractEnv,
			mustHave:  map[string]string{"model": "string", "request-timeout": "duration", "max-image-bytes": "bytes", "max-pixels": "integer", "attempt-timeout": "duration"},
			mustLack:  []string{"listen", "metrics-addr", "max-inflight", "queue-wait", "upload-memory", "text-inflight", "shutdown-timeout", "max-request-bytes", "header-timeout"},
			mustHaveE: []string{"OCR_MODEL_API_KEY"}},
		{args: []string{"parse", "-h"}, usage: "usage: ocrdraft parse [flags] FILE...", flags: map[string]string{"finish-reason": "reason", "lang": "language", "sex": "sex"}},
		{args: []string{"healthcheck", "-h"}, usage: "usage: ocrdraft healthcheck [flags]", flags: hcFlags, env: hcEnv},
		{args: []string{"version", "-h"}, usage: "usage: ocrdraft version [-json]", flags: map[string]string{"json": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), tt.args, nil, &stdout, &stderr); err != nil {
				t.Errorf("run(%q) = %v, want nil (exit 0)", tt.args, err)
			}
			help := stderr.String()
			if !strings.HasPrefix(help, tt.usage+"\n") {
				t.Errorf("-h does not start with %q:\n%s", tt.usage, help)
			}
			got := map[string]string{}
			for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
				got[m[1]] = m[2]
			}
			for _, m := range boolLine.FindAllStringSubmatch(help, -1) { // a bool flag shows no kind
				got[m[1]] = ""
			}
			if diff := cmp.Diff(tt.flags, got); diff != "" {
				t.Errorf("flags and kinds (-want +got):\n%s\n%s", diff, help)
			}
			for name, kind := range tt.mustHave {
				if got[name] != kind {
					t.Errorf("-%s shows %q, want %q", name, got[name], kind)
				}
			}
			for _, name := range tt.mustLack {
				if _, ok := got[name]; ok {
					t.Errorf("-%s is listed, but %s does not use it", name, tt.args[0])
				}
			}
			if strings.Contains(help, " value\n") {
				t.Errorf("a flag shows its kind as value:\n%s", help)
			}
			var env []string
			for _, m := range envLine.FindAllStringSubmatch(help, -1) {
				env = append(env, m[1])
			}
			if diff := cmp.Diff(tt.env, env); diff != "" {
				t.Errorf("environment-only settings (-want +got):\n%s", diff)
			}
			for _, e := range tt.mustHaveE {
				if !slices.Contains(env, e) {
					t.Errorf("-h lacks the environment-only %s", e)
				}
			}
		})
	}
}

// TestUsageErrors: stray arguments, unknown flags and bad values are usage errors (exit 2),
// printed with where the value came from; a setting a command does not use is not read.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	img := writePNG(t, dir, "scan.png")
	pdf := filepath.Join(dir, "report.pdf")
	os.WriteFile(pdf, []byte("%PDF-1.7\n"), 0o644)
	reply := filepath.Join(dir, "reply.txt")
	os.WriteFile(reply, []byte(`{"indicators":[]}`), 0o644)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string // in stderr
		lack []string // not in stderr
	}{
		{name: "serve with an argument", args: []string{"serve", "extra-arg"}, want: []string{`unexpected argument "extra-arg"`}},
		{name: "serve with an unknown flag", args: []string{"serve", "-bogus"}, want: []string{"-bogus", "usage: ocrdraft serve"}},
		{name: "healthcheck with an argument", args: []string{"healthcheck", "now"}, want: []string{`unexpected argument "now"`}},
		{name: "version with an argument", args: []string{"version", "please"}, want: []string{`unexpected argument "please"`}},
		{name: "a bad finish reason", args: []string{"parse", "--finish-reason", "bogus", reply}, want: []string{"-finish-reason", "stop, length, content_filter, tool_calls, function_call"}},
		{name: "parse of an image", args: []string{"parse", img}, want: []string{"this is an image", "use ocrdraft extract"}},
		{name: "parse of an image among replies", args: []string{"parse", reply, img}, want: []string{"scan.png: this is an image"}},
		{name: "parse of a PDF", args: []string{"parse", pdf}, want: []string{"pdf file, not a model's reply"}},
		{name: "a log level that is none", env: map[string]string{"OCR_LOG_LEVEL": "verbose"}, args: []string{"serve"},
			want: []string{"OCR_LOG_LEVEL", "debug, info, warn or error", `"verbose"`}},
		{name: "a listen address without a port, from the flag", env: map[string]string{"OCR_LISTEN_ADDR": "127.0.0.1:0"}, args: []string{"serve", "-listen", "127.0.0.1"},
			want: []string{"-listen:", "host:port"}, lack: []string{"OCR_LISTEN_ADDR"}},
		{name: "a listen address without a port, from the environment", env: map[string]string{"OCR_LISTEN_ADDR": "127.0.0.1"}, args: []string{"serve"},
			want: []string{"OCR_LISTEN_ADDR:", "host:port"}},
		{name: "a bad metrics address", args: []string{"serve", "-metrics-addr", "9090"}, want: []string{"-metrics-addr:", "host:port"}},
		{name: "a flag beats a bad variable", env: map[string]string{"OCR_MAX_PAGES": "many"}, args: []string{"serve", "-max-pages", "3", "stray"},
			want: []string{`unexpected argument "stray"`}, lack: []string{"OCR_MAX_PAGES"}},
		{name: "extract without images", args: []string{"extract"}, want: []string{"usage: ocrdraft extract [flags] IMAGE..."}},
		{name: "extract with a server flag", args: []string{"extract", "-max-inflight", "3", img}, want: []string{"-max-inflight"}},
		{name: "extract does not read server settings", env: map[string]string{"OCR_MAX_INFLIGHT": "0", "OCR_QUEUE_WAIT": "soon", "OCR_API_KEYS": ","},
			args: []string{"extract"}, want: []string{"usage: ocrdraft extract"}, lack: []string{"OCR_MAX_INFLIGHT", "OCR_QUEUE_WAIT", "OCR_API_KEYS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OCR_LISTEN_ADDR", "127.0.0.1:0")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			// Cancelled: a case that wrongly starts the server stops it at once.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			var stdout, stderr bytes.Buffer
			err := run(ctx, tt.args, nil, &stdout, &stderr)
			if !errors.Is(err, errUsage) {
				t.Errorf("run(%q) = %v, want errUsage (exit 2)", tt.args, err)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			for _, l := range tt.lack {
				if strings.Contains(stderr.String(), l) {
					t.Errorf("stderr names %q:\n%s", l, stderr.String())
				}
			}
		})
	}
}

// TestFinishReasons: every finish reason an endpoint reports, and none, is accepted.
func TestFinishReasons(t *testing.T) {
	for _, fr := range append(slices.Clone(finishReasons), "") {
		var out bytes.Buffer
		if err := run(t.Context(), []string{"parse", "-finish-reason", fr, "-"}, strings.NewReader(`{"indicators":[{"itemName":"a","valueNum":1}]}`), &out, io.Discard); err != nil {
			t.Errorf("-finish-reason %q: %v", fr, err)
		}
		if got := strings.Contains(out.String(), "output_truncated"); got != (fr == "length") {
			t.Errorf("-finish-reason %q: output_truncated %v", fr, got)
		}
	}
}

// TestListenBlame: a listen address that cannot be bound names where it came from.
func TestListenBlame(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	tests := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"OCR_LISTEN_ADDR": ":1"}, []string{"-listen", addr}, "(-listen)"},
		{map[string]string{"OCR_LISTEN_ADDR": addr}, nil, "(OCR_LISTEN_ADDR)"},
		{map[string]string{"OCR_LISTEN_ADDR": "127.0.0.1:0"}, []string{"-metrics-addr", addr}, "(-metrics-addr)"},
		{map[string]string{"OCR_LISTEN_ADDR": "127.0.0.1:0", "OCR_METRICS_ADDR": addr}, nil, "(OCR_METRICS_ADDR)"},
	}
	for _, tt := range tests {
		err := runServe(t.Context(), tt.args, func(k string) string { return tt.env[k] }, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), addr) {
			t.Errorf("env %v args %q: %v, want an error naming %s and %s", tt.env, tt.args, err, addr, tt.want)
		}
	}
}

// TestVersionCommand: ocrdraft version, --version and -version print the build that
// version.Read reports; -json prints what GET /version answers.
func TestVersionCommand(t *testing.T) {
	want := version.Read()
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out bytes.Buffer
		if err := run(t.Context(), args, nil, &out, io.Discard); err != nil {
			t.Errorf("%q: %v", args, err)
		}
		if out.String() != want.String()+"\n" {
			t.Errorf("%q printed %q, want %q", args, out.String(), want.String())
		}
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"version", "-json"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got version.Info
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got != want {
		t.Errorf("version -json = %s (%v), want %+v", out.String(), err, want)
	}
}

// TestServeVersion: the running server tells its build at GET /version (open, with keys set),
// in ocrdraft_build_info and in its start log.
func TestServeVersion(t *testing.T) {
	log := new(syncBuffer)
	addr, _ := serving(t, map[string]string{"OCR_API_KEYS": "caller-key"}, log)
	want := version.Read()
	var got version.Info
	if status := getJSON(t, "http://"+addr+"/version", &got); status != http.StatusOK || got != want {
		t.Errorf("GET /version = %d %+v, want 200 %+v", status, got, want)
	}
	if body := get(t, "http://"+addr+"/metrics"); !strings.Contains(body, `ocrdraft_build_info{goversion="`+want.GoVersion+`",revision="`+want.Revision+`",version="`+want.Version+`"} 1`) {
		t.Errorf("metrics lack ocrdraft_build_info:\n%s", body)
	}
	var start struct{ Msg, Version, Revision, GoVersion string }
	json.Unmarshal([]byte(strings.SplitN(log.String(), "\n", 2)[0]), &start)
	if start.Msg != "starting" || start.Version != want.Version || start.Revision != want.Revision || start.GoVersion != want.GoVersion {
		t.Errorf("first log line = %+v, want starting with %+v", start, want)
	}
}

// TestMetricsAddr: with OCR_METRICS_ADDR (or -metrics-addr), /metrics is served there and only
// there; without it, on the API's listener.
func TestMetricsAddr(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		separate bool
	}{
		{name: "with the API", env: map[string]string{}},
		{name: "OCR_METRICS_ADDR", env: map[string]string{"OCR_METRICS_ADDR": "127.0.0.1:0"}, separate: true},
		{name: "-metrics-addr", env: map[string]string{}, args: []string{"-metrics-addr", "127.0.0.1:0"}, separate: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, stop := servingArgs(t, tt.env, tt.args, io.Discard)
			api, apiWant := "http://"+at.api+"/metrics", http.StatusOK
			if at.metrics != "" {
				apiWant = http.StatusNotFound
				sep := "http://" + at.metrics
				if body := get(t, sep+"/metrics"); !strings.Contains(body, "ocrdraft_build_info") {
					t.Errorf("GET %s/metrics lacks the metrics:\n%s", sep, body)
				}
				for _, path := range []string{"/healthz", "/v1/extract", "/version"} {
					if status := getJSON(t, sep+path, nil); status != http.StatusNotFound {
						t.Errorf("GET %s%s = %d, want 404: the metrics listener serves /metrics alone", sep, path, status)
					}
				}
			}
			if (at.metrics != "") != tt.separate {
				t.Fatalf("metrics listener %q, want one: %v", at.metrics, tt.separate)
			}
			if status := getJSON(t, api, nil); status != apiWant {
				t.Errorf("GET %s = %d, want %d", api, status, apiWant)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if at.metrics != "" {
				if _, err := http.Get("http://" + at.metrics + "/metrics"); err == nil {
					t.Error("the metrics listener still answers after shutdown")
				}
			}
		})
	}
}

// TestHealthcheck: ocrdraft healthcheck exits 0 against a serving server (asked over loopback
// when it listens on every address), 1 when nothing listens or /healthz is not 200.
func TestHealthcheck(t *testing.T) {
	addr, _ := serving(t, map[string]string{}, io.Discard)
	_, port, _ := net.SplitHostPort(addr)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := closed.Addr().String()
	closed.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	defer http.DefaultClient.CloseIdleConnections()

	tests := []struct {
		name string
		env  string
		args []string
		want error
	}{
		{"serving", addr, nil, nil},
		{"every address", ":" + port, nil, nil},
		{"every IPv4 address, from the flag", "127.0.0.1:1", []string{"-listen", "0.0.0.0:" + port}, nil},
		{"nothing listens", gone, []string{"-timeout", "1s"}, errFailed},
		{"not healthy", strings.TrimPrefix(sick.URL, "http://"), nil, errFailed},
		{"port 0", "127.0.0.1:0", nil, errUsage},
		{"a bad timeout", addr, []string{"-timeout", "0s"}, errUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runHealthcheck(t.Context(), tt.args, func(k string) string {
				if k == "OCR_LISTEN_ADDR" {
					return tt.env
				}
				return ""
			}, &stdout, &stderr)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("= %v, want %v; stderr %s", err, tt.want, stderr.String())
			}
			if tt.want == nil && !strings.Contains(stdout.String(), "200 OK") {
				t.Errorf("stdout = %q", stdout.String())
			}
			if tt.want != nil && stderr.Len() == 0 {
				t.Error("a failure printed no reason")
			}
		})
	}
}

func TestHealthURL(t *testing.T) {
	tests := []struct{ listen, want string }{
		{":8080", "http://127.0.0.1:8080/healthz"},
		{"0.0.0.0:8080", "http://127.0.0.1:8080/healthz"},
		{"[::]:8080", "http://127.0.0.1:8080/healthz"},
		{"10.1.2.3:9000", "http://10.1.2.3:9000/healthz"},
		{"[::1]:8080", "http://[::1]:8080/healthz"},
		{"localhost:8080", "http://localhost:8080/healthz"},
	}
	for _, tt := range tests {
		if got, err := healthURL(tt.listen); err != nil || got != tt.want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", tt.listen, got, err, tt.want)
		}
	}
}

// TestJSONOutput: the CLI and the running server write <, > and & as they are, not \u003c.
func TestJSONOutput(t *testing.T) {
	const reply = `{"title":"A&B <panel>","indicators":[{"itemName":"C&D","valueNum":null,"valueText":"<0.5","unit":null}]}`
	var out bytes.Buffer
	if err := run(t.Context(), []string{"parse", "-"}, strings.NewReader(reply), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	addr, _ := serving(t, map[string]string{}, io.Discard)
	res, err := http.Post("http://"+addr+"/v1/parse", "text/plain", strings.NewReader(reply))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	for what, got := range map[string]string{"ocrdraft parse": out.String(), "POST /v1/parse": string(body)} {
		for _, want := range []string{`"A&B <panel>"`, `"C&D"`, `"<0.5"`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %s:\n%s", what, want, got)
			}
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	defer http.DefaultClient.CloseIdleConnections()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", url, res.StatusCode, b)
	}
	return string(b)
}

// getJSON gets url into v (nil: discards the body) and returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	defer http.DefaultClient.CloseIdleConnections()
	b, _ := io.ReadAll(res.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Errorf("GET %s: %v: %s", url, err, b)
		}
	}
	return res.StatusCode
}
