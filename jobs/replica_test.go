package jobs

import (
	"context"
	"testing"
	"time"
)

// TestReplicaGone: on Postgres, what River has running for a replica not heard from for
// ReplicaTimeout is made available again at the next beat of any replica, and what a replica
// heard from lately has running, or one that never wrote a heartbeat (a process of an earlier
// version: River's rescue), is left alone.
func TestReplicaGone(t *testing.T) {
	e := newEnv(t, backends[1], nil, func(c *Config) { c.ReplicaTimeout = time.Hour }) // no beat of its own in the test
	ctx := context.Background()
	now := e.svc.now()
	for _, r := range []struct {
		id   string
		seen time.Time
	}{{"dead", now.Add(-2 * time.Hour)}, {"alive", now.Add(-time.Minute)}} {
		if _, err := e.svc.db.ExecContext(ctx, `INSERT INTO ocrdraft_replica (id, seen_at) VALUES ($1, $2)`, r.id, ms(r.seen)); err != nil {
			t.Fatal(err)
		}
	}
	// Jobs of a kind no worker takes (nothing runs them again here), in a queue of the service's.
	var ids = map[string]int64{}
	for _, by := range []string{"dead", "alive", "unknown"} {
		var id int64
		if err := e.svc.db.QueryRowContext(ctx, `INSERT INTO river_job (kind, queue, args, state, attempt, attempted_at, attempted_by, max_attempts)
			VALUES ('test_idle', $1, '{}', 'running', 1, now(), ARRAY['other', $2], 3) RETURNING id`, queuePages, by).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[by] = id
	}
	if err := e.svc.beat(ctx, 90*time.Minute); err != nil { // "dead" is gone past it, "alive" is not
		t.Fatal(err)
	}
	// "dead"'s is available again (or already fetched by this replica's River, which has no
	// worker for it); the others are still running where they were.
	for _, by := range []string{"dead", "alive", "unknown"} {
		var state, last string
		if err := e.svc.db.QueryRowContext(ctx, `SELECT state, attempted_by[array_length(attempted_by, 1)] FROM river_job WHERE id = $1`, ids[by]).Scan(&state, &last); err != nil {
			t.Fatal(err)
		}
		if still := state == "running" && last == by; still != (by != "dead") {
			t.Errorf("a job run by the replica %q is %s by %q", by, state, last)
		}
	}
	var self int
	if err := e.svc.db.QueryRowContext(ctx, `SELECT count(*) FROM ocrdraft_replica WHERE id = $1`, e.svc.replica).Scan(&self); err != nil || self != 1 {
		t.Errorf("this replica's heartbeat: %d rows, %v", self, err)
	}
	if _, err := e.svc.db.ExecContext(ctx, `DELETE FROM river_job WHERE kind = 'test_idle'`); err != nil {
		t.Fatal(err)
	}
}
