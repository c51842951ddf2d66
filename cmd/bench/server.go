package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/db/embedded"
)

// server is the PostgreSQL that both clearing and the baselines use.
type server struct {
	url      string // what the clearing subprocesses get as CLEARING_DATABASE_URL
	pool     *pgxpool.Pool
	embedded *embedded.Cluster // nil for a configured server
	home     string            // the throw-away cluster's folder, removed on close
}

// openServer connects to url, or starts a throw-away embedded cluster in a
// temporary folder when url is empty. The throw-away cluster keeps
// PostgreSQL's durable defaults (fsync and full page writes on), as a
// production server would have: the ratios compare clearing with COPY on
// the same server, so either choice is fair, and this one is realistic.
func openServer(ctx context.Context, url string) (*server, error) {
	s := &server{url: url}
	if url == "" {
		tmp, err := os.MkdirTemp("", "clearing-bench-db-")
		if err != nil {
			return nil, err
		}
		// As root the server runs as the postgres user, which must pass
		// through this folder to reach its own.
		if err := os.Chmod(tmp, 0o711); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		s.home = tmp
		e, err := embedded.Start(ctx, embedded.Options{Home: filepath.Join(tmp, "home")})
		if err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("start a throw-away PostgreSQL (or set -database-url): %w", err)
		}
		s.embedded, s.url = e, e.ConnString()
	}
	cfg, err := pgxpool.ParseConfig(s.url)
	if err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("database URL: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "clearing-bench"
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err == nil {
		err = s.pool.Ping(ctx)
	}
	if err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return s, nil
}

// close disconnects, and stops and removes a throw-away cluster.
func (s *server) close(ctx context.Context) {
	if s.pool != nil {
		s.pool.Close()
	}
	if s.embedded != nil {
		if err := s.embedded.Close(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "bench: stopping the throw-away PostgreSQL: %v\n", err)
		}
	}
	if s.home != "" {
		os.RemoveAll(s.home)
	}
}

// serverFacts are what the report says about the server.
type serverFacts struct {
	version  string
	settings string
}

// facts reads the server's version and the settings that matter most to
// write throughput.
func (s *server) facts(ctx context.Context) (serverFacts, error) {
	var f serverFacts
	if err := s.pool.QueryRow(ctx, `SHOW server_version`).Scan(&f.version); err != nil {
		return f, fmt.Errorf("server version: %w", err)
	}
	err := s.pool.QueryRow(ctx, `
SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name)
  FROM pg_settings
 WHERE name IN ('shared_buffers', 'work_mem', 'maintenance_work_mem', 'max_wal_size',
                'fsync', 'synchronous_commit', 'full_page_writes', 'wal_level')`).Scan(&f.settings)
	if err != nil {
		return f, fmt.Errorf("server settings: %w", err)
	}
	if s.embedded != nil {
		f.settings = "throw-away embedded cluster: " + f.settings
	}
	return f, nil
}

// checkpoint flushes dirty buffers so that a timed step does not pay for
// the writes of the step before it. A role that may not checkpoint skips
// it; the figures are then a little noisier.
func (s *server) checkpoint(ctx context.Context) {
	_, _ = s.pool.Exec(ctx, `CHECKPOINT`)
}
