// Package schema brings a database to the schema this binary expects: the
// migrations (package db, from migrations/), then the routines through which
// runs, the ledger and the statement side are written (packages runs, ledger
// and statement each declare their own). It is what `clearing migrate` runs, and what
// `ledger verify` checks the installed routines against.
package schema

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/statement"
)

// Routines are every routine this binary installs.
func Routines() []db.Routine {
	return slices.Concat(runs.Routines, ledger.Routines, statement.Routines)
}

// Digest identifies the migrations and routines this binary installs, so
// that a test template built with one schema is never reused for another.
func Digest() string { return db.MigrationsDigest() + "_" + db.RoutinesDigest(Routines())[:6] }

// Migrate applies the migrations and installs the routines. On a schema
// already distributed over Citus (Distribute), a table that a migration
// added is distributed the same way.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) ([]db.Migration, error) {
	distributed, err := IsDistributed(ctx, pool)
	if err != nil {
		return nil, err
	}
	migrator := pool
	if distributed {
		// A migration that alters a distributed table and then replaces a
		// function runs both on the workers: Citus refuses the second after
		// the first ran in parallel over several connections, unless the
		// transaction sends its commands over one connection per node.
		cfg := pool.Config().Copy()
		cfg.ConnConfig.RuntimeParams["citus.multi_shard_modify_mode"] = "sequential"
		if migrator, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		defer migrator.Close()
	}
	ms, err := db.Migrate(ctx, migrator, log)
	if err != nil {
		return ms, err
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return db.InstallRoutines(ctx, tx, Routines()) }); err != nil {
		return ms, err
	}
	if !distributed {
		return ms, nil
	}
	ds, err := Distribute(ctx, pool, 0)
	for _, d := range ds {
		if d.Changed && log != nil {
			log.Info("table distributed", slog.String("table", d.Table), slog.String("how", d.How))
		}
	}
	return ms, err
}
