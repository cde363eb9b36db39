package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// pageWorker reads one page of a job. Its reading is stored once, by (job, page): a page read
// again (its process died after the model answered, or River ran it twice) finds its reading
// there and reads nothing, so no page is ever twice in a result.
type pageWorker struct {
	river.WorkerDefaults[pageArgs]
	s *Service
}

func (w *pageWorker) Timeout(*river.Job[pageArgs]) time.Duration { return w.s.cfg.AttemptTimeout }

func (w *pageWorker) Work(ctx context.Context, job *river.Job[pageArgs]) error {
	return w.s.unopened(ctx, job.Args.Job, w.s.readPage(ctx, job.Args.Job, job.Args.Page, job.Attempt >= job.MaxAttempts))
}

// unopened fails a job whose stored records do not open (OCR_JOBS_KEY changed, or the
// database was tampered with): no try would open them, and a job that never finishes would
// keep what it stored for ever. Other errors are River's to retry.
func (s *Service) unopened(ctx context.Context, id string, err error) error {
	if !errors.Is(err, errSealed) {
		return err
	}
	s.cfg.Logger.Error("job failed: its stored records do not open with OCR_JOBS_KEY", "job", id)
	doc, _ := json.Marshal(problem.From(problem.Errorf(problem.Internal, "the job's stored pages do not open with the service's key (OCR_JOBS_KEY changed); submit the document again")))
	now := s.now()
	ctx = context.WithoutCancel(ctx)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET status = ?, error = ?, finished_at = ?, expires_at = ?, who = NULL WHERE id = ? AND status IN (?, ?, ?)`),
		string(Failed), string(doc), ms(now), ms(now.Add(s.cfg.Retention)), id, string(Queued), string(Running), string(accepting)); err != nil {
		return err
	}
	for _, t := range []string{"ocrdraft_job_read", "ocrdraft_job_page"} {
		if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM `+t+` WHERE job_id = ?`), id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *Service) readPage(ctx context.Context, id string, page int, last bool) error {
	var status string
	var pages, images int
	err := s.db.QueryRowContext(ctx, s.d.q(`SELECT status, pages, page_images FROM ocrdraft_job WHERE id = ?`), id).Scan(&status, &pages, &images)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // deleted: nothing to read for
	}
	if err != nil {
		return err
	}
	if st := Status(status); st != Queued && st != Running && st != accepting {
		return nil
	}
	if images != 0 {
		// Its page stays for the result (include=pageImages): a reading kept says it was read.
		var n int
		if err := s.db.QueryRowContext(ctx, s.d.q(`SELECT count(*) FROM ocrdraft_job_read WHERE job_id = ? AND page = ?`), id, page).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return s.finishIfDone(ctx, id)
		}
	}
	var box []byte
	err = s.db.QueryRowContext(ctx, s.d.q(`SELECT data FROM ocrdraft_job_page WHERE job_id = ? AND page = ?`), id, page).Scan(&box)
	if errors.Is(err, sql.ErrNoRows) {
		return s.finishIfDone(ctx, id) // read before (the page goes with its reading), or deleted
	}
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET status = ? WHERE id = ? AND status IN (?, ?)`), string(Running), id, string(Queued), string(accepting)); err != nil {
		return err
	}
	b, err := s.seal.open(box, ad(id, "page", page))
	if err != nil {
		return err
	}
	var sp storedPage
	if err := json.Unmarshal(b, &sp); err != nil {
		return err
	}
	r := s.cfg.Reader.ReadPage(ctx, extract.Prepared{Data: sp.Data, MIME: sp.MIME, BytesIn: sp.BytesIn, BytesOut: sp.BytesOut, Width: sp.Width, Height: sp.Height, Text: sp.Text})
	if ctx.Err() != nil && !last {
		// Cut short (the attempt's deadline, or the process stopping): read again, rather
		// than a page_failed that a second try might not give.
		return ctx.Err()
	}
	rb, err := encodeRead(r, sp.Text)
	if err != nil {
		return err
	}
	if err := s.keep(context.WithoutCancel(ctx), id, page, s.seal.seal(rb, ad(id, "read", page)), images != 0); err != nil {
		return err
	}
	return s.finishIfDone(context.WithoutCancel(ctx), id)
}

// keep stores a page's reading once, counts it, and lets the page's image go (unless the
// result is to carry it, kept), in one transaction; a job deleted meanwhile keeps nothing.
func (s *Service) keep(ctx context.Context, id string, page int, box []byte, kept bool) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The job's row first (see drop); the count is rolled back with the reading if it was
	// kept before.
	res, err := tx.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET pages_done = pages_done + 1 WHERE id = ? AND status IN (?, ?, ?)`), id, string(Queued), string(Running), string(accepting))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // deleted, or finished: roll back
	}
	res, err = tx.ExecContext(ctx, s.d.q(`INSERT INTO ocrdraft_job_read (job_id, page, data) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`), id, page, box)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // read and kept before: roll back the count
	}
	if kept {
		return tx.Commit()
	}
	if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM ocrdraft_job_page WHERE job_id = ? AND page = ?`), id, page); err != nil {
		return err
	}
	return tx.Commit()
}

// finishIfDone queues the job's finishing step when every page is read. Pages ending together
// may both see it so: the step is unique by its job.
func (s *Service) finishIfDone(ctx context.Context, id string) error {
	var pages, done int
	err := s.db.QueryRowContext(ctx, s.d.q(`SELECT pages, pages_done FROM ocrdraft_job WHERE id = ? AND status IN (?, ?)`), id, string(Queued), string(Running)).Scan(&pages, &done)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if pages > 0 && done >= pages {
		return s.q.InsertFinish(ctx, id)
	}
	return nil
}

// finishWorker merges and checks a job's readings, stores its result and lets the readings go.
type finishWorker struct {
	river.WorkerDefaults[finishArgs]
	s *Service
}

func (w *finishWorker) Timeout(*river.Job[finishArgs]) time.Duration { return w.s.cfg.AttemptTimeout }

func (w *finishWorker) Work(ctx context.Context, job *river.Job[finishArgs]) error {
	return w.s.unopened(ctx, job.Args.Job, w.s.finish(ctx, job.Args.Job))
}

func (s *Service) finish(ctx context.Context, id string) error {
	r, err := scanRow(s.db.QueryRowContext(ctx, s.d.q(`SELECT `+rowColumns+` FROM ocrdraft_job WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if st := Status(r.status); st != Queued && st != Running {
		return nil
	}
	var who check.Context
	wb, err := s.seal.open(r.who, ad(id, "who", 0))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(wb, &who); err != nil {
		return err
	}
	reads := make([]extract.PageRead, r.pages)
	text := make([][]intake.Word, r.pages)
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT page, data FROM ocrdraft_job_read WHERE job_id = ? ORDER BY page`), id)
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		var page int
		var box []byte
		if err := rows.Scan(&page, &box); err != nil {
			rows.Close()
			return err
		}
		b, err := s.seal.open(box, ad(id, "read", page))
		if err != nil {
			rows.Close()
			return err
		}
		if page < 1 || page > r.pages {
			continue
		}
		if reads[page-1], text[page-1], err = decodeRead(b); err != nil {
			rows.Close()
			return err
		}
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if n != r.pages {
		return errors.New("jobs: finishing a job whose pages are not all read")
	}
	res, ferr := s.cfg.Reader.Finish(ctx, reads, text, who, time.UnixMilli(r.created))
	if ferr != nil && ctx.Err() != nil {
		return ferr // cut short: finish again
	}
	if ferr == nil && r.pageImages {
		if res.PageImages, err = s.pageImages(ctx, id, r.pages); err != nil {
			return err
		}
	}
	now := s.now()
	status, result, errDoc := Succeeded, []byte(nil), sql.NullString{}
	if ferr != nil {
		status = Failed
		if problem.CodeOf(ferr) == problem.Internal {
			s.cfg.Logger.Error("job failed", "job", id, "err", ferr)
		}
		doc, err := json.Marshal(problem.From(ferr))
		if err != nil {
			return err
		}
		errDoc = sql.NullString{String: string(doc), Valid: true}
	} else {
		res.Text = nil
		b, err := json.Marshal(storedResponse{Response: res, Reasons: reasons(res.Warnings)})
		if err != nil {
			return err
		}
		result = s.seal.seal(b, ad(id, "result", 0))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	up, err := tx.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET status = ?, result = ?, error = ?, finished_at = ?, expires_at = ?, who = NULL
		WHERE id = ? AND status IN (?, ?)`), string(status), result, errDoc, ms(now), ms(now.Add(s.cfg.Retention)), id, string(Queued), string(Running))
	if err != nil {
		return err
	}
	if k, _ := up.RowsAffected(); k == 0 {
		return nil
	}
	for _, t := range []string{"ocrdraft_job_read", "ocrdraft_job_page"} {
		if _, err := tx.ExecContext(ctx, s.d.q(`DELETE FROM `+t+` WHERE job_id = ?`), id); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if r.callback != "" && s.cfg.Notifier != nil {
		return s.q.InsertCallback(ctx, id)
	}
	return nil
}

// pageImages opens a job's kept pages (include=pageImages) as its result carries them: at most
// the MaxPageImageBytes its submission was held to, in memory for the finishing step alone.
func (s *Service) pageImages(ctx context.Context, id string, pages int) ([]schema.SentImage, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT page, data FROM ocrdraft_job_page WHERE job_id = ? ORDER BY page`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	prepared := make([]extract.Prepared, 0, pages)
	for rows.Next() {
		var page int
		var box []byte
		if err := rows.Scan(&page, &box); err != nil {
			return nil, err
		}
		b, err := s.seal.open(box, ad(id, "page", page))
		if err != nil {
			return nil, err
		}
		var sp storedPage
		if err := json.Unmarshal(b, &sp); err != nil {
			return nil, err
		}
		if page != len(prepared)+1 {
			return nil, errors.New("jobs: a kept page of the job is missing")
		}
		prepared = append(prepared, extract.Prepared{Data: sp.Data, MIME: sp.MIME, Width: sp.Width, Height: sp.Height})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(prepared) != pages {
		return nil, errors.New("jobs: a kept page of the job is missing")
	}
	return extract.PageImages(prepared), nil
}

// callbackWorker posts a finished job to its callback URL, its webhook-id the same for every
// try; River tries again with backoff when a try fails, the Sender within a try.
type callbackWorker struct {
	river.WorkerDefaults[callbackArgs]
	s *Service
	// asked holds, by River job id, the wait a failed try's receiver asked for (Retry-After),
	// from Work to the NextRetry River calls after it in the same process.
	asked sync.Map
}

func (w *callbackWorker) Timeout(*river.Job[callbackArgs]) time.Duration {
	return w.s.cfg.AttemptTimeout
}

// NextRetry schedules the try after a failed one by Config.CallbackBackoff (a zero time:
// River's own schedule).
func (w *callbackWorker) NextRetry(job *river.Job[callbackArgs]) time.Time {
	if w.s.cfg.CallbackBackoff == nil {
		return time.Time{}
	}
	var after time.Duration
	if a, ok := w.asked.LoadAndDelete(job.ID); ok {
		after = a.(time.Duration)
	}
	return time.Now().Add(w.s.cfg.CallbackBackoff(job.Attempt, after))
}

func (w *callbackWorker) Work(ctx context.Context, job *river.Job[callbackArgs]) error {
	s := w.s
	r, err := scanRow(s.db.QueryRowContext(ctx, s.d.q(`SELECT `+rowColumns+` FROM ocrdraft_job WHERE id = ?`), job.Args.Job))
	if errors.Is(err, sql.ErrNoRows) {
		return nil // deleted or expired: nothing to tell
	}
	if err != nil {
		return err
	}
	j, err := s.job(ctx, r)
	if err != nil {
		return err
	}
	Localize(&j, msg.FromAcceptLanguage("", s.cfg.Lang))
	body, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := s.cfg.Notifier.Send(ctx, r.callback, "msg_"+r.id, body); err != nil {
		// The Sender's error may quote the URL's answer: neither is kept.
		if errors.Is(err, ErrCallbackRefused) {
			return river.JobCancel(ErrCallbackRefused)
		}
		if wa, ok := errors.AsType[waitAsker](err); ok && wa.RetryAfter() > 0 && job.Attempt < job.MaxAttempts {
			w.asked.Store(job.ID, wa.RetryAfter()) // taken by NextRetry, which River calls only for a try to come
		}
		return errors.New("jobs: the callback was not taken")
	}
	return nil
}

// sweepWorker deletes what has expired: finished jobs past their retention, jobs left being
// accepted by a process that died, and anything of a job no longer there or finished. It also
// queues again the finishing step of a job every page of which is read (the step given up after
// its tries), and fails a job not finished within maxJobAge, so that nothing stored of a job is
// kept for ever.
type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	s *Service
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	return w.s.sweep(ctx)
}

// maxJobAge is the longest a job may take, from its acceptance: far beyond a document's
// reading (100 pages of 2 minutes each at the least concurrency, 1, is 3 h 20 min).
const maxJobAge = 24 * time.Hour

func (s *Service) sweep(ctx context.Context) error {
	now := ms(s.now())
	if _, err := s.db.ExecContext(ctx, s.d.q(`DELETE FROM ocrdraft_job WHERE expires_at <= ? OR (status = ? AND created_at <= ?)`),
		now, string(accepting), now-acceptWindow.Milliseconds()); err != nil {
		return err
	}
	doc, _ := json.Marshal(problem.From(problem.Errorf(problem.Internal, "the job did not finish within %v; submit the document again", maxJobAge)))
	if _, err := s.db.ExecContext(ctx, s.d.q(`UPDATE ocrdraft_job SET status = ?, error = ?, finished_at = ?, expires_at = ?, who = NULL
		WHERE status IN (?, ?) AND created_at <= ?`), string(Failed), string(doc), now, now+s.cfg.Retention.Milliseconds(),
		string(Queued), string(Running), now-maxJobAge.Milliseconds()); err != nil {
		return err
	}
	for _, t := range []string{"ocrdraft_job_page", "ocrdraft_job_read"} {
		if _, err := s.db.ExecContext(ctx, s.d.q(`DELETE FROM `+t+` WHERE job_id NOT IN (SELECT id FROM ocrdraft_job WHERE status IN (?, ?, ?))`),
			string(Queued), string(Running), string(accepting)); err != nil {
			return err
		}
	}
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT id FROM ocrdraft_job WHERE status IN (?, ?) AND pages > 0 AND pages_done >= pages`), string(Queued), string(Running))
	if err != nil {
		return err
	}
	var done []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		done = append(done, id)
	}
	rows.Close() // before River's inserts: SQLite has one connection
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range done {
		if err := s.q.InsertFinish(ctx, id); err != nil {
			return err
		}
	}
	return nil
}
