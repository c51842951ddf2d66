package main

import (
	"strings"
	"testing"
)

// TestCSVKeyValuesWithSeparatorPostApart guards CSV keys built from several
// columns: ("shop:1", "A") and ("shop", "1:A") both made csv:psp2:shop:1:A,
// so the second row was a conflict of the first and never posted. An id
// ending in ":return" read as the return of another row's key.
func TestCSVKeyValuesWithSeparatorPostApart(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	mapping := c.file("psp2.toml", []byte(`
source = "psp2"
key = ["shop", "order"]
amount = "amount"
amount_unit = "major"
currency_fixed = "USD"
value_date = "date"
`))
	export := "shop,order,amount,date\n" +
		"shop:1,A,10.00,2026-11-29\n" +
		"shop,1:A,20.00,2026-11-29\n" +
		"X,return,30.00,2026-11-29\n" +
		"X:return,Y,40.00,2026-11-29\n"
	f := c.file("psp2-2026-11-29.csv", []byte(export))
	if s := c.ingest(0, "--format", "csv", "--map", mapping, f)[0]; s.Posted != 4 || s.Conflicts != 0 || s.Duplicates != 0 {
		t.Fatalf("ingest: %+v", s)
	}
	if n := c.postings(); n != 4 {
		t.Fatalf("%d postings, want 4", n)
	}
	for key, want := range map[string]int64{
		"csv:psp2:shop%3A1:A":   1000,
		"csv:psp2:shop:1%3AA":   2000,
		"csv:psp2:X:return":     3000,
		"csv:psp2:X%3Areturn:Y": 4000,
	} {
		if got := c.count(`SELECT amount_minor FROM postings WHERE tenant_id = $1 AND posting_key = $2 AND kind = 'clearing'`, c.tenant, key); got != want {
			t.Errorf("%s: %d minor units, want %d", key, got, want)
		}
	}
	// The keys are what a user types into lookup.
	if out := c.must(0, "lookup", "csv:psp2:shop%3A1:A").stdout; !strings.Contains(out, "10.00") {
		t.Errorf("lookup of the escaped key:\n%s", out)
	}
	// Sent again, every row is a duplicate of its own posting.
	if s := c.ingest(0, "--format", "csv", "--map", mapping, f)[0]; s.Posted != 0 || s.Duplicates != 4 {
		t.Fatalf("re-ingest: %+v", s)
	}
	if n := c.postings(); n != 4 {
		t.Fatalf("%d postings after re-ingest, want 4", n)
	}
}
