package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

type correctionJSON struct {
	ID         int64  `json:"id"`
	Key        string `json:"key"`
	PostingKey string `json:"posting_key"`
	Class      string `json:"class"`
	Status     string `json:"status"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	Reference  string `json:"reference"`
}

func (c *cli) corrections(args ...string) []correctionJSON {
	c.t.Helper()
	r := c.must(0, append([]string{"-o", "json", "corrections", "list"}, args...)...)
	var out []correctionJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		c.t.Fatalf("corrections list: %v\n%v", err, r)
	}
	return out
}

func byClass(cs []correctionJSON, class string) correctionJSON {
	for _, c := range cs {
		if c.Class == class {
			return c
		}
	}
	return correctionJSON{}
}

// approve approves correction id as operator, through operator's own
// approver login (approverCLI): an approval is the login's, and the
// harness's own connection is the owner's, which never approves.
func (c *cli) approve(want int, id int64, operator string) result {
	c.t.Helper()
	return approverCLI(c, operator).must(want, "corrections", "approve", fmt.Sprint(id), "--operator", operator,
		"--reason", "checked with the bank")
}

func TestCorrectionsPostOnceWithFourEyesAndCloseTheirBreaks(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	c.reconcile(3, from, to)
	cs := c.corrections("--status", "proposed")
	mismatch, missing, fee := byClass(cs, "amount_mismatch"), byClass(cs, "missing_in_ledger"), byClass(cs, "unbooked_fee")
	if mismatch.ID == 0 || missing.ID == 0 || fee.ID == 0 || len(cs) != 3 {
		t.Fatalf("proposed corrections: %+v", cs)
	}
	if missing.PostingKey != "csv:ach:EXTRA1" || !strings.HasSuffix(mismatch.Key, ":correction:amount_mismatch") {
		t.Fatalf("derived keys: %+v %+v", missing, mismatch)
	}
	if mismatch.Amount != 50 {
		t.Fatalf("the amount mismatch correction moves %d, want 50", mismatch.Amount)
	}
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1000")

	// One operator approves a correction under the threshold: it posts once,
	// with kind correction; approving again posts nothing more.
	r := c.approve(0, mismatch.ID, "alice")
	if !strings.Contains(r.stdout, "posted") {
		t.Fatalf("approve:\n%v", r)
	}
	c.approve(0, mismatch.ID, "alice")
	c.approve(0, mismatch.ID, "bob")
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2 AND kind = 'correction'`,
		c.tenant, mismatch.Key); n != 1 {
		t.Fatalf("%d correction postings for %s, want 1", n, mismatch.Key)
	}

	// Concurrent approvals from several terminals, by several logins, post
	// once.
	var approvals []*proc
	for i := range 4 {
		op := fmt.Sprintf("op%d", i)
		approvals = append(approvals, approverCLI(c, op).start("corrections", "approve", fmt.Sprint(fee.ID), "--operator", op, "--reason", "fee confirmed"))
	}
	for i, p := range approvals {
		if r, _ := p.wait(t); r.code != 0 {
			t.Errorf("concurrent approval %d:\n%v", i, r)
		}
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, fee.Key); n != 1 {
		t.Fatalf("%d postings for %s after concurrent approvals, want 1", n, fee.Key)
	}
	// Corrections of the ledger's own postings book against adjustments:<source>.
	for _, k := range []correctionJSON{mismatch, fee} {
		if n := c.count(`
SELECT count(*) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
 WHERE p.tenant_id = $1 AND p.posting_key = $2 AND l.account = 'adjustments:ach' AND l.amount_minor = $3`,
			c.tenant, k.Key, k.Amount); n != 1 {
			t.Fatalf("%s has %d legs of %d on adjustments:ach, want 1", k.Key, n, k.Amount)
		}
	}

	// Above the threshold two different operators are needed, and the same
	// operator twice is refused. No flag can lower the threshold.
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1")
	c.approve(0, missing.ID, "alice")
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, missing.PostingKey); n != 0 {
		t.Fatal("one approval posted a correction above the four-eyes threshold")
	}
	r = c.approve(1, missing.ID, "alice")
	if !strings.Contains(r.stderr, "different operator") {
		t.Fatalf("the same operator twice:\n%v", r)
	}
	if r := approverCLI(c, "alice").run("corrections", "approve", fmt.Sprint(missing.ID), "--operator", "alice", "--reason", "x", "--four-eyes-above-minor", "0"); r.code != 2 {
		t.Fatalf("a flag overriding the threshold was accepted:\n%v", r)
	}
	c.approve(0, missing.ID, "bob")
	var kind, suspense string
	if err := c.pool.QueryRow(context.Background(), `
SELECT p.kind, l.account FROM postings p JOIN legs l ON l.tenant_id = p.tenant_id AND l.posting_id = p.id AND l.leg_no = 1
 WHERE p.tenant_id = $1 AND p.posting_key = $2`, c.tenant, missing.PostingKey).Scan(&kind, &suspense); err != nil {
		t.Fatal(err)
	}
	if kind != "correction" || suspense != "suspense:ach" {
		t.Fatalf("missing_in_ledger correction posted as %s against %s, want correction against suspense:ach", kind, suspense)
	}
	var decisions, logins int64
	if err := c.pool.QueryRow(context.Background(), `
SELECT count(*), count(DISTINCT login) FROM correction_decisions WHERE tenant_id = $1 AND correction_id = $2`,
		c.tenant, missing.ID).Scan(&decisions, &logins); err != nil || decisions != 2 || logins != 2 {
		t.Fatalf("decisions %d by %d logins, %v: want two recorded with two logins", decisions, logins, err)
	}

	// Re-running the reconciliation shows the three breaks resolved by their
	// corrections, and the totals still bridge.
	rep := c.reconcile(3, from, to)
	corrected := 0
	for _, d := range rep.Discrepancies {
		switch d.Class {
		case "corrected":
			corrected++
		case "amount_mismatch", "missing_in_ledger", "unbooked_fee":
			t.Errorf("break still open after its correction posted: %s %s", d.Class, d.Reference)
		}
	}
	if corrected != 3 {
		t.Fatalf("%d items resolved by correction, want 3", corrected)
	}
	for _, b := range rep.Bridge {
		if !b.Unexplained.IsZero() {
			t.Fatalf("%s: unexplained %s after corrections", b.Currency, b.Unexplained)
		}
	}
	if n := len(c.corrections()); n != 3 {
		t.Fatalf("re-reconciling proposed new corrections: %d in all", n)
	}
	var look struct {
		Related []struct {
			Key  string `json:"key"`
			Kind string `json:"kind"`
		} `json:"related"`
		Reconciliation struct {
			Discrepancies []struct {
				Class string `json:"class"`
			} `json:"discrepancies"`
			Corrections []struct {
				Status string `json:"status"`
			} `json:"corrections"`
		} `json:"reconciliation"`
	}
	postingKey := strings.TrimSuffix(mismatch.Key, ":correction:amount_mismatch")
	if err := json.Unmarshal([]byte(c.must(0, "-o", "json", "lookup", postingKey).stdout), &look); err != nil {
		t.Fatal(err)
	}
	rs := look.Reconciliation
	if len(look.Related) != 1 || look.Related[0].Kind != "correction" || len(rs.Discrepancies) != 1 ||
		rs.Discrepancies[0].Class != "corrected" || len(rs.Corrections) != 1 || rs.Corrections[0].Status != "posted" {
		t.Fatalf("lookup does not show the correction and the closed break: %+v", look)
	}
	by := c.must(0, "balance", "--by-kind", "--account", "suspense:ach").stdout
	if !strings.Contains(by, "correction") {
		t.Fatalf("balance --by-kind does not show the correction:\n%s", by)
	}
	c.must(0, "ledger", "verify")
}

func TestRejectionIsFinalAndStaleCorrectionsAreRefused(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	c.reconcile(3, from, to)
	cs := c.corrections()
	fee, missing := byClass(cs, "unbooked_fee"), byClass(cs, "missing_in_ledger")

	if r := c.must(1, "corrections", "reject", fmt.Sprint(fee.ID), "--operator", "root", "--reason", "x"); !strings.Contains(r.stderr, "owner") {
		t.Fatalf("the owner rejected a correction:\n%v", r)
	}
	approverCLI(c, "alice").must(0, "corrections", "reject", fmt.Sprint(fee.ID), "--operator", "alice", "--reason", "the bank refunds it")
	if r := c.approve(1, fee.ID, "bob"); !strings.Contains(r.stderr, "rejected") {
		t.Fatalf("approving a rejected correction:\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, fee.Key); n != 0 {
		t.Fatal("a rejected correction posted")
	}
	c.reconcile(3, from, to)
	if got := byClass(c.corrections(), "unbooked_fee"); got.Status != "rejected" {
		t.Fatalf("the rejected correction came back as %q", got.Status)
	}

	// The money the statement showed arrives through ingest before anyone
	// approves: the correction is refused, with why.
	arrived := liveOnly(entries(22, 5))[0]
	arrived.Trace, arrived.Amount, arrived.TransactionCode = "999999990000001", 12_345, 22
	arrived.ODFI = "99999999"
	c.ingest(0, c.achFile("arrived.ach", ach.DefaultHeader(created), []ach.Entry{arrived}))
	r := c.approve(1, missing.ID, "alice")
	if !strings.Contains(r.stderr, "no longer") {
		t.Fatalf("approving a correction whose money arrived:\n%v", r)
	}
}

// The money of a missing_in_ledger correction must not move twice when the
// original arrives later: the settlement account is touched once, and a
// reclassification moves it from suspense to the customer.
func TestLateOriginalAfterCorrectionDoesNotMoveMoneyTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		statement func(c *cli, es []ach.Entry) []string // import args
	}{
		{"statement keyed like the ledger (an ACH file)", func(c *cli, es []ach.Entry) []string {
			return []string{"--format", "ach", c.achFile("bank-copy.ach", ach.DefaultHeader(created), es)}
		}},
		{"statement keyed by the bank (matched on reference)", func(c *cli, es []ach.Entry) []string {
			var lines []stmtLine
			for _, e := range es {
				lines = append(lines, lineOf(e))
			}
			return []string{"--format", "csv", "--map", c.file("m.toml", []byte(statementMapping)), c.statement("bank.csv", lines)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			es := liveOnly(entries(23, 20))
			late := es[6]
			without := append(append([]ach.Entry{}, es[:6]...), es[7:]...)
			c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), without))
			c.must(0, append([]string{"statement", "import", "--source", "ach"}, tc.statement(c, es)...)...)
			day := late.EffectiveDate.Format("2006-01-02")
			c.reconcile(3, day, day)
			missing := byClass(c.corrections(), "missing_in_ledger")
			if missing.ID == 0 {
				t.Fatal("no missing_in_ledger correction proposed")
			}
			c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1000000")
			c.approve(0, missing.ID, "alice")
			settlement := c.balance("settlement:ach")

			h := ach.DefaultHeader(created.Add(6 * 3600e9))
			h.IDModifier = "B"
			full := c.achFile("day1-full.ach", h, es)
			s := c.ingest(0, full)[0]
			if s.Settled != 1 || s.Posted != 0 {
				t.Fatalf("late original: %+v, want it settled by the correction", s)
			}
			if got := c.balance("settlement:ach"); got != settlement {
				t.Fatalf("the settlement account moved again: %d, was %d", got, settlement)
			}
			if got := c.balance("suspense:ach"); got != 0 {
				t.Fatalf("suspense holds %d after the reclassification, want 0", got)
			}
			var customer string
			if err := c.pool.QueryRow(context.Background(), `SELECT account FROM postings WHERE tenant_id = $1 AND posting_key = $2`,
				c.tenant, late.Key()+":reclass").Scan(&customer); err != nil {
				t.Fatalf("no reclassification under %s:reclass: %v", late.Key(), err)
			}
			if got := c.balance(customer); got != signed(late) {
				t.Fatalf("the customer account holds %d, want %d", got, signed(late))
			}
			if s := c.ingest(0, full)[0]; s.Posted != 0 || s.Settled != 0 || s.Duplicates != int64(len(es)) {
				t.Fatalf("the file again: %+v", s)
			}
			changed := late
			changed.Amount++
			h.IDModifier = "C"
			if s := c.ingest(3, c.achFile("changed.ach", h, []ach.Entry{changed}))[0]; s.Conflicts != 1 {
				t.Fatalf("a late original with another amount: %+v, want a conflict", s)
			}
			flipped := late // a credit as a debit, or the other way round
			if flipped.TransactionCode%10 == 2 {
				flipped.TransactionCode += 5
			} else {
				flipped.TransactionCode -= 5
			}
			h.IDModifier = "D"
			if s := c.ingest(3, c.achFile("flipped.ach", h, []ach.Entry{flipped}))[0]; s.Conflicts != 1 {
				t.Fatalf("a late original in the other direction: %+v, want a conflict", s)
			}
			if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND own_key = $2 AND verdict = 'conflict'
			                   AND 'direction' = ANY(differing_fields)`, c.tenant, late.Key()); n == 0 {
				t.Fatal("no conflict names the direction")
			}
			if got := c.balance("settlement:ach"); got != settlement {
				t.Fatalf("a conflicting late original moved the settlement account: %d, was %d", got, settlement)
			}
			rep := c.reconcile(-1, day, day)
			for _, d := range rep.Discrepancies {
				if d.Reference == late.Trace && d.Class != "corrected" {
					t.Fatalf("after the late arrival the item is %s, want corrected", d.Class)
				}
			}
			c.must(0, "ledger", "verify")
		})
	}
}

// The roles are enforced by the database itself, not by the command.
func TestRolesAreEnforcedByTheDatabase(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	ctx := context.Background()
	suffix := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))[:12] + fmt.Sprint(len(p.live))
	roleURL := func(role string) string {
		name := fmt.Sprintf("t_%s_%s", role, suffix)
		if _, err := c.pool.Exec(ctx, fmt.Sprintf(`DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN IN ROLE clearing_%s`, name, name, role)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+name) })
		u, err := pgtest.AsUser(c.url, name)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	ingestURL, approverURL, readerURL := roleURL("ingest"), roleURL("approver"), roleURL("reader")
	as := func(url string) *cli {
		cc := *c
		cc.url = url
		return &cc
	}
	ing, appr, rd := as(ingestURL), as(approverURL), as(readerURL)

	p.importInto(ing)
	from, to := p.period()
	if r := ing.run("reconcile", "--source", "ach", "--from", from, "--to", to); r.code != 1 ||
		c.count(`SELECT count(*) FROM reconciliations WHERE tenant_id = $1`, c.tenant) != 0 {
		t.Fatalf("clearing_ingest reconciled:\n%v", r)
	}
	appr.reconcile(3, from, to)
	fee := byClass(c.corrections(), "unbooked_fee")
	if r := ing.run("corrections", "approve", fmt.Sprint(fee.ID), "--operator", "mallory", "--reason", "x"); r.code != 1 ||
		!strings.Contains(r.stderr, "may not") {
		t.Fatalf("clearing_ingest approved a correction:\n%v", r)
	}
	moreEntries := liveOnly(entries(24, 3))
	for i := range moreEntries { // keys of their own, not the planted file's
		moreEntries[i].Trace = fmt.Sprintf("12104288%07d", 9000000+i)
	}
	more := c.achFile("more.ach", ach.DefaultHeader(created), moreEntries)
	before := c.postings()
	if r := rd.run("ingest", more); r.code != 1 || c.postings() != before {
		t.Fatalf("clearing_reader ingested:\n%v", r)
	}
	// The nightly job's role posts.
	if s := ing.ingest(0, more)[0]; s.Posted != int64(len(moreEntries)) || c.postings() != before+s.Posted {
		t.Fatalf("clearing_ingest could not ingest: %+v", s)
	}
	appr.approve(0, fee.ID, "alice")
	if r := appr.run("config", "set", "corrections.four_eyes_above.USD", "1000000"); r.code != 1 || !strings.Contains(r.stderr, "admin") {
		t.Fatalf("clearing_approver changed a setting:\n%v", r)
	}
	rd.must(0, "lookup", p.live[0].Key())
	rd.must(0, "balance")

	// Straight to the database: every write by the reader, and decisions
	// by the ingest role, are refused with insufficient_privilege.
	for url, stmts := range map[string][]string{
		readerURL: {
			`INSERT INTO runs (tenant_id, kind, format, source) VALUES ('default', 'ingest', 'ach', 'x')`,
			`UPDATE corrections SET status = 'posted'`,
			`INSERT INTO config (tenant_id, key, value) VALUES ('default', 'k', 'v')`,
			`INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason) VALUES ('default', 1, 'approve', 'x', 'y')`,
		},
		ingestURL: {
			`INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason) VALUES ('default', 1, 'approve', 'x', 'y')`,
			`UPDATE corrections SET status = 'posted'`,
			`INSERT INTO config (tenant_id, key, value) VALUES ('default', 'k', 'v')`,
		},
	} {
		conn := as(url)
		pool := mustPool(t, conn.url)
		for _, stmt := range stmts {
			if _, err := pool.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "permission denied") {
				t.Errorf("%s as %s: %v, want permission denied", stmt, url, err)
			}
		}
	}
}
