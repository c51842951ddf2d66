package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/ledger"
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

// A dismissal is the database login's, final, and only an approver's: a
// reader, an ingest login and the schema's owner are refused, and no
// clearing role writes the decisions itself. Once dismissed, the orphan's
// file no longer needs a person.
func TestDismissedQuarantineNoLongerNeedsAPerson(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	stranger := liveOnly(entries(72, 5))[0]
	stranger.CompanyID = "7272727272"
	ret := ach.ReturnOf(stranger, "R01", 1)
	orphan := c.returnFile("orphan.ach", ret)
	first := c.ingest(3, orphan)[0]
	if first.Quarantined != 1 {
		t.Fatalf("orphan return: %+v", first)
	}

	var list []ledger.Held
	r := c.must(0, "-o", "json", "quarantine", "list", "--status", "open")
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0].Key != ret.Key() ||
		list[0].Verdict != "orphan_return" || list[0].FirstRunID != first.RunID || list[0].AmountMinor != stranger.Amount {
		t.Fatalf("quarantine list (%v):\n%v", err, r)
	}
	c.must(0, "quarantine", "show", ret.Key())
	c.must(2, "quarantine", "list", "--status", "closed")
	c.must(2, "quarantine", "dismiss", ret.Key())

	reader := *c
	reader.url, _ = c.loginURL("reader", "clearing_reader")
	ing := *c
	ing.url, _ = c.loginURL("ingest", "clearing_ingest")
	for _, who := range []*cli{&reader, &ing, c} {
		if r := who.must(1, "quarantine", "dismiss", ret.Key(), "--reason", "not ours"); !strings.Contains(r.stderr, "may not resolve") &&
			!strings.Contains(r.stderr, "owner of the schema") {
			t.Fatalf("dismissal refused without saying why:\n%v", r)
		}
	}
	op := *c
	var login string
	op.url, login = c.loginURL("op", "clearing_approver")
	pool := mustPool(t, op.url)
	for _, stmt := range []string{
		`INSERT INTO quarantine_decisions (tenant_id, record_key, digest, decision, reason) VALUES ('default', 'k', '\x00', 'dismissed', 'forged')`,
		`UPDATE quarantine SET verdict = 'duplicate'`,
		`DELETE FROM quarantine`,
	} {
		if _, err := pool.Exec(t.Context(), stmt); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s\nas clearing_approver: %v, want permission denied", stmt, err)
		}
	}
	if n := c.count(`SELECT count(*) FROM quarantine_decisions WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Fatalf("%d decisions after refused dismissals, want 0", n)
	}

	// Released by hand while its original is still missing: nothing posts.
	postings := c.postings()
	if r := op.must(3, "-o", "json", "quarantine", "release", ret.Key(), "--reason", "the bank says the original is there"); !strings.Contains(r.stdout, `"still_held"`) {
		t.Fatalf("release without an original:\n%v", r)
	}
	if c.postings() != postings || c.heldState(ret.Key()) != "open" {
		t.Fatalf("a release without an original posted or closed something: %s", c.heldState(ret.Key()))
	}

	if r := op.must(0, "-o", "json", "quarantine", "dismiss", ret.Key(), "--reason", "sent to us by mistake"); !strings.Contains(r.stdout, `"dismissed"`) {
		t.Fatalf("dismiss:\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM quarantine_decisions WHERE tenant_id = $1 AND record_key = $2 AND decision = 'dismissed'
	                  AND login = $3 AND reason = 'sent to us by mistake'`, c.tenant, ret.Key(), login); n != 1 {
		t.Fatalf("the dismissal is not recorded with login %s", login)
	}
	if r := op.must(0, "-o", "json", "quarantine", "dismiss", ret.Key(), "--reason", "again"); !strings.Contains(r.stdout, `"already_dismissed"`) {
		t.Fatalf("dismissing again:\n%v", r)
	}
	if r := op.must(0, "-o", "json", "quarantine", "release", ret.Key(), "--reason", "changed my mind"); !strings.Contains(r.stdout, `"already_dismissed"`) {
		t.Fatalf("releasing a dismissed record:\n%v", r)
	}

	again := c.ingest(0, orphan)[0]
	if again.Dismissed != 1 || again.AlreadyQuarantined != 0 || again.Quarantined != 0 || again.Posted != 0 {
		t.Fatalf("orphan after its dismissal: %+v", again)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'quarantine_dismissed' AND NOT needs_attention`,
		c.tenant, again.RunID); n != 1 {
		t.Fatalf("quarantine_dismissed audit events = %d, want 1", n)
	}
	if c.postings() != postings {
		t.Fatalf("a dismissed orphan posted")
	}
	c.must(0, "ledger", "verify")
}
