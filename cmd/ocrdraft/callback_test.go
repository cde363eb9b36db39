package main

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to read the child's River jobs

	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/internal/testwait"
	"github.com/ocrdraft/ocrdraft/internal/webhook"
	"github.com/ocrdraft/ocrdraft/jobs"
)

// receiver is a job's callback receiver: each path answers its statuses in turn (the last one
// again once they run out), and every try is kept.
type receiver struct {
	mu      sync.Mutex
	answers map[string][]int
	tries   []hookTry
}

// hookTry is one try as the receiver saw it.
type hookTry struct {
	path   string
	header http.Header
	body   []byte
	status int
	at     time.Time
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	st := http.StatusNoContent
	if as := rc.answers[r.URL.Path]; len(as) > 0 {
		st = as[0]
		if len(as) > 1 {
			rc.answers[r.URL.Path] = as[1:]
		}
	}
	rc.tries = append(rc.tries, hookTry{path: r.URL.Path, header: r.Header.Clone(), body: body, status: st, at: time.Now()})
	w.WriteHeader(st)
}

func (rc *receiver) triesOf(path string) []hookTry {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []hookTry
	for _, t := range rc.tries {
		if t.path == path {
			out = append(out, t)
		}
	}
	return out
}

// TestCallbacks is issue 23's callbacks end to end: a server process with OCR_CALLBACK_HOSTS
// and OCR_WEBHOOK_SECRET (the real webhook.Sender, as serve wires it), and a receiver. A
// callback's signature verifies with the secret (webhook.Verify); a 503 is tried again, with
// the same webhook-id, and then taken; a 410 is not tried again (its River job cancelled after
// one attempt); a callbackUrl whose host is not listed is 422 callback_not_allowed and never
// contacted.
func TestCallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rc := &receiver{answers: map[string][]int{"/later": {503, 200}, "/gone": {410}}}
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)
	hookHost := strings.TrimPrefix(hook.URL, "http://") // 127.0.0.1:port

	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = byte(i + 1)
	}
	secretText := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	secret, err := webhook.ParseSecret(secretText)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeopenai.New(t)
	fake.Default(fakeopenai.Reply(`{"title":"血脂","hospital":null,"checkupDate":null,"reportYear":null,"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L","refText":"3.1-5.2","printedFlag":null}]}`))
	dir := t.TempDir()
	c := startChild(t, []string{
		"OCR_MODEL=test-vl", "OCR_MODEL_BASE_URL=" + fake.URL, "OCR_MODEL_API_KEY=sk-test",
		"OCR_JOBS_KEY=" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)),
		"OCR_JOBS_DIR=" + dir, "OCR_CALLBACK_HOSTS=" + hookHost, "OCR_WEBHOOK_SECRET=" + secretText,
	})

	submit := func(callback string) (int, jobs.Job, string) {
		t.Helper()
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		fw, _ := w.CreateFormFile("image", "page.png")
		fw.Write(distinctPages(1)[0])
		w.WriteField("callbackUrl", callback)
		w.Close()
		res, err := http.Post("http://"+c.addr+"/v1/jobs", w.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var j jobs.Job
		_ = json.Unmarshal(b, &j)
		return res.StatusCode, j, string(b)
	}

	// An unlisted host (localhost is the receiver, but not as listed) is refused, never called.
	stranger := strings.Replace(hook.URL, "127.0.0.1", "localhost", 1) + "/stranger"
	if st, _, b := submit(stranger); st != http.StatusUnprocessableEntity || !strings.Contains(b, `"callback_not_allowed"`) {
		t.Errorf("a callbackUrl to an unlisted host: %d %s, want 422 callback_not_allowed", st, b)
	}
	stLater, later, b := submit(hook.URL + "/later")
	if stLater != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs with a listed callback: %d %s", stLater, b)
	}
	stGone, gone, b := submit(hook.URL + "/gone")
	if stGone != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs with a listed callback: %d %s", stGone, b)
	}

	// The try after the 503 waits the Sender's first backoff (5 s, within a fifth either way),
	// River's schedule for it: longer than testwait's deadline allows on a loaded machine.
	waitFor(t, 60*time.Second, "the 503'd callback tried again and taken", func() bool { return len(rc.triesOf("/later")) >= 2 })
	// River's own record of the callbacks: the 503'd one completed at its second attempt, the
	// 410'd one cancelled after its first, never to be tried again.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "jobs.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	state := func(job string) (st string, attempt int) {
		err := db.QueryRow(`SELECT state, attempt FROM river_job WHERE kind = 'ocrdraft_callback' AND json_extract(args, '$.job') = ?`, job).Scan(&st, &attempt)
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		return st, attempt
	}
	testwait.For(t, "both callbacks finished in River", func() bool {
		a, _ := state(later.ID)
		g, _ := state(gone.ID)
		return a == "completed" && g == "cancelled"
	})
	if st, n := state(later.ID); st != "completed" || n != 2 {
		t.Errorf("the 503'd callback's River job is %s after %d attempts, want completed after 2", st, n)
	}
	if st, n := state(gone.ID); st != "cancelled" || n != 1 {
		t.Errorf("the 410'd callback's River job is %s after %d attempts, want cancelled after 1", st, n)
	}

	tries := rc.triesOf("/later")
	if len(tries) != 2 || tries[0].status != 503 || tries[1].status != 200 {
		t.Fatalf("the /later tries: %d", len(tries))
	}
	// Never sooner than the Sender's schedule says (a bound a loaded machine cannot break).
	if d := tries[1].at.Sub(tries[0].at); d < webhook.DefaultBaseDelay*4/5 {
		t.Errorf("the try after the 503 came %v after it, sooner than the Sender's first backoff, %v less a fifth", d, webhook.DefaultBaseDelay)
	}
	for i, try := range tries {
		if err := secret.Verify(try.header, try.body, time.Now(), webhook.DefaultTolerance); err != nil {
			t.Errorf("try %d: the signature does not verify: %v", i+1, err)
		}
		if try.header.Get(webhook.HeaderID) != tries[0].header.Get(webhook.HeaderID) || try.header.Get(webhook.HeaderID) == "" {
			t.Errorf("try %d: webhook-id %q, want the first try's %q", i+1, try.header.Get(webhook.HeaderID), tries[0].header.Get(webhook.HeaderID))
		}
		var j jobs.Job
		if err := json.Unmarshal(try.body, &j); err != nil || j.ID != later.ID || j.Status != jobs.Succeeded || j.Result == nil || len(j.Result.Draft.Indicators) != 1 {
			t.Errorf("try %d: the body is not the finished job %s (%v): %.200s", i+1, later.ID, err, try.body)
		}
	}
	// A body changed on the way does not verify.
	if err := secret.Verify(tries[1].header, append(bytes.Clone(tries[1].body), ' '), time.Now(), webhook.DefaultTolerance); err == nil {
		t.Error("a changed body verifies")
	}
	if g := rc.triesOf("/gone"); len(g) != 1 || g[0].status != 410 {
		t.Errorf("the /gone callback was tried %d times, want once", len(g))
	}
	if s := rc.triesOf("/stranger"); len(s) != 0 {
		t.Errorf("the unlisted host was contacted %d times", len(s))
	}
	if s := c.log.String(); strings.Contains(s, "/later") || strings.Contains(s, "/gone") || strings.Contains(s, "总胆固醇") {
		t.Errorf("the server's log holds a callback URL or report text:\n%s", s)
	}
}

// waitFor polls cond until it holds, failing the test at d with what it waited for.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
