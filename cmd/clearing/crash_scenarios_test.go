package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/demo"
	"github.com/clearing-dev/clearing/internal/failpoint"
)

// The scenarios of the crash tests (crash_test.go): what runs before the
// crash, what is killed, and at which hits of which failpoint.

// crashScenario is a database brought to some state by setup commands,
// then one target command that the tests kill and run again. Its records
// are chosen so that the target has something of every kind to lose or
// repeat: new postings, duplicates, in-file duplicates, a conflict,
// notices, returns and an orphan.
type crashScenario struct {
	name  string
	kind  string // "ingest", "statement" or "approve"
	setup [][]string
	// target returns the command line to kill and run again; an approval
	// names corrections by ids that only the database knows.
	target func(c *cli) []string
	// chunks is how many transactions the target commits: chunks of an
	// ingest, corrections approved, or one statement import.
	chunks int
	// verdicts are audit verdicts a clean run of the target must leave, so
	// that a crash has an audit trail to lose or repeat.
	verdicts []string
}

// crashFixture is the scenarios built on the files the crash tests share.
type crashFixture struct {
	reupload, returns, statement, bai2, approve crashScenario
}

// fixed returns a target that does not depend on the database.
func fixed(args ...string) func(*cli) []string { return func(*cli) []string { return args } }

// crashChunk is the chunk size of the crash scenarios' ingests: small, so
// that a file applies in several chunks.
const crashChunk = 7

// crashFiles are the ACH files of the ingest and statement scenarios.
type crashFiles struct {
	day1, reupload, returns1, returns2 string
	reuploadRecords, returns2Records   int
}

func newCrashFiles(c *cli) crashFiles {
	c.t.Helper()
	es := liveOnly(entries(21, 64))
	old, fresh := es[:30], es[30:]
	// Prenotes are notices: one known from the day's file (a duplicate
	// notice on re-upload) and one new.
	prenote := func(e ach.Entry, seq int) ach.Entry {
		e.Trace, e.TransactionCode, e.Amount = fmt.Sprintf("%s%07d", e.ODFI, 9_000_000+seq), e.TransactionCode+1, 0
		return e
	}
	known, unknown := prenote(old[0], 1), prenote(fresh[0], 2)
	f := crashFiles{day1: c.achFile("day1.ach", ach.DefaultHeader(created), append(slices.Clone(old), known))}

	// The re-upload interleaves new entries with ones the ledger has, so
	// that every chunk both posts and audits. Its first chunk also holds an
	// in-file duplicate, both prenotes and a restated amount (a conflict).
	restated := old[5]
	restated.Amount++
	re := []ach.Entry{fresh[0], old[0], fresh[1], fresh[1], known, unknown, restated}
	for i := 2; i < len(fresh) || i < len(old); i++ {
		if i < len(fresh) {
			re = append(re, fresh[i])
		}
		if i < len(old) && i != 5 {
			re = append(re, old[i])
		}
	}
	h := ach.DefaultHeader(created.Add(3 * time.Hour))
	h.IDModifier, h.FirstBatch = "B", 11
	f.reupload, f.reuploadRecords = c.achFile("day1-corrected.ach", h, re), len(re)

	// Returns: one sent earlier and sent again (in the first chunk, so that
	// the first chunk both posts and audits), a dishonor of it, an in-file
	// duplicate across chunks, an orphan, and returns of entries that only
	// the re-upload brought.
	earlier := ach.ReturnOf(old[1], "R01", 1)
	stranger := old[2]
	stranger.CompanyID = "5555555555"
	f.returns1 = c.returnFile("returns1.ach", earlier)
	rs := []ach.Return{
		ach.ReturnOf(old[0], "R01", 2), earlier, ach.ReturnOf(old[3], "R03", 3),
		ach.DishonorOf(earlier, "R69", 4), ach.ReturnOf(old[0], "R01", 2), ach.ReturnOf(stranger, "R01", 5),
		ach.ReturnOf(fresh[5], "R01", 6), ach.ReturnOf(fresh[6], "R02", 7),
	}
	f.returns2, f.returns2Records = c.returnFile("returns2.ach", rs...), len(rs)
	return f
}

func newCrashFixture(c *cli) crashFixture {
	c.t.Helper()
	f := newCrashFiles(c)
	d, err := demo.Write(filepath.Join(c.dir, "demo"))
	if err != nil {
		c.t.Fatal(err)
	}
	ingest := func(file string) []string { return []string{"-o", "json", "ingest", file} }
	statement := func(file string) []string {
		return []string{"-o", "json", "statement", "import", "--source", "ach", "--format", "ach", file}
	}
	bai2Import := []string{"-o", "json", "statement", "import", "--source", "ach", d.Statement}
	reconcile := []string{"reconcile", "--source", "ach", "--from", d.From, "--to", d.To}
	return crashFixture{
		reupload: crashScenario{name: "corrected re-upload", kind: "ingest", setup: [][]string{ingest(f.day1)},
			target: fixed("-o", "json", "ingest", "--chunk-size", fmt.Sprint(crashChunk), f.reupload),
			chunks: ceilDiv(f.reuploadRecords, crashChunk), verdicts: []string{"duplicate", "conflict", "in_file_duplicate"}},
		returns: crashScenario{name: "returns", kind: "ingest",
			setup:  [][]string{ingest(f.day1), ingest(f.reupload), ingest(f.returns1)},
			target: fixed("-o", "json", "ingest", "--chunk-size", "2", f.returns2),
			chunks: ceilDiv(f.returns2Records, 2), verdicts: []string{"duplicate", "in_file_duplicate", "orphan_return"}},
		statement: crashScenario{name: "ACH statement", kind: "statement", setup: [][]string{ingest(f.day1), statement(f.day1)},
			target: fixed(statement(f.reupload)...), chunks: 1, verdicts: []string{"duplicate", "conflict"}},
		bai2: crashScenario{name: "BAI2 statement", kind: "statement", setup: [][]string{ingest(d.Day1)},
			target: fixed(bai2Import...), chunks: 1},
		// The demo statement leaves three corrections, each under the
		// four-eyes threshold: one approval posts each.
		approve: crashScenario{name: "approvals", kind: "approve",
			setup: [][]string{ingest(d.Day1), ingest(d.Returns), bai2Import, reconcile,
				{"config", "set", "corrections.four_eyes_above.USD", "1000"}},
			target: approveAll, chunks: 3},
	}
}

// approveAll approves every proposed correction, in id order, in one
// command, as an approver login (the same login in every database of the
// test, so that the clean run and the crashed one record the same).
func approveAll(c *cli) []string {
	c.t.Helper()
	ids := strings.Fields(strings.ReplaceAll(c.rows(
		`SELECT id FROM corrections WHERE tenant_id = $1 AND status = 'proposed' ORDER BY id`, c.tenant), "\n", " "))
	if len(ids) != 3 {
		c.t.Fatalf("the approval scenario proposes %d corrections, want 3", len(ids))
	}
	return append([]string{"--database-url", loginURL(c, "approver", "alice"), "corrections", "approve",
		"--operator", "alice", "--reason", "matches the bank"}, ids...)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// crashPlan says, for one named failpoint, which scenarios reach it and at
// which of its hits to kill the process.
type crashPlan struct {
	scenarios []crashScenario
	hits      func(s crashScenario) []int
}

// crashPlans has a plan for every failpoint the tests know how to reach.
// A point in failpoint.All without a plan fails the test: a new point must
// come with a scenario that crashes there.
func crashPlans(f crashFixture) map[string]crashPlan {
	ingests := []crashScenario{f.reupload, f.returns}
	statements := []crashScenario{f.statement, f.bai2}
	perChunk := func(s crashScenario) []int { return []int{1, 2, s.chunks} }
	betweenChunks := func(s crashScenario) []int { return []int{1, 2, s.chunks - 1} }
	once := func(crashScenario) []int { return []int{1} }
	return map[string]crashPlan{
		failpoint.IngestStaged:         {ingests, perChunk},
		failpoint.IngestInserted:       {ingests, perChunk},
		failpoint.IngestChunkCommitted: {ingests, betweenChunks},
		failpoint.IngestCommitted:      {ingests, once},
		failpoint.StatementImported:    {statements, once},
		failpoint.ApproveRecorded:      {[]crashScenario{f.approve}, perChunk},
	}
}

// cleanRun is what a scenario leaves when nothing crashes.
type cleanRun struct {
	snapshot string
	code     int
	summary  string // the target's JSON summary, without run ids
}

// runScenario runs the setup and then the target, and returns the target's
// result.
func (c *cli) runScenario(s crashScenario) result {
	c.t.Helper()
	for _, args := range s.setup {
		if r := c.exec(args...); r.code != 0 && r.code != 3 {
			c.t.Fatalf("setup of %s:\n%v", s.name, r)
		}
	}
	r := c.exec(s.target(c)...)
	if r.code != 0 && r.code != 3 {
		c.t.Fatalf("%s:\n%v", s.name, r)
	}
	return r
}

// cleanRunOf runs scenario s in c's tenant and records what it leaves.
func cleanRunOf(c *cli, s crashScenario) cleanRun {
	c.t.Helper()
	r := c.runScenario(s)
	for _, v := range s.verdicts {
		if c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = $2`, c.tenant, v) == 0 {
			c.t.Fatalf("scenario %s leaves no %s in the audit trail: a crash would have nothing of it to lose", s.name, v)
		}
	}
	want := cleanRun{snapshot: c.fullSnapshot(), code: r.code}
	if s.kind != "approve" {
		want.summary = summaryWithoutRunIDs(c.t, r)
	}
	return want
}

// summaryWithoutRunIDs is a command's JSON summary without run ids and
// resume marks, which differ between a clean and a resumed run.
func summaryWithoutRunIDs(t *testing.T, r result) string {
	t.Helper()
	var sums []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &sums); err != nil {
		t.Fatalf("the summary is not JSON: %v\n%v", err, r)
	}
	for _, s := range sums {
		delete(s, "run_id")
		delete(s, "resumed")
	}
	b, err := json.Marshal(sums)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
