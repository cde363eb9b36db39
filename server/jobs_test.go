package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/jobs"
	"github.com/ocrdraft/ocrdraft/problem"
)

func openJobs(t testing.TB, ext *extract.Service, allow func(string) error) *jobs.Service {
	t.Helper()
	svc, err := jobs.Open(context.Background(), jobs.Config{
		Reader: ext, Dir: t.TempDir(), Key: bytes.Repeat([]byte{1}, jobs.KeySize),
		PollInterval: 50 * time.Millisecond, AllowCallback: allow,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = svc.Close(ctx)
	})
	return svc
}

// poll GETs a job until it has finished.
func (e *env) poll(t *testing.T, loc string, hdr http.Header) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		req := httptest.NewRequest(http.MethodGet, loc, nil)
		for k, v := range hdr {
			req.Header[k] = v
		}
		rec := e.do(req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", loc, rec.Code, rec.Body)
		}
		var j jobs.Job
		if err := json.Unmarshal(rec.Body.Bytes(), &j); err != nil {
			t.Fatal(err)
		}
		if j.Status == jobs.Succeeded || j.Status == jobs.Failed {
			if rec.Header().Get("Retry-After") != "" {
				t.Error("a finished job has a Retry-After")
			}
			return j
		}
		// A second, queued or running: a progress line polling it sees the pages counted.
		if ra := rec.Header().Get("Retry-After"); ra != "1" {
			t.Errorf("a %s job has Retry-After %q, want 1", j.Status, ra)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still %s: %d of %d", loc, j.Status, j.PagesDone, j.Pages)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJobRoutes: a job accepted (202, Location, Retry-After), polled to its end, answers the
// body /v1/extract answers for the same pages, in the caller's language; every answer matches
// openapi.yaml (env.do).
func TestJobRoutes(t *testing.T) {
	e := newEnv(t, options{jobs: true})
	e.model.Default(fakeopenai.Reply(string(earlierFile(t, "2655a00-readme-lipid-panel.txt"))))
	req := form(t, map[string]string{"sex": "female"}, page, page)
	req.URL.Path = "/v1/jobs"
	req.Header.Set("Accept-Language", "en")
	rec := e.do(req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs: %d %s", rec.Code, rec.Body)
	}
	loc := rec.Header().Get("Location")
	var j jobs.Job
	if err := json.Unmarshal(rec.Body.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if loc != "/v1/jobs/"+j.ID || rec.Header().Get("Retry-After") == "" || j.Pages != 2 {
		t.Fatalf("accepted: Location %q, Retry-After %q, %+v", loc, rec.Header().Get("Retry-After"), j)
	}
	done := e.poll(t, loc, http.Header{"Accept-Language": {"en"}})
	if done.Status != jobs.Succeeded || done.PagesDone != 2 {
		t.Fatalf("finished: %+v", done)
	}
	sync := form(t, map[string]string{"sex": "female"}, page, page)
	sync.Header.Set("Accept-Language", "en")
	want := e.do(sync)
	if want.Code != http.StatusOK {
		t.Fatal(want.Code, want.Body)
	}
	if a, b := strip(t, want.Body.Bytes()), strip(t, mustJSON(t, done.Result)); a != b {
		t.Errorf("the job's result differs from /v1/extract's:\n%s\n%s", b, a)
	}

	del := httptest.NewRequest(http.MethodDelete, loc, nil)
	if rec := e.do(del); rec.Code != http.StatusNoContent {
		t.Errorf("DELETE: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do(httptest.NewRequest(http.MethodGet, loc, nil)); rec.Code != http.StatusNotFound || problemOf(t, rec).Code != problem.JobNotFound {
		t.Errorf("GET after DELETE: %d %s", rec.Code, rec.Body)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// strip is a response's JSON without meta.durationMs, which differs between two readings.
func strip(t *testing.T, b []byte) string {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	delete(v["meta"].(map[string]any), "durationMs")
	return string(mustJSON(t, v))
}

// TestJobRefusals: no jobs configured is 503; another key's job 404; an Idempotency-Key with
// another body 422 and with the same body the same job; a callback to a host not allowed 422;
// a broken page /v1/extract's problem.
func TestJobRefusals(t *testing.T) {
	none := newEnv(t, options{})
	req := form(t, nil, page)
	req.URL.Path = "/v1/jobs"
	if rec := none.do(req); rec.Code != http.StatusServiceUnavailable || problemOf(t, rec).Code != problem.JobsNotConfigured {
		t.Errorf("no jobs: %d %s", rec.Code, rec.Body)
	}

	e := newEnv(t, options{jobs: true, apiKeys: []string{"key-a", "key-b"}, allowCallback: func(u string) error {
		if u != "https://hooks.example/done" {
			return errors.New("not allowed")
		}
		return nil
	}})
	post := func(key, idem string, fields map[string]string, pages ...[]byte) *httptest.ResponseRecorder {
		req := form(t, fields, pages...)
		req.URL.Path = "/v1/jobs"
		req.Header.Set("Authorization", "Bearer "+key)
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		return e.do(req)
	}
	first := post("key-a", "doc-1", nil, page)
	if first.Code != http.StatusAccepted {
		t.Fatal(first.Code, first.Body)
	}
	loc := first.Header().Get("Location")
	get := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, loc, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		return e.do(req)
	}
	if rec := get("key-b"); rec.Code != http.StatusNotFound {
		t.Errorf("another key's GET: %d", rec.Code)
	}
	if rec := get("key-a"); rec.Code != http.StatusOK {
		t.Errorf("its key's GET: %d", rec.Code)
	}
	if again := post("key-a", "doc-1", nil, page); again.Header().Get("Location") != loc || (again.Code != http.StatusAccepted && again.Code != http.StatusOK) {
		t.Errorf("the same key and body: %d %s, want %s", again.Code, again.Header().Get("Location"), loc)
	}
	if rec := post("key-a", "doc-1", nil, page, page); rec.Code != http.StatusUnprocessableEntity || problemOf(t, rec).Code != problem.IdempotencyKeyReused {
		t.Errorf("the same key, another body: %d %s", rec.Code, rec.Body)
	}
	if rec := post("key-b", "doc-1", nil, page); rec.Code != http.StatusAccepted || rec.Header().Get("Location") == loc {
		t.Errorf("another key's own doc-1: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	if rec := post("key-a", "", map[string]string{"callbackUrl": "http://169.254.169.254/"}, page); rec.Code != http.StatusUnprocessableEntity || problemOf(t, rec).Code != problem.CallbackNotAllowed {
		t.Errorf("a callback not allowed: %d %s", rec.Code, rec.Body)
	}
	if rec := post("key-a", "", map[string]string{"callbackUrl": "https://hooks.example/done"}, page); rec.Code != http.StatusAccepted {
		t.Errorf("a callback allowed: %d %s", rec.Code, rec.Body)
	}
	if rec := post("key-a", "", nil, []byte("not an image")); rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("not an image: %d %s", rec.Code, rec.Body)
	}
}

// TestJobPageImages: include=pageImages on a job is honoured as /v1/extract honours it (the
// same images in the result), and is part of what an Idempotency-Key names.
func TestJobPageImages(t *testing.T) {
	e := newEnv(t, options{jobs: true})
	e.model.Default(fakeopenai.Reply(lipid))
	post := func(path, idem string, fields map[string]string) *httptest.ResponseRecorder {
		req := form(t, fields, page)
		req.URL.Path = path
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		return e.do(req)
	}
	rec := post("/v1/jobs", "doc-1", map[string]string{"include": "pageImages"})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs include=pageImages: %d %s", rec.Code, rec.Body)
	}
	done := e.poll(t, rec.Header().Get("Location"), nil)
	want := post("/v1/extract", "", map[string]string{"include": "pageImages"})
	var res extract.Response
	if err := json.Unmarshal(want.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if done.Result == nil || len(done.Result.PageImages) != 1 || len(res.PageImages) != 1 {
		t.Fatalf("page images: job %+v, extract %d", done.Result, len(res.PageImages))
	}
	if g, w := done.Result.PageImages[0], res.PageImages[0]; !bytes.Equal(g.Data, w.Data) || g.MediaType != w.MediaType || g.Width != w.Width || g.Height != w.Height || g.Page != 1 {
		t.Errorf("the job's page image %d %s %dx%d, extract's %d %s %dx%d", g.Page, g.MediaType, g.Width, g.Height, w.Page, w.MediaType, w.Width, w.Height)
	}
	if rec := post("/v1/jobs", "doc-1", nil); rec.Code != http.StatusUnprocessableEntity || problemOf(t, rec).Code != problem.IdempotencyKeyReused {
		t.Errorf("the same key and pages without include=pageImages: %d %s", rec.Code, rec.Body)
	}
	if rec := post("/v1/jobs", "doc-1", map[string]string{"include": "pageImages"}); rec.Code != http.StatusOK {
		t.Errorf("the same key and body again: %d %s", rec.Code, rec.Body)
	}
	// The JSON form asks the same with its include member.
	body, _ := json.Marshal(map[string]any{"images": []map[string]string{{"data": base64.StdEncoding.EncodeToString(page)}}, "include": []string{"pageImages"}})
	req := httptest.NewRequest(http.MethodPost, "/v1/jobs", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if rec := e.do(req); rec.Code != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs JSON include: %d %s", rec.Code, rec.Body)
	} else if j := e.poll(t, rec.Header().Get("Location"), nil); j.Result == nil || len(j.Result.PageImages) != 1 || !bytes.Equal(j.Result.PageImages[0].Data, res.PageImages[0].Data) {
		t.Errorf("a JSON job's page images: %+v", j.Result)
	}
}
