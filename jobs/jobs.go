// Package jobs reads long documents in the background (issue 23): a job's pages are prepared
// once when it is accepted, stored sealed (AES-GCM, OCR_JOBS_KEY) in a database, each read as a
// job of its own on River's queue, so that progress is real and a restart resumes the pages not
// read, and finished, once every page is read, by one step that merges and checks them exactly
// as /v1/extract does.
//
// Why River and not a queue of our own: the issue chose it. It runs on the embedded SQLite
// (modernc.org/sqlite, pure Go, so go run ./cmd/ocrdraft serve still needs nothing) and on
// Postgres, where several replicas share one queue; it brings what a home-made queue would get
// wrong first: locking a job to one worker, retries with backoff, rescuing the jobs of a
// process that died, unique jobs, periodic jobs, and its own migrations.
package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/problem"
)

// Reader does a report's work in its steps: *extract.Service is one.
type Reader interface {
	Prepare(ctx context.Context, uploads []*budget.Bytes, maxPages int) ([]extract.Prepared, error)
	ReadPage(ctx context.Context, p extract.Prepared) extract.PageRead
	Finish(ctx context.Context, reads []extract.PageRead, text [][]intake.Word, who check.Context, start time.Time) (extract.Response, error)
	// PageImagesFit refuses pages whose images a result may not carry (include=pageImages).
	PageImagesFit(pages []extract.Prepared) error
}

// notifier sends a finished job to its callback URL: internal/webhook's Sender (Standard
// Webhooks signing, retries, no redirects) is one. id is the message's id, the same for every
// try of one message.
// Its error may say how long the receiver asked to wait before the next try (a RetryAfter
// method, as webhook.Error's), which the next try's schedule is given (CallbackBackoff).
type notifier interface {
	Send(ctx context.Context, url, id string, body []byte) error
}

// waitAsker is a notifier's error that carries the receiver's Retry-After.
type waitAsker interface {
	error
	RetryAfter() time.Duration
}

// ErrCallbackRefused is what a notifier's error wraps when another try would not mend it (the
// receiver answered 4xx or a redirect, or the URL is no longer allowed): the callback is given up
// at once instead of being tried again.
var ErrCallbackRefused = errors.New("jobs: the callback was refused")

// Config assembles a Service. Zero fields take their defaults.
type Config struct {
	Reader Reader
	// Dir holds the SQLite database (jobs.db) when DatabaseURL is empty.
	Dir string
	// DatabaseURL, a postgres:// URL, puts the queue and the tables in Postgres (River's pgx
	// driver), shared by every replica.
	DatabaseURL string
	Key         []byte        // 32 bytes: AES-256-GCM for everything stored
	Retention   time.Duration // a finished job is kept this long; default 1h
	MaxPages    int           // pages of one job; default 100
	Concurrency int           // pages read at once by this process, across jobs; default 8
	// AttemptTimeout bounds one page's reading (default 2m), the finishing step's and one
	// callback try's; RescueAfter (default 3 × AttemptTimeout) is how long a page may be
	// running before River takes it for the work of a dead process and runs it again.
	AttemptTimeout time.Duration
	RescueAfter    time.Duration
	// ReplicaTimeout is, on Postgres, how long a replica may go without its heartbeat before
	// the pages it has running are taken up by another (replica.go); default 30s.
	ReplicaTimeout time.Duration
	// Sweep is how often expired jobs are deleted (default 1m).
	Sweep time.Duration
	// AllowCallback says whether a callbackUrl may be called (webhook.Allowed with
	// OCR_CALLBACK_HOSTS); nil refuses every callbackUrl.
	AllowCallback func(url string) error
	Notifier      notifier // nil: no callback is sent
	// CallbackBackoff is the wait after failed callback try n (1 for the first), given the
	// wait its receiver asked for (after, its Retry-After; 0 when it said nothing): River's
	// schedule of the next try, kept across restarts; nil leaves River's (n⁴ seconds). serve
	// gives the Sender's (webhook.Sender.Backoff: 5 s, tripled each time, up to 30 min, or
	// the receiver's longer Retry-After up to that).
	CallbackBackoff func(try int, after time.Duration) time.Duration
	Lang            string // the messages of a callback's body
	Logger          *slog.Logger
	// PollInterval is how often a worker looks for pages when no notice came (River's
	// FetchPollInterval; default River's 1s). Tests make it short.
	PollInterval time.Duration
	// FetchCooldown is the shortest time between two looks for pages (River's FetchCooldown;
	// default DefaultFetchCooldown, 1 ms, not River's 100 ms): a page waits for the next look
	// once a worker is free, so River's default adds up to 100 ms to every page read one after
	// another (BenchmarkQueueOverhead: 57 ms a page at 50 ms, 3.5 at 1 ms). River looks only
	// when a worker is free or a page was queued, so a look a millisecond is not a query a
	// millisecond: it is one per page.
	FetchCooldown time.Duration
}

// Defaults for Config's zero fields.
const (
	DefaultRetention      = time.Hour
	DefaultMaxPages       = 100
	DefaultConcurrency    = 8
	DefaultAttemptTimeout = 2 * time.Minute
	DefaultSweep          = time.Minute
	DefaultFetchCooldown  = time.Millisecond
	// pageAttempts is how many times River runs a page's reading: more only when the process
	// died or the database failed under it (a model's failure is the page's reading, a
	// page_failed warning, as in /v1/extract).
	pageAttempts = 3
	// acceptWindow is how long a job may stay being accepted before the sweep takes it for
	// one whose process died meanwhile.
	acceptWindow = 15 * time.Minute
)

// Status is where a job is.
type Status string

// The statuses.
const (
	Queued    Status = "queued"
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Canceled  Status = "canceled"
	// accepting is a job whose request is still being read and prepared: never shown (a
	// request with its Idempotency-Key meets it as idempotency_key_in_flight).
	accepting Status = "accepting"
)

// Statuses are a job's statuses, for the spec's enum.
var Statuses = []Status{Queued, Running, Succeeded, Failed, Canceled}

// Job is the job as the API shows it.
type Job struct {
	ID           string            `json:"id" desc:"The job's id: job_ and 32 characters of a random base32, unguessable."`
	Status       Status            `json:"status"`
	Pages        int               `json:"pages" desc:"The document's pages once split (a PDF's pages count one each); 0 until they are prepared."`
	PagesDone    int               `json:"pagesDone" desc:"Pages read so far, failed ones included (a failed page is a page_failed warning in the result)."`
	PagesSkipped int               `json:"pagesSkipped" desc:"Pages left unread because they hold no lab content; 0 for now."`
	CreatedAt    string            `json:"createdAt" format:"date-time" desc:"When the job was accepted."`
	FinishedAt   *string           `json:"finishedAt" format:"date-time" desc:"When it succeeded or failed; null before."`
	ExpiresAt    *string           `json:"expiresAt" format:"date-time" desc:"When it and its result are deleted (OCR_JOBS_RETENTION after it finished); null before it finished."`
	Result       *extract.Response `json:"result" desc:"When succeeded: exactly the body /v1/extract would have answered. Null otherwise."`
	Error        *problem.Document `json:"error" desc:"When failed: the problem /v1/extract would have answered. Null otherwise."`
}

// Submission is one request for a job.
type Submission struct {
	// Owner is who may see the job: a digest of the caller's key (Owner), "" when the API is open.
	Owner string
	// Key is the request's Idempotency-Key ("" for none) and Hash a digest of what it asks
	// (the pages, the patient's context, the callback): the same key and hash are the same job.
	Key  string
	Hash []byte
	// Uploads are taken over and closed, as extract.Service.Extract takes them.
	Uploads  []*budget.Bytes
	Who      check.Context
	Callback string
	// PageImages keeps the prepared pages until the job is finished and puts their images in
	// its result (include=pageImages), as /v1/extract's Response.PageImages.
	PageImages bool
}

// Owner is the stored owner of a caller's key: a digest, never the key.
func Owner(key string) string {
	if key == "" {
		return ""
	}
	d := sha256.Sum256([]byte("ocrdraft job owner\x00" + key))
	return hex.EncodeToString(d[:])
}

// Service accepts, runs and answers jobs.
type Service struct {
	cfg   Config
	db    *sql.DB
	d     dialect
	seal  *sealer
	q     queue
	close func()
	skew  atomic.Int64 // added to the clock, for tests of expiry
	// replica is this process's River client ID, and on Postgres its heartbeat's
	// (replica.go).
	replica string
}

// Open opens (and migrates) the database, and starts River's workers. Close stops them.
func Open(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Reader == nil {
		return nil, errors.New("jobs: no Reader")
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = DefaultMaxPages
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = DefaultAttemptTimeout
	}
	if cfg.RescueAfter <= cfg.AttemptTimeout {
		cfg.RescueAfter = 3 * cfg.AttemptTimeout
	}
	if cfg.ReplicaTimeout <= 0 {
		cfg.ReplicaTimeout = DefaultReplicaTimeout
	}
	if cfg.FetchCooldown <= 0 {
		cfg.FetchCooldown = DefaultFetchCooldown
	}
	if cfg.PollInterval > 0 && cfg.PollInterval < cfg.FetchCooldown {
		cfg.FetchCooldown = cfg.PollInterval
	}
	if cfg.Sweep <= 0 {
		cfg.Sweep = DefaultSweep
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	seal, err := newSealer(cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("jobs: OCR_JOBS_KEY: %w", err)
	}
	s := &Service{cfg: cfg, seal: seal, replica: newReplicaID()}
	if err := s.openQueue(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Close stops taking pages, waits up to ctx's end for those being read (a page cut short is
// read again after the restart), and closes the database.
func (s *Service) Close(ctx context.Context) error {
	err := s.q.Stop(ctx)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.q.StopAndCancel(cctx)
		cancel()
	}
	s.close()
	return err
}

// MaxPages is the page limit of one job.
func (s *Service) MaxPages() int { return s.cfg.MaxPages }

// RetryAfter is how long a caller should wait before polling a job again: a second, while it
// waits its turn or its pages are read, so that a person waiting on a progress line (ocrdraft
// extract -server, the review page) sees the pages counted as they are; a poll costs one row read.
func (s *Service) RetryAfter(Job) time.Duration { return time.Second }

var idText = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID is a job's id: 20 random bytes, 160 bits, as 32 characters of base32.
func newID() string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "job_" + idText.EncodeToString(b)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func (s *Service) now() time.Time { return time.Now().Add(time.Duration(s.skew.Load())) }

func stamp(v int64) string { return time.UnixMilli(v).UTC().Format(time.RFC3339) }

func notFound() error {
	return problem.Errorf(problem.JobNotFound, "no such job: it is unknown, was deleted or has expired")
}

// dbErr is a database failure: internal_error for the caller, the cause for the log (SQL
// errors name no health data: every value stored is sealed or a count).
func dbErr(err error) error {
	return &problem.Error{Code: problem.Internal, Detail: "internal error", Err: fmt.Errorf("jobs: database: %w", err)}
}

// Submit accepts a job: the callback checked, the idempotency key taken, the pages prepared
// (a document refused is refused here, with /v1/extract's problem), stored sealed and queued.
// created is false when the key and hash name a job accepted before, which is answered as it is.
func (s *Service) Submit(ctx context.Context, sub Submission) (j Job, created bool, err error) {
	defer func() {
		for _, up := range sub.Uploads {
			up.Close()
		}
	}()
	if sub.Callback != "" {
		if s.cfg.AllowCallback == nil {
			return Job{}, false, problem.Errorf(problem.CallbackNotAllowed, "callbackUrl is not allowed: this service allows no callback hosts (OCR_CALLBACK_HOSTS)")
		}
		if err := s.cfg.AllowCallback(sub.Callback); err != nil {
			return Job{}, false, &problem.Error{Code: problem.CallbackNotAllowed, Detail: "callbackUrl is not allowed: its host is not one this service calls back (OCR_CALLBACK_HOSTS)", Err: err}
		}
	}
	id := newID()
	now := s.now()
	var key any
	if sub.Key != "" {
		key = sub.Key
	}
	images := 0
	if sub.PageImages {
		images = 1
	}
	res, err := s.db.ExecContext(ctx, s.d.q(`INSERT INTO ocrdraft_job (id, owner, idem_key, idem_hash, status, callback_url, page_images, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`), id, sub.Owner, key, sub.Hash, string(accepting), sub.Callback, images, ms(now))
	if err != nil {
		return Job{}, false, dbErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return s.again(ctx, sub)
	}
	accepted := false
	defer func() {
		if !accepted {
			s.drop(context.WithoutCancel(ctx), id)
		}
	}()
	pages, err := s.cfg.Reader.Prepare(ctx, sub.Uploads, s.cfg.MaxPages)
	sub.Uploads = nil // Prepare closed them
	if err != nil {
		return Job{}, false, err
	}
	if sub.PageImages {
		if err := s.cfg.Reader.PageImagesFit(pages); err != nil {
			return Job{}, false, err
		}
	}
	if err := s.store(ctx, id, pages, sub.Who); err != nil {
		return Job{}, false, err
	}
	n := len(pages)
	pages = nil
	ids, err := s.q.InsertPages(ctx, id, n)
	if err != nil {
		return Job{}, false, dbErr(err)
	}
	if _, err := s.db.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET river_ids = ? WHERE id = ?`), joinIDs(ids), id); err != nil {
		s.q.Cancel(context.WithoutCancel(ctx), ids)
		return Job{}, false, dbErr(err)
	}
	// A page may have started meanwhile (and made the job running): its pages are River's now.
	if _, err := s.db.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET status = ? WHERE id = ? AND status = ?`), string(Queued), id, string(accepting)); err != nil {
		s.q.Cancel(context.WithoutCancel(ctx), ids)
		return Job{}, false, dbErr(err)
	}
	accepted = true
	j, err = s.get(ctx, sub.Owner, id)
	return j, true, err
}

// store keeps a job's pages, sealed, and its patient context, in one transaction.
func (s *Service) store(ctx context.Context, id string, pages []extract.Prepared, who check.Context) error {
	w, err := json.Marshal(who)
	if err != nil {
		return dbErr(err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(err)
	}
	defer tx.Rollback()
	for i, p := range pages {
		b, err := json.Marshal(storedPage{Data: p.Data, MIME: p.MIME, BytesIn: p.BytesIn, BytesOut: p.BytesOut, Width: p.Width, Height: p.Height, Text: p.Text})
		if err != nil {
			return dbErr(err)
		}
		if _, err := tx.ExecContext(ctx, s.d.q(`INSERT INTO ocrdraft_job_page (job_id, page, data) VALUES (?, ?, ?)`),
			id, i+1, s.seal.seal(b, ad(id, "page", i+1))); err != nil {
			return dbErr(err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET pages = ?, who = ? WHERE id = ?`),
		len(pages), s.seal.seal(w, ad(id, "who", 0)), id); err != nil {
		return dbErr(err)
	}
	if err := tx.Commit(); err != nil {
		return dbErr(err)
	}
	return nil
}

// again answers a request whose Idempotency-Key its owner used before.
func (s *Service) again(ctx context.Context, sub Submission) (Job, bool, error) {
	r, err := scanRow(s.db.QueryRowContext(ctx, s.d.q(`SELECT `+rowColumns+` FROM ocrdraft_job WHERE owner = ? AND idem_key = ?`), sub.Owner, sub.Key))
	if errors.Is(err, sql.ErrNoRows) { // deleted meanwhile: the key is free again
		return Job{}, false, &problem.Error{Code: problem.IdempotencyKeyInFlight, Detail: "a request with this Idempotency-Key was being accepted; retry", RetryAfter: time.Second}
	}
	if err != nil {
		return Job{}, false, dbErr(err)
	}
	if string(r.idemHash) != string(sub.Hash) {
		return Job{}, false, problem.Errorf(problem.IdempotencyKeyReused, "this Idempotency-Key was used with another request body: use a fresh key for another document")
	}
	if Status(r.status) == accepting {
		return Job{}, false, &problem.Error{Code: problem.IdempotencyKeyInFlight, Detail: "a request with this Idempotency-Key is still being accepted; retry after a moment", RetryAfter: time.Second}
	}
	j, err := s.job(ctx, r)
	return j, false, err
}

// Get answers a job of owner's.
func (s *Service) Get(ctx context.Context, owner, id string) (Job, error) {
	return s.get(ctx, owner, id)
}

func (s *Service) get(ctx context.Context, owner, id string) (Job, error) {
	if !strings.HasPrefix(id, "job_") || len(id) > 64 {
		return Job{}, notFound()
	}
	r, err := scanRow(s.db.QueryRowContext(ctx, s.d.q(`SELECT `+rowColumns+` FROM ocrdraft_job WHERE id = ? AND owner = ?`), id, owner))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, notFound()
	}
	if err != nil {
		return Job{}, dbErr(err)
	}
	if Status(r.status) == accepting || r.expires.Valid && r.expires.Int64 <= ms(s.now()) {
		return Job{}, notFound()
	}
	return s.job(ctx, r)
}

// job is the API's view of a row, its result opened.
func (s *Service) job(ctx context.Context, r row) (Job, error) {
	j := Job{ID: r.id, Status: Status(r.status), Pages: r.pages, PagesDone: r.done, PagesSkipped: r.skipped, CreatedAt: stamp(r.created)}
	if r.finished.Valid {
		t := stamp(r.finished.Int64)
		j.FinishedAt = &t
	}
	if r.expires.Valid {
		t := stamp(r.expires.Int64)
		j.ExpiresAt = &t
	}
	if r.errDoc.Valid {
		var doc problem.Document
		if err := json.Unmarshal([]byte(r.errDoc.String), &doc); err != nil {
			return Job{}, dbErr(err)
		}
		j.Error = &doc
	}
	if j.Status == Succeeded {
		var box []byte
		if err := s.db.QueryRowContext(ctx, s.d.q(`SELECT result FROM ocrdraft_job WHERE id = ?`), r.id).Scan(&box); err != nil {
			return Job{}, dbErr(err)
		}
		b, err := s.seal.open(box, ad(r.id, "result", 0))
		if err != nil {
			return Job{}, dbErr(err)
		}
		var st storedResponse
		if err := json.Unmarshal(b, &st); err != nil {
			return Job{}, dbErr(err)
		}
		withReasons(st.Response.Warnings, st.Reasons)
		j.Result = &st.Response
	}
	return j, nil
}

// Delete deletes a job of owner's and everything stored of it; its pages not read yet are not
// read, and a page being read is dropped when it ends.
func (s *Service) Delete(ctx context.Context, owner, id string) error {
	j, err := s.get(ctx, owner, id)
	if err != nil {
		return err
	}
	var ids string
	if err := s.db.QueryRowContext(ctx, s.d.q(`SELECT river_ids FROM ocrdraft_job WHERE id = ?`), id).Scan(&ids); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return dbErr(err)
	}
	if err := s.drop(ctx, id); err != nil {
		return err
	}
	if j.Status == Queued || j.Status == Running {
		// Its pages not read yet never run, and those at the model stop (their readings would
		// find no job to go to either way).
		s.q.Cancel(context.WithoutCancel(ctx), splitIDs(ids))
	}
	return nil
}

func joinIDs(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

func splitIDs(s string) []int64 {
	var ids []int64
	for _, f := range strings.Split(s, ",") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// drop deletes everything stored of a job.
func (s *Service) drop(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(err)
	}
	defer tx.Rollback()
	// The job's row first, as every transaction on a job takes it (keep, finish): taken in
	// another order, two of them deadlock on Postgres.
	if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM ocrdraft_job WHERE id = ?`), id); err != nil {
		return dbErr(err)
	}
	for _, t := range []string{"ocrdraft_job_page", "ocrdraft_job_read"} {
		if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM `+t+` WHERE job_id = ?`), id); err != nil {
			return dbErr(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return dbErr(err)
	}
	return nil
}

// Localize renders a job's warnings' messages in lang.
func Localize(j *Job, lang string) {
	if j.Result != nil {
		j.Result.Warnings = msg.Localize(j.Result.Warnings, lang)
	}
}
