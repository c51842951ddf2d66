package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
)

// The promise without exceptions: a payment is posted once, never swallowed
// as a duplicate of another that merely looks like it, and never twice
// because two files raced or one was re-sent with another date.

// moved returns es with every effective date moved by days.
func moved(es []ach.Entry, days int) []ach.Entry {
	out := append([]ach.Entry(nil), es...)
	for i := range out {
		out[i].EffectiveDate = out[i].EffectiveDate.AddDate(0, 0, days)
	}
	return out
}

// period is the first and last effective date of es.
func period(es []ach.Entry) (string, string) {
	from, to := es[0].EffectiveDate, es[0].EffectiveDate
	for _, e := range es {
		if e.EffectiveDate.Before(from) {
			from = e.EffectiveDate
		}
		if e.EffectiveDate.After(to) {
			to = e.EffectiveDate
		}
	}
	return from.Format(time.DateOnly), to.Format(time.DateOnly)
}

// postedKeys counts the postings of the cli's tenant under the keys of es.
func (c *cli) postedKeys(es []ach.Entry) int64 {
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.Key()
	}
	return c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = ANY($2)`, c.tenant, keys)
}

// correctedLedger ingests es but for the one in the middle, imports all of
// es as the bank's statement (an ACH file), reconciles, and approves the
// missing_in_ledger correction that books the one left out.
//
// With bankKeyed the statement is a bank's (a CSV export with keys of its
// own) instead of an ACH file keyed like the ledger.
func correctedLedger(c *cli, es []ach.Entry, bankKeyed bool) (*cli, correctionJSON) {
	c.t.Helper()
	left := len(es) / 2
	without := append(append([]ach.Entry{}, es[:left]...), es[left+1:]...)
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), without))
	statement := []string{"--format", "ach", c.achFile("bank-copy.ach", ach.DefaultHeader(created), es)}
	if bankKeyed {
		var lines []stmtLine
		for _, e := range es {
			lines = append(lines, lineOf(e))
		}
		statement = []string{"--format", "csv", "--map", c.file("m.toml", []byte(statementMapping)), c.statement("bank.csv", lines)}
	}
	c.must(0, append([]string{"statement", "import", "--source", "ach"}, statement...)...)
	from, to := period(es)
	c.reconcile(3, from, to)
	missing := byClass(c.corrections(), "missing_in_ledger")
	if missing.Reference != es[left].Trace || (!bankKeyed && missing.PostingKey != es[left].Key()) {
		c.t.Fatalf("missing_in_ledger correction %+v, want one for %s", missing, es[left].Key())
	}
	// Two operators, so that the amount does not matter.
	c.approve(0, missing.ID, "alice")
	if got := byClass(c.corrections(), "missing_in_ledger"); got.Status != "posted" {
		c.approve(0, missing.ID, "bob")
	}
	if got := byClass(c.corrections(), "missing_in_ledger"); got.Status != "posted" {
		c.t.Fatalf("correction %+v is not posted", got)
	}
	return c, missing
}

// A trace number is reused next week with the same amount: after a
// missing_in_ledger correction settled this week's entry, next week's is
// still a payment of its own, in whichever order the two files arrive.
func TestReusedTraceNumbersAreNotSwallowedByACorrection(t *testing.T) {
	t.Parallel()
	for _, nextWeekFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("next week first %v", nextWeekFirst), func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			week1 := liveOnly(entries(41, 20))
			week2 := moved(week1, 7)
			c, missing := correctedLedger(c, week1, false)
			if got := c.postings(); got != int64(len(week1)) {
				t.Fatalf("%d postings after the approval, want %d", got, len(week1))
			}

			h := ach.DefaultHeader(created.Add(time.Hour))
			h.IDModifier = "B"
			f1 := c.achFile("week1.ach", h, week1)
			h.IDModifier = "C"
			f2 := c.achFile("week2.ach", h, week2)
			order := []string{f1, f2}
			if nextWeekFirst {
				order = []string{f2, f1}
			}
			var settled, posted int64
			for _, f := range order {
				s := c.ingest(0, f)[0]
				settled, posted = settled+s.Settled, posted+s.Posted
				if s.Conflicts != 0 || s.Quarantined != 0 {
					t.Fatalf("%s: %+v, want nothing held", f, s)
				}
			}
			if settled != 1 || posted != int64(len(week2)) {
				t.Fatalf("settled %d and posted %d, want 1 settled (%s) and %d posted", settled, posted, missing.PostingKey, len(week2))
			}
			if got := c.postedKeys(week2); got != int64(len(week2)) {
				t.Fatalf("%d of next week's %d entries posted under their keys", got, len(week2))
			}
			// The settlement account moved once for each of the 40 payments.
			var want int64
			for _, e := range append(append([]ach.Entry{}, week1...), week2...) {
				want -= signed(e)
			}
			if got := c.balance("settlement:ach"); got != want {
				t.Fatalf("settlement:ach holds %d, want %d", got, want)
			}
			for _, e := range week2 {
				if out := c.must(0, "lookup", e.Key()).stdout; strings.Contains(out, "nothing is known") {
					t.Fatalf("lookup %s: %s", e.Key(), out)
				}
			}
			c.must(0, "ledger", "verify")
		})
	}
}

// A file re-sent with another effective date is held whole; a file with
// one recurring payment that matches an earlier one posts; an operator who
// finds a held file is no re-send posts it with --allow-redated.
func TestARedatedResendIsHeldWhole(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(43, 30))
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))
	before := c.postings()
	settlement := c.balance("settlement:ach")

	h := ach.DefaultHeader(created.Add(24 * time.Hour))
	resent := c.achFile("day1-resent.ach", h, moved(es, 1))
	s := c.ingest(3, resent)[0]
	if s.Posted != 0 || s.Quarantined != int64(len(es)) {
		t.Fatalf("re-dated re-send: %+v, want all %d held", s, len(es))
	}
	if got := c.postings(); got != before {
		t.Fatalf("%d postings after the re-send, want %d", got, before)
	}
	if got := c.balance("settlement:ach"); got != settlement {
		t.Fatalf("the settlement account moved: %d, was %d", got, settlement)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'possible_resend' AND needs_attention`,
		c.tenant, s.RunID); n != int64(len(es)) {
		t.Fatalf("%d possible_resend events, want %d", n, len(es))
	}
	// Ingested again it is still held, as already quarantined by the
	// first: nothing about it has changed.
	if s := c.ingest(3, resent)[0]; s.Posted != 0 || s.Quarantined != 0 || s.AlreadyQuarantined != int64(len(es)) {
		t.Fatalf("the re-send again: %+v", s)
	}

	// One recurring payment among new ones is no re-send.
	others := liveOnly(entries(44, 10))
	for i := range others {
		others[i].CompanyID = "7777777777"
	}
	recurring := moved(es[:1], 2)
	h.IDModifier = "B"
	mixed := append(append([]ach.Entry{}, others...), recurring...)
	if s := c.ingest(0, c.achFile("day3.ach", h, mixed))[0]; s.Posted != int64(len(mixed)) {
		t.Fatalf("a file with one recurring payment: %+v, want all %d posted", s, len(mixed))
	}

	// The operator's decision: it is not a re-send.
	if s := c.ingest(0, "--allow-redated", resent)[0]; s.Posted != int64(len(es)) || s.Quarantined != 0 {
		t.Fatalf("with --allow-redated: %+v, want all %d posted", s, len(es))
	}
	if got := c.postedKeys(moved(es, 1)); got != int64(len(es)) {
		t.Fatalf("%d of the re-dated entries posted, want %d", got, len(es))
	}
	c.must(0, "ledger", "verify")
}

// A re-send whose new entries come only after many the ledger already has
// (the day's file again, then yesterday's re-dated) is held all the same:
// the check looks for the first new entries past the window it starts with.
func TestARedatedResendAfterManyDuplicatesIsHeld(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(45, 1300))
	today, yesterday := es[:1000], es[1000:]
	c.ingest(0, c.achFile("today.ach", ach.DefaultHeader(created), today))
	h := ach.DefaultHeader(created.Add(-24 * time.Hour))
	h.IDModifier = "B"
	c.ingest(0, c.achFile("yesterday.ach", h, yesterday))
	before := c.postings()

	h.IDModifier = "C"
	f := c.achFile("both.ach", h, append(slices.Clone(today), moved(yesterday, 1)...))
	s := c.ingest(3, "--chunk-size", "500", f)[0]
	if s.Posted != 0 || s.Duplicates != int64(len(today)) || s.Quarantined != int64(len(yesterday)) {
		t.Fatalf("today's entries again and yesterday's re-dated: %+v, want %d duplicates and %d held", s, len(today), len(yesterday))
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'possible_resend'`,
		c.tenant, s.RunID); n != int64(len(yesterday)) {
		t.Fatalf("%d possible_resend events, want %d", n, len(yesterday))
	}
	if got := c.postings(); got != before {
		t.Fatalf("%d postings after the re-send, want %d", got, before)
	}
}

// A re-ingest whose every entry is posted skips the posting statement for
// all its chunks (ledger.Batch.AllPosted). This test holds what that must
// not change, not the skip itself: the same file with one entry more at its
// very end, past the check's first windows, posts that one, and the same
// file again audits every entry, with the posting it met.
func TestTheSameFileWithOneEntryMorePostsIt(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(46, 1200))
	day, late := es[:1100], es[1100]
	c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), day))
	before := c.postings()
	h := ach.DefaultHeader(created)
	h.IDModifier = "B"
	more := c.achFile("day-and-one.ach", h, append(slices.Clone(day), late))
	if s := c.ingest(0, "--chunk-size", "100", more)[0]; s.Posted != 1 || s.Duplicates != int64(len(day)) {
		t.Fatalf("the day's file with one entry more: %+v, want 1 posted and %d duplicates", s, len(day))
	}
	if got := c.postedKeys([]ach.Entry{late}); got != 1 || c.postings() != before+1 {
		t.Fatalf("the late entry posted %d times; %d postings, want %d", got, c.postings(), before+1)
	}
	if s := c.ingest(0, "--chunk-size", "100", more)[0]; s.Posted != 0 || s.Duplicates != int64(len(day))+1 {
		t.Fatalf("the same file again: %+v, want %d duplicates", s, len(day)+1)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'duplicate' AND existing_posting_id IS NOT NULL
	                    AND run_id = (SELECT max(id) FROM runs WHERE tenant_id = $1)`, c.tenant); n != int64(len(day))+1 {
		t.Fatalf("the last run audited %d duplicates with the posting they met, want %d", n, len(day)+1)
	}
}

// lineKeyedMapping maps a CSV without key columns: its rows are keyed by
// file id and line.
const lineKeyedMapping = `
source = "bank"
reference = "ref"
amount = "amount"
amount_unit = "major"
currency_fixed = "USD"
value_date = "date"
date_layout = "2006-01-02"
`

// A file keyed by line and its shifted re-upload, ingested at the same
// moment, in both orders and many times: no row posts twice.
func TestAShiftedReuploadRacingItsOriginalPostsNoRowTwice(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	mapping := c.file("m.toml", []byte(lineKeyedMapping))
	var orig, shifted strings.Builder
	orig.WriteString("ref,amount,date\n")
	shifted.WriteString("ref,amount,date\nNEW,9.00,2026-11-29\n")
	for i := range 50 {
		row := fmt.Sprintf("R%02d,%d.00,2026-11-29\n", i, i+1)
		orig.WriteString(row)
		shifted.WriteString(row)
	}
	a := c.file("a.csv", []byte(orig.String()))
	b := c.file("b.csv", []byte(shifted.String()))
	const trials = 12
	for i := range trials {
		c.tenant = fmt.Sprintf("race-%d", i)
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		args := func(f string) []string {
			return []string{"--tenant", c.tenant, "-o", "json", "ingest", "--format", "csv", "--map", mapping,
				"--file-id", "stmt-11-29", "--chunk-size", "7", f}
		}
		for _, r := range c.concurrently([][]string{args(first), args(second)}) {
			if r.code != 0 && r.code != 3 {
				t.Fatalf("trial %d:\n%v", i, r)
			}
		}
		if n := c.count(`SELECT count(*) FROM (SELECT reference FROM postings WHERE tenant_id = $1
		                   GROUP BY reference HAVING count(*) > 1) x`, c.tenant); n != 0 {
			t.Fatalf("trial %d: %d rows posted twice", i, n)
		}
		if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1`, c.tenant); n != 50 && n != 51 {
			t.Fatalf("trial %d: %d postings, want one file's 50 or 51", i, n)
		}
	}
}

// A return of an entry that was first booked through a correction reverses
// the correction's money: first while it still sits in suspense, then after
// the late original moved it to the customer, also when the correction was
// made from a bank's statement keyed otherwise. (A return that arrives
// before the original of a bank-keyed correction cannot know the
// original's key, and stays an orphan_return for a person.)
func TestAReturnOfAnEntryBookedByACorrectionReversesIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ bankKeyed, lateOriginal bool }{{false, false}, {false, true}, {true, true}} {
		bankKeyed, lateOriginal := tc.bankKeyed, tc.lateOriginal
		t.Run(fmt.Sprintf("bank-keyed %v, late original %v", bankKeyed, lateOriginal), func(t *testing.T) {
			t.Parallel()
			es := liveOnly(entries(45, 12))
			c, missing := correctedLedger(newCLI(t), es, bankKeyed)
			var booked ach.Entry
			for _, e := range es {
				if e.Trace == missing.Reference {
					booked = e
				}
			}
			if booked.Trace == "" {
				t.Fatalf("no entry has the correction's reference %s", missing.Reference)
			}
			if lateOriginal {
				h := ach.DefaultHeader(created.Add(time.Hour))
				h.IDModifier = "B"
				if s := c.ingest(0, c.achFile("day1-full.ach", h, es))[0]; s.Settled != 1 {
					t.Fatalf("the late original: %+v, want it settled", s)
				}
			}
			s := c.ingest(0, c.returnFile("returns.ach", ach.ReturnOf(booked, "R01", 1)))[0]
			if s.Posted != 1 || s.Quarantined != 0 {
				t.Fatalf("the return: %+v, want it posted", s)
			}
			if n := c.count(`SELECT count(*) FROM postings r JOIN postings o ON o.tenant_id = r.tenant_id AND o.id = r.refers_to
			                  WHERE r.tenant_id = $1 AND r.kind = 'return' AND r.posting_key = $2 AND o.kind = 'correction'`,
				c.tenant, booked.Key()+":return"); n != 1 {
				t.Fatalf("no return of %s refers to the correction", booked.Key())
			}
			// Every account the correction (and reclassification) touched
			// is back where it was without the entry.
			var want int64
			for _, e := range es {
				if e.Key() != booked.Key() {
					want -= signed(e)
				}
			}
			if got := c.balance("settlement:ach"); got != want {
				t.Fatalf("settlement:ach holds %d, want %d", got, want)
			}
			if got := c.balance("suspense:ach"); got != 0 {
				t.Fatalf("suspense:ach holds %d, want 0", got)
			}
			if n := c.count(`SELECT count(*) FROM (SELECT account FROM legs WHERE tenant_id = $1 AND account NOT LIKE 'settlement:%'
			                   GROUP BY account HAVING sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END) <> 0) x
			                  WHERE account IN (SELECT l.account FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
			                                     WHERE p.tenant_id = $1 AND p.kind = 'return')`, c.tenant); n != 0 {
				t.Fatalf("%d accounts the return touched are not back to zero", n)
			}
			c.must(0, "ledger", "verify")
		})
	}
}

// A bank-keyed correction that two records of a late file fit (the same
// trace, amount and date under two companies) is settled by neither: both
// are ambiguous_settlement, for a person, and neither posts its money.
func TestTwoRecordsFittingABankKeyedCorrectionAreHeld(t *testing.T) {
	t.Parallel()
	es := liveOnly(entries(46, 12))
	c, missing := correctedLedger(newCLI(t), es, true)
	var booked ach.Entry
	for _, e := range es {
		if e.Trace == missing.Reference {
			booked = e
		}
	}
	twin := booked
	twin.CompanyID = "6666666666"
	settlement := c.balance("settlement:ach")
	h := ach.DefaultHeader(created.Add(time.Hour))
	h.IDModifier = "B"
	s := c.ingest(3, c.achFile("late.ach", h, []ach.Entry{booked, twin}))[0]
	if s.Posted != 0 || s.Settled != 0 || s.Quarantined != 2 {
		t.Fatalf("two records fitting one correction: %+v, want both held", s)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2
	                   AND verdict = 'ambiguous_settlement' AND needs_attention`, c.tenant, s.RunID); n != 2 {
		t.Fatalf("%d ambiguous_settlement events, want 2", n)
	}
	if got := c.postedKeys([]ach.Entry{booked, twin}); got != 0 {
		t.Fatalf("%d of the two posted", got)
	}
	if got := c.balance("settlement:ach"); got != settlement {
		t.Fatalf("the settlement account moved: %d, was %d", got, settlement)
	}
}
