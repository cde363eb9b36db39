package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
)

// TestMain checks for leaked goroutines, and doubles as the ocrdraft binary when
// OCRDRAFT_TEST_MAIN is set, so that TestSIGTERM can signal a real process.
func TestMain(m *testing.M) {
	if os.Getenv("OCRDRAFT_TEST_MAIN") == "1" {
		os.Args = []string{"ocrdraft", "serve"}
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

// syncBuffer collects a server's log while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testPage is a small valid PNG page.
var testPage = func() []byte {
	m := image.NewGray(image.Rect(0, 0, 120, 160))
	for i := range m.Pix {
		m.Pix[i] = 0xff
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

const reply = `{"title":null,"hospital":null,"checkupDate":null,"reportYear":null,"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L"}]}`

// serving runs runServe with env until the returned stop is called; stop returns runServe's error.
func serving(t *testing.T, env map[string]string, log io.Writer) (addr string, stop func() error) {
	t.Helper()
	at, stop := servingArgs(t, env, nil, log)
	return at.api, stop
}

// servingArgs is serving with command-line arguments, and tells every address served.
func servingArgs(t *testing.T, env map[string]string, args []string, log io.Writer) (at listening, stop func() error) {
	t.Helper()
	if _, ok := env["OCR_LISTEN_ADDR"]; !ok {
		env["OCR_LISTEN_ADDR"] = "127.0.0.1:0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan listening, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- runServe(ctx, args, func(k string) string {
			if k == "OCR_WARM_DECODERS" && env[k] == "" {
				return "false" // a test server compiles no decoder it will not use
			}
			return env[k]
		}, log, func(a listening) { addrc <- a })
	}()
	select {
	case at = <-addrc:
	case err := <-errc:
		cancel()
		t.Fatalf("runServe: %v", err)
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(10 * time.Second):
				t.Fatal("runServe did not return")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return at, stop
}

func post(t *testing.T, client *http.Client, url, key string) (*http.Response, error) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, _ := w.CreateFormFile("image", "p.png")
	fw.Write(testPage)
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, url, &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	return client.Do(req)
}

// TestServeDrains: a request in flight when the signal comes (the context ends) still gets its
// 200, and runServe returns nil, so the process exits 0.
func TestServeDrains(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Default(fakeopenai.Slow(300*time.Millisecond, fakeopenai.Reply(reply)))
	log := new(syncBuffer)
	addr, stop := serving(t, map[string]string{
		"OCR_MODEL": "test-vl", "OCR_MODEL_BASE_URL": fake.URL, "OCR_MODEL_API_KEY": "sk-test",
		"OCR_API_KEYS": "caller-key", "OCR_SHUTDOWN_TIMEOUT": "5s",
	}, log)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		res, err := post(t, client, "http://"+addr+"/v1/extract", "caller-key")
		if err != nil {
			done <- result{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- result{status: res.StatusCode, body: string(b)}
	}()
	testwait.For(t, "the request to reach the model", func() bool { return fake.Calls() > 0 })
	start := time.Now()
	if err := stop(); err != nil {
		t.Errorf("runServe = %v, want nil", err)
	}
	r := <-done
	if r.err != nil || r.status != http.StatusOK || !strings.Contains(r.body, "总胆固醇") {
		t.Errorf("in-flight request: %d %v %s", r.status, r.err, r.body)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("still accepting after shutdown")
	}
	for _, want := range []string{`"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// TestServeCancelsStragglers: a request still running when the shutdown timeout passes has its
// model call cancelled, and runServe still returns nil.
func TestServeCancelsStragglers(t *testing.T) {
	fake := fakeopenai.New(t)
	cancelled := make(chan struct{})
	fake.Default(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(cancelled)
	})
	log := new(syncBuffer)
	addr, stop := serving(t, map[string]string{
		"OCR_MODEL": "test-vl", "OCR_MODEL_BASE_URL": fake.URL, "OCR_SHUTDOWN_TIMEOUT": "100ms",
	}, log)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := post(t, client, "http://"+addr+"/v1/extract", ""); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}()
	testwait.For(t, "the straggler to reach the model", func() bool { return fake.Calls() > 0 })
	if err := stop(); err != nil {
		t.Errorf("runServe = %v, want nil", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the straggler's model call was not cancelled")
	}
	<-done
	if !strings.Contains(log.String(), "shutdown timeout passed") {
		t.Errorf("log lacks the timeout warning:\n%s", log)
	}
	if !strings.Contains(log.String(), "OCR_API_KEYS is not set") {
		t.Errorf("log lacks the open-API warning:\n%s", log)
	}
}

// TestSIGTERM: the real process, sent SIGTERM, exits 0.
func TestSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "OCRDRAFT_TEST_MAIN=1", "OCR_LISTEN_ADDR=127.0.0.1:0", "OCR_MODEL=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	addr := ""
	for addr == "" && sc.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			addr = line.Addr
		}
	}
	if addr == "" {
		t.Fatal("the process never said it was listening")
	}
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stderr)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit status 0", err)
	}
}

func TestConfigOperations(t *testing.T) {
	tests := []struct {
		env     map[string]string
		wantErr string
		check   func(c config) bool
	}{
		{env: map[string]string{}, check: func(c config) bool {
			return c.APIKeys == nil && c.MaxInFlight == 32 && c.QueueWait == time.Second && !c.DebugLogReplies
		}},
		{env: map[string]string{"OCR_API_KEYS": " a , b,c ", "OCR_MAX_INFLIGHT": "512", "OCR_QUEUE_WAIT": "250ms", "OCR_DEBUG_LOG_REPLIES": "true"},
			check: func(c config) bool {
				return strings.Join(c.APIKeys, "|") == "a|b|c" && c.MaxInFlight == 512 && c.QueueWait == 250*time.Millisecond && c.DebugLogReplies
			}},
		{env: map[string]string{"OCR_API_KEYS": " , "}, wantErr: "OCR_API_KEYS"},
		{env: map[string]string{"OCR_API_KEYS": "a,,c"}, wantErr: "OCR_API_KEYS"}, // a key lost, say to an unset template variable
		{env: map[string]string{"OCR_MAX_INFLIGHT": "0"}, wantErr: "OCR_MAX_INFLIGHT"},
		{env: map[string]string{"OCR_QUEUE_WAIT": "soon"}, wantErr: "OCR_QUEUE_WAIT"},
		{env: map[string]string{"OCR_DEBUG_LOG_REPLIES": "yes please"}, wantErr: "OCR_DEBUG_LOG_REPLIES"},
	}
	for i, tt := range tests {
		c, err := loadConfig(cmdServe, flag.NewFlagSet("t", flag.ContinueOnError), nil, func(k string) string { return tt.env[k] })
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("#%d: err = %v, want one naming %s", i, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("#%d: %v", i, err)
		case !tt.check(c):
			t.Errorf("#%d: config = %+v", i, c)
		}
	}
}
