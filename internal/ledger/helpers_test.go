package ledger_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/pii"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const tenant = "default"

// created is the creation time of every ACH file these tests write.
var created = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

// ingestFile ingests path through ingest.File: the one way these tests
// put records in the ledger. It fills in the tenant and the PII hasher
// when opts leaves them out, and fails the test unless the run is done.
func ingestFile(t *testing.T, pool *pgxpool.Pool, path string, opts ingest.Options) ingest.Summary {
	t.Helper()
	if opts.Tenant == "" {
		opts.Tenant = tenant
	}
	if opts.Hasher.IsZero() {
		opts.Hasher = pii.New(os.Getenv("CLEARING_PII_KEY"))
	}
	s, err := ingest.File(context.Background(), pool, path, opts)
	if err != nil {
		t.Fatalf("ingest %s: %v", path, err)
	}
	if s.Status != "done" {
		t.Fatalf("ingest %s: status %q, want done: %+v", path, s.Status, s)
	}
	return s
}

// liveEntries returns the first n generated ACH entries of seed that move
// money (prenotes left out). The generator gives the first thousand
// entries one company and one effective date.
func liveEntries(seed uint64, n int) []ach.Entry {
	var out []ach.Entry
	for e := range ach.GenerateEntries(seed, 2*n) {
		if e.Amount > 0 && len(out) < n {
			out = append(out, e)
		}
	}
	return out
}

// achFile writes es as an ACH file named name in a directory of the test.
func achFile(t *testing.T, name string, es []ach.Entry) string {
	t.Helper()
	var b bytes.Buffer
	if err := ach.WriteEntries(&b, ach.DefaultHeader(created), slices.Values(es)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// signed is an entry's effect on its customer's account: credits positive.
func signed(e ach.Entry) int64 {
	if e.TransactionCode%10 == 2 {
		return e.Amount
	}
	return -e.Amount
}

// count runs a query that returns one number.
func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
