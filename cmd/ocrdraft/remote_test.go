package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
)

// fakeJobs is the jobs API as the contract (notes: jobs-contract) says, for ocrdraft extract
// -server: POST /v1/jobs answers 202 with a queued job, each GET moves it on (queued, then
// running page by page, then its end), DELETE deletes it.
type fakeJobs struct {
	*httptest.Server
	t     *testing.T
	end   string // the status the job ends with: succeeded, failed, canceled; "" runs forever
	key   string // the bearer key wanted; "" wants none
	wait  string // the Retry-After of POST's answer
	flaky int    // how many GETs answer 503 before the job is seen

	mu       sync.Mutex
	posts    int
	idemKeys []string
	bodies   [][]byte
	images   int
	polls    int
	deleted  bool
	lang     string
}

// fakeResult is a /v1/extract body as the server writes it: compact, its numbers with their
// digits, <0.5 not escaped.
const fakeResult = `{"draft":{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60,"refText":"<5.20"}]},"warnings":[],"meta":{"model":"test-vl","pages":[{},{}]}}`

const fakeProblem = `{"type":"about:blank","title":"Bad Gateway","status":502,"code":"model_unavailable","detail":"the model endpoint did not answer"}`

func newFakeJobs(t *testing.T, end, key string) *fakeJobs {
	f := &fakeJobs{t: t, end: end, key: key, wait: "0"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs", f.post)
	mux.HandleFunc("GET /v1/jobs/{id}", f.get)
	mux.HandleFunc("DELETE /v1/jobs/{id}", f.delete)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
			problemAnswer(w, 401, `{"status":401,"code":"unauthorized","title":"Unauthorized"}`)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func problemAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (f *fakeJobs) post(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		problemAnswer(w, 400, `{"status":400,"code":"invalid_request"}`)
		return
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	images := 0
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if p.FormName() == "image" {
			images++
			if strings.Contains(p.FileName(), "scan") {
				f.t.Errorf("a part is named by its file: %q", p.FileName())
			}
		}
	}
	f.mu.Lock()
	f.posts++
	f.idemKeys = append(f.idemKeys, r.Header.Get("Idempotency-Key"))
	f.bodies = append(f.bodies, body)
	f.images = images
	f.lang = r.Header.Get("Accept-Language")
	wait := f.wait
	f.mu.Unlock()
	w.Header().Set("Location", "/v1/jobs/job_abcdefghijklmnopqrstuvwxyz")
	w.Header().Set("Retry-After", wait)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, f.jobJSON("queued", 0, 0, "null", "null"))
}

func (f *fakeJobs) jobJSON(status string, pages, done int, result, problem string) string {
	return fmt.Sprintf(`{"id":"job_abcdefghijklmnopqrstuvwxyz","status":%q,"pages":%d,"pagesDone":%d,"pagesSkipped":0,"createdAt":"2026-12-02T04:00:00Z","finishedAt":null,"expiresAt":null,"result":%s,"error":%s}`, status, pages, done, result, problem)
}

func (f *fakeJobs) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.flaky > 0 {
		f.flaky--
		f.mu.Unlock()
		problemAnswer(w, 503, `{"status":503,"code":"overloaded"}`)
		return
	}
	f.polls++
	n, deleted := f.polls, f.deleted
	f.mu.Unlock()
	if deleted || r.PathValue("id") != "job_abcdefghijklmnopqrstuvwxyz" {
		problemAnswer(w, 404, `{"status":404,"code":"job_not_found","title":"Not Found"}`)
		return
	}
	w.Header().Set("Retry-After", "0")
	w.Header().Set("Content-Type", "application/json")
	var body string
	switch {
	case n == 1:
		body = f.jobJSON("running", 0, 0, "null", "null")
	case n <= 3 || f.end == "":
		body = f.jobJSON("running", 2, min(n-2, 1), "null", "null")
	case f.end == "succeeded":
		body = f.jobJSON("succeeded", 2, 2, fakeResult, "null")
	case f.end == "failed":
		body = f.jobJSON("failed", 2, 1, "null", fakeProblem)
	default:
		body = f.jobJSON(f.end, 2, 1, "null", "null")
	}
	io.WriteString(w, body)
}

func (f *fakeJobs) delete(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.deleted = true
	f.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeJobs) setWait(v string) {
	f.mu.Lock()
	f.wait = v
	f.mu.Unlock()
}

// fastPolls makes the waits between looks at a job short, for the test.
func fastPolls(t *testing.T) {
	saved := pollWait
	pollWait.least, pollWait.def = time.Millisecond, time.Millisecond
	t.Cleanup(func() { pollWait = saved })
}

// onTerminal makes stderr count as a terminal, for the test.
func onTerminal(t *testing.T) {
	saved := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { isTerminal = saved })
}

func TestExtractServer(t *testing.T) {
	fastPolls(t)
	onTerminal(t)
	f := newFakeJobs(t, "succeeded", "k-123")
	t.Setenv("OCR_SERVER_API_KEY", "k-123")
	t.Setenv("OCR_MODEL", "") // no model needed here
	dir := t.TempDir()
	p1, p2 := writePNG(t, dir, "zhang-san-scan-1.png"), writePNG(t, dir, "zhang-san-scan-2.png")

	var out, errOut bytes.Buffer
	f.setWait("1")
	start := time.Now()
	if err := run(t.Context(), []string{"extract", "-server", f.URL, "-lang", "en", p1, p2}, nil, &out, &errOut); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	if time.Since(start) < time.Second {
		t.Errorf("the first look at the job came before the Retry-After of 1 s had passed")
	}
	f.setWait("0")
	var want bytes.Buffer
	json.Indent(&want, []byte(fakeResult), "", "  ")
	want.WriteByte('\n')
	if out.String() != want.String() {
		t.Errorf("stdout =\n%s\nwant the result as a local extract prints it:\n%s", out.String(), want.String())
	}
	if f.images != 2 || f.lang != "en" {
		t.Errorf("the job had %d images and Accept-Language %q, want 2 and en", f.images, f.lang)
	}
	for _, s := range []string{"job queued", "page 0 of 2 read", "page 1 of 2 read"} {
		if !strings.Contains(errOut.String(), s) {
			t.Errorf("stderr lacks %q: %q", s, errOut.String())
		}
	}
	if !strings.HasSuffix(errOut.String(), "\r\x1b[K") {
		t.Errorf("the progress line is not erased at the end: %q", errOut.String())
	}

	// The same files again: a run of its own, another Idempotency-Key (the same files after a
	// failed job, or another model, are read again, not answered with the earlier job).
	out.Reset()
	if err := run(t.Context(), []string{"extract", "-server", f.URL, "-q", p1, p2}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if f.posts != 2 || f.idemKeys[0] == "" || f.idemKeys[1] == "" || f.idemKeys[0] == f.idemKeys[1] || !bytes.Equal(f.bodies[0], f.bodies[1]) {
		t.Errorf("two runs with the same files sent keys %q, bodies equal %v; want two keys, one body", f.idemKeys, bytes.Equal(f.bodies[0], f.bodies[1]))
	}
	// Other files, another key.
	p3 := filepath.Join(dir, "other.png")
	os.WriteFile(p3, append(readAll(t, p1), 0), 0o644)
	errOut.Reset()
	if err := run(t.Context(), []string{"extract", "-server", f.URL, "-q", p3}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if f.idemKeys[2] == f.idemKeys[0] {
		t.Errorf("other files, the same Idempotency-Key %q", f.idemKeys[2])
	}
	if errOut.Len() != 0 {
		t.Errorf("-q printed progress: %q", errOut.String())
	}
}

func readAll(t *testing.T, name string) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExtractServerEnds(t *testing.T) {
	fastPolls(t)
	img := writePNG(t, t.TempDir(), "p.png")
	for _, tt := range []struct {
		end, code string
		err       error
	}{
		{end: "failed", code: "model_unavailable", err: errFailed},
		{end: "canceled"},
	} {
		t.Run(tt.end, func(t *testing.T) {
			f := newFakeJobs(t, tt.end, "")
			var out, errOut bytes.Buffer
			err := run(t.Context(), []string{"extract", "-server", f.URL, img}, nil, &out, &errOut)
			if err == nil {
				t.Fatalf("a %s job: exit 0, stdout %s", tt.end, out.String())
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("err = %v, want %v", err, tt.err)
			}
			var doc struct{ Code string }
			json.Unmarshal(out.Bytes(), &doc)
			if doc.Code != tt.code {
				t.Errorf("stdout %q, want the problem %q", out.String(), tt.code)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr is no terminal, yet shows %q", errOut.String())
			}
		})
	}
}

// TestExtractServerInterrupt: Ctrl-C while the job runs deletes it on the server.
func TestExtractServerInterrupt(t *testing.T) {
	fastPolls(t)
	f := newFakeJobs(t, "", "")
	img := writePNG(t, t.TempDir(), "p.png")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"extract", "-server", f.URL, img}, nil, io.Discard, io.Discard)
	}()
	testwait.For(t, "the job to be polled", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.polls >= 3
	})
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("err = %v, want one saying the job was deleted", err)
	}
	if !f.deleted {
		t.Error("the job was not deleted")
	}

	// Ctrl-C before the server answered the POST: what to do is said.
	arrived := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server notices the client going
		close(arrived)
		<-r.Context().Done()
	}))
	defer slow.Close()
	ctx, cancel = context.WithCancel(t.Context())
	go func() {
		done <- run(ctx, []string{"extract", "-server", slow.URL, img}, nil, io.Discard, io.Discard)
	}()
	<-arrived
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "interrupted before the server answered") {
		t.Errorf("interrupted during the POST: %v", err)
	}
}

func TestExtractServerRefusals(t *testing.T) {
	fastPolls(t)
	img := writePNG(t, t.TempDir(), "p.png")
	f := newFakeJobs(t, "succeeded", "k-123")
	t.Setenv("OCR_SERVER_API_KEY", "")
	t.Setenv("MY_KEY", "k-123")

	// Without the key: the server's problem, exit 1.
	var out bytes.Buffer
	err := run(t.Context(), []string{"extract", "-server", f.URL, img}, nil, &out, io.Discard)
	if !errors.Is(err, errFailed) || !strings.Contains(out.String(), "unauthorized") {
		t.Errorf("no key: %v, %s", err, out.String())
	}
	// The key from the variable -key-env names.
	out.Reset()
	if err := run(t.Context(), []string{"extract", "-server", f.URL, "-key-env", "MY_KEY", img}, nil, &out, io.Discard); err != nil {
		t.Errorf("-key-env MY_KEY: %v, %s", err, out.String())
	}
	for _, args := range [][]string{
		{"extract", "-server", f.URL, "-key-env", "UNSET_KEY_VAR", img},
		{"extract", "-server", "localhost:8080", img},
		{"extract", "-server", "ftp://x", img},
		{"extract", "-key-env", "MY_KEY", img},
	} {
		if err := run(t.Context(), args, nil, io.Discard, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	// Looks at the job answered 503 a few times: looked at again.
	flaky := newFakeJobs(t, "succeeded", "")
	flaky.flaky = 3
	out.Reset()
	if err := run(t.Context(), []string{"extract", "-server", flaky.URL, img}, nil, &out, io.Discard); err != nil || !strings.Contains(out.String(), "血脂四项") {
		t.Errorf("a flaky server: %v, %s", err, out.String())
	}
	// The POST refused (overloaded): its problem, exit 1, no second POST.
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		problemAnswer(w, 503, `{"status":503,"code":"overloaded"}`)
	}))
	defer busy.Close()
	out.Reset()
	if err := run(t.Context(), []string{"extract", "-server", busy.URL, img}, nil, &out, io.Discard); !errors.Is(err, errFailed) || !strings.Contains(out.String(), "overloaded") {
		t.Errorf("POST overloaded: %v, %s", err, out.String())
	}
	// A job not found (deleted, expired, another key's): the problem, exit 1.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set("Location", "/v1/jobs/job_gone")
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"id":"job_gone","status":"queued","pages":0,"pagesDone":0,"pagesSkipped":0,"result":null,"error":null}`)
			return
		}
		problemAnswer(w, 404, `{"status":404,"code":"job_not_found"}`)
	}))
	defer srv.Close()
	out.Reset()
	if err := run(t.Context(), []string{"extract", "-server", srv.URL, img}, nil, &out, io.Discard); !errors.Is(err, errFailed) || !strings.Contains(out.String(), "job_not_found") {
		t.Errorf("a job gone: %v, %s", err, out.String())
	}
	// A Location on another host: the key is not sent there.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached another host, with Authorization %q", r.Header.Get("Authorization"))
	}))
	defer other.Close()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", other.URL+"/v1/jobs/job_x")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"id":"job_x","status":"queued","result":null,"error":null}`)
	}))
	defer elsewhere.Close()
	if err := run(t.Context(), []string{"extract", "-server", elsewhere.URL, img}, nil, io.Discard, io.Discard); err == nil {
		t.Error("a Location on another host was followed")
	}
}

// TestExtractProgress: a local extract shows pages read on a terminal, erased at the end.
func TestExtractProgress(t *testing.T) {
	onTerminal(t)
	fake := fakeopenai.New(t)
	fake.Default(fakeopenai.Reply(`{"title":"血脂四项","indicators":[{"itemName":"总胆固醇","valueNum":5.60,"unit":"mmol/L"}]}`))
	t.Setenv("OCR_MODEL_BASE_URL", fake.URL)
	t.Setenv("OCR_MODEL_API_KEY", "sk-test")
	t.Setenv("OCR_MODEL", "test-vl")
	dir := t.TempDir()
	p1, p2 := writePNG(t, dir, "p1.png"), writePNG(t, dir, "p2.png")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"extract", p1, p2}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"page 0 of 2 read", "page 1 of 2 read", "page 2 of 2 read"} {
		if !strings.Contains(errOut.String(), s) {
			t.Errorf("stderr lacks %q: %q", s, errOut.String())
		}
	}
	if !strings.HasSuffix(errOut.String(), "\r\x1b[K") {
		t.Errorf("the progress line is not erased at the end: %q", errOut.String())
	}
	errOut.Reset()
	if err := run(t.Context(), []string{"extract", "-q", p1}, nil, &out, &errOut); err != nil || errOut.Len() != 0 {
		t.Errorf("-q: %v, stderr %q", err, errOut.String())
	}
}
