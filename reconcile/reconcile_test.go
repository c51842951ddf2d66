package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/report"
	"github.com/clearing-dev/clearing/reconcile"
)

// reconcileDay reconciles source ach over the entries' effective date, and
// returns the stored run with its discrepancies read into the report.
func reconcileDay(t *testing.T, pool *pgxpool.Pool, day time.Time) *report.Report {
	t.Helper()
	ctx := context.Background()
	id, err := reconcile.Run(ctx, pool, reconcile.Options{Tenant: tenant, Source: "ach", From: day, To: day,
		WindowDays: reconcile.DefaultWindowDays})
	if err != nil {
		t.Fatal(err)
	}
	var r *report.Report
	if err := reconcile.View(ctx, pool, tenant, id, func(_ ledger.Querier, stored *report.Report) error {
		r = stored
		return stored.Each(func(d *report.Discrepancy) error {
			r.Discrepancies = append(r.Discrepancies, *d)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	r.Stream = nil
	return r
}

// run is a reconciliations row: what the run counted.
type run struct {
	LedgerItems, StatementLines, MatchedLedger, MatchedStatement int64
}

func runRow(t *testing.T, pool *pgxpool.Pool, id int64) run {
	t.Helper()
	var r run
	if err := pool.QueryRow(context.Background(), `
SELECT ledger_items, statement_lines, matched_ledger, matched_statement FROM reconciliations WHERE tenant_id = $1 AND id = $2`,
		tenant, id).Scan(&r.LedgerItems, &r.StatementLines, &r.MatchedLedger, &r.MatchedStatement); err != nil {
		t.Fatal(err)
	}
	return r
}

// breaks lists a run's discrepancies as rows: class, posting key, whether
// a statement line is named, correction key, break.
func breaks(t *testing.T, pool *pgxpool.Pool, id int64) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
SELECT class, coalesce(posting_key, ''), line_id IS NOT NULL, coalesce(correction_key, ''), is_break
  FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 ORDER BY seq`, tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	var class, posting, correction string
	var line, isBreak bool
	_, err = pgx.ForEachRow(rows, []any{&class, &posting, &line, &correction, &isBreak}, func() error {
		out += fmt.Sprintln(class, posting, line, correction, isBreak)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// totals returns a run's ledger and statement totals in USD, and what its
// classes other than matched account for of their difference.
func totals(t *testing.T, pool *pgxpool.Pool, id int64) (ledger, statement, explained int64) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `
SELECT t.ledger_total::bigint, t.statement_total::bigint,
       (SELECT coalesce(sum(ledger_amount - statement_amount), 0)::bigint FROM reconciliation_classes
         WHERE tenant_id = $1 AND run_id = $2 AND currency = 'USD' AND class <> 'matched')
  FROM reconciliation_totals t WHERE t.tenant_id = $1 AND t.run_id = $2 AND t.currency = 'USD'`,
		tenant, id).Scan(&ledger, &statement, &explained); err != nil {
		t.Fatal(err)
	}
	return ledger, statement, explained
}

// A statement that shows every entry as the ledger posted it matches
// every pair: no discrepancy, no correction, one class, equal totals.
func TestExactStatementMatchesEveryPair(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	es := liveEntries(21, 15)
	ingestFile(t, pool, achFile(t, es), ingest.Options{})
	var lines []stmtLine
	var net int64
	for _, e := range es {
		lines = append(lines, lineOf(e))
		net += signed(e)
	}
	imp := importStatement(t, pool, statementFile(t, lines), "ach")
	if n := count(t, pool, `SELECT count(*) FROM statement_lines WHERE tenant_id = $1 AND source = 'ach' AND run_id = $2`,
		tenant, imp.RunID); imp.Added != 15 || n != 15 {
		t.Fatalf("statement import added %d lines (%d in the table), want 15: %+v", imp.Added, n, imp)
	}

	r := reconcileDay(t, pool, es[0].EffectiveDate)
	if got := runRow(t, pool, r.RunID); got != (run{15, 15, 15, 15}) {
		t.Errorf("run counted %+v, want 15 items and lines, all matched", got)
	}
	if b := breaks(t, pool, r.RunID); b != "" {
		t.Errorf("discrepancies of an exact statement:\n%s", b)
	}
	if n := count(t, pool, `SELECT count(*) FROM corrections WHERE tenant_id = $1`, tenant); n != 0 {
		t.Errorf("%d corrections proposed for an exact statement", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM reconciliation_classes WHERE tenant_id = $1 AND run_id = $2
	                         AND NOT (class = 'matched' AND currency = 'USD' AND ledger_items = 15 AND statement_lines = 15)`,
		tenant, r.RunID); n != 0 {
		t.Errorf("%d classes besides 15 matched pairs in USD", n)
	}
	if l, s, x := totals(t, pool, r.RunID); l != net || s != net || x != 0 {
		t.Errorf("totals: ledger %d, statement %d, explained %d; want both %d", l, s, x, net)
	}
	if len(r.Bridge) != 1 || !r.Bridge[0].Unexplained.IsZero() || len(r.Discrepancies) != 0 {
		t.Errorf("report: bridge %+v, discrepancies %+v; want one bridge with nothing unexplained", r.Bridge, r.Discrepancies)
	}
}

// planted is a ledger of fifteen entries and a statement that leaves out
// one of them and shows another 0.50 short.
type planted struct {
	es               []ach.Entry
	missing, changed ach.Entry
}

func plant(t *testing.T, pool *pgxpool.Pool) planted {
	t.Helper()
	es := liveEntries(22, 15)
	ingestFile(t, pool, achFile(t, es), ingest.Options{})
	p := planted{es: es, missing: es[2], changed: es[5]}
	var lines []stmtLine
	for i, e := range es {
		l := lineOf(e)
		switch i {
		case 2:
			continue
		case 5:
			l.amount -= 50
		}
		lines = append(lines, l)
	}
	if imp := importStatement(t, pool, statementFile(t, lines), "ach"); imp.Added != 14 {
		t.Fatalf("statement import: %+v, want 14 lines added", imp)
	}
	return p
}

// The missing line and the changed amount are one discrepancy each, of
// their classes; the amount mismatch proposes a correction of the 0.50
// under the key derived from its posting, against adjustments; the totals
// differ by exactly what the two classes account for.
func TestStatementWithAMissingLineAndAChangedAmount(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	p := plant(t, pool)
	r := reconcileDay(t, pool, p.es[0].EffectiveDate)

	if got := runRow(t, pool, r.RunID); got != (run{15, 14, 13, 13}) {
		t.Errorf("run counted %+v, want 15 items, 14 lines, 13 matched", got)
	}
	key := p.changed.Key() + ":correction:amount_mismatch"
	want := fmt.Sprintln("amount_mismatch", p.changed.Key(), true, key, true) +
		fmt.Sprintln("missing_in_statement", p.missing.Key(), false, "", true)
	if b := breaks(t, pool, r.RunID); b != want {
		t.Errorf("discrepancies:\n%swant\n%s", b, want)
	}

	direction := "C" // the statement shows less taken from the customer than the ledger
	if paid(p.changed) {
		direction = "D" // the statement shows less paid to the customer
	}
	var c struct {
		PostingKey, Class, Status, Direction, Counter string
		Amount, Run                                   int64
		RefersTo                                      bool
	}
	if err := pool.QueryRow(context.Background(), `
SELECT c.posting_key, c.class, c.status, c.direction, c.counter_account, c.amount_minor, c.proposed_by_run,
       c.refers_to = p.id
  FROM corrections c JOIN postings p ON p.tenant_id = c.tenant_id AND p.posting_key = $3
 WHERE c.tenant_id = $1 AND c.correction_key = $2`, tenant, key, p.changed.Key()).Scan(
		&c.PostingKey, &c.Class, &c.Status, &c.Direction, &c.Counter, &c.Amount, &c.Run, &c.RefersTo); err != nil {
		t.Fatalf("the correction under %s: %v", key, err)
	}
	if c.PostingKey != key || c.Class != "amount_mismatch" || c.Status != "proposed" || c.Direction != direction ||
		c.Counter != "adjustments:ach" || c.Amount != 50 || c.Run != r.RunID || !c.RefersTo {
		t.Errorf("correction %+v, want 50 %s proposed by run %d under %s, referring to the posting, against adjustments:ach",
			c, direction, r.RunID, key)
	}
	if n := count(t, pool, `SELECT count(*) FROM corrections WHERE tenant_id = $1`, tenant); n != 1 {
		t.Errorf("%d corrections, want the amount mismatch's alone", n)
	}

	l, s, x := totals(t, pool, r.RunID)
	short := int64(50) // the ledger's side of the changed entry is 0.50 further from zero
	if !paid(p.changed) {
		short = -50
	}
	diff := signed(p.missing) + short
	if l-s != diff || x != diff {
		t.Errorf("totals: ledger %d, statement %d, the breaks explain %d; want a difference of %d", l, s, x, diff)
	}
	if len(r.Bridge) != 1 || !r.Bridge[0].Unexplained.IsZero() {
		t.Errorf("bridge %+v, want nothing unexplained", r.Bridge)
	}
}

// Reconciling the same period again lists the same breaks under the same
// correction keys, and proposes nothing new: the one correction is still
// the first run's.
func TestReconcilingAgainProposesNothing(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	p := plant(t, pool)
	first := reconcileDay(t, pool, p.es[0].EffectiveDate)
	again := reconcileDay(t, pool, p.es[0].EffectiveDate)
	if again.RunID == first.RunID {
		t.Fatalf("both reconciliations are run %d", first.RunID)
	}
	if b1, b2 := breaks(t, pool, first.RunID), breaks(t, pool, again.RunID); b1 != b2 || b2 == "" {
		t.Errorf("the second run listed\n%sthe first\n%s", b2, b1)
	}
	if n := count(t, pool, `SELECT count(*) FROM corrections WHERE tenant_id = $1`, tenant); n != 1 {
		t.Fatalf("%d corrections after reconciling twice, want 1", n)
	}
	if n := count(t, pool, `SELECT proposed_by_run FROM corrections WHERE tenant_id = $1`, tenant); n != first.RunID {
		t.Errorf("the correction is of run %d, want the first run, %d", n, first.RunID)
	}
}

// Importing the same statement again adds no line: each is audited as a
// duplicate of the line the first import added.
func TestImportingAStatementAgainAddsNoLines(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var lines []stmtLine
	for _, e := range liveEntries(23, 6) {
		lines = append(lines, lineOf(e))
	}
	f := statementFile(t, lines)
	importStatement(t, pool, f, "ach")
	again := importStatement(t, pool, f, "ach")
	if again.Added != 0 || again.Duplicates != 6 || again.Conflicts != 0 {
		t.Errorf("second import: %+v, want 6 duplicates", again)
	}
	if n := count(t, pool, `SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, tenant); n != 6 {
		t.Errorf("%d statement lines after importing 6 twice", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'duplicate'
	                         AND kind = 'statement' AND existing_line_id IS NOT NULL AND NOT needs_attention`,
		tenant, again.RunID); n != 6 {
		t.Errorf("%d duplicate events of the second import, want 6", n)
	}
}
