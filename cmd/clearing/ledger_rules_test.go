package main

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/corpus"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

func TestLedgerRejectsUpdateDeleteTruncateAndUnbalancedLegs(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := entries(10, 100)
	prenote := es[0]
	prenote.Trace, prenote.TransactionCode, prenote.Amount = es[len(es)-1].Trace[:8]+"9999999", 23, 0
	f := c.achFile("day1.ach", ach.DefaultHeader(created), append(es, prenote))
	c.ingest(0, f)
	c.ingest(0, f) // duplicates give the audit trail rows to try
	if c.count(`SELECT count(*) FROM notices`) == 0 || c.count(`SELECT count(*) FROM audit_events`) == 0 {
		t.Fatal("the file has no prenote, or the audit trail is empty: nothing to try the triggers on")
	}
	ctx := context.Background()
	for _, sql := range []string{
		`UPDATE postings SET amount_minor = amount_minor + 1`,
		`DELETE FROM postings`,
		`TRUNCATE postings`,
		`UPDATE legs SET amount_minor = 1`,
		`DELETE FROM legs`,
		`TRUNCATE legs`,
		`DELETE FROM audit_events`,
		`UPDATE notices SET detail = 'x'`,
	} {
		_, err := c.pool.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.RestrictViolation {
			t.Errorf("%s: error %v, want the append-only trigger's restrict_violation", sql, err)
		}
	}
	var id int64
	if err := c.pool.QueryRow(ctx, `SELECT id FROM postings LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	_, err := c.pool.Exec(ctx, `
INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
VALUES ('default', $1, 3, 'x', 'C', 5, 'USD', '2026-01-01'), ('default', $1, 4, 'y', 'D', 4, 'USD', '2026-01-01')`, id)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.CheckViolation {
		t.Errorf("unbalanced legs: error %v, want check_violation", err)
	}
	c.must(0, "ledger", "verify")
	// Balanced legs of a posting that does not exist are not refused by the
	// insert (the ledger only writes legs for the postings it has just
	// inserted), but verification finds them.
	if _, err := c.pool.Exec(ctx, `
INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
VALUES ('default', -1, 1, 'x', 'C', 5, 'USD', '2026-01-01'), ('default', -1, 2, 'y', 'D', 5, 'USD', '2026-01-01')`); err != nil {
		t.Fatal(err)
	}
	if r := c.must(3, "ledger", "verify"); !strings.Contains(r.stdout, "every leg belongs to a posting") {
		t.Fatalf("verify does not report the stray legs:\n%v", r)
	}
}

func TestLedgerVerifyFindsADisabledTrigger(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), liveOnly(entries(11, 3))))
	pgtest.AlterTrigger(t, c.pool, "postings", "DISABLE", "postings_append_only")
	r := c.must(3, "ledger", "verify")
	if !strings.Contains(r.stdout, "postings_append_only") {
		t.Fatalf("verify does not name the disabled trigger:\n%v", r)
	}
}

// A crash between chunks, then the same command again, leaves exactly what
// one clean run leaves: the interrupted run is resumed, not repeated.
func TestCrashBetweenChunksThenRerunEqualsACleanRun(t *testing.T) {
	t.Parallel()
	es := entries(12, 95)
	dup := slices.Clone(es[:3]) // in-file duplicates across chunk boundaries
	es = append(es, dup...)

	clean := newCLI(t)
	f := clean.achFile("day1.ach", ach.DefaultHeader(created), es)
	clean.ingest(3, "--chunk-size", "10", f)

	crashed := newCLI(t)
	crashed.env = []string{"CLEARING_FAILPOINTS=ingest.chunk-committed=kill@4"}
	r := crashed.exec("ingest", "--chunk-size", "10", f)
	if r.code != -1 {
		t.Fatalf("want the process killed at the failpoint\n%v", r)
	}
	if got := crashed.postings(); got == 0 || got >= int64(len(liveOnly(es))) {
		t.Fatalf("after the crash %d postings, want some but not all", got)
	}
	// The server notices the dead client's connection, and frees its lock,
	// a moment after the kill; then runs lists the run as interrupted.
	crashed.waitForClientsToLeave()
	if n := crashed.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND status = 'running'`, crashed.tenant); n != 1 ||
		!strings.Contains(crashed.must(0, "runs").stdout, "interrupted") {
		t.Fatalf("%d unfinished runs; runs must list the one interrupted", n)
	}
	crashed.env = nil
	crashed.ingest(3, "--chunk-size", "10", f)
	if got, want := crashed.snapshot(), clean.snapshot(); got != want {
		t.Fatalf("crash and re-run differ from a clean run:\n%s", diffLines(want, got))
	}
}

// Names and account numbers never reach the database, and no output or log
// line shows one.
func TestNoPersonalDataIsStored(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env = []string{"CLEARING_LOG_LEVEL=debug"}
	es := liveOnly(entries(13, 40))
	var printed strings.Builder
	for _, args := range [][]string{
		{"ingest", c.achFile("day1.ach", ach.DefaultHeader(created), es)},
		{"--log-format", "json", "ingest", c.returnFile("returns.ach", ach.ReturnOf(es[1], "R01", 1))},
		{"lookup", es[1].Key()}, {"-o", "json", "lookup", es[1].Key()}, {"-o", "csv", "lookup", es[1].Key()},
		{"balance"}, {"runs"}, {"runs", "show", "1"},
	} {
		r := c.must(0, args...)
		printed.WriteString(r.stdout + r.stderr)
	}
	outputs := printed.String()
	rows, err := c.pool.Query(context.Background(), `
SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	var dump strings.Builder
	for _, table := range tables {
		var text string
		if err := c.pool.QueryRow(context.Background(),
			`SELECT coalesce(string_agg(to_jsonb(t)::text, E'\n'), '') FROM `+table+` t`).Scan(&text); err != nil {
			t.Fatal(err)
		}
		dump.WriteString(text)
	}
	for _, e := range es {
		if name := strings.TrimSpace(e.Name); strings.Contains(dump.String(), name) || strings.Contains(outputs, name) {
			t.Fatalf("the database or the output holds the name %q", e.Name)
		}
		if len(e.Account) > 4 && (strings.Contains(dump.String(), e.Account) || strings.Contains(outputs, e.Account)) {
			t.Fatalf("the database or the output holds the account number %q", e.Account)
		}
	}
}

// Real third-party files from the shared corpus: every valid one ingests
// with its expected entries, and ingesting it again posts nothing.
func TestCorpusACHFilesIngestOnce(t *testing.T) {
	t.Parallel()
	dir := corpus.Dir(t, "ach", "valid")
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	rejected := map[string]bool{"ccd-txp-credit.ach": true, "ctx-nonascii-utf8.ach": true}
	for _, path := range names {
		name := filepath.Base(path)
		// moov-io's sample files share company ids, dates and trace
		// numbers; each gets a ledger of its own.
		c.tenant = tenantID("corpus-" + name)
		if rejected[name] {
			r := c.run("ingest", "--format", "ach", path)
			if r.code != 1 {
				t.Errorf("%s: want the file rejected (exit 1)\n%v", name, r)
			}
			continue
		}
		before := c.postings()
		c.ingest(-1, "--format", "ach", path)
		if c.postings() == before && !strings.Contains(name, "ack") && !strings.Contains(name, "atx") &&
			!strings.Contains(name, "dne") && !strings.Contains(name, "enr") {
			t.Errorf("%s posted nothing", name)
		}
		again := c.ingest(-1, "--format", "ach", path)
		if again[0].Posted != 0 || again[0].Notices != 0 {
			t.Errorf("%s: ingesting it again posted %d and recorded %d notices", name, again[0].Posted, again[0].Notices)
		}
	}
	c.tenant = "invalid"
	for _, path := range mustGlob(t, corpus.Dir(t, "ach", "invalid"), "*") {
		if filepath.Base(path) == "ppd-mixed-origin-000TESTER.ach" {
			continue // accepted: see docs/formats/ach.md
		}
		before := c.snapshot()
		if r := c.run("ingest", "--format", "ach", path); r.code != 1 {
			t.Errorf("%s: want exit 1\n%v", filepath.Base(path), r)
		}
		if c.snapshot() != before {
			t.Errorf("%s: a rejected file changed the database", filepath.Base(path))
		}
	}
}

func mustGlob(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
