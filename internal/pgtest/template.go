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
func buildTemplate(ctx context.Context, server, name string) error {
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
	build := pgx.Identifier{name + "_build"}.Sanitize()
	for _, sql := range []string{
		"DROP DATABASE IF EXISTS " + build + " WITH (FORCE)",
		"CREATE DATABASE " + build,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("pgtest: %s: %w", sql, err)
		}
	}
	if err := migrate(ctx, server, name+"_build"); err != nil {
		return err
	}
	for _, sql := range []string{
		"ALTER DATABASE " + build + " WITH ALLOW_CONNECTIONS false IS_TEMPLATE true",
		"ALTER DATABASE " + build + " RENAME TO " + pgx.Identifier{name}.Sanitize(),
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("pgtest: %s: %w", sql, err)
		}
	}
	return nil
}

// migrate applies the migrations to database and closes every connection
// it opened, so that the database can become a template.
func migrate(ctx context.Context, server, database string) error {
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
	return nil
}
