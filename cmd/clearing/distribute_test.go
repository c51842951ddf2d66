package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/schema"
)

// migrate --distribute on a database without the citus extension refuses,
// says what is missing, and migrates nothing.
func TestMigrateDistributeRefusesADatabaseWithoutCitus(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	name := fmt.Sprintf("nocitus_%d", time.Now().UnixNano())
	if _, err := c.pool.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	url, err := pgtest.WithDatabase(c.url, name)
	if err != nil {
		t.Fatal(err)
	}
	r := c.exec("migrate", "--distribute", "--database-url", url)
	if r.code != 1 || !strings.Contains(r.stderr, "no citus extension") || !strings.Contains(r.stderr, "citus_add_node") {
		t.Fatalf("want exit 1 naming the missing extension\n%v", r)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var migrated bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('postings') IS NOT NULL`).Scan(&migrated); err != nil || migrated {
		t.Fatalf("the refused migrate created postings (%v)", err)
	}
}

// On Citus: a schema distributed halfway through its migrations takes the
// later ones (which add tables, triggers and functions), and migrate
// distributes what they added; every tenant table is then distributed by
// tenant_id and co-located, migrate --distribute again changes nothing,
// ledger verify passes, and it finds shards that lost a trigger.
func TestMigrationsAndVerifyOnADistributedSchema(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyCitusDatabase(t) // skips on one PostgreSQL
	ctx := context.Background()
	pool := mustPool(t, url)
	if err := db.MigrateTo(ctx, pool, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Distribute(ctx, pool, pgtest.CitusShards); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, url: url, tenant: "default", dir: t.TempDir(), pool: pool}
	c.must(0, "migrate")

	layout := func() string {
		var s string
		if err := pool.QueryRow(ctx, `
SELECT string_agg(format('%s:%s:%s:%s', logicalrelid::regclass, partmethod,
                         coalesce(column_to_column_name(logicalrelid, partkey), ''), colocationid), ' ' ORDER BY logicalrelid::regclass::text)
  FROM pg_dist_partition`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if n := c.count(`
SELECT count(*) FROM pg_class c
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
   AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id')
   AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid AND d.partmethod = 'h'
                      AND column_to_column_name(d.logicalrelid, d.partkey) = 'tenant_id'
                      AND d.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'postings'::regclass))`); n != 0 {
		t.Fatalf("%d tenant tables are not distributed by tenant_id with postings: %s", n, layout())
	}
	for _, table := range []string{"statement_balances", "quarantine", "breaks", "break_acks"} {
		if !strings.Contains(layout(), table+":h:tenant_id:") {
			t.Errorf("%s, which a later migration added, is not distributed: %s", table, layout())
		}
	}
	if !strings.Contains(layout(), "currency_exponents:n::") {
		t.Errorf("currency_exponents is not a reference table: %s", layout())
	}
	before := layout()
	c.must(0, "migrate", "--distribute")
	if after := layout(); after != before {
		t.Fatalf("migrate --distribute again changed the layout:\n%s\n%s", before, after)
	}

	day := filepath.Join(c.dir, "day.ach")
	c.must(0, "generate", "ach", "--entries", "50", "--out", day)
	sum := c.ingest(0, day)[0]
	if n := c.postings(); n == 0 || n != sum.Posted {
		t.Fatalf("%d postings, the ingest posted %d", n, sum.Posted)
	}
	v := c.verifyJSON(0)
	found := false
	for _, ch := range v.Checks {
		found = found || ch.Name == "every tenant table is distributed by tenant_id, co-located, with its triggers on every shard"
	}
	if !found {
		t.Fatalf("verify has no distribution check: %+v", v.Checks)
	}
	// The shards of legs keep their balance trigger, disabled: the
	// coordinator's table still shows it enabled.
	onLegsShards := func(action string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `
SELECT run_command_on_placements('legs', $cmd$
DO $do$ DECLARE t text; BEGIN
    SELECT tgname INTO t FROM pg_trigger WHERE tgrelid = '%1$s'::regclass AND tgname LIKE 'legs_append_only%%';
    EXECUTE format('ALTER TABLE %1$s `+action+` TRIGGER %%I', t);
END $do$ $cmd$)`); err != nil {
			t.Fatal(err)
		}
	}
	onLegsShards("DISABLE")
	wantFinding(t, c.verifyJSON(3), "every tenant table is distributed by tenant_id, co-located, with its triggers on every shard",
		"legs", "shard", "enabled")
	onLegsShards("ENABLE")
	c.verifyJSON(0)
	// The shards of notices lose their append-only trigger.
	if _, err := pool.Exec(ctx, `
SELECT run_command_on_placements('notices', $cmd$
DO $do$ DECLARE t text; BEGIN
    SELECT tgname INTO t FROM pg_trigger WHERE tgrelid = '%1$s'::regclass AND tgname LIKE 'notices_append_only%%';
    EXECUTE format('DROP TRIGGER %%I ON %1$s', t);
END $do$ $cmd$)`); err != nil {
		t.Fatal(err)
	}
	wantFinding(t, c.verifyJSON(3), "every tenant table is distributed by tenant_id, co-located, with its triggers on every shard",
		"notices", "shard", "triggers")
}
