package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/internal/corpus"
)

// The IPM story of ../shared/corpus/ipm, in the order its README gives: one
// lifecycle per ARN, every step posted once whatever the blocking, encoding,
// file id or message numbers of the file it came in, and the two broken
// files refused whole.
func TestIPMCorpusStoryPostsEachStepOnce(t *testing.T) {
	t.Parallel()
	dir := corpus.Dir(t, "ipm")
	c := newCLI(t)
	file := func(name string) string { return filepath.Join(dir, name) }
	type want struct{ posted, duplicates, conflicts, quarantined int64 }
	step := func(name string, exit int, w want) {
		t.Helper()
		s := c.ingest(exit, file(name))[0]
		if s.Format != "ipm" || s.Status != "done" {
			t.Fatalf("%s: format %q, status %q", name, s.Format, s.Status)
		}
		if got := (want{s.Posted, s.Duplicates, s.Conflicts, s.Quarantined}); got != w {
			t.Fatalf("%s: %+v, want %+v", name, got, w)
		}
	}
	step("day1-blocked-ebcdic.ipm", 0, want{posted: 40})
	step("day1-resent-unblocked.ipm", 0, want{duplicates: 40})
	step("day1-corrected.ipm", 0, want{posted: 10, duplicates: 25})
	step("day1-restated.ipm", 3, want{conflicts: 1})
	step("day2-chargebacks.ipm", 3, want{posted: 5, quarantined: 1})
	step("day2-reversals.ipm", 0, want{posted: 2})
	step("day2-fees.ipm", 0, want{posted: 4})
	step("day3-second-presentments.ipm", 0, want{posted: 3})

	// (A second application of the same file audits the conflict again.)
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'conflict'
	                    AND own_key = 'ipm:05454546304001603000087:1240:200' AND 'amount' = ANY (differing_fields)`, c.tenant); n == 0 {
		t.Fatal("no conflict naming the amount of the restated presentment")
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'conflict'
	                    AND own_key <> 'ipm:05454546304001603000087:1240:200'`, c.tenant); n != 0 {
		t.Fatalf("%d conflicts other than the restated presentment's", n)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'orphan_return'
	                    AND own_key LIKE 'ipm:05454546304001603990014:%'`, c.tenant); n != 1 {
		t.Fatalf("%d orphan chargebacks held, want 1", n)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key LIKE 'ipm:05454546304001603990014:%'`, c.tenant); n != 0 {
		t.Fatalf("the orphan chargeback posted %d times", n)
	}

	for name, says := range map[string][]string{
		"bad-trailer-count.ipm": {"PDS0306"},
		"truncated.ipm":         {"9625"},
	} {
		before := c.postings()
		r := c.must(1, "ingest", file(name))
		for _, s := range says {
			if !strings.Contains(r.stderr, s) {
				t.Fatalf("%s: the refusal does not name %s\n%v", name, s, r)
			}
		}
		if c.postings() != before || c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND file_name = $2 AND status = 'rejected'`, c.tenant, name) != 1 {
			t.Fatalf("%s: refused, but wrote postings or no rejected run", name)
		}
	}

	// 50 presentments and 4 fee collections; 5 chargebacks and 3 second
	// presentments as linked steps; 2 reversals.
	kinds := map[string]int64{"clearing": 54, "return": 8, "reversal": 2}
	for kind, n := range kinds {
		if got := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND source = 'ipm' AND kind = $2`, c.tenant, kind); got != n {
			t.Errorf("%d postings of kind %s, want %d", got, kind, n)
		}
	}
	if got := c.postings(); got != 64 {
		t.Fatalf("%d postings, want 64", got)
	}
	// Fees move money between members: they are booked against the fee
	// account, never a card's.
	if n := c.count(`SELECT count(*) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
	                  WHERE l.tenant_id = $1 AND p.posting_key LIKE '%:1740:%' AND l.account = 'fees:ipm'`, c.tenant); n != 4 {
		t.Fatalf("%d fee legs on fees:ipm, want 4", n)
	}
	// A full chargeback and its full second presentment leave the card
	// where the presentment put it.
	card := c.count(`SELECT count(DISTINCT l.account) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
	                  WHERE l.tenant_id = $1 AND p.posting_key LIKE 'ipm:05454546304001603000012:%' AND l.account LIKE 'cust:%'`, c.tenant)
	if card != 1 {
		t.Fatalf("the lifecycle of one ARN touches %d card accounts, want 1", card)
	}
	// Every card is an HMAC, never its number.
	if n := c.count(`SELECT count(*) FROM legs WHERE tenant_id = $1
	                    AND account !~ '^(cust:[0-9a-f]{32}|settlement:ipm|fees:ipm)$'`, c.tenant); n != 0 {
		t.Fatalf("%d legs on an account that is neither a hashed card, the settlement account nor the fee account", n)
	}
	c.must(0, "ledger", "verify")

	// The scheme's settlement positions: one total per business day and
	// reconciliation currency, JPY purchases settled in USD. Each day and
	// currency settles its items but day 2 in USD, which counts the orphan
	// chargeback the ledger held: the breaks are in USD only, and nothing
	// is unexplained.
	imp := c.must(0, "-o", "json", "statement", "import", "--source", "ipm", file("day2-settlement-positions.ipm"))
	if !strings.Contains(imp.stdout, `"added": 4`) {
		t.Fatalf("want 4 settlement positions imported\n%v", imp)
	}
	c.must(3, "reconcile", "--source", "ipm", "--from", "2026-11-02", "--to", "2026-11-03")
	run := c.count(`SELECT max(id) FROM reconciliations WHERE tenant_id = $1`, c.tenant)
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND is_break
	                    AND coalesce(ledger_currency, statement_currency) <> 'USD'`, c.tenant, run); n != 0 {
		t.Fatalf("%d breaks outside USD", n)
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'settlement_total_mismatch'
	                    AND statement_currency = 'USD' AND ledger_net - statement_amount = -13322`, c.tenant, run); n != 1 {
		t.Fatalf("want the day-2 USD position to differ by the orphan chargeback, 133.22 USD")
	}
	// The position's items are held by its one break, not breaks of their own.
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND is_break`, c.tenant, run); n != 1 {
		t.Fatalf("%d breaks, want 1: the day-2 USD position", n)
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'settlement_member'
	                    AND ledger_currency = 'USD' AND ledger_date = '2026-11-03'`, c.tenant, run); n == 0 {
		t.Fatal("the day-2 USD items are not held by their position's break")
	}
	if n := c.count(`SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND run_id = $2 AND class = 'settled'
	                    AND ledger_currency = 'JPY'`, c.tenant, run); n == 0 {
		t.Fatalf("no JPY item settled by a USD position")
	}
	if n := unexplained(c, run); n != 0 {
		t.Fatalf("%d currencies leave an unexplained remainder", n)
	}

	// The ARN alone finds the whole lifecycle.
	r := c.must(0, "lookup", "05454546304001603000012")
	for _, k := range []string{":1240:200 ", ":1240:200:chargeback ", ":1240:200:chargeback:second_presentment "} {
		if !strings.Contains(r.stdout, "ipm:05454546304001603000012"+k) {
			t.Fatalf("lookup of the ARN does not show %s\n%v", k, r)
		}
	}
}
