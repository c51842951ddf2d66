package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/clearing-dev/clearing/internal/demo"
	"github.com/clearing-dev/clearing/internal/failpoint"
)

// Every named failpoint: the binary is killed there (SIGKILL, at several
// hits of the point), the same command is run again, and the ledger, audit
// trail, runs and statement lines equal those of one clean run.
func TestCrashAtEveryFailpointThenRerunEqualsACleanRun(t *testing.T) {
	t.Parallel()
	fixture := newCLI(t)
	f := newCrashFixture(fixture)
	plans := crashPlans(f)
	clean := map[string]cleanRun{}
	for _, name := range failpoint.All {
		plan, ok := plans[name]
		if !ok {
			t.Errorf("no scenario reaches failpoint %q: add a crashPlan for it to crashPlans in crash_test.go", name)
			continue
		}
		for _, s := range plan.scenarios {
			if _, done := clean[s.name]; done {
				continue
			}
			clean[s.name] = cleanRunOf(fixture.withTenant(t, "clean "+s.name), s)
		}
	}
	for _, name := range failpoint.All {
		plan, ok := plans[name]
		if !ok {
			continue
		}
		for _, s := range plan.scenarios {
			for _, hit := range dedupe(plan.hits(s)) {
				t.Run(fmt.Sprintf("%s/%s/kill@%d", name, s.name, hit), func(t *testing.T) {
					t.Parallel()
					crashAt(t, name, hit, s, clean[s.name])
				})
			}
		}
	}
}

// crashAt runs scenario s in a fresh database, kills its target at the
// hit-th hit of the failpoint, runs the target again and compares the
// result with a clean run.
func crashAt(t *testing.T, point string, hit int, s crashScenario, want cleanRun) {
	c := newCLI(t)
	for _, args := range s.setup {
		if r := c.exec(args...); r.code != 0 && r.code != 3 {
			t.Fatalf("setup:\n%v", r)
		}
	}
	target := s.target(c)
	before := c.fullSnapshot()
	action := "kill"
	if hit > 1 {
		action = fmt.Sprintf("kill@%d", hit)
	}
	c.env = []string{"CLEARING_FAILPOINTS=" + point + "=" + action}
	r, sig := c.start(target...).wait(t)
	c.env = nil
	if sig != syscall.SIGKILL {
		t.Fatalf("the process was not killed at %s=%s (signal %v); the point is not reached\n%v", point, action, sig, r)
	}
	if r.stdout != "" {
		t.Fatalf("a killed process printed a result:\n%v", r)
	}
	c.waitForClientsToLeave()
	checkKilledState(c, s, hit, before)

	again := c.exec(target...)
	if again.code != want.code {
		t.Fatalf("the run after the crash exits %d, a clean run %d\n%v", again.code, want.code, again)
	}
	if s.kind != "approve" {
		if got := summaryWithoutRunIDs(t, again); got != want.summary {
			t.Errorf("the run after the crash reports otherwise than a clean run:\ngot  %s\nwant %s", got, want.summary)
		}
	}
	if s.kind == "ingest" && !strings.Contains(again.stdout, `"resumed": true`) {
		t.Errorf("the run after the crash did not resume the interrupted run:\n%v", again)
	}
	if got := c.fullSnapshot(); got != want.snapshot {
		t.Fatalf("crash at %s=%s and a re-run differ from a clean run:\n%s", point, action, diffLines(want.snapshot, got))
	}
}

// checkKilledState checks what a kill at the hit-th transaction of s left:
// an interrupted ingest run; nothing of a statement import; the approvals
// before the killed one, each with its posting, and nothing of the killed
// one.
func checkKilledState(c *cli, s crashScenario, hit int, before string) {
	c.t.Helper()
	switch s.kind {
	case "ingest":
		if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND status = 'running'`, c.tenant); n != 1 {
			c.t.Fatalf("after a kill inside an ingest, %d runs are left running, want 1", n)
		}
	case "statement":
		if after := c.fullSnapshot(); after != before {
			c.t.Fatalf("a killed statement import left rows behind:\n%s", diffLines(before, after))
		}
	case "approve":
		posted := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1 AND status = 'posted'`, c.tenant)
		postings := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind = 'correction'`, c.tenant)
		decisions := c.count(`SELECT count(*) FROM correction_decisions WHERE tenant_id = $1`, c.tenant)
		if want := int64(hit - 1); posted != want || postings != want || decisions != want {
			c.t.Fatalf("killed at approval %d: %d corrections posted, %d correction postings, %d decisions; want %d of each",
				hit, posted, postings, decisions, want)
		}
	}
}

func dedupe(hits []int) []int {
	slices.Sort(hits)
	return slices.Compact(hits)
}

// A process killed in the middle of a statement (waiting for a lock that
// the test holds) loses the whole chunk or import it was in: right after
// the kill the database shows nothing of it, and running the command again
// ends where a clean run ends. Unlike the failpoints, this places the crash
// inside the transaction wherever the code writes the table, so moving a
// write out of the chunk's transaction cannot hide between two failpoints.
func TestCrashInsideAChunkThenRerunEqualsACleanRun(t *testing.T) {
	t.Parallel()
	fixture := newCLI(t)
	f := newCrashFixture(fixture)
	cases := []struct {
		table string
		s     crashScenario
	}{
		{"postings", f.reupload},
		{"notices", f.reupload},
		{"audit_events", f.reupload},
		{"audit_events", f.returns},
		{"statement_lines", f.statement},
		{"audit_events", f.statement},
	}
	clean := map[string]cleanRun{}
	for _, tc := range cases {
		if _, done := clean[tc.s.name]; !done {
			clean[tc.s.name] = cleanRunOf(fixture.withTenant(t, "clean "+tc.s.name), tc.s)
		}
	}
	for _, tc := range cases {
		t.Run(tc.s.name+"/"+tc.table, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			for _, args := range tc.s.setup {
				if r := c.exec(args...); r.code != 0 && r.code != 3 {
					t.Fatalf("setup:\n%v", r)
				}
			}
			target := tc.s.target(c)
			before := c.snapshot("runs")
			progressed := `SELECT count(*) FROM runs WHERE tenant_id = $1 AND progress > 0`
			committed := c.count(progressed, c.tenant)
			release := c.lockTable(tc.table)
			p := c.start(target...)
			query := c.waitBlockedOn(p, tc.table)
			// The test compares with the state before the target, so the
			// process must be blocked in its first transaction.
			if c.count(progressed, c.tenant) != committed {
				p.kill(t)
				p.wait(t)
				t.Fatalf("the target reached %s only after committing a chunk: its first chunk must write the table", tc.table)
			}
			p.kill(t)
			c.terminateClients()
			release()
			if r, sig := p.wait(t); sig != syscall.SIGKILL {
				t.Fatalf("the process was not killed (signal %v)\n%v", sig, r)
			}
			c.waitForClientsToLeave()
			if after := c.snapshot("runs"); after != before {
				t.Fatalf("killed while writing %s (in %.60q), the process left part of its chunk behind:\n%s",
					tc.table, strings.TrimSpace(query), diffLines(before, after))
			}
			again := c.exec(target...)
			want := clean[tc.s.name]
			if again.code != want.code {
				t.Fatalf("the run after the crash exits %d, a clean run %d\n%v", again.code, want.code, again)
			}
			if got := c.fullSnapshot(); got != want.snapshot {
				t.Fatalf("crash while writing %s and a re-run differ from a clean run:\n%s", tc.table, diffLines(want.snapshot, got))
			}
		})
	}
}

// A reconciliation killed before it commits leaves no run, totals,
// discrepancies or corrections, and running it again gives what a clean run
// gives. The test holds a lock on the corrections table, so the process is
// killed with its discrepancies written but not committed.
func TestKilledReconcileLeavesNoPartialRun(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	d, err := demo.Write(filepath.Join(c.dir, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	from, to := d.From, d.To
	reconcile := []string{"reconcile", "--source", "ach", "--from", from, "--to", to}
	prepare := func(c *cli) {
		c.ingest(0, d.Day1)
		c.ingest(0, d.Returns)
		c.must(0, "statement", "import", "--source", "ach", d.Statement)
	}
	clean := c.withTenant(t, "clean")
	prepare(clean)
	clean.must(3, reconcile...)
	want := clean.render(reconQueries)
	if !strings.Contains(want, ":correction:") {
		t.Fatal("the clean reconciliation proposes no corrections: the scenario tests nothing")
	}

	prepare(c)
	release := c.lockWrites("corrections")
	p := c.start(reconcile...)
	query := c.waitBlockedOn(p, "corrections")
	if !strings.Contains(query, "INSERT INTO corrections") {
		t.Fatalf("the reconciliation waited for corrections before writing its results, in %q: lock a table it writes later", query)
	}
	p.kill(t)
	c.terminateClients()
	release()
	if r, sig := p.wait(t); sig != syscall.SIGKILL {
		t.Fatalf("the process was not killed (signal %v)\n%v", sig, r)
	}
	c.waitForClientsToLeave()
	for _, table := range []string{"reconciliations", "reconciliation_totals", "reconciliation_classes", "discrepancies", "corrections"} {
		if n := c.count(`SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, c.tenant); n != 0 {
			t.Errorf("a killed reconciliation left %d rows in %s", n, table)
		}
	}
	c.must(3, reconcile...)
	if got := c.render(reconQueries); got != want {
		t.Fatalf("reconciling again after the kill differs from a clean run:\n%s", diffLines(want, got))
	}
}
