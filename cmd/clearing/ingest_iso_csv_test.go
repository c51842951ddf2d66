package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/iso8583"
)

var isoTime = time.Date(2026, 11, 29, 14, 30, 5, 0, time.UTC)

// purchase is a 0200 purchase of amount cents on a test card.
func purchase(i int, amount int64) iso8583.Txn {
	return iso8583.Txn{MTI: "0200", PAN: fmt.Sprintf("4000%012d", 123456000+i), ProcessingCode: "000000",
		Amount: amount, Transmitted: isoTime.Add(time.Duration(i) * time.Second), STAN: fmt.Sprintf("%06d", i+1),
		Acquirer: "00417", RRN: fmt.Sprintf("6333%08d", i+1), Currency: "840"}
}

func (c *cli) isoFile(name, framing string, txns ...iso8583.Txn) string {
	c.t.Helper()
	spec, err := iso8583.LoadSpec(iso8583.DefaultSpec)
	if err != nil {
		c.t.Fatal(err)
	}
	var b bytes.Buffer
	w, err := iso8583.NewWriter(&b, framing, spec)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, t := range txns {
		if err := w.Write(t.Message()); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		c.t.Fatal(err)
	}
	return c.file(name, b.Bytes())
}

func TestISO8583PostsOnceAcrossFramingsRepeatsAndReversals(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var txns []iso8583.Txn
	for i := range 25 {
		txns = append(txns, purchase(i, int64(1000+i)))
	}
	first := c.ingest(0, "--format", "iso8583", "--iso-framing", "rdw", c.isoFile("day.rdw", iso8583.FramingRDW, txns...))[0]
	if first.Posted != 25 || first.Records != 25 {
		t.Fatalf("first ingest: %+v", first)
	}
	before := c.snapshot("runs", "audit")
	for _, framing := range []string{iso8583.FramingRDW, iso8583.FramingLen2, iso8583.FramingASCII4, iso8583.FramingHex} {
		s := c.ingest(0, "--format", "iso8583", c.isoFile("day."+framing, framing, txns...))[0]
		if s.Posted != 0 || s.Duplicates != 25 {
			t.Fatalf("the same messages framed %s: %+v", framing, s)
		}
	}
	if after := c.snapshot("runs", "audit"); after != before {
		t.Fatalf("another framing changed the ledger:\n%s", diffLines(before, after))
	}

	// A 0201 repeat of a posted 0200 is a duplicate.
	repeat := txns[3]
	repeat.MTI = "0201"
	if s := c.ingest(0, "--format", "iso8583", c.isoFile("repeat.rdw", iso8583.FramingRDW, repeat))[0]; s.Duplicates != 1 || s.Posted != 0 {
		t.Fatalf("0201 repeat: %+v", s)
	}

	// A 0400 reversal and its 0401 repeat reverse the original once.
	rev := txns[5]
	rev.MTI, rev.STAN, rev.Transmitted = "0400", "000777", txns[5].Transmitted.Add(time.Minute)
	revRepeat := rev
	revRepeat.MTI = "0401"
	s := c.ingest(0, "--format", "iso8583", c.isoFile("reversal.rdw", iso8583.FramingRDW, rev, revRepeat))[0]
	if s.Posted != 1 || s.Duplicates != 1 {
		t.Fatalf("reversal and its repeat: %+v", s)
	}
	key := "iso8583:00417:" + txns[5].RRN + ":0200"
	var account string
	if err := c.pool.QueryRow(context.Background(), `SELECT account FROM postings WHERE tenant_id = $1 AND posting_key = $2`,
		c.tenant, key).Scan(&account); err != nil {
		t.Fatal(err)
	}
	if b := c.balance(account); b != 0 {
		t.Fatalf("the card's account holds %d after the reversal, want 0", b)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2 AND kind = 'reversal'`, c.tenant, key+":reversal"); n != 1 {
		t.Fatalf("%d reversal postings, want 1", n)
	}

	// A reversal of nothing is quarantined.
	orphan := purchase(99, 500)
	orphan.MTI = "0400"
	if s := c.ingest(3, "--format", "iso8583", c.isoFile("orphan.rdw", iso8583.FramingRDW, orphan))[0]; s.Quarantined != 1 {
		t.Fatalf("orphan reversal: %+v", s)
	}

	// The wrong spec or the wrong framing rejects the file whole.
	beforeRejects := c.fullSnapshot()
	fresh := []iso8583.Txn{purchase(200, 10), purchase(201, 20)}
	for _, args := range [][]string{
		{"--iso-spec", "spec87ascii", c.isoFile("spec.rdw", iso8583.FramingRDW, fresh...)},
		{"--iso-framing", "len2", c.isoFile("framing.rdw", iso8583.FramingRDW, fresh...)},
	} {
		r := c.run(append([]string{"ingest", "--format", "iso8583"}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "message") || !strings.Contains(r.stderr, "offset") {
			t.Errorf("%v: want a rejection naming the message and its byte offset\n%v", args, r)
		}
	}
	if after := c.fullSnapshot(); after != beforeRejects {
		t.Fatalf("a rejected file wrote:\n%s", diffLines(beforeRejects, after))
	}

	// No PAN anywhere: not in the database, not in any output.
	dump := c.snapshot()
	outputs := c.must(0, "-o", "json", "lookup", key).stdout + c.must(0, "balance").stdout
	for _, tx := range append(txns, orphan) {
		if strings.Contains(dump, tx.PAN) || strings.Contains(outputs, tx.PAN) {
			t.Fatalf("the PAN %s appears in the ledger or the output", tx.PAN)
		}
	}
	c.must(0, "ledger", "verify")
}

const acmeMapping = `
source = "acme-psp"
key = ["id"]
reference = "id"
amount = "amount"
amount_unit = "major"
currency = "currency"
value_date = "settled_on"
date_layout = "2006-01-02"
account = "merchant_id"
skip_column = "type"
skip_values = ["subtotal"]
`

func TestCSVExportsPostExactlyOnce(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	mapping := c.file("acme.toml", []byte(acmeMapping))
	export := "\ufeffid,amount,currency,settled_on,merchant_id,type\r\n" +
		"tx1,12.34,USD,2026-11-29,M1001,charge\r\n" +
		"\"tx2\",\"-5.00\",USD,2026-11-29,M1002,refund\r\n" +
		"tx3,1000,JPY,2026-11-29,M1001,charge\r\n" +
		"tx4,0.125,BHD,2026-11-29,M1003,charge\r\n" +
		",1007.34,,2026-11-29,,subtotal\r\n"
	f := c.file("acme-2026-11-29.csv", []byte(export))
	s := c.ingest(0, "--format", "csv", "--map", mapping, f)[0]
	if s.Posted != 4 || s.Skipped != 1 {
		t.Fatalf("ingest: %+v", s)
	}
	for key, want := range map[string]int64{"csv:acme-psp:tx1": 1234, "csv:acme-psp:tx2": 500, "csv:acme-psp:tx3": 1000, "csv:acme-psp:tx4": 125} {
		if got := c.count(`SELECT amount_minor FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, key); got != want {
			t.Errorf("%s: %d minor units, want %d", key, got, want)
		}
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = 'csv:acme-psp:tx2' AND direction = 'D'`, c.tenant); n != 1 {
		t.Error("a negative amount did not debit the counterparty")
	}
	if s := c.ingest(0, "--format", "csv", "--map", mapping, f)[0]; s.Posted != 0 || s.Duplicates != 4 {
		t.Fatalf("re-ingest: %+v", s)
	}
	// A corrected re-upload: reordered, one row added; only it posts.
	reupload := "id,amount,currency,settled_on,merchant_id,type\n" +
		"tx3,1000,JPY,2026-11-29,M1001,charge\n" +
		"tx5,7.00,USD,2026-11-29,M1004,charge\n" +
		"tx1,12.34,USD,2026-11-29,M1001,charge\n"
	if s := c.ingest(0, "--format", "csv", "--map", mapping, c.file("acme-2026-11-29-v2.csv", []byte(reupload)))[0]; s.Posted != 1 || s.Duplicates != 2 {
		t.Fatalf("corrected re-upload: %+v", s)
	}
	// Malformed rows: every one named with line and column, nothing posted.
	posted := c.postings()
	bad := "id,amount,currency,settled_on,merchant_id,type\n" +
		"tx6,12.345,USD,2026-11-29,M1,charge\n" +
		"tx7,\"1,000.00\",USD,2026-11-29,M1,charge\n" +
		"tx8,,USD,2026-11-29,M1,charge\n" +
		"tx9,1.00,USD,2026-13-45,M1,charge\n"
	r := c.run("ingest", "--format", "csv", "--map", mapping, c.file("bad.csv", []byte(bad)))
	if r.code != 1 {
		t.Fatalf("want exit 1\n%v", r)
	}
	for _, want := range []string{"line 2", "line 3", "line 4", "line 5", "amount", "settled_on"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the rejection does not mention %q:\n%s", want, r.stderr)
		}
	}
	if c.postings() != posted {
		t.Fatal("a rejected CSV posted")
	}
	// A mapping naming a column the header lacks names it.
	broken := c.file("broken.toml", []byte(strings.Replace(acmeMapping, `account = "merchant_id"`, `account = "merchant"`, 1)))
	if r := c.run("ingest", "--format", "csv", "--map", broken, f); r.code != 1 || !strings.Contains(r.stderr, "merchant") {
		t.Fatalf("a mapping with a missing column:\n%v", r)
	}
}

// Without key columns rows are keyed by file and line: a corrected file
// that shifts lines yields conflicts, never double postings. The row that
// moved past the old file's end has a new key, so it would post again: the
// whole file is held instead.
func TestCSVLineKeysTurnShiftedRowsIntoConflicts(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	mapping := c.file("m.toml", []byte(lineKeyedMapping))
	c.ingest(0, "--format", "csv", "--map", mapping, "--file-id", "stmt-11-29",
		c.file("a.csv", []byte("ref,amount,date\nA,1.00,2026-11-29\nB,2.00,2026-11-29\n")))
	s := c.ingest(3, "--format", "csv", "--map", mapping, "--file-id", "stmt-11-29",
		c.file("b.csv", []byte("ref,amount,date\nNEW,9.00,2026-11-29\nA,1.00,2026-11-29\nB,2.00,2026-11-29\n")))[0]
	if s.Conflicts != 2 || s.Quarantined != 1 || s.Posted != 0 {
		t.Fatalf("shifted rows: %+v, want 2 conflicts, the moved row held, nothing posted", s)
	}
	if got := c.count(`SELECT coalesce(sum(amount_minor), 0) FROM postings WHERE tenant_id = $1`, c.tenant); got != 300 {
		t.Fatalf("postings sum to %d minor units, want 300: nothing posted twice", got)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'held_by_conflict' AND needs_attention`,
		c.tenant, s.RunID); n != 1 {
		t.Fatalf("%d held_by_conflict events, want 1", n)
	}
	// Appended rows with the old lines intact post as usual.
	s = c.ingest(0, "--format", "csv", "--map", mapping, "--file-id", "stmt-11-29",
		c.file("c.csv", []byte("ref,amount,date\nA,1.00,2026-11-29\nB,2.00,2026-11-29\nC,3.00,2026-11-29\n")))[0]
	if s.Posted != 1 || s.Duplicates != 2 {
		t.Fatalf("appended row: %+v", s)
	}
}

// A reversal that carries its own RRN, not the original's, finds its
// original through DE90, and reverses it once; one whose DE90 names nothing
// posted stays an orphan.
func TestISO8583ReversalWithItsOwnRRNLinksThroughDE90(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := purchase(0, 2500)
	c.ingest(0, "--format", "iso8583", c.isoFile("purchases.rdw", iso8583.FramingRDW, p, purchase(1, 700)))
	rev := p
	rev.MTI, rev.RRN, rev.STAN = "0420", "999900000001", "000901"
	rev.Transmitted = isoTime.Add(time.Hour)
	rev.Original = &iso8583.Original{MTI: p.MTI, STAN: p.STAN, Transmitted: p.Transmitted, Acquirer: p.Acquirer}
	orphan := rev
	orphan.RRN, orphan.STAN = "999900000002", "000902"
	orphan.Original = &iso8583.Original{MTI: p.MTI, STAN: "000555", Transmitted: p.Transmitted, Acquirer: p.Acquirer}
	s := c.ingest(3, "--format", "iso8583", c.isoFile("reversals.rdw", iso8583.FramingRDW, rev, orphan))[0]
	if s.Posted != 1 || s.Quarantined != 1 {
		t.Fatalf("reversals: %+v, want 1 posted, 1 orphan", s)
	}
	key := "iso8583:00417:" + p.RRN + ":0200"
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2 AND kind = 'reversal'`, c.tenant, key+":reversal"); n != 1 {
		t.Fatalf("the reversal did not post under %s:reversal", key)
	}
	if n := c.count(`SELECT coalesce(sum(CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END), 0)
	                   FROM legs l JOIN postings q ON q.tenant_id = l.tenant_id AND q.id = l.posting_id
	                  WHERE l.tenant_id = $1 AND q.posting_key LIKE $2 || '%' AND l.account LIKE 'cust:%'`, c.tenant, key); n != 0 {
		t.Fatalf("the card's purchase and its reversal net to %d, want 0", n)
	}
}
