package reconcile_test

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
	"github.com/clearing-dev/clearing/formats/bai2"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/pii"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const tenant = "default"

// created is the creation time of every file these tests write.
var created = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func hasher() pii.Hasher { return pii.New(os.Getenv("CLEARING_PII_KEY")) }

// ingestFile ingests path through ingest.File: the one way these tests
// post to the ledger. It fills in the tenant and the PII hasher when opts
// leaves them out, and fails the test unless the run is done.
func ingestFile(t *testing.T, pool *pgxpool.Pool, path string, opts ingest.Options) ingest.Summary {
	t.Helper()
	if opts.Tenant == "" {
		opts.Tenant = tenant
	}
	if opts.Hasher.IsZero() {
		opts.Hasher = hasher()
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

// importStatement imports the statement at path under source through
// ingest.Statement: the one way these tests add statement lines.
// It fails the test unless the import is done.
func importStatement(t *testing.T, pool *pgxpool.Pool, path, source string) ingest.StatementSummary {
	t.Helper()
	s, err := ingest.Statement(context.Background(), pool, path,
		ingest.StatementOptions{Tenant: tenant, Source: source, Hasher: hasher()})
	if err != nil {
		t.Fatalf("import statement %s: %v", path, err)
	}
	if s.Status != "done" {
		t.Fatalf("import statement %s: status %q, want done: %+v", path, s.Status, s)
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

// achFile writes es as an ACH file in a directory of the test.
func achFile(t *testing.T, es []ach.Entry) string {
	t.Helper()
	var b bytes.Buffer
	if err := ach.WriteEntries(&b, ach.DefaultHeader(created), slices.Values(es)); err != nil {
		t.Fatal(err)
	}
	return write(t, "day.ach", b.Bytes())
}

// paid reports whether an entry credits its customer: the money leaves
// our settlement account.
func paid(e ach.Entry) bool { return e.TransactionCode%10 == 2 }

// signed is an entry's effect on its customer's account, the
// counterparty's side that reconciliation compares: credits positive.
func signed(e ach.Entry) int64 {
	if paid(e) {
		return e.Amount
	}
	return -e.Amount
}

// stmtLine is one line of a test statement: the bank's view of an entry,
// with the amount the bank shows.
type stmtLine struct {
	entry  ach.Entry
	amount int64
}

// lineOf is the bank's line for e, as it is.
func lineOf(e ach.Entry) stmtLine { return stmtLine{e, e.Amount} }

// statementFile writes the lines as the bank's BAI2 statement of our
// settlement account, as internal/demo does: a payment to a customer is a
// debit of the account (type 455), a collection a credit (165); both
// references are the entry's trace number.
func statementFile(t *testing.T, lines []stmtLine) string {
	t.Helper()
	var bl []bai2.Line
	for _, l := range lines {
		code := 165
		if paid(l.entry) {
			code = 455
		}
		bl = append(bl, bai2.Line{Account: "000123456789", Currency: "USD", Date: l.entry.EffectiveDate, TypeCode: code,
			Amount: l.amount, BankReference: l.entry.Trace, CustomerReference: l.entry.Trace})
	}
	var b bytes.Buffer
	if err := bai2.Generate(&b, slices.Values(bl), bai2.GenerateOptions{Sender: "121042882", Created: created}); err != nil {
		t.Fatal(err)
	}
	return write(t, "statement.bai2", b.Bytes())
}

func write(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
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
