package camt

import (
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// Defaults for the Options fields that are zero.
const (
	// DefaultMaxErrors is how many ParseErrors one file may produce before
	// the reader stops.
	DefaultMaxErrors = 1000
	// DefaultMaxWarnings is how many Warnings the reader keeps; later ones
	// are only counted.
	DefaultMaxWarnings = 1000
	// DefaultMaxDetails bounds the transaction details of one entry, the
	// only thing the reader holds in memory at once.
	DefaultMaxDetails = 100_000
	// maxRefBytes bounds a reference that enters a key or a Record.
	maxRefBytes = 140
)

// Options configure a Reader.
type Options struct {
	// Hasher turns the statement's IBAN or account number into the
	// Records' Account. It is required.
	Hasher pii.Hasher
	// Limits.MaxRecords bounds the Records of one file; Limits.MaxLineBytes
	// is not used (XML lines may be of any length).
	Limits formats.Limits
	// MaxErrors is how many ParseErrors the reader returns before it gives
	// up on the file. Zero means DefaultMaxErrors.
	MaxErrors int
	// MaxWarnings is how many Warnings are kept. Zero means
	// DefaultMaxWarnings.
	MaxWarnings int
	// MaxDetails bounds the TxDtls of one entry. Zero means
	// DefaultMaxDetails.
	MaxDetails int
	// BankTxCodes adds or replaces entries of the bank transaction code
	// table: "PMNT/RCDT/ESCT", "PMNT/RCDT" or "PMNT" for ISO codes (the most
	// specific wins), "prtry:CODE" for a bank's proprietary code.
	BankTxCodes map[string]formats.LineType
	// OnStatement, when set, receives each Stmt, Rpt or Ntfctn once its
	// last entry has been read, before Next returns what follows it.
	OnStatement func(Statement)
}

// Statement is what one Stmt, Rpt or Ntfctn reports besides its lines:
// its identity, balances and the booked totals the balance check used.
type Statement struct {
	Line     int64
	Message  string // such as "camt.053.001.02"
	ID       string // Stmt/Id, Rpt/Id or Ntfctn/Id
	Account  pii.Account
	Balances []Balance
	Totals   []Total // booked entries per currency, in order of appearance
	Skipped  int64   // entries not booked (pending, information)
}

// Balance is one Bal of a statement. Amount is signed: negative for DBIT.
type Balance struct {
	Code     string // OPBD, PRCD, CLBD, CLAV, ITBD, ...
	Currency string
	Amount   int64
	Date     time.Time
}

// Total is the booked activity of one currency of a statement, in minor
// units, and whether opening plus activity met the closing balance.
type Total struct {
	Currency string
	Entries  int64
	Credits  int64
	Debits   int64
	// Checked is false when the opening or closing balance was missing.
	Checked  bool
	Balanced bool
}

func (o Options) withDefaults() Options {
	o.Limits = o.Limits.WithDefaults()
	if o.MaxErrors <= 0 {
		o.MaxErrors = DefaultMaxErrors
	}
	if o.MaxWarnings <= 0 {
		o.MaxWarnings = DefaultMaxWarnings
	}
	if o.MaxDetails <= 0 {
		o.MaxDetails = DefaultMaxDetails
	}
	return o
}

// Checks returns the statement's balance checks, one per currency whose
// opening (OPBD, else PRCD) and closing (CLBD) balances were both given.
// The statement is named by its token, "s" and 12 hexadecimal digits of a
// keyed hash of its id (as in the keys of its entries without a bank
// reference), never by the id, which banks build from the account number.
func (s Statement) Checks(h pii.Hasher) []formats.StatementBalance {
	var out []formats.StatementBalance
	tok := h.Account("camt-statement", s.ID).ID
	id := "s" + tok[len("cust:"):len("cust:")+12]
	for _, t := range s.Totals {
		if !t.Checked {
			continue
		}
		open, ok := s.balance("OPBD", t.Currency)
		if !ok {
			open, _ = s.balance("PRCD", t.Currency)
		}
		closing, _ := s.balance("CLBD", t.Currency)
		out = append(out, formats.StatementBalance{Statement: id, Account: s.Account, Currency: t.Currency,
			Opening: open.Amount, Closing: closing.Amount, OpeningDate: open.Date, ClosingDate: closing.Date,
			Entries: t.Entries, Credits: t.Credits, Debits: t.Debits, Line: s.Line})
	}
	return out
}

func (s Statement) balance(code, cur string) (Balance, bool) {
	for _, b := range s.Balances {
		if b.Code == code && b.Currency == cur {
			return b, true
		}
	}
	return Balance{}, false
}
