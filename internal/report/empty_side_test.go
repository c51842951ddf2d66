package report

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/internal/output"
)

// TestEmptySideComesFirst holds the news that a side was empty in its
// place: the first line of the table and the first element of the page,
// before even the unexplained banner, in red when one side only was empty
// and calm when nothing was compared; the JSON field and a CSV column on
// every row say the same.
func TestEmptySideComesFirst(t *testing.T) {
	ledgerEmpty := oneSidedReport()
	statementEmpty := balancedReport()
	var keep []Discrepancy
	for _, d := range statementEmpty.Discrepancies {
		if d.Statement == nil {
			keep = append(keep, d)
		}
	}
	statementEmpty = build(47, keep, map[string]int64{"USD": 5000000, "JPY": 20000}, map[string]int64{"USD": 100},
		[]string{"USD", "JPY"}, 0)
	cases := []struct {
		name     string
		r        *Report
		side     string
		headline string
		alert    bool
	}{
		{"ledger", ledgerEmpty, EmptyLedger,
			"THE LEDGER SIDE IS EMPTY: the ledger has no postings of source ach:odfi-1 from 2026-11-01 to 2026-11-30, against 5 statement lines. " +
				"Check the source and the period before acting on any break; no corrections were proposed.", true},
		{"statement", statementEmpty, EmptyStatement,
			"THE STATEMENT SIDE IS EMPTY: no statement lines of source ach:odfi-1 from 2026-11-01 to 2026-11-30, against 4 ledger postings. " +
				"Check that the statement was imported, under this source; no corrections were proposed.", true},
		{"both", emptyReport(), EmptyBoth,
			"NOTHING TO COMPARE: neither ledger postings nor statement lines of source ach:odfi-1 from 2026-11-01 to 2026-11-30.", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.r.EmptySide != tc.side {
				t.Fatalf("fixture has empty_side %q, want %q", tc.r.EmptySide, tc.side)
			}
			if tc.r.OneSided() != tc.alert || tc.r.NeedsPerson() != tc.alert {
				t.Errorf("OneSided() = %t, NeedsPerson() = %t, want %t", tc.r.OneSided(), tc.r.NeedsPerson(), tc.alert)
			}
			table := render(t, output.Table, tc.r)
			if first, _, _ := strings.Cut(table, "\n"); first != tc.headline {
				t.Errorf("first line of the table is %q, want %q", first, tc.headline)
			}
			_, body, _ := strings.Cut(render(t, HTML, tc.r), "<body>")
			open := `<div class="note" role="status">`
			if tc.alert {
				open = `<div class="banner" role="alert">`
			}
			if want := open + strings.ReplaceAll(tc.headline, "'", "&#39;") + `</div>`; !strings.HasPrefix(strings.TrimSpace(body), want) {
				t.Errorf("the page does not open with %q:\n%.600s", want, body)
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(render(t, output.JSON, tc.r)), &doc); err != nil {
				t.Fatal(err)
			}
			if doc["empty_side"] != tc.side {
				t.Errorf("JSON empty_side = %v, want %q", doc["empty_side"], tc.side)
			}
			recs, err := csv.NewReader(strings.NewReader(render(t, output.CSV, tc.r))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if recs[0][1] != "empty_side" {
				t.Fatalf("second CSV column is %q, want empty_side", recs[0][1])
			}
			for i, rec := range recs[1:] {
				if rec[1] != tc.side {
					t.Errorf("CSV row %d: empty_side %q, want %q", i+1, rec[1], tc.side)
				}
			}
		})
	}
	for _, f := range []string{output.Table, HTML} {
		if out := render(t, f, fullReport()); strings.Contains(out, "SIDE IS EMPTY") || strings.Contains(out, "NOTHING TO COMPARE") {
			t.Errorf("%s of a two-sided report says a side is empty", f)
		}
	}
}

// TestSettlementBreaksBesideTheBridge holds a settlement total's real
// difference in every form: the break list, the chart and the line beside
// the bridge agree, and the bridge's own sum leaves it out.
func TestSettlementBreaksBesideTheBridge(t *testing.T) {
	r := fullReport()
	var d *Discrepancy
	for i := range r.Discrepancies {
		if r.Discrepancies[i].Class == ClassSettlementTotalMismatch {
			d = &r.Discrepancies[i]
		}
	}
	if d == nil || d.Difference != 1000 {
		t.Fatalf("fixture's settlement break: %+v", d)
	}
	usd := &r.Bridge[0]
	for _, l := range usd.Differences {
		if l.Class == ClassSettlementTotalMismatch {
			t.Fatalf("the bridge sums a settlement break: %+v", l)
		}
	}
	if len(usd.OutsideTotals) != 1 || usd.OutsideTotals[0].Amount.String() != "1000" || usd.OutsideTotals[0].Count != 1 {
		t.Fatalf("outside the totals: %+v", usd.OutsideTotals)
	}
	table := render(t, output.Table, r)
	if !strings.Contains(table, "| settlement_total_mismatch | 10.00 USD  | 1     |") {
		t.Errorf("the table does not show the settlement break beside the bridge:\n%s", table)
	}
	page := render(t, HTML, r)
	if !strings.Contains(page, `<tr><td>Settlement total differs <span class="code">settlement_total_mismatch</span></td><td class="num">10.00 USD</td><td class="num">1</td></tr>`) {
		t.Error("the page does not show the settlement break beside the bridge")
	}
	if !strings.Contains(page, ">1 break, 10.00 USD</text>") {
		t.Error("the chart does not count the settlement break at its difference")
	}
}
