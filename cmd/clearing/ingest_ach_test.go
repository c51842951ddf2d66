package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
)

var created = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func entries(seed uint64, n int) []ach.Entry { return slices.Collect(ach.GenerateEntries(seed, n)) }

func liveOnly(es []ach.Entry) []ach.Entry {
	var out []ach.Entry
	for _, e := range es {
		if e.Amount > 0 {
			out = append(out, e)
		}
	}
	return out
}

// achFile writes entries as an ACH file with header h.
func (c *cli) achFile(name string, h ach.Header, es []ach.Entry) string {
	c.t.Helper()
	var b bytes.Buffer
	if err := ach.WriteEntries(&b, h, slices.Values(es)); err != nil {
		c.t.Fatal(err)
	}
	return c.file(name, b.Bytes())
}

func (c *cli) returnFile(name string, rs ...ach.Return) string {
	c.t.Helper()
	var b bytes.Buffer
	if err := ach.WriteReturns(&b, ach.DefaultHeader(created.Add(48*time.Hour)), slices.Values(rs)); err != nil {
		c.t.Fatal(err)
	}
	return c.file(name, b.Bytes())
}

func TestIngestPostsEachEntryOnceAndReingestPostsNothing(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := entries(1, 300)
	live := liveOnly(es)
	f := c.achFile("day1.ach", ach.DefaultHeader(created), es)

	first := c.ingest(0, f)[0]
	if first.Records != 300 || first.Posted != int64(len(live)) || first.Notices != int64(300-len(live)) ||
		first.Duplicates != 0 || first.Status != "done" || first.Format != "ach" {
		t.Fatalf("first ingest: %+v (live %d)", first, len(live))
	}
	if got := c.postings(); got != int64(len(live)) {
		t.Fatalf("postings = %d, want %d", got, len(live))
	}
	if got := c.count(`SELECT count(*) FROM legs WHERE tenant_id = $1`, c.tenant); got != 2*int64(len(live)) {
		t.Fatalf("legs = %d, want %d", got, 2*len(live))
	}
	for _, e := range live[:5] {
		amount := c.count(`SELECT amount_minor FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, e.Key())
		if amount != e.Amount {
			t.Errorf("%s posted %d, want %d", e.Key(), amount, e.Amount)
		}
	}
	before := c.snapshot("runs", "audit")

	second := c.ingest(0, f)[0]
	if second.Posted != 0 || second.Duplicates != 300 || second.Conflicts != 0 || second.Quarantined != 0 {
		t.Fatalf("second ingest: %+v", second)
	}
	if after := c.snapshot("runs", "audit"); after != before {
		t.Fatalf("re-ingest changed the ledger:\n%s", diffLines(before, after))
	}
	dups := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'duplicate'`,
		c.tenant, second.RunID)
	if dups != 300 {
		t.Fatalf("audit has %d duplicate events for the second run, want 300", dups)
	}
	var v struct {
		OK       bool  `json:"ok"`
		Postings int64 `json:"postings"`
		Legs     int64 `json:"legs"`
	}
	if err := json.Unmarshal([]byte(c.must(0, "-o", "json", "ledger", "verify").stdout), &v); err != nil || !v.OK ||
		v.Postings != int64(len(live)) || v.Legs != 2*int64(len(live)) {
		t.Fatalf("ledger verify: %+v, %v", v, err)
	}
}

func TestCorrectedReuploadPostsOnlyTheNewEntries(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := entries(2, 120)
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es[:100]))
	h := ach.DefaultHeader(created.Add(4 * time.Hour))
	h.IDModifier, h.FirstBatch, h.BatchSize = "B", 40, 7
	s := c.ingest(0, c.achFile("day1-corrected.ach", h, es))[0]
	newLive := int64(len(liveOnly(es[100:])))
	if s.Posted != newLive || s.Duplicates != 100 || s.Conflicts != 0 {
		t.Fatalf("corrected re-upload: %+v, want %d posted and 100 duplicates", s, newLive)
	}
	if got := c.postings(); got != int64(len(liveOnly(es))) {
		t.Fatalf("postings = %d, want %d", got, len(liveOnly(es)))
	}
}

func TestSameKeyWithAnotherAmountIsAConflict(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(3, 50))
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))
	changed := slices.Clone(es)
	changed[7].Amount += 1
	h := ach.DefaultHeader(created.Add(time.Hour))
	h.IDModifier = "B"
	s := c.ingest(3, c.achFile("day1-changed.ach", h, changed))[0]
	if s.Conflicts != 1 || s.Posted != 0 || s.Duplicates != int64(len(es)-1) {
		t.Fatalf("summary %+v", s)
	}
	key := es[7].Key()
	if got := c.count(`SELECT amount_minor FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, key); got != es[7].Amount {
		t.Fatalf("the conflicting record overwrote the posting: amount %d, want %d", got, es[7].Amount)
	}
	var fields string
	if err := c.pool.QueryRow(t.Context(), `
SELECT array_to_string(differing_fields, ',') FROM audit_events
 WHERE tenant_id = $1 AND record_key = $2 AND verdict = 'conflict' AND needs_attention`, c.tenant, key).Scan(&fields); err != nil {
		t.Fatal(err)
	}
	if fields != "amount" {
		t.Fatalf("differing fields %q, want amount", fields)
	}
	var l struct {
		Posting struct {
			Amount int64 `json:"amount"`
		} `json:"posting"`
		Events []struct {
			Verdict         string   `json:"verdict"`
			File            string   `json:"file"`
			Line            int64    `json:"line"`
			DifferingFields []string `json:"differing_fields"`
			CollidedWith    string   `json:"collided_with"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(c.must(0, "-o", "json", "lookup", key).stdout), &l); err != nil {
		t.Fatal(err)
	}
	conflicts := 0
	for _, e := range l.Events {
		if e.File != "day1-changed.ach" {
			continue // in double-apply mode the first file arrives twice
		}
		conflicts++
		if e.Verdict != "conflict" || e.CollidedWith != key || e.Line == 0 || len(e.DifferingFields) != 1 {
			t.Fatalf("lookup does not explain the conflict: %+v", e)
		}
	}
	if l.Posting.Amount != es[7].Amount || conflicts == 0 {
		t.Fatalf("lookup does not show the conflict: %+v", l)
	}
}

func TestConcurrentIngestsOfOneFilePostEachEntryOnce(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := entries(4, 2000)
	f := c.achFile("day1.ach", ach.DefaultHeader(created), es)
	cmds := slices.Repeat([][]string{{"-o", "json", "ingest", "--chunk-size", "300", f}}, 8)
	checkOnePostingPerIntent(c, es, summaries(t, c.concurrently(cmds)))
	// They started one run between them; the others waited for it and
	// found every record a duplicate.
	if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND (posted > 0 OR notices > 0)`, c.tenant); n != 1 {
		t.Fatalf("%d runs posted part of the file, want one run that posted all of it", n)
	}
}

func TestReturnsReverseTheirOriginalOnce(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(5, 40))
	c.ingest(0, c.achFile("day1.ach", ach.DefaultHeader(created), es))
	account := func(e ach.Entry) string {
		var a string
		if err := c.pool.QueryRow(t.Context(), `SELECT account FROM postings WHERE tenant_id = $1 AND posting_key = $2`,
			c.tenant, e.Key()).Scan(&a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	r1, r2 := ach.ReturnOf(es[3], "R01", 1), ach.ReturnOf(es[9], "R03", 2)
	returns := c.returnFile("returns.ach", r1, r2)
	s := c.ingest(0, returns)[0]
	if s.Posted != 2 || s.Quarantined != 0 {
		t.Fatalf("returns: %+v", s)
	}
	for _, e := range []ach.Entry{es[3], es[9]} {
		if b := c.balance(account(e)); b != 0 {
			t.Errorf("%s: customer account balance %d after its return, want 0", e.Key(), b)
		}
		kind := c.count(`SELECT count(*) FROM postings p JOIN postings o ON o.tenant_id = p.tenant_id AND o.id = p.refers_to
		                  WHERE p.tenant_id = $1 AND p.posting_key = $2 AND p.kind = 'return' AND o.posting_key = $3`,
			c.tenant, e.Key()+":return", e.Key())
		if kind != 1 {
			t.Errorf("%s:return is not a return posting referring to its original", e.Key())
		}
	}
	before := c.snapshot("runs", "audit")
	if s := c.ingest(0, returns)[0]; s.Posted != 0 || s.Duplicates != 2 {
		t.Fatalf("returns again: %+v", s)
	}
	if after := c.snapshot("runs", "audit"); after != before {
		t.Fatalf("returns again changed the ledger:\n%s", diffLines(before, after))
	}

	// A dishonored return undoes the return, and a contested one undoes that.
	dis := ach.DishonorOf(r1, "R69", 3)
	c.ingest(0, c.returnFile("dishonored.ach", dis))
	if b := c.balance(account(es[3])); b != signed(es[3]) {
		t.Fatalf("after the dishonored return the customer balance is %d, want %d", b, signed(es[3]))
	}
	c.ingest(0, c.returnFile("contested.ach", ach.ContestOf(dis, "R71", 4)))
	if b := c.balance(account(es[3])); b != 0 {
		t.Fatalf("after the contested dishonor the customer balance is %d, want 0", b)
	}

	// A return whose original the ledger never saw is quarantined.
	stranger := liveOnly(entries(6, 5))[0]
	stranger.CompanyID = "5555555555"
	s = c.ingest(3, c.returnFile("orphan.ach", ach.ReturnOf(stranger, "R01", 5)))[0]
	if s.Quarantined != 1 || s.Posted != 0 {
		t.Fatalf("orphan return: %+v", s)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND run_id = $2 AND verdict = 'orphan_return' AND needs_attention`,
		c.tenant, s.RunID); n != 1 {
		t.Fatalf("orphan return audit events = %d, want 1", n)
	}
	c.must(0, "ledger", "verify")
}

// signed is an entry's effect on its customer account: credits positive.
func signed(e ach.Entry) int64 {
	if e.TransactionCode%10 == 2 {
		return e.Amount
	}
	return -e.Amount
}

func TestInFileDuplicateKeysAreQuarantined(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(7, 30))
	twice := append(slices.Clone(es), es[4])
	twice[len(twice)-1].Amount++ // the same key with another amount
	h := ach.DefaultHeader(created)
	s := c.ingest(3, "--chunk-size", "7", c.achFile("twice.ach", h, twice))[0]
	if s.Posted != int64(len(es)) || s.Quarantined != 1 {
		t.Fatalf("summary %+v", s)
	}
	if got := c.count(`SELECT amount_minor FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, es[4].Key()); got != es[4].Amount {
		t.Fatalf("the first record of the key was not the one posted: amount %d, want %d", got, es[4].Amount)
	}
	if n := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'in_file_duplicate' AND record_key = $2`, c.tenant, es[4].Key()); n != 1 {
		t.Fatalf("in-file duplicate events = %d, want 1", n)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := entries(8, 60)
	f := c.achFile("day1.ach", ach.DefaultHeader(created), es)
	s := c.ingest(0, "--dry-run", f)[0]
	if s.Status != "dry_run" || s.Posted != int64(len(liveOnly(es))) {
		t.Fatalf("dry run: %+v", s)
	}
	for _, table := range []string{"postings", "legs", "notices", "audit_events", "runs"} {
		if n := c.count(`SELECT count(*) FROM ` + table); n != 0 {
			t.Errorf("dry run wrote %d rows to %s", n, table)
		}
	}
}

func TestMalformedACHFilesAreRejectedWhole(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var good bytes.Buffer
	if err := ach.WriteEntries(&good, ach.DefaultHeader(created), ach.GenerateEntries(9, 20)); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(good.String(), "\n")
	replace := func(i int, s string) string {
		l := slices.Clone(lines)
		l[i] = s
		return strings.Join(l, "")
	}
	// The entry on line 3 carries an amount at positions 30-39.
	badAmount := lines[2][:29] + "0000000001" + lines[2][39:]
	control := slices.IndexFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "9") && !strings.HasPrefix(l, "9999999999")
	})
	cases := map[string]string{
		"truncated before the file control": strings.Join(lines[:control], ""),
		"a record after the file control":   good.String() + lines[2],
		"control totals that do not add up": replace(2, badAmount),
		"RTF around the file":               `{\rtf1\ansi{\fonttbl\f0\fswiss Helvetica;}` + "\n" + good.String() + "}\n",
		"binary garbage":                    "\x00\x01\x02\xff\xfe garbage \x89PNG\r\n\x1a\n",
		"non-ASCII text in an amount":       replace(2, lines[2][:30]+"\u00e9"+lines[2][31:]),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			f := c.file(strings.ReplaceAll(name, " ", "-")+".ach", []byte(body))
			r := c.run("ingest", "--format", "ach", f)
			if r.code != 1 {
				t.Fatalf("want exit 1\n%v", r)
			}
			if !strings.Contains(r.stderr, "line") && !strings.Contains(r.stderr, "offset") {
				t.Errorf("the error names no line or offset:\n%s", r.stderr)
			}
		})
	}
	for _, table := range []string{"postings", "legs", "notices", "audit_events"} {
		if n := c.count(`SELECT count(*) FROM ` + table); n != 0 {
			t.Errorf("a rejected file wrote %d rows to %s", n, table)
		}
	}
	if n := c.count(`SELECT count(*) FROM runs WHERE status <> 'rejected'`); n != 0 {
		t.Errorf("a rejected file wrote %d runs that are not rejected", n)
	}
}

// diffLines shows the lines of b that a lacks and the other way round,
// counting repeats, so that a row written twice shows as its extra copy.
// When the texts differ only in order, it shows both.
func diffLines(a, b string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	var out strings.Builder
	extra := func(sign, text, other string) {
		mine, theirs := count(text), count(other)
		for _, l := range strings.Split(text, "\n") {
			if mine[l] > theirs[l] {
				mine[l]--
				fmt.Fprintf(&out, "%s %s\n", sign, l)
			}
		}
	}
	extra("-", a, b)
	extra("+", b, a)
	if out.Len() == 0 && a != b {
		return "the same lines in another order:\n--- want\n" + a + "--- got\n" + b
	}
	return out.String()
}

// Only the commands that print a reconciliation report take -o html; any
// other command refuses it as a usage error before it does any work.
func TestHTMLOutputIsRefusedBeforeAnyWork(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	f := c.achFile("day1.ach", ach.DefaultHeader(created), entries(5, 20))
	c.must(2, "-o", "html", "ingest", f)
	c.must(2, "-o", "html", "corrections", "list")
	if got := c.snapshot(); got != newCLI(t).snapshot() {
		t.Fatalf("a refused -o html wrote:\n%s", got)
	}
	if r := c.exec("-o", "html", "report", "latest"); r.code == 2 || !strings.Contains(r.stderr, "no reconciliation runs") {
		t.Fatalf("report takes -o html:\n%v", r)
	}
}
