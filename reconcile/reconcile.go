package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/report"
)

// Sentinel errors that callers branch on.
var (
	// ErrPeriod means the period or window asked for makes no sense.
	ErrPeriod = errors.New("reconcile: bad period")
	// ErrUnaccounted means an item did not end in exactly one class. It is
	// a bug, and the run is not stored.
	ErrUnaccounted = errors.New("reconcile: items not accounted for")
)

// Options say what to reconcile.
type Options struct {
	Tenant string
	Source string
	From   time.Time
	To     time.Time
	// WindowDays is how far apart the two sides' value dates may be and
	// still match.
	WindowDays int
	// Tolerance is how far apart the amounts may be, in minor units, and
	// still match.
	Tolerance int64
	// AdjustmentsAccount takes amount differences and unbooked fees;
	// SuspenseAccount takes money the statement shows and the ledger lacks.
	// Empty means "adjustments:<source>" and "suspense:<source>".
	AdjustmentsAccount string
	SuspenseAccount    string
	Log                *slog.Logger
}

// DefaultWindowDays is the default date window.
const DefaultWindowDays = 3

// Run reconciles one source and period and stores the run, its
// discrepancies and its proposed corrections, all in one transaction. It
// returns the stored report.
func Run(ctx context.Context, pool *pgxpool.Pool, o Options) (*report.Report, error) {
	if o.Source == "" {
		return nil, fmt.Errorf("%w: a source is required", ErrPeriod)
	}
	if o.To.Before(o.From) {
		return nil, fmt.Errorf("%w: --to %s is before --from %s", ErrPeriod, o.To.Format(time.DateOnly), o.From.Format(time.DateOnly))
	}
	if o.WindowDays < 0 || o.Tolerance < 0 {
		return nil, fmt.Errorf("%w: window and tolerance cannot be negative", ErrPeriod)
	}
	if o.AdjustmentsAccount == "" {
		o.AdjustmentsAccount = "adjustments:" + o.Source
	}
	if o.SuspenseAccount == "" {
		o.SuspenseAccount = "suspense:" + o.Source
	}
	var runID int64
	// One snapshot for every statement, so that an ingest committing while
	// this runs cannot make the ledger side disagree with itself.
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var err error
		runID, err = reconcileIn(ctx, tx, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	return Load(ctx, pool, o.Tenant, runID)
}

func reconcileIn(ctx context.Context, tx pgx.Tx, o Options) (int64, error) {
	var runID int64
	err := tx.QueryRow(ctx, `
INSERT INTO reconciliations (tenant_id, source, period_from, period_to, window_days, tolerance_minor)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, o.Tenant, o.Source, o.From, o.To, o.WindowDays, o.Tolerance).Scan(&runID)
	if err != nil {
		return 0, fmt.Errorf("reconcile: start run: %w", err)
	}
	steps := []struct {
		what string
		sql  string
		args []any
	}{
		{"gather ledger items", gatherLedger, []any{o.Tenant, o.Source, o.From, o.To}},
		{"gather statement lines", gatherStatement, []any{o.Tenant, o.Source, o.From, o.To}},
		{"pair items", pairItems, nil},
		{"classify", classify, []any{o.WindowDays, o.Tolerance, o.Tenant}},
	}
	for _, s := range steps {
		if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
			return 0, fmt.Errorf("reconcile: %s: %w", s.what, err)
		}
	}
	if err := checkAccounted(ctx, tx); err != nil {
		return 0, err
	}
	if err := loadExponents(ctx, tx); err != nil {
		return 0, err
	}
	steps = []struct {
		what string
		sql  string
		args []any
	}{
		{"store totals", storeTotals, []any{o.Tenant, runID}},
		{"store discrepancies", storeDiscrepancies, []any{o.Tenant, runID, o.WindowDays}},
		{"propose corrections", proposeCorrections, []any{o.Tenant, runID, o.Source, o.AdjustmentsAccount, o.SuspenseAccount}},
		{"finish run", finishRun, []any{o.Tenant, runID}},
	}
	for _, s := range steps {
		if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
			return 0, fmt.Errorf("reconcile: %s: %w", s.what, err)
		}
	}
	return runID, nil
}

// checkAccounted asserts that every ledger item and every statement line
// ended in exactly one class.
func checkAccounted(ctx context.Context, tx pgx.Tx) error {
	var ledger, ledgerClassified, ledgerTwice, lines, linesClassified, linesTwice int64
	err := tx.QueryRow(ctx, `
SELECT (SELECT count(*) FROM recon_ledger),
       (SELECT count(DISTINCT l_id) FROM recon_class WHERE l_id IS NOT NULL),
       (SELECT count(*) - count(DISTINCT l_id) FROM recon_class WHERE l_id IS NOT NULL),
       (SELECT count(*) FROM recon_statement),
       (SELECT count(DISTINCT s_id) FROM recon_class WHERE s_id IS NOT NULL),
       (SELECT count(*) - count(DISTINCT s_id) FROM recon_class WHERE s_id IS NOT NULL)`).Scan(
		&ledger, &ledgerClassified, &ledgerTwice, &lines, &linesClassified, &linesTwice)
	if err != nil {
		return fmt.Errorf("reconcile: count classified items: %w", err)
	}
	if ledger != ledgerClassified || ledgerTwice != 0 || lines != linesClassified || linesTwice != 0 {
		return fmt.Errorf("%w: %d ledger items, %d classified (%d twice); %d statement lines, %d classified (%d twice)",
			ErrUnaccounted, ledger, ledgerClassified, ledgerTwice, lines, linesClassified, linesTwice)
	}
	return nil
}

// loadExponents gives the explanation SQL each currency's exponent, so
// that amounts read "99.50 USD", exactly.
func loadExponents(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `
SELECT currency FROM recon_ledger UNION SELECT currency FROM recon_statement`)
	if err != nil {
		return fmt.Errorf("reconcile: currencies: %w", err)
	}
	codes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("reconcile: currencies: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE recon_exponent (currency char(3) PRIMARY KEY, exponent int NOT NULL) ON COMMIT DROP`); err != nil {
		return fmt.Errorf("reconcile: currencies: %w", err)
	}
	for _, code := range codes {
		exp := 2 // an unknown code cannot reach the ledger; 2 is only a safe default
		if c, err := money.LookupCurrency(code); err == nil {
			exp = c.Exponent
		}
		if _, err := tx.Exec(ctx, `INSERT INTO recon_exponent VALUES ($1, $2)`, code, exp); err != nil {
			return fmt.Errorf("reconcile: currencies: %w", err)
		}
	}
	return nil
}
