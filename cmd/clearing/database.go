package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/db/embedded"
	"github.com/clearing-dev/clearing/internal/pii"
	"github.com/clearing-dev/clearing/internal/schema"
)

// errSchema means the database's schema does not match this binary.
var errSchema = errors.New("database schema mismatch")

// database is an open connection pool and whatever must stop with it.
type database struct {
	pool     *pgxpool.Pool
	embedded *embedded.Cluster
	log      *slog.Logger
}

func (d *database) Close(ctx context.Context) {
	d.pool.Close()
	if d.embedded != nil {
		if err := d.embedded.Close(ctx); err != nil {
			// A log event, so that --log-format json keeps stderr all JSON.
			d.log.Error("stopping the embedded database failed", slog.String("error", userMessage(err)))
		}
	}
}

// databaseURL is the configured URL, or "" for the embedded cluster.
func (g *globalOptions) databaseURLFromEnv() string {
	for _, u := range []string{g.databaseURL, os.Getenv("CLEARING_DATABASE_URL"), os.Getenv("DATABASE_URL")} {
		if u != "" {
			return u
		}
	}
	return ""
}

// open connects to the configured database, or starts the embedded cluster.
// The embedded cluster is private to clearing, so its schema is migrated on
// the spot; a configured database must be migrated with 'clearing migrate'.
// skipSchemaCheck is for migrate itself, which does both.
func (g *globalOptions) open(ctx context.Context, skipSchemaCheck bool) (*database, error) {
	d := &database{log: g.log}
	url := g.databaseURLFromEnv()
	if url == "" {
		home := os.Getenv("CLEARING_HOME")
		e, err := embedded.Start(ctx, embedded.Options{Home: home, Logger: g.log})
		if err != nil {
			return nil, err
		}
		d.embedded = e
		url = e.ConnString()
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		d.closeEmbedded(ctx)
		return nil, usagef("database URL: %v", err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "clearing"
	// Every statement of an ingest runs once per chunk over a few thousand
	// rows; compiling it (JIT) cost 300 ms a chunk whenever the planner's
	// estimate for a table not yet analysed crossed jit_above_cost. A SET
	// after connecting, not a startup parameter, which connection poolers
	// such as PgBouncer refuse.
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, `SET jit = off`); err != nil {
			return err
		}
		// So that a killed process's session, and the lock on its run, end
		// within a second, and running the command again resumes the run.
		watched, err := db.WatchClient(ctx, conn)
		if err == nil && !watched {
			g.log.Debug("the server cannot check that clients are still connected (client_connection_check_interval): after a crash, running the command again may wait until the server notices")
		}
		return err
	}
	if d.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		d.closeEmbedded(ctx)
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := d.pool.Ping(ctx); err != nil {
		d.Close(ctx)
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	if d.embedded != nil && !skipSchemaCheck {
		if _, err := schema.Migrate(ctx, d.pool, nil); err != nil {
			d.Close(ctx)
			return nil, err
		}
		return d, nil
	}
	if !skipSchemaCheck {
		if err := checkSchema(ctx, d.pool); err != nil {
			d.Close(ctx)
			return nil, err
		}
	}
	if g.reads {
		g.warnIfEmptyTenant(ctx, d.pool)
	}
	return d, nil
}

// warnIfEmptyTenant warns when the tenant holds nothing at all (no run, no
// reconciliation), naming the tenants that do: '--tenant defualt' would
// otherwise show an empty ledger without a word.
func (g *globalOptions) warnIfEmptyTenant(ctx context.Context, pool *pgxpool.Pool) {
	var known []string
	err := pool.QueryRow(ctx, `
SELECT CASE WHEN EXISTS (SELECT 1 FROM runs WHERE tenant_id = $1) OR EXISTS (SELECT 1 FROM reconciliations WHERE tenant_id = $1)
            THEN NULL
            ELSE coalesce((SELECT array_agg(t ORDER BY t) FROM (SELECT DISTINCT tenant_id AS t FROM runs LIMIT 20) x), '{}') END`,
		g.tenant).Scan(&known)
	if err != nil || known == nil {
		return
	}
	others := "no tenant holds any data yet"
	if len(known) > 0 {
		others = "tenants with data: " + strings.Join(known, ", ")
	}
	g.log.Warn("tenant "+g.tenant+" holds no data; "+others, slog.String("tenant", g.tenant))
}

func (d *database) closeEmbedded(ctx context.Context) {
	if d.embedded != nil {
		_ = d.embedded.Close(ctx)
	}
}

func checkSchema(ctx context.Context, pool *pgxpool.Pool) error {
	have, want, err := db.SchemaVersion(ctx, pool)
	if err != nil {
		return err
	}
	switch {
	case have < want:
		return fmt.Errorf("%w: the database is at schema version %d and this clearing needs %d: run 'clearing migrate' first", errSchema, have, want)
	case have > want:
		return fmt.Errorf("%w: the database is at schema version %d, newer than this clearing knows (%d): upgrade clearing", errSchema, have, want)
	}
	return nil
}

// checkPIIKey refuses to go on without a secret for the account and PAN
// hashes against a configured database: hashes made with the public
// development key can be reversed by trying every account number or every
// PAN of a known BIN and last four. Only the embedded cluster, which is a
// demonstration on one machine, may use the development key (hasher warns).
// The command has read no file and written nothing when this refuses: like
// a missing required flag, it is a usage error, and no run is recorded
// (docs/decisions/pii-key-required.md).
func (g *globalOptions) checkPIIKey() error {
	if g.databaseURLFromEnv() == "" {
		return nil
	}
	switch os.Getenv("CLEARING_PII_KEY") {
	case "":
		return usagef("CLEARING_PII_KEY is not set: against a configured database, ingest and statement import need a secret key " +
			"for the account and PAN hashes (hashes made with the public development key can be reversed); " +
			"make one with 'openssl rand -hex 32', keep it with the database's credentials (every later run needs the same key) " +
			"and export CLEARING_PII_KEY=<key>; nothing was read or written")
	case pii.DevelopmentKey:
		return usagef("CLEARING_PII_KEY is the public development key: against a configured database, use a secret key " +
			"(make one with 'openssl rand -hex 32'); nothing was read or written")
	}
	return nil
}

// hasher returns the account hasher, warning when the development key is in
// use because CLEARING_PII_KEY is unset (which checkPIIKey allows only on the
// embedded cluster).
func (g *globalOptions) hasher() pii.Hasher {
	key := os.Getenv("CLEARING_PII_KEY")
	if key == "" {
		g.log.Warn("CLEARING_PII_KEY is not set: account numbers are hashed with the public development key; set a secret key before ingesting real data")
	}
	return pii.New(key)
}
