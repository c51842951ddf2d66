package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/pii"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type sliceReader struct {
	recs []formats.Record
	i    int
}

func (s *sliceReader) Next() (formats.Record, error) {
	if s.i >= len(s.recs) {
		return formats.Record{}, io.EOF
	}
	s.i++
	return s.recs[s.i-1], nil
}

// ingestRecords ingests recs as a file named name, in chunks of two
// records, and returns what File returns.
func ingestRecords(t *testing.T, pool *pgxpool.Pool, name string, recs ...formats.Record) (Summary, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
		t.Fatal(err)
	}
	return File(context.Background(), pool, p, Options{Format: "test", ChunkSize: 2, Reader: registry.Options{Open: func(io.Reader) (formats.Reader, error) {
		return &sliceReader{recs: recs}, nil
	}}})
}

// The ledger path end to end, below the command line: in-file repeats,
// duplicates, conflicts, returns to their original, orphan and mismatched
// returns, and a repeated return, with the ledger's balances and audit
// trail they must leave.
func TestLedgerPathVerdicts(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := context.Background()
	h := pii.New("")
	rec := func(key string, amount int64, dir formats.Direction) formats.Record {
		return formats.Record{Key: key, Kind: formats.Clearing, Reference: key[len(key)-3:], Amount: amount, Currency: "USD",
			Direction: dir, Account: h.Account("1", key), ValueDate: formats.Date(2026, 11, 29), Line: 1}
	}
	ret := func(key, ref string, amount int64, dir formats.Direction) formats.Record {
		return formats.Record{Key: key, Kind: formats.Return, Reference: ref, Amount: amount, Currency: "USD",
			Direction: dir, ValueDate: formats.Date(2026, 11, 30), Line: 1,
			Link: &formats.Link{Reference: ref, KeyPrefix: "ach:co:", Suffix: ":return"}}
	}
	// Fallbacks counts the chunks whose plain INSERT met a key already
	// posted (chunks of two records).
	type tally struct{ Records, Posted, Duplicates, Conflicts, Quarantined, Fallbacks int64 }
	run := func(name string, want tally, recs ...formats.Record) {
		t.Helper()
		s, err := ingestRecords(t, pool, name, recs...)
		if err != nil {
			t.Fatal(err)
		}
		got := tally{Records: s.Records, Posted: s.Posted, Duplicates: s.Duplicates, Conflicts: s.Conflicts, Quarantined: s.Quarantined,
			Fallbacks: s.InsertFallbacks}
		if got != want {
			t.Fatalf("%s: %+v, want %+v", name, got, want)
		}
	}
	// The second chunk of a repeats a key of its first, and b's only chunk
	// meets keys of a: each falls back to ON CONFLICT once.
	run("a", tally{Records: 3, Posted: 2, Quarantined: 1, Fallbacks: 1},
		rec("ach:co:2026-11-29:001", 100, formats.Credit), rec("ach:co:2026-11-29:002", 200, formats.Debit), rec("ach:co:2026-11-29:001", 100, formats.Credit))
	run("b", tally{Records: 2, Duplicates: 1, Conflicts: 1, Fallbacks: 1},
		rec("ach:co:2026-11-29:001", 100, formats.Credit), rec("ach:co:2026-11-29:002", 250, formats.Debit))
	run("c", tally{Records: 3, Posted: 1, Quarantined: 2},
		ret("ach:co:2026-11-30:900", "001", 100, formats.Credit), ret("ach:co:2026-11-30:901", "009", 100, formats.Credit),
		ret("ach:co:2026-11-30:902", "002", 100, formats.Credit))
	run("c2", tally{Records: 1, Duplicates: 1}, ret("ach:co:2026-11-30:900", "001", 100, formats.Credit))

	text := func(sql string) string {
		rows, err := pool.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// 001 was credited 100 and returned; 002 was debited 200.
	balances := text(`SELECT CASE WHEN account LIKE 'cust:%' THEN 'customer' ELSE account END,
	                         sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END)::bigint
	                    FROM legs GROUP BY account ORDER BY 2`)
	if want := "customer -200\ncustomer 0\nsettlement:test 200\n"; balances != want {
		t.Fatalf("balances:\n%swant\n%s", balances, want)
	}
	audit := text(`SELECT record_key, verdict, differing_fields::text FROM audit_events ORDER BY id`)
	if want := `ach:co:2026-11-29:001 in_file_duplicate {}
ach:co:2026-11-29:001 duplicate {}
ach:co:2026-11-29:002 conflict {amount}
ach:co:2026-11-30:901 orphan_return {}
ach:co:2026-11-29:002:return link_mismatch {}
ach:co:2026-11-29:001:return duplicate {}
`; audit != want {
		t.Fatalf("audit trail:\n%swant\n%s", audit, want)
	}
}

// A chunk of new keys posts with a plain INSERT; the first chunk of a run
// that meets a posted key falls back to ON CONFLICT, and the run's later
// chunks go there directly: a file that overlaps the ledger in every
// chunk falls back once, and posts and audits what ON CONFLICT decides.
func TestLedgerPathFallsBackOncePerRun(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := context.Background()
	h := pii.New("")
	rec := func(n int) formats.Record {
		key := fmt.Sprintf("ach:co:2026-11-29:%03d", n)
		return formats.Record{Key: key, Kind: formats.Clearing, Reference: key[len(key)-3:], Amount: 100, Currency: "USD",
			Direction: formats.Credit, Account: h.Account("1", key), ValueDate: formats.Date(2026, 11, 29), Line: int64(n)}
	}
	ingest := func(name string, recs ...formats.Record) Summary {
		t.Helper()
		s, err := ingestRecords(t, pool, name, recs...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := ingest("new", rec(1), rec(2), rec(3), rec(4)); s.Posted != 4 || s.InsertFallbacks != 0 {
		t.Fatalf("a new file: %d posted, %d fallbacks; want 4 and 0", s.Posted, s.InsertFallbacks)
	}
	// Every chunk holds a posted key and a new one.
	s := ingest("overlap", rec(1), rec(5), rec(2), rec(6), rec(3), rec(7))
	if s.Posted != 3 || s.Duplicates != 3 || s.InsertFallbacks != 1 {
		t.Fatalf("an overlapping file: %d posted, %d duplicates, %d fallbacks; want 3, 3 and 1", s.Posted, s.Duplicates, s.InsertFallbacks)
	}
	var postings, legs, audited, posters int64
	if err := pool.QueryRow(ctx, `
SELECT (SELECT count(*) FROM postings), (SELECT count(*) FROM legs),
       (SELECT count(*) FROM audit_events WHERE verdict = 'duplicate' AND run_id = $1),
       (SELECT count(DISTINCT run_id) FROM postings WHERE reference IN ('005', '006', '007') AND run_id = $1)`, s.RunID).
		Scan(&postings, &legs, &audited, &posters); err != nil {
		t.Fatal(err)
	}
	if postings != 7 || legs != 14 || audited != 3 || posters != 1 {
		t.Fatalf("ledger: %d postings, %d legs, %d duplicates audited by the run, new keys posted by %d runs; want 7, 14, 3 and 1",
			postings, legs, audited, posters)
	}
}

// A unique index other than the postings' key that refuses the plain
// INSERT is not taken for a posted key: the ON CONFLICT statement that
// follows, whose arbiter is the key alone, is refused by it too, and the
// error reaches the caller with nothing of the chunk written. Here an
// index of the test's own makes references unique.
func TestLedgerPathAnyOtherUniqueViolationIsAnError(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := context.Background()
	h := pii.New("")
	rec := func(date string, n int) formats.Record {
		key := fmt.Sprintf("ach:co:%s:%03d", date, n)
		return formats.Record{Key: key, Kind: formats.Clearing, Reference: key[len(key)-3:], Amount: 100, Currency: "USD",
			Direction: formats.Credit, Account: h.Account("1", key), ValueDate: formats.Date(2026, 11, 29), Line: int64(n)}
	}
	ingest := func(name string, recs ...formats.Record) error {
		_, err := ingestRecords(t, pool, name, recs...)
		return err
	}
	if err := ingest("first", rec("2026-11-29", 1), rec("2026-11-29", 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE UNIQUE INDEX postings_unique_reference ON postings (tenant_id, reference)`); err != nil {
		t.Fatal(err)
	}
	// New keys; the second's reference is the first file's.
	err := ingest("second", rec("2026-11-30", 3), rec("2026-11-30", 1))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.UniqueViolation {
		t.Fatalf("want the unique violation of postings_unique_reference, got %v", err)
	}
	var postings int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM postings`).Scan(&postings); err != nil {
		t.Fatal(err)
	}
	if postings != 2 {
		t.Fatalf("%d postings; want the first file's 2 alone", postings)
	}
}
