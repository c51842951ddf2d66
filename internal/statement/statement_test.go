package statement_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/pii"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/stage"
	"github.com/clearing-dev/clearing/internal/statement"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const tenant = "default"

// imp stages recs on a connection of its own and imports them as one run of
// source bank, as package ingest does, returning the counts.
func imp(t *testing.T, pool *pgxpool.Pool, holder bool, recs ...formats.Record) runs.Counts {
	t.Helper()
	ctx := context.Background()
	pc, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.Hijack() // it carries the temporary stage
	defer conn.Close(ctx)
	st, err := stage.New(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	if _, err := st.Load(ctx, func() (*formats.Record, error) {
		if i == len(recs) {
			return nil, nil
		}
		i++
		return &recs[i-1], nil
	}); err != nil {
		t.Fatal(err)
	}
	var c runs.Counts
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		run := runs.Run{Kind: "statement", Format: "test", Source: "bank", FileName: "s", FileSHA256: []byte{byte(len(recs))}}
		if err := runs.Insert(ctx, tx, tenant, &run); err != nil {
			return err
		}
		c, err = statement.Import(ctx, tx, st, statement.Batch{Tenant: tenant, Source: "bank", RunID: run.ID, Holder: holder})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func line(key string, amount int64, dir formats.Direction) formats.Record {
	return formats.Record{Key: key, Kind: formats.Clearing, Reference: key, Amount: amount, Currency: "USD",
		Direction: dir, Account: pii.New("").Account("1", key), ValueDate: formats.Date(2026, 11, 29), Line: 1}
}

// rows lists the source's lines as key/occurrence/direction/amount.
func rows(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	r, err := pool.Query(context.Background(), `
SELECT line_key || '/' || occurrence || '/' || direction || '/' || amount_minor
  FROM statement_lines WHERE tenant_id = $1 AND source = 'bank' ORDER BY line_key, occurrence`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(r, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func verdicts(t *testing.T, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	r, err := pool.Query(context.Background(), `
SELECT verdict, count(*) FROM audit_events WHERE tenant_id = $1 AND kind = 'statement' GROUP BY verdict`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	var v string
	var n int64
	if _, err := pgx.ForEachRow(r, []any{&v, &n}, func() error { out[v] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// A statement imported again adds nothing and audits every line as a
// duplicate; a line restated with another amount is a conflict, audited, and
// the stored line keeps its first amount. A key repeated within a statement
// keeps both lines, and a notice is no line.
func TestImportAddsEachLineOnceAndAuditsTheRest(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	notice := line("n1", 0, formats.Credit)
	notice.Kind = formats.Notice
	first := []formats.Record{line("a", 100, formats.Credit), line("b", 200, formats.Debit), line("b", 200, formats.Debit), notice}

	if c := imp(t, pool, false, first...); c != (runs.Counts{Posted: 3, Skipped: 1}) {
		t.Fatalf("first import: %+v", c)
	}
	want := []string{"a/1/C/100", "b/1/D/200", "b/2/D/200"}
	if got := rows(t, pool); !slices.Equal(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	if c := imp(t, pool, false, first...); c != (runs.Counts{Duplicates: 3, Skipped: 1}) {
		t.Fatalf("second import: %+v", c)
	}
	if c := imp(t, pool, false, line("a", 150, formats.Credit)); c != (runs.Counts{Conflicts: 1}) {
		t.Fatalf("restated line: %+v", c)
	}
	if got := rows(t, pool); !slices.Equal(got, want) {
		t.Fatalf("lines after re-imports %v, want %v", got, want)
	}
	if got := verdicts(t, pool); len(got) != 2 || got["duplicate"] != 3 || got["conflict"] != 1 {
		t.Fatalf("audit verdicts %v, want 3 duplicates and 1 conflict", got)
	}
	var differing []string
	if err := pool.QueryRow(context.Background(), `
SELECT differing_fields FROM audit_events WHERE tenant_id = $1 AND verdict = 'conflict'`, tenant).Scan(&differing); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(differing, []string{"amount"}) {
		t.Fatalf("conflict differs in %v, want amount", differing)
	}
}

// The account holder's statement is stored from the counterparty's side:
// money in (a credit to our account) is a debit of the counterparty.
func TestHolderStatementsAreTurnedRound(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	imp(t, pool, true, line("in", 100, formats.Credit), line("out", 40, formats.Debit))
	if got, want := rows(t, pool), []string{"in/1/D/100", "out/1/C/40"}; !slices.Equal(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	// The same statement again is a duplicate, compared on the turned side.
	if c := imp(t, pool, true, line("in", 100, formats.Credit)); c != (runs.Counts{Duplicates: 1}) {
		t.Fatalf("again: %+v", c)
	}
}
