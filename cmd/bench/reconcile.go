package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// bareJoin is the reconciliation baseline: the postings and statement lines
// of one tenant, source and period, full outer joined on reference and
// counted per class. It writes nothing, pairs nothing beyond equal
// references and explains nothing; it is the least any reconciliation of
// the two tables must read.
const bareJoin = `
WITH l AS (
    SELECT reference, CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END AS amount
      FROM postings
     WHERE tenant_id = $1 AND source = $2 AND value_date BETWEEN $3 AND $4
), s AS (
    SELECT reference, CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END AS amount
      FROM statement_lines
     WHERE tenant_id = $1 AND source = $2 AND value_date BETWEEN $3 AND $4
)
SELECT CASE WHEN s.reference IS NULL THEN 'missing_in_statement'
            WHEN l.reference IS NULL THEN 'missing_in_ledger'
            WHEN l.amount <> s.amount THEN 'amount_mismatch'
            ELSE 'matched' END AS class,
       count(*)
  FROM l FULL OUTER JOIN s ON s.reference = l.reference
 GROUP BY 1
 ORDER BY 1`

// storedClasses reads the items per class of the tenant's latest
// reconciliation run, to check it against what the statement planted.
const storedClasses = `
SELECT class, sum(ledger_items + statement_lines)
  FROM reconciliation_classes
 WHERE tenant_id = $1 AND run_id = (SELECT max(id) FROM reconciliations WHERE tenant_id = $1)
 GROUP BY class
 ORDER BY class`

// measureReconcile imports the statement for the ACH tenant, then times
// 'clearing reconcile' of the whole period next to the bare join. The join
// runs once before the command, untimed, so that both find the two tables
// equally warm in the server's cache, and once after, timed.
func (b *bench) measureReconcile(ctx context.Context, in inputs, ach achResult) error {
	p := ach.planted
	imp, err := b.clearing(ctx, []int{0}, "", "statement", "import", "--tenant", ach.tenant, "--source", "ach",
		"--format", "csv", "--map", in.mapping, in.statement)
	if err != nil {
		return err
	}
	b.addDetail("statement import, "+count(p.lines)+" lines", fmt.Sprintf("%s lines/s (%s), peak RSS %.0f MiB",
		perSecond(p.lines, imp.wall), seconds(imp.wall), imp.rssMiB()))
	from, to := p.from.Format(time.DateOnly), p.to.Format(time.DateOnly)
	if _, _, err := b.timeBareJoin(ctx, ach.tenant, p.from, p.to); err != nil {
		return err
	}
	b.srv.checkpoint(ctx)
	rec, err := b.clearing(ctx, []int{3}, b.path("reconcile.txt"), "reconcile", "--tenant", ach.tenant,
		"--source", "ach", "--from", from, "--to", to)
	stopped := errors.Is(err, errTimedOut)
	if err != nil && !stopped {
		return err
	}
	joinTook, joinClasses, err := b.timeBareJoin(ctx, ach.tenant, p.from, p.to)
	if err != nil {
		return err
	}
	postings := ach.firstSum.Posted
	value, bound := seconds(rec.wall), ""
	if stopped {
		value, bound = "> "+value+" (stopped)", ">"
	}
	b.addFigure(ratioFigure(fmt.Sprintf("reconciliation, %s postings vs %s lines", count(postings), count(p.lines)),
		value, "bare full outer join "+seconds(joinTook), rec.wall.Seconds()/joinTook.Seconds(), 1.5, false, bound))
	b.addDetail("reconciliation: peak RSS", fmt.Sprintf("%.0f MiB", rec.rssMiB()))
	b.addDetail("statement: planted breaks", fmt.Sprintf("%s missing_in_statement, %s amount_mismatch, %s missing_in_ledger, %s unbooked_fee",
		count(p.missing), count(p.changed), count(p.extra), count(p.fees)))
	b.addDetail("bare join: items per class", joinClasses)
	if stopped {
		b.warn("%v", err)
		return nil
	}
	return b.checkClasses(ctx, ach.tenant, p)
}

// timeBareJoin runs the bare join and returns its wall time and its counts.
func (b *bench) timeBareJoin(ctx context.Context, tenant string, from, to time.Time) (time.Duration, string, error) {
	began := time.Now()
	rows, err := b.srv.pool.Query(ctx, bareJoin, tenant, "ach", from, to)
	if err != nil {
		return 0, "", fmt.Errorf("bare join: %w", err)
	}
	var parts []string
	for rows.Next() {
		var class string
		var n int64
		if err := rows.Scan(&class, &n); err != nil {
			rows.Close()
			return 0, "", fmt.Errorf("bare join: %w", err)
		}
		parts = append(parts, count(n)+" "+class)
	}
	rows.Close()
	took := time.Since(began)
	if err := rows.Err(); err != nil {
		return 0, "", fmt.Errorf("bare join: %w", err)
	}
	return took, strings.Join(parts, ", "), nil
}

// checkClasses compares the stored reconciliation with the planted breaks.
// A difference is a finding about reconciliation, not a failure to measure:
// it is reported as a warning.
func (b *bench) checkClasses(ctx context.Context, tenant string, p planted) error {
	want := map[string]int64{
		"matched": 2 * p.matched, "missing_in_statement": p.missing, "amount_mismatch": 2 * p.changed,
		"missing_in_ledger": p.extra, "unbooked_fee": p.fees,
	}
	rows, err := b.srv.pool.Query(ctx, storedClasses, tenant)
	if err != nil {
		return fmt.Errorf("read the reconciliation's classes: %w", err)
	}
	got := map[string]int64{}
	var parts []string
	for rows.Next() {
		var class string
		var n int64
		if err := rows.Scan(&class, &n); err != nil {
			rows.Close()
			return err
		}
		got[class] = n
		parts = append(parts, count(n)+" "+class)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	b.addDetail("clearing reconcile: items per class (both sides)", strings.Join(parts, ", "))
	for class, n := range want {
		if got[class] != n {
			b.warn("reconciliation put %s items in %s; the statement planted %s", count(got[class]), class, count(n))
		}
	}
	for class, n := range got {
		if _, ok := want[class]; !ok {
			b.warn("reconciliation put %s items in %s, a class the statement did not plant", count(n), class)
		}
	}
	return nil
}
