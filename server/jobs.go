package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/jobs"
	"github.com/ocrdraft/ocrdraft/problem"
)

// Jobs runs long documents in the background (/v1/jobs): *jobs.Service is one.
type Jobs interface {
	Submit(ctx context.Context, sub jobs.Submission) (jobs.Job, bool, error)
	Get(ctx context.Context, owner, id string) (jobs.Job, error)
	Delete(ctx context.Context, owner, id string) error
	MaxPages() int
	RetryAfter(j jobs.Job) time.Duration
}

// JobRequest is the JSON form of POST /v1/jobs: /v1/extract's, and where to call back.
type JobRequest struct {
	Images      []PageImage     `json:"images" desc:"One image per page, in order (a PDF's pages count one each)."`
	Context     *RequestContext `json:"context,omitempty" desc:"What the caller knows about the patient, for the checks only; never sent to the model."`
	Include     []string        `json:"include,omitempty" desc:"What the job's result should carry besides the draft, as /v1/extract's include."`
	CallbackURL string          `json:"callbackUrl,omitempty" desc:"Where to POST the finished job (a Job, signed as Standard Webhooks say); its host must be one the operator allows (OCR_CALLBACK_HOSTS)."`
}

// ctxCallback is the callbackUrl a job's request named (multipart field or JSON member).
const ctxCallback = "ocrdraft.callback"

// maxCallbackURL bounds the callbackUrl read; maxIdempotencyKey the header's length.
const (
	maxCallbackURL    = 2048
	maxIdempotencyKey = 255
)

func (s *Server) jobsNotConfigured() error {
	return &problem.Error{Code: problem.JobsNotConfigured, Detail: s.cfg.JobsNotConfigured}
}

// owner is who the caller is for its jobs: a digest of its bearer key, "" when the API is open.
func (s *Server) owner(c echo.Context) string {
	if len(s.keys) == 0 {
		return ""
	}
	token, _ := bearer(c.Request().Header.Get(echo.HeaderAuthorization))
	return jobs.Owner(token)
}

// submitJob handles POST /v1/jobs: /v1/extract's body, read and prepared the same way (at most
// the jobs' page limit), stored and queued; 202 with the job and where to poll it.
func (s *Server) submitJob(c echo.Context) error {
	if s.cfg.Jobs == nil {
		return s.jobsNotConfigured()
	}
	key := c.Request().Header.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey || !plainKey(key) {
		return problem.Errorf(problem.InvalidRequest, "Idempotency-Key must be at most %d visible ASCII characters", maxIdempotencyKey)
	}
	held, err := s.readTurn(c, s.cfg.MaxRequestBytes)
	if err != nil {
		return err
	}
	defer held.Close()
	// The same reading as /v1/extract's, with the jobs' page limit in place of OCR_MAX_PAGES.
	js := *s
	js.cfg.MaxPages = max(s.cfg.MaxPages, s.cfg.Jobs.MaxPages())
	uploads, who, opts, err := js.images(c, held)
	if err != nil {
		return err
	}
	callback, _ := c.Get(ctxCallback).(string)
	// What the request asks, whatever its encoding (multipart boundaries differ between tries):
	// the pages' bytes in order, the patient's sex, the callback, the page images asked for.
	h := sha256.New()
	var n [8]byte
	size := int64(0)
	for _, up := range uploads {
		binary.BigEndian.PutUint64(n[:], uint64(up.Len()))
		h.Write(n[:])
		h.Write(up.Bytes())
		size += int64(up.Len())
	}
	h.Write([]byte("\x00sex=" + string(who.Sex) + "\x00callback=" + callback))
	if opts.PageImages { // only then: the hashes of jobs accepted before it stay as they were
		h.Write([]byte("\x00include=pageImages"))
	}
	held.Give(held.Held() - size)
	j, created, err := s.cfg.Jobs.Submit(c.Request().Context(), jobs.Submission{
		Owner: s.owner(c), Key: key, Hash: h.Sum(nil), Uploads: uploads, Who: who, Callback: callback,
		PageImages: opts.PageImages,
	})
	held.Close()
	if err != nil {
		return err
	}
	c.Set(ctxPages, j.Pages)
	status := http.StatusAccepted
	if !created && (j.Status == jobs.Succeeded || j.Status == jobs.Failed) {
		status = http.StatusOK
	}
	return s.answerJob(c, status, j)
}

// getJob handles GET /v1/jobs/{id}.
func (s *Server) getJob(c echo.Context) error {
	if s.cfg.Jobs == nil {
		return s.jobsNotConfigured()
	}
	j, err := s.cfg.Jobs.Get(c.Request().Context(), s.owner(c), c.Param("id"))
	if err != nil {
		return err
	}
	return s.answerJob(c, http.StatusOK, j)
}

// deleteJob handles DELETE /v1/jobs/{id}: the job stops and everything stored of it goes.
func (s *Server) deleteJob(c echo.Context) error {
	if s.cfg.Jobs == nil {
		return s.jobsNotConfigured()
	}
	if err := s.cfg.Jobs.Delete(c.Request().Context(), s.owner(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// answerJob writes a job: its Location, a Retry-After while it is not finished, its result's
// messages in the caller's language.
func (s *Server) answerJob(c echo.Context, status int, j jobs.Job) error {
	h := c.Response().Header()
	h.Set(echo.HeaderLocation, "/v1/jobs/"+j.ID)
	if j.Status == jobs.Queued || j.Status == jobs.Running {
		h.Set("Retry-After", strconv.Itoa(int((s.cfg.Jobs.RetryAfter(j)+time.Second-1)/time.Second)))
	}
	h.Add(echo.HeaderVary, "Accept-Language")
	jobs.Localize(&j, msg.FromAcceptLanguage(c.Request().Header.Get("Accept-Language"), s.cfg.Lang))
	if j.Result != nil {
		c.Set(ctxIndicators, len(j.Result.Draft.Indicators))
	}
	return c.JSON(status, j)
}

// plainKey reports whether an Idempotency-Key is visible ASCII (RFC 9110 token characters and
// more, never a control character).
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}
