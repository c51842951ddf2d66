package reconcile

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/money"
)

// sideRow is a side's count in one currency, as recon_sides holds it.
type sideRow struct {
	side, currency string
	items          int64
	total          money.Total
	last           *time.Time
}

// counting is what countBeside delivers: the sides' counts, or why there
// are none.
type counting struct {
	rows []sideRow
	err  error
}

// besideOK reports whether the sides can be counted on a connection of
// their own while the run's transaction pairs them: the pool must have a
// second connection to give, and the server must be one PostgreSQL. On
// Citus the run's snapshot is the coordinator's alone; a second session
// would read the workers' rows in snapshots of its own, and an ingest
// committing meanwhile would make the counts disagree with the join.
func besideOK(ctx context.Context, pool *pgxpool.Pool, tx pgx.Tx) (bool, error) {
	if pool == nil || pool.Config().MaxConns < 2 {
		return false, nil
	}
	var citus bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil {
		return false, fmt.Errorf("reconcile: %w", err)
	}
	return !citus, nil
}

// snapshotID is the form of the names pg_export_snapshot gives.
var snapshotID = regexp.MustCompile(`^[0-9A-Fa-f-]+$`)

// countBeside exports the snapshot of the run's transaction tx and counts
// both sides of period in it on another connection of pool, while tx goes
// on to pair them: the two scans that count run on the second core. The
// result arrives on the channel, which always gets one value; cancel ctx to
// stop the count.
func countBeside(ctx context.Context, pool *pgxpool.Pool, tx pgx.Tx, folds bool, period []any) (<-chan counting, error) {
	var snapshot string
	if err := tx.QueryRow(ctx, `SELECT pg_export_snapshot()`).Scan(&snapshot); err != nil {
		return nil, fmt.Errorf("reconcile: export the run's snapshot: %w", err)
	}
	if !snapshotID.MatchString(snapshot) {
		return nil, fmt.Errorf("reconcile: the server named the run's snapshot %q", snapshot)
	}
	out := make(chan counting, 1)
	go func() {
		var c counting
		c.err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(side pgx.Tx) error {
			// SET takes no parameter; the name was checked above. The
			// counts group a million rows by currency: by hash, in memory,
			// as the pairing does (at the server's 4 MB the planner sorted
			// them into a temporary file).
			if _, err := side.Exec(ctx, `SET TRANSACTION SNAPSHOT '`+snapshot+`'; SET LOCAL work_mem = '256MB'; SET LOCAL enable_sort = off`); err != nil {
				return err
			}
			rows, err := side.Query(ctx, countSides(folds), period...)
			if err != nil {
				return err
			}
			c.rows, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (sideRow, error) {
				var s sideRow
				err := row.Scan(&s.side, &s.currency, &s.items, &s.total, &s.last)
				return s, err
			})
			return err
		})
		if c.err != nil {
			c.err = fmt.Errorf("reconcile: count the sides: %w", c.err)
		}
		out <- c
	}()
	return out, nil
}

// storeSides writes the sides' counts into recon_sides, beside the joined
// rows' count that the pairing statement wrote.
func storeSides(ctx context.Context, tx pgx.Tx, rows []sideRow) error {
	for _, s := range rows {
		if _, err := tx.Exec(ctx, `INSERT INTO recon_sides VALUES ($1, $2, $3, $4::numeric, $5)`,
			s.side, s.currency, s.items, s.total.String(), s.last); err != nil {
			return fmt.Errorf("reconcile: store the sides' counts: %w", err)
		}
	}
	return nil
}
