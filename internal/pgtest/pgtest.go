// Package pgtest gives a test a Postgres schema of its own, on the real Postgres that the
// development machines and CI run (127.0.0.1:5432, trust auth, database test), not a mock.
package pgtest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// URL is a URL of the test Postgres (OCR_PG_URL, by default
// postgres://postgres@127.0.0.1:5432/test) whose search_path is a schema of the test's own,
// dropped when the test ends. It skips the test, saying why, when Postgres cannot be reached,
// unless OCR_PG_TESTS is set (as CI sets it): then the test fails.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("OCR_PG_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		if os.Getenv("OCR_PG_TESTS") != "" {
			t.Fatalf("OCR_PG_TESTS is set and Postgres is unreachable: %v", err)
		}
		t.Skipf("Postgres unreachable at %s (set OCR_PG_TESTS=1 to fail instead): %v", base, err)
	}
	defer conn.Close(context.Background())
	name := fmt.Sprintf("t_%d_%x", time.Now().UnixNano(), sha256.Sum256([]byte(t.Name())))[:40]
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + name
}
