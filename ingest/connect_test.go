package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/pii"
)

// A file is staged on a session of its own: one taken from a pool whose
// only connection had used a temporary table (a reconciliation does) could
// not size its temporary buffers, and the ingest failed before reading.
func TestIngestAfterATemporaryTableOnTheSamePool(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.ConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TEMP TABLE used (n int); INSERT INTO used VALUES (1); DROP TABLE used`); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ach.WriteEntries(&b, ach.DefaultHeader(time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)), ach.GenerateEntries(1, 20)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "day.ach")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := File(ctx, pool, path, Options{Tenant: "t", Hasher: pii.New("test")})
	if err != nil || s.Status != "done" {
		t.Fatalf("ingest: %+v, %v", s, err)
	}
	var posted int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM postings WHERE tenant_id = 't' AND run_id = $1`, s.RunID).Scan(&posted); err != nil {
		t.Fatal(err)
	}
	if posted == 0 || posted != s.Posted {
		t.Errorf("%d postings of the run, the summary says %d posted", posted, s.Posted)
	}
}

// The file's session is configured as the pool's own sessions are: by its
// BeforeConnect and its AfterConnect.
func TestTheFilesSessionIsConfiguredAsThePoolsAre(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.ConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
		cc.RuntimeParams["application_name"] = "before-connect"
		return nil
	}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, `SET statement_timeout = '4321ms'`)
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn, closeConn, err := connect(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn()
	var app, timeout string
	if err := conn.QueryRow(ctx, `SELECT current_setting('application_name'), current_setting('statement_timeout')`).Scan(&app, &timeout); err != nil {
		t.Fatal(err)
	}
	if app != "before-connect" || timeout != "4321ms" {
		t.Fatalf("the file's session has application_name %q and statement_timeout %q, want the pool's hooks' before-connect and 4321ms", app, timeout)
	}
}
