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
	// Its audit event keeps what arrived, for lookup to show.
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'orphan_return'
	                  AND reference IS NOT NULL AND link_reference = $3 AND amount_minor = $4`,
		c.tenant, first.RunID, orig.Trace, orig.Amount); n != 1 {
		t.Fatalf("%d orphan_return audit events with the return's reference, link and amount, want 1", n)
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
	if n := c.count(`SELECT count(*) FROM postings p JOIN postings o ON o.tenant_id = p.tenant_id AND o.id = p.refers_to
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

// A held orphan return whose original never comes is posted against
// suspense through the corrections path: proposed by one approver, posted
// by the approvals four eyes asks for, once, closing the held record. The
// orphan's file again, and then with its original in the ledger, posts the
// return no second time.
func TestHeldReturnIsPostedAgainstSuspenseWithFourEyes(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(73, 6))
	for i := range es {
		es[i].CompanyID = "7373737373"
	}
	orig := es[1]
	ret := ach.ReturnOf(orig, "R01", 1)
	orphan := c.returnFile("orphan.ach", ret)
	c.ingest(3, orphan)
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "0") // every correction needs two
	alice, bob := approverCLI(c, "alice"), approverCLI(c, "bob")

	// A reader may not propose; an approver proposes, and proposing again
	// proposes nothing new.
	reader := *c
	reader.url = loginURL(c, "reader", "rita")
	reader.must(1, "quarantine", "suspense", ret.Key(), "--reason", "no original")
	r := alice.must(0, "-o", "json", "quarantine", "suspense", ret.Key(), "--reason", "the RDFI confirmed the original was never ours")
	var ps []struct {
		CorrectionID int64  `json:"correction_id"`
		Outcome      string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &ps); err != nil || len(ps) != 1 || ps[0].Outcome != "proposed" || ps[0].CorrectionID == 0 {
		t.Fatalf("propose: %v\n%v", err, r)
	}
	id := itoa(ps[0].CorrectionID)
	if r := alice.must(0, "quarantine", "suspense", ret.Key(), "--reason", "again"); !strings.Contains(r.stdout, "already_proposed") {
		t.Fatalf("proposing again:\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1 AND class = 'quarantined'`, c.tenant); n != 1 {
		t.Fatalf("%d quarantined corrections, want 1", n)
	}
	if got := c.heldState(ret.Key()); got != "open" {
		t.Fatalf("a proposal resolved the held record: %s", got)
	}

	alice.must(0, "corrections", "approve", id, "--operator", "alice", "--reason", "no original")
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, ret.Key()); n != 0 {
		t.Fatalf("one approval posted the return")
	}
	bob.must(0, "corrections", "approve", id, "--operator", "bob", "--reason", "second approval")
	var kind, account string
	var amount int64
	if err := c.pool.QueryRow(t.Context(), `SELECT kind, account, amount_minor FROM postings WHERE tenant_id = $1 AND posting_key = $2`,
		c.tenant, ret.Key()).Scan(&kind, &account, &amount); err != nil {
		t.Fatalf("the approved return is not posted under its own key: %v", err)
	}
	if kind != "correction" || account != "suspense:ach" || amount != orig.Amount {
		t.Fatalf("posted %s to %s, %d; want a correction to suspense:ach of %d", kind, account, amount, orig.Amount)
	}
	if got := c.heldState(ret.Key()); got != "posted_to_suspense" {
		t.Fatalf("held state after posting: %s", got)
	}
	if n := c.count(`SELECT count(*) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
	                  WHERE p.tenant_id = $1 AND p.posting_key = $2`, c.tenant, ret.Key()); n != 2 {
		t.Fatalf("%d legs, want 2", n)
	}
	if r := c.must(0, "quarantine", "list", "--status", "posted_to_suspense"); !strings.Contains(r.stdout, ret.Key()) {
		t.Fatalf("quarantine list --status posted_to_suspense:\n%v", r)
	}

	// The orphan's file again: settled, nothing posts, nobody is needed.
	postings := c.postings()
	if s := c.ingest(0, orphan)[0]; s.Settled != 1 || s.Posted != 0 || s.AlreadyQuarantined != 0 {
		t.Fatalf("orphan after its suspense posting: %+v", s)
	}
	// Its original arrives, and then the orphan's file once more: the
	// original posts, the return does not post again.
	if s := c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), es))[0]; s.Posted != int64(len(es)) || s.Released != 0 {
		t.Fatalf("the original's file: %+v", s)
	}
	if s := c.ingest(0, orphan)[0]; s.Settled != 1 || s.Posted != 0 {
		t.Fatalf("orphan with its original in the ledger: %+v", s)
	}
	if got, want := c.postings(), postings+int64(len(es)); got != want {
		t.Fatalf("%d postings, want %d: the return posted twice", got, want)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind IN ('return', 'correction')`, c.tenant); n != 1 {
		t.Fatalf("%d return or correction postings, want the one against suspense", n)
	}
	c.must(0, "ledger", "verify")
}

// A held record dismissed after its suspense correction was proposed is
// resolved for good: approving the correction then posts nothing.
func TestSuspenseCorrectionOfADismissedRecordPostsNothing(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(79, 4))
	for i := range es {
		es[i].CompanyID = "7979797979"
	}
	ret := ach.ReturnOf(es[0], "R01", 1)
	c.ingest(3, c.returnFile("orphan.ach", ret))
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1000000")
	alice := approverCLI(c, "alice")
	r := alice.must(0, "-o", "json", "quarantine", "suspense", ret.Key(), "--reason", "no original")
	var ps []struct {
		CorrectionID int64 `json:"correction_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &ps); err != nil || len(ps) != 1 || ps[0].CorrectionID == 0 {
		t.Fatalf("propose: %v\n%v", err, r)
	}
	alice.must(0, "quarantine", "dismiss", ret.Key(), "--reason", "sent to us by mistake")
	postings := c.postings()
	if r := alice.must(1, "corrections", "approve", itoa(ps[0].CorrectionID), "--operator", "alice", "--reason", "no original"); !strings.Contains(r.stdout, "refused") ||
		!strings.Contains(r.stderr, "released or dismissed") {
		t.Fatalf("approving the correction of a dismissed record:\n%v", r)
	}
	if c.postings() != postings || c.heldState(ret.Key()) != "dismissed" {
		t.Fatalf("the correction of a dismissed record posted: %d postings (was %d), held state %s", c.postings(), postings, c.heldState(ret.Key()))
	}
}
