package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/report"
)

// ErrNotFound means no reconciliation run has the id asked for.
var ErrNotFound = errors.New("reconcile: run not found")

// classRank is a class's place in the report's order (breaks first, then
// what is explained, then what matched).
func classRank(code string) int {
	for i, c := range report.KnownClasses() {
		if c.Code == code {
			return i
		}
	}
	return len(report.KnownClasses())
}

// Latest returns the id of the tenant's newest reconciliation run.
func Latest(ctx context.Context, q ledger.Querier, tenant string) (int64, error) {
	var id *int64
	if err := q.QueryRow(ctx, `SELECT max(id) FROM reconciliations WHERE tenant_id = $1`, tenant).Scan(&id); err != nil {
		return 0, fmt.Errorf("reconcile: latest run: %w", err)
	}
	if id == nil {
		return 0, fmt.Errorf("%w: tenant %q has no reconciliation runs yet", ErrNotFound, tenant)
	}
	return *id, nil
}

// View reads a stored reconciliation run as a report and passes it to fn,
// with the read-only snapshot it is read in: every pass over the report's
// discrepancies (report.Report.Each) reads the same rows, whatever an
// operator acknowledges or decides meanwhile. The report can be read only
// while fn runs.
func View(ctx context.Context, pool *pgxpool.Pool, tenant string, runID int64, fn func(ledger.Querier, *report.Report) error) error {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("reconcile: read run %d: %w", runID, err)
	}
	// A read-only transaction has nothing to keep.
	defer func() { _ = tx.Rollback(ctx) }()
	r, err := Load(ctx, tx, tenant, runID)
	if err != nil {
		return err
	}
	return fn(tx, r)
}

// Load reads a stored reconciliation run as a report. Its discrepancies are
// not held: each pass over them (report.Report.Each) reads them from q
// again, so q should be a snapshot that outlives the report (View).
func Load(ctx context.Context, q ledger.Querier, tenant string, runID int64) (*report.Report, error) {
	r := &report.Report{RunID: runID, Tenant: tenant}
	var from, to time.Time
	var last *time.Time
	err := q.QueryRow(ctx, `
SELECT source, period_from, period_to, window_days, tolerance_minor, statement_last_date, created_at,
       ledger_items, statement_lines, matched_ledger, matched_statement
  FROM reconciliations WHERE tenant_id = $1 AND id = $2`, tenant, runID).Scan(
		&r.Source, &from, &to, &r.Window, &r.Tolerance, &last, &r.CreatedAt,
		&r.LedgerItems, &r.StatementLines, &r.MatchedLedger, &r.MatchedStatement)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %d", ErrNotFound, runID)
	}
	if err != nil {
		return nil, fmt.Errorf("reconcile: load run %d: %w", runID, err)
	}
	r.From, r.To = from.Format(time.DateOnly), to.Format(time.DateOnly)
	if last != nil {
		r.StatementLastDate = last.Format(time.DateOnly)
	}
	r.EmptySide = report.EmptySideOf(r.LedgerItems, r.StatementLines)
	if err := loadBridge(ctx, q, r); err != nil {
		return nil, err
	}
	if err := loadOutsideTotals(ctx, q, r); err != nil {
		return nil, err
	}
	r.Stream = func(yield func(*report.Discrepancy) error) error {
		return eachDiscrepancy(ctx, q, tenant, runID, yield)
	}
	return r, nil
}

// outsideTotalsOfRun sums, per currency and class, the discrepancies that
// neither side's total holds, with each one's difference and currency as
// the report computes them from its row (eachDiscrepancy). $1 tenant, $2
// run, $3 and $4 the two classes.
const outsideTotalsOfRun = `
SELECT currency, class, sum(difference), count(*)
  FROM (SELECT d.class,
               coalesce(nullif(CASE WHEN d.posting_key IS NOT NULL THEN coalesce(d.ledger_currency, '') END, ''),
                        CASE WHEN d.line_key IS NOT NULL THEN coalesce(d.statement_currency, '') END, '') AS currency,
               CASE WHEN d.class = $3 AND d.line_key IS NOT NULL THEN coalesce(d.ledger_net - d.statement_amount, 0)
                    WHEN d.class = $4 THEN coalesce(d.statement_difference, 0)
                    ELSE 0 END AS difference
          FROM discrepancies d
         WHERE d.tenant_id = $1 AND d.run_id = $2 AND d.class IN ($3, $4)) o
 GROUP BY currency, class`

// loadOutsideTotals fills each bridge's OutsideTotals: the breaks that
// neither total holds (settlement totals, statements that do not add up),
// summed per currency and class, so that the bridge shows the same
// differences as the break list and the chart. report.Validate holds these
// sums to the discrepancies as it reads them.
func loadOutsideTotals(ctx context.Context, q ledger.Querier, r *report.Report) error {
	rows, err := q.Query(ctx, outsideTotalsOfRun, r.Tenant, r.RunID, report.ClassSettlementTotalMismatch, report.ClassStatementUnbalanced)
	if err != nil {
		return fmt.Errorf("reconcile: load outside totals: %w", err)
	}
	at := make(map[string]int, len(r.Bridge))
	for i := range r.Bridge {
		at[r.Bridge[i].Currency] = i
		r.Bridge[i].OutsideTotals = []report.ClassTotal{}
	}
	var cur string
	var o report.ClassTotal
	if _, err := pgx.ForEachRow(rows, []any{&cur, &o.Class, &o.Amount, &o.Count}, func() error {
		bi, ok := at[cur]
		if !ok {
			// Every statement currency has its totals row; a bridge of
			// zeros keeps the line visible if one ever does not.
			r.Bridge = append(r.Bridge, report.Bridge{Currency: cur, Differences: []report.ClassTotal{},
				OutsideTotals: []report.ClassTotal{}})
			bi = len(r.Bridge) - 1
			at[cur] = bi
		}
		r.Bridge[bi].OutsideTotals = append(r.Bridge[bi].OutsideTotals, o)
		return nil
	}); err != nil {
		return fmt.Errorf("reconcile: load outside totals: %w", err)
	}
	for i := range r.Bridge {
		o := r.Bridge[i].OutsideTotals
		sort.Slice(o, func(a, b int) bool { return classRank(o[a].Class) < classRank(o[b].Class) })
	}
	sort.Slice(r.Bridge, func(i, j int) bool { return r.Bridge[i].Currency < r.Bridge[j].Currency })
	return nil
}

func loadBridge(ctx context.Context, q ledger.Querier, r *report.Report) error {
	bridges := map[string]*report.Bridge{}
	bridge := func(cur string) *report.Bridge {
		if b, ok := bridges[cur]; ok {
			return b
		}
		b := &report.Bridge{Currency: cur}
		bridges[cur] = b
		return b
	}
	rows, err := q.Query(ctx, `
SELECT currency, ledger_total, statement_total FROM reconciliation_totals WHERE tenant_id = $1 AND run_id = $2`,
		r.Tenant, r.RunID)
	if err != nil {
		return fmt.Errorf("reconcile: load totals: %w", err)
	}
	var cur string
	var lt, st money.Total
	if _, err := pgx.ForEachRow(rows, []any{&cur, &lt, &st}, func() error {
		b := bridge(cur)
		b.LedgerTotal, b.StatementTotal = lt, st
		return nil
	}); err != nil {
		return fmt.Errorf("reconcile: load totals: %w", err)
	}
	counts := map[string]*report.ClassCount{}
	rows, err = q.Query(ctx, `
SELECT currency, class, ledger_items, statement_lines, ledger_amount, statement_amount
  FROM reconciliation_classes WHERE tenant_id = $1 AND run_id = $2`, r.Tenant, r.RunID)
	if err != nil {
		return fmt.Errorf("reconcile: load classes: %w", err)
	}
	var class string
	var li, sl int64
	var la, sa money.Total
	if _, err := pgx.ForEachRow(rows, []any{&cur, &class, &li, &sl, &la, &sa}, func() error {
		b := bridge(cur)
		// A settlement total's lines are in neither total, so the class
		// adds nothing to the bridge's sum (its stored amounts are zero);
		// its real differences are shown beside the bridge, summed from
		// the discrepancies (addOutsideTotals). Were a non-zero amount
		// ever stored, leaving it out would show as unexplained.
		if !report.OutsideTotals(class) {
			b.Differences = append(b.Differences, report.ClassTotal{Class: class, Amount: la.Sub(sa), Count: li + sl})
		}
		c, ok := counts[class]
		if !ok {
			info, _ := report.LookupClass(class)
			c = &report.ClassCount{Class: class, Break: info.Break}
			counts[class] = c
		}
		c.LedgerItems += li
		c.StatementLines += sl
		return nil
	}); err != nil {
		return fmt.Errorf("reconcile: load classes: %w", err)
	}
	for _, b := range bridges {
		sort.Slice(b.Differences, func(i, j int) bool {
			return classRank(b.Differences[i].Class) < classRank(b.Differences[j].Class)
		})
		b.Unexplained = b.LedgerTotal.Sub(b.StatementTotal)
		for _, d := range b.Differences {
			b.Unexplained = b.Unexplained.Sub(d.Amount)
		}
		r.Bridge = append(r.Bridge, *b)
	}
	sort.Slice(r.Bridge, func(i, j int) bool { return r.Bridge[i].Currency < r.Bridge[j].Currency })
	r.Classes = []report.ClassCount{}
	for _, class := range report.KnownClasses() {
		if c, ok := counts[class.Code]; ok {
			r.Classes = append(r.Classes, *c)
		}
	}
	if r.Bridge == nil {
		r.Bridge = []report.Bridge{}
	}
	return nil
}

// discrepanciesOfRun reads a stored run's discrepancies, in order, with
// what the report shows beside each: the files of its two sides, its place
// in the break inventory and its correction as they stand now. $1 tenant,
// $2 run.
const discrepanciesOfRun = `
SELECT d.class, d.reason, d.is_break, d.explanation, d.reference, coalesce(d.correction_key, ''),
       d.posting_key, coalesce(d.posting_kind, ''), coalesce(lr.file_name, ''), coalesce(d.ledger_line, 0),
       d.ledger_amount, coalesce(d.ledger_currency, ''), d.ledger_date,
       d.line_key, coalesce(d.line_type, ''), coalesce(sr.file_name, ''), coalesce(d.statement_line, 0),
       d.statement_amount, coalesce(d.statement_currency, ''), d.statement_date, d.ledger_net,
       d.statement_difference,
       coalesce(b.status = 'acknowledged', false), coalesce(to_char(b.first_seen, 'YYYY-MM-DD'), ''),
       coalesce(current_date - b.first_seen::date, 0),
       coalesce(c.status, ''), rj.operator, coalesce(rj.login, rj.db_role), rj.reason, rj.decided_at
  FROM discrepancies d
  JOIN reconciliations rr ON rr.tenant_id = d.tenant_id AND rr.id = d.run_id
  -- Every lookup per discrepancy is a probe of a key (LIMIT 1 keeps it
  -- one). A new run's discrepancies have no statistics yet: taken for one
  -- row, they were joined to a table read whole once per discrepancy, the
  -- tenant's corrections (9,508 discrepancies x 6,697 corrections: 15 s),
  -- as its breaks were before them.
  LEFT JOIN LATERAL (SELECT file_name FROM runs
                      WHERE tenant_id = d.tenant_id AND id = d.ledger_run_id LIMIT 1) lr ON true
  LEFT JOIN LATERAL (SELECT file_name FROM runs
                      WHERE tenant_id = d.tenant_id AND id = d.statement_run_id LIMIT 1) sr ON true
  -- A break's place in the inventory, as it stands now.
  LEFT JOIN LATERAL (SELECT b.status, b.first_seen FROM breaks b
                      WHERE d.is_break AND b.tenant_id = d.tenant_id AND b.source = rr.source AND b.class = d.class
                        AND b.item_key = coalesce(d.posting_key, d.line_key, d.reference)
                      LIMIT 1) b ON true
  -- The break's correction as it stands now, and who rejected it and why.
  LEFT JOIN LATERAL (SELECT id, status FROM corrections
                      WHERE tenant_id = d.tenant_id AND correction_key = d.correction_key LIMIT 1) c ON true
  LEFT JOIN LATERAL (SELECT cd.operator, cd.login, cd.db_role, cd.reason, cd.decided_at
                       FROM correction_decisions cd
                      WHERE c.status = 'rejected' AND cd.tenant_id = d.tenant_id AND cd.correction_id = c.id
                        AND cd.decision = 'reject'
                      ORDER BY cd.decided_at, cd.id LIMIT 1) rj ON true
 WHERE d.tenant_id = $1 AND d.run_id = $2
 ORDER BY d.seq`

// eachDiscrepancy calls yield with each of a stored run's discrepancies,
// in order, each read afresh.
func eachDiscrepancy(ctx context.Context, q ledger.Querier, tenant string, runID int64, yield func(*report.Discrepancy) error) error {
	rows, err := q.Query(ctx, discrepanciesOfRun, tenant, runID)
	if err != nil {
		return fmt.Errorf("reconcile: load discrepancies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDiscrepancy(rows)
		if err != nil {
			return fmt.Errorf("reconcile: load discrepancies: %w", err)
		}
		if err := yield(&d); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reconcile: load discrepancies: %w", err)
	}
	return nil
}

// scanDiscrepancy reads one row of discrepanciesOfRun.
func scanDiscrepancy(row pgx.Rows) (report.Discrepancy, error) {
	var d report.Discrepancy
	var lKey, sKey *string
	var lAmt, sAmt *int64
	var lDate, sDate *time.Time
	var l, s report.Side
	var net, unbalanced *money.Total
	var rejOperator, rejLogin, rejReason *string
	var rejAt *time.Time
	err := row.Scan(&d.Class, &d.Reason, &d.Break, &d.Explanation, &d.Reference, &d.CorrectionKey,
		&lKey, &l.Kind, &l.File, &l.Line, &lAmt, &l.Currency, &lDate,
		&sKey, &s.Kind, &s.File, &s.Line, &sAmt, &s.Currency, &sDate, &net, &unbalanced,
		&d.Acknowledged, &d.FirstSeen, &d.AgeDays,
		&d.CorrectionStatus, &rejOperator, &rejLogin, &rejReason, &rejAt)
	if err != nil {
		return d, err
	}
	if rejOperator != nil {
		d.Rejection = &report.Rejection{Operator: *rejOperator, Reason: *rejReason, At: rejAt.UTC()}
		if rejLogin != nil {
			d.Rejection.Login = *rejLogin
		}
	}
	if lKey != nil {
		l.Key, l.Amount, l.ValueDate = *lKey, *lAmt, lDate.Format(time.DateOnly)
		d.Ledger = &l
		d.Currency = l.Currency
		d.Difference = l.Amount
	}
	if sKey != nil {
		s.Key, s.Amount, s.ValueDate = *sKey, *sAmt, sDate.Format(time.DateOnly)
		d.Statement = &s
		if d.Currency == "" {
			d.Currency = s.Currency
		}
		if d.Ledger == nil || s.Currency == l.Currency {
			d.Difference -= s.Amount
		}
	}
	switch d.Class {
	case report.ClassCurrencyMismatch:
		// Amounts in two currencies have no difference; the explanation
		// and both sides say what differs.
		d.Difference = 0
	case report.ClassSettlementTotalMismatch:
		// The difference is the ledger's net of the total's day minus
		// the total, as the explanation says. A run stored before the
		// net was kept (migration 00011) has none, and shows 0.
		d.Difference = 0
		if net != nil && d.Statement != nil {
			diff, ok := net.Sub(money.TotalOf(d.Statement.Amount)).Int64()
			if !ok {
				return d, fmt.Errorf("settlement total %s differs from the ledger's net by %s minor units, beyond what a discrepancy holds",
					d.Statement.Key, net.Sub(money.TotalOf(d.Statement.Amount)))
			}
			d.Difference = diff
		}
	case report.ClassStatementUnbalanced:
		// The statement side is the closing balance, not an item: the
		// difference is what it states beyond the opening balance plus
		// the booked entries.
		d.Difference = 0
		if unbalanced != nil {
			diff, ok := unbalanced.Int64()
			if !ok {
				return d, fmt.Errorf("statement %s is unbalanced by %s minor units, beyond what a discrepancy holds", d.Reference, unbalanced)
			}
			d.Difference = diff
		}
	}
	return d, nil
}
