package jobs

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// The service's own tables, beside River's in the same database: a job, its pages (prepared,
// sealed) until each is read, each page's reading (sealed) until the job is finished, and the
// result (sealed) until it expires. Times are Unix milliseconds; the SQL is the part SQLite and
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
}

const rowColumns = `id, owner, status, callback_url, idem_hash, pages, pages_done, pages_skipped, who, created_at, finished_at, expires_at, error`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.id, &r.owner, &r.status, &r.callback, &r.idemHash, &r.pages, &r.done, &r.skipped, &r.who, &r.created, &r.finished, &r.expires, &r.errDoc)
	return r, err
}
