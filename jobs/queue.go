package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // database/sql's "sqlite": pure Go, no cgo
)

// PagesQueue is River's queue of the jobs' pages: what an autoscaler counts (river_job rows of
// this queue not yet completed; deploy/kubernetes.yaml).
const PagesQueue = "ocrdraft_pages"

// River's queues: pages (Config.Concurrency at once in a process), and the short steps
// (finishing, sweeping) and callbacks apart, so that neither waits behind 60 pages.
const (
	queuePages     = PagesQueue
	queueSteps     = "ocrdraft_steps"
	queueCallbacks = "ocrdraft_callbacks"
)

type pageArgs struct {
	Job  string `json:"job"`
	Page int    `json:"page"`
}

func (pageArgs) Kind() string { return "ocrdraft_page" }

type finishArgs struct {
	Job string `json:"job"`
}

func (finishArgs) Kind() string { return "ocrdraft_finish" }

type callbackArgs struct {
	Job string `json:"job"`
}

func (callbackArgs) Kind() string { return "ocrdraft_callback" }

type sweepArgs struct{}

func (sweepArgs) Kind() string { return "ocrdraft_sweep" }

// queue is River's client, whichever its driver: the little of it the Service uses.
type queue interface {
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	InsertPages(ctx context.Context, job string, n int) ([]int64, error)
	Cancel(ctx context.Context, ids []int64)
	InsertFinish(ctx context.Context, job string) error
	InsertCallback(ctx context.Context, job string) error
}

type riverQueue[TTx any] struct{ c *river.Client[TTx] }

func (q riverQueue[TTx]) Stop(ctx context.Context) error          { return q.c.Stop(ctx) }
func (q riverQueue[TTx]) StopAndCancel(ctx context.Context) error { return q.c.StopAndCancel(ctx) }

// InsertPages queues a job's pages and returns their River ids, for Cancel.
func (q riverQueue[TTx]) InsertPages(ctx context.Context, job string, n int) ([]int64, error) {
	ps := make([]river.InsertManyParams, n)
	for i := range ps {
		ps[i] = river.InsertManyParams{Args: pageArgs{Job: job, Page: i + 1},
			InsertOpts: &river.InsertOpts{Queue: queuePages, MaxAttempts: pageAttempts}}
	}
	res, err := q.c.InsertMany(ctx, ps)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return ids, nil
}

// Cancel cancels River jobs: one not started never runs, and a running one's context is
// cancelled, in whichever process runs it (River tells it). Ids of jobs done are no matter.
func (q riverQueue[TTx]) Cancel(ctx context.Context, ids []int64) {
	for _, id := range ids {
		_, _ = q.c.JobCancel(ctx, id)
	}
}

// InsertFinish queues a job's finishing step once: unique by its arguments, so that two pages
// ending together, or a page read again after a restart, queue one.
func (q riverQueue[TTx]) InsertFinish(ctx context.Context, job string) error {
	_, err := q.c.Insert(ctx, finishArgs{Job: job}, &river.InsertOpts{Queue: queueSteps, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true}})
	return err
}

func (q riverQueue[TTx]) InsertCallback(ctx context.Context, job string) error {
	_, err := q.c.Insert(ctx, callbackArgs{Job: job}, &river.InsertOpts{Queue: queueCallbacks, MaxAttempts: 8, UniqueOpts: river.UniqueOpts{ByArgs: true}})
	return err
}

// openQueue opens the database (SQLite in Config.Dir, or Postgres), runs River's migrations and
// creates the service's tables, and starts River.
func (s *Service) openQueue(ctx context.Context) error {
	if s.cfg.DatabaseURL != "" {
		pool, err := pgxpool.New(ctx, s.cfg.DatabaseURL)
		if err != nil {
			return fmt.Errorf("jobs: OCR_JOBS_DATABASE_URL: %w", err)
		}
		s.db, s.d = stdlib.OpenDBFromPool(pool), dialect{postgres: true}
		s.close = func() { s.db.Close(); pool.Close() }
		// Replicas starting together migrate one after another: neither River's migrator nor
		// CREATE TABLE IF NOT EXISTS is safe run at once by two. The lock is a session's, held
		// on one connection of the pool until the migrations are done.
		conn, err := pool.Acquire(ctx)
		if err != nil {
			s.close()
			return fmt.Errorf("jobs: OCR_JOBS_DATABASE_URL: %w", err)
		}
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
			conn.Release()
			s.close()
			return fmt.Errorf("jobs: %w", err)
		}
		var beatErr error
		q, err := start(ctx, s, riverpgxv5.New(pool), func() {
			_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock)
			conn.Release()
			beatErr = s.beat(ctx, s.cfg.ReplicaTimeout) // alive before River runs a page under its ID
		})
		if err == nil {
			err = beatErr
		}
		if err != nil {
			if q != nil {
				_ = q.StopAndCancel(context.WithoutCancel(ctx))
			}
			s.close()
			return fmt.Errorf("jobs: %w", err)
		}
		bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); s.beats(bctx) }()
		closeDB := s.close
		s.close = func() { stop(); <-done; closeDB() }
		s.q = q
		return nil
	}
	if err := os.MkdirAll(s.cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("jobs: OCR_JOBS_DIR: %w", err)
	}
	// Only the service reads it (the WAL beside the database is made with the umask's mode);
	// a directory it may not change, a volume's, is left as it is.
	_ = os.Chmod(s.cfg.Dir, 0o700)
	release, lerr := lockDir(s.cfg.Dir)
	if lerr != nil && !errors.Is(lerr, errNoLock) {
		return lerr
	}
	path := filepath.Join(s.cfg.Dir, "jobs.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	// One connection, as River's SQLite driver advises: SQLite takes one writer at a time, and
	// two connections would meet SQLITE_BUSY under River's own concurrent work.
	db.SetMaxOpenConns(1)
	s.db, s.d, s.close = db, dialect{}, func() {
		db.Close()
		if release != nil {
			release()
		}
	}
	// The file exists once the migrations have run; its directory is the caller's alone. Held
	// alone, every page River has running is a dead process's: taken up at once.
	q, err := start(ctx, s, riversqlite.New(db), func() {
		_ = os.Chmod(path, 0o600)
		if release != nil {
			s.orphans(ctx)
		}
	})
	if err != nil {
		s.close()
		return err
	}
	s.q = q
	return nil
}

// orphans makes the jobs River has running available again, at a start that holds the SQLite
// directory alone (lockDir): no process runs them, since the one that did has died (a process
// that stops in order gives its pages back). River itself would take them up only once they had
// run RescueAfter, minutes after the restart. An attempt the dead process began stays counted.
func (s *Service) orphans(ctx context.Context) {
	res, err := s.db.ExecContext(ctx, `UPDATE river_job SET state = 'available', scheduled_at = CURRENT_TIMESTAMP WHERE state = 'running'`)
	if err != nil {
		s.cfg.Logger.Warn("jobs: the pages a stopped process left running wait for River's rescue", "error", err)
		return
	}
	if n, _ := res.RowsAffected(); n > 0 {
		s.cfg.Logger.Info("jobs: taking up again what a stopped process left running", "jobs", n)
	}
}

// migrateLock is the Postgres advisory lock the replicas' migrations take turns with.
const migrateLock = 0x6f63726472616674 // "ocrdraft"

// start migrates River's tables and the service's, calls migrated, and starts River's client
// on driver.
func start[TTx any](ctx context.Context, s *Service, driver riverdriver.Driver[TTx], migrated func()) (queue, error) {
	once := sync.OnceFunc(migrated)
	defer once()
	quiet := slog.New(riverLog{s.cfg.Logger.Handler()})
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("jobs: migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("jobs: River's migrations: %w", err)
	}
	if err := s.d.create(ctx, s.db); err != nil {
		return nil, fmt.Errorf("jobs: tables: %w", err)
	}
	once()
	workers := river.NewWorkers()
	river.AddWorker(workers, &pageWorker{s: s})
	river.AddWorker(workers, &finishWorker{s: s})
	river.AddWorker(workers, &callbackWorker{s: s})
	river.AddWorker(workers, &sweepWorker{s: s})
	c, err := river.NewClient(driver, &river.Config{
		ID:                   s.replica,
		Logger:               quiet,
		JobTimeout:           s.cfg.AttemptTimeout,
		RescueStuckJobsAfter: s.cfg.RescueAfter,
		FetchPollInterval:    s.cfg.PollInterval,
		FetchCooldown:        s.cfg.FetchCooldown,
		Queues: map[string]river.QueueConfig{
			queuePages:     {MaxWorkers: s.cfg.Concurrency},
			queueSteps:     {MaxWorkers: 2},
			queueCallbacks: {MaxWorkers: 4},
		},
		Workers: workers,
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(s.cfg.Sweep),
			func() (river.JobArgs, *river.InsertOpts) {
				return sweepArgs{}, &river.InsertOpts{Queue: queueSteps, MaxAttempts: 1}
			}, &river.PeriodicJobOpts{RunOnStart: true})},
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: River: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("jobs: River: %w", err)
	}
	return riverQueue[TTx]{c}, nil
}

// riverLog passes on River's warnings and errors alone. River logs job kinds, ids and error
// strings; the service's errors name no health data (a page's failure is stored, not returned).
type riverLog struct{ slog.Handler }

func (h riverLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h riverLog) WithAttrs(as []slog.Attr) slog.Handler { return riverLog{h.Handler.WithAttrs(as)} }
func (h riverLog) WithGroup(name string) slog.Handler    { return riverLog{h.Handler.WithGroup(name)} }
