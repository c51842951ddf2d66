package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/corrections"
	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/money"
)

// Sentinel errors that callers branch on.
var (
	// ErrPeriod means the options asked for make no sense: no source, a
	// period that ends before it starts, a negative window or tolerance.
	// Run checks them before any work.
	ErrPeriod = errors.New("reconcile: bad period")
	// ErrUnaccounted means an item did not end in exactly one class. It is
	// a bug, and the run is not stored.
	ErrUnaccounted = errors.New("reconcile: items not accounted for")
	// ErrUnknownSource means the source asked for has never had a posting
	// or a statement line in the tenant: most likely a typo, which must not
	// pass for a quiet period. The run is not stored; the error is an
	// *UnknownSourceError that names the sources the tenant has.
	ErrUnknownSource = errors.New("reconcile: unknown source")
)

// UnknownSourceError is the error for a source that the tenant has never
// seen. Known lists the tenant's sources, from its postings and its
// statement lines, in order; it is empty for a tenant with neither.
type UnknownSourceError struct {
	Tenant string
	Source string
	Known  []string
}

func (e *UnknownSourceError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("%v %q: tenant %q has no postings or statement lines yet", ErrUnknownSource, e.Source, e.Tenant)
	}
	return fmt.Sprintf("%v %q: tenant %q has postings or statement lines of %s", ErrUnknownSource, e.Source, e.Tenant, e.KnownList())
}

// Is makes errors.Is(err, ErrUnknownSource) true.
func (e *UnknownSourceError) Is(target error) bool { return target == ErrUnknownSource }

// maxListedSources bounds how many known sources an error names.
const maxListedSources = 20

// KnownList names the known sources, at most maxListedSources of them,
// saying how many more there are.
func (e *UnknownSourceError) KnownList() string {
	if len(e.Known) <= maxListedSources {
		return strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(e.Known[:maxListedSources], ", "), len(e.Known)-maxListedSources)
}

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
// returns the stored run's id, which View reads as a report.
func Run(ctx context.Context, pool *pgxpool.Pool, o Options) (int64, error) {
	if o.Source == "" {
		return 0, fmt.Errorf("%w: a source is required", ErrPeriod)
	}
	if o.To.Before(o.From) {
		return 0, fmt.Errorf("%w: --to %s is before --from %s", ErrPeriod, o.To.Format(time.DateOnly), o.From.Format(time.DateOnly))
	}
	if o.WindowDays < 0 || o.Tolerance < 0 {
		return 0, fmt.Errorf("%w: window and tolerance cannot be negative", ErrPeriod)
	}
	if o.AdjustmentsAccount == "" {
		o.AdjustmentsAccount = "adjustments:" + o.Source
	}
	if o.SuspenseAccount == "" {
		o.SuspenseAccount = "suspense:" + o.Source
	}
	var runID int64
	// One snapshot for every statement, so that an ingest committing while
	// this runs cannot make the ledger side disagree with itself. A run that
	// proposes a correction another run committed since its snapshot is
	// refused by the snapshot (serialization failure); run again, it finds
	// the correction proposed and proposes nothing.
	err := db.Retry(ctx, o.Log, "reconciliation", func() error {
		return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
			var err error
			runID, err = reconcileIn(ctx, pool, tx, o)
			return err
		})
	})
	if err != nil {
		return 0, err
	}
	return runID, nil
}

func reconcileIn(ctx context.Context, pool *pgxpool.Pool, tx pgx.Tx, o Options) (int64, error) {
	var runID int64
	err := tx.QueryRow(ctx, `
INSERT INTO reconciliations (tenant_id, source, period_from, period_to, window_days, tolerance_minor)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, o.Tenant, o.Source, o.From, o.To, o.WindowDays, o.Tolerance).Scan(&runID)
	if err != nil {
		return 0, fmt.Errorf("reconcile: start run: %w", err)
	}
	// The pass sorts and hashes both sides: in memory, not in temp files.
	// (JIT is off for every connection of the command line: see database.go.)
	if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
		return 0, fmt.Errorf("reconcile: %w", err)
	}
	period := []any{o.Tenant, o.Source, o.From, o.To}
	if err := run(ctx, tx, []step{{"prepare", createClass, nil}}); err != nil {
		return 0, err
	}
	if err := pair(ctx, pool, tx, append(period, o.WindowDays, o.Tolerance)); err != nil {
		return 0, err
	}
	var last *time.Time
	var ledgerItems, lines int64
	if err := tx.QueryRow(ctx, `
SELECT max(last_date) FILTER (WHERE side = 'statement'),
       coalesce(sum(items) FILTER (WHERE side = 'ledger'), 0), coalesce(sum(items) FILTER (WHERE side = 'statement'), 0)
  FROM recon_sides WHERE side <> 'joined'`).Scan(&last, &ledgerItems, &lines); err != nil {
		return 0, fmt.Errorf("reconcile: statement's last date: %w", err)
	}
	if ledgerItems == 0 && lines == 0 {
		// Nothing in the period: a quiet period of a source the tenant
		// knows is a run worth storing, but a source it has never seen is
		// a mistake in the command line.
		if err := checkKnownSource(ctx, tx, o.Tenant, o.Source); err != nil {
			return 0, err
		}
	}
	// With one side empty, every item of the other is a break, and the
	// likeliest cause is a statement imported under another --source or a
	// period that misses the ledger's dates: a correction proposed from
	// such a run would post the whole statement to suspense. The breaks are
	// stored and shown, and the report says first which side is empty, but
	// nothing is proposed (docs/decisions/one-sided-reconciliation.md).
	propose := ledgerItems > 0 && lines > 0
	if err := run(ctx, tx, []step{
		{"check returns", settleReturns, []any{o.Tenant, o.From, o.To, last}},
		{"pair across currencies", pairCurrencies, nil},
	}); err != nil {
		return 0, err
	}
	settlements, err := settleByOwnLines(ctx, tx, o.Tenant)
	if err != nil {
		return 0, err
	}
	if settlements {
		if err := run(ctx, tx, []step{
			{"group ledger items", groupMembers, append(period, o.WindowDays)},
			{"match settlement totals to groups", matchGroups, []any{o.WindowDays, o.Tolerance, o.Tenant}},
			{"check settlement totals", checkSettlements, append(period, o.Tolerance)},
			{"classify the groups' items", classifyMembers, nil},
		}); err != nil {
			return 0, err
		}
	}
	if err := loadExponents(ctx, tx, period); err != nil {
		return 0, err
	}
	steps := []step{
		{"store classes", storeClasses, []any{o.Tenant, runID}},
		{"store discrepancies", storeDiscrepancies, []any{o.Tenant, runID, o.WindowDays, last, propose}},
		{"report unbalanced statements", storeUnbalanced, []any{o.Tenant, runID, o.Source, o.From, o.To}},
	}
	if propose {
		steps = append(steps, step{"track breaks", trackBreaks, []any{o.Tenant, runID, o.Source, o.From, o.To}})
	}
	if err := run(ctx, tx, steps); err != nil {
		return 0, err
	}
	if propose {
		// The corrections package owns the proposals; it derives them from
		// the discrepancies just stored, in this transaction.
		if _, err := corrections.Propose(ctx, tx, corrections.Proposal{Tenant: o.Tenant, Run: runID, Source: o.Source,
			AdjustmentsAccount: o.AdjustmentsAccount, SuspenseAccount: o.SuspenseAccount}); err != nil {
			return 0, err
		}
	}
	if err := storeTotals(ctx, tx, o, runID, last); err != nil {
		return 0, err
	}
	return runID, nil
}

// pair runs the one pass over both sides, fast when it can be: it tries the
// plain join, and when a repeated reference made some item or line come out
// of the join twice, it rolls the attempt back and pairs by rank. On one
// PostgreSQL the sides are counted meanwhile on a second connection of pool
// (countBeside), in the run's snapshot.
func pair(ctx context.Context, pool *pgxpool.Pool, tx pgx.Tx, args []any) error {
	var folds bool
	// A posting that adjusts another is only ever written by the approval
	// that marks its correction posted, in the same transaction; asking the
	// small corrections table spares a scan of the tenant's postings.
	if err := tx.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM corrections WHERE tenant_id = $1 AND status = 'posted' AND refers_to IS NOT NULL)`,
		args[0]).Scan(&folds); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	beside, err := besideOK(ctx, pool, tx)
	if err != nil {
		return err
	}
	var counts []sideRow
	var counted <-chan counting
	waited := false
	if beside {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if counted, err = countBeside(ctx, pool, tx, folds, args[:4]); err != nil {
			return err
		}
	}
	// The sides' counts, when they were counted beside the pairing: the
	// statement wrote only the joined rows' count.
	storeCounts := func() error {
		if counted != nil && !waited {
			c := <-counted
			if c.err != nil {
				return c.err
			}
			counts, waited = c.rows, true
		}
		return storeSides(ctx, tx, counts)
	}
	// The planner rarely knows how many postings the tenant has (its
	// statistics lag behind a large file) and, taking the sides for a few
	// rows, would sort every joined row to group them; a hash groups them in
	// one pass. Sorting stays possible where nothing else can do. The
	// setting comes before the savepoint, so that it holds for the ranked
	// pass too.
	if _, err := tx.Exec(ctx, `SET LOCAL enable_sort = off; SAVEPOINT pairing`); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if _, err := tx.Exec(ctx, pairAndClassify(false, folds, !beside), args...); err != nil {
		return fmt.Errorf("reconcile: pair and classify: %w", err)
	}
	if err := storeCounts(); err != nil {
		return err
	}
	var once bool
	if err := tx.QueryRow(ctx, `
SELECT coalesce(j.items, 0) = l.items AND coalesce(j.total, 0) = s.items
  FROM (SELECT items, total FROM recon_sides WHERE side = 'joined') j,
       (SELECT coalesce(sum(items), 0) AS items FROM recon_sides WHERE side = 'ledger') l,
       (SELECT coalesce(sum(items), 0) AS items FROM recon_sides WHERE side = 'statement') s`).Scan(&once); err != nil {
		return fmt.Errorf("reconcile: check pairing: %w", err)
	}
	if !once {
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT pairing`); err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		if _, err := tx.Exec(ctx, pairAndClassify(true, folds, !beside), args...); err != nil {
			return fmt.Errorf("reconcile: pair and classify by rank: %w", err)
		}
		if err := storeCounts(); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `SET LOCAL enable_sort = on`); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	// Autovacuum never sees temporary tables. Unanalysed, recon_class looks
	// like one row to the statements that join it, and they nested loops
	// over every unpaired item: 2.6 s for 2,811 x 1,957 of them. So it is
	// analysed before the evidence is fetched by id, and again after, for
	// the steps that join on the columns just filled.
	return run(ctx, tx, []step{
		{"analyse the unpaired items", `ANALYZE recon_class`, nil},
		{"fetch the unpaired items", fillLedgerSide, args[:1]},
		{"fetch the unpaired lines", fillStatementSide, args[:1]},
		{"analyse the unpaired items", `ANALYZE recon_class`, nil},
	})
}

// checkKnownSource returns an *UnknownSourceError unless the tenant has a
// posting or a statement line of source, in any period. It runs only when
// the period held nothing. Postings have no index by source: a known source
// is usually found early in the scan, and only a source that is not there
// reads all of the tenant's postings, twice (to look for it, then to list
// the sources there are), which a typo can afford.
func checkKnownSource(ctx context.Context, tx pgx.Tx, tenant, source string) error {
	var known bool
	if err := tx.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM statement_lines WHERE tenant_id = $1 AND source = $2)
    OR EXISTS (SELECT 1 FROM postings WHERE tenant_id = $1 AND source = $2)`, tenant, source).Scan(&known); err != nil {
		return fmt.Errorf("reconcile: known sources: %w", err)
	}
	if known {
		return nil
	}
	rows, err := tx.Query(ctx, `
SELECT source FROM postings WHERE tenant_id = $1 GROUP BY source
UNION
SELECT source FROM statement_lines WHERE tenant_id = $1 GROUP BY source
ORDER BY 1`, tenant)
	if err != nil {
		return fmt.Errorf("reconcile: known sources: %w", err)
	}
	sources, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("reconcile: known sources: %w", err)
	}
	return &UnknownSourceError{Tenant: tenant, Source: source, Known: sources}
}

// step is one statement of a run, with what to call it in an error.
type step struct {
	what string
	sql  string
	args []any
}

func run(ctx context.Context, tx pgx.Tx, steps []step) error {
	for _, s := range steps {
		if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("reconcile: %s: %w", s.what, err)
		}
	}
	return nil
}

// storeTotals records each side's totals, counted from its rows before
// they were paired, and checks that every ledger item and every statement
// line ended in exactly one class: the classes hold as many of each as the
// sides do.
func storeTotals(ctx context.Context, tx pgx.Tx, o Options, runID int64, last *time.Time) error {
	type side struct {
		count int64
		total money.Total // a sum of items: numeric, beyond int64 if need be
	}
	ledgerSide, statementSide := map[string]side{}, map[string]side{}
	rows, err := tx.Query(ctx, `SELECT side, currency, items, total FROM recon_sides WHERE side <> 'joined'`)
	if err != nil {
		return fmt.Errorf("reconcile: side totals: %w", err)
	}
	var which, currency string
	var count int64
	var total money.Total
	if _, err := pgx.ForEachRow(rows, []any{&which, &currency, &count, &total}, func() error {
		if which == "ledger" {
			ledgerSide[currency] = side{count, total}
		} else {
			statementSide[currency] = side{count, total}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("reconcile: side totals: %w", err)
	}
	var ledgerItems, lines, classifiedItems, classifiedLines, matchedItems, matchedLines int64
	currencies := map[string]bool{}
	for c, s := range ledgerSide {
		ledgerItems += s.count
		currencies[c] = true
	}
	for c, s := range statementSide {
		lines += s.count
		currencies[c] = true
	}
	err = tx.QueryRow(ctx, `
SELECT coalesce(sum(ledger_items), 0), coalesce(sum(statement_lines), 0),
       coalesce(sum(ledger_items) FILTER (WHERE class IN ('matched', 'corrected')), 0),
       coalesce(sum(statement_lines) FILTER (WHERE class IN ('matched', 'corrected')), 0)
  FROM reconciliation_classes WHERE tenant_id = $1 AND run_id = $2`, o.Tenant, runID).Scan(
		&classifiedItems, &classifiedLines, &matchedItems, &matchedLines)
	if err != nil {
		return fmt.Errorf("reconcile: count classified items: %w", err)
	}
	if classifiedItems != ledgerItems || classifiedLines != lines {
		return fmt.Errorf("%w: %d ledger items, %d classified; %d statement lines, %d classified",
			ErrUnaccounted, ledgerItems, classifiedItems, lines, classifiedLines)
	}
	for c := range currencies {
		if _, err := tx.Exec(ctx, `
INSERT INTO reconciliation_totals (tenant_id, run_id, currency, ledger_total, statement_total)
VALUES ($1, $2, $3, $4, $5)`, o.Tenant, runID, c, ledgerSide[c].total, statementSide[c].total); err != nil {
			return fmt.Errorf("reconcile: store totals: %w", err)
		}
	}
	_, err = tx.Exec(ctx, `
UPDATE reconciliations
   SET statement_last_date = $3, ledger_items = $4, statement_lines = $5, matched_ledger = $6, matched_statement = $7
 WHERE tenant_id = $1 AND id = $2`, o.Tenant, runID, last, ledgerItems, lines, matchedItems, matchedLines)
	if err != nil {
		return fmt.Errorf("reconcile: finish run: %w", err)
	}
	return nil
}

// loadExponents gives the explanation SQL each currency's exponent, so
// that amounts read "99.50 USD", exactly: the currencies of what did not
// match, and of the period's statements that do not add up.
func loadExponents(ctx context.Context, tx pgx.Tx, period []any) error {
	rows, err := tx.Query(ctx, `
SELECT l_currency FROM recon_class WHERE l_currency IS NOT NULL
UNION SELECT s_currency FROM recon_class WHERE s_currency IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("reconcile: currencies: %w", err)
	}
	codes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("reconcile: currencies: %w", err)
	}
	// Asked apart: a distributed table is not united with a temporary one.
	rows, err = tx.Query(ctx, `
SELECT DISTINCT currency::text FROM statement_balances
 WHERE tenant_id = $1 AND source = $2 AND closing_date BETWEEN $3 AND $4 AND difference_minor <> 0`, period...)
	if err != nil {
		return fmt.Errorf("reconcile: currencies: %w", err)
	}
	more, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("reconcile: currencies: %w", err)
	}
	for _, c := range more {
		if !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
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
