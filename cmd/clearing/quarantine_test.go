package main

import (
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
)

// heldState is the state of the held records of key: open, released or
// dismissed, as the database holds it.
func (c *cli) heldState(key string) string {
	c.t.Helper()
	var state string
	err := c.pool.QueryRow(c.t.Context(), `
SELECT coalesce(string_agg(coalesce(d.decision, 'open'), ',' ORDER BY q.digest), '')
  FROM quarantine q
  LEFT JOIN quarantine_decisions d ON d.tenant_id = q.tenant_id AND d.record_key = q.record_key AND d.digest = q.digest
 WHERE q.tenant_id = $1 AND q.record_key = $2`, c.tenant, key).Scan(&state)
	if err != nil {
		c.t.Fatal(err)
	}
	return state
}

// An orphan return is held once; its file ingested again says it is
// already quarantined, posts nothing and still needs a person; the file
// with its original posts the original and the return once, in that
// ingest, and releases it; its own file again is then a duplicate.
func TestQuarantinedOrphanReturnIsReleasedByItsOriginal(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(71, 6))
	for i := range es {
		es[i].CompanyID = "7171717171"
	}
	orig := es[2]
	ret := ach.ReturnOf(orig, "R01", 1)
	orphan := c.returnFile("orphan.ach", ret)

	first := c.ingest(3, orphan)[0]
	if first.Quarantined != 1 || first.Posted != 0 {
		t.Fatalf("orphan return: %+v", first)
	}
	if got := c.heldState(ret.Key()); got != "open" {
		t.Fatalf("held state of %s = %q, want open", ret.Key(), got)
	}
	if n := c.count(`SELECT count(*) FROM quarantine WHERE tenant_id = $1 AND record_key = $2 AND first_run_id = $3 AND verdict = 'orphan_return'`,
		c.tenant, ret.Key(), first.RunID); n != 1 {
		t.Fatalf("%d quarantine rows held by run %d, want 1", n, first.RunID)
	}

	postings := c.postings()
	r := c.must(3, "ingest", orphan)
	if !strings.Contains(r.stdout, "already quarantined") || !strings.Contains(r.stdout, "1 (run "+itoa(first.RunID)+")") ||
		!strings.Contains(r.stderr, "already_quarantined=1") {
		t.Fatalf("re-ingest of the orphan does not say it is already quarantined by run %d:\n%v", first.RunID, r)
	}
	again := c.ingest(3, orphan)[0]
	if again.AlreadyQuarantined != 1 || again.Quarantined != 0 || again.Posted != 0 ||
		len(again.HeldBy) != 1 || again.HeldBy[0] != first.RunID {
		t.Fatalf("orphan again: %+v", again)
	}
	if c.postings() != postings {
		t.Fatalf("re-ingesting the orphan posted something")
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'already_quarantined' AND needs_attention`,
		c.tenant, again.RunID); n != 1 {
		t.Fatalf("already_quarantined audit events = %d, want 1", n)
	}
	if n := c.count(`SELECT count(*) FROM quarantine WHERE tenant_id = $1`, c.tenant); n != 1 {
		t.Fatalf("%d held records, want 1: re-ingest held it again", n)
	}

	day := c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))[0]
	if day.Posted != int64(len(es)) || day.Released != 1 {
		t.Fatalf("original's file: %+v", day)
	}
	if n := c.count(`SELECT count(*) FROM postings p JOIN postings o ON o.id = p.refers_to
	                  WHERE p.tenant_id = $1 AND p.posting_key = $2 AND p.kind = 'return' AND o.posting_key = $3`,
		c.tenant, orig.Key()+":return", orig.Key()); n != 1 {
		t.Fatalf("%d return postings referring to the original, want 1", n)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key LIKE '%:return'`, c.tenant); n != 1 {
		t.Fatalf("%d return postings, want 1", n)
	}
	var account string
	if err := c.pool.QueryRow(t.Context(), `SELECT account FROM postings WHERE tenant_id = $1 AND posting_key = $2`,
		c.tenant, orig.Key()).Scan(&account); err != nil {
		t.Fatal(err)
	}
	if b := c.balance(account); b != 0 {
		t.Fatalf("the customer's balance is %d after the original and its return, want 0", b)
	}
	if n := c.count(`SELECT count(*) FROM quarantine_decisions WHERE tenant_id = $1 AND record_key = $2
	                  AND decision = 'released' AND run_id = $3 AND posting_id IS NOT NULL`, c.tenant, ret.Key(), day.RunID); n != 1 {
		t.Fatalf("the held return is not released by run %d: %s", day.RunID, c.heldState(ret.Key()))
	}

	// The orphan's own file again: a duplicate of the posted return.
	before := c.snapshot("runs", "audit")
	if s := c.ingest(0, orphan)[0]; s.Duplicates != 1 || s.Posted != 0 || s.AlreadyQuarantined != 0 {
		t.Fatalf("orphan after its release: %+v", s)
	}
	if after := c.snapshot("runs", "audit"); after != before {
		t.Fatalf("the orphan's file after its release changed the ledger:\n%s", diffLines(before, after))
	}
	c.must(0, "ledger", "verify")
}
