package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/pgtest"
)

// The helpers in this file serve the tests that prove a record posts once
// whatever happens: crashes, concurrent processes, any order of arrival and
// hostile input.

// proc is a clearing process running in the background, so that a test can
// kill it at a moment of its choosing.
type proc struct {
	cmd  *exec.Cmd
	args []string
	out  bytes.Buffer
	errb bytes.Buffer
	done chan struct{} // closed once the process has ended
	err  error         // what waiting for it returned
}

// start starts the binary with the cli's tenant, database and environment,
// and does not wait for it.
func (c *cli) start(args ...string) *proc {
	c.t.Helper()
	p := &proc{args: args, done: make(chan struct{})}
	p.cmd = exec.Command(clearingBin, append([]string{"--tenant", c.tenant}, args...)...)
	p.cmd.Env = append(os.Environ(), "CLEARING_DATABASE_URL="+c.url, "CLEARING_PII_KEY=test-key")
	p.cmd.Env = append(p.cmd.Env, c.env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("starting clearing: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to end and returns what it did, with the
// signal that ended it (zero when it exited by itself).
func (p *proc) wait(t testing.TB) (result, syscall.Signal) {
	t.Helper()
	<-p.done
	r := result{args: p.args, stdout: p.out.String(), stderr: p.errb.String()}
	var ee *exec.ExitError
	if p.err != nil && !errors.As(p.err, &ee) {
		t.Fatalf("waiting for clearing: %v", p.err)
	}
	r.code = p.cmd.ProcessState.ExitCode()
	var sig syscall.Signal
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig = ws.Signal()
	}
	return r, sig
}

// kill sends the process SIGKILL, as a crash or an OOM killer would: no
// deferred function runs and nothing is cleaned up.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("killing clearing: %v", err)
	}
}

// withTenant returns a copy of c that works on another tenant of the same
// database, for test t, without c's extra environment.
func (c *cli) withTenant(t *testing.T, tenant string) *cli {
	d := *c
	d.t, d.tenant, d.env = t, tenantID(tenant), nil
	return &d
}

// clientsQuery counts the server backends of clearing processes connected
// to the test's database.
const clientsQuery = `
SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'clearing'`

// waitForClientsToLeave waits until no clearing process is connected to the
// test's database. After a SIGKILL the server notices the dead client, rolls
// back its open transaction and frees its advisory locks a moment later; a
// command run before then would still find the dead run owned.
func (c *cli) waitForClientsToLeave() {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for c.count(clientsQuery) > 0 {
		if time.Now().After(deadline) {
			c.t.Fatal("the server still serves a killed clearing process after 15s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockTable takes an ACCESS EXCLUSIVE lock on table in a transaction of its
// own, so that the next statement of any process that touches the table
// waits; lockWrites takes an EXCLUSIVE lock, which only writers wait for.
// The returned function releases the lock; a test that ends without calling
// it releases it then, so that its connection returns to the pool.
func (c *cli) lockTable(table string) (release func()) {
	c.t.Helper()
	return c.lock(table, "ACCESS EXCLUSIVE")
}

func (c *cli) lockWrites(table string) (release func()) {
	c.t.Helper()
	return c.lock(table, "EXCLUSIVE")
}

func (c *cli) lock(table, mode string) (release func()) {
	c.t.Helper()
	ctx := context.Background()
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		conn.Release()
		c.t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE `+table+` IN `+mode+` MODE`); err != nil {
		tx.Rollback(ctx) //nolint:errcheck // the test fails anyway
		conn.Release()
		c.t.Fatalf("lock %s: %v", table, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			tx.Rollback(ctx) //nolint:errcheck // releasing the lock is all that matters
			conn.Release()
		})
	}
	c.t.Cleanup(release)
	return release
}

// waitBlockedOn waits until a clearing process waits for the lock on table,
// and returns the statement it is blocked in. It fails the test if p ends
// first: then it never reached the table.
func (c *cli) waitBlockedOn(p *proc, table string) string {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var query string
		err := c.pool.QueryRow(context.Background(), `
SELECT a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE NOT l.granted AND l.relation = $1::regclass AND a.application_name = 'clearing'
   AND a.datname = current_database()
 LIMIT 1`, table).Scan(&query)
		if err == nil {
			return query
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			c.t.Fatal(err)
		}
		if p.exited() || time.Now().After(deadline) {
			if !p.exited() {
				p.kill(c.t)
			}
			r, _ := p.wait(c.t)
			c.t.Fatalf("clearing never waited for the lock on %s\n%v", table, r)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitingQuery counts the clearing processes that wait for a lock in the
// test's database.
const waitingQuery = `
SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE NOT l.granted AND a.application_name = 'clearing' AND a.datname = current_database()`

// citusWaitingQuery is waitingQuery on a Citus coordinator. A statement
// that waits for a lock on a shard waits on its worker, where pg_locks
// shows Citus's own backend, not the clearing process's; citus_lock_waits
// names the waiting process by its global pid, which citus_stat_activity
// gives with the process's pid and application.
const citusWaitingQuery = `
SELECT count(DISTINCT pid) FROM (
    SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE NOT l.granted AND a.application_name = 'clearing' AND a.datname = current_database()
    UNION
    SELECT a.pid FROM citus_lock_waits w JOIN citus_stat_activity a ON a.global_pid = w.waiting_gpid
     WHERE a.application_name = 'clearing' AND a.datname = current_database()) waiting`

// waiting counts the clearing processes that wait for a lock in the test's
// database, on one PostgreSQL or on a Citus cluster.
func (c *cli) waiting() int64 {
	c.t.Helper()
	if pgtest.Citus(c.t) {
		return c.count(citusWaitingQuery)
	}
	return c.count(waitingQuery)
}

// waitForWaiting waits until n clearing processes wait for a lock.
func (c *cli) waitForWaiting(n int) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.waiting() < int64(n) {
		if time.Now().After(deadline) {
			c.t.Fatalf("fewer than %d clearing processes wait for a lock after 30s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitUntilEndedOrWaiting waits until p has ended, or n clearing processes
// (p among them) wait for locks: p is then serialised behind another.
func (c *cli) waitUntilEndedOrWaiting(p *proc, n int) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !p.exited() && c.waiting() < int64(n) {
		if time.Now().After(deadline) {
			c.t.Fatal("a clearing process neither ended nor waited for a lock within 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// terminateClients ends the server backends of clearing processes on the
// test's database, as the server does by itself once it notices that their
// client died; a backend waiting for a lock only notices when the lock is
// granted.
func (c *cli) terminateClients() {
	c.t.Helper()
	c.count(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
	          WHERE datname = current_database() AND application_name = 'clearing'`)
}

// ledgerQueries render the economic content of a tenant's ledger: what was
// posted, under which key, moving what between which accounts. They leave
// out where each posting arrived from (file, line, run, detail), which
// differs when the same intents arrive split across other files.
var ledgerQueries = []struct{ name, sql string }{
	{"postings", `
SELECT p.posting_key, p.kind, p.source, coalesce(p.reference, ''), p.value_date::text, p.amount_minor, p.currency,
       p.direction, p.account, p.account_last4, encode(p.digest, 'hex'), coalesce(o.posting_key, '')
  FROM postings p LEFT JOIN postings o ON o.tenant_id = p.tenant_id AND o.id = p.refers_to
 WHERE p.tenant_id = $1 ORDER BY p.posting_key`},
	{"legs", `
SELECT p.posting_key, l.leg_no, l.account, l.direction, l.amount_minor, l.currency, l.value_date::text
  FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
 WHERE l.tenant_id = $1 ORDER BY p.posting_key, l.leg_no`},
	{"notices", `
SELECT n.notice_key, coalesce(n.reference, ''), coalesce(p.posting_key, ''), n.value_date::text, n.amount_minor,
       encode(n.digest, 'hex')
  FROM notices n LEFT JOIN postings p ON p.tenant_id = n.tenant_id AND p.id = n.posting_id
 WHERE n.tenant_id = $1 ORDER BY n.notice_key`},
}

// reconQueries render a tenant's reconciliation runs, their totals,
// classes and discrepancies, and the proposed corrections, without ids or
// times.
var reconQueries = []struct{ name, sql string }{
	{"reconciliations", `
SELECT source, period_from::text, period_to::text, window_days, tolerance_minor, coalesce(statement_last_date::text, ''),
       ledger_items, statement_lines, matched_ledger, matched_statement
  FROM reconciliations WHERE tenant_id = $1 ORDER BY id`},
	{"totals", `
SELECT currency, ledger_total, statement_total FROM reconciliation_totals WHERE tenant_id = $1 ORDER BY run_id, currency`},
	{"classes", `
SELECT currency, class, ledger_items, statement_lines, ledger_amount, statement_amount
  FROM reconciliation_classes WHERE tenant_id = $1 ORDER BY run_id, currency, class`},
	{"discrepancies", discrepancyContent + ` WHERE tenant_id = $1 ORDER BY run_id, seq`},
	{"corrections", `
SELECT c.correction_key, c.posting_key, c.class, c.status, c.source, c.reference, c.amount_minor, c.currency,
       c.direction, c.counter_account, c.settlement_account, c.value_date::text, c.explanation,
       coalesce(p.posting_key, '')
  FROM corrections c LEFT JOIN postings p ON p.tenant_id = c.tenant_id AND p.id = c.posting_id
 WHERE c.tenant_id = $1 ORDER BY c.correction_key`},
	{"decisions", `
SELECT c.correction_key, d.decision, d.operator, d.reason, d.db_role
  FROM correction_decisions d JOIN corrections c ON c.tenant_id = d.tenant_id AND c.id = d.correction_id
 WHERE d.tenant_id = $1 ORDER BY 1, 2, 3`},
}

// fullSnapshot is snapshot and the reconciliation side together: the whole
// of what a tenant's commands have written, without ids or times.
func (c *cli) fullSnapshot() string {
	c.t.Helper()
	return c.snapshot() + c.render(reconQueries)
}

// discrepancyContent selects what one discrepancy says, without ids.
const discrepancyContent = `
SELECT seq, class, reason, is_break, explanation, reference, coalesce(posting_key, ''), coalesce(posting_kind, ''),
       coalesce(ledger_amount, 0), coalesce(ledger_currency, ''), coalesce(ledger_date::text, ''),
       coalesce(line_key, ''), coalesce(line_type, ''), coalesce(statement_amount, 0),
       coalesce(statement_currency, ''), coalesce(statement_date::text, ''), coalesce(correction_key, '')
  FROM discrepancies`

// render runs queries for the tenant and writes their rows as text.
func (c *cli) render(queries []struct{ name, sql string }) string {
	c.t.Helper()
	var b strings.Builder
	for _, q := range queries {
		fmt.Fprintf(&b, "== %s\n", q.name)
		b.WriteString(c.rows(q.sql, c.tenant))
	}
	return b.String()
}

// rows runs one query and renders its rows, one line each.
func (c *cli) rows(sql string, args ...any) string {
	c.t.Helper()
	rows, err := c.pool.Query(context.Background(), sql, args...)
	if err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			c.t.Fatalf("%s: %v", sql, err)
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('|')
			}
			fmt.Fprint(&b, v)
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
	return b.String()
}
