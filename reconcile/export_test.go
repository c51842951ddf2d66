package reconcile

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DiscrepanciesOfRun is the statement that loads a run's discrepancies, for
// the test of its plan.
const DiscrepanciesOfRun = discrepanciesOfRun

// LedgerItemsBeside counts the ledger items of period (tenant, source,
// from, to) as a run does beside its pairing: on another connection of
// pool, in tx's snapshot.
func LedgerItemsBeside(ctx context.Context, pool *pgxpool.Pool, tx pgx.Tx, period ...any) (int64, error) {
	counted, err := countBeside(ctx, pool, tx, false, period)
	if err != nil {
		return 0, err
	}
	c := <-counted
	var n int64
	for _, s := range c.rows {
		if s.side == "ledger" {
			n += s.items
		}
	}
	return n, c.err
}
