package reconcile_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/reconcile"
)

// On one PostgreSQL a run counts its two sides on a second connection while
// its own pairs them (the count checks the join). The second connection
// reads in the run's snapshot: entries posted after the run began are in
// neither the join nor the count.
func TestTheSidesAreCountedBesideInTheRunsSnapshot(t *testing.T) {
	if pgtest.Citus(t) {
		t.Skip("on Citus the sides are counted in the pairing statement itself")
	}
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	es := liveEntries(41, 40)
	ingestFile(t, pool, achFile(t, es[:25]), ingest.Options{})
	day := es[0].EffectiveDate
	period := []any{tenant, "ach", day, day}
	items := `SELECT count(*) FROM postings WHERE tenant_id = $1 AND source = $2 AND value_date BETWEEN $3 AND $4 AND kind = 'clearing'`
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var before int64
	if err := tx.QueryRow(ctx, items, period...).Scan(&before); err != nil {
		t.Fatal(err)
	}
	ingestFile(t, pool, achFile(t, es[25:]), ingest.Options{})
	beside, err := reconcile.LedgerItemsBeside(ctx, pool, tx, period...)
	if err != nil {
		t.Fatal(err)
	}
	after := count(t, pool, items, period...)
	if before == 0 || beside != before || after <= before {
		t.Errorf("counted beside: %d ledger items; in the run's snapshot %d, and %d once the second file is in", beside, before, after)
	}
}
