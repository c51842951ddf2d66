package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

// loginURL creates a login role that is a member of role (clearing_ingest,
// clearing_reader, ...) and returns the test database's URL as that login,
// and the login's name. Roles are cluster-wide: the name is the test's
// own, and it is dropped when the test ends.
func (c *cli) loginURL(name, role string) (string, string) {
	c.t.Helper()
	ctx := context.Background()
	name = fmt.Sprintf("t_%s_%x", name, time.Now().UnixNano()&0xffffff)
	if _, err := c.pool.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s LOGIN IN ROLE %s`, name, role)); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { c.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+name) })
	u, err := pgtest.AsUser(c.url, name)
	if err != nil {
		c.t.Fatal(err)
	}
	return u, name
}

// The ingest role writes postings, legs and audit events only through the
// ledger's routines, for runs its own login started: plain SQL cannot post
// a correction, add legs to a posting or touch the audit trail, and a
// reader cannot stall ingests with the source's lock.
func TestTheIngestRoleWritesTheLedgerOnlyThroughItsOwnRuns(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	es := liveOnly(entries(47, 10))
	ing := *c
	var login string
	ing.url, login = c.loginURL("ingest", "clearing_ingest")
	first := ing.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))[0]
	if first.Posted != int64(len(es)) {
		t.Fatalf("the ingest login could not ingest: %+v", first)
	}
	if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND id = $2 AND login = $3`,
		c.tenant, first.RunID, login); n != 1 {
		t.Fatalf("run %d does not name the login that started it", first.RunID)
	}
	pool := mustPool(t, ing.url)
	// A run of its own, which the ingest login may start.
	var running int64
	if err := pool.QueryRow(ctx, `INSERT INTO runs (tenant_id, kind, format, source) VALUES ('default', 'ingest', 'ach', 'ach') RETURNING id`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	before := c.snapshot()
	var postingID int64
	if err := c.pool.QueryRow(ctx, `SELECT min(id) FROM postings WHERE tenant_id = $1`, c.tenant).Scan(&postingID); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		// A correction of 5,000,000.00 to an account of its choosing.
		`INSERT INTO postings (tenant_id, posting_key, kind, source, value_date, amount_minor, currency, direction, account, digest)
		 VALUES ('default', 'forged', 'correction', 'ach', '2026-11-29', 500000000, 'USD', 'C', 'acct:mallory', '\x00')`,
		// Extra balanced legs on an existing posting.
		fmt.Sprintf(`INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
		 VALUES ('default', %d, 3, 'acct:mallory', 'C', 100, 'USD', '2026-11-29'),
		        ('default', %d, 4, 'settlement:ach', 'D', 100, 'USD', '2026-11-29')`, postingID, postingID),
		`INSERT INTO audit_events (tenant_id, record_key, own_key, verdict, needs_attention, run_id, record_no, line, kind)
		 VALUES ('default', 'k', 'k', 'duplicate', false, 1, 1, 1, 'clearing')`,
		`DELETE FROM audit_events`,
		`TRUNCATE audit_events`,
		`UPDATE legs SET amount_minor = 1`,
		// Statement lines, balances, notices and the sources' locks go
		// through routines too (migration 00025).
		`INSERT INTO statement_lines (tenant_id, source, line_key, occurrence, reference, alt_reference, amount_minor, currency,
		                              direction, value_date, line_type, account, account_last4, digest, run_id, record_no, line, detail)
		 VALUES ('default', 'ach', 'forged', 1, 'r', '', 100, 'USD', 'C', '2026-11-29', 'entry', '', '', '\x00', 1, 1, 1, '')`,
		`INSERT INTO statement_balances (tenant_id, source, balance_key, format, statement_id, account, account_last4, currency,
		                                 opening_minor, closing_minor, closing_date, entries, credits_minor, debits_minor,
		                                 difference_minor, run_id, line)
		 VALUES ('default', 'ach', 'forged', 'bai2', 's', '', '', 'USD', 0, 0, '2026-11-29', 0, 0, 0, 0, 1, 1)`,
		`INSERT INTO notices (tenant_id, notice_key, source, value_date, amount_minor, currency, direction, account,
		                      account_last4, digest, run_id, record_no, line, detail)
		 VALUES ('default', 'forged', 'ach', '2026-11-29', 0, 'USD', 'C', '', '', '\x00', 1, 1, 1, '')`,
		`INSERT INTO ledger_locks (tenant_id, source) VALUES ('default', 'forged')`,
	} {
		if _, err := pool.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s\nas clearing_ingest: %v, want permission denied", stmt, err)
		}
	}

	// The routines themselves refuse a run the login did not start, and a
	// run that is done.
	otherURL, _ := c.loginURL("other", "clearing_ingest")
	otherPool := mustPool(t, otherURL)
	conn, err := otherPool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE record_stage AS SELECT * FROM (VALUES (1::bigint)) v(seq)`); err != nil {
		t.Fatal(err)
	}
	for _, run := range []int64{running, first.RunID} {
		_, err := conn.Exec(ctx, `SELECT clearing_post_clearing('default', $1, 1, 1, 'ach')`, run)
		if err == nil || !strings.Contains(err.Error(), "not a running run of login") {
			t.Errorf("posting for run %d as another login: %v, want it refused", run, err)
		}
	}
	if after := c.snapshot(); after != before {
		t.Fatalf("the ledger changed:\n%s", diffLines(before, after))
	}

	// A reader holding the old advisory lock, or trying the new row lock,
	// stalls no ingest.
	readerURL, _ := c.loginURL("reader", "clearing_reader")
	rd := mustPool(t, readerURL)
	tx, err := rd.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7412, hashtext('default' || chr(31) || 'ach'))`); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Exec(ctx, `SELECT 1 FROM ledger_locks WHERE tenant_id = 'default' FOR SHARE`); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("clearing_reader locked ledger_locks: %v", err)
	}
	more := liveOnly(entries(48, 5))
	for i := range more {
		more[i].CompanyID = "8888888888"
	}
	if r := ing.runWithin(time.Minute, "ingest", c.achFile("more.ach", ach.DefaultHeader(created), more)); r.code != 0 {
		t.Fatalf("an ingest while a reader holds locks:\n%v", r)
	}
}

// A schema owner that is not a superuser can migrate, and the ledger's
// routines, running as that owner, read the stage of an ingest login.
func TestASchemaOwnerThatIsNoSuperuserRunsTheLedger(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	owner := fmt.Sprintf("t_owner_%x", time.Now().UnixNano()&0xffffff)
	if _, err := c.pool.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s LOGIN CREATEROLE`, owner)); err != nil {
		t.Fatal(err)
	}
	dbName := owner + "_db"
	t.Cleanup(func() {
		c.pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+dbName+" WITH (FORCE)")
		c.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+owner)
	})
	if _, err := c.pool.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, dbName, owner)); err != nil {
		t.Fatal(err)
	}
	dbURL, err := pgtest.WithDatabase(c.url, dbName)
	if err != nil {
		t.Fatal(err)
	}
	ownerURL, err := pgtest.AsUser(dbURL, owner)
	if err != nil {
		t.Fatal(err)
	}
	adm := *c
	adm.url = ownerURL
	adm.must(0, "migrate")
	if _, err := mustPool(t, ownerURL).Exec(ctx, fmt.Sprintf(`CREATE ROLE %s_ing LOGIN IN ROLE clearing_ingest`, owner)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+owner+"_ing") })
	ing := *c
	ing.url, err = pgtest.AsUser(dbURL, owner+"_ing")
	if err != nil {
		t.Fatal(err)
	}
	es := liveOnly(entries(49, 8))
	if s := ing.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))[0]; s.Posted != int64(len(es)) {
		t.Fatalf("ingest as %s_ing: %+v", owner, s)
	}
	ownerPool := mustPool(t, ownerURL)
	var n int64
	if err := ownerPool.QueryRow(ctx, `SELECT count(*) FROM legs`).Scan(&n); err != nil || n != int64(2*len(es)) {
		t.Fatalf("%d legs (%v), want %d", n, err, 2*len(es))
	}
}

// A routine replaced by the owner with one that writes something else is
// found by ledger verify; 'clearing migrate' puts the binary's back.
func TestLedgerVerifyFindsAReplacedRoutine(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), liveOnly(entries(50, 5))))
	c.must(0, "ledger", "verify")
	if _, err := c.pool.Exec(context.Background(), `
CREATE OR REPLACE FUNCTION clearing_post_clearing(text, bigint, bigint, bigint, text) RETURNS SETOF bigint
LANGUAGE sql SECURITY DEFINER AS 'SELECT 0::bigint'`); err != nil {
		t.Fatal(err)
	}
	if r := c.must(3, "ledger", "verify"); !strings.Contains(r.stdout, "clearing_post_clearing") {
		t.Fatalf("verify does not name the replaced routine:\n%v", r)
	}
	c.must(0, "migrate")
	c.must(0, "ledger", "verify")
	// The same body on the caller's search path lets a temporary table
	// stand in for a ledger table.
	if _, err := c.pool.Exec(context.Background(),
		`ALTER FUNCTION clearing_post_clearing(text, bigint, bigint, bigint, text) SET search_path = pg_temp, public`); err != nil {
		t.Fatal(err)
	}
	if r := c.must(3, "ledger", "verify"); !strings.Contains(r.stdout, "clearing_post_clearing") {
		t.Fatalf("verify does not name the routine with another search path:\n%v", r)
	}
}

// An ingest login takes every path of the write side, on one PostgreSQL as
// on Citus, where a transaction that touched a tenant's shard as the login
// and then as the owner (in a routine) is refused: a dry run, a run killed
// between chunks and resumed, a re-dated re-send held whole, an orphan
// return held and released by its original, a line-keyed CSV whose lines
// shifted, and a bank's camt statement with its balances imported twice.
func TestAnIngestLoginTakesEveryWritePath(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ing := *c
	var login string
	ing.url, login = c.loginURL("nightly", "clearing_ingest")
	es := liveOnly(entries(83, 30))
	orig := es[29]
	es = es[:29]
	day1 := c.achFile("day1.ach", ach.DefaultHeader(created), es)

	if r := ing.must(0, "ingest", "--dry-run", day1); !strings.Contains(r.stdout, "dry_run") {
		t.Fatalf("dry run:\n%v", r)
	}
	if n := c.count(`SELECT (SELECT count(*) FROM runs WHERE tenant_id = $1) + (SELECT count(*) FROM postings WHERE tenant_id = $1)`, c.tenant); n != 0 {
		t.Fatalf("the dry run left %d rows", n)
	}

	crashed := ing
	crashed.env = []string{"CLEARING_FAILPOINTS=ingest.chunk-committed=kill@2"}
	if r := crashed.exec("ingest", "--chunk-size", "7", day1); r.code != -1 {
		t.Fatalf("want the process killed at the failpoint\n%v", r)
	}
	if got := c.postings(); got != 14 {
		t.Fatalf("%d postings after two chunks of 7, want 14", got)
	}
	c.waitForClientsToLeave()
	if s := ing.ingest(0, "--chunk-size", "7", day1)[0]; !s.Resumed || s.Posted != int64(len(es)) {
		t.Fatalf("resumed run: %+v, want all %d posted", s, len(es))
	}

	resent := ing.ingest(3, c.achFile("day1-resent.ach", ach.DefaultHeader(created.Add(24*time.Hour)), moved(es, 1)))[0]
	if resent.Posted != 0 || resent.Quarantined != int64(len(es)) {
		t.Fatalf("re-dated re-send: %+v, want all %d held", resent, len(es))
	}

	ret := ach.ReturnOf(orig, "R01", 1)
	if s := ing.ingest(3, c.returnFile("orphan.ach", ret))[0]; s.Quarantined != 1 || s.Posted != 0 {
		t.Fatalf("orphan return: %+v", s)
	}
	h := ach.DefaultHeader(created)
	h.IDModifier = "B"
	if s := ing.ingest(0, c.achFile("original.ach", h, []ach.Entry{orig}))[0]; s.Posted != 1 || s.Released != 1 {
		t.Fatalf("the orphan's original: %+v, want it posted and the return released", s)
	}
	if got := c.heldState(ret.Key()); got != "released" {
		t.Fatalf("held state of %s = %q, want released", ret.Key(), got)
	}

	mapping := c.file("m.toml", []byte(lineKeyedMapping))
	ing.ingest(0, "--format", "csv", "--map", mapping, "--file-id", "stmt-11-29",
		c.file("a.csv", []byte("ref,amount,date\nA,1.00,2026-11-29\nB,2.00,2026-11-29\n")))
	if s := ing.ingest(3, "--format", "csv", "--map", mapping, "--file-id", "stmt-11-29",
		c.file("b.csv", []byte("ref,amount,date\nNEW,9.00,2026-11-29\nA,1.00,2026-11-29\nB,2.00,2026-11-29\n")))[0]; s.Conflicts != 2 || s.Quarantined != 1 {
		t.Fatalf("shifted rows: %+v, want 2 conflicts and the moved row held", s)
	}

	camt := c.generated("statement.xml", "camt", "--message", "052", "--version", "001.04", "--statements", "3",
		"--entries", "40", "--currency", "CHF", "--seed", "8")
	ing.must(0, "statement", "import", "--source", "bank", camt)
	lines := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, c.tenant)
	if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1`, c.tenant); lines == 0 || n != 3 {
		t.Fatalf("the statement added %d lines and %d balances, want 3 balances", lines, n)
	}
	ing.must(0, "statement", "import", "--source", "bank", camt)
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'duplicate' AND kind = 'statement'
	                    AND run_id = (SELECT max(id) FROM runs WHERE tenant_id = $1 AND kind = 'statement')`, c.tenant); n != lines {
		t.Fatalf("the statement again: %d duplicate lines audited, want %d", n, lines)
	}

	// What the ledger holds: the day's entries and the original once, the
	// return once, the CSV's two lines; every run the login's, and done.
	if got, want := c.postings(), int64(len(es)+1+1+2); got != want {
		t.Fatalf("%d postings, want %d", got, want)
	}
	if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND (login <> $2 OR status <> 'done')`, c.tenant, login); n != 0 {
		t.Fatalf("%d runs not done or not the ingest login's", n)
	}
	if v := c.verifyJSON(0); !v.OK {
		t.Fatalf("verify: %+v", v)
	}
}
