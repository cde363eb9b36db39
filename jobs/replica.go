package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Replicas on Postgres. River takes up a page a dead process left running only once it has
// been running RescueAfter (three attempts' time: six minutes at the defaults), since it cannot
// tell a dead process's page from a slow one's. So each replica says it is alive: every
// ReplicaTimeout/6 it writes the time into ocrdraft_replica under its River client ID, which
// River writes last into the attempted_by of every job it runs; and at the same beat each
// replica makes available again what River has running for a replica not heard from for
// ReplicaTimeout (killed, its node gone). A replica that only stalls that long (a partition from
// the database) may then see its page read twice: the page is stored once (its row's key), and
// the model is called once more. A replica that stops in order gives its pages back itself.
// On SQLite the directory is held by one process (lockDir), which takes up everything at start.

// DefaultReplicaTimeout is how long a Postgres replica may go unheard before its running pages
// are another's.
const DefaultReplicaTimeout = 30 * time.Second

// replicaKept is how long a replica's row outlives its last beat; a page still running for a
// replica past that is left to River's rescue.
const replicaKept = time.Hour

// newReplicaID is a River client ID of the process's own: River keeps it in attempted_by.
func newReplicaID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "ocrdraft-" + hex.EncodeToString(b)
}

// beat writes that this replica is alive, and makes available again the running pages and
// steps of replicas gone (not heard from for gone: ReplicaTimeout).
func (s *Service) beat(ctx context.Context, gone time.Duration) error {
	now := s.now()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO ocrdraft_replica (id, seen_at) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at`, s.replica, ms(now)); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now()
		WHERE state = 'running' AND queue = ANY($1)
		AND attempted_by[array_length(attempted_by, 1)] IN (SELECT id FROM ocrdraft_replica WHERE seen_at < $2 AND id <> $3)`,
		[]string{queuePages, queueSteps, queueCallbacks}, ms(now.Add(-gone)), s.replica)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		s.cfg.Logger.Info("jobs: taking up again what a replica gone left running", "jobs", n)
	}
	_, err = s.db.ExecContext(ctx, `DELETE FROM ocrdraft_replica WHERE seen_at < $1`, ms(now.Add(-replicaKept)))
	return err
}

// beats runs beat every ReplicaTimeout/6 until ctx ends.
func (s *Service) beats(ctx context.Context) {
	t := time.NewTicker(s.cfg.ReplicaTimeout / 6)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.beat(ctx, s.cfg.ReplicaTimeout); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("jobs: this replica's heartbeat was not written", "error", err)
		}
	}
}
