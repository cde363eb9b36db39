package jobs

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// The service's own tables, beside River's in the same database: a job, its pages (prepared,
// sealed) until each is read (until the job is finished, with include=pageImages), each page's
// reading (sealed) until the job is finished, and the result (sealed) until it expires. Times are Unix milliseconds; the SQL is the part SQLite and
// Postgres share, with ? rewritten to $n for Postgres.

// dialect is the little the two databases differ in.
type dialect struct {
	postgres bool
}

// q rewrites a query's ? placeholders for the database.
func (d dialect) q(s string) string {
	if !d.postgres {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (d dialect) schema() []string {
	blob := "BLOB"
	if d.postgres {
		blob = "BYTEA"
	}
	return []string{
		`CREATE TABLE IF NOT EXISTS ocrdraft_job (
			id TEXT PRIMARY KEY,
			owner TEXT NOT NULL,
			idem_key TEXT,
			idem_hash ` + blob + `,
			status TEXT NOT NULL,
			pages BIGINT NOT NULL DEFAULT 0,
			pages_done BIGINT NOT NULL DEFAULT 0,
			pages_skipped BIGINT NOT NULL DEFAULT 0,
			who ` + blob + `,
			callback_url TEXT NOT NULL DEFAULT '',
			page_images BIGINT NOT NULL DEFAULT 0,
			river_ids TEXT NOT NULL DEFAULT '',
			created_at BIGINT NOT NULL,
			finished_at BIGINT,
			expires_at BIGINT,
			result ` + blob + `,
			error TEXT
		)`,
		`CREATE UNIQUE INDEX IF NOT EXISTS ocrdraft_job_idem ON ocrdraft_job (owner, idem_key)`,
		`CREATE INDEX IF NOT EXISTS ocrdraft_job_expires ON ocrdraft_job (expires_at)`,
		`CREATE TABLE IF NOT EXISTS ocrdraft_job_page (
			job_id TEXT NOT NULL,
			page BIGINT NOT NULL,
			data ` + blob + ` NOT NULL,
			PRIMARY KEY (job_id, page)
		)`,
		`CREATE TABLE IF NOT EXISTS ocrdraft_replica (
			id TEXT PRIMARY KEY,
			seen_at BIGINT NOT NULL
		)`, // Postgres replicas' heartbeats (replica.go); unused on SQLite
		`CREATE TABLE IF NOT EXISTS ocrdraft_job_read (
			job_id TEXT NOT NULL,
			page BIGINT NOT NULL,
			data ` + blob + ` NOT NULL,
			PRIMARY KEY (job_id, page)
		)`,
	}
}

func (d dialect) create(ctx context.Context, db *sql.DB) error {
	for _, s := range d.schema() {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return d.addColumns(ctx, db)
}

// added are the columns ocrdraft_job gained after its first release, for a database made
// before them (CREATE TABLE IF NOT EXISTS leaves an older table as it is).
var added = []struct{ name, def string }{
	{"page_images", "BIGINT NOT NULL DEFAULT 0"}, // 1: include=pageImages (session 7)
}

func (d dialect) addColumns(ctx context.Context, db *sql.DB) error {
	for _, c := range added {
		if d.postgres {
			if _, err := db.ExecContext(ctx, `ALTER TABLE ocrdraft_job ADD COLUMN IF NOT EXISTS `+c.name+` `+c.def); err != nil {
				return err
			}
			continue
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('ocrdraft_job') WHERE name = ?`, c.name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, `ALTER TABLE ocrdraft_job ADD COLUMN `+c.name+` `+c.def); err != nil {
				return err
			}
		}
	}
	return nil
}

// row is a job's row, without its result.
type row struct {
	id, owner, status, callback string
	idemHash                    []byte
	pages, done, skipped        int
	who                         []byte
	created                     int64
	finished, expires           sql.NullInt64
	errDoc                      sql.NullString
	pageImages                  bool // include=pageImages: the pages are kept until the result
}

const rowColumns = `id, owner, status, callback_url, idem_hash, pages, pages_done, pages_skipped, who, created_at, finished_at, expires_at, error, page_images`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	var images int64
	err := sc.Scan(&r.id, &r.owner, &r.status, &r.callback, &r.idemHash, &r.pages, &r.done, &r.skipped, &r.who, &r.created, &r.finished, &r.expires, &r.errDoc, &images)
	r.pageImages = images != 0
	return r, err
}
