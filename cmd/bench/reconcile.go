package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	reconreport "github.com/clearing-dev/clearing/internal/report"
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

// reconcileTarget is the most reconciliation may take against the bare
// join of the same rows.
const reconcileTarget = 2.0

// reconcileRun is one run of the reconciliation measurement.
type reconcileRun struct {
	imp, rec      ran
	join          time.Duration
	stopped       bool
	postings      int64
	joinClasses   string
	storedClasses string // what clearing stored, per class
}

// measureReconcile imports the statement for the tenant of one ACH run, then
// times 'clearing reconcile' of the whole period next to the bare join. The
// join runs once before the command, untimed, so that both find the two
// tables equally warm in the server's cache, and once after, timed.
func (b *bench) measureReconcile(ctx context.Context, in inputs, tenant string, postings int64, p planted, run int) (reconcileRun, error) {
	rr := reconcileRun{postings: postings}
	var err error
	rr.imp, err = b.clearing(ctx, []int{0}, "", "statement", "import", "--tenant", tenant, "--source", "ach",
		"--format", "csv", "--map", in.mapping, in.statement)
	if err != nil {
		return rr, err
	}
	from, to := p.from.Format(time.DateOnly), p.to.Format(time.DateOnly)
	if _, _, err := b.timeBareJoin(ctx, tenant, p.from, p.to); err != nil {
		return rr, err
	}
	b.srv.checkpoint(ctx)
	rr.rec, err = b.clearing(ctx, []int{3}, b.path("reconcile.txt"), "reconcile", "--tenant", tenant,
		"--source", "ach", "--from", from, "--to", to)
	if rr.stopped = errors.Is(err, errTimedOut); err != nil && !rr.stopped {
		return rr, err
	}
	if rr.join, rr.joinClasses, err = b.timeBareJoin(ctx, tenant, p.from, p.to); err != nil {
		return rr, err
	}
	fmt.Fprintf(b.out, "  run %d, reconciliation: statement import %s, reconcile %s, bare join %s\n", run,
		seconds(rr.imp.wall), seconds(rr.rec.wall), seconds(rr.join))
	if rr.stopped {
		b.warn("run %d: %v", run, err)
		return rr, nil
	}
	rr.storedClasses, err = b.checkClasses(ctx, tenant, p, run)
	return rr, err
}

// reportReconcile adds the reconciliation figure, judged by the median of
// the runs' ratios to their bare joins, and the memory of the statement
// import and of the reconciliation.
func (b *bench) reportReconcile(runs []reconcileRun, p planted) {
	if len(runs) == 0 {
		return
	}
	var done []reconcileRun
	for _, r := range runs {
		if !r.stopped {
			done = append(done, r)
		}
	}
	name := fmt.Sprintf("reconciliation, %s postings vs %s lines", count(runs[0].postings), count(p.lines))
	if len(done) == 0 {
		r := runs[0]
		b.addFigure(ratioFigure(name, "> "+seconds(r.rec.wall)+" (stopped)", "bare full outer join "+seconds(r.join),
			r.rec.wall.Seconds()/r.join.Seconds(), reconcileTarget, false, ">"))
	} else {
		of := func(f func(r reconcileRun) float64) spread {
			return spreadOf(pairs(done, func(r reconcileRun) (float64, bool) { return f(r), true }))
		}
		rec := of(func(r reconcileRun) float64 { return r.rec.wall.Seconds() })
		join := of(func(r reconcileRun) float64 { return r.join.Seconds() })
		ratio := of(func(r reconcileRun) float64 { return r.rec.wall.Seconds() / r.join.Seconds() })
		b.addFigure(ratioSpreadFigure(name, rec.secondsText(), "bare full outer join "+join.secondsText(), ratio, reconcileTarget, false, ""))
	}
	of := func(f func(r reconcileRun) float64) spread {
		return spreadOf(pairs(runs, func(r reconcileRun) (float64, bool) { return f(r), true }))
	}
	impRSS := of(func(r reconcileRun) float64 { return r.imp.rssMiB() })
	recRSS := of(func(r reconcileRun) float64 { return r.rec.rssMiB() })
	b.addFigure(figure{
		name:  "peak RSS, statement import / reconcile",
		value: impRSS.mibText() + " / " + recRSS.mibText(), target: fmt.Sprintf("< %d MiB", rssLimitMiB),
		met: yesNo(max(impRSS.hi, recRSS.hi) < rssLimitMiB),
	})
	imp := of(func(r reconcileRun) float64 { return rate(p.lines, r.imp.wall) })
	b.addDetail("statement import, "+count(p.lines)+" lines", imp.rateText("lines/s"))
	b.addDetail("statement: planted breaks", fmt.Sprintf("%s missing_in_statement, %s amount_mismatch, %s missing_in_ledger, %s unbooked_fee",
		count(p.missing), count(p.changed), count(p.extra), count(p.fees)))
	b.addDetail("bare join: items per class", runs[0].joinClasses)
	if runs[0].storedClasses != "" {
		b.addDetail("clearing reconcile: items per class (both sides)", runs[0].storedClasses)
	}
}

// oneSidedRun is the reconciliation of a ledger for which no statement
// line was imported.
type oneSidedRun struct {
	source   string
	postings int64
	rec      ran
	done     bool
	failed   error // why it was not measured
}

// reconcileOneSided reconciles the last run's ledger of c, which has no
// statement, over the whole span of its postings: every posting is
// missing_in_statement, and the report lists the most breaks it ever
// lists (report.MaxListedBreaks), all of one class. It runs once, after
// every timed figure, so that the breaks it stores reach no other
// measurement; only its memory is a figure. Coming last, after half an
// hour of figures, it does not fail the run: what stops it is reported in
// its figure, and every figure before it is written.
func (b *bench) reconcileOneSided(ctx context.Context, c *caseResult) (oneSidedRun, error) {
	o := oneSidedRun{source: c.c.source}
	if c.stopped || len(c.runs) == 0 {
		return o, nil
	}
	tenant := c.runs[len(c.runs)-1].tenant
	var from, to time.Time
	if err := b.srv.pool.QueryRow(ctx, `SELECT count(*), min(value_date), max(value_date) FROM postings WHERE tenant_id = $1 AND source = $2`,
		tenant, o.source).Scan(&o.postings, &from, &to); err != nil {
		return o, fmt.Errorf("the span of the %s ledger: %w", c.c.name, err)
	}
	b.srv.checkpoint(ctx)
	var err error
	o.rec, err = b.clearing(ctx, []int{3}, b.path("reconcile.txt"), "reconcile", "--tenant", tenant,
		"--source", o.source, "--from", from.Format(time.DateOnly), "--to", to.Format(time.DateOnly))
	os.Remove(b.path("reconcile.txt"))
	if err != nil {
		o.failed = err
		b.warn("the reconciliation without a statement: %v", err)
		return o, nil
	}
	o.done = true
	fmt.Fprintf(b.out, "  reconciliation without a statement, %s %s postings: %s, peak RSS %.0f MiB\n",
		count(o.postings), c.c.name, seconds(o.rec.wall), o.rec.rssMiB())
	return o, nil
}

// reportOneSided adds the memory of the reconciliation without a
// statement.
func (b *bench) reportOneSided(o oneSidedRun) {
	if o.failed != nil {
		b.addFigure(figure{
			name:  fmt.Sprintf("peak RSS, reconcile of %s %s postings without a statement", count(o.postings), o.source),
			value: "not measured (see the warnings)", target: fmt.Sprintf("< %d MiB", rssLimitMiB), met: "no",
		})
		return
	}
	if !o.done {
		return
	}
	b.addFigure(figure{
		name: fmt.Sprintf("peak RSS, reconcile of %s %s postings without a statement (%s breaks listed)",
			count(o.postings), o.source, count(min(o.postings, reconreport.MaxListedBreaks))),
		value: fmt.Sprintf("%.0f MiB", o.rec.rssMiB()), target: fmt.Sprintf("< %d MiB", rssLimitMiB),
		met: yesNo(o.rec.rssMiB() < rssLimitMiB),
	})
	b.addDetail("reconcile without a statement, "+count(o.postings)+" "+o.source+" postings", seconds(o.rec.wall))
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
func (b *bench) checkClasses(ctx context.Context, tenant string, p planted, run int) (string, error) {
	want := map[string]int64{
		"matched": 2 * p.matched, "missing_in_statement": p.missing, "amount_mismatch": 2 * p.changed,
		"missing_in_ledger": p.extra, "unbooked_fee": p.fees,
	}
	rows, err := b.srv.pool.Query(ctx, storedClasses, tenant)
	if err != nil {
		return "", fmt.Errorf("read the reconciliation's classes: %w", err)
	}
	got := map[string]int64{}
	var parts []string
	for rows.Next() {
		var class string
		var n int64
		if err := rows.Scan(&class, &n); err != nil {
			rows.Close()
			return "", err
		}
		got[class] = n
		parts = append(parts, count(n)+" "+class)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	for class, n := range want {
		if got[class] != n {
			b.warn("run %d: reconciliation put %s items in %s; the statement planted %s", run, count(got[class]), class, count(n))
		}
	}
	for class, n := range got {
		if _, ok := want[class]; !ok {
			b.warn("run %d: reconciliation put %s items in %s, a class the statement did not plant", run, count(n), class)
		}
	}
	return strings.Join(parts, ", "), nil
}
