package report

import (
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

// TestAuditorBridgeAddsUp: in every fixture and currency, the ledger
// balance plus the open, acknowledged and explained items, the matched
// pairs' differences and the unexplained remainder is the statement
// balance, exactly; and the breaks are split by acknowledgement.
func TestAuditorBridgeAddsUp(t *testing.T) {
	for _, fx := range fixtures {
		r := fx.build()
		for i, b := range r.Bridge {
			a := auditorOf(r, tallied(t, r), i)
			sum := a.LedgerBalance.Add(a.Open.Amount).Add(a.Acknowledged.Amount).Add(a.Explained.Amount).
				Add(a.WithinTolerance.Amount).Add(a.Unexplained)
			if sum.Cmp(a.StatementBalance) != 0 || a.StatementBalance.Cmp(b.StatementTotal) != 0 || a.LedgerBalance.Cmp(b.LedgerTotal) != 0 {
				t.Errorf("%s %s: the auditor's lines %+v sum to %s, not the statement balance %s", fx.name, b.Currency, a, sum, b.StatementTotal)
			}
		}
	}
	r := fullReport()
	usd := auditorOf(r, tallied(t, r), 0)
	want := map[string]ItemsTotal{
		// Statement minus ledger: the breaks less the acknowledged amount
		// mismatch (120.00 - 125.00), the settlement break outside.
		"open":             {money.TotalOf(111800), 7},
		"acknowledged":     {money.TotalOf(-500), 1},
		"explained":        {money.TotalOf(-23500), 4},
		"within tolerance": {money.TotalOf(-1), 41},
	}
	got := map[string]ItemsTotal{"open": usd.Open, "acknowledged": usd.Acknowledged, "explained": usd.Explained,
		"within tolerance": usd.WithinTolerance}
	for k, w := range want {
		if got[k].Amount.Cmp(w.Amount) != 0 || got[k].Count != w.Count {
			t.Errorf("USD %s = %s of %d, want %s of %d", k, got[k].Amount, got[k].Count, w.Amount, w.Count)
		}
	}
	if usd.Unexplained.Cmp(money.TotalOf(-100)) != 0 {
		t.Errorf("USD unexplained = %s, want -100 (the bridge's 1.00 USD, statement minus ledger)", usd.Unexplained)
	}
	// The currency mismatch's statement line is an open item of the EUR
	// bridge, where the class line puts it.
	if eur := auditorOf(r, tallied(t, r), 2); eur.Open.Amount.Cmp(money.TotalOf(6000)) != 0 || eur.Open.Count != 1 {
		t.Errorf("EUR open = %+v, want 6000 of 1", eur.Open)
	}
	table := render(t, output.Table, r)
	for _, w := range []string{"| + open breaks (need a person)  | 7     | 1118.00 USD  |", "| + acknowledged breaks          | 1     | -5.00 USD    |",
		"| = statement balance            |       | 50876.99 USD |"} {
		if !strings.Contains(table, w) {
			t.Errorf("the table lacks %q", w)
		}
	}
}

// TestVerdict pins the one line that opens the page and the table.
func TestVerdict(t *testing.T) {
	full := verdict(fullReport(), tallied(t, fullReport()), grouped)
	if want := "10 breaks need a person, worth 1,353.00 USD and 6,000 JPY (the sum of their differences, either sign); " +
		"1 acknowledged break needs no one; unexplained remainder 1.00 USD: the report does not balance."; full != want {
		t.Errorf("full: %q\nwant %q", full, want)
	}
	r := balancedReport()
	for i := range r.Discrepancies {
		r.Discrepancies[i].Acknowledged = r.Discrepancies[i].Break
	}
	if got, want := verdict(r, tallied(t, r), grouped), "Balanced: every difference is explained and no break needs a person; 2 acknowledged breaks need no one; nothing unexplained."; got != want {
		t.Errorf("acknowledged: %q\nwant %q", got, want)
	}
	if got := verdict(emptyReport(), tallied(t, emptyReport()), grouped); got != "Balanced: every difference is explained and no break needs a person; nothing unexplained." {
		t.Errorf("empty: %q", got)
	}
}

// TestGrouped pins the thousands separators of the page.
func TestGrouped(t *testing.T) {
	for in, want := range map[string]string{
		"0.00 USD": "0.00 USD", "-999.99 USD": "-999.99 USD", "1000 JPY": "1,000 JPY", "-1234567.89 USD": "-1,234,567.89 USD",
		"123456 (minor units) XXY": "123,456 (minor units) XXY", "1234.567 BHD": "1,234.567 BHD",
	} {
		if got := grouped(in); got != want {
			t.Errorf("grouped(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBreakableKeys: a key may wrap after its separators and nowhere
// else, and its text is escaped.
func TestBreakableKeys(t *testing.T) {
	got := string(breakable("bai2:021000021:acct-7f3a9c:2026-11-02:<b>"))
	want := `<span class="part">bai2:</span><wbr><span class="part">021000021:</span><wbr><span class="part">acct-7f3a9c:</span><wbr>` +
		`<span class="part">2026-11-02:</span><wbr><span class="part">&lt;b&gt;</span>`
	if got != want {
		t.Errorf("breakable = %s\nwant %s", got, want)
	}
	long := strings.Repeat("9", maxWholePart+1)
	if got := string(breakable(long)); got != long {
		t.Errorf("a part too long for its column must stay free to wrap: %s", got)
	}
}
