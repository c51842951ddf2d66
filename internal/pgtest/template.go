package pgtest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/schema"
)

// templateLockKey is the advisory lock that serialises template builds
// across every test binary using one server ("clearing" in ASCII). go test
// runs packages in parallel, and each would otherwise build its own.
const templateLockKey int64 = 0x636c656172696e67

// templateName names the template after the migrations' content, so that a
// changed migration builds a new template instead of reusing a stale one.
func templateName() string {
	return "clearing_tmpl_" + schema.Digest()
}

// buildTemplate creates the template database name, migrated, unless it
// already exists. It builds under a temporary name and renames the result
// only once the migrations succeeded, so a build that crashed halfway is
// never taken for a template; the next build drops it. The template then
// refuses connections: CREATE DATABASE ... TEMPLATE fails while anyone is
// connected to the template, and no test may change it by mistake.
//
// On a Citus coordinator (workers is not empty) the template is built on
// every node, distributed by tenant (schema.Distribute), and the
// coordinator's is renamed last: it exists only once the workers' do.
func buildTemplate(ctx context.Context, server string, workers []*pgxpool.Pool, name string) error {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	// Closing the session also releases the advisory lock, whatever
	// happens below.
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockKey); err != nil {
		return fmt.Errorf("pgtest: template lock: %w", err)
	}
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil || exists {
		return err
	}
	var workerURLs []string
	conns := []*pgx.Conn{}
	for _, w := range workers {
		u := w.Config().ConnString()
		workerURLs = append(workerURLs, u)
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		defer c.Close(context.WithoutCancel(ctx))
		conns = append(conns, c)
	}
	// The workers first and the coordinator last, below: a worker may hold
	// a template that a build killed while renaming left behind.
	conns = append(conns, conn)
	build := name + "_build"
	for i, c := range conns {
		stale := []string{build}
		if i < len(conns)-1 {
			stale = append(stale, name)
		}
		for _, d := range stale {
			if err := dropDatabase(ctx, c, d); err != nil {
				return err
			}
		}
		if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{build}.Sanitize()); err != nil {
			return fmt.Errorf("pgtest: CREATE DATABASE %s: %w", build, err)
		}
	}
	if len(workers) > 0 {
		if err := citusDatabase(ctx, server, workerURLs, build); err != nil {
			return err
		}
	}
	if err := migrate(ctx, server, build, len(workers) > 0); err != nil {
		return err
	}
	// The coordinator's sessions are ended first: they hold connections to
	// the workers' builds.
	for i := len(conns) - 1; i >= 0; i-- {
		if err := closeTemplate(ctx, conns[i], build); err != nil {
			return err
		}
	}
	for _, c := range conns {
		for _, sql := range []string{
			"ALTER DATABASE " + pgx.Identifier{build}.Sanitize() + " WITH IS_TEMPLATE true",
			"ALTER DATABASE " + pgx.Identifier{build}.Sanitize() + " RENAME TO " + pgx.Identifier{name}.Sanitize(),
		} {
			if _, err := c.Exec(ctx, sql); err != nil {
				return fmt.Errorf("pgtest: %s: %w", sql, err)
			}
		}
	}
	return nil
}

// dropDatabase drops database if it exists, template or not.
func dropDatabase(ctx context.Context, conn *pgx.Conn, database string) error {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", database).Scan(&exists); err != nil || !exists {
		return err
	}
	id := pgx.Identifier{database}.Sanitize()
	for _, sql := range []string{"ALTER DATABASE " + id + " WITH IS_TEMPLATE false", "DROP DATABASE " + id + " WITH (FORCE)"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("pgtest: %s: %w", sql, err)
		}
	}
	return nil
}

// migrate applies the migrations to database, distributes it on Citus,
// and closes every connection it opened, so that the database can become a
// template.
func migrate(ctx context.Context, server, database string, citus bool) error {
	target, err := withDatabase(server, database)
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, target)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer pool.Close()
	if _, err := schema.Migrate(ctx, pool, nil); err != nil {
		return fmt.Errorf("pgtest: migrating the template: %w", err)
	}
	if citus {
		if _, err := schema.Distribute(ctx, pool, CitusShards); err != nil {
			return fmt.Errorf("pgtest: distributing the template: %w", err)
		}
	}
	return nil
}
