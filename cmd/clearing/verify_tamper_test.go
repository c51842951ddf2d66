package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/iso8583"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/migrations"
)

// verifyJSON runs 'ledger verify -o json', wants exit code want, and
// returns what it reported.
func (c *cli) verifyJSON(want int) ledger.Verification {
	c.t.Helper()
	r := c.must(want, "-o", "json", "ledger", "verify")
	var v ledger.Verification
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		c.t.Fatalf("ledger verify output is not JSON: %v\n%v", err, r)
	}
	return v
}

// wantFinding fails the test unless check failed with a finding in table
// whose key and problem contain the given texts.
func wantFinding(t *testing.T, v ledger.Verification, check, table, key, problem string) {
	t.Helper()
	for _, c := range v.Checks {
		if c.Name != check {
			continue
		}
		for _, f := range c.Findings {
			if c.OK || f.Table != table || !strings.Contains(f.Key, key) || !strings.Contains(f.Problem, problem) {
				continue
			}
			return
		}
		t.Fatalf("check %q: no finding in %s for %q saying %q; it found %+v", check, table, key, problem, c.Findings)
	}
	t.Fatalf("verify has no check %q: %+v", check, v.Checks)
}

// asOwner runs statements as the schema owner, the harness's own login,
// in one transaction.
func (c *cli) asOwner(stmts ...string) {
	c.t.Helper()
	err := pgx.BeginFunc(context.Background(), c.pool, func(tx pgx.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(context.Background(), s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
}

// trigger names one of a table's triggers, or ALL of them.
type trigger struct{ table, name string }

// asOwnerWithout runs stmts as the schema owner in one transaction with
// the triggers disabled, and enables them again. On one PostgreSQL that is
// one transaction, ALTER TABLE ... DISABLE TRIGGER first and ENABLE last;
// on Citus the triggers are disabled on the coordinator and on every shard
// before the transaction and enabled after it (pgtest.AlterTrigger).
func (c *cli) asOwnerWithout(triggers []trigger, stmts ...string) {
	c.t.Helper()
	if !pgtest.Citus(c.t) {
		var all []string
		for _, tr := range triggers {
			all = append(all, fmt.Sprintf("ALTER TABLE %s DISABLE TRIGGER %s", tr.table, tr.name))
		}
		all = append(all, stmts...)
		for _, tr := range triggers {
			all = append(all, fmt.Sprintf("ALTER TABLE %s ENABLE TRIGGER %s", tr.table, tr.name))
		}
		c.asOwner(all...)
		return
	}
	for _, tr := range triggers {
		pgtest.AlterTrigger(c.t, c.pool, tr.table, "DISABLE", tr.name)
	}
	c.asOwner(stmts...)
	for _, tr := range triggers {
		pgtest.AlterTrigger(c.t, c.pool, tr.table, "ENABLE", tr.name)
	}
}

// asReplica runs stmts as the schema owner in one transaction in the
// replication role, where no ordinary trigger fires (on Citus, on the
// shards too: pgtest.ReplicationRole).
func (c *cli) asReplica(stmts ...string) {
	c.t.Helper()
	c.asOwner(append(pgtest.ReplicationRole(c.t), stmts...)...)
}

// tamperBase is a small ledger to tamper with: clearing postings, a return,
// duplicates in the audit trail. It verifies clean before anything is done
// to it.
func tamperBase(t *testing.T) (*cli, []ach.Entry) {
	t.Helper()
	c := newCLI(t)
	es := liveOnly(entries(61, 12))
	f := c.achFile("day1.ach", ach.DefaultHeader(created), es)
	c.ingest(0, f)
	c.ingest(0, f) // duplicates: an audit trail to truncate
	c.ingest(0, c.returnFile("returns.ach", ach.ReturnOf(es[2], "R01", 1)))
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1`, c.tenant); n == 0 {
		t.Fatal("no audit events to tamper with")
	}
	c.verifyJSON(0)
	return c, es
}

func TestLedgerVerifyNamesEachTampering(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, c *cli, es []ach.Entry)
		check  func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification)
	}{
		{"disable a trigger, change legs, enable it again",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwnerWithout([]trigger{{"legs", "legs_append_only"}},
					fmt.Sprintf(`UPDATE legs SET amount_minor = amount_minor + 100
					              WHERE tenant_id = 'default' AND posting_id = (SELECT id FROM postings WHERE posting_key = '%s')`, es[5].Key()))
				if n := c.count(`SELECT count(*) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
				                  WHERE p.posting_key = $1 AND l.amount_minor = p.amount_minor + 100`, es[5].Key()); n != 2 {
					t.Fatalf("%d legs changed, want 2", n)
				}
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "every posting's legs are the ones its kind makes", "legs", es[5].Key(), "leg 1 differs in amount")
				wantFinding(t, v, "every row is sealed and unchanged since", "legs", "all legs", "rows were changed")
			}},
		{"replace the trigger function with one that allows changes",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwner(`CREATE OR REPLACE FUNCTION clearing_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RETURN coalesce(NEW, OLD);
END;
$$`, fmt.Sprintf(`UPDATE postings SET detail = 'edited' WHERE tenant_id = 'default' AND posting_key = '%s'`, es[4].Key()))
				if n := c.count(`SELECT count(*) FROM postings WHERE detail = 'edited'`); n != 1 {
					t.Fatalf("%d postings edited, want 1", n)
				}
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "trigger functions are the migrations' own", "", "clearing_reject_change()", "body differs")
				wantFinding(t, v, "every row is sealed and unchanged since", "postings", "run 1", "rows were changed")
			}},
		{"let the seal function run on its caller's search path",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwner(`ALTER FUNCTION clearing_seal() RESET search_path`)
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "trigger functions are the migrations' own", "", "clearing_seal()", "caller's search_path")
			}},
		{"make a trigger fire for replication only",
			func(t *testing.T, c *cli, es []ach.Entry) {
				pgtest.AlterTrigger(t, c.pool, "postings", "ENABLE REPLICA", "postings_append_only")
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "append-only triggers are installed and enabled", "postings", "postings_append_only",
					"enabled for replication only")
			}},
		{"move a trigger's name to another table",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwner(`DROP TRIGGER postings_append_only ON postings`,
					`CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON runs
					     FOR EACH ROW EXECUTE FUNCTION clearing_reject_change()`)
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "append-only triggers are installed and enabled", "postings", "postings_append_only",
					"is missing; a trigger of that name is on runs")
			}},
		{"disable the triggers and truncate the audit trail",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwnerWithout([]trigger{{"audit_events", "ALL"}}, `TRUNCATE audit_events`)
				if n := c.count(`SELECT count(*) FROM audit_events`); n != 0 {
					t.Fatalf("%d audit events left", n)
				}
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "every row is sealed and unchanged since", "audit_events", "run 2", "rows were deleted")
			}},
		{"disable the triggers and delete one audit event",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwnerWithout([]trigger{{"audit_events", "audit_events_append_only"}},
					`DELETE FROM audit_events WHERE id = (SELECT max(id) FROM audit_events)`)
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "every row is sealed and unchanged since", "audit_events", "run ", "rows were deleted")
			}},
		{"delete a posting and its legs with the triggers off",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asReplica(
					fmt.Sprintf(`DELETE FROM legs WHERE posting_id = (SELECT id FROM postings WHERE posting_key = '%s')`, es[7].Key()),
					fmt.Sprintf(`DELETE FROM postings WHERE posting_key = '%s'`, es[7].Key()))
				if n := c.count(`SELECT count(*) FROM postings WHERE posting_key = $1`, es[7].Key()); n != 0 {
					t.Fatal("the posting is still there")
				}
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "every row is sealed and unchanged since", "postings", "run 1", "rows were deleted")
				wantFinding(t, v, "every row is sealed and unchanged since", "legs", "all legs", "rows were deleted")
			}},
		{"change a posting's amount and its legs consistently with the triggers off",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asReplica(
					fmt.Sprintf(`UPDATE postings SET amount_minor = amount_minor + 500 WHERE posting_key = '%s'`, es[8].Key()),
					fmt.Sprintf(`UPDATE legs SET amount_minor = amount_minor + 500
					              WHERE posting_id = (SELECT id FROM postings WHERE posting_key = '%s')`, es[8].Key()))
				if n := c.count(`SELECT count(*) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
				                  WHERE p.posting_key = $1 AND l.amount_minor = $2`, es[8].Key(), es[8].Amount+500); n != 2 {
					t.Fatalf("%d legs changed, want 2", n)
				}
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				for _, ck := range v.Checks {
					if ck.Name == "every posting balances per currency" || ck.Name == "every posting's legs are the ones its kind makes" {
						if !ck.OK {
							t.Fatalf("a consistent change should pass %q, and only the seals find it: %+v", ck.Name, ck.Findings)
						}
					}
				}
				wantFinding(t, v, "every row is sealed and unchanged since", "postings", "run 1", "amounts were sealed at")
				wantFinding(t, v, "every row is sealed and unchanged since", "legs", "all legs", "amounts were sealed at")
			}},
		{"insert a correction posting without an approved correction",
			func(t *testing.T, c *cli, es []ach.Entry) {
				forge := []string{`
INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency, direction, account, digest)
VALUES ('default', 'forged:correction', 'correction', 'ach', 'forged', '2026-03-02', 500000000, 'USD', 'C', 'cust:mine', '\x00')`, `
INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
SELECT 'default', id, l.leg_no, l.account, l.direction, 500000000, 'USD', '2026-03-02'
  FROM postings, (VALUES (1::smallint, 'cust:mine', 'C'), (2::smallint, 'settlement:ach', 'D')) AS l(leg_no, account, direction)
 WHERE posting_key = 'forged:correction'`}
				// With its triggers on, the owner's insert is sealed like any
				// other: only the correction check can tell it from a real one.
				// Should a guard refuse the owner too, the forgery goes in
				// with the triggers off.
				err := pgx.BeginFunc(context.Background(), c.pool, func(tx pgx.Tx) error {
					for _, s := range forge {
						if _, err := tx.Exec(context.Background(), s); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Logf("the database refused the owner's forged correction (%v); forging it with the triggers off", err)
					c.asReplica(forge...)
				}
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "every correction posting is backed by an approved correction", "postings", "forged:correction",
					"no correction posted")
			}},
		{"insert a posting and its legs with the seal triggers off",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwnerWithout([]trigger{{"postings", "postings_seal"}, {"legs", "legs_seal"}}, `
INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency, direction, account, digest, run_id)
VALUES ('default', 'ach:unsealed', 'clearing', 'ach', 'x', '2026-03-02', 100, 'USD', 'C', 'cust:x', '\x00', 1)`, `
INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
SELECT 'default', id, l.leg_no, l.account, l.direction, 100, 'USD', '2026-03-02'
  FROM postings, (VALUES (1::smallint, 'cust:x', 'C'), (2::smallint, 'settlement:ach', 'D')) AS l(leg_no, account, direction)
 WHERE posting_key = 'ach:unsealed'`)
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "every row is sealed and unchanged since", "postings", "run 1", "1 rows are not sealed")
				wantFinding(t, v, "every row is sealed and unchanged since", "legs", "all legs", "2 rows are not sealed")
			}},
		{"delete a seal with its triggers off",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwnerWithout([]trigger{{"seals", "seals_append_only"}},
					`DELETE FROM seals WHERE id = (SELECT min(id) FROM seals WHERE tenant_id = 'default')`)
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "the seal chain is intact", "seals", "seal ", "the seal it follows is gone")
				wantFinding(t, v, "every row is sealed and unchanged since", "postings", "run 1", "rows are not sealed")
			}},
		{"change a seal with its triggers off",
			func(t *testing.T, c *cli, es []ach.Entry) {
				c.asOwnerWithout([]trigger{{"seals", "seals_append_only"}},
					`UPDATE seals SET amount_minor = amount_minor + 1 WHERE id = (SELECT max(id) FROM seals WHERE tenant_id = 'default')`)
			},
			func(t *testing.T, c *cli, es []ach.Entry, v ledger.Verification) {
				wantFinding(t, v, "the seal chain is intact", "seals", "seal ", "does not match its content")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, es := tamperBase(t)
			tc.tamper(t, c, es)
			v := c.verifyJSON(3)
			if v.OK {
				t.Fatal("verify says ok")
			}
			tc.check(t, c, es, v)
			// The table names the finding too.
			if r := c.must(3, "ledger", "verify"); !strings.Contains(r.stdout, "false") {
				t.Fatalf("the table shows no failing check:\n%v", r)
			}
		})
	}
}

// A ledger that went through everything the tool does (ingest, returns,
// reversals, an approved correction and the reclassification of its late
// original) verifies clean, in every output format.
func TestLedgerVerifyPassesACleanLedger(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(62, 20))
	late := es[6]
	without := append(append([]ach.Entry{}, es[:6]...), es[7:]...)
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), without))
	c.ingest(0, c.returnFile("returns.ach", ach.ReturnOf(es[1], "R01", 1)))
	c.must(0, "statement", "import", "--source", "ach", "--format", "ach",
		c.achFile("bank-copy.ach", ach.DefaultHeader(created), es))
	day := late.EffectiveDate.Format("2006-01-02")
	c.reconcile(3, day, day)
	missing := byClass(c.corrections(), "missing_in_ledger")
	if missing.ID == 0 {
		t.Fatal("no missing_in_ledger correction proposed")
	}
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1000000")
	c.approve(0, missing.ID, "alice")
	h := ach.DefaultHeader(created.Add(6 * time.Hour))
	h.IDModifier = "B"
	if s := c.ingest(0, c.achFile("day1-full.ach", h, es))[0]; s.Settled != 1 {
		t.Fatalf("late original: %+v, want it settled by the correction", s)
	}
	var txns []iso8583.Txn
	for i := range 5 {
		txns = append(txns, purchase(i, int64(2000+i)))
	}
	rev := txns[2]
	rev.MTI, rev.STAN, rev.Transmitted = "0400", "000888", txns[2].Transmitted.Add(time.Minute)
	c.ingest(0, "--format", "iso8583", c.isoFile("day.rdw", iso8583.FramingRDW, txns...))
	c.ingest(0, "--format", "iso8583", c.isoFile("reversal.rdw", iso8583.FramingRDW, rev))

	for _, kind := range []string{"clearing", "return", "reversal", "correction", "reclass"} {
		if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind = $2`, c.tenant, kind); n == 0 {
			t.Fatalf("no %s posting: the ledger does not exercise every kind", kind)
		}
	}
	v := c.verifyJSON(0)
	if !v.OK || v.Seals.Count == 0 || len(v.Seals.Head) != 64 {
		t.Fatalf("verify: %+v", v)
	}
	sealed := c.count(`SELECT coalesce(sum(row_count), 0) FROM seals WHERE tenant_id = $1 AND table_name = 'postings'`, c.tenant)
	if sealed != c.postings() {
		t.Fatalf("%d postings sealed, %d posted", sealed, c.postings())
	}
	if r := c.must(0, "-o", "csv", "ledger", "verify"); !strings.HasPrefix(r.stdout, "check,ok,problems,table,key,problem\n") {
		t.Fatalf("csv:\n%v", r)
	}
	if r := c.must(0, "ledger", "verify"); !strings.Contains(r.stdout, "seal chain head: "+v.Seals.Head) {
		t.Fatalf("the table does not show the chain's head:\n%v", r)
	}
}

// The roles produce seals but cannot write them: an ingest login's rows are
// sealed, and it can neither insert a seal nor call the function that
// appends one.
func TestSealsAreWrittenOnlyByTheTrigger(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	role := fmt.Sprintf("seal_ingest_%d", time.Now().UnixNano())
	if _, err := c.pool.Exec(ctx, `CREATE ROLE `+role+` LOGIN IN ROLE clearing_ingest`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.pool.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
	// The test server's connection string may be a URL or keyword/value
	// pairs (the cluster make test starts).
	roleURL, err := pgtest.AsUser(c.url, role)
	if err != nil {
		t.Fatal(err)
	}
	ingest := *c
	ingest.url = roleURL
	ingest.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), liveOnly(entries(63, 10))))
	if n := c.count(`SELECT coalesce(sum(row_count), 0) FROM seals WHERE tenant_id = $1 AND table_name = 'postings'`, c.tenant); n != c.postings() || n == 0 {
		t.Fatalf("%d postings sealed, %d posted", n, c.postings())
	}
	pool, err := pgxpool.New(ctx, roleURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, sql := range []string{
		`INSERT INTO seals (tenant_id, table_name, run_id, row_count, amount_minor, row_hash, hash)
		 VALUES ('default', 'postings', 1, 1, 1, 1, '\x00')`,
		`SELECT clearing_seal_append('default', 'postings', 1, 1, 1, 1)`,
	} {
		_, err := pool.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.InsufficientPrivilege {
			t.Errorf("%s as clearing_ingest: %v, want insufficient_privilege", sql, err)
		}
	}
	c.verifyJSON(0)
}

// The migration seals the rows that exist when it runs: with every seal
// gone, its backfill alone makes a ledger with postings, returns, notices
// and audit events verify again.
func TestSealMigrationBackfillsExistingRows(t *testing.T) {
	t.Parallel()
	c, _ := tamperBase(t)
	b, err := fs.ReadFile(migrations.FS, "00006_seals.sql")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	from, to := strings.Index(text, "-- Seal what is already there"), strings.Index(text, "-- +goose Down")
	if from < 0 || to < from {
		t.Fatal("the migration has no backfill where this test looks for it")
	}
	backfill := strings.NewReplacer("-- +goose StatementBegin", "", "-- +goose StatementEnd", "").Replace(text[from:to])
	c.asOwnerWithout([]trigger{{"seals", "seals_no_truncate"}}, `TRUNCATE seals`)
	c.verifyJSON(3)
	c.asOwner(backfill)
	for _, table := range []string{"postings", "legs", "notices", "audit_events"} {
		sealed := c.count(`SELECT coalesce(sum(row_count), 0) FROM seals WHERE tenant_id = $1 AND table_name = $2`, c.tenant, table)
		if rows := c.count(`SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, c.tenant); sealed != rows {
			t.Errorf("%s: %d rows, %d sealed by the backfill", table, rows, sealed)
		}
	}
	c.verifyJSON(0)
}

// Deleting the newest seals with the rows they sealed leaves no gap in the
// chain: verify alone cannot see it. A head recorded before, and passed
// back with --expect-head, can.
func TestLedgerVerifyFindsARemovedTailThroughARecordedHead(t *testing.T) {
	t.Parallel()
	c, _ := tamperBase(t)
	head := c.verifyJSON(0).Seals.Head
	c.must(0, "ledger", "verify", "--expect-head", head)
	if r := c.run("ledger", "verify", "--expect-head", "abc"); r.code != 2 {
		t.Fatalf("a malformed head: want exit 2\n%v", r)
	}
	// The tail: the last run that posted, and whatever came after it (in
	// double-apply mode, a re-ingest with only audit events).
	last := c.count(`SELECT max(run_id) FROM postings WHERE tenant_id = $1`, c.tenant)
	before := c.count(`SELECT max(id) FROM seals WHERE tenant_id = $1 AND run_id < $2`, c.tenant, last)
	c.asReplica(
		fmt.Sprintf(`DELETE FROM legs WHERE posting_id IN (SELECT id FROM postings WHERE run_id >= %d)`, last),
		fmt.Sprintf(`DELETE FROM postings WHERE run_id >= %d`, last),
		fmt.Sprintf(`DELETE FROM audit_events WHERE run_id >= %d`, last),
		fmt.Sprintf(`DELETE FROM notices WHERE run_id >= %d`, last),
		fmt.Sprintf(`DELETE FROM seals WHERE tenant_id = 'default' AND id > %d`, before))
	if n := c.count(`SELECT count(*) FROM postings WHERE run_id = $1`, last); n != 0 {
		t.Fatalf("%d postings of run %d left", n, last)
	}
	c.verifyJSON(0) // the limit docs/decisions/tamper-evidence.md names
	r := c.must(3, "-o", "json", "ledger", "verify", "--expect-head", head)
	var v ledger.Verification
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatal(err)
	}
	wantFinding(t, v, "the recorded chain heads are still in the chain", "seals", head, "no seal has this hash any more")
}
