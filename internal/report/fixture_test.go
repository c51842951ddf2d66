package report

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/internal/money"
)

// The fixtures are hand-built reports. fullReport has every class, three
// currencies with different exponents (USD 2, JPY 0; EUR only on the
// statement side of a currency mismatch), an explanation with
// markup in it, a file name with a terminal escape sequence, a key with a
// zero-width space, and a USD bridge that does not balance by 1.00 USD.

var created = time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)

func ledgerSide(key, kind string, line int64, minor int64, cur, date string) *Side {
	return &Side{Key: key, Kind: kind, File: "odfi-2026-11.ach", Line: line, Amount: minor, Currency: cur, ValueDate: date}
}

func statementSide(key string, line int64, minor int64, cur, date string) *Side {
	return &Side{Key: key, Kind: "credit", File: "acme-2026-11.bai2", Line: line, Amount: minor, Currency: cur, ValueDate: date}
}

func achKey(trace string) string { return "ach:1234567890:2026-11-02:" + trace }

func bankKey(ref string) string { return "bai2:021000021:acct-7f3a9c:2026-11-02:" + ref }

// disc builds a discrepancy whose Difference is ledger minus statement.
func disc(class, reason, ref, cur, explanation string, l, s *Side) Discrepancy {
	var diff int64
	if l != nil {
		diff += l.Amount
	}
	if s != nil {
		diff -= s.Amount
	}
	c, _ := LookupClass(class)
	d := Discrepancy{Class: class, Reason: reason, Explanation: explanation, Reference: ref,
		Currency: cur, Ledger: l, Statement: s, Difference: diff, Break: c.Break}
	if c.Break {
		key := ref
		if l != nil {
			key = l.Key
		} else if s != nil {
			key = s.Key
		}
		d.CorrectionKey = key + ":correction:" + class
	}
	return d
}

// settlementBreak gives a settlement-total break its difference, as
// reconciliation does: the ledger's net of the day minus the total. The
// ledger has no item of its own for it, and no correction is proposed.
func settlementBreak(d Discrepancy, ledgerNet int64) Discrepancy {
	d.Difference = ledgerNet - d.Statement.Amount
	d.CorrectionKey = ""
	return d
}

// inventory gives the breaks their place in the break inventory, as
// reconciliation loads it: each first seen some days before the run, the
// USD amount mismatch acknowledged after its correction was rejected, and
// the missing credits' corrections awaiting approval.
func inventory(ds []Discrepancy) []Discrepancy {
	ages := []int{0, 1, 4, 9, 12, 31, 45}
	n := 0
	for i := range ds {
		d := &ds[i]
		if !d.Break {
			continue
		}
		d.AgeDays = ages[n%len(ages)]
		d.FirstSeen = created.AddDate(0, 0, -d.AgeDays).Format("2006-01-02")
		n++
		if d.CorrectionKey != "" {
			d.CorrectionStatus = "proposed"
		}
		if d.Class == ClassAmountMismatch && d.Currency == "USD" {
			d.CorrectionStatus = "rejected"
			d.Rejection = &Rejection{Operator: "alice", Login: "alice", Reason: "the bank confirmed 120.00; the ledger is right",
				At: created.AddDate(0, 0, -2)}
			d.Acknowledged = true
		}
	}
	return ds
}

func fullDiscrepancies() []Discrepancy {
	return inventory(rawDiscrepancies())
}

func rawDiscrepancies() []Discrepancy {
	const usd, jpy = "USD", "JPY"
	return []Discrepancy{
		disc(ClassMatched, "within_tolerance", "091000010000001", usd, "Amounts differ by 0.01 USD, within the tolerance of 2 minor units.",
			ledgerSide(achKey("091000010000001"), "clearing", 3, 10000, usd, "2026-11-02"), statementSide(bankKey("091000010000001"), 4, 9999, usd, "2026-11-02")),
		disc(ClassCorrected, "correction_posted", "091000010000002", usd, "The approved correction posted the missing credit.",
			&Side{Key: achKey("091000010000002"), Kind: "correction", Amount: 25000, Currency: usd, ValueDate: "2026-11-03"}, statementSide(bankKey("091000010000002"), 5, 25000, usd, "2026-11-03")),
		disc(ClassReturned, "return_posted", "091000010000003", usd, "The entry was returned with R01 on 2026-11-06; the return posting explains it.",
			ledgerSide(achKey("091000010000003")+":return", "return", 14, -7500, usd, "2026-11-06"), nil),
		disc(ClassInTransit, "after_statement", "091000010000004", usd, "Value date 2026-11-30 is after the statement's last date, 2026-11-28.",
			ledgerSide(achKey("091000010000004"), "clearing", 21, 31000, usd, "2026-11-30"), nil),
		disc(ClassMissingInLedger, "no_posting", "091000010000005", usd, "The statement has a credit of 1200.00 USD that the ledger does not have.",
			nil, statementSide(bankKey("091000010000005"), 9, 120000, usd, "2026-11-10")),
		disc(ClassMissingInLedger, "no_posting", "0910000100\u200b00006", usd, "The statement has a credit of 45.50 USD that the ledger does not have.",
			nil, statementSide(bankKey("0910000100\u200b00006"), 10, 4550, usd, "2026-11-11")),
		disc(ClassMissingInStatement, "no_line", "091000010000007", usd, "The ledger posted 80.00 USD on 2026-11-12 and the statement has no line for it.",
			ledgerSide(achKey("091000010000007"), "clearing", 30, 8000, usd, "2026-11-12"), nil),
		disc(ClassAmountMismatch, "amount_differs", "091000010000008", usd, `Statement says: <script>alert("paid")</script> 120.00 USD against a posting of 125.00 USD.`,
			ledgerSide(achKey("091000010000008"), "clearing", 33, 12500, usd, "2026-11-13"), statementSide(bankKey("091000010000008"), 12, 12000, usd, "2026-11-13")),
		disc(ClassCurrencyMismatch, "currency_differs", "091000010000009", usd, "The posting is in USD and the statement line in EUR.",
			ledgerSide(achKey("091000010000009"), "clearing", 36, 6000, usd, "2026-11-14"), &Side{Key: bankKey("091000010000009"), Kind: "credit",
				File: "acme-2026-11\x1b[2J.bai2", Line: 13, Amount: 6000, Currency: "EUR", ValueDate: "2026-11-14"}),
		disc(ClassDateOutOfWindow, "date_differs", "091000010000010", usd, "Value dates 2026-11-05 and 2026-11-12 are 7 days apart; the window is 3.",
			ledgerSide(achKey("091000010000010"), "clearing", 39, 4000, usd, "2026-11-05"), statementSide(bankKey("091000010000010"), 15, 4000, usd, "2026-11-12")),
		disc(ClassDuplicateInStatement, "repeated_line", "091000010000011", usd, "The statement lists this credit twice; lines 16 and 17 are identical.",
			nil, statementSide(bankKey("091000010000011")+":2", 17, 1500, usd, "2026-11-15")),
		disc(ClassUnbookedFee, "fee", "FEE-2026-11", usd, "The bank charged a monthly fee of 2.50 USD that the ledger has not booked.",
			nil, &Side{Key: bankKey("FEE-2026-11"), Kind: "debit", File: "acme-2026-11.bai2", Line: 20, Amount: -250, Currency: usd, ValueDate: "2026-11-28"}),
		settlementBreak(disc(ClassSettlementTotalMismatch, "settlement_differs", "SETTLE-2026-11-28", usd, "The settlement line is 10.00 USD less than the 212 postings it settles.",
			nil, statementSide(bankKey("SETTLE-2026-11-28"), 22, 999000, usd, "2026-11-28")), 1000000),
		disc(ClassMissingInStatement, "no_line", "000000000123", jpy, "The ledger posted 5000 JPY on 2026-11-20 and the statement has no line for it.",
			&Side{Key: "iso8583:ACQ01:000000000123:0200", Kind: "clearing", File: "switch-2026-11-20.iso", Line: 7, Amount: 5000, Currency: jpy, ValueDate: "2026-11-20"}, nil),
		disc(ClassAmountMismatch, "amount_differs", "000000000124", jpy, "The statement shows 11000 JPY against a posting of 12000 JPY.",
			&Side{Key: "iso8583:ACQ01:000000000124:0200", Kind: "clearing", File: "switch-2026-11-20.iso", Line: 8, Amount: 12000, Currency: jpy, ValueDate: "2026-11-20"},
			&Side{Key: "csv:jcb-settlement:000000000124", Kind: "credit", File: "jcb-2026-11.csv", Line: 31, Amount: 11000, Currency: jpy, ValueDate: "2026-11-20"}),
		disc(ClassInTransit, "after_statement", "000000000125", jpy, "Value date 2026-11-30 is after the statement's last date, 2026-11-28.",
			&Side{Key: "iso8583:ACQ01:000000000125:0200", Kind: "clearing", File: "switch-2026-11-30.iso", Line: 2, Amount: 3000, Currency: jpy, ValueDate: "2026-11-30"}, nil),
	}
}

// build completes a report around its discrepancies: class counts, and a
// bridge per currency whose class lines are the sums of the discrepancies
// (each side in its own currency, as reconciliation sums them)
// and whose statement total is chosen so that the bridge adds up with the
// given unexplained remainders. matched adds matched pairs that have no
// discrepancy, as most matches do not.
func build(runID int64, ds []Discrepancy, ledgerTotals, unexplained map[string]int64, currencies []string, matched int64) *Report {
	r := &Report{RunID: runID, Tenant: "default", Source: "ach:odfi-1", From: "2026-11-01", To: "2026-11-30",
		Window: 3, Tolerance: 2, StatementLastDate: "2026-11-28", CreatedAt: created, Discrepancies: ds}
	r.Classes = make([]ClassCount, len(classTable))
	counts := map[string]*ClassCount{}
	for i, c := range classTable {
		r.Classes[i] = ClassCount{Class: c.Code, Break: c.Break}
		counts[c.Code] = &r.Classes[i]
	}
	counts[ClassMatched].LedgerItems += matched
	counts[ClassMatched].StatementLines += matched
	for _, cur := range currencies {
		b := Bridge{Currency: cur, LedgerTotal: money.TotalOf(ledgerTotals[cur]), Unexplained: money.TotalOf(unexplained[cur]),
			OutsideTotals: []ClassTotal{}}
		sum := b.Unexplained
		for _, c := range classTable {
			t := ClassTotal{Class: c.Code}
			for i := range ds {
				d := &ds[i]
				switch {
				case d.Class != c.Code:
				case OutsideTotals(d.Class):
					if d.Currency == cur {
						t.Amount = t.Amount.Add(money.TotalOf(d.Difference))
						t.Count++
					}
				case slices.Contains(touched(d), cur):
					// As reconciliation sums a class: each side in its own
					// currency, so a currency mismatch is in two bridges.
					itemAmounts(d, func(c string, amt int64) {
						if c == cur {
							t.Amount = t.Amount.Add(money.TotalOf(amt))
						}
					})
					t.Count++
				}
			}
			if c.Code == ClassMatched && cur == currencies[0] {
				t.Count += matched
			}
			switch {
			case t.Count > 0 && OutsideTotals(c.Code):
				b.OutsideTotals = append(b.OutsideTotals, t)
			case t.Count > 0:
				b.Differences = append(b.Differences, t)
				sum = sum.Add(t.Amount)
			}
		}
		b.StatementTotal = b.LedgerTotal.Sub(sum)
		r.Bridge = append(r.Bridge, b)
	}
	r.LedgerItems, r.StatementLines = matched, matched
	for _, d := range ds {
		c := counts[d.Class]
		if d.Ledger != nil {
			c.LedgerItems++
			r.LedgerItems++
		}
		if d.Statement != nil {
			c.StatementLines++
			r.StatementLines++
		}
	}
	r.MatchedLedger = counts[ClassMatched].LedgerItems
	r.MatchedStatement = counts[ClassMatched].StatementLines
	r.EmptySide = EmptySideOf(r.LedgerItems, r.StatementLines)
	return r
}

func fullReport() *Report {
	return build(42, fullDiscrepancies(),
		map[string]int64{"USD": 5000000, "JPY": 20000},
		map[string]int64{"USD": 100}, []string{"USD", "JPY", "EUR"}, 40)
}

// balancedReport has breaks but no unexplained remainder.
func balancedReport() *Report {
	var ds []Discrepancy
	for _, d := range fullDiscrepancies() {
		if d.Class == ClassInTransit || d.Class == ClassMissingInStatement {
			ds = append(ds, d)
		}
	}
	return build(43, ds, map[string]int64{"USD": 5000000, "JPY": 20000}, nil, []string{"USD", "JPY"}, 12)
}

// emptyReport compared nothing: no statement lines, no postings.
func emptyReport() *Report {
	r := build(44, nil, nil, nil, nil, 0)
	r.StatementLastDate = ""
	return r
}

// oneSidedReport is a statement reconciled against a ledger that had
// nothing of its source in the period (a statement imported under another
// source): every line is a break, and no correction was proposed.
func oneSidedReport() *Report {
	var ds []Discrepancy
	for _, d := range fullDiscrepancies() {
		if d.Ledger == nil && d.Statement != nil && d.Currency == "USD" {
			d.CorrectionKey = ""
			ds = append(ds, d)
		}
	}
	r := build(46, ds, map[string]int64{"USD": 0}, nil, []string{"USD"}, 0)
	return r
}

// largeReport has n breaks spread over every break class and currency,
// with distinct keys, for the cap and the benchmarks.
func largeReport(n int) *Report {
	ds := make([]Discrepancy, n)
	for i := range ds {
		ds[i] = largeDiscrepancy(i)
	}
	return build(45, ds, map[string]int64{"USD": 1 << 40}, nil, []string{"USD"}, int64(n))
}

// largeDiscrepancy is the i-th discrepancy of largeReport, built afresh.
func largeDiscrepancy(i int) Discrepancy {
	c := largeClasses[i%len(largeClasses)]
	trace := fmt.Sprintf("0910000%08d", i)
	l := ledgerSide(achKey(trace), "clearing", int64(i+2), int64(1000+i), "USD", "2026-11-02")
	s := statementSide(bankKey(trace), int64(i+3), int64(1000+i/2), "USD", "2026-11-02")
	return disc(c.Code, "generated", trace, "USD", "The statement line differs from the posting by a generated amount.", l, s)
}

// largeClasses are the break classes, which largeReport takes in turn.
var largeClasses = func() []Class {
	var out []Class
	for _, c := range classTable {
		if c.Break {
			out = append(out, c)
		}
	}
	return out
}()

// tallied returns r's tally, failing the test if it cannot be read.
func tallied(t *testing.T, r *Report) *tally {
	t.Helper()
	sum, err := r.tally()
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
