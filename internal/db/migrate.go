package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/clearing-dev/clearing/migrations"
)

// versionTable is goose's bookkeeping table, kept in the clearing namespace.
const versionTable = "clearing_schema_version"

// Migration is one applied (or already present) migration.
type Migration struct {
	Version int64
	Name    string
	Applied bool // false when it was already in place
}

// Migrate applies every embedded migration that the database lacks and
// returns the full list. It is safe to run again and from several processes
// at once: a PostgreSQL advisory lock serialises concurrent runs.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) ([]Migration, error) {
	return migrate(ctx, pool, log, 0)
}

// MigrateTo applies the embedded migrations up to version and no further,
// for tests that migrate in steps (a schema distributed halfway, say).
func MigrateTo(ctx context.Context, pool *pgxpool.Pool, version int64) error {
	_, err := migrate(ctx, pool, nil, version)
	return err
}

// migrate applies the migrations up to version, or all of them for 0.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, version int64) ([]Migration, error) {
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("db: migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS,
		goose.WithSessionLocker(locker),
		goose.WithTableName(versionTable),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return nil, fmt.Errorf("db: migrations: %w", err)
	}
	var results []*goose.MigrationResult
	if version > 0 {
		results, err = p.UpTo(ctx, version)
	} else {
		results, err = p.Up(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("db: migrate: %w", err)
	}
	applied := map[int64]bool{}
	for _, r := range results {
		applied[r.Source.Version] = true
		if log != nil {
			log.Info("migration applied", slog.Int64("version", r.Source.Version), slog.Duration("took", r.Duration))
		}
	}
	var out []Migration
	for _, s := range p.ListSources() {
		out = append(out, Migration{Version: s.Version, Name: s.Path, Applied: applied[s.Version]})
	}
	return out, nil
}

// SchemaVersion returns the newest migration applied to the database, or 0
// for an empty database, and the newest migration this binary embeds.
func SchemaVersion(ctx context.Context, pool *pgxpool.Pool) (have, want int64, err error) {
	want = latestEmbedded()
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, versionTable).Scan(&exists); err != nil {
		return 0, want, fmt.Errorf("db: schema version: %w", err)
	}
	if !exists {
		return 0, want, nil
	}
	err = pool.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM `+versionTable+` WHERE is_applied`).Scan(&have)
	if err != nil {
		return 0, want, fmt.Errorf("db: schema version: %w", err)
	}
	return have, want, nil
}

// MigrationsDigest identifies the embedded migrations' content, so that a
// test template built from one set is never reused for another.
func MigrationsDigest() string {
	names, _ := fs.Glob(migrations.FS, "*.sql")
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, _ := fs.ReadFile(migrations.FS, n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func latestEmbedded() int64 {
	names, _ := fs.Glob(migrations.FS, "*.sql")
	var max int64
	for _, n := range names {
		var v int64
		if _, err := fmt.Sscanf(n, "%d_", &v); err == nil && v > max {
			max = v
		}
	}
	return max
}
