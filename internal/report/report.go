// Package report holds a stored reconciliation as a document, and renders it
// as a table, CSV, JSON or a self-contained HTML page. The JSON form is a
// documented contract (docs/report.md); the other forms show the same facts.
package report

import (
	"time"

	"github.com/clearing-dev/clearing/internal/money"
)

// Report is one reconciliation run: what was compared, how the totals
// bridge, and every discrepancy with its evidence.
type Report struct {
	RunID int64 `json:"run_id"`
	// EmptySide says which side had nothing in the period: EmptyLedger,
	// EmptyStatement, EmptyBoth (nothing to compare), or "" when both had
	// something. It follows from LedgerItems and StatementLines (see
	// EmptySideOf), and every form says it before anything else.
	EmptySide string `json:"empty_side"`
	Tenant    string `json:"tenant"`
	Source    string `json:"source"`
	From      string `json:"from"` // first value date compared, YYYY-MM-DD
	To        string `json:"to"`   // last value date compared
	Window    int    `json:"window_days"`
	Tolerance int64  `json:"tolerance_minor"`
	// StatementLastDate is the latest value date on the statement; ledger
	// postings after it are in transit, not breaks. Empty when the
	// statement has no lines in the period.
	StatementLastDate string    `json:"statement_last_date"`
	CreatedAt         time.Time `json:"created_at"`
	// Counts of ledger postings and statement lines compared, and how many
	// of each ended matched.
	LedgerItems      int64 `json:"ledger_items"`
	StatementLines   int64 `json:"statement_lines"`
	MatchedLedger    int64 `json:"matched_ledger"`
	MatchedStatement int64 `json:"matched_statement"`
	// Classes counts items per class, "matched" included, in a fixed order.
	Classes []ClassCount `json:"classes"`
	Bridge  []Bridge     `json:"bridge"`
	// BreakAges buckets the breaks by age; the JSON form fills it from the
	// discrepancies as Write reads them.
	BreakAges     []AgeBucket   `json:"break_ages"`
	Discrepancies []Discrepancy `json:"discrepancies"`
	// Stream, when set, yields the discrepancies in place of
	// Discrepancies, in document order, once per call (Each): a stored
	// run's are read from the database pass by pass rather than held, so
	// that rendering a report takes the same memory whatever its size.
	// Every call must yield the same discrepancies, read in one snapshot.
	Stream func(yield func(*Discrepancy) error) error `json:"-"`

	sum *tally // a streamed report's tally, once read
}

// ClassCount is how many items ended in one class, and their difference.
type ClassCount struct {
	Class          string `json:"class"`
	LedgerItems    int64  `json:"ledger_items"`
	StatementLines int64  `json:"statement_lines"`
	// Breaks says whether the class needs a person (in_transit, matched,
	// returned and corrected do not).
	Break bool `json:"break"`
}

// Bridge reconciles the two totals in one currency: LedgerTotal minus
// StatementTotal equals the sum of Differences plus Unexplained, and
// Unexplained is zero whenever every difference is classified. Amounts are
// signed minor units: a credit to the counterparty is positive. They are
// sums of many items, so they are exact Totals, which may pass the int64
// range; in JSON they are integers like any other amount.
type Bridge struct {
	Currency       string       `json:"currency"`
	LedgerTotal    money.Total  `json:"ledger_total"`
	StatementTotal money.Total  `json:"statement_total"`
	Differences    []ClassTotal `json:"differences"`
	Unexplained    money.Total  `json:"unexplained"`
	// OutsideTotals are the breaks whose amounts neither total holds:
	// settlement totals, which summarise lines that the statement also
	// lists one by one, and statements whose balances do not add up, which
	// are account state, not items. Each line is the sum of its class's
	// differences in this currency; they are shown beside the bridge and
	// are not part of its sum
	// (docs/decisions/settlement-totals-beside-the-bridge.md).
	OutsideTotals []ClassTotal `json:"outside_totals"`
	// Auditor is the same bridge in the auditor's form: the ledger balance
	// plus the items that explain the difference is the statement balance,
	// with the breaks split into those open (a person must look) and those
	// acknowledged. Write fills it from the bridge and the discrepancies
	// (auditorOf); a document need not carry it.
	Auditor AuditorBridge `json:"auditor"`
}

// AuditorBridge is one currency's bridge as an auditor reads it, every
// item signed as statement minus ledger so that the lines add up from the
// ledger balance to the statement balance:
//
//	LedgerBalance + Open + Acknowledged + Explained + WithinTolerance + Unexplained = StatementBalance
//
// exactly. Settlement totals and unbalanced statements are in neither
// balance and so in none of these lines (Bridge.OutsideTotals).
type AuditorBridge struct {
	LedgerBalance money.Total `json:"ledger_balance"`
	// Open is the breaks that need a person; Acknowledged those an operator
	// acknowledged at their amount. Count is how many breaks.
	Open         ItemsTotal `json:"open"`
	Acknowledged ItemsTotal `json:"acknowledged"`
	// Explained is the discrepancies that need no one (in transit,
	// returned, settled, held by a settlement break, corrected); Count is
	// how many. WithinTolerance is what matched pairs differ by within the
	// amount tolerance; Count is how many items (both sides) matched.
	Explained       ItemsTotal `json:"explained"`
	WithinTolerance ItemsTotal `json:"within_tolerance"`
	// Unexplained is what no item explains, statement minus ledger: the
	// bridge's Unexplained with its sign turned.
	Unexplained      money.Total `json:"unexplained"`
	StatementBalance money.Total `json:"statement_balance"`
}

// ItemsTotal is a sum of items and how many they are.
type ItemsTotal struct {
	Amount money.Total `json:"amount"`
	Count  int64       `json:"count"`
}

// The values of Report.EmptySide.
const (
	EmptyLedger    = "ledger"    // the statement has lines, the ledger no postings
	EmptyStatement = "statement" // the ledger has postings, the statement no lines
	EmptyBoth      = "both"      // neither has anything: nothing was compared
)

// EmptySideOf returns the Report.EmptySide of a run that compared
// ledgerItems postings and statementLines lines.
func EmptySideOf(ledgerItems, statementLines int64) string {
	switch {
	case ledgerItems == 0 && statementLines == 0:
		return EmptyBoth
	case ledgerItems == 0:
		return EmptyLedger
	case statementLines == 0:
		return EmptyStatement
	}
	return ""
}

// OneSided reports whether exactly one side was empty: every item of the
// other is then a break, the likeliest cause is a wrong source or period,
// and a person must look (no corrections were proposed from the run).
func (r *Report) OneSided() bool {
	return r.EmptySide == EmptyLedger || r.EmptySide == EmptyStatement
}

// OutsideTotals reports whether a class's amounts are left out of both
// side totals, and so shown beside the bridge rather than in it.
func OutsideTotals(class string) bool {
	return class == ClassSettlementTotalMismatch || class == ClassStatementUnbalanced
}

// ClassTotal is the sum of one class's differences in one currency.
type ClassTotal struct {
	Class  string      `json:"class"`
	Amount money.Total `json:"amount"`
	Count  int64       `json:"count"`
}

// Discrepancy is one break (or one explained difference) with the evidence
// from both sides. Difference is ledger minus statement, in signed minor
// units of Currency; for a settlement total it is the ledger's net of the
// total's day minus the total, for a statement that does not add up it is
// its closing balance minus its opening balance plus its booked entries
// (from the account holder's side), and for a currency mismatch it is 0.
type Discrepancy struct {
	Class         string `json:"class"`
	Reason        string `json:"reason"`
	Explanation   string `json:"explanation"`
	Reference     string `json:"reference"`
	Currency      string `json:"currency"`
	Ledger        *Side  `json:"ledger"`
	Statement     *Side  `json:"statement"`
	Difference    int64  `json:"difference"`
	CorrectionKey string `json:"correction_key"`
	Break         bool   `json:"break"`
	// Acknowledged says an operator acknowledged the break at its amount:
	// it no longer needs a person. FirstSeen (YYYY-MM-DD) and AgeDays say
	// since when the break inventory knows it; empty and 0 for what is not
	// a break.
	Acknowledged bool   `json:"acknowledged"`
	FirstSeen    string `json:"first_seen"`
	AgeDays      int    `json:"age_days"`
	// CorrectionStatus is the status of the correction CorrectionKey names
	// as it stands now: proposed, approved, rejected or posted; empty when
	// none is named. Rejection says who rejected it and why; nil unless it
	// was rejected.
	CorrectionStatus string     `json:"correction_status"`
	Rejection        *Rejection `json:"rejection"`
}

// Rejection is the decision that rejected a break's correction.
type Rejection struct {
	Operator string    `json:"operator"` // the operator named on the command line
	Login    string    `json:"login"`    // the database login that decided
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
}

// AgeBucket counts the breaks of one age range, in days since first seen.
type AgeBucket struct {
	Bucket       string `json:"bucket"` // "0-2", "3-7", "8-30" or "over 30"
	Breaks       int    `json:"breaks"`
	Acknowledged int    `json:"acknowledged"`
}

// Side is one side's evidence.
type Side struct {
	Key       string `json:"key"`
	Kind      string `json:"kind"` // posting kind, or statement line type
	File      string `json:"file"`
	Line      int64  `json:"line"`
	Amount    int64  `json:"amount"` // signed minor units
	Currency  string `json:"currency"`
	ValueDate string `json:"value_date"`
}
