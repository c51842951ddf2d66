package formats

import (
	"time"

	"github.com/clearing-dev/clearing/internal/pii"
)

// StatementBalance is a bank statement's balance check in one currency, as
// its reader reports it beside the statement's lines: the opening and
// closing balances the bank states and the booked entries between them.
// Amounts are signed minor units from the account holder's side (a credit
// balance is positive, Credits are money in). A reader reports one only
// when the statement gives both balances, so that the check could be made.
type StatementBalance struct {
	// Statement names the statement without personal data: a token of
	// camt's Stmt/Id (Rpt/Id, Ntfctn/Id), which banks build from the
	// account number, or MT940's :28C: number. It may be empty.
	Statement   string
	Account     pii.Account
	Currency    string
	Opening     int64
	Closing     int64
	OpeningDate time.Time
	ClosingDate time.Time
	Entries     int64
	Credits     int64
	Debits      int64
	// Line is where the statement starts in its file.
	Line int64
}

// Difference is what the bank's closing balance says beyond the opening
// balance plus the booked entries; zero when the statement adds up.
func (b StatementBalance) Difference() int64 {
	return b.Closing - (b.Opening + b.Credits - b.Debits)
}
