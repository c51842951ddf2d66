package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/demo"
)

// concurrently runs every command line in its own process, all at once,
// and returns their results in the same order.
func (c *cli) concurrently(cmds [][]string) []result {
	c.t.Helper()
	out := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Go(func() { out[i] = c.exec(args...) })
	}
	wg.Wait()
	return out
}

// summaries parses the JSON summaries of ingests that all had to succeed.
func summaries(t *testing.T, rs []result) []ingestSummary {
	t.Helper()
	var all []ingestSummary
	for _, r := range rs {
		if r.code != 0 {
			t.Fatalf("a concurrent ingest failed:\n%v", r)
		}
		var s []ingestSummary
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
			t.Fatalf("ingest output is not JSON: %v\n%v", err, r)
		}
		all = append(all, s...)
	}
	return all
}

// checkOnePostingPerIntent asserts that the tenant's ledger holds exactly
// one posting for each live entry and one notice for each prenote, nothing
// else, and that every record the processes did not post is in the audit
// trail of its own run, as a duplicate of what is there.
func checkOnePostingPerIntent(c *cli, es []ach.Entry, sums []ingestSummary) {
	c.t.Helper()
	var live, prenotes []string
	for _, e := range es {
		if e.Amount > 0 {
			live = append(live, e.Key())
		} else {
			prenotes = append(prenotes, e.Key())
		}
	}
	if got := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1`, c.tenant); got != int64(len(live)) {
		c.t.Errorf("%d postings, want one for each of the %d live entries", got, len(live))
	}
	if got := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = ANY($2)`, c.tenant, live); got != int64(len(live)) {
		c.t.Errorf("%d of the %d live entries are posted", got, len(live))
	}
	if got := c.count(`SELECT count(*) FROM notices WHERE tenant_id = $1 AND notice_key = ANY($2)`, c.tenant, prenotes); got != int64(len(prenotes)) {
		c.t.Errorf("%d notices for the %d prenotes", got, len(prenotes))
	}
	var records, posted, notices, dups int64
	for _, s := range sums {
		if s.Conflicts != 0 || s.Quarantined != 0 || s.Status != "done" {
			c.t.Errorf("%s: %+v, want every record posted or a duplicate", s.File, s)
		}
		records += s.Records
		posted += s.Posted
		notices += s.Notices
		dups += s.Duplicates
		audited := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'duplicate'
		                       AND coalesce(existing_posting_id, existing_notice_id) IS NOT NULL`, c.tenant, s.RunID)
		if audited != s.Duplicates {
			c.t.Errorf("run %d reports %d duplicates and audits %d", s.RunID, s.Duplicates, audited)
		}
	}
	if posted != int64(len(live)) || notices != int64(len(prenotes)) || posted+notices+dups != records {
		c.t.Errorf("the processes posted %d (want %d), noted %d (want %d) and skipped %d of %d records",
			posted, len(live), notices, len(prenotes), dups, records)
	}
	if got := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1`, c.tenant); got != dups {
		c.t.Errorf("%d audit events, want one for each of the %d duplicates", got, dups)
	}
	c.must(0, "ledger", "verify")
}

// Overlapping files ingested by several processes at once: every intent
// posts once, and every record skipped is audited once by the run that
// skipped it. (Eight ingests of one file are TestConcurrentIngestsOfOneFilePostEachEntryOnce.)
func TestConcurrentIngestsOfOverlappingFilesPostEachIntentOnce(t *testing.T) {
	t.Parallel()
	es := entries(31, 900)
	reversed := slices.Clone(es[300:])
	slices.Reverse(reversed)
	cases := []struct {
		name  string
		files [][]ach.Entry
		procs int // processes per file
	}{
		{"a file and its corrected re-upload", [][]ach.Entry{es[:600], es}, 4},
		{"overlapping parts, one in reverse order", [][]ach.Entry{es[:500], es[200:700], reversed}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			var cmds [][]string
			for i, part := range tc.files {
				h := ach.DefaultHeader(created.Add(time.Duration(i) * time.Hour))
				h.IDModifier, h.FirstBatch, h.BatchSize = string(rune('A'+i)), 1+10*i, 97+i
				f := c.achFile(fmt.Sprintf("part%d.ach", i), h, part)
				for range tc.procs {
					cmds = append(cmds, []string{"-o", "json", "ingest", "--chunk-size", "61", f})
				}
			}
			checkOnePostingPerIntent(c, es, summaries(t, c.concurrently(cmds)))
		})
	}
}

// The same statement imported by several processes at once, and a
// statement with its re-sent, longer version: each line is added once, and
// every process that found a line already there audits it.
func TestConcurrentStatementImportsAddEachLineOnce(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	d, err := demo.Write(filepath.Join(c.dir, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	es := entries(32, 300)
	h := ach.DefaultHeader(created.Add(time.Hour))
	h.IDModifier = "B"
	first, longer := c.achFile("bank-copy.ach", ach.DefaultHeader(created), es[:200]), c.achFile("bank-copy-2.ach", h, es)
	importArgs := func(args ...string) []string {
		return append([]string{"-o", "json", "statement", "import", "--source", "ach"}, args...)
	}
	cases := []struct {
		name  string
		cmds  [][]string
		lines int64 // distinct lines in all the files
	}{
		{"one BAI2 statement six times", slices.Repeat([][]string{importArgs(d.Statement)}, 6), 0},
		{"an ACH statement and its longer version", append(
			slices.Repeat([][]string{importArgs("--format", "ach", first)}, 3),
			slices.Repeat([][]string{importArgs("--format", "ach", longer)}, 3)...), int64(len(liveOnly(es)))},
	}
	for i, tc := range cases {
		c := c.withTenant(t, fmt.Sprintf("case%d", i))
		lines := tc.lines
		if lines == 0 {
			ref := c.withTenant(t, fmt.Sprintf("reference%d", i))
			ref.must(0, tc.cmds[0]...)
			lines = ref.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, ref.tenant)
		}
		var added, dups, records int64
		for _, r := range c.concurrently(tc.cmds) {
			var sums []struct{ Records, Added, Duplicates, Conflicts, Skipped int64 }
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &sums) != nil {
				t.Fatalf("%s: a concurrent import failed:\n%v", tc.name, r)
			}
			for _, s := range sums {
				if s.Conflicts != 0 {
					t.Errorf("%s: %d conflicts", tc.name, s.Conflicts)
				}
				added, dups, records = added+s.Added, dups+s.Duplicates, records+s.Records-s.Skipped
			}
		}
		if got := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, c.tenant); got != lines || added != lines {
			t.Errorf("%s: %d statement lines, %d reported added; want %d", tc.name, got, added, lines)
		}
		audited := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND kind = 'statement' AND verdict = 'duplicate'`, c.tenant)
		if dups != records-lines || audited != dups {
			t.Errorf("%s: %d duplicates reported, %d audited; want %d", tc.name, dups, audited, records-lines)
		}
	}
}

// Reconciliations of the same source and period run at once: each
// succeeds, each finds the same discrepancies, and each proposed correction
// exists once.
func TestConcurrentReconcileRunsOfOnePeriodAgree(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	d, err := demo.Write(filepath.Join(c.dir, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	c.ingest(0, d.Day1)
	c.ingest(0, d.Returns)
	c.must(0, "statement", "import", "--source", "ach", d.Statement)
	reconcile := []string{"reconcile", "--source", "ach", "--from", d.From, "--to", d.To}

	const procs = 4
	for i, r := range c.concurrently(slices.Repeat([][]string{reconcile}, procs)) {
		if r.code != 3 {
			t.Errorf("reconciliation %d: want exit 3 (the demo statement has breaks)\n%v", i, r)
		}
	}
	if n := c.count(`SELECT count(*) FROM reconciliations WHERE tenant_id = $1`, c.tenant); n != procs {
		t.Fatalf("%d reconciliation runs stored, want %d", n, procs)
	}
	var first string
	for i, id := range strings.Fields(c.rows(`SELECT id FROM reconciliations WHERE tenant_id = $1 ORDER BY id`, c.tenant)) {
		got := c.rows(discrepancyContent+` WHERE tenant_id = $1 AND run_id = $2 ORDER BY seq`, c.tenant, id)
		if i == 0 {
			first = got
		} else if got != first {
			t.Errorf("run %s found other discrepancies than the first run:\n%s", id, diffLines(first, got))
		}
	}
	keys := c.count(`SELECT count(DISTINCT correction_key) FROM discrepancies WHERE tenant_id = $1`, c.tenant)
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1`, c.tenant); n != keys || n == 0 {
		t.Fatalf("%d corrections for %d distinct correction keys", n, keys)
	}
}

// Operators approving a correction above the four-eyes threshold at once:
// it posts once, after two different operators, and the others find it
// posted or are refused as the same operator. The test holds a lock so that
// the first approval has recorded itself but not committed while the
// others queue for the correction. (Approvals under the threshold race in
// TestCorrectionsPostOnceWithFourEyesAndCloseTheirBreaks.)
func TestConcurrentFourEyesApprovalsPostOnce(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	d, err := demo.Write(filepath.Join(c.dir, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	c.ingest(0, d.Day1)
	c.must(0, "statement", "import", "--source", "ach", d.Statement)
	c.must(3, "reconcile", "--source", "ach", "--from", d.From, "--to", d.To)
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "0.01")
	id := strings.TrimSpace(c.rows(`SELECT min(id) FROM corrections WHERE tenant_id = $1`, c.tenant))
	approve := func(operator string) []string { // as the operator's own approver login
		return []string{"--database-url", loginURL(c, "approver", operator), "corrections", "approve", id,
			"--operator", operator, "--reason", "checked"}
	}

	// The approval reads the threshold from config after it locked the
	// correction: the first approver waits there, holding the correction.
	release := c.lockTable("config")
	first := c.start(approve("op0")...)
	c.waitBlockedOn(first, "config")
	others := []*proc{c.start(approve("op1")...), c.start(approve("op2")...), c.start(approve("op0")...)}
	c.waitForWaiting(1 + len(others))
	release()
	for i, p := range append([]*proc{first}, others...) {
		r, _ := p.wait(t)
		if r.code != 0 && !(r.code == 1 && strings.Contains(r.stderr, "different operator")) {
			t.Errorf("approval %d:\n%v", i, r)
		}
	}
	var status string
	if err := c.pool.QueryRow(t.Context(), `SELECT status FROM corrections WHERE tenant_id = $1 AND id = $2`, c.tenant, id).Scan(&status); err != nil {
		t.Fatal(err)
	}
	postings := c.count(`SELECT count(*) FROM postings p JOIN corrections k ON k.tenant_id = p.tenant_id AND k.posting_key = p.posting_key
	                      WHERE p.tenant_id = $1 AND k.id = $2`, c.tenant, id)
	approvals := c.count(`SELECT count(DISTINCT operator) FROM correction_decisions WHERE tenant_id = $1 AND correction_id = $2`, c.tenant, id)
	if status != "posted" || postings != 1 || approvals != 2 {
		t.Fatalf("correction %s: %s, %d postings, %d approving operators; want posted once after 2", id, status, postings, approvals)
	}
	c.must(0, "ledger", "verify")
}

// A missing_in_ledger correction approved while the original it stands for
// is being ingested: the money moves once, whichever commits first. The
// test holds a lock so that one side has looked at the ledger and waits
// before committing while the other side commits.
func TestApprovalRacingItsLateOriginalMovesTheMoneyOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, table string // the side that waits, and the table it waits for
		waiting     string
	}{
		// The approval reads the four-eyes threshold from config right
		// after it checked that the ledger lacks the money.
		{"the approval waits", "config", "approve"},
		// The ingest audits the file's duplicates after it posted its
		// clearing records, in the chunk's transaction.
		{"the ingest waits", "audit_events", "ingest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			es := liveOnly(entries(23, 20))
			late := es[6]
			without := append(slices.Clone(es[:6]), es[7:]...)
			c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), without))
			var lines []stmtLine
			for _, e := range es {
				lines = append(lines, lineOf(e))
			}
			c.must(0, "statement", "import", "--source", "ach", "--format", "csv", "--map",
				c.file("m.toml", []byte(statementMapping)), c.statement("bank.csv", lines))
			day := late.EffectiveDate.Format("2006-01-02")
			c.reconcile(3, day, day)
			missing := byClass(c.corrections(), "missing_in_ledger")
			if missing.ID == 0 {
				t.Fatal("no missing_in_ledger correction proposed")
			}
			before := c.balance("settlement:ach")
			h := ach.DefaultHeader(created.Add(6 * time.Hour))
			h.IDModifier = "B"
			ingest := []string{"ingest", c.achFile("day1-full.ach", h, es)}
			c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1000000")
			approve := []string{"--database-url", loginURL(c, "approver", "alice"), "corrections", "approve", fmt.Sprint(missing.ID),
				"--operator", "alice", "--reason", "bank confirmed"}
			first, second := approve, ingest
			if tc.waiting == "ingest" {
				first, second = ingest, approve
			}

			release := c.lockTable(tc.table)
			p := c.start(first...)
			c.waitBlockedOn(p, tc.table)
			// The other side runs to its end while the first waits, unless
			// the code serialises the two: then it waits for the first, and
			// the lock is released once it does.
			q := c.start(second...)
			c.waitUntilEndedOrWaiting(q, 2)
			release()
			waited, _ := p.wait(t)
			other, _ := q.wait(t)
			t.Logf("%s: exit %d; %s: exit %d", strings.Join(first[:2], " "), waited.code, strings.Join(second[:2], " "), other.code)

			moved := c.balance("settlement:ach") - before
			if moved != -signed(late) {
				t.Fatalf("the settlement account moved %d for the late entry, want %d once\n%v\n%v", moved, -signed(late), waited, other)
			}
			c.must(0, "ledger", "verify")
		})
	}
}
