package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/pgtest"
	"github.com/ocrdraft/ocrdraft/jobs"
)

// distinctPages are n small PNG pages, each with its band at its own height, so that the fake
// model tells them apart by their bytes.
func distinctPages(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		m := image.NewGray(image.Rect(0, 0, 120, 160))
		for j := range m.Pix {
			m.Pix[j] = 0xff
		}
		for y := 5 + i*2; y < 7+i*2; y++ {
			for x := 10; x < 110; x++ {
				m.SetGray(x, y, color.Gray{Y: 0x20})
			}
		}
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			panic(err)
		}
		out[i] = b.Bytes()
	}
	return out
}

// pageModel answers page i (by its image in the request) with one row named for it, after
// delay, and counts the calls for each page.
type pageModel struct {
	mu    sync.Mutex
	calls []int
	b64   []string
}

func (m *pageModel) answer(delay time.Duration) fakeopenai.Answer {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		page := -1
		for i, b := range m.b64 {
			if bytes.Contains(body, []byte(b)) {
				page = i
			}
		}
		if page < 0 {
			http.Error(w, "no known page", http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.calls[page]++
		m.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		fakeopenai.Reply(fmt.Sprintf(`{"title":"体检报告","hospital":null,"checkupDate":null,"reportYear":null,"indicators":[{"itemName":"检验项目%d","valueNum":%d.5,"unit":"U/L","refText":null,"printedFlag":null}]}`, page+1, page+1))(w, r)
	}
}

func (m *pageModel) counts() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.calls...)
}

// child is the ocrdraft binary (this test binary, through TestMain) serving in a process of
// its own, its log kept.
type child struct {
	cmd  *exec.Cmd
	addr string
	log  *syncBuffer
	done chan struct{}
}

func startChild(t *testing.T, env []string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{"OCRDRAFT_TEST_MAIN=1", "OCR_LISTEN_ADDR=127.0.0.1:0", "OCR_WARM_DECODERS=false"}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, log: new(syncBuffer), done: make(chan struct{})}
	t.Cleanup(func() { c.cmd.Process.Kill(); <-c.done })
	sc := bufio.NewScanner(stderr)
	for c.addr == "" && sc.Scan() {
		c.log.Write(append(sc.Bytes(), '\n'))
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			c.addr = line.Addr
		}
	}
	go func() {
		defer close(c.done)
		io.Copy(c.log, stderr)
		cmd.Wait()
	}()
	if c.addr == "" {
		t.Fatalf("the server never said it was listening:\n%s", c.log)
	}
	return c
}

func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

func getJob(t *testing.T, addr, loc string) jobs.Job {
	t.Helper()
	res, err := http.Get("http://" + addr + loc)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var j jobs.Job
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET %s: %d %s", loc, res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(&j); err != nil {
		t.Fatal(err)
	}
	return j
}

// waitJob polls a job until cond holds, for at most d (longer than testwait's deadline: a
// restarted process waits out the dead one's River leadership, 15 s, before it rescues pages).
func waitJob(t *testing.T, addr, loc string, d time.Duration, what string, cond func(jobs.Job) bool) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		j := getJob(t, addr, loc)
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %+v", what, d, j)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestJobSurvivesKill is issue 23's end-to-end test: a server process is killed (SIGKILL) in
// the middle of a 12-page job (more than OCR_MAX_PAGES); a new process on the same OCR_JOBS_DIR,
// or the same Postgres, resumes the pages not read, and the result holds every page once. A page
// is read again only if it was at the model when the process died (at most OCR_JOB_CONCURRENCY
// of them).
func TestJobSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	// On SQLite a starting process holds the directory alone, so what River had running is a
	// dead process's and is taken up at once: with an attempt of a minute (River's rescue after
	// three), the job still finishes well within the wait. On Postgres, another replica may be
	// running it: the pages are taken up once the dead replica has gone without its heartbeat
	// for OCR_JOBS_REPLICA_TIMEOUT (2 s here), not at River's rescue (three minutes here).
	t.Run("sqlite", func(t *testing.T) { jobSurvivesKill(t, "60s", "OCR_JOBS_DIR="+t.TempDir()) })
	t.Run("postgres", func(t *testing.T) {
		jobSurvivesKill(t, "60s", "OCR_JOBS_DATABASE_URL="+pgtest.URL(t), "OCR_JOBS_REPLICA_TIMEOUT=2s")
	})
}

func jobSurvivesKill(t *testing.T, attempt string, where ...string) {
	const n, conc = 12, 2
	pages := distinctPages(n)
	m := &pageModel{calls: make([]int, n)}
	for _, p := range pages {
		m.b64 = append(m.b64, base64.StdEncoding.EncodeToString(p))
	}
	fake := fakeopenai.New(t)
	fake.Default(m.answer(300 * time.Millisecond))
	env := []string{
		"OCR_MODEL=test-vl", "OCR_MODEL_BASE_URL=" + fake.URL, "OCR_MODEL_API_KEY=sk-test",
		"OCR_JOBS_KEY=" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)),
		"OCR_JOB_CONCURRENCY=" + fmt.Sprint(conc),
		"OCR_REQUEST_TIMEOUT=" + attempt, "OCR_SHUTDOWN_TIMEOUT=2s",
	}
	env = append(env, where...)
	first := startChild(t, env)

	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, p := range pages {
		fw, _ := w.CreateFormFile("image", "page.png")
		fw.Write(p)
	}
	w.Close()
	res, err := http.Post("http://"+first.addr+"/v1/jobs", w.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs: %d %s", res.StatusCode, b)
	}
	loc := res.Header.Get("Location")
	waitJob(t, first.addr, loc, 30*time.Second, "three pages read", func(j jobs.Job) bool { return j.PagesDone >= 3 })
	first.kill(t)
	before := m.counts()
	http.DefaultClient.CloseIdleConnections()

	start := time.Now()
	second := startChild(t, env)
	j := waitJob(t, second.addr, loc, 90*time.Second, "the job finished after the restart", func(j jobs.Job) bool {
		return j.Status == jobs.Succeeded || j.Status == jobs.Failed
	})
	t.Logf("finished %v after the restart; calls per page before the kill %v, in all %v", time.Since(start).Round(time.Second), before, m.counts())
	if j.Status != jobs.Succeeded || j.PagesDone != n || j.Result == nil {
		t.Fatalf("after the restart: %+v", j)
	}
	seen := make([]int, n)
	for _, ind := range j.Result.Draft.Indicators {
		if ind.Page == nil || *ind.Page < 1 || *ind.Page > n {
			t.Fatalf("a row of no page: %+v", ind)
		}
		seen[*ind.Page-1]++
		if want := fmt.Sprintf("检验项目%d", *ind.Page); ind.ItemName != want {
			t.Errorf("page %d holds %q, want %q", *ind.Page, ind.ItemName, want)
		}
	}
	again := 0
	for i, c := range m.counts() {
		if seen[i] != 1 {
			t.Errorf("page %d is in the result %d times, want once", i+1, seen[i])
		}
		if c > 1 {
			again++
		}
	}
	if again > conc {
		t.Errorf("%d pages were read more than once; only the %d at the model when the process died may be", again, conc)
	}
	for _, c := range []*child{first, second} {
		if s := c.log.String(); strings.Contains(s, "检验项目") || strings.Contains(s, "体检报告") {
			t.Errorf("the server's log holds report text:\n%s", s)
		}
	}
}
