package mt940

import (
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// Defaults for the Options fields that are zero.
const (
	DefaultMaxErrors   = 1000
	DefaultMaxWarnings = 1000
	// maxRefBytes bounds a reference that enters a key or a Record.
	maxRefBytes = 64
	// maxFieldBytes bounds one field with its continuation lines.
	maxFieldBytes = 64 << 10
)

// Options configure a Reader.
type Options struct {
	// Hasher turns the :25: account into the Records' Account. Required.
	Hasher pii.Hasher
	// Limits bound the longest line and the number of Records.
	Limits    formats.Limits
	MaxErrors int
	// MaxWarnings is how many Warnings are kept; later ones are counted.
	MaxWarnings int
	// TypeCodes adds or replaces line types by the three-character
	// transaction type of :61: ("CHG", "TRF", ...).
	TypeCodes map[string]formats.LineType
	// OnStatement, when set, receives each message's summary once it has
	// checked out, before Next returns what follows it.
	OnStatement func(Statement)
}

// Statement is what one MT940 or MT942 message reports besides its lines.
type Statement struct {
	Line      int64
	Type      string // "940" or "942"
	Reference string // :20:
	Number    string // :28C:
	Account   pii.Account
	Currency  string
	// Opening and Closing are signed minor units; HasBalances is false for
	// an MT942, which has none.
	Opening, Closing int64
	OpeningDate      time.Time
	ClosingDate      time.Time
	HasBalances      bool
	Entries          int64
	Credits, Debits  int64
	Balanced         bool
}

func (o Options) withDefaults() Options {
	o.Limits = o.Limits.WithDefaults()
	if o.MaxErrors <= 0 {
		o.MaxErrors = DefaultMaxErrors
	}
	if o.MaxWarnings <= 0 {
		o.MaxWarnings = DefaultMaxWarnings
	}
	return o
}

// Check returns the message's balance check, and false for a message
// without both an opening (:60F:/:60M:) and a closing (:62F:/:62M:)
// balance, such as an MT942. The statement is named by its :28C: number,
// as in its lines' keys; the :20: reference is left out, as it may embed
// the account number.
func (s Statement) Check() (formats.StatementBalance, bool) {
	if !s.HasBalances {
		return formats.StatementBalance{}, false
	}
	return formats.StatementBalance{Statement: s.Number, Account: s.Account, Currency: s.Currency,
		Opening: s.Opening, Closing: s.Closing, OpeningDate: s.OpeningDate, ClosingDate: s.ClosingDate,
		Entries: s.Entries, Credits: s.Credits, Debits: s.Debits, Line: s.Line}, true
}
