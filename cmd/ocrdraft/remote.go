package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// pollWait bounds the wait between two looks at a job: a server's Retry-After within
// [least, most], def when it sends none. A variable for the tests.
var pollWait = struct{ least, def, most time.Duration }{500 * time.Millisecond, 2 * time.Second, 30 * time.Second}

// pollTimeout bounds one look at a job.
const pollTimeout = 30 * time.Second

// maxJobBody bounds an answer of the jobs API read into memory: a job, its result with it.
const maxJobBody = 64 << 20

// maxPollFailures is how many looks at a job in a row may fail (no answer, 429, 5xx) before
// extract gives up; the job goes on on the server.
const maxPollFailures = 5

// remote runs one report as a job on an ocrdraft server (POST /v1/jobs), waits for it, and
// prints what a local extract prints: the result, or the problem document and exit 1.
type remote struct {
	base          *url.URL
	key           string // bearer key; "" sends none
	lang          string // Accept-Language, so that the warnings are in the language a local run would use
	uploadTimeout time.Duration
	client        *http.Client
	stdout        io.Writer
	prog          *progressLine
}

// job is what extract reads of the jobs API's Job.
type job struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	Pages        int             `json:"pages"`
	PagesDone    int             `json:"pagesDone"`
	PagesSkipped int             `json:"pagesSkipped"`
	Result       json.RawMessage `json:"result"`
	Error        json.RawMessage `json:"error"`
}

// serverURL reads -server: an http or https URL of the server, its path (if any) the prefix
// of /v1/jobs.
func serverURL(v string) (*url.URL, error) {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("-server: want the server's http or https URL such as http://localhost:8080, got %q", v)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// jobBody is the multipart body of POST /v1/jobs and its Idempotency-Key. The key is this run's
// own (the files' digest and 16 random bytes): a run is a new reading, so that a report run again
// after a failed job, or with the model changed, is read again, never answered with the earlier
// job a key of the files alone would find. The parts are named by their page number, never by
// the file's name, which may be a patient's.
func jobBody(files [][]byte) (body []byte, contentType, key string, err error) {
	h := sha256.New()
	for _, f := range files {
		binary.Write(h, binary.BigEndian, uint64(len(f)))
		h.Write(f)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.SetBoundary("ocrdraft-" + sum[:48]); err != nil {
		return nil, "", "", err
	}
	for i, f := range files {
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", fmt.Sprintf(`form-data; name="image"; filename="page-%d"`, i+1))
		hdr.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(hdr)
		if err != nil {
			return nil, "", "", err
		}
		w.Write(f)
	}
	if err := mw.Close(); err != nil {
		return nil, "", "", err
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, "", "", err
	}
	return b.Bytes(), mw.FormDataContentType(), "ocrdraft-extract-" + sum[:16] + "-" + hex.EncodeToString(nonce[:]), nil
}

// run submits the files, waits for the job and prints its end. On ctx's end (Ctrl-C) it
// deletes the job, so that nothing of the report stays on the server.
func (r *remote) run(ctx context.Context, files [][]byte) error {
	defer r.prog.end()
	body, ctype, key, err := jobBody(files)
	if err != nil {
		return err
	}
	if len(files) == 1 {
		r.prog.say("sending the file")
	} else {
		r.prog.say("sending " + strconv.Itoa(len(files)) + " files")
	}
	uctx, cancel := context.WithTimeout(ctx, r.uploadTimeout)
	req, err := r.request(uctx, http.MethodPost, r.base.JoinPath("v1", "jobs").String(), bytes.NewReader(body))
	if err != nil {
		cancel()
		return err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Idempotency-Key", key)
	j, resp, err := r.do(req)
	cancel()
	if ctx.Err() != nil {
		// The server may have made the job without our hearing its id: it is read, and
		// deleted with everything of it at its expiry.
		return errors.New("interrupted before the server answered; if it made the job, it is read and then deleted at its expiry (OCR_JOBS_RETENTION after it ends)")
	}
	if err != nil {
		return err
	}
	loc, err := r.location(resp.Header.Get("Location"), j.ID)
	if err != nil {
		return err
	}
	wait := retryAfter(resp.Header)
	failures := 0
	for !ended(j.Status) {
		r.show(j)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return r.cancel(ctx, loc, j.ID)
		case <-t.C:
		}
		gctx, stop := context.WithTimeout(ctx, pollTimeout)
		req, err := r.request(gctx, http.MethodGet, loc, nil)
		if err != nil {
			stop()
			return err
		}
		next, resp, err := r.do(req)
		stop()
		switch {
		case ctx.Err() != nil:
			return r.cancel(ctx, loc, j.ID)
		case isTransient(err) && failures < maxPollFailures:
			failures++
			wait = min(2*max(wait, pollWait.def), pollWait.most)
			continue
		case err != nil:
			return err
		}
		j, failures, wait = next, 0, retryAfter(resp.Header)
	}
	r.prog.end()
	return r.finish(j)
}

// show puts a job's state on the progress line.
func (r *remote) show(j job) {
	switch {
	case j.Status == "queued":
		r.prog.say("job queued")
	case j.Pages == 0:
		r.prog.say("job preparing the pages")
	case j.PagesSkipped > 0:
		r.prog.say(fmt.Sprintf("page %d of %d read (%d without lab content skipped)", j.PagesDone, j.Pages, j.PagesSkipped))
	default:
		r.prog.pages(j.PagesDone, j.Pages)
	}
}

// finish prints an ended job as a local extract prints its end: the result, indented, or the
// problem document and exit 1. The result is printed as the server wrote it, re-indented
// only, so that every number keeps its digits.
func (r *remote) finish(j job) error {
	switch {
	case j.Status == "succeeded" && len(j.Result) > 0 && string(j.Result) != "null":
		return printRaw(r.stdout, j.Result)
	case len(j.Error) > 0 && string(j.Error) != "null":
		if err := printRaw(r.stdout, j.Error); err != nil {
			return err
		}
		return errFailed
	}
	if j.Status == "canceled" {
		return fmt.Errorf("job %s was canceled on the server", j.ID)
	}
	return fmt.Errorf("job %s ended %s without a result", j.ID, j.Status)
}

func printRaw(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return errors.New("the server's answer is not JSON")
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// cancel deletes the job after Ctrl-C, with a deadline of its own (ctx has ended).
func (r *remote) cancel(ctx context.Context, loc, id string) error {
	r.prog.end()
	dctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer stop()
	req, err := r.request(dctx, http.MethodDelete, loc, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = r.client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, maxJobBody))
			resp.Body.Close()
			if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
				err = fmt.Errorf("the server answered %s", resp.Status)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("interrupted; job %s could not be deleted (%v): DELETE %s yourself", id, err, loc)
	}
	return fmt.Errorf("interrupted; job %s deleted on the server", id)
}

func (r *remote) request(ctx context.Context, method, u string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	req.Header.Set("Accept-Language", r.lang)
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	return req, nil
}

// transient is a failure worth another look: no answer, 429 or 5xx.
type transient struct{ error }

// isTransient says whether err is one.
func isTransient(err error) bool {
	var t transient
	return errors.As(err, &t)
}

// do sends req and reads a Job from a 2xx answer. A problem document in another answer is
// printed and is errFailed (exit 1), as a local run's problem is; an answer that is no problem
// document is an error naming its status. A look at the job (GET) that got no answer, or 429
// or 5xx, is transient instead, for the poll to look again.
func (r *remote) do(req *http.Request) (job, *http.Response, error) {
	resp, err := r.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // said with the URL redacted below
		}
		return job{}, nil, transient{fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJobBody+1))
	switch {
	case err != nil:
		return job{}, nil, transient{fmt.Errorf("reading the answer to %s %s: %w", req.Method, req.URL.Redacted(), err)}
	case len(b) > maxJobBody:
		return job{}, nil, fmt.Errorf("the server's answer is longer than %d bytes", maxJobBody)
	}
	if resp.StatusCode/100 != 2 {
		if req.Method == http.MethodGet && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) {
			return job{}, resp, transient{fmt.Errorf("%s %s answered %s", req.Method, req.URL.Redacted(), resp.Status)}
		}
		if json.Valid(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
			if err := printRaw(r.stdout, b); err != nil {
				return job{}, nil, err
			}
			return job{}, nil, errFailed
		}
		return job{}, nil, fmt.Errorf("%s %s answered %s", req.Method, req.URL.Redacted(), resp.Status)
	}
	var j job
	if err := json.Unmarshal(b, &j); err != nil || j.ID == "" || j.Status == "" {
		return job{}, nil, fmt.Errorf("%s %s answered %s with no job in it", req.Method, req.URL.Redacted(), resp.Status)
	}
	return j, resp, nil
}

// location is where the job is polled: the answer's Location, on the server extract was
// given (the key is never sent elsewhere), else /v1/jobs/{id}.
func (r *remote) location(loc, id string) (string, error) {
	if loc == "" {
		return r.base.JoinPath("v1", "jobs", id).String(), nil
	}
	u, err := r.base.Parse(loc)
	if err == nil && strings.HasPrefix(loc, "/") && r.base.Path != "" && !strings.HasPrefix(loc, r.base.Path+"/") {
		u = r.base.JoinPath(loc) // a server behind a path prefix that its Location does not say
	}
	if err != nil || u.Scheme != r.base.Scheme || u.Host != r.base.Host {
		return "", fmt.Errorf("the server sent the job's Location %q, not on %s", loc, r.base.Host)
	}
	return u.String(), nil
}

// ended says whether a job's status is final.
func ended(status string) bool {
	switch status {
	case "succeeded", "failed", "canceled":
		return true
	}
	return false
}

// retryAfter is the wait a job's answer asks for, within pollWait.
func retryAfter(h http.Header) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || n < 0 {
		return pollWait.def
	}
	return min(max(time.Duration(n)*time.Second, pollWait.least), pollWait.most)
}
