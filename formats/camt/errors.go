package camt

import (
	"errors"

	"github.com/clearing-dev/clearing/formats/internal/statement"
)

// Sentinel errors that callers branch on. Each *formats.ParseError the
// reader returns wraps one of them.
var (
	// ErrNamespace means a Document whose namespace is not a camt.052, .053
	// or .054 version that the reader knows.
	ErrNamespace = errors.New("camt: unsupported message or version")
	// ErrSyntax means XML that does not parse.
	ErrSyntax = errors.New("camt: malformed XML")
	// ErrStructure means an element out of place or missing: no statement in
	// the message, an entry before its account, a camt.053 statement
	// without a closing balance.
	ErrStructure = errors.New("camt: element out of place or missing")
	// ErrMissingField means a required element is empty or absent.
	ErrMissingField = errors.New("camt: required element is empty")
	// ErrField means an element whose value is not valid: an impossible
	// date, an unknown status or credit/debit indicator.
	ErrField = errors.New("camt: invalid element")
	// ErrAmount means an amount that is not a valid amount of its currency:
	// a currency that is unknown or XXX, a negative amount, more decimal
	// places than the currency has.
	ErrAmount = errors.New("camt: invalid amount")
	// ErrInvalidFile is the final verdict on a file that produced at least
	// one ParseError. It is returned by Next in place of io.EOF.
	ErrInvalidFile = errors.New("camt: file is invalid")
	// ErrNoHasher means Options.Hasher was left at its zero value.
	ErrNoHasher = errors.New("camt: Options.Hasher is not set")
	// ErrInvalidEntry means the generator was given an entry it cannot
	// write as a valid message.
	ErrInvalidEntry = errors.New("camt: entry cannot be written")
)

// FileError is the final error of a file that failed validation: it counts
// the problems and names the line of the first, without repeating its text
// ("camt: file is invalid: 3 errors, the first on line 5"). Its Invalid
// is ErrInvalidFile, and NotThisFormat is set when the input is not an ISO
// 20022 camt document at all. Like bai2.FileError it does not unwrap to the
// ParseError it names.
type FileError = statement.FileError

// Warning is a problem that touches no amount, key or date: the file is
// still read, and the intake records the warning on the run. Its Code is
// one of the Warn constants below.
type Warning = statement.Warning

// The warning codes.
const (
	// WarnUnbalanced: opening balance plus booked entries differs from the
	// closing balance, for one statement and currency. Reconciliation
	// reports it as a statement_unbalanced break.
	WarnUnbalanced = "statement_unbalanced"
	// WarnUnchecked: a statement and currency whose balance could not be
	// checked, for want of an opening or closing balance.
	WarnUnchecked = "balance_unchecked"
	// WarnBalanceIndicator: a balance without CdtDbtInd, read as a credit.
	WarnBalanceIndicator = "balance_without_indicator"
	// WarnStatusMissing: an entry without Sts, read as booked.
	WarnStatusMissing = "status_missing"
	// WarnBatchIncomplete: an entry with several transaction details that do
	// not add up to it (or lack amounts), read as one line.
	WarnBatchIncomplete = "batch_details_incomplete"
	// WarnDateAssumed: an entry without ValDt and BookgDt, dated with its
	// statement's closing balance.
	WarnDateAssumed = "entry_date_assumed"
	// WarnEncoding: a declared character encoding read as ISO-8859-1.
	WarnEncoding = "encoding_assumed"
)
