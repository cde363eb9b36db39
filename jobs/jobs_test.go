package jobs

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/pgtest"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
	"github.com/ocrdraft/ocrdraft/vision"
)

// onePage takes any upload as one page of its own bytes; a page starting with x is unreadable.
type onePage struct{}

func (onePage) Prepare(_ context.Context, data []byte) (intake.Page, error) {
	if len(data) == 0 || data[0] == 'x' {
		return intake.Page{}, problem.Errorf(problem.ImageUnreadable, "the file is empty")
	}
	w := []intake.Word{{Text: "5.86"}}
	return intake.Page{MIME: "image/png", Data: data, BytesIn: len(data), BytesOut: len(data), Text: w}, nil
}

// model answers a page by its bytes: "page N" gives a row of its own with a printed range that
// depends on the sex; "fail" is a model failure; the call count per page is kept.
type model struct {
	mu       sync.Mutex
	calls    map[string]int
	delay    time.Duration
	canceled int // calls whose context ended while they waited
}

func (m *model) Complete(ctx context.Context, req vision.Request) (vision.Reply, error) {
	page := string(req.Images[0].Bytes())
	m.mu.Lock()
	if m.calls == nil {
		m.calls = map[string]int{}
	}
	m.calls[page]++
	delay := m.delay
	m.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			m.mu.Lock()
			m.canceled++
			m.mu.Unlock()
			return vision.Reply{}, ctx.Err()
		}
	}
	if page == "fail" {
		return vision.Reply{}, problem.Errorf(problem.ModelUnavailable, "the model endpoint failed")
	}
	return vision.Reply{Model: "fake-vl", FinishReason: "stop", PromptTokens: 10, CompletionTokens: 5, Text: replyFor(page)}, nil
}

func (m *model) callsOf(page string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[page]
}

func replyFor(page string) string {
	return fmt.Sprintf(`{"title": "血常规", "hospital": null, "checkupDate": "2026-03-05", "indicators": [
		{"itemName": "血红蛋白 %s", "itemGroup": "血常规", "valueNum": 5.86, "unit": "g/L", "refText": "男：130-175；女：115-150", "printedFlag": null},
		{"itemName": "总胆固醇", "itemGroup": "血脂", "valueNum": 5.86, "unit": "mmol/L", "refText": "3.1-5.2", "printedFlag": null}]}`, page)
}

// backend is where a test's jobs are stored.
type backend struct {
	name string
	cfg  func(t testing.TB) Config
}

var cooldown = time.Duration(0)

var backends = []backend{
	{"sqlite", func(t testing.TB) Config { return Config{Dir: t.TempDir()} }},
	{"postgres", func(t testing.TB) Config { return Config{DatabaseURL: pgtest.URL(t)} }},
}

// env is a Service on a backend with a fake model, and the extract.Service it reads with.
type env struct {
	svc *Service
	ext *extract.Service
	m   *model
	cfg Config
}

func newEnv(t *testing.T, b backend, m *model, edit func(*Config)) *env {
	t.Helper()
	return newEnvTB(t, b, m, edit)
}

func newEnvTB(t testing.TB, b backend, m *model, edit func(*Config)) *env {
	t.Helper()
	if m == nil {
		m = &model{}
	}
	ext := extract.New(extract.Config{Model: m, Prep: onePage{}, ModelName: "fake-vl", Concurrency: 4})
	cfg := b.cfg(t)
	cfg.Reader, cfg.Key = ext, bytes.Repeat([]byte{7}, KeySize)
	cfg.PollInterval, cfg.AttemptTimeout = 50*time.Millisecond, 10*time.Second
	if edit != nil {
		edit(&cfg)
	}
	svc, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = svc.Close(ctx)
	})
	return &env{svc: svc, ext: ext, m: m, cfg: cfg}
}

func uploads(pages ...string) []*budget.Bytes {
	out := make([]*budget.Bytes, len(pages))
	for i, p := range pages {
		out[i] = budget.NewBytes([]byte(p), nil, 0)
	}
	return out
}

// wait polls a job until it is finished, for at most d.
func (e *env) wait(t *testing.T, owner, id string, d time.Duration) Job {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		j, err := e.svc.Get(context.Background(), owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == Succeeded || j.Status == Failed {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %v: %d of %d pages", id, j.Status, d, j.PagesDone, j.Pages)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJobIsExtract: a job's result is exactly what /v1/extract answers for the same pages,
// a failed page's page_failed warning and the patient's sex's range included, on both databases.
func TestJobIsExtract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b, nil, nil)
			pages := []string{"page 1", "fail", "page 3", "page 4", "page 5"}
			who := check.Context{Sex: schema.SexFemale}
			j, created, err := e.svc.Submit(context.Background(), Submission{Uploads: uploads(pages...), Who: who})
			if err != nil || !created {
				t.Fatal(created, err)
			}
			if j.Pages != len(pages) || (j.Status != Queued && j.Status != Running) || !strings.HasPrefix(j.ID, "job_") || len(j.ID) != 36 {
				t.Fatalf("accepted: %+v", j)
			}
			got := e.wait(t, "", j.ID, 20*time.Second)
			if got.Status != Succeeded || got.PagesDone != len(pages) || got.FinishedAt == nil || got.ExpiresAt == nil || got.Error != nil {
				t.Fatalf("finished: %+v", got)
			}
			want, err := e.ext.Extract(context.Background(), uploads(pages...), who)
			if err != nil {
				t.Fatal(err)
			}
			want.Text = nil
			opt := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".DurationMs" || p.Last().String() == ".Duration" }, cmp.Ignore())
			gj, _ := json.Marshal(got.Result)
			wj, _ := json.Marshal(want)
			var gv, wv map[string]any
			_ = json.Unmarshal(gj, &gv)
			_ = json.Unmarshal(wj, &wv)
			delete(gv["meta"].(map[string]any), "durationMs")
			delete(wv["meta"].(map[string]any), "durationMs")
			if d := cmp.Diff(wv, gv); d != "" {
				t.Errorf("job result differs from Extract's (-extract +job):\n%s", d)
			}
			if d := cmp.Diff(reasons(want.Warnings), reasons(got.Result.Warnings)); d != "" {
				t.Errorf("reasons differ: %s", d)
			}
			_ = opt
			for _, p := range pages {
				if n := e.m.callsOf(p); n != 2 { // once for the job, once for Extract
					t.Errorf("page %q read %d times, want once for the job", p, n-1)
				}
			}
			// Pages and readings are gone once the job is finished.
			for _, tb := range []string{"ocrdraft_job_page", "ocrdraft_job_read"} {
				var n int
				if err := e.svc.db.QueryRow(e.svc.d.q(`SELECT count(*) FROM `+tb+` WHERE job_id = ?`), j.ID).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s holds %d rows of the finished job (%v)", tb, n, err)
				}
			}
		})
	}
}

// TestOwners: a job is another key's 404, deleted is 404, and a refused document is
// /v1/extract's problem, with nothing left behind.
func TestOwners(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b, nil, nil)
			ctx := context.Background()
			a := Owner("key-a")
			j, _, err := e.svc.Submit(ctx, Submission{Owner: a, Uploads: uploads("page 1")})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Get(ctx, Owner("key-b"), j.ID); problem.CodeOf(err) != problem.JobNotFound {
				t.Errorf("another key's Get: %v", err)
			}
			if _, err := e.svc.Get(ctx, "", j.ID); problem.CodeOf(err) != problem.JobNotFound {
				t.Errorf("no key's Get: %v", err)
			}
			if err := e.svc.Delete(ctx, Owner("key-b"), j.ID); problem.CodeOf(err) != problem.JobNotFound {
				t.Errorf("another key's Delete: %v", err)
			}
			if err := e.svc.Delete(ctx, a, j.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Get(ctx, a, j.ID); problem.CodeOf(err) != problem.JobNotFound {
				t.Errorf("Get after Delete: %v", err)
			}
			if _, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1", "x-broken")}); problem.CodeOf(err) != problem.ImageUnreadable {
				t.Errorf("a broken page: %v", err)
			}
			var n int
			if err := e.svc.db.QueryRow(`SELECT count(*) FROM ocrdraft_job`).Scan(&n); err != nil || n != 0 {
				t.Errorf("%d jobs left (%v)", n, err)
			}
			if _, err := e.svc.Get(ctx, "", "job_nosuchjob"); problem.CodeOf(err) != problem.JobNotFound {
				t.Errorf("unknown: %v", err)
			}
		})
	}
}

// TestIdempotency: the same key and hash give the same job; another hash 422; a key in
// the middle of being accepted 409; another owner's same key is its own.
func TestIdempotency(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b, nil, nil)
			ctx := context.Background()
			sub := func(owner, key, hash string) (Job, bool, error) {
				return e.svc.Submit(ctx, Submission{Owner: owner, Key: key, Hash: []byte(hash), Uploads: uploads("page 1")})
			}
			j1, c1, err := sub("", "k1", "h1")
			if err != nil || !c1 {
				t.Fatal(c1, err)
			}
			j2, c2, err := sub("", "k1", "h1")
			if err != nil || c2 || j2.ID != j1.ID {
				t.Fatalf("again: %v %v %v", j2.ID, c2, err)
			}
			if _, _, err := sub("", "k1", "h2"); problem.CodeOf(err) != problem.IdempotencyKeyReused {
				t.Errorf("another body: %v", err)
			}
			j3, c3, err := sub(Owner("other"), "k1", "h1")
			if err != nil || !c3 || j3.ID == j1.ID {
				t.Errorf("another owner: %v %v %v", j3.ID, c3, err)
			}
			// A request still being accepted holds its key (the job finished first, so that no
			// page of it moves it on).
			e.wait(t, "", j1.ID, 20*time.Second)
			if _, err := e.svc.db.Exec(e.svc.d.q(`UPDATE ocrdraft_job SET status = ? WHERE id = ?`), string(accepting), j1.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, err := sub("", "k1", "h1"); problem.CodeOf(err) != problem.IdempotencyKeyInFlight {
				t.Errorf("in flight: %v", err)
			}
		})
	}
}

// TestSealed: what is stored holds no page byte, reply, value or patient context in the clear,
// and a record moved onto another page's place does not open.
func TestSealed(t *testing.T) {
	m := &model{delay: 300 * time.Millisecond}
	e := newEnv(t, backends[0], m, nil)
	ctx := context.Background()
	j, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("SECRETPAGE one", "SECRETPAGE two"), Who: check.Context{Sex: schema.SexFemale}})
	if err != nil {
		t.Fatal(err)
	}
	var box []byte
	if err := e.svc.db.QueryRow(`SELECT data FROM ocrdraft_job_page WHERE job_id = ? AND page = 1`, j.ID).Scan(&box); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.seal.open(box, ad(j.ID, "page", 2)); err == nil {
		t.Error("page 1's record opens as page 2's")
	}
	e.wait(t, "", j.ID, 20*time.Second)
	_ = e.svc.Close(ctx)
	for _, name := range []string{"jobs.db", "jobs.db-wal"} {
		b, err := os.ReadFile(filepath.Join(e.cfg.Dir, name))
		if err != nil {
			continue
		}
		for _, s := range []string{"SECRETPAGE", "血红蛋白", "5.86", "female", "总胆固醇"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q in the clear", name, s)
			}
		}
	}
}

// TestRetention: a finished job is gone after its retention, by the sweep, and a job left being
// accepted by a dead process too.
func TestRetention(t *testing.T) {
	e := newEnv(t, backends[0], nil, func(c *Config) { c.Retention = time.Minute })
	ctx := context.Background()
	j, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1")})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, "", j.ID, 20*time.Second)
	if _, err := e.svc.db.Exec(`INSERT INTO ocrdraft_job (id, owner, status, created_at) VALUES ('job_stale', '', ?, ?)`, string(accepting), ms(time.Now().Add(-time.Hour))); err != nil {
		t.Fatal(err)
	}
	e.svc.skew.Store(int64(2 * time.Minute))
	if _, err := e.svc.Get(ctx, "", j.ID); problem.CodeOf(err) != problem.JobNotFound {
		t.Errorf("an expired job: %v", err)
	}
	if err := e.svc.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := e.svc.db.QueryRow(`SELECT count(*) FROM ocrdraft_job`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d jobs left after the sweep (%v)", n, err)
	}
}

var _ = sql.ErrNoRows

// notes is a fake notifier: it keeps what it was sent, and fails the first fail tries.
type notes struct {
	mu   sync.Mutex
	fail int
	sent []note
}

type note struct {
	url, id string
	body    []byte
}

func (n *notes) Send(_ context.Context, url, id string, body []byte) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent = append(n.sent, note{url, id, body})
	if n.fail > 0 {
		n.fail--
		return asked{7 * time.Second}
	}
	return nil
}

// asked is a failed try whose receiver asked to wait (Retry-After), as webhook.Error says it.
type asked struct{ after time.Duration }

func (a asked) Error() string             { return "the receiver answered 503" }
func (a asked) RetryAfter() time.Duration { return a.after }

func (n *notes) all() []note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]note(nil), n.sent...)
}

// TestCallback: a finished job is sent to its callback URL, the body the Job a GET answers,
// its message id the same on every try, the try after a failed one when CallbackBackoff says,
// given the wait the receiver asked for;
// a callback URL not allowed is refused before anything is stored.
func TestCallback(t *testing.T) {
	n := &notes{fail: 1}
	var mu sync.Mutex
	var backoffs []string
	e := newEnv(t, backends[0], nil, func(c *Config) {
		c.Notifier = n
		c.CallbackBackoff = func(try int, after time.Duration) time.Duration {
			mu.Lock()
			backoffs = append(backoffs, fmt.Sprint(try, " ", after))
			mu.Unlock()
			return 10 * time.Millisecond
		}
		c.AllowCallback = func(u string) error {
			if !strings.HasPrefix(u, "https://hooks.example/") {
				return fmt.Errorf("host not allowed")
			}
			return nil
		}
	})
	ctx := context.Background()
	if _, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1"), Callback: "http://10.0.0.1/"}); problem.CodeOf(err) != problem.CallbackNotAllowed {
		t.Errorf("a host not allowed: %v", err)
	}
	j, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1", "page 2"), Callback: "https://hooks.example/done"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, "", j.ID, 20*time.Second)
	// River tries again after a failed try, when CallbackBackoff says.
	deadline := time.Now().Add(20 * time.Second)
	for len(n.all()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	sent := n.all()
	if len(sent) != 2 {
		t.Fatalf("%d tries sent, want 2 (one failed, one taken)", len(sent))
	}
	mu.Lock()
	if !slices.Equal(backoffs, []string{"1 7s"}) { // the receiver's Retry-After passed on
		t.Errorf("CallbackBackoff asked for the tries %q, want [1 7s]", backoffs)
	}
	mu.Unlock()
	for _, s := range sent {
		if s.url != "https://hooks.example/done" || s.id != sent[0].id || !strings.HasPrefix(s.id, "msg_") {
			t.Errorf("sent %s with id %s", s.url, s.id)
		}
	}
	var got Job
	if err := json.Unmarshal(sent[1].body, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != j.ID || got.Status != Succeeded || got.Result == nil || len(got.Result.Draft.Indicators) == 0 || got.Result.Warnings[0].Message == "" {
		t.Errorf("the callback's body: %s", sent[1].body)
	}
}

// TestFileMode: the SQLite database is the service's alone.
func TestFileMode(t *testing.T) {
	e := newEnv(t, backends[0], nil, nil)
	for name, want := range map[string]os.FileMode{"": 0o700, "jobs.db": 0o600} {
		fi, err := os.Stat(filepath.Join(e.cfg.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 && want&0o077 == 0 {
			t.Errorf("%s is %v, want %v", fi.Name(), fi.Mode().Perm(), want)
		}
	}
}

// TestDeleteCancels: DELETE of a running job stops its pages at the model (their contexts end)
// and the pages not started never reach it.
func TestDeleteCancels(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			m := &model{delay: time.Minute}
			e := newEnv(t, b, m, func(c *Config) { c.Concurrency = 2 })
			ctx := context.Background()
			j, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1", "page 2", "page 3", "page 4", "page 5")})
			if err != nil {
				t.Fatal(err)
			}
			calls := func() (n, canceled int) {
				m.mu.Lock()
				defer m.mu.Unlock()
				for _, c := range m.calls {
					n += c
				}
				return n, m.canceled
			}
			waitFor(t, "two pages at the model", func() bool { n, _ := calls(); return n == 2 })
			if err := e.svc.Delete(ctx, "", j.ID); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the two pages at the model cancelled", func() bool { _, c := calls(); return c == 2 })
			time.Sleep(500 * time.Millisecond) // room for a page that would start wrongly
			if n, _ := calls(); n != 2 {
				t.Errorf("%d model calls after the DELETE, want the 2 made before it", n)
			}
		})
	}
}

// waitFor polls cond for at most 15 s (River tells a running job of its cancellation within
// a poll of two seconds on SQLite).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOtherKey: a job stored with another OCR_JOBS_KEY fails, and lets its pages go, instead of
// being tried for ever.
func TestOtherKey(t *testing.T) {
	dir := t.TempDir()
	b := backend{"sqlite", func(testing.TB) Config { return Config{Dir: dir} }}
	m := &model{delay: time.Minute}
	first := newEnv(t, b, m, func(c *Config) { c.Concurrency = 1 })
	ctx := context.Background()
	j, _, err := first.svc.Submit(ctx, Submission{Uploads: uploads("page 1", "page 2")})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	_ = first.svc.Close(cctx) // page 1 given back at the model, page 2 never started
	cancel()
	second := newEnv(t, b, &model{}, func(c *Config) { c.Key = bytes.Repeat([]byte{8}, KeySize) })
	got := second.wait(t, "", j.ID, 20*time.Second)
	if got.Status != Failed || got.Error == nil || got.Error.Code != problem.Internal {
		t.Fatalf("a job of another key: %+v", got)
	}
	var n int
	if err := second.svc.db.QueryRow(`SELECT count(*) FROM ocrdraft_job_page`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d pages left (%v): %+v", n, err, got.Error)
	}
}

// TestSweepStuck: a job every page of which is read but whose finishing step was given up is
// finished by the sweep; one older than maxJobAge fails, and its pages go.
func TestSweepStuck(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			m := &model{delay: time.Minute}
			e := newEnv(t, b, m, func(c *Config) { c.Concurrency = 1 })
			ctx := context.Background()
			old, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1", "page 2")})
			if err != nil {
				t.Fatal(err)
			}
			e.svc.skew.Store(int64(maxJobAge + time.Minute))
			if err := e.svc.sweep(ctx); err != nil {
				t.Fatal(err)
			}
			j := e.wait(t, "", old.ID, 5*time.Second)
			if j.Status != Failed || j.Error == nil {
				t.Errorf("a job past maxJobAge: %+v", j)
			}
			var n int
			if err := e.svc.db.QueryRow(e.svc.d.q(`SELECT count(*) FROM ocrdraft_job_page WHERE job_id = ?`), old.ID).Scan(&n); err != nil || n != 0 {
				t.Errorf("%d pages of the failed job left (%v)", n, err)
			}
			e.svc.skew.Store(0)

			// A job of one page read, whose reading was kept but whose finishing step never ran.
			m.mu.Lock()
			m.delay = 0
			m.mu.Unlock()
			st, _ := encodeRead(e.ext.ReadPage(ctx, extract.Prepared{Data: []byte("page 9"), MIME: "image/png"}), nil)
			id := "job_stuck"
			if _, err := e.svc.db.Exec(e.svc.d.q(`INSERT INTO ocrdraft_job (id, owner, status, pages, pages_done, who, created_at) VALUES (?, '', ?, 1, 1, ?, ?)`),
				id, string(Running), e.svc.seal.seal([]byte(`{}`), ad(id, "who", 0)), ms(time.Now())); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.db.Exec(e.svc.d.q(`INSERT INTO ocrdraft_job_read (job_id, page, data) VALUES (?, 1, ?)`), id, e.svc.seal.seal(st, ad(id, "read", 1))); err != nil {
				t.Fatal(err)
			}
			if err := e.svc.sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if j := e.wait(t, "", id, 10*time.Second); j.Status != Succeeded || len(j.Result.Draft.Indicators) != 2 {
				t.Errorf("the stuck job after the sweep: %+v", j)
			}
		})
	}
}

// TestDirInUse: a second process on one SQLite directory is refused at its start (what a
// starting process finds running it takes for a dead process's, which holds only when it holds
// the directory alone); once the first has closed, the directory opens again.
func TestDirInUse(t *testing.T) {
	dir := t.TempDir()
	b := backend{"sqlite", func(testing.TB) Config { return Config{Dir: dir} }}
	first := newEnv(t, b, nil, nil)
	cfg := first.cfg
	if _, err := Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "in use by another") {
		t.Fatalf("a second Open of %s: %v, want it refused as in use", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := first.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	_ = again.Close(ctx)
}

// TestPageImages: a job asked for include=pageImages keeps its pages until it is finished and
// carries them in its result as /v1/extract does; every page read once; nothing kept after; pages
// past MaxPageImageBytes are refused at submission with nothing stored.
func TestPageImages(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b, nil, nil)
			ctx := context.Background()
			pages := []string{"page 1", "fail", "page 3"}
			j, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads(pages...), PageImages: true})
			if err != nil {
				t.Fatal(err)
			}
			got := e.wait(t, "", j.ID, 20*time.Second)
			if got.Status != Succeeded || got.Result == nil {
				t.Fatalf("finished: %+v", got)
			}
			want, err := e.ext.ExtractWith(ctx, uploads(pages...), check.Context{}, extract.Options{PageImages: true})
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			if d := cmp.Diff(want.PageImages, got.Result.PageImages); d != "" {
				t.Errorf("page images differ from Extract's (-extract +job):\n%s", d)
			}
			for _, p := range pages {
				if n := e.m.callsOf(p); n != 2 {
					t.Errorf("page %q read %d times, want once for the job", p, n-1)
				}
			}
			for _, tb := range []string{"ocrdraft_job_page", "ocrdraft_job_read"} {
				var n int
				if err := e.svc.db.QueryRow(e.svc.d.q(`SELECT count(*) FROM `+tb+` WHERE job_id = ?`), j.ID).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s holds %d rows of the finished job (%v)", tb, n, err)
				}
			}
			// Without it, the result carries none.
			j2, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1")})
			if err != nil {
				t.Fatal(err)
			}
			if g := e.wait(t, "", j2.ID, 20*time.Second); g.Result == nil || g.Result.PageImages != nil {
				t.Errorf("a job without include=pageImages: %+v", g.Result)
			}
		})
	}
	for _, b := range backends {
		t.Run(b.name+"/too large", func(t *testing.T) {
			e := newEnv(t, b, nil, func(c *Config) {
				c.Reader = extract.New(extract.Config{Model: &model{}, Prep: onePage{}, ModelName: "fake-vl", MaxPageImageBytes: 10})
			})
			ctx := context.Background()
			if _, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1", "page 2"), PageImages: true}); problem.CodeOf(err) != problem.PayloadTooLarge {
				t.Fatalf("12 bytes of pages past 10: %v", err)
			}
			for _, tb := range []string{"ocrdraft_job", "ocrdraft_job_page"} {
				var n int
				if err := e.svc.db.QueryRow(`SELECT count(*) FROM ` + tb).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s holds %d rows after the refusal (%v)", tb, n, err)
				}
			}
			var queued int
			if err := e.svc.db.QueryRow(`SELECT count(*) FROM river_job WHERE queue = '` + PagesQueue + `'`).Scan(&queued); err != nil || queued != 0 {
				t.Errorf("%d pages queued after the refusal (%v)", queued, err)
			}
			// Under the bound, the same pages are a job.
			if _, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1"), PageImages: true}); err != nil {
				t.Errorf("6 bytes: %v", err)
			}
		})
	}
}

// TestOldTable: a SQLite database made before ocrdraft_job gained its columns is given them.
func TestOldTable(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(dialect{}.schema()[0], "page_images BIGINT NOT NULL DEFAULT 0,", "", 1)
	if _, err := db.Exec(old); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e := newEnv(t, backend{"old", func(testing.TB) Config { return Config{Dir: dir} }}, nil, nil)
	j, _, err := e.svc.Submit(context.Background(), Submission{Uploads: uploads("page 1"), PageImages: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := e.wait(t, "", j.ID, 20*time.Second); g.Result == nil || len(g.Result.PageImages) != 1 {
		t.Errorf("on the old table: %+v", g)
	}
}

// TestPageImagesReadOnce: a page of a job that keeps its pages (include=pageImages) run again
// after its reading was kept (River ran it twice, or its process died before River heard) finds
// the reading and does not ask the model again.
func TestPageImagesReadOnce(t *testing.T) {
	m := &model{delay: time.Second}
	e := newEnv(t, backends[0], m, func(c *Config) { c.Concurrency = 1 })
	ctx := context.Background()
	j, _, err := e.svc.Submit(ctx, Submission{Uploads: uploads("page 1", "page 2"), PageImages: true})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		g, err := e.svc.Get(ctx, "", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g.PagesDone >= 1 {
			if g.Status != Running {
				t.Skipf("the job was %s before page 1 could be run again", g.Status)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("page 1 not read")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.svc.readPage(ctx, j.ID, 1, false); err != nil {
		t.Fatal(err)
	}
	if n := m.callsOf("page 1"); n != 1 {
		t.Errorf("page 1 was asked of the model %d times, want once", n)
	}
	g := e.wait(t, "", j.ID, 20*time.Second)
	if g.Status != Succeeded || len(g.Result.PageImages) != 2 {
		t.Fatalf("finished: %s, %d page images", g.Status, len(g.Result.PageImages))
	}
	n := 0
	for _, ind := range g.Result.Draft.Indicators {
		if ind.ItemName == "血红蛋白 page 1" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("page 1's row is in the result %d times, want once", n)
	}
}
