package bai2

import (
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// ReferenceField chooses which of a detail's two references becomes the
// Record's Reference, the value reconciliation matches on. The other one
// goes to AltReference.
type ReferenceField int

// The two references of a 16 transaction detail.
const (
	// BankReference is the reference the bank assigned. It is the default
	// because the bank fills it in for every kind of transaction.
	BankReference ReferenceField = iota
	// CustomerReference is the reference the account holder gave the bank,
	// such as a cheque number or an ACH trace number. Choose it for a source
	// whose bank reports the value that ties to the ledger there.
	CustomerReference
)

// Defaults for the Options fields that are zero.
const (
	// DefaultMaxRecordBytes bounds a record with all its continuations.
	DefaultMaxRecordBytes = 1 << 20
	// DefaultMaxErrors is how many ParseErrors one file may produce before
	// the reader stops.
	DefaultMaxErrors = 1000
	// maxIDBytes bounds identifiers that enter a key (originator, bank
	// reference) so that a key stays well under the ledger's limit.
	maxIDBytes = 128
)

// Options configure a Reader.
type Options struct {
	// Hasher turns the customer account number of each 03 record into the
	// Record's Account. It is required: the zero value would hash without
	// a secret, so Next fails with ErrNoHasher.
	Hasher pii.Hasher
	// Limits bound the longest physical line (MaxLineBytes) and the number of
	// physical records (MaxRecords). Zero fields take the formats defaults.
	Limits formats.Limits
	// MaxRecordBytes bounds one logical record: a physical record with its
	// 88 continuations. Zero means DefaultMaxRecordBytes.
	MaxRecordBytes int
	// MaxErrors is how many ParseErrors the reader returns before it gives
	// up on the file. Zero means DefaultMaxErrors.
	MaxErrors int
	// Reference chooses the detail reference that becomes Record.Reference.
	Reference ReferenceField
	// TypeCodes adds or replaces transaction detail type codes, for a bank's
	// customised codes (900-999) or a different classification of a
	// standard one. A TypeCode with an empty Direction marks a non-monetary
	// code, whose details are returned as formats.Skip records.
	TypeCodes map[int]TypeCode
	// OnAccount, when set, receives each account's summary once its account
	// trailer (49) has passed its checks, before Next returns the record
	// that follows the trailer. It is called from within Next.
	OnAccount func(AccountSummary)
	// Loosen names money checks a known source needs relaxed.
	Loosen Loosen
}

// AccountSummary is what an 03 account identifier and its 49 trailer report
// about one account: balances and activity totals, not statement lines.
type AccountSummary struct {
	Line         int64       // line of the 03 record
	Originator   string      // the group's originator (the reporting bank)
	GroupStatus  int         // 1 update or 3 correction
	AsOfDate     time.Time   // the group's as-of date
	AsOfModifier int         // 1-4 as the spec defines them; 0 when not given
	Account      pii.Account // the customer account, hashed
	Currency     string      // ISO 4217 code of every amount below
	Summaries    []Summary   // in file order
	ControlTotal int64       // the 49 record's account control total
	Records      int64       // the 49 record's record count
}

// Summary is one status or summary entry of an 03 record, such as 010
// opening ledger or 100 total credits.
type Summary struct {
	TypeCode int
	// Amount is in minor units of the account's currency. Balances may be
	// negative. HasAmount is false when the field was left empty, which is
	// not the same as a zero balance.
	Amount    int64
	HasAmount bool
	// ItemCount is the number of items summarised; 0 when not given.
	ItemCount int
	Funds     Funds
}

// Funds is the funds availability of an amount, as its funds type says.
type Funds struct {
	// Type is "", "0", "1", "2", "Z", "V", "S" or "D". Empty means the field
	// was defaulted, which the spec treats like "Z" (unknown).
	Type string
	// ValueDate and ValueTime are given with type V. ValueTime is "" or HHMM.
	ValueDate time.Time
	ValueTime string
	// Immediate, OneDay and TwoOrMoreDays are given with type S.
	Immediate     int64
	OneDay        int64
	TwoOrMoreDays int64
	// Distributions are given with type D.
	Distributions []Distribution
}

// Distribution is one availability distribution of funds type D: Amount
// becomes available after Days days.
type Distribution struct {
	Days   int
	Amount int64
}

func (o Options) withDefaults() Options {
	o.Limits = o.Limits.WithDefaults()
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.MaxRecordBytes < o.Limits.MaxLineBytes {
		o.MaxRecordBytes = o.Limits.MaxLineBytes
	}
	if o.MaxErrors <= 0 {
		o.MaxErrors = DefaultMaxErrors
	}
	return o
}
