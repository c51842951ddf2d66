package main

import (
	"context"
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats/ach"
)

// An ingest killed with SIGKILL and run again at once resumes its run, every
// time, and the ledger ends as one clean run leaves it. The killed process's
// server session outlives it: here it waits for a lock that the test holds,
// which is where a dead client's session lingers longest (a long statement
// is the other place). The server must notice that the client is gone and
// end the session, and the re-run must wait for that instead of starting a
// second run from record 1 because the dead run's lock is still held.
func TestKilledIngestRunAgainAtOnceResumesItsRun(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	const chunk, n = 4000, 40000
	f := c.achFile("big.ach", ach.DefaultHeader(created), entries(29, n))
	args := []string{"--chunk-size", "4000", f}
	clean := c.withTenant(t, "clean")
	// Once, also in double-apply mode: the killed runs below are compared
	// with one clean run.
	if r := clean.exec(append([]string{"ingest"}, args...)...); r.code != 0 {
		t.Fatalf("the clean run:\n%v", r)
	}
	want := clean.snapshot()

	ingest := append([]string{"-o", "json", "ingest"}, args...)
	p := c.start(ingest...)
	c.waitForProgress(p, 0)
	var runID, progress int64
	const kills = 6
	for kill := 1; kill <= kills; kill++ {
		// The chunk in flight commits; the next one waits for the test.
		release := c.lockWrites("postings")
		var now int64
		if err := c.pool.QueryRow(context.Background(), `SELECT id, progress FROM runs WHERE tenant_id = $1`, c.tenant).Scan(&runID, &now); err != nil {
			t.Fatalf("kill %d: the one run of the file: %v", kill, err)
		}
		if now <= progress || now >= n {
			t.Fatalf("kill %d: the run is at record %d, after %d before: want it further, and not done", kill, now, progress)
		}
		progress = now
		dead := c.waitBlockedPID(p, "postings", 0)
		p.kill(t)
		if _, sig := p.wait(t); sig != syscall.SIGKILL {
			t.Fatalf("kill %d: the process was not killed (signal %v)", kill, sig)
		}
		if kill == kills {
			// The killed process's session is not left looking alive.
			c.waitForRunStatus(runID, "interrupted", 10*time.Second)
			release()
			break
		}
		// At once, with the killed process's session still waiting for
		// the lock and owning the run.
		p = c.start(ingest...)
		c.waitBlockedPID(p, "postings", dead)
		if got := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1`, c.tenant); got != 1 {
			release()
			r, _ := p.wait(t)
			t.Fatalf("kill %d: the re-run started another run instead of resuming run %d: %d runs\n%v", kill, runID, got, r)
		}
		release()
	}
	r := c.exec(ingest...)
	var sums []struct {
		RunID   int64 `json:"run_id"`
		Resumed bool  `json:"resumed"`
		Status  string
	}
	if err := json.Unmarshal([]byte(r.stdout), &sums); err != nil || r.code != 0 || len(sums) != 1 {
		t.Fatalf("the last re-run: %v\n%v", err, r)
	}
	if !sums[0].Resumed || sums[0].RunID != runID {
		t.Fatalf("the last re-run is run %d (resumed %v), want run %d resumed\n%v", sums[0].RunID, sums[0].Resumed, runID, r)
	}
	if got := c.snapshot(); got != want {
		t.Fatalf("%d kills and re-runs differ from a clean run:\n%s", kills, diffLines(want, got))
	}
}

// waitForProgress waits until the tenant's run has applied more than after
// records, and returns how many it has; it fails the test if p ends first.
func (c *cli) waitForProgress(p *proc, after int64) int64 {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := c.count(`SELECT coalesce(max(progress), 0) FROM runs WHERE tenant_id = $1`, c.tenant)
		if n > after {
			return n
		}
		if p.exited() || time.Now().After(deadline) {
			if !p.exited() {
				p.kill(c.t)
			}
			r, _ := p.wait(c.t)
			c.t.Fatalf("the run never got past record %d\n%v", after, r)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitBlockedPID waits until a server process of clearing other than
// except waits for the lock on table, and returns its pid; it fails the
// test if p ends first.
func (c *cli) waitBlockedPID(p *proc, table string, except int64) int64 {
	c.t.Helper()
	// A bound on a hang, not a timing: under a loaded CI machine staging
	// 40,000 records and waiting for the dead session take a while.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var pid int64
		err := c.pool.QueryRow(context.Background(), `
SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE NOT l.granted AND l.relation = $1::regclass AND a.application_name = 'clearing'
   AND a.datname = current_database() AND l.pid <> $2
 LIMIT 1`, table, except).Scan(&pid)
		if err == nil {
			return pid
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

// waitForRunStatus waits until 'clearing runs' shows run id with status.
func (c *cli) waitForRunStatus(id int64, status string, within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := c.exec("-o", "json", "runs")
		var rs []struct {
			ID     int64  `json:"run_id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil || r.code != 0 {
			c.t.Fatalf("runs: %v\n%v", err, r)
		}
		for _, run := range rs {
			if run.ID == id && run.Status == status {
				return
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run %d is not shown %s after %v\n%v", id, status, within, r)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
